/*
 * mpc_inference.c: POST /v1/plan/inference both ways: the request's field tables (the same for a plan body, a fit
 * job and a calibration's fit_plan) and the answer document (per-GPU memory by term, weights per tensor class,
 * KV cache and workspace detail, the fit, the performance block) with notes on what each figure includes.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../model/fields.h"
#include "codec.h"
#include "mpc_tables.h"

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
static const char *const cache_layout_names[] = { "engine", "transformers", NULL }; /* mp_cache_layout */
/* by mp_attention_impl; then transformers' attn_implementation names of the fused kind (sdpa, flash_attention_2 and 3:
 * no scores matrix kept), read as fused and echoed so */
static const char *const attention_names[] = { "none", "fused", "eager", "sdpa", "flash_attention_2",
					       "flash_attention_3", NULL };
static const char *const engine_names[] = { "none", "vllm", "sglang", "trtllm", "llamacpp", "ollama", NULL }; /* by mp_engine; "none": what the answer echoes when no engine is named */

typedef struct inference_body {
	mp_inference_req req;
	mp_inference_opts opts;
	char weight_dtype[24], kv_dtype[24];
	int int4_scheme, layout, scope, mla, attention, engine, cache_layout;
	bool nf4_double_quant, chunked_prefill;
	double utilization, mem_fraction_static, free_gpu_memory_fraction;
	char served_model[256];
	bool observed_terms;
	char engine_version[32];
	bool enforce_eager;
} inference_body;

#define OFF(f) offsetof(inference_body, f)

