/*
 * inference.c: POST /v1/plan/inference both ways: the request's field tables (the same for a plan body, a fit
 * job and a calibration's fit_plan) and the answer document (per-GPU memory by term, weights per tensor class,
 * KV cache and workspace detail, the fit, the performance block) with notes on what each figure includes.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/fields.h"
#include "codec.h"

/* The weights note, with the layout's own clause. */
#define WEIGHTS_NOTE(layout)                                                                                       \
	"Weights: weight_dtype for the attention, MLP and expert matrices; the embeddings and lm_head stay in "     \
	"compute_dtype when weight_dtype is an fp8, int or nf4 format (as quantizers leave them; GGUF types apply " \
	"to them too); per-class weight_formats override any of it; vectors (norms, biases) use the norms "         \
	"format; layout " layout "."

static const char *const int4_names[] = { "gptq", "awq", NULL };
static const char *const layout_names[] = { "auto", "packed", "pytorch", "gguf", NULL };
static const char *const scope_names[] = { "per_sequence", "shared", NULL };
static const char *const mla_names[] = { "latent", "expanded", NULL };
static const char *const attention_names[] = { "none", "fused", "eager", NULL };

typedef struct inference_body {
	mp_inference_req req;
	mp_inference_opts opts;
	char kv_dtype[16];
	int int4_scheme, layout, scope, mla, attention;
	bool nf4_double_quant;
	double utilization;
} inference_body;

#define OFF(f) offsetof(inference_body, f)

static const mpm_field inference_fields[] = {
	{ .name = "model", .type = MPM_F_ANY, .required = true },
	{ .name = "weight_dtype", .type = MPM_F_DTYPE, .required = true, .offset = OFF(req.weight_dtype),
	  .dtypes = MPC_WEIGHT_DTYPES },
	{ .name = "kv_cache_dtype", .type = MPM_F_STRING, .required = true, .offset = OFF(kv_dtype),
	  .size = MPM_STR(inference_body, kv_dtype) },
	{ .name = "batch_size", .type = MPM_F_U64, .required = true, .offset = OFF(req.batch_size), .min = 1,
	  .max = MP_MAX_BATCH_SIZE },
	{ .name = "sequence_length", .type = MPM_F_U64, .required = true, .offset = OFF(req.sequence_length), .min = 1,
	  .max = MP_MAX_SEQUENCE_LENGTH },
	{ .name = "device", .type = MPM_F_ANY },
	{ .name = "num_gpus", .type = MPM_F_U64, .offset = OFF(req.num_gpus), .min = 1, .max = MP_MAX_GPUS },
	{ .name = "tensor_parallel_size", .type = MPM_F_U64, .offset = OFF(opts.tensor_parallel_size), .min = 1,
	  .max = MP_MAX_GPUS },
	{ .name = "cuda_context_bytes", .type = MPM_F_U64, .offset = OFF(req.cuda_context_bytes), .min = 0,
	  .max = UINT64_C(1) << 40 },
	{ .name = "weight_formats", .type = MPM_F_ANY },
	{ .name = "weight_layout", .type = MPM_F_ENUM, .offset = OFF(layout), .names = layout_names },
	{ .name = "int4_group_size", .type = MPM_F_U64, .offset = OFF(opts.formats.int4_group_size), .min = 1,
	  .max = UINT64_C(1) << 32 },
	{ .name = "int4_scheme", .type = MPM_F_ENUM, .offset = OFF(int4_scheme), .names = int4_names },
	{ .name = "nf4_double_quant", .type = MPM_F_BOOL, .offset = OFF(nf4_double_quant) },
	{ .name = "compute_dtype", .type = MPM_F_DTYPE, .offset = OFF(opts.compute_dtype), .dtypes = MPC_COMPUTE_DTYPES },
	{ .name = "kv_block_size", .type = MPM_F_U64, .offset = OFF(opts.kv_block_size), .min = 1, .max = 1 << 20 },
	{ .name = "sequence_length_scope", .type = MPM_F_ENUM, .offset = OFF(scope), .names = scope_names },
	{ .name = "mla_kv_cache", .type = MPM_F_ENUM, .offset = OFF(mla), .names = mla_names },
	{ .name = "attention_implementation", .type = MPM_F_ENUM, .offset = OFF(attention), .names = attention_names },
	{ .name = "max_num_batched_tokens", .type = MPM_F_U64, .offset = OFF(opts.max_num_batched_tokens), .min = 1,
	  .max = MP_MAX_SEQUENCE_LENGTH },
	{ .name = "logits_positions", .type = MPM_F_U64, .offset = OFF(opts.logits_positions), .min = 1,
	  .max = MP_MAX_SEQUENCE_LENGTH },
	{ .name = "gpu_memory_utilization", .type = MPM_F_DOUBLE, .offset = OFF(utilization), .dmin = 0, .dmax = 1 },
	{ .name = "allow_beyond_max_position_embeddings", .type = MPM_F_BOOL,
	  .offset = OFF(opts.allow_beyond_max_position) },
};

