/*
 * plan_inference.c: POST /v1/plan/inference as a function: the request's field tables, the planner call and
 * the response document (per-GPU memory by term, weights per tensor class, KV cache and workspace detail,
 * the fit) with notes on what each figure includes. Shared by the HTTP handler and the CLI.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "decode.h"
#include "plan.h"
#include "roofline_doc.h"

#define ADD_U64(obj, key, v) cJSON_AddNumberToObject((obj), (key), (double)(v))

typedef mpd_inference_job inference_body;

#define WEIGHT_DTYPES                                                                                                  \
	(MPD_DT(MP_DTYPE_FP32) | MPD_DT(MP_DTYPE_BF16) | MPD_DT(MP_DTYPE_FP16) | MPD_DT(MP_DTYPE_FP8_E4M3) |           \
	 MPD_DT(MP_DTYPE_FP8_E5M2) | MPD_DT(MP_DTYPE_INT8) | MPD_DT(MP_DTYPE_INT4) | MPD_DT(MP_DTYPE_NF4) |            \
	 MPD_DT(MP_DTYPE_Q8_0) | MPD_DT(MP_DTYPE_Q4_0) | MPD_DT(MP_DTYPE_Q4_K) | MPD_DT(MP_DTYPE_Q5_K) |               \
	 MPD_DT(MP_DTYPE_Q6_K))
#define COMPUTE_DTYPES (MPD_DT(MP_DTYPE_FP32) | MPD_DT(MP_DTYPE_BF16) | MPD_DT(MP_DTYPE_FP16))

static const char *const int4_names[] = {"gptq", "awq", NULL};
static const char *const layout_names[] = {"auto", "packed", "pytorch", "gguf", NULL};
static const char *const scope_names[] = {"per_sequence", "shared", NULL};
static const char *const mla_names[] = {"latent", "expanded", NULL};
static const char *const attention_names[] = {"none", "fused", "eager", NULL};

#define OFF(f) offsetof(inference_body, f)

static const mpd_field inference_fields[] = {
    {.name = "model", .type = MPD_F_ANY, .required = true},
    {.name = "weight_dtype",
     .type = MPD_F_DTYPE,
     .required = true,
     .offset = OFF(req.weight_dtype),
     .dtypes = WEIGHT_DTYPES},
    {.name = "kv_cache_dtype", .type = MPD_F_STRING, .required = true, .offset = OFF(kv_dtype), .size = 16},
    {.name = "batch_size",
     .type = MPD_F_U64,
     .required = true,
     .offset = OFF(req.batch_size),
     .min = 1,
     .max = MP_MAX_BATCH_SIZE},
    {.name = "sequence_length",
     .type = MPD_F_U64,
     .required = true,
     .offset = OFF(req.sequence_length),
     .min = 1,
     .max = MP_MAX_SEQUENCE_LENGTH},
    {.name = "device", .type = MPD_F_STRING, .offset = OFF(device), .size = MP_STORE_ID_MAX},
    {.name = "num_gpus", .type = MPD_F_U64, .offset = OFF(req.num_gpus), .min = 1, .max = MP_MAX_GPUS},
    {.name = "tensor_parallel_size",
     .type = MPD_F_U64,
     .offset = OFF(opts.tensor_parallel_size),
     .min = 1,
     .max = MP_MAX_GPUS},
    {.name = "cuda_context_bytes",
     .type = MPD_F_U64,
     .offset = OFF(req.cuda_context_bytes),
     .min = 0,
     .max = UINT64_C(1) << 40},
    {.name = "weight_formats", .type = MPD_F_ANY},
    {.name = "weight_layout", .type = MPD_F_ENUM, .offset = OFF(layout), .names = layout_names},
    {.name = "int4_group_size",
     .type = MPD_F_U64,
     .offset = OFF(opts.formats.int4_group_size),
     .min = 1,
     .max = UINT64_C(1) << 32},
    {.name = "int4_scheme", .type = MPD_F_ENUM, .offset = OFF(int4_scheme), .names = int4_names},
    {.name = "nf4_double_quant", .type = MPD_F_BOOL, .offset = OFF(nf4_double_quant)},
    {.name = "compute_dtype", .type = MPD_F_DTYPE, .offset = OFF(opts.compute_dtype), .dtypes = COMPUTE_DTYPES},
    {.name = "kv_block_size", .type = MPD_F_U64, .offset = OFF(opts.kv_block_size), .min = 1, .max = 1 << 20},
    {.name = "sequence_length_scope", .type = MPD_F_ENUM, .offset = OFF(scope), .names = scope_names},
    {.name = "mla_kv_cache", .type = MPD_F_ENUM, .offset = OFF(mla), .names = mla_names},
    {.name = "attention_implementation", .type = MPD_F_ENUM, .offset = OFF(attention), .names = attention_names},
    {.name = "max_num_batched_tokens",
     .type = MPD_F_U64,
     .offset = OFF(opts.max_num_batched_tokens),
     .min = 1,
     .max = MP_MAX_SEQUENCE_LENGTH},
    {.name = "logits_positions",
     .type = MPD_F_U64,
     .offset = OFF(opts.logits_positions),
     .min = 1,
     .max = MP_MAX_SEQUENCE_LENGTH},
    {.name = "gpu_memory_utilization", .type = MPD_F_DOUBLE, .offset = OFF(utilization), .dmin = 0, .dmax = 1},
    {.name = "allow_beyond_max_position_embeddings", .type = MPD_F_BOOL, .offset = OFF(opts.allow_beyond_max_position)},
};

#define FOFF(c) offsetof(mp_weight_formats, cls) + (c) * sizeof(mp_dtype)

static const mpd_field format_fields[] = {
    {.name = "embeddings", .type = MPD_F_DTYPE, .offset = FOFF(MP_TC_EMBEDDINGS), .dtypes = WEIGHT_DTYPES},
    {.name = "attention", .type = MPD_F_DTYPE, .offset = FOFF(MP_TC_ATTENTION), .dtypes = WEIGHT_DTYPES},
    {.name = "mlp", .type = MPD_F_DTYPE, .offset = FOFF(MP_TC_MLP), .dtypes = WEIGHT_DTYPES},
    {.name = "experts", .type = MPD_F_DTYPE, .offset = FOFF(MP_TC_EXPERTS), .dtypes = WEIGHT_DTYPES},
    {.name = "lm_head", .type = MPD_F_DTYPE, .offset = FOFF(MP_TC_LM_HEAD), .dtypes = WEIGHT_DTYPES},
    {.name = "norms", .type = MPD_F_DTYPE, .offset = FOFF(MP_TC_NORMS), .dtypes = COMPUTE_DTYPES},
};

/* Decodes the body into ib with the API's defaults (fused attention, double-quantised nf4). */
static mp_status decode_body(const cJSON *body, inference_body *ib, mp_error *err)
{
	const cJSON *v;
	mp_status st;
	mp_dtype kv;

	memset(ib, 0, sizeof(*ib));
	ib->attention = MP_ATTENTION_FUSED;
	ib->nf4_double_quant = true;
	st = mpd_decode_fields(body, "", inference_fields, sizeof(inference_fields) / sizeof(inference_fields[0]), ib,
	                       err);
	if (st != MP_OK)
		return st;
	st = mpd_kv_dtype(ib->kv_dtype, "/kv_cache_dtype", &kv, err);
	if (st != MP_OK)
		return st;
	ib->req.kv_cache_dtype = kv;
	v = cJSON_GetObjectItemCaseSensitive(body, "weight_formats");
	if (v) {
		st = mpd_decode_fields(v, "/weight_formats", format_fields,
		                       sizeof(format_fields) / sizeof(format_fields[0]), &ib->opts.formats, err);
		if (st != MP_OK)
			return st;
	}
	v = cJSON_GetObjectItemCaseSensitive(body, "gpu_memory_utilization");
	if (v && ib->utilization <= 0)
		return mp_fail(err, MP_EINVAL, "/gpu_memory_utilization",
		               "gpu_memory_utilization must be in (0, 1]: the fraction of the GPU the plan may use");
	{
		/* format options that apply to one format only: given without that format they would be silently
		 * ignored, so they are refused naming the field */
		static const struct {
			const char *name, *field;
			mp_dtype dt;
		} only_for[] = {{"int4_scheme", "/int4_scheme", MP_DTYPE_INT4},
		                {"int4_group_size", "/int4_group_size", MP_DTYPE_INT4},
		                {"nf4_double_quant", "/nf4_double_quant", MP_DTYPE_NF4}};

		for (size_t i = 0; i < sizeof(only_for) / sizeof(only_for[0]); i++) {
			bool used = ib->req.weight_dtype == only_for[i].dt;

			for (int c = 0; c < MP_TC_COUNT; c++)
				used = used || ib->opts.formats.cls[c] == only_for[i].dt;
			if (!used && cJSON_GetObjectItemCaseSensitive(body, only_for[i].name))
				return mp_fail(err, MP_EINVAL, only_for[i].field,
				               "%s applies only when weight_dtype (or a weight_formats class) is %s",
				               only_for[i].name, mp_dtype_name(only_for[i].dt));
		}
	}
	ib->opts.gpu_memory_utilization = ib->utilization;
	ib->opts.formats.int4_scheme = (mp_int4_scheme)ib->int4_scheme;
	ib->opts.formats.nf4_no_double_quant = !ib->nf4_double_quant;
	ib->opts.formats.layout = (mp_weight_layout)ib->layout;
	ib->opts.length_scope = (mp_length_scope)ib->scope;
	ib->opts.mla_cache = (mp_mla_cache)ib->mla;
	ib->opts.attention = (mp_attention_impl)ib->attention;
	return MP_OK;
}