static const mpm_field inference_fields[] = {
	{ .name = "model", .type = MPM_F_ANY, .required = true },
	/* weight_dtype and kv_cache_dtype: names, aliases, "auto" (the default); read by mpc_weight_dtype_ex and
	 * mpc_kv_dtype_ex below */
	{ .name = "weight_dtype", .type = MPM_F_STRING, .offset = OFF(weight_dtype),
	  .size = MPM_STR(inference_body, weight_dtype) },
	{ .name = "kv_cache_dtype", .type = MPM_F_STRING, .offset = OFF(kv_dtype),
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
	{ .name = "cache_layout", .type = MPM_F_ENUM, .offset = OFF(cache_layout), .names = cache_layout_names },
	{ .name = "attention_implementation", .type = MPM_F_ENUM, .offset = OFF(attention), .names = attention_names },
	{ .name = "max_num_batched_tokens", .type = MPM_F_U64, .offset = OFF(opts.max_num_batched_tokens), .min = 1,
	  .max = MP_MAX_SEQUENCE_LENGTH },
	{ .name = "logits_positions", .type = MPM_F_U64, .offset = OFF(opts.logits_positions), .min = 1,
	  .max = MP_MAX_SEQUENCE_LENGTH },
	{ .name = "gpu_memory_utilization", .type = MPM_F_DOUBLE, .offset = OFF(utilization), .dmin = 0, .dmax = 1 },
	{ .name = "allow_beyond_max_position_embeddings", .type = MPM_F_BOOL,
	  .offset = OFF(opts.allow_beyond_max_position) },
	{ .name = "engine", .type = MPM_F_ENUM, .offset = OFF(engine), .names = engine_names },
	{ .name = "chunked_prefill", .type = MPM_F_BOOL, .offset = OFF(chunked_prefill) },
	{ .name = "mem_fraction_static", .type = MPM_F_DOUBLE, .offset = OFF(mem_fraction_static), .dmin = 0.01,
	  .dmax = 1 },
	{ .name = "free_gpu_memory_fraction", .type = MPM_F_DOUBLE, .offset = OFF(free_gpu_memory_fraction),
	  .dmin = 0.01, .dmax = 1 },
	{ .name = "served_model", .type = MPM_F_STRING, .offset = OFF(served_model),
	  .size = MPM_STR(inference_body, served_model) },
	/* parts of the answer beyond the default ones: ["tensors"] (read by mpc_include_decode) */
	{ .name = "include", .type = MPM_F_ANY },
	{ .name = "observed_terms", .type = MPM_F_BOOL, .offset = OFF(observed_terms) },
	{ .name = "engine_version", .type = MPM_F_STRING, .offset = OFF(engine_version),
	  .size = MPM_STR(inference_body, engine_version) },
	{ .name = "enforce_eager", .type = MPM_F_BOOL, .offset = OFF(enforce_eager) },
	/* llama.cpp's and Ollama's launch knobs (read by mpc_llamacpp_opts_decode) */
	{ .name = "engine_options", .type = MPM_F_ANY },
};

#define FOFF(c) offsetof(mp_weight_formats, cls) + (c) * sizeof(mp_dtype)

static const mpm_field format_fields[] = {
	{ .name = "embeddings", .type = MPM_F_DTYPE, .offset = FOFF(MP_TC_EMBEDDINGS), .dtypes = MPC_WEIGHT_DTYPES },
	{ .name = "attention", .type = MPM_F_DTYPE, .offset = FOFF(MP_TC_ATTENTION), .dtypes = MPC_WEIGHT_DTYPES },
	{ .name = "mlp", .type = MPM_F_DTYPE, .offset = FOFF(MP_TC_MLP), .dtypes = MPC_WEIGHT_DTYPES },
	{ .name = "experts", .type = MPM_F_DTYPE, .offset = FOFF(MP_TC_EXPERTS), .dtypes = MPC_WEIGHT_DTYPES },
	{ .name = "lm_head", .type = MPM_F_DTYPE, .offset = FOFF(MP_TC_LM_HEAD), .dtypes = MPC_WEIGHT_DTYPES },
	{ .name = "norms", .type = MPM_F_DTYPE, .offset = FOFF(MP_TC_NORMS), .dtypes = MPC_COMPUTE_DTYPES },
	{ .name = "recurrent", .type = MPM_F_DTYPE, .offset = FOFF(MP_TC_RECURRENT), .dtypes = MPC_WEIGHT_DTYPES },
	{ .name = "vision", .type = MPM_F_DTYPE, .offset = FOFF(MP_TC_VISION), .dtypes = MPC_WEIGHT_DTYPES },
};

void mpc_inference_job_init(mps_inference_job *j)
{
	char pointer[sizeof(j->pointer)];

	memcpy(pointer, j->pointer, sizeof(pointer));
	memset(j, 0, sizeof(*j));
	memcpy(j->pointer, pointer, sizeof(pointer));
	j->req.json_pointer = NULL;
	j->opts.attention = MP_ATTENTION_FUSED;	/* sdpa: transformers' and vLLM's default attention */
	j->opts.formats.nf4_no_double_quant = false;	/* QLoRA's double quantisation */
	j->weight_dtype_auto = j->kv_cache_dtype_auto = true;
}

mp_status mpc_inference_dtypes(const char *weight, const char *kv, const char *weight_field, const char *kv_field,
			       mps_inference_job *j, mp_error *err)
{
	mp_problems p = MP_PROBLEMS_INIT;
	int scheme = -1;

	j->weight_dtype_auto = j->kv_cache_dtype_auto = true;
	j->req.weight_dtype = j->req.kv_cache_dtype = MP_DTYPE_INVALID;
	if (weight && mp_problems_note(&p,
				       mpc_weight_dtype_ex(weight, weight_field, &j->req.weight_dtype, &scheme,
							   &j->weight_dtype_auto, err),
				       err) == MP_OK &&
	    scheme >= 0) {
		j->opts.formats.int4_scheme = (mp_int4_scheme)scheme;
		j->int4_scheme_given = true;
	}
	if (kv)
		mp_problems_note(&p, mpc_kv_dtype_ex(kv, kv_field, &j->req.kv_cache_dtype, &j->kv_cache_dtype_auto, err),
				 err);
	return mp_problems_end(&p, err);
}

/* The body's own fields into ib and the job's dtypes, with the API's defaults (fused attention, double-quantised
 * nf4, weight and KV dtypes auto). Every problem is recorded (mp_problems); the first is returned. */
static mp_status decode_body(const cJSON *body, const char *pointer, inference_body *ib, mps_inference_job *j,
			     mp_error *err)
{
	mp_problems p = MP_PROBLEMS_INIT;
	const cJSON *v;
	char field[96], wfield[96];
	mp_status st;

	memset(ib, 0, sizeof(*ib));
	mpc_inference_job_init(j);
	ib->attention = (int)j->opts.attention;
	ib->nf4_double_quant = !j->opts.formats.nf4_no_double_quant;
	ib->engine = -1;
	ib->chunked_prefill = true;
	ib->observed_terms = true;
	st = mp_problems_note(&p, mpm_decode_fields(body, pointer, inference_fields, MPM_COUNT(inference_fields), ib, err),
			      err);
	if (st == MP_ENOMEM || !cJSON_IsObject(body))
		return mp_problems_end(&p, err);
	j->opts = ib->opts;
	j->opts.formats.int4_scheme = (mp_int4_scheme)ib->int4_scheme;
	j->int4_scheme_given = mpc_member(body, "int4_scheme") != NULL;
	j->int4_group_size_given = mpc_member(body, "int4_group_size") != NULL;
	j->compute_dtype_given = mpc_member(body, "compute_dtype") != NULL;
	{
		/* the string fields are read only when the table took them (a bad type is its problem already) */
		const cJSON *w = mpc_member(body, "weight_dtype");
		const cJSON *k = mpc_member(body, "kv_cache_dtype");
		bool scheme_given = j->int4_scheme_given;
		mp_int4_scheme asked = j->opts.formats.int4_scheme;

		mpc_join(wfield, sizeof(wfield), pointer, "/weight_dtype");
		mpc_join(field, sizeof(field), pointer, "/kv_cache_dtype");
		mp_problems_note(&p,
				 mpc_inference_dtypes(cJSON_IsString(w) ? w->valuestring : NULL,
						      cJSON_IsString(k) ? k->valuestring : NULL, wfield, field, j, err),
				 err);
		if (w && !cJSON_IsString(w))
			j->weight_dtype_auto = false;
		if (k && !cJSON_IsString(k))
			j->kv_cache_dtype_auto = false;
		/* "weight_dtype": "awq" with "int4_scheme": "gptq" says two things */
		if (scheme_given && j->int4_scheme_given && j->opts.formats.int4_scheme != asked &&
		    cJSON_IsString(w) && (strcasecmp(w->valuestring, "gptq") == 0 || strcasecmp(w->valuestring, "awq") == 0)) {
			snprintf(field, sizeof(field), "%s/int4_scheme", pointer);
			mp_problems_note(&p,
					 mp_fail(err, MP_EINVAL, field,
						 "int4_scheme %s contradicts weight_dtype %s; give one of them", int4_names[asked],
						 w->valuestring),
					 err);
		}
		if (scheme_given)
			j->int4_scheme_given = true;
	}
	v = mpc_member(body, "weight_formats");
	if (v) {
		mpc_join(field, sizeof(field), pointer, "/weight_formats");
		mp_problems_note(&p,
				 mpm_decode_fields(v, field, format_fields, MPM_COUNT(format_fields), &j->opts.formats, err),
				 err);
	}
	v = mpc_member(body, "gpu_memory_utilization");
	if (v && cJSON_IsNumber(v) && v->valuedouble == 0) { /* the table allows 0 to 1: 0 itself is no budget */
		mpc_join(field, sizeof(field), pointer, "/gpu_memory_utilization");
		mp_problems_note(&p,
				 mp_fail(err, MP_EINVAL, field,
					 "gpu_memory_utilization must be in (0, 1]: the fraction of the GPU the plan may "
					 "use"),
				 err);
	}
	{
		/* format options that apply to one format only: given without that format they would be silently
		 * ignored, so they are refused naming the field (an "auto" weight_dtype may resolve to it) */
		static const struct {
			const char *name;
			mp_dtype dt;
		} only_for[] = { { "int4_scheme", MP_DTYPE_INT4 },
				 { "int4_group_size", MP_DTYPE_INT4 },
				 { "nf4_double_quant", MP_DTYPE_NF4 } };

		for (size_t i = 0; i < sizeof(only_for) / sizeof(only_for[0]); i++) {
			bool used = j->weight_dtype_auto || j->req.weight_dtype == only_for[i].dt;

			for (int c = 0; c < MP_TC_COUNT; c++)
				used = used || j->opts.formats.cls[c] == only_for[i].dt;
			if (!used && mpc_member(body, only_for[i].name)) {
				mpc_join(field, sizeof(field), pointer, "/");
				mpc_join(field, sizeof(field), field, only_for[i].name);
				mp_problems_note(&p,
						 mp_fail(err, MP_EINVAL, field,
							 "%s applies only when weight_dtype (or a weight_formats class) is %s",
							 only_for[i].name, mp_dtype_name(only_for[i].dt)),
						 err);
			}
		}
	}
	{
		/* an engine's own knob given without that engine would be ignored: refused, naming the field */
		static const struct {
			const char *name;
			int engine;
		} knobs[] = { { "mem_fraction_static", MP_ENGINE_SGLANG },
			      { "free_gpu_memory_fraction", MP_ENGINE_TRTLLM },
			      { "served_model", -2 },
			      { "engine_version", -2 },
			      { "enforce_eager", -2 } };

		for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
			bool ok = knobs[i].engine == -2 ? ib->engine >= MP_ENGINE_VLLM : ib->engine == knobs[i].engine;

			if (!ok && mpc_member(body, knobs[i].name)) {
				mpc_join(field, sizeof(field), pointer, "/");
				mpc_join(field, sizeof(field), field, knobs[i].name);
				mp_problems_note(&p,
						 mp_fail(err, MP_EINVAL, field, "%s applies only with engine %s",
							 knobs[i].name,
							 knobs[i].engine == -2 ? "vllm, sglang or trtllm"
									       : engine_names[knobs[i].engine]),
						 err);
			}
		}
	}
	j->engine.engine = ib->engine >= 0 ? (mp_engine)ib->engine : MP_ENGINE_NONE;
	if (mp_problems_note(&p, mpc_llamacpp_opts_decode(mpc_member(body, "engine_options"), pointer, j->engine.engine,
							  &j->llama, err),
			     err) == MP_ENOMEM)
		return mp_problems_end(&p, err);
	if (j->engine.engine == MP_ENGINE_LLAMACPP || j->engine.engine == MP_ENGINE_OLLAMA) {
		/* one cache type for K and V in engine_options (Ollama's OLLAMA_KV_CACHE_TYPE is one) that memplan has a
		 * format for is the plan's kv_cache_dtype, so that memory, fit and performance are of the cache the command
		 * makes; a kv_cache_dtype given beside another is a 422 (types it has no format for, or K and V apart:
		 * the top level keeps kv_cache_dtype, and engine.placement holds llama.cpp's own buffers) */
		uint32_t tk = j->llama.cache_type_k, tv = j->llama.cache_type_v;

		if (j->engine.engine == MP_ENGINE_OLLAMA && tk == MP_GGML_TYPE_COUNT)
			tk = tv;
		if (j->engine.engine == MP_ENGINE_OLLAMA && tv == MP_GGML_TYPE_COUNT)
			tv = tk;
		if (tk != MP_GGML_TYPE_COUNT && tk == tv && mp_ggml_to_dtype(tk) != MP_DTYPE_INVALID) {
			mp_dtype d = mp_ggml_to_dtype(tk);
			char field[MP_POINTER_MAX];

			if (j->kv_cache_dtype_auto) {
				j->req.kv_cache_dtype = d;
				j->kv_cache_dtype_auto = false;
				j->kv_cache_dtype_from_engine_options = true;
			} else if (j->req.kv_cache_dtype != d) {
				mpc_join(field, sizeof(field), pointer, "/kv_cache_dtype");
				mp_problems_note(&p,
						 mp_fail(err, MP_EINVAL, field,
							 "kv_cache_dtype %s and engine_options' cache type %s (the cache llama.cpp "
							 "makes) disagree: give one of them",
							 mp_dtype_name(j->req.kv_cache_dtype), mp_dtype_name(d)),
						 err);
			}
		}
	}
	j->engine.chunked_prefill = mpc_member(body, "chunked_prefill") ? (ib->chunked_prefill ? 1 : -1) : 0;
	j->engine.utilization_given = mpc_member(body, "gpu_memory_utilization") != NULL;
	j->engine.block_size_given = mpc_member(body, "kv_block_size") != NULL;
	j->engine.mem_fraction_static = ib->mem_fraction_static;
	j->engine.free_gpu_memory_fraction = ib->free_gpu_memory_fraction;
	/* "observed_terms": false: the engine block keeps its model's terms (service/mps_observe.h) */
	j->engine.observed_terms_off = !ib->observed_terms;
	mpc_join(j->engine.served_model, sizeof(j->engine.served_model), ib->served_model, NULL);
	j->engine.enforce_eager = ib->enforce_eager;
	j->engine.version = NULL;
	if (ib->engine_version[0] && ib->engine >= MP_ENGINE_VLLM) {
		j->engine.version = mp_engine_version_find((mp_engine)ib->engine, ib->engine_version);
		if (j->engine.version == NULL) {
			char names[256];

			mp_engine_version_names((mp_engine)ib->engine, names, sizeof(names));
			mpc_join(field, sizeof(field), pointer, "/engine_version");
			mp_problems_note(&p,
					 mp_fail(err, MP_EINVAL, field,
						 "engine_version '%s' is not a %s release memplan follows: one of %s (a "
						 "release such as 0.33.0 names its line; leave it out for the newest)",
						 ib->engine_version, engine_names[ib->engine], names),
					 err);
		}
	}
	if (j->engine.served_model[0] == '-') {
		/* a leading dash is read as a flag by every engine's parser ("--help" would run something else) */
		mpc_join(field, sizeof(field), pointer, "/served_model");
		mp_problems_note(&p,
				 mp_fail(err, MP_EINVAL, field,
					 "served_model is the model argument of a command line (a Hugging Face repository or "
					 "a path): it cannot begin with '-' (the engines' parsers read that as a flag; give "
					 "./%s for a path)",
					 j->engine.served_model),
				 err);
	}
	for (const char *c = j->engine.served_model; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f) {
			mpc_join(field, sizeof(field), pointer, "/served_model");
			mp_problems_note(&p,
					 mp_fail(err, MP_EINVAL, field,
						 "served_model is the model argument of a command line (a Hugging Face "
						 "repository or a path): no control characters"),
					 err);
			break;
		}
	mpc_join(field, sizeof(field), pointer, "/include");
	mp_problems_note(&p, mpc_include_decode(mpc_member(body, "include"), field, &j->include_tensors, err), err);
	j->req.batch_size = ib->req.batch_size;
	j->req.sequence_length = ib->req.sequence_length;
	j->req.num_gpus = ib->req.num_gpus;
	j->req.cuda_context_bytes = ib->req.cuda_context_bytes;
	j->opts.gpu_memory_utilization = ib->utilization;
	j->opts.formats.nf4_no_double_quant = !ib->nf4_double_quant;
	j->opts.formats.layout = (mp_weight_layout)ib->layout;
	j->opts.length_scope = (mp_length_scope)ib->scope;
	j->opts.mla_cache = (mp_mla_cache)ib->mla;
	j->opts.cache_layout = (mp_cache_layout)ib->cache_layout;
	j->opts.attention = ib->attention > 2 ? MP_ATTENTION_FUSED : (mp_attention_impl)ib->attention;
	return mp_problems_end(&p, err);
}