#define FOFF(c) offsetof(mp_weight_formats, cls) + (c) * sizeof(mp_dtype)

static const mpm_field format_fields[] = {
	{ .name = "embeddings", .type = MPM_F_DTYPE, .offset = FOFF(MP_TC_EMBEDDINGS), .dtypes = MPC_WEIGHT_DTYPES },
	{ .name = "attention", .type = MPM_F_DTYPE, .offset = FOFF(MP_TC_ATTENTION), .dtypes = MPC_WEIGHT_DTYPES },
	{ .name = "mlp", .type = MPM_F_DTYPE, .offset = FOFF(MP_TC_MLP), .dtypes = MPC_WEIGHT_DTYPES },
	{ .name = "experts", .type = MPM_F_DTYPE, .offset = FOFF(MP_TC_EXPERTS), .dtypes = MPC_WEIGHT_DTYPES },
	{ .name = "lm_head", .type = MPM_F_DTYPE, .offset = FOFF(MP_TC_LM_HEAD), .dtypes = MPC_WEIGHT_DTYPES },
	{ .name = "norms", .type = MPM_F_DTYPE, .offset = FOFF(MP_TC_NORMS), .dtypes = MPC_COMPUTE_DTYPES },
};

/* The body's own fields into ib, with the API's defaults (fused attention, double-quantised nf4). */
static mp_status decode_body(const cJSON *body, const char *pointer, inference_body *ib, mp_error *err)
{
	const cJSON *v;
	char field[96];
	mp_status st;
	mp_dtype kv;

	memset(ib, 0, sizeof(*ib));
	ib->attention = MP_ATTENTION_FUSED;
	ib->nf4_double_quant = true;
	st = mpm_decode_fields(body, pointer, inference_fields, MPM_COUNT(inference_fields), ib, err);
	if (st != MP_OK)
		return st;
	mpc_join(field, sizeof(field), pointer, "/kv_cache_dtype");
	st = mpc_kv_dtype(ib->kv_dtype, field, &kv, err);
	if (st != MP_OK)
		return st;
	ib->req.kv_cache_dtype = kv;
	v = cJSON_GetObjectItemCaseSensitive(body, "weight_formats");
	if (v) {
		snprintf(field, sizeof(field), "%s/weight_formats", pointer);
		st = mpm_decode_fields(v, field, format_fields, MPM_COUNT(format_fields), &ib->opts.formats, err);
		if (st != MP_OK)
			return st;
	}
	v = cJSON_GetObjectItemCaseSensitive(body, "gpu_memory_utilization");
	if (v && ib->utilization <= 0) {
		snprintf(field, sizeof(field), "%s/gpu_memory_utilization", pointer);
		return mp_fail(err, MP_EINVAL, field,
			       "gpu_memory_utilization must be in (0, 1]: the fraction of the GPU the plan may use");
	}
	{
		/* format options that apply to one format only: given without that format they would be silently
		 * ignored, so they are refused naming the field */
		static const struct {
			const char *name;
			mp_dtype dt;
		} only_for[] = { { "int4_scheme", MP_DTYPE_INT4 },
				 { "int4_group_size", MP_DTYPE_INT4 },
				 { "nf4_double_quant", MP_DTYPE_NF4 } };

		for (size_t i = 0; i < sizeof(only_for) / sizeof(only_for[0]); i++) {
			bool used = ib->req.weight_dtype == only_for[i].dt;

			for (int c = 0; c < MP_TC_COUNT; c++)
				used = used || ib->opts.formats.cls[c] == only_for[i].dt;
			if (!used && cJSON_GetObjectItemCaseSensitive(body, only_for[i].name)) {
				snprintf(field, sizeof(field), "%s/%s", pointer, only_for[i].name);
				return mp_fail(err, MP_EINVAL, field,
					       "%s applies only when weight_dtype (or a weight_formats class) is %s",
					       only_for[i].name, mp_dtype_name(only_for[i].dt));
			}
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

mp_status mpc_inference_decode(const cJSON *body, const char *pointer, bool allow_device, mps_inference_request *out,
			       mp_error *err)
{
	inference_body ib;
	mps_inference_job *j = &out->job;
	char field[96];
	mp_status st;

	memset(j, 0, sizeof(*j)); /* the device member is the device decoder's (it skips a 4 KB profile it does not use) */
	out->device.given = false;
	out->device.inline_profile = false;
	mpc_join(j->pointer, sizeof(j->pointer), pointer, NULL);
	st = decode_body(body, pointer, &ib, err);
	if (st != MP_OK)
		return st;
	j->req = ib.req;
	j->opts = ib.opts;
	mpc_join(field, sizeof(field), pointer, "/model");
	st = mpc_model_ref_decode(cJSON_GetObjectItemCaseSensitive(body, "model"), field, true, &j->model, err);
	if (st != MP_OK)
		return st;
	mpc_join(field, sizeof(field), pointer, "/device");
	if (!allow_device && cJSON_GetObjectItemCaseSensitive(body, "device"))
		return mp_fail(err, MP_EINVAL, field,
			       "a job names no device: the devices are given once for the whole batch in the "
			       "top-level \"devices\" list");
	return mpc_device_ref_decode(cJSON_GetObjectItemCaseSensitive(body, "device"), field, &out->device, err);
}

/* ----- the answer: written as text (json.h: mpc_out), member by member ---------------------------------------- */

static void weights_write(mpc_out *w, const mp_inference_memory *mem)
{
	uint64_t params = 0;

	mpc_w_obj(w, "weights");
	mpc_w_str(w, "layout", layout_names[mem->weights.layout]);
	mpc_w_obj(w, "classes");
	for (int i = 0; i < MP_TC_COUNT; i++) {
		mpc_w_obj(w, mp_tensor_class_name((mp_tensor_class)i));
		mpc_w_str(w, "format", mp_dtype_name(mem->weights.cls[i].format));
		mpc_w_u64(w, "parameters", mem->weights.cls[i].parameters);
		mpc_w_u64(w, "bytes", mem->weights.cls[i].bytes);
		mpc_w_end(w);
		params += mem->weights.cls[i].parameters;
	}
	mpc_w_end(w);
	mpc_w_u64(w, "buffers_bytes", mem->weights.buffers_bytes);
	mpc_w_u64(w, "total_bytes", mem->weights.total_bytes);
	/* bits per parameter over the whole model (meaningful per GPU only when tensor_parallel_size is 1) */
	if (params && mem->tensor_parallel_size == 1)
		mpc_w_num(w, "bits_per_parameter", 8.0 * (double)mem->weights.total_bytes / (double)params);
	mpc_w_end(w);
}

static void kv_write(mpc_out *w, const mp_inference_req *req, const mp_inference_opts *o, const mps_model *m,
		     const mp_inference_memory *mem)
{
	mpc_w_obj(w, "kv_cache");
	mpc_w_str(w, "dtype", mp_dtype_name(req->kv_cache_dtype));
	mpc_w_u64(w, "bytes", mem->kv_cache_bytes);
	mpc_w_u64(w, "bytes_per_token", mem->kv.bytes_per_token);
	mpc_w_u64(w, "values_per_token_per_layer", mem->kv.values_per_token_per_layer);
	if (m->arch.attn_kind == MP_ATTN_MLA)
		mpc_w_str(w, "mla_form", o->mla_cache == MP_MLA_EXPANDED ? "expanded" : "latent");
	mpc_w_u64(w, "kv_heads_per_gpu", mem->kv.kv_heads_per_gpu);
	mpc_w_u64(w, "kv_head_replication", mem->kv.kv_head_replication);
	mpc_w_u64(w, "full_attention_layers", mem->kv.full_layers);
	mpc_w_u64(w, "sliding_window_layers", mem->kv.window_layers);
	mpc_w_u64(w, "tokens_allocated_full", mem->kv.tokens_full);
	mpc_w_u64(w, "tokens_allocated_window", mem->kv.tokens_window);
	mpc_w_u64(w, "block_size", mem->kv.block_size);
	mpc_w_str(w, "sequence_length_scope", scope_names[o->length_scope]);
	mpc_w_end(w);
}

static void workspace_write(mpc_out *w, const mp_inference_opts *o, const mp_inference_memory *mem)
{
	mpc_w_obj(w, "workspace");
	mpc_w_str(w, "attention_implementation", attention_names[o->attention]);
	if (o->attention != MP_ATTENTION_NONE) {
		mpc_w_u64(w, "prefill_tokens", mem->workspace.prefill_tokens);
		mpc_w_str(w, "peak_phase", mem->workspace.peak_phase);
		mpc_w_u64(w, "attention_phase_bytes", mem->workspace.attention_phase_bytes);
		mpc_w_u64(w, "mlp_phase_bytes", mem->workspace.mlp_phase_bytes);
		mpc_w_u64(w, "head_phase_bytes", mem->workspace.head_phase_bytes);
		mpc_w_u64(w, "scores_bytes", mem->workspace.scores_bytes);
		mpc_w_u64(w, "mask_bytes", mem->workspace.mask_bytes);
		mpc_w_u64(w, "logits_bytes", mem->workspace.logits_bytes);
	}
	mpc_w_end(w);
}

static void fit_write(mpc_out *w, const mp_fit *fit, const mp_store_device *dev)
{
	mpc_w_obj(w, "fit");
	mpc_w_str(w, "device", dev->id);
	mpc_w_bool(w, "fits", fit->fits);
	mpc_w_u64(w, "capacity_bytes", fit->capacity_bytes);
	mpc_w_str(w, "capacity_source", dev->hw.usable_memory_bytes ? "usable_memory_bytes" : "memory_bytes");
	mpc_w_i64(w, "headroom_bytes", fit->headroom_bytes);
	mpc_w_str(w, "binding_term", fit->binding_term ? fit->binding_term : "weights");
	mpc_w_u64(w, "max_batch_size", fit->max_batch_size);
	mpc_w_u64(w, "max_sequence_length", fit->max_sequence_length);
	mpc_w_u64(w, "budget_bytes", fit->budget_bytes);
	mpc_w_u64(w, "reserve_bytes", fit->reserve_bytes);
	mpc_w_u64_or_null(w, "min_gpus", fit->min_gpus);
	mpc_w_end(w);
}

/* The performance block: roofline floors from the same engine as POST /v1/roofline. */
static void performance_write(mpc_out *w, const mps_performance *p)
{
	const mp_step *dec = &p->decode, *pre = &p->prefill;

	mpc_w_obj(w, "performance");
	mpc_w_num(w, "decode_step_seconds", dec->step_seconds);
	mpc_w_num(w, "prefill_seconds", pre->step_seconds);
	mpc_w_num(w, "tokens_per_second_per_sequence", dec->tokens_per_second_per_sequence);
	mpc_w_num(w, "tokens_per_second_total", dec->tokens_per_second_total);
	mpc_w_str(w, "bound", dec->compute_bound ? "compute" : "memory");
	mpc_w_str(w, "prefill_bound", pre->compute_bound ? "compute" : "memory");
	mpc_w_num(w, "decode_bytes_per_step", dec->bytes);
	mpc_w_num(w, "decode_kv_cache_read_bytes_per_step", dec->kv_read_bytes);
	mpc_w_u64_or_null(w, "decode_compute_bound_batch", p->compute_bound_batch);
	mpc_w_arr(w, "notes");
	mpc_w_str(w, NULL,
		  "Roofline floors (POST /v1/roofline's engine): the decode step is the last token of sequence_length "
		  "(each sequence reads its own KV cache); prefill_seconds is a time-to-first-token floor for prompts of "
		  "sequence_length tokens, all sequences at once. Launch overhead and imperfect bandwidth make real steps "
		  "slower.");
	if (p->tensor_parallel_size > 1) {
		char t[320];

		snprintf(t, sizeof(t),
			 "Per GPU with tensor_parallel_size %llu: each GPU reads its 1/%llu of the sharded weights and of "
			 "the KV cache (heads, FFN and expert widths, vocabulary split); norms and embeddings are "
			 "replicated. The all-reduce traffic between the GPUs (two per layer) is not modelled.",
			 (unsigned long long)p->tensor_parallel_size, (unsigned long long)p->tensor_parallel_size);
		mpc_w_str(w, NULL, t);
	} else {
		mpc_w_str(w, NULL, "One GPU (tensor_parallel_size 1).");
	}
	mpc_w_end(w);
	mpc_w_end(w);
}

/* The note on kv_cache_bytes, with the default block size from its constant. */
static const char *kv_note(void)
{
#define MPC_STR2(x) #x
#define MPC_STR(x) MPC_STR2(x)
	return "kv_cache_bytes = layers x tokens x (K + V values per token per layer, per GPU, each row stored in "
	       "kv_cache_dtype with its block scales) x sequences; tokens are rounded up to whole kv_block_size blocks "
	       "(" MPC_STR(MP_DEFAULT_KV_BLOCK_SIZE) " by default, 1 = contiguous) and sliding-window layers keep at "
	       "most their window.";
#undef MPC_STR
#undef MPC_STR2
}

static void notes_write(mpc_out *w, const mps_inference_request *rq, const mps_inference_plan *p)
{
	const mp_inference_opts *o = &rq->job.opts;
	const mp_inference_memory *mem = &p->mem;
	char buf[512];

	mpc_w_arr(w, "notes");
	mpc_w_str(w, NULL, "Byte counts are per GPU. total_bytes = weights_bytes + kv_cache_bytes + activations_bytes + "
			   "overhead_bytes.");
	mpc_w_str(w, NULL, kv_note());
	if (o->length_scope == MP_LENGTH_SHARED)
		mpc_w_str(w, NULL, "sequence_length_scope shared: sequence_length tokens in all, shared by the batch_size "
				   "slots (llama.cpp -c with -np).");
	else
		mpc_w_str(w, NULL, "sequence_length is per sequence: each of batch_size slots holds its own sequence_length "
				   "tokens (parallel slots multiply the context).");
	if (mem->kv.kv_head_replication > 1 && p->model.arch.attn_kind == MP_ATTN_GQA) {
		snprintf(buf, sizeof(buf),
			 "tensor_parallel_size %llu exceeds the %llu KV heads: each rank holds one KV head, replicated "
			 "on %llu ranks, so the KV cache per GPU does not shrink further.",
			 (unsigned long long)mem->tensor_parallel_size, (unsigned long long)p->model.arch.num_kv_heads,
			 (unsigned long long)mem->kv.kv_head_replication);
		mpc_w_str(w, NULL, buf);
	}
	if (p->model.arch.attn_kind == MP_ATTN_MLA && o->mla_cache == MP_MLA_LATENT)
		mpc_w_str(w, NULL, "MLA cache: the compressed latent (kv_lora_rank) plus the RoPE key (qk_rope_head_dim) per "
				   "token per layer, replicated on every tensor-parallel rank, not split (vLLM, SGLang, "
				   "llama.cpp); mla_kv_cache expanded gives transformers' full per-head K and V.");
	if (o->attention == MP_ATTENTION_NONE)
		mpc_w_str(w, NULL, "attention_implementation none: no prefill workspace (activations_bytes 0), the steady "
				   "decode state only.");
	else
		mpc_w_str(w, NULL,
			  "activations_bytes is the transient peak of one prefill forward of prefill_tokens tokens "
			  "(max_num_batched_tokens, else the whole batch), over the weights and the KV cache: the "
			  "tensors transformers' eager PyTorch forward keeps alive at the last layer's attention, MLP "
			  "or lm_head (the kept logits included), eager attention adding the score matrices at the "
			  "softmax.");
	/* the figure is MP_DEFAULT_CUDA_CONTEXT_BYTES with its thousands marked (the assertion keeps the two in step) */
	_Static_assert(MP_DEFAULT_CUDA_CONTEXT_BYTES == UINT64_C(552402944), "update the CUDA context note");
	mpc_w_str(w, NULL, "overhead_bytes is the CUDA context: 552,402,944 bytes measured on an H200 with CUDA 13.0 "
			   "unless the device or the request sets cuda_context_bytes.");
	mpc_w_str(w, NULL,
		  mem->weights.layout == MP_LAYOUT_PYTORCH
			  ? WEIGHTS_NOTE("pytorch (each tensor rounded up to 512 B, RoPE buffers)")
		  : mem->weights.layout == MP_LAYOUT_GGUF ? WEIGHTS_NOTE("gguf (llama.cpp tensors, rope_freqs for llama3 RoPE)")
							  : WEIGHTS_NOTE("packed (tensor bytes as a checkpoint stores them)"));
	if (p->have_device)
		mpc_w_str(w, NULL,
			  "fit: total_bytes against budget_bytes = capacity_bytes x gpu_memory_utilization (the vLLM "
			  "convention: the fraction of the GPU the engine may use, CUDA context included). min_gpus is "
			  "the smallest valid tensor_parallel_size that fits (null: none does; pipeline parallelism "
			  "is not modelled). max_sequence_length stops at the model's context (max_position_embeddings) "
			  "unless allow_beyond_max_position_embeddings is true.");
	mpc_w_end(w);
}

void mpc_inference_plan_write(mpc_out *w, const mps_inference_request *rq, const mps_inference_plan *p)
{
	const mp_inference_req *r = &rq->job.req;
	const mp_inference_opts *op = &rq->job.opts;
	const mp_inference_memory *mem = &p->mem;

	mpc_w_obj(w, NULL);
	mpc_model_write(w, "model", &p->model);
	mpc_w_obj(w, "request");
	mpc_w_str(w, "weight_dtype", mp_dtype_name(r->weight_dtype));
	mpc_w_str(w, "kv_cache_dtype", mp_dtype_name(r->kv_cache_dtype));
	mpc_w_u64(w, "batch_size", r->batch_size);
	mpc_w_u64(w, "sequence_length", r->sequence_length);
	mpc_w_str(w, "sequence_length_scope", scope_names[op->length_scope]);
	mpc_w_u64(w, "tensor_parallel_size", mem->tensor_parallel_size);
	mpc_w_u64(w, "num_gpus", r->num_gpus ? r->num_gpus : mem->tensor_parallel_size);
	mpc_w_str(w, "attention_implementation", attention_names[op->attention]);
	mpc_w_str(w, "compute_dtype", mp_dtype_name(op->compute_dtype ? op->compute_dtype : MP_DTYPE_BF16));
	mpc_w_num(w, "gpu_memory_utilization", op->gpu_memory_utilization > 0 ? op->gpu_memory_utilization : 1.0);
	mpc_w_end(w);

	mpc_w_obj(w, "memory");
	mpc_w_u64(w, "weights_bytes", mem->weights_bytes);
	mpc_w_u64(w, "kv_cache_bytes", mem->kv_cache_bytes);
	mpc_w_u64(w, "kv_cache_bytes_per_token", mem->kv_cache_bytes_per_token);
	mpc_w_u64(w, "activations_bytes", mem->activations_bytes);
	mpc_w_u64(w, "logits_bytes", mem->workspace.logits_bytes);
	mpc_w_u64(w, "overhead_bytes", mem->overhead_bytes);
	mpc_w_u64(w, "total_bytes", mem->total_bytes);
	mpc_w_u64(w, "kv_plus_logits_bytes", mem->kv_cache_bytes + mem->workspace.logits_bytes);
	mpc_w_u64(w, "prefill_peak_over_start_bytes", mem->kv_cache_bytes + mem->activations_bytes);
	mpc_w_end(w);

	weights_write(w, mem);
	kv_write(w, r, op, &p->model, mem);
	workspace_write(w, op, mem);

	mpc_w_obj(w, "parallel");
	mpc_w_u64(w, "tensor_parallel_size", mem->tensor_parallel_size);
	mpc_w_arr(w, "valid_tensor_parallel_sizes");
	for (size_t i = 0; i < p->ntp && i < MP_MAX_TP_DEGREES; i++)
		mpc_w_u64(w, NULL, p->tp_degrees[i]);
	mpc_w_end(w);
	mpc_w_bool(w, "kv_heads_replicated", mem->kv.kv_head_replication > 1);
	mpc_w_end(w);

	if (p->have_device) {
		fit_write(w, &p->fit, &p->device);
		performance_write(w, &p->perf);
	}
	notes_write(w, rq, p);
	mpc_w_end(w);
}

char *mpc_inference_plan_print(const mps_inference_request *rq, const mps_inference_plan *p, size_t *len)
{
	mpc_out w;

	mpc_out_init(&w);
	mpc_inference_plan_write(&w, rq, p);
	return mpc_out_finish(&w, len);
}

cJSON *mpc_inference_plan_json(const mps_inference_request *rq, const mps_inference_plan *p)
{
	char *text = mpc_inference_plan_print(rq, p, NULL);
	cJSON *doc = mpc_parse_exact(text);

	free(text);
	return doc;
}