static cJSON *weights_json(const mpd_model *m, const mp_inference_memory *mem)
{
	static const char *const layouts[] = {"auto", "packed", "pytorch", "gguf"};
	cJSON *o = cJSON_CreateObject(), *c;
	uint64_t params = 0;

	cJSON_AddStringToObject(o, "layout", layouts[mem->weights.layout]);
	c = cJSON_AddObjectToObject(o, "classes");
	for (int i = 0; i < MP_TC_COUNT; i++) {
		cJSON *k = cJSON_AddObjectToObject(c, mp_tensor_class_name((mp_tensor_class)i));

		cJSON_AddStringToObject(k, "format", mp_dtype_name(mem->weights.cls[i].format));
		ADD_U64(k, "parameters", mem->weights.cls[i].parameters);
		ADD_U64(k, "bytes", mem->weights.cls[i].bytes);
		params += mem->weights.cls[i].parameters;
	}
	ADD_U64(o, "buffers_bytes", mem->weights.buffers_bytes);
	ADD_U64(o, "total_bytes", mem->weights.total_bytes);
	/* bits per parameter over the whole model (meaningful per GPU only when tensor_parallel_size is 1) */
	if (params && mem->tensor_parallel_size == 1)
		cJSON_AddNumberToObject(o, "bits_per_parameter",
		                        8.0 * (double)mem->weights.total_bytes / (double)params);
	(void)m;
	return o;
}