mp_status mpc_inference_decode(const cJSON *body, const char *pointer, bool allow_device, mps_inference_request *out,
			       mp_error *err)
{
	inference_body ib;
	mps_inference_job *j = &out->job;
	mp_problems p = MP_PROBLEMS_INIT;
	char field[96];

	/* the job cleared; the device member is the device decoder's (it leaves a 4 KB profile it does not use alone) */
	memset(j, 0, sizeof(*j));
	out->device.given = out->device.inline_profile = false;
	mpc_join(j->pointer, sizeof(j->pointer), pointer, NULL);
	/* every problem of the body at once: its fields, the model and the device */
	if (mp_problems_note(&p, decode_body(body, pointer, &ib, j, err), err) == MP_ENOMEM || !cJSON_IsObject(body))
		return mp_problems_end(&p, err);
	mpc_join(field, sizeof(field), pointer, "/model");
	if (mp_problems_note(&p,
			     mpc_model_ref_decode(mpc_member(body, "model"), field, true, &j->model,
						  err),
			     err) == MP_ENOMEM)
		return mp_problems_end(&p, err);
	if (!allow_device && j->include_tensors) {
		mpc_join(field, sizeof(field), pointer, "/include");
		mp_problems_note(&p,
				 mp_fail(err, MP_EINVAL, field,
					 "include applies to one plan (POST /v1/plan/inference); a batch's answers list "
					 "no tensors: GET /v1/models/{id}/tensors lists a model's"),
				 err);
	}
	mpc_join(field, sizeof(field), pointer, "/device");
	if (!allow_device && mpc_member(body, "device"))
		mp_problems_note(&p,
				 mp_fail(err, MP_EINVAL, field,
					 "a job names no device: the devices are given once for the whole batch in the "
					 "top-level \"devices\" list"),
				 err);
	else if (mp_problems_note(&p, mpc_device_ref_decode(mpc_member(body, "device"), field,
							     &out->device, err),
				  err) == MP_OK)
		mp_problems_note(&p, mpc_device_ref_require_memory(&out->device, err), err);
	/* the host of a llama.cpp placement: a CPU profile (engine_options.host_device) */
	{
		const cJSON *eo = mpc_member(body, "engine_options");
		const cJSON *hd = cJSON_IsObject(eo) ? mpc_member(eo, "host_device") : NULL;

		mpc_join(field, sizeof(field), pointer, "/engine_options/host_device");
		if (hd && !allow_device)
			mp_problems_note(&p,
					 mp_fail(err, MP_EINVAL, field,
						 "a job names no host device: a batch's answers give no llama.cpp speed"),
					 err);
		else
			mp_problems_note(&p, mpc_device_ref_decode(allow_device ? hd : NULL, field, &out->host_device, err),
					 err);
	}
	return mp_problems_end(&p, err);
}