static cJSON *kv_json(const mp_inference_req *req, const mp_inference_opts *o, const mpd_model *m,
                      const mp_inference_memory *mem)
{
	cJSON *k = cJSON_CreateObject();

	cJSON_AddStringToObject(k, "dtype", mp_dtype_name(req->kv_cache_dtype));
	ADD_U64(k, "bytes", mem->kv_cache_bytes);
	ADD_U64(k, "bytes_per_token", mem->kv.bytes_per_token);
	ADD_U64(k, "values_per_token_per_layer", mem->kv.values_per_token_per_layer);
	if (m->arch.attn_kind == MP_ATTN_MLA)
		cJSON_AddStringToObject(k, "mla_form", o->mla_cache == MP_MLA_EXPANDED ? "expanded" : "latent");
	ADD_U64(k, "kv_heads_per_gpu", mem->kv.kv_heads_per_gpu);
	ADD_U64(k, "kv_head_replication", mem->kv.kv_head_replication);
	ADD_U64(k, "full_attention_layers", mem->kv.full_layers);
	ADD_U64(k, "sliding_window_layers", mem->kv.window_layers);
	ADD_U64(k, "tokens_allocated_full", mem->kv.tokens_full);
	ADD_U64(k, "tokens_allocated_window", mem->kv.tokens_window);
	ADD_U64(k, "block_size", mem->kv.block_size);
	cJSON_AddStringToObject(k, "sequence_length_scope",
	                        o->length_scope == MP_LENGTH_SHARED ? "shared" : "per_sequence");
	return k;
}

static cJSON *workspace_json(const mp_inference_opts *o, const mp_inference_memory *mem)
{
	cJSON *w = cJSON_CreateObject();

	cJSON_AddStringToObject(w, "attention_implementation", attention_names[o->attention]);
	if (o->attention == MP_ATTENTION_NONE)
		return w;
	ADD_U64(w, "prefill_tokens", mem->workspace.prefill_tokens);
	cJSON_AddStringToObject(w, "peak_phase", mem->workspace.peak_phase);
	ADD_U64(w, "attention_phase_bytes", mem->workspace.attention_phase_bytes);
	ADD_U64(w, "mlp_phase_bytes", mem->workspace.mlp_phase_bytes);
	ADD_U64(w, "head_phase_bytes", mem->workspace.head_phase_bytes);
	ADD_U64(w, "scores_bytes", mem->workspace.scores_bytes);
	ADD_U64(w, "mask_bytes", mem->workspace.mask_bytes);
	ADD_U64(w, "logits_bytes", mem->workspace.logits_bytes);
	return w;
}

static void note(cJSON *notes, const char *text)
{
	cJSON_AddItemToArray(notes, cJSON_CreateString(text));
}

mp_status mpd_weight_dtype(const char *name, const char *field, mp_dtype *out, mp_error *err)
{
	mp_dtype dt = mp_dtype_from_name(name);
	char list[256];

	if (dt != MP_DTYPE_INVALID && (WEIGHT_DTYPES & MPD_DT(dt))) {
		*out = dt;
		return MP_OK;
	}
	mp_dtype_list(WEIGHT_DTYPES, list, sizeof(list));
	return mp_fail(err, MP_EINVAL, field, "weight_dtype must be one of: %s", list);
}

mp_status mpd_inference_decode(const cJSON *body, const char *pointer, mpd_inference_job *job, mp_error *err)
{
	mp_status st = decode_body(body, job, err);

	if (st != MP_OK)
		mpd_error_prefix(err, pointer);
	return st;
}