/* ----- the answer: written as text (mpc_json.h: mpc_out), member by member ---------------------------------------- */

static void weights_write(mpc_out *w, const mp_inference_memory *mem)
{
	uint64_t params = 0;

	mpc_w_obj(w, "weights");
	mpc_w_lit(w, "layout", layout_names[mem->weights.layout]);
	mpc_w_obj(w, "classes");
	for (int i = 0; i < MP_TC_COUNT; i++) {
		/* classes after norms (recurrent, vision) appear only in models that have them */
		if (i > MP_TC_NORMS && mem->weights.cls[i].parameters == 0)
			continue;
		mpc_w_obj(w, mp_tensor_class_name((mp_tensor_class)i));
		mpc_w_lit(w, "format", mp_dtype_name(mem->weights.cls[i].format));
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

/* Whether the engines' and transformers' layouts differ for this model (mp_cache_layout): sliding-window layers,
 * recurrent states with a conv, or Falcon's expanded KV heads. */
static bool layout_matters(const mps_model *m, const mp_inference_memory *mem)
{
	return mem->kv.window_layers || (mem->kv.recurrent_layers && m->arch.ssm.conv_kernel) ||
	       m->arch.transformers_kv_heads;
}

static void kv_write(mpc_out *w, const mp_inference_req *req, const mp_inference_opts *o, const mps_model *m,
		     const mp_inference_memory *mem)
{
	mpc_w_obj(w, "kv_cache");
	mpc_w_lit(w, "dtype", mp_dtype_name(req->kv_cache_dtype));
	mpc_w_u64(w, "bytes", mem->kv_cache_bytes);
	mpc_w_u64(w, "bytes_per_token", mem->kv.bytes_per_token);
	mpc_w_u64(w, "values_per_token_per_layer", mem->kv.values_per_token_per_layer);
	if (m->arch.attn_kind == MP_ATTN_MLA)
		mpc_w_str(w, "mla_form", o->mla_cache == MP_MLA_EXPANDED ? "expanded" : "latent");
	if (layout_matters(m, mem))
		mpc_w_lit(w, "layout", cache_layout_names[o->cache_layout]);
	mpc_w_u64(w, "kv_heads_per_gpu", mem->kv.kv_heads_per_gpu);
	mpc_w_u64(w, "kv_head_replication", mem->kv.kv_head_replication);
	mpc_w_u64(w, "full_attention_layers", mem->kv.full_layers);
	mpc_w_u64(w, "sliding_window_layers", mem->kv.window_layers);
	mpc_w_u64(w, "tokens_allocated_full", mem->kv.tokens_full);
	mpc_w_u64(w, "tokens_allocated_window", mem->kv.tokens_window);
	mpc_w_u64(w, "block_size", mem->kv.block_size);
	mpc_w_lit(w, "sequence_length_scope", scope_names[o->length_scope]);
	if (mem->kv.shared_kv_layers)
		mpc_w_u64(w, "shared_kv_layers", mem->kv.shared_kv_layers);
	if (mem->kv.recurrent_layers) {
		/* constant per sequence: in bytes, times the sequences; never grows with the tokens */
		mpc_w_u64(w, "recurrent_layers", mem->kv.recurrent_layers);
		mpc_w_u64(w, "recurrent_state_bytes_per_sequence", mem->kv.recurrent_state_bytes_per_sequence);
		mpc_w_u64(w, "recurrent_state_bytes", mem->kv.recurrent_state_bytes);
	}
	mpc_w_end(w);
}

static void workspace_write(mpc_out *w, const mp_inference_opts *o, const mp_inference_memory *mem)
{
	mpc_w_obj(w, "workspace");
	mpc_w_lit(w, "attention_implementation", attention_names[o->attention]);
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

void mpc_fit_members_write(mpc_out *w, const mp_fit *fit, const mp_store_device *dev, uint64_t min_gpus)
{
	mpc_w_str(w, "device", mps_device_label(dev));
	mpc_w_str(w, "device_kind", dev->kind[0] ? dev->kind : "gpu");
	mpc_w_bool(w, "fits", fit->fits);
	mpc_w_u64(w, "capacity_bytes", fit->capacity_bytes);
	mpc_w_str(w, "capacity_source", dev->hw.usable_memory_bytes ? "usable_memory_bytes" : "memory_bytes");
	mpc_w_i64(w, "headroom_bytes", fit->headroom_bytes);
	mpc_w_str(w, "binding_term", fit->binding_term ? fit->binding_term : "weights");
	mpc_w_u64(w, "max_batch_size", fit->max_batch_size);
	mpc_w_u64(w, "max_sequence_length", fit->max_sequence_length);
	mpc_w_lit(w, "max_sequence_length_bound", fit->max_sequence_length_at_context ? "context" : "memory");
	mpc_w_u64(w, "budget_bytes", fit->budget_bytes);
	mpc_w_u64(w, "reserve_bytes", fit->reserve_bytes);
	if (!dev->hw.host_memory) /* a CPU is one host: no GPU count */
		mpc_w_u64_or_null(w, "min_gpus", min_gpus);
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
	mpc_w_lit(w, "bound", dec->compute_bound ? "compute" : "memory");
	mpc_w_lit(w, "prefill_bound", pre->compute_bound ? "compute" : "memory");
	mpc_w_num(w, "decode_bytes_per_step", dec->bytes);
	mpc_w_num(w, "decode_kv_cache_read_bytes_per_step", dec->kv_read_bytes);
	mpc_w_u64_or_null(w, "decode_compute_bound_batch", p->compute_bound_batch);
	mpc_w_arr(w, "notes");
	mpc_w_lit(w, NULL,
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
		mpc_w_lit(w, NULL, "One GPU (tensor_parallel_size 1).");
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

static void notes_write(mpc_out *w, const mps_inference_plan *p)
{
	const mp_inference_opts *o = &p->opts;
	const mp_inference_memory *mem = &p->mem;
	char buf[512];

	mpc_w_arr(w, "notes");
	mpc_w_lit(w, NULL, "Byte counts are per GPU. total_bytes = weights_bytes + kv_cache_bytes + activations_bytes + "
			   "overhead_bytes.");
	mpc_w_lit(w, NULL, kv_note());
	if (o->length_scope == MP_LENGTH_SHARED)
		mpc_w_lit(w, NULL, "sequence_length_scope shared: sequence_length tokens in all, shared by the batch_size "
				   "slots (llama.cpp -c with -np).");
	else
		mpc_w_lit(w, NULL, "sequence_length is per sequence: each of batch_size slots holds its own sequence_length "
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
		mpc_w_lit(w, NULL, "MLA cache: the compressed latent (kv_lora_rank) plus the RoPE key (qk_rope_head_dim) per "
				   "token per layer, replicated on every tensor-parallel rank, not split (vLLM, SGLang, "
				   "llama.cpp); mla_kv_cache expanded gives transformers' full per-head K and V.");
	if (layout_matters(&p->model, mem))
		mpc_w_lit(w, NULL, o->cache_layout == MP_CACHE_TRANSFORMERS
		                       ? "cache_layout transformers (kv_cache.layout): the KV cache as transformers 5.24's "
		                         "DynamicCache holds it: a sliding-window layer min(tokens, window - 1) tokens, a conv "
		                         "state conv_kernel inputs, Falcon's new decoder architecture num_attention_heads KV "
		                         "heads. cache_layout engine (the default) gives the serving engines' layout."
		                       : "cache_layout engine (kv_cache.layout, the default): the KV cache as the serving "
		                         "engines hold it (vLLM): a sliding-window layer min(tokens, window) tokens, a conv "
		                         "state conv_kernel - 1 inputs, Falcon's new decoder architecture num_kv_heads KV "
		                         "heads. cache_layout transformers gives transformers' DynamicCache (window - 1 "
		                         "tokens, conv_kernel inputs, Falcon's heads expanded).");
	if (mem->kv.recurrent_layers && p->have_device)
		mpc_w_lit(w, NULL, "Performance of the recurrent layers: their projections as matrix products and the scan as "
				   "one vector operation per layer that reads and writes each sequence's state once per decode "
				   "step (6 FLOPs per state value per token, 2 per conv tap); the state traffic counts in "
				   "decode_kv_cache_read_bytes_per_step. Chunked-scan intermediates are not modelled.");
	if (mem->kv.recurrent_layers)
		mpc_w_lit(w, NULL, "Recurrent state: each of the kv_cache.recurrent_layers keeps a constant state per sequence "
				   "(the conv state's last conv_kernel - 1 inputs in compute_dtype, the scan's or linear "
				   "attention's state in fp32 (MiniMax's lightning state in compute_dtype), as vLLM's Mamba and "
				   "linear-attention layers hold them); kv_cache_bytes includes recurrent_state_bytes "
				   "(recurrent_state_bytes_per_sequence x batch_size), which never grows with sequence_length. "
				   "The prefill workspace counts the hidden states and logits only: the recurrent mixers' own "
				   "transients (their in_proj outputs and scan chunks) are not in activations_bytes.");
	if (p->model.arch.indexer_head_dim)
		mpc_w_lit(w, NULL, "Sparse attention indexer: every layer with an indexer of its own also caches one indexer "
				   "key (index_head_dim values) per token, in kv_cache_dtype, on every tensor-parallel rank; "
				   "they are in kv_cache_bytes and bytes_per_token (vLLM keeps them in fp8 with a scale per 128 "
				   "values).");
	if (mem->weights.cls[MP_TC_VISION].parameters)
		mpc_w_lit(w, NULL, "Vision: the image tower and projector (weights.classes.vision) are counted in the "
				   "parameters and weights, in compute_dtype under a quantised weight_dtype (quantizers leave "
				   "them in 16 bit; weight_formats.vision overrides), whole on every tensor-parallel rank; the "
				   "KV cache and the prefill workspace are the decoder's (image tokens are not modelled).");
	if (o->attention == MP_ATTENTION_NONE)
		mpc_w_lit(w, NULL, "attention_implementation none: no prefill workspace (activations_bytes 0), the steady "
				   "decode state only.");
	else {
		mpc_w_lit(w, NULL,
			  "activations_bytes is the transient peak of one prefill forward of prefill_tokens tokens "
			  "(max_num_batched_tokens: the request's, else the engine's default for the device, as "
			  "request.max_num_batched_tokens_source says), over the weights and the KV cache: the "
			  "tensors transformers' eager PyTorch forward keeps alive at the last layer's attention, MLP "
			  "or lm_head (the kept logits included), eager attention adding the score matrices at the "
			  "softmax.");
		if (p->prefill.defaulted)
			mpc_w_lit(w, NULL, MPC_PREFILL_NOTE);
	}
	/* the figure is MP_DEFAULT_CUDA_CONTEXT_BYTES with its thousands marked (the assertion keeps the two in step) */
	_Static_assert(MP_DEFAULT_CUDA_CONTEXT_BYTES == UINT64_C(552402944), "update the CUDA context note");
	if (p->have_device && p->device.hw.host_memory)
		mpc_w_lit(w, NULL, "overhead_bytes: a CPU has no CUDA context, so none unless the request sets "
				   "cuda_context_bytes; the bytes are of the host's memory.");
	else
		mpc_w_lit(w, NULL, "overhead_bytes is the CUDA context: 552,402,944 bytes measured on an H200 with CUDA "
				   "13.0 unless the device or the request sets cuda_context_bytes.");
	mpc_w_lit(w, NULL,
		  mem->weights.layout == MP_LAYOUT_PYTORCH
			  ? WEIGHTS_NOTE("pytorch (each tensor rounded up to 512 B, RoPE buffers)")
		  : mem->weights.layout == MP_LAYOUT_GGUF ? WEIGHTS_NOTE("gguf (llama.cpp tensors, rope_freqs for llama3 RoPE)")
							  : WEIGHTS_NOTE("packed (tensor bytes as a checkpoint stores them)"));
	if (p->have_device)
		mpc_w_lit(w, NULL,
			  "fit: total_bytes against budget_bytes = capacity_bytes x gpu_memory_utilization (the vLLM "
			  "convention: the fraction of the GPU the engine may use, CUDA context included). min_gpus is "
			  "the smallest valid tensor_parallel_size that fits (null: none does; pipeline parallelism "
			  "is not modelled). max_sequence_length stops at the model's context (max_position_embeddings) "
			  "unless allow_beyond_max_position_embeddings is true.");
	mpc_w_end(w);
}

void mpc_inference_plan_write(mpc_out *w, const mps_inference_request *rq, const mps_inference_plan *p)
{
	/* the job as planned: the request with its defaults resolved (mps_inference_defaults), run with the options
	 * its engine's defaults completed (mps_inference_opts_for) */
	const mp_inference_req *r = &p->job.req;
	const mp_inference_opts *op = &p->opts;
	const mp_inference_memory *mem = &p->mem;

	mpc_w_obj(w, NULL);
	mpc_model_write(w, "model", &p->model);
	mpc_w_obj(w, "request");
	mpc_w_lit(w, "weight_dtype", mp_dtype_name(r->weight_dtype));
	mpc_w_str(w, "weight_dtype_from", p->choice.weight_dtype_from ? p->choice.weight_dtype_from : "request");
	if (r->weight_dtype == MP_DTYPE_INT4)
		mpc_w_str(w, "int4_scheme", int4_names[op->formats.int4_scheme == MP_INT4_AWQ]);
	mpc_w_lit(w, "kv_cache_dtype", mp_dtype_name(r->kv_cache_dtype));
	mpc_w_str(w, "kv_cache_dtype_from", p->choice.kv_cache_dtype_from ? p->choice.kv_cache_dtype_from : "request");
	mpc_w_u64(w, "batch_size", r->batch_size);
	mpc_w_u64(w, "sequence_length", r->sequence_length);
	mpc_w_lit(w, "sequence_length_scope", scope_names[op->length_scope]);
	mpc_w_u64(w, "tensor_parallel_size", mem->tensor_parallel_size);
	mpc_w_lit(w, "tensor_parallel_size_from", op->tensor_parallel_size ? "request" : r->num_gpus ? "num_gpus" : "default");
	mpc_w_u64(w, "num_gpus", r->num_gpus ? r->num_gpus : mem->tensor_parallel_size);
	mpc_w_lit(w, "attention_implementation", attention_names[op->attention]);
	mpc_w_lit(w, "compute_dtype", mp_dtype_name(op->compute_dtype ? op->compute_dtype : MP_DTYPE_BF16));
	mpc_w_str(w, "compute_dtype_from", p->choice.compute_dtype_from ? p->choice.compute_dtype_from : "request");
	mpc_w_num(w, "gpu_memory_utilization", op->gpu_memory_utilization > 0 ? op->gpu_memory_utilization : 1.0);
	mpc_w_str(w, "gpu_memory_utilization_from", p->budget_from ? p->budget_from : "request");
	mpc_w_lit(w, "engine", mp_engine_name(rq->job.engine.engine));
	if (rq->job.engine.engine != MP_ENGINE_NONE) {
		const mp_engine_version *ev = rq->job.engine.version ? rq->job.engine.version
								     : mp_engine_version_find(rq->job.engine.engine, NULL);

		mpc_w_str(w, "engine_version", ev ? ev->name : "");
		mpc_w_str(w, "engine_version_from", !rq->job.engine.version      ? "default"
						    : rq->job.engine.version_from ? rq->job.engine.version_from
										  : "request");
	}
	mpc_w_bool(w, "chunked_prefill", p->prefill.chunked_prefill);
	mpc_w_u64_or_null(w, "max_num_batched_tokens", p->prefill.max_num_batched_tokens);
	mpc_w_str(w, "max_num_batched_tokens_source", op->attention == MP_ATTENTION_NONE ? "none"
						      : p->prefill.defaulted             ? "engine_default"
											 : "request");
	mpc_w_u64(w, "kv_block_size", p->mem.kv.block_size);
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
		mpc_w_obj(w, "fit");
		mpc_fit_members_write(w, &p->fit, &p->device, p->fit.min_gpus);
		mpc_w_end(w);
		performance_write(w, &p->perf);
	}
	if (p->have_engine && p->llama)
		mpc_llamacpp_block_write(w, "engine", p);
	else if (p->have_engine)
		mpc_engine_block_write(w, "engine", &p->job, p);
	if (p->job.include_tensors)
		mpc_tensors_write(w, "tensors", &p->tensors);
	mpc_warnings_write(w, &p->warnings);
	notes_write(w, p);
	mpc_w_end(w);
}

char *mpc_inference_plan_print(const mps_inference_request *rq, const mps_inference_plan *p, size_t *len)
{
	mpc_out w;

	mpc_out_init(&w);
	mpc_inference_plan_write(&w, rq, p);
	return mpc_out_finish(&w, len);
}

void mpc_warnings_write(mpc_out *w, const mps_warnings *warnings)
{
	char more[96];

	mpc_w_arr(w, "warnings");
	for (size_t i = 0; i < warnings->n && i < MPS_MAX_WARNINGS; i++)
		mpc_w_str(w, NULL, warnings->text[i]);
	if (mps_warnings_left_out(warnings, more, sizeof(more)))
		mpc_w_str(w, NULL, more);
	mpc_w_end(w);
}

const mpm_field *mpc_inference_field_table(size_t *n)
{
	*n = MPM_COUNT(inference_fields);
	return inference_fields;
}

const mpm_field *mpc_weight_formats_field_table(size_t *n)
{
	*n = MPM_COUNT(format_fields);
	return format_fields;
}

void mpc_inference_plan_member(mpc_out *w, const char *name, const mps_inference_request *rq,
			       const mps_inference_plan *p)
{
	mpc_out plan;
	size_t len = 0;
	char *text;

	mpc_out_init(&plan);
	mpc_inference_plan_write(&plan, rq, p);
	text = mpc_out_finish(&plan, &len);
	if (text == NULL)
		w->failed = true;
	else
		mpc_w_raw(w, name, text, len);
	free(text);
}