mp_status mpd_plan_inference(mp_store *store, const cJSON *body, cJSON **out, mp_error *err)
{
	inference_body ib;
	mpd_model m;
	mp_store_device dev;
	mp_inference_memory mem;
	mp_fit fit;
	bool have_dev = false;
	mp_status st;
	cJSON *doc, *o, *notes;
	uint64_t degrees[MP_MAX_TP_DEGREES];
	size_t nd;
	char buf[512];

	*out = NULL;
	st = decode_body(body, &ib, err);
	if (st == MP_OK)
		st = mpd_need_model(body, store, &m, err);
	if (st == MP_OK && !m.architecture_known)
		st = mp_fail(
		    err, MP_EINVAL, "/model",
		    "the KV cache needs the architecture, not a bare parameter count: give the model as a stored id, "
		    "{\"hf_config\": {...}} or {\"architecture\": {...}} with at least hidden_size, num_hidden_layers, "
		    "num_attention_heads, vocab_size and intermediate_size (num_key_value_heads and head_dim when they "
		    "differ from the defaults)");
	if (st == MP_OK)
		st = mpd_maybe_device(ib.device, store, &dev, &have_dev, err);
	if (st == MP_OK)
		st = mp_plan_inference_ex(&m.arch, &m.params, &ib.req, &ib.opts, have_dev ? &dev.hw : NULL, &mem, &fit,
		                          err);
	if (st != MP_OK)
		return st;

	doc = cJSON_CreateObject();
	if (doc == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	cJSON_AddItemToObject(doc, "model", mpd_model_json(&m));
	o = cJSON_AddObjectToObject(doc, "request");
	cJSON_AddStringToObject(o, "weight_dtype", mp_dtype_name(ib.req.weight_dtype));
	cJSON_AddStringToObject(o, "kv_cache_dtype", mp_dtype_name(ib.req.kv_cache_dtype));
	ADD_U64(o, "batch_size", ib.req.batch_size);
	ADD_U64(o, "sequence_length", ib.req.sequence_length);
	cJSON_AddStringToObject(o, "sequence_length_scope", scope_names[ib.scope]);
	ADD_U64(o, "tensor_parallel_size", mem.tensor_parallel_size);
	ADD_U64(o, "num_gpus", ib.req.num_gpus ? ib.req.num_gpus : mem.tensor_parallel_size);
	cJSON_AddStringToObject(o, "attention_implementation", attention_names[ib.attention]);
	cJSON_AddStringToObject(o, "compute_dtype",
	                        mp_dtype_name(ib.opts.compute_dtype ? ib.opts.compute_dtype : MP_DTYPE_BF16));
	cJSON_AddNumberToObject(o, "gpu_memory_utilization", ib.utilization > 0 ? ib.utilization : 1.0);

	o = cJSON_AddObjectToObject(doc, "memory");
	ADD_U64(o, "weights_bytes", mem.weights_bytes);
	ADD_U64(o, "kv_cache_bytes", mem.kv_cache_bytes);
	ADD_U64(o, "kv_cache_bytes_per_token", mem.kv_cache_bytes_per_token);
	ADD_U64(o, "activations_bytes", mem.activations_bytes);
	ADD_U64(o, "logits_bytes", mem.workspace.logits_bytes);
	ADD_U64(o, "overhead_bytes", mem.overhead_bytes);
	ADD_U64(o, "total_bytes", mem.total_bytes);
	ADD_U64(o, "kv_plus_logits_bytes", mem.kv_cache_bytes + mem.workspace.logits_bytes);
	ADD_U64(o, "prefill_peak_over_start_bytes", mem.kv_cache_bytes + mem.activations_bytes);

	cJSON_AddItemToObject(doc, "weights", weights_json(&m, &mem));
	cJSON_AddItemToObject(doc, "kv_cache", kv_json(&ib.req, &ib.opts, &m, &mem));
	cJSON_AddItemToObject(doc, "workspace", workspace_json(&ib.opts, &mem));

	o = cJSON_AddObjectToObject(doc, "parallel");
	ADD_U64(o, "tensor_parallel_size", mem.tensor_parallel_size);
	nd = mp_valid_tp_degrees(&m.arch, degrees, MP_MAX_TP_DEGREES);
	{
		cJSON *a = cJSON_AddArrayToObject(o, "valid_tensor_parallel_sizes");

		for (size_t i = 0; i < nd && i < MP_MAX_TP_DEGREES; i++)
			cJSON_AddItemToArray(a, cJSON_CreateNumber((double)degrees[i]));
	}
	cJSON_AddBoolToObject(o, "kv_heads_replicated", mem.kv.kv_head_replication > 1);

	if (have_dev) {
		cJSON *f = mpd_fit_json(&fit, &dev);

		ADD_U64(f, "budget_bytes", fit.budget_bytes);
		ADD_U64(f, "reserve_bytes", fit.reserve_bytes);
		if (fit.min_gpus)
			ADD_U64(f, "min_gpus", fit.min_gpus);
		else
			cJSON_AddNullToObject(f, "min_gpus");
		cJSON_AddItemToObject(doc, "fit", f);
	}
	if (have_dev)
		cJSON_AddItemToObject(doc, "performance", mpd_performance_json(&m, &ib.req, &dev.hw, mem.tensor_parallel_size));

	notes = cJSON_AddArrayToObject(doc, "notes");
	note(notes, "Byte counts are per GPU. total_bytes = weights_bytes + kv_cache_bytes + activations_bytes + "
	            "overhead_bytes.");
	note(notes,
	     "kv_cache_bytes = layers x tokens x (K + V values per token per layer, per GPU, each row stored "
	     "in kv_cache_dtype with its block scales) x sequences; tokens are rounded up to whole kv_block_size "
	     "blocks (16 by default, 1 = contiguous) and sliding-window layers keep at most their window.");
	if (ib.opts.length_scope == MP_LENGTH_SHARED)
		note(notes, "sequence_length_scope shared: sequence_length tokens in all, shared by the batch_size "
		            "slots (llama.cpp -c with -np).");
	else
		note(notes, "sequence_length is per sequence: each of batch_size slots holds its own sequence_length "
		            "tokens (parallel slots multiply the context).");
	if (mem.kv.kv_head_replication > 1 && m.arch.attn_kind == MP_ATTN_GQA) {
		snprintf(buf, sizeof(buf),
		         "tensor_parallel_size %llu exceeds the %llu KV heads: each rank holds one KV head, replicated "
		         "on %llu ranks, so the KV cache per GPU does not shrink further.",
		         (unsigned long long)mem.tensor_parallel_size, (unsigned long long)m.arch.num_kv_heads,
		         (unsigned long long)mem.kv.kv_head_replication);
		note(notes, buf);
	}
	if (m.arch.attn_kind == MP_ATTN_MLA && ib.opts.mla_cache == MP_MLA_LATENT)
		note(notes, "MLA cache: the compressed latent (kv_lora_rank) plus the RoPE key (qk_rope_head_dim) per "
		            "token per layer, replicated on every tensor-parallel rank, not split (vLLM, SGLang, "
		            "llama.cpp); mla_kv_cache expanded gives transformers' full per-head K and V.");
	if (ib.opts.attention == MP_ATTENTION_NONE)
		note(notes, "attention_implementation none: no prefill workspace (activations_bytes 0), the steady "
		            "decode state only.");
	else
		note(notes,
		     "activations_bytes is the transient peak of one prefill forward of prefill_tokens tokens "
		     "(max_num_batched_tokens, else the whole batch), over the weights and the KV cache: the "
		     "tensors transformers' eager PyTorch forward keeps alive at the last layer's attention, MLP "
		     "or lm_head (the kept logits included), eager attention adding the score matrices at the "
		     "softmax.");
	note(notes, "overhead_bytes is the CUDA context: 552,402,944 bytes measured on an H200 with CUDA 13.0 unless "
	            "the device or the request sets cuda_context_bytes.");
	snprintf(buf, sizeof(buf),
	         "Weights: weight_dtype for the attention, MLP and expert matrices; the embeddings and lm_head stay "
	         "in compute_dtype when weight_dtype is an fp8, int or nf4 format (as quantizers leave them; GGUF "
	         "types apply to them too); per-class weight_formats override any of it; vectors (norms, biases) "
	         "use the norms format; layout %s.",
	         mem.weights.layout == MP_LAYOUT_PYTORCH ? "pytorch (each tensor rounded up to 512 B, RoPE buffers)"
	         : mem.weights.layout == MP_LAYOUT_GGUF  ? "gguf (llama.cpp tensors, rope_freqs for llama3 RoPE)"
	                                                 : "packed (tensor bytes as a checkpoint stores them)");
	note(notes, buf);
	if (have_dev)
		note(notes,
		     "fit: total_bytes against budget_bytes = capacity_bytes x gpu_memory_utilization (the vLLM "
		     "convention: the fraction of the GPU the engine may use, CUDA context included). min_gpus is "
		     "the smallest valid tensor_parallel_size that fits (null: none does; pipeline parallelism "
		     "is not modelled). max_sequence_length stops at the model's context (max_position_embeddings) "
		     "unless allow_beyond_max_position_embeddings is true.");
	*out = doc;
	return MP_OK;
}
