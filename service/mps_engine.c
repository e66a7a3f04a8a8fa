/*
 * mps_engine.c: the serving engines around an inference plan. Resolves what a request leaves out the way the engine
 * it names would on the device (the prefill chunk, the block size, vLLM's utilisation), builds the launch
 * arguments that realise the plan with the figures the engine will print (planner/mp_engine.h). Fills structs;
 * formats no text (codec/ writes the command). The check of a pasted start-up log is mps_engine_check.c's.
 */
#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "service_int.h"

#define GIB 1073741824.0

/* The engine whose prefill default the plan took, for people. */
static const char *prefill_basis(const mps_prefill_choice *c)
{
	return c->basis == MP_ENGINE_VLLM ? "vLLM" : c->basis == MP_ENGINE_SGLANG ? "SGLang" : "TensorRT-LLM";
}

/* One sentence: the chunk and whose default it is. The long explanation (what the chunk changes, where the rule
 * is) is the answer's once, in its notes (mpc: the activations note), not repeated per plan or capacity row. */
void mps_warn_prefill(const mps_inference_plan *p, mps_warnings *w)
{
	const mps_prefill_choice *c = &p->prefill;
	char digits[24];
	const mp_engine_version *rel = p->job.engine.version ? p->job.engine.version
							     : mp_engine_version_find(c->basis, NULL);
	const char *parts[] = {
		"prefill: max_num_batched_tokens not given: forwards of ", mps_u64_text(c->max_num_batched_tokens, digits),
		" tokens, ", prefill_basis(c), rel ? " " : "", rel ? rel->release : "", "'s default ",
		p->have_device ? "on this device" : "with no device given", " (", c->device_class, "; chunked prefill ",
		c->basis == MP_ENGINE_TRTLLM ? "as max_num_tokens schedules it" : c->chunked_prefill ? "on" : "off", ")"};

	/* llama.cpp's and Ollama's forward is one ubatch: their engine block's context.n_ubatch says so */
	if (c->defaulted && c->basis != MP_ENGINE_LLAMACPP && c->basis != MP_ENGINE_OLLAMA)
		mps_warn_cat(w, parts, sizeof(parts) / sizeof(parts[0]));
}

void mps_warn_prefill_rows(const mps_prefill_choice *c, mps_warnings *w)
{
	if (!c->defaulted)
		return;
	mps_warn(w,
		 "prefill: max_num_batched_tokens not given: each row's prefill runs in forwards of %s's default for "
		 "its device (the row's max_num_batched_tokens; chunked prefill %s)",
		 prefill_basis(c), c->basis == MP_ENGINE_TRTLLM ? "as max_num_tokens schedules it"
				   : c->chunked_prefill          ? "on"
								 : "off");
}

/* The total memory an engine's rule reads: SGLang's nvidia-smi memory.total (NVML's figure, the profile's
 * nvml_memory_bytes when known); vLLM's and TensorRT-LLM's torch.cuda total (the CUDA total: the capacity). */
static uint64_t engine_total_bytes(mp_engine e, const mp_device *hw, uint64_t nvml_memory_bytes)
{
	if (hw == NULL)
		return 0;
	if (e == MP_ENGINE_SGLANG && nvml_memory_bytes)
		return nvml_memory_bytes;
	return mp_device_capacity_bytes(hw);
}

static const mp_engine_version *job_version(const mps_inference_job *j)
{
	return j->engine.version ? j->engine.version : mp_engine_version_find(j->engine.engine, NULL);
}

static uint64_t job_tp(const mps_inference_job *j)
{
	if (j->opts.tensor_parallel_size)
		return j->opts.tensor_parallel_size;
	return j->req.num_gpus ? j->req.num_gpus : 1;
}

const char *mps_budget_from(const mps_inference_job *j)
{
	if (j->engine.utilization_given)
		return "request";
	if (j->engine.engine == MP_ENGINE_SGLANG && j->engine.mem_fraction_static > 0)
		return "mem_fraction_static";
	return j->engine.engine == MP_ENGINE_VLLM || j->engine.engine == MP_ENGINE_SGLANG ? "engine_default" : "default";
}

void mps_warn_budget(const mps_inference_job *j, const mp_store_device *dev, double fraction, mps_warnings *w)
{
	mp_engine e = j->engine.engine;
	mp_engine_defaults d;
	uint64_t total = 0;
	unsigned hundredths;

	if (j->engine.utilization_given || e == MP_ENGINE_VLLM || e == MP_ENGINE_SGLANG)
		return; /* the request's, or the named engine's own share: said by request.gpu_memory_utilization_from */
	if (dev && dev->hw.host_memory) {
		mps_warn(w,
			 "budget: the fit takes the whole of host memory (gpu_memory_utilization 1); a CPU engine sizes "
			 "its KV cache by its own setting (vLLM's CPU backend VLLM_CPU_KVCACHE_SPACE, llama.cpp's -c): give "
			 "gpu_memory_utilization for the share the job may use");
		return;
	}
	if (e == MP_ENGINE_LLAMACPP || e == MP_ENGINE_OLLAMA) {
		mps_warn(w,
			 "budget: the fit takes the whole capacity (gpu_memory_utilization 1): %s places the layers and "
			 "their KV cache by the device's free memory less its own margin, which engine.placement applies; "
			 "give gpu_memory_utilization to hold the fit to a share",
			 e == MP_ENGINE_LLAMACPP ? "llama.cpp" : "Ollama");
		return;
	}
	if (fraction <= 0) { /* not known yet: the engine's table on dev */
		if (dev)
			total = e == MP_ENGINE_SGLANG && dev->nvml_memory_bytes ? dev->nvml_memory_bytes
										  : mp_device_capacity_bytes(&dev->hw);
		if (mp_engine_defaults_for(e == MP_ENGINE_NONE ? MP_ENGINE_VLLM : e, total, dev ? dev->name : NULL,
					   job_tp(j), &d, NULL) != MP_OK)
			return;
		fraction = d.memory_fraction;
	}
	/* in hundredths, without printf (every plan without an engine says this) */
	hundredths = (unsigned)(fraction * 100 + 0.5);
	if (e == MP_ENGINE_NONE) {
		char whole[24], frac[4] = {(char)('0' + hundredths % 100 / 10), (char)('0' + hundredths % 10), '\0'};
		const char *parts[] = {"budget: no engine named, so the fit takes the whole capacity (gpu_memory_utilization "
				       "1); vLLM would keep ",
				       mps_u64_text(hundredths / 100, whole), ".", frac,
				       " of it (its default gpu_memory_utilization): give engine, or gpu_memory_utilization"};

		mps_warn_cat(w, parts, sizeof(parts) / sizeof(parts[0]));
	} else
		mps_warn(w,
			 "budget: the fit takes the whole capacity (gpu_memory_utilization 1): %s sizes its KV pool by %s "
			 "%.3g instead, which engine.predicted applies; give gpu_memory_utilization to hold the fit to a share",
			 mp_engine_name(e), e == MP_ENGINE_SGLANG ? "mem_fraction_static" : "free_gpu_memory_fraction",
			 e == MP_ENGINE_SGLANG && j->engine.mem_fraction_static > 0      ? j->engine.mem_fraction_static
			 : e == MP_ENGINE_TRTLLM && j->engine.free_gpu_memory_fraction > 0 ? j->engine.free_gpu_memory_fraction
											   : fraction);
}

mp_status mps_inference_opts_for(const mps_inference_job *j, const mp_store_device *dev, mp_inference_opts *out,
				 mps_prefill_choice *choice, mp_error *err)
{
	return mps_inference_opts_on(j, dev ? &dev->hw : NULL, dev ? dev->name : NULL, dev ? dev->nvml_memory_bytes : 0,
				     out, choice, err);
}

mp_status mps_inference_opts_on(const mps_inference_job *j, const mp_device *hw, const char *name,
				uint64_t nvml_memory_bytes, mp_inference_opts *out, mps_prefill_choice *choice,
				mp_error *err)
{
	mps_prefill_choice c;
	mp_engine e = j->engine.engine;
	mp_engine_defaults d;
	uint64_t total_tokens, chunk;
	mp_status st;

	memset(&c, 0, sizeof(c));
	*out = j->opts;
	{
		mp_engine_launch l = {.chunk = j->opts.max_num_batched_tokens, .max_running_requests = j->req.batch_size};

		if (e == MP_ENGINE_LLAMACPP || e == MP_ENGINE_OLLAMA)
			st = mp_engine_defaults_for(e, engine_total_bytes(e, hw, nvml_memory_bytes), name, job_tp(j), &d,
						    err);
		else
			st = mp_engine_defaults_at(job_version(j), engine_total_bytes(e, hw, nvml_memory_bytes), name,
						   job_tp(j), &l, &d, err);
	}
	if (st != MP_OK)
		return st;
	c.basis = e == MP_ENGINE_NONE ? MP_ENGINE_VLLM : e;
	c.chunked_prefill = j->engine.chunked_prefill >= 0;
	c.engine_default = d.max_num_batched_tokens;
	c.device_class = d.device_class;
	c.memory_fraction = d.memory_fraction;
	if (e != MP_ENGINE_NONE && !j->engine.block_size_given)
		out->kv_block_size = d.block_size;
	if (e == MP_ENGINE_VLLM && !j->engine.utilization_given)
		out->gpu_memory_utilization = d.memory_fraction;
	/* SGLang: its mem_fraction_static (the request's, else its default for the device and TP) holds the fit: the
	 * weights and KV pool within that share, as its pool is sized (the fit counts the activations inside too, which
	 * SGLang keeps in the rest: a little stricter, never a verdict the engine cannot start) */
	if (e == MP_ENGINE_SGLANG && !j->engine.utilization_given)
		out->gpu_memory_utilization = j->engine.mem_fraction_static > 0 ? j->engine.mem_fraction_static
										 : d.memory_fraction;
	if (out->attention == MP_ATTENTION_NONE) {
		c.max_num_batched_tokens = 0;
	} else if (j->opts.max_num_batched_tokens) {
		c.max_num_batched_tokens = j->opts.max_num_batched_tokens;
	} else {
		/* vLLM _set_default_max_num_seqs_and_batched_tokens_args with max_num_seqs = batch_size and
		 * max_model_len = sequence_length: without chunked prefill at least max_model_len, then at most
		 * max_num_seqs x max_model_len. SGLang without chunking prefills up to max_prefill_tokens (16384)
		 * but a longer prompt whole; TensorRT-LLM's forward holds at most max_num_tokens. */
		chunk = d.max_num_batched_tokens;
		if (d.version && d.version->chunked_prefill_flag && j->engine.chunked_prefill <= 0)
			c.chunked_prefill = false; /* vLLM V0: chunked prefill off unless asked for */
		if (!c.chunked_prefill) {
			uint64_t floor_tokens = c.basis == MP_ENGINE_SGLANG ? 16384 : chunk;

			chunk = j->req.sequence_length > floor_tokens ? j->req.sequence_length : floor_tokens;
		}
		/* SGLang: chunked_prefill_size must be a multiple of the page size (check_server_args) */
		if (d.version && d.version->chunk_divisible_by_page && c.chunked_prefill && out->kv_block_size > 1 &&
		    chunk >= out->kv_block_size)
			chunk = chunk / out->kv_block_size * out->kv_block_size;
		if (j->opts.length_scope == MP_LENGTH_SHARED)
			total_tokens = j->req.sequence_length;
		else if (!mp_mul_u64(j->req.batch_size, j->req.sequence_length, &total_tokens))
			total_tokens = UINT64_MAX;
		c.max_num_batched_tokens = chunk < total_tokens ? chunk : total_tokens;
		c.defaulted = true;
		out->max_num_batched_tokens = c.max_num_batched_tokens;
	}
	if (choice)
		*choice = c;
	return MP_OK;
}

/* ----- the launch arguments ------------------------------------------------------------------------------ */

/* The Hugging Face repositories the model presets were copied from (db/presets/models/SOURCES.md). */
static const struct {
	const char *id, *repo;
} preset_repos[] = {
	{"falcon-7b", "tiiuae/falcon-7b"},
	{"gemma-2b", "google/gemma-2b"},
	{"gemma-7b", "google/gemma-7b"},
	{"gpt2", "openai-community/gpt2"},
	{"llama-2-7b", "meta-llama/Llama-2-7b-hf"},
	{"llama-3-8b", "meta-llama/Meta-Llama-3-8B"},
	{"llama-3.1-405b", "meta-llama/Llama-3.1-405B"},
	{"llama-3.1-70b", "meta-llama/Llama-3.1-70B"},
	{"llama-3.1-8b", "meta-llama/Llama-3.1-8B"},
	{"llama-3.2-1b", "meta-llama/Llama-3.2-1B"},
	{"llama-3.2-3b", "meta-llama/Llama-3.2-3B"},
	{"mistral-7b-v0.1", "mistralai/Mistral-7B-v0.1"},
	{"mixtral-8x7b", "mistralai/Mixtral-8x7B-v0.1"},
	{"phi-3-mini-4k", "microsoft/Phi-3-mini-4k-instruct"},
	{"qwen2.5-0.5b", "Qwen/Qwen2.5-0.5B"},
	{"qwen2.5-14b", "Qwen/Qwen2.5-14B"},
	{"qwen2.5-32b", "Qwen/Qwen2.5-32B"},
	{"qwen2.5-3b", "Qwen/Qwen2.5-3B"},
	{"qwen2.5-72b-instruct", "Qwen/Qwen2.5-72B-Instruct"},
	{"qwen2.5-7b", "Qwen/Qwen2.5-7B"},
};

static void add_arg(mps_engine_block *b, const char *flag, const char *source, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void add_arg(mps_engine_block *b, const char *flag, const char *source, const char *fmt, ...)
{
	mps_engine_arg *a;
	va_list ap;

	assert(b->nargs < MPS_ENGINE_MAX_ARGS); /* an invariant: no engine's launch takes that many arguments */
	if (b->nargs == MPS_ENGINE_MAX_ARGS)
		return;
	a = &b->args[b->nargs++];
	a->flag = flag;
	a->source = source;
	va_start(ap, fmt);
	vsnprintf(a->value, sizeof(a->value), fmt, ap);
	va_end(ap);
}

/* A fraction as the engines' argument parsers take it: up to 4 decimals, no trailing zeros beyond 2. */
static void fraction_text(double f, char *buf, size_t len)
{
	if (fabs(f * 10000 - round(f * 10000)) > 1e-6) {
		/* a rule's unrounded result (SGLang's multimodal adjustment): the digits that keep it exact */
		snprintf(buf, len, "%.10g", f);
		return;
	}
	snprintf(buf, len, "%.4f", f);
	for (size_t n = strlen(buf); n > 0 && buf[n - 1] == '0' && n > 4; n--)
		buf[n - 1] = '\0';
}

static const char *torch_dtype(mp_dtype dt)
{
	return dt == MP_DTYPE_FP16 ? "float16" : dt == MP_DTYPE_FP32 ? "float32" : "bfloat16";
}

static bool is_gguf(mp_dtype dt)
{
	return dt == MP_DTYPE_Q8_0 || dt == MP_DTYPE_Q4_0 || dt == MP_DTYPE_Q4_K || dt == MP_DTYPE_Q5_K ||
	       dt == MP_DTYPE_Q6_K;
}

/*
 * How the engine realises the plan's weight format: the --quantization value (NULL: the release cannot; "" for
 * float weights), whether the weights come from a quantised checkpoint or the flag quantises the base weights
 * while loading, and (for a refusal) why. Each release's list is its own (vLLM 0.33 QUANTIZATION_METHODS has no
 * bitsandbytes or gguf; SGLang 0.5.23 runs GPTQ as gptq_marlin on CUDA; TensorRT-LLM reads quantised ModelOpt
 * checkpoints and has no flag).
 */
typedef struct quant_choice {
	const char *method;	/* NULL: not expressible in this release */
	const char *how;	/* "checkpoint", "on_load", "" */
	const char *label;	/* the checkpoint kind for a placeholder: "AWQ", "GPTQ", "FP8", ... */
	const char *why;	/* for a refusal */
} quant_choice;

static quant_choice quantization_of(const mps_inference_job *j, const mp_engine_version *v, const mp_inference_opts *o)
{
	const mp_inference_req *r = &j->req;
	mp_engine e = v->engine;

	switch (r->weight_dtype) {
	case MP_DTYPE_FP8_E5M2:
		/* vLLM quantization/fp8.py: "Only support float8_e4m3fn data type"; SGLang's fp8 and ModelOpt's FP8
		 * checkpoints are e4m3 as well */
		return (quant_choice){NULL, "", "",
				      "its fp8 weights are float8_e4m3fn (vLLM quantization/fp8.py, SGLang fp8.py, "
				      "ModelOpt FP8 checkpoints), never e5m2: give weight_dtype fp8_e4m3, the same 1 byte a "
				      "weight"};
	case MP_DTYPE_FP8_E4M3:
		if (e == MP_ENGINE_TRTLLM)
			return (quant_choice){"", "checkpoint", "FP8", NULL};
		/* Fp8Config on an unquantised checkpoint: dynamic per-tensor fp8 while loading */
		return (quant_choice){"fp8", "on_load", "FP8", NULL};
	case MP_DTYPE_NVFP4:
		/* a ModelOpt NVFP4 checkpoint (quantization_config quant_method "modelopt", quant_algo "NVFP4"):
		 * vLLM 0.11 and 0.33 and SGLang 0.5.23 run it as modelopt_fp4 (ModelOptNvFp4Config / ModelOptFp4Config),
		 * TensorRT-LLM reads it from the checkpoint's hf_quant_config.json */
		if (!v->has_nvfp4)
			return (quant_choice){NULL, "", "", "its quantization methods have no modelopt_fp4 (NVFP4)"};
		return (quant_choice){e == MP_ENGINE_TRTLLM ? "" : "modelopt_fp4", "checkpoint", "NVFP4", NULL};
	case MP_DTYPE_MXFP4:
		/* vLLM mxfp4.py Mxfp4Config.get_quant_method: only the MoE experts (gpt-oss); 0.11 raises "Mxfp4 linear
		 * layer is not implemented", 0.33 loads linear layers unquantised; SGLang and TensorRT-LLM likewise */
		return (quant_choice){NULL, "", "",
				      "its mxfp4 method runs only the MoE experts of a checkpoint in MXFP4 (gpt-oss), not "
				      "linear layers: give weight_dtype nvfp4, fp8_e4m3 or int4, or bf16 for a gpt-oss "
				      "checkpoint (its MXFP4 experts are read from its config)"};
	case MP_DTYPE_INT4:
		if (o->formats.int4_scheme == MP_INT4_AWQ)
			return (quant_choice){v->awq_name, "checkpoint", "AWQ", NULL};
		return (quant_choice){v->gptq_name, "checkpoint", "GPTQ", NULL};
	case MP_DTYPE_INT8:
		if (e == MP_ENGINE_TRTLLM)
			return (quant_choice){"", "checkpoint", "INT8 weight-only", NULL};
		if (e == MP_ENGINE_SGLANG)
			return (quant_choice){"w8a8_int8", "checkpoint", "W8A8-INT8", NULL};
		if (!v->has_bitsandbytes)
			/* 0.33's online shorthand: int8 per-channel weights quantised while loading */
			return (quant_choice){"int8_per_channel_weight_only", "on_load", "INT8", NULL};
		return (quant_choice){"bitsandbytes", "checkpoint", "bitsandbytes 8-bit", NULL};
	case MP_DTYPE_NF4:
		if (e == MP_ENGINE_TRTLLM)
			return (quant_choice){NULL, "", "", "TensorRT-LLM loads float, fp8, int8 and int4 (AWQ/GPTQ) "
							    "checkpoints, not nf4"};
		if (!v->has_bitsandbytes)
			return (quant_choice){NULL, "", "", "its quantization methods have no bitsandbytes (nf4): "
							    "\"Unknown quantization method\" at the model-config step"};
		/* bitsandbytes quantises to 4-bit nf4 while loading */
		return (quant_choice){"bitsandbytes", "on_load", "NF4", NULL};
	default:
		if (is_gguf(r->weight_dtype)) {
			if (e == MP_ENGINE_TRTLLM)
				return (quant_choice){NULL, "", "", "TensorRT-LLM does not read GGUF files"};
			if (!v->has_gguf)
				return (quant_choice){NULL, "", "", "its quantization methods have no gguf"};
			return (quant_choice){"gguf", "checkpoint", "GGUF", NULL};
		}
		return (quant_choice){"", "", "", NULL};
	}
}

/* The engine's name for the KV dtype, or an error naming kv_cache_dtype with what the engine takes. */
static mp_status kv_arg(const mp_engine_version *v, mp_dtype kv, mp_dtype compute, const char *base, const char **out,
			mp_error *err)
{
	mp_engine e = v->engine;

	*out = NULL;
	if (kv == compute)
		*out = "auto";
	else if (kv == MP_DTYPE_FP8_E4M3)
		*out = v->fp8_kv_name;
	else if (kv == MP_DTYPE_FP8_E5M2 && e != MP_ENGINE_TRTLLM)
		*out = "fp8_e5m2";
	if (*out)
		return MP_OK;
	return mp_fail_at(err, MP_EINVAL, base, "/kv_cache_dtype",
			  "%s stores the KV cache in the compute dtype (%s) or in %s, not %s", mp_engine_name(e),
			  mp_dtype_name(compute), e == MP_ENGINE_TRTLLM ? "fp8 (e4m3)" : "fp8_e4m3 or fp8_e5m2",
			  mp_dtype_name(kv));
}

/* The served model: the request's, else the preset's repository; a quantised checkpoint the plan needs and
 * memplan cannot name is a placeholder the warning asks to replace. */
static void served_model(const mps_inference_job *j, const mps_model *m, const quant_choice *q, mps_engine_block *b,
			 mps_warnings *w)
{
	const char *repo = NULL;

	b->model_arg_known = true;
	if (j->engine.served_model[0]) {
		snprintf(b->model_arg, sizeof(b->model_arg), "%s", j->engine.served_model);
		return;
	}
	for (size_t i = 0; j->model.kind == MPS_MODEL_STORED && i < sizeof(preset_repos) / sizeof(preset_repos[0]); i++)
		if (strcmp(m->id, preset_repos[i].id) == 0)
			repo = preset_repos[i].repo;
	if (repo && strcmp(q->how, "checkpoint") != 0) {
		snprintf(b->model_arg, sizeof(b->model_arg), "%s", repo);
		return;
	}
	b->model_arg_known = false;
	if (strcmp(q->how, "checkpoint") == 0) {
		snprintf(b->model_arg, sizeof(b->model_arg), "<%s checkpoint of %s>", q->label,
			 repo ? repo : m->id[0] ? m->id : "the model");
		mps_warn(w,
			 "engine: the plan's weights are %s, which %s loads from a quantised checkpoint, not from the base "
			 "repository: the command's model argument is a placeholder; give served_model (the quantised "
			 "repository or path) to print the command to run",
			 q->label, mp_engine_name(j->engine.engine));
		return;
	}
	snprintf(b->model_arg, sizeof(b->model_arg), "%s", m->id[0] ? m->id : "MODEL");
}

/* A block size the release's parsers and attention backends take. */
static bool block_size_ok(const mp_engine_version *v, uint64_t bs)
{
	if (v->block_size_mask == 0)
		return bs >= 1;
	return bs && (bs & (bs - 1)) == 0 && (v->block_size_mask >> __builtin_ctzll(bs) & 1);
}

static void block_size_names(const mp_engine_version *v, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int n = 0; n < 63; n++)
		if (v->block_size_mask >> n & 1) {
			int k = snprintf(buf + used, len - used, "%s%llu", used ? ", " : "", 1ULL << n);

			if (k < 0 || (size_t)k >= len - used)
				return;
			used += (size_t)k;
		}
}

/* The --dtype a release runs the weights' format in: float16 where its AWQ or GPTQ kernels take nothing else
 * (a warning says so; a compute_dtype the request gave otherwise is a 422). */
static mp_status int4_dtype(const mps_inference_job *j, mps_inference_plan *p, const mp_engine_version *v,
			    mp_dtype *compute, mp_error *err)
{
	bool awq = j->req.weight_dtype == MP_DTYPE_INT4 && p->opts.formats.int4_scheme == MP_INT4_AWQ;
	bool gptq = j->req.weight_dtype == MP_DTYPE_INT4 && p->opts.formats.int4_scheme != MP_INT4_AWQ;

	if (!((awq && v->awq_needs_float16) || (gptq && v->gptq_needs_float16)) || *compute == MP_DTYPE_FP16)
		return MP_OK;
	if (j->compute_dtype_given)
		return mp_fail_at(err, MP_EINVAL, j->pointer, "/compute_dtype",
				  "%s %s runs %s weights in float16 only (the kernels' supported activation dtypes): "
				  "give compute_dtype fp16 or leave it out",
				  mp_engine_name(v->engine), v->release, awq ? "AWQ" : "GPTQ");
	*compute = MP_DTYPE_FP16;
	mps_warn(&p->warnings,
		 "engine: %s %s runs %s weights in float16 only, so the command passes --dtype float16 (the plan's "
		 "activations are the same size)",
		 mp_engine_name(v->engine), v->release, awq ? "AWQ" : "GPTQ");
	return MP_OK;
}

static mp_status vllm_args(const mps_inference_job *j, mps_inference_plan *p, const char *kv, const quant_choice *q,
			   uint64_t block_size, mps_engine_block *b, mp_error *err)
{
	const mp_inference_opts *o = &p->opts;
	const mp_engine_version *v = b->version;
	uint64_t tp = p->mem.tensor_parallel_size;
	mp_dtype compute = o->compute_dtype ? o->compute_dtype : MP_DTYPE_BF16;
	char f[32];
	mp_status st = int4_dtype(j, p, v, &compute, err);

	if (st != MP_OK)
		return st;

	b->program = "vllm serve";
	add_arg(b, "--tensor-parallel-size", "plan", "%llu", (unsigned long long)tp);
	if (b->replicas > 1)
		add_arg(b, "--data-parallel-size", "plan", "%llu", (unsigned long long)b->replicas);
	add_arg(b, "--max-model-len", "plan", "%llu", (unsigned long long)j->req.sequence_length);
	add_arg(b, "--max-num-seqs", "plan", "%llu", (unsigned long long)j->req.batch_size);
	if (o->attention != MP_ATTENTION_NONE)
		add_arg(b, "--max-num-batched-tokens", p->prefill.defaulted ? "default" : "request", "%llu",
			(unsigned long long)p->prefill.max_num_batched_tokens);
	fraction_text(o->gpu_memory_utilization, f, sizeof(f));
	add_arg(b, "--gpu-memory-utilization", j->engine.utilization_given ? "request" : "default", "%s", f);
	add_arg(b, "--kv-cache-dtype", j->kv_cache_dtype_auto ? "plan" : "request", "%s", kv);
	add_arg(b, "--block-size", j->engine.block_size_given ? "request" : "default", "%llu",
		(unsigned long long)block_size);
	add_arg(b, "--dtype", j->compute_dtype_given ? "request" : "plan", "%s", torch_dtype(compute));
	if (q->method[0])
		add_arg(b, "--quantization", j->weight_dtype_auto ? "plan" : "request", "%s", q->method);
	if (v->chunked_prefill_flag) {
		/* V0: a chunk below max_model_len needs chunked prefill asked for (SchedulerConfig._verify_args) */
		if (o->attention != MP_ATTENTION_NONE && p->prefill.max_num_batched_tokens < j->req.sequence_length)
			add_arg(b, "--enable-chunked-prefill", "plan", "%s", "");
	} else if (j->engine.chunked_prefill < 0) {
		add_arg(b, "--no-enable-chunked-prefill", "request", "%s", "");
	}
	if (j->engine.enforce_eager)
		add_arg(b, "--enforce-eager", "request", "%s", "");
	return MP_OK;
}

static mp_status sglang_args(const mps_inference_job *j, mps_inference_plan *p, const char *kv,
			     const quant_choice *q, double fraction, mps_engine_block *b, mp_error *err)
{
	const mp_inference_opts *o = &p->opts;
	const mp_engine_version *v = b->version;
	uint64_t tp = p->mem.tensor_parallel_size;
	mp_dtype compute = o->compute_dtype ? o->compute_dtype : MP_DTYPE_BF16;
	char f[32];
	mp_status st = int4_dtype(j, p, v, &compute, err);

	if (st != MP_OK)
		return st;
	b->program = "python3 -m sglang.launch_server";
	b->model_flag = "--model-path";
	add_arg(b, "--tp", "plan", "%llu", (unsigned long long)tp);
	if (b->replicas > 1)
		add_arg(b, "--dp", "plan", "%llu", (unsigned long long)b->replicas);
	add_arg(b, "--context-length", "plan", "%llu", (unsigned long long)j->req.sequence_length);
	fraction_text(fraction, f, sizeof(f));
	add_arg(b, "--mem-fraction-static", j->engine.mem_fraction_static > 0 ? "request" : "default", "%s", f);
	add_arg(b, "--max-running-requests", "plan", "%llu", (unsigned long long)j->req.batch_size);
	if (j->engine.chunked_prefill < 0)
		add_arg(b, "--chunked-prefill-size", "request", "-1");
	else if (o->attention != MP_ATTENTION_NONE) {
		if (v->chunk_divisible_by_page && p->mem.kv.block_size > 1 &&
		    p->prefill.max_num_batched_tokens % p->mem.kv.block_size)
			return mp_fail_at(err, MP_EINVAL, j->pointer, "/max_num_batched_tokens",
					  "SGLang needs chunked_prefill_size (max_num_batched_tokens, %llu) to be a "
					  "multiple of the page size (kv_block_size, %llu)",
					  (unsigned long long)p->prefill.max_num_batched_tokens,
					  (unsigned long long)p->mem.kv.block_size);
		add_arg(b, "--chunked-prefill-size", p->prefill.defaulted ? "default" : "request", "%llu",
			(unsigned long long)p->prefill.max_num_batched_tokens);
	}
	add_arg(b, "--kv-cache-dtype", j->kv_cache_dtype_auto ? "plan" : "request", "%s", kv);
	if (p->mem.kv.block_size > 1)
		add_arg(b, "--page-size", j->engine.block_size_given ? "request" : "default", "%llu",
			(unsigned long long)p->mem.kv.block_size);
	add_arg(b, "--dtype", j->compute_dtype_given ? "request" : "plan", "%s", torch_dtype(compute));
	if (q->method[0])
		add_arg(b, "--quantization", j->weight_dtype_auto ? "plan" : "request", "%s", q->method);
	if (strcmp(q->method, "bitsandbytes") == 0)
		add_arg(b, "--load-format", "request", "bitsandbytes");
	if (j->engine.enforce_eager)
		add_arg(b, "--disable-cuda-graph", "request", "%s", "");
	return MP_OK;
}

static mp_status trtllm_args(const mps_inference_job *j, const mps_inference_plan *p, const char *kv,
			     double fraction, mps_engine_block *b)
{
	const mp_inference_opts *o = &p->opts;
	char f[32];
	int n;

	b->program = "trtllm-serve";
	add_arg(b, "--backend", "default", "pytorch");
	add_arg(b, "--tp_size", "plan", "%llu", (unsigned long long)p->mem.tensor_parallel_size);
	add_arg(b, "--max_batch_size", "plan", "%llu", (unsigned long long)j->req.batch_size);
	if (o->attention != MP_ATTENTION_NONE)
		add_arg(b, "--max_num_tokens", p->prefill.defaulted ? "default" : "request", "%llu",
			(unsigned long long)p->prefill.max_num_batched_tokens);
	add_arg(b, "--max_seq_len", "plan", "%llu", (unsigned long long)j->req.sequence_length);
	/* a prompt longer than max_num_tokens is refused unless chunked prefill is on */
	if (o->attention != MP_ATTENTION_NONE && j->engine.chunked_prefill >= 0 &&
	    p->prefill.max_num_batched_tokens < j->req.sequence_length)
		add_arg(b, "--enable_chunked_prefill", "plan", "%s", "");
	fraction_text(fraction, f, sizeof(f));
	if (strcmp(kv, "auto") == 0 && p->mem.kv.block_size == 32) {
		add_arg(b, "--kv_cache_free_gpu_memory_fraction",
			j->engine.free_gpu_memory_fraction > 0 ? "request" : "default", "%s", f);
		return MP_OK;
	}
	/* KvCacheConfig has no command-line flag of its own, and the file's kv_cache_config replaces the whole
	 * KvCacheConfig the flags built (serve.py update_llm_args_with_extra_dict): every KV setting goes in it,
	 * free_gpu_memory_fraction too */
	n = snprintf(b->extra_options_yaml, sizeof(b->extra_options_yaml), "kv_cache_config:\n  free_gpu_memory_fraction: %s\n",
		     f);
	if (strcmp(kv, "auto") != 0)
		n += snprintf(b->extra_options_yaml + n, sizeof(b->extra_options_yaml) - (size_t)n, "  dtype: %s\n", kv);
	if (p->mem.kv.block_size != 32)
		snprintf(b->extra_options_yaml + n, sizeof(b->extra_options_yaml) - (size_t)n, "  tokens_per_block: %llu\n",
			 (unsigned long long)p->mem.kv.block_size);
	snprintf(b->yaml_file, sizeof(b->yaml_file), "extra_llm_api_options.yaml");
	add_arg(b, "--extra_llm_api_options", "plan", "%s", b->yaml_file);
	return MP_OK;
}

/* The generation a device name says, for the MLA backend vLLM picks: sm100 for the Blackwell data-centre parts. */
static bool device_is_sm100(const char *name)
{
	return name && (strstr(name, "B200") || strstr(name, "B100") || strstr(name, "B300") || strstr(name, "GB200"));
}

static bool device_is_sm90(const char *name)
{
	return name && (strstr(name, "H100") || strstr(name, "H200") || strstr(name, "H800") || strstr(name, "H20") ||
			strstr(name, "h100") || strstr(name, "h200"));
}

/* The models whose vLLM V0 forward planner/engine.c models (v0_profile): the decoders of models/llama.py (llama,
 * mistral) and models/qwen2.py, dense, with a gated MLP and grouped-query attention, text only. */
static bool vllm_v0_dense(const mps_model *mi)
{
	const mp_model *m = &mi->arch;

	return mi->architecture_known && m->ffn_kind == MP_FFN_GATED && m->num_experts == 0 &&
	       m->attn_kind == MP_ATTN_GQA && m->vision.hidden == 0 && !m->attn_per_layer &&
	       (strcmp(m->model_type, "llama") == 0 || strcmp(m->model_type, "mistral") == 0 ||
		strcmp(m->model_type, "qwen2") == 0);
}

/* Whether model_type t is a word of the space-separated list (NULL: none). */
static bool type_listed(const char *list, const char *t)
{
	size_t n = strlen(t);

	for (const char *s = list; s && *s;) {
		const char *end = strchr(s, ' ');
		size_t len = end ? (size_t)(end - s) : strlen(s);

		if (len == n && strncmp(s, t, n) == 0)
			return true;
		s = end ? end + 1 : s + len;
	}
	return false;
}

/* The engine block of plan p (computed with the options of mps_inference_opts_for). */
static mp_status engine_block(const mps_inference_job *j, mps_inference_plan *p, mp_error *err)
{
	mps_engine_block *b = &p->engine;
	mp_engine e = j->engine.engine;
	const mp_engine_version *v = job_version(j);
	const mp_inference_opts *o = &p->opts;
	mp_dtype compute = o->compute_dtype ? o->compute_dtype : MP_DTYPE_BF16;
	uint64_t gpus = j->req.num_gpus ? j->req.num_gpus : p->mem.tensor_parallel_size, block_size;
	bool mla = p->model.architecture_known && p->model.arch.attn_kind == MP_ATTN_MLA &&
		   p->opts.mla_cache == MP_MLA_LATENT;
	const char *kv;
	quant_choice q;
	mp_engine_launch launch = {0};
	double fraction;
	bool text_only;
	mp_status st;

	memset(b, 0, sizeof(*b));
	b->engine = e;
	b->version = v;
	b->version_from = !j->engine.version ? "default" : j->engine.version_from ? j->engine.version_from : "request";
	b->replicas = p->mem.tensor_parallel_size ? gpus / p->mem.tensor_parallel_size : 1;
	if (b->replicas == 0)
		b->replicas = 1;
	if (o->length_scope == MP_LENGTH_SHARED)
		return mp_fail_at(err, MP_EINVAL, j->pointer, "/sequence_length_scope",
				  "%s gives every sequence its own max_model_len: sequence_length_scope shared is "
				  "llama.cpp's, not an engine's",
				  mp_engine_name(e));
	q = quantization_of(j, v, o);
	if (q.method == NULL)
		return mp_fail_at(err, MP_EINVAL, j->pointer, "/weight_dtype", "%s %s cannot load %s weights: %s",
				  mp_engine_name(e), v->release, mp_dtype_name(j->req.weight_dtype), q.why);
	b->quantization = q.method;
	b->quantization_how = q.how;
	if (q.method[0] == '\0' && p->mem.weights.cls[MP_TC_EXPERTS].format == MP_DTYPE_MXFP4 &&
	    e == MP_ENGINE_VLLM) {
		/* the checkpoint's MXFP4 experts (gpt-oss): vLLM resolves its config's quant_method itself, so the
		 * command passes nothing; the block names what it resolves to */
		if (v->mxfp4_experts_name == NULL)
			return mp_fail_at(err, MP_EINVAL, j->pointer, "/engine_version",
					  "vLLM %s cannot load MXFP4 experts (gpt-oss came in vLLM 0.10.1): give "
					  "engine_version 0.11 or later",
					  v->release);
		b->quantization = v->mxfp4_experts_name;
		b->quantization_how = "checkpoint";
	}
	launch.chunk = j->engine.chunked_prefill < 0 ? 0 : p->prefill.max_num_batched_tokens;
	launch.max_running_requests = j->req.batch_size;
	launch.mla = mla;
	text_only = e == MP_ENGINE_SGLANG && p->model.architecture_known && p->model.arch.vision.hidden &&
		    type_listed(v->multimodal_off_types, p->model.arch.model_type);
	if (text_only)
		mps_warn(&p->warnings,
			 "engine: SGLang %s serves %s text-only unless --enable-multimodal is given (model_config.py "
			 "mm_disabled_models): no image memory is reserved in mem_fraction_static%s",
			 v->release, p->model.arch.model_type,
			 strcmp(p->model.arch.model_type, "llama4") == 0
				 ? ", and the vision model is not built, so its weights are not loaded"
				 : "");
	if (p->model.architecture_known && p->model.arch.vision.hidden && !text_only) {
		/* SGLang reads vision_config.num_hidden_layers, 24 when the config calls it depth (Qwen's towers) */
		launch.vit_layers = p->model.arch.vision.projector == MP_PROJECTOR_QWEN_MERGER ? 24
											      : p->model.arch.vision.layers;
		launch.vit_hidden = p->model.arch.vision.hidden;
	}
	st = kv_arg(v, j->req.kv_cache_dtype, compute, j->pointer, &kv, err);
	if (st == MP_OK)
		st = mp_engine_defaults_at(v,
					   p->have_device ? (e == MP_ENGINE_SGLANG && p->device.nvml_memory_bytes
								     ? p->device.nvml_memory_bytes
								     : p->fit.capacity_bytes)
							  : 0,
					   p->have_device ? p->device.name : NULL, p->mem.tensor_parallel_size, &launch,
					   &b->defaults, err);
	if (st != MP_OK)
		return st;
	/* the block size the release's attention backend takes: vLLM's MLA backends fix their own */
	block_size = p->mem.kv.block_size;
	if (e == MP_ENGINE_VLLM && mla) {
		bool sm100 = device_is_sm100(p->have_device ? p->device.name : NULL);
		uint64_t forced = sm100 ? v->mla_block_size_sm100 : v->mla_block_size;

		if (!sm100 && j->req.kv_cache_dtype == MP_DTYPE_FP8_E4M3 && v->mla_block_size_fp8)
			forced = v->mla_block_size_fp8;
		if (j->req.kv_cache_dtype == MP_DTYPE_FP8_E5M2 && v->mla_no_fp8_e5m2)
			return mp_fail_at(err, MP_EINVAL, j->pointer, "/kv_cache_dtype",
					  "vLLM %s has no MLA attention backend for an fp8_e5m2 KV cache (their "
					  "supported_kv_cache_dtypes list fp8_e4m3 only): give kv_cache_dtype fp8_e4m3 or "
					  "the compute dtype",
					  v->release);
		if (forced == 0)
			return mp_fail_at(err, MP_EINVAL, j->pointer, "/mla_kv_cache",
					  "vLLM %s has no MLA attention backend: it caches %s's keys and values "
					  "expanded; give mla_kv_cache expanded, or engine_version 0.11 or later",
					  v->release, p->model.arch.model_type);
		if (j->engine.block_size_given && block_size != forced)
			return mp_fail_at(err, MP_EINVAL, j->pointer, "/kv_block_size",
					  "vLLM %s's MLA attention backend on this device takes blocks of %llu tokens, "
					  "not %llu: leave kv_block_size out",
					  v->release, (unsigned long long)forced, (unsigned long long)block_size);
		block_size = forced;
	}
	if (e == MP_ENGINE_VLLM && !block_size_ok(v, block_size)) {
		char names[96];

		block_size_names(v, names, sizeof(names));
		return mp_fail_at(err, MP_EINVAL, j->pointer, "/kv_block_size",
				  "vLLM %s takes a block size of %s tokens (its parser and attention backends), not %llu",
				  v->release, names, (unsigned long long)block_size);
	}
	fraction = e == MP_ENGINE_VLLM     ? o->gpu_memory_utilization
		   : e == MP_ENGINE_SGLANG ? (j->engine.mem_fraction_static > 0 ? j->engine.mem_fraction_static
										: b->defaults.memory_fraction)
					   : (j->engine.free_gpu_memory_fraction > 0 ? j->engine.free_gpu_memory_fraction
										    : b->defaults.memory_fraction);
	served_model(j, &p->model, &q, b, &p->warnings);
	b->source = v->source;
	if (e == MP_ENGINE_VLLM)
		st = vllm_args(j, p, kv, &q, block_size, b, err);
	else if (e == MP_ENGINE_SGLANG)
		st = sglang_args(j, p, kv, &q, fraction, b, err);
	else
		st = trtllm_args(j, p, kv, fraction, b);
	if (st != MP_OK)
		return st;
	if (b->replicas > 1)
		mps_warn(&p->warnings,
			 "engine: batch_size %llu is per replica: the plan's memory is one replica's GPUs (TP %llu), and the "
			 "%llu data-parallel replicas hold %llu sequences in all",
			 (unsigned long long)j->req.batch_size, (unsigned long long)p->mem.tensor_parallel_size,
			 (unsigned long long)b->replicas, (unsigned long long)(j->req.batch_size * b->replicas));
	if (e == MP_ENGINE_TRTLLM && b->replicas > 1)
		mps_warn(&p->warnings,
			 "engine: trtllm-serve serves one tensor-parallel group per process: the plan's %llu GPUs are "
			 "%llu replicas of TP %llu; start the command once per group of %llu GPUs (CUDA_VISIBLE_DEVICES) "
			 "behind a router",
			 (unsigned long long)gpus, (unsigned long long)b->replicas,
			 (unsigned long long)p->mem.tensor_parallel_size, (unsigned long long)p->mem.tensor_parallel_size);
	if (strcmp(q.how, "on_load") == 0)
		mps_warn(&p->warnings,
			 "engine: --quantization %s quantises the base weights to %s while loading (no quantised "
			 "checkpoint needed); the load peaks at one layer's unquantised weights",
			 q.method, mp_dtype_name(j->req.weight_dtype));
	if (!p->have_device)
		return MP_OK;

	/* what the engine will print: the plan's bytes through the engine's arithmetic */
	{
		mp_engine_inputs *in = &b->inputs;

		in->engine = e;
		in->version = v;
		in->total_memory_bytes = p->fit.capacity_bytes;
		in->context_bytes = p->mem.overhead_bytes;
		if (v->context_bytes && j->req.cuda_context_bytes == 0 && p->device.hw.cuda_context_bytes == 0)
			in->context_bytes = v->context_bytes; /* the release's own count, where nothing measured it */
		in->memory_fraction = fraction;
		in->block_size = block_size;
		in->max_model_len = j->req.sequence_length;
		in->max_num_seqs = j->req.batch_size;
		in->max_num_batched_tokens = p->prefill.max_num_batched_tokens;
		in->activation_bytes = p->mem.activations_bytes;
		in->kv_row_bytes = p->model.arch.num_layers ? p->mem.kv.bytes_per_token / p->model.arch.num_layers : 0;
		if (p->model.arch.attn_per_layer && p->mem.kv.full_layers + p->mem.kv.window_layers)
			/* per-layer attention (Gemma 4, Gemma 3n): the row of a layer with a cache of its own (the KV-shared
			 * layers have none; widths that differ by layer are averaged, and the warning says so) */
			in->kv_row_bytes = p->mem.kv.bytes_per_token / (p->mem.kv.full_layers + p->mem.kv.window_layers);
		in->full_layers = p->mem.kv.full_layers;
		in->window_layers = p->mem.kv.window_layers;
		in->sliding_window = p->model.arch.sliding_window;
		if (e == MP_ENGINE_VLLM && v->chunked_local_unified && p->model.arch.window_chunked &&
		    in->window_layers) {
			/* the release serves chunked local attention with the hybrid KV cache manager off: the
			 * chunked layers' specs become full attention (unify_hybrid_kv_cache_specs), one group */
			in->full_layers += in->window_layers;
			in->window_layers = 0;
			in->sliding_window = 0;
			mps_warn(&p->warnings,
				 "engine: vLLM %s turns its hybrid KV cache manager off for chunked local attention "
				 "(a latency regression otherwise, config/vllm.py), so the %llu chunked layers cache the "
				 "whole context like the full ones: engine.predicted counts that; with "
				 "VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1 they keep one chunk of %llu tokens, "
				 "as the plan's kv_cache_bytes does",
				 v->release, (unsigned long long)p->mem.kv.window_layers,
				 (unsigned long long)p->model.arch.sliding_window);
		}
		in->batch_size = j->req.batch_size;
		in->tp = p->mem.tensor_parallel_size;
		in->hidden_size = p->model.arch.hidden_size;
		in->vocab_size = p->model.arch.vocab_size;
		in->compute_bytes = mp_dtype_layout_of(compute).block_bytes;
		in->cuda_graphs = !j->engine.enforce_eager;
		in->custom_allreduce = true;
		if (v->budget == MP_BUDGET_VLLM_V0 && vllm_v0_dense(&p->model)) {
			const mp_model *m = &p->model.arch;

			in->ffn_size = m->intermediate_size;
			in->q_width = m->num_heads * m->head_dim;
			/* QKVParallelLinear replicates the KV heads when tp exceeds them: one head a rank */
			in->kv_width = (m->num_kv_heads > in->tp ? m->num_kv_heads : in->tp) * m->head_dim;
			in->gate_up_kept = strcmp(m->model_type, "qwen2") == 0;
			/* torch 2.5 (vLLM 0.6.4-0.7's pin) CublasHandlePool.cpp getChosenWorkspaceSize: ":4096:8" on sm90,
			 * ":4096:2:16:8" (2 x 4 MiB + 8 x 16 KiB) elsewhere */
			in->cublas_workspace_bytes = device_is_sm90(p->have_device ? p->device.name : NULL)
							     ? 8 * 4096 * UINT64_C(1024)
							     : 2 * 4096 * UINT64_C(1024) + 8 * 16 * UINT64_C(1024);
		}
		st = mp_engine_weights_bytes(e, &p->model.arch, &p->mem.weights, compute, p->mem.tensor_parallel_size,
					     &in->weights_bytes, err);
		if (st == MP_OK && text_only && strcmp(p->model.arch.model_type, "llama4") == 0)
			/* mllama4.py: has_vision = has_vision_weights and enable_multimodal; no vision_model */
			in->weights_bytes -= p->mem.weights.cls[MP_TC_VISION].bytes;
		if (st == MP_OK)
			st = mp_engine_predict(in, &b->predicted, err);
		b->have_prediction = st == MP_OK;
	}
	return st;
}

mp_status mps_engine_block_for(const mps_inference_job *j, mps_inference_plan *p, mp_error *err)
{
	p->have_engine = j->engine.engine != MP_ENGINE_NONE;
	if (j->engine.engine == MP_ENGINE_LLAMACPP || j->engine.engine == MP_ENGINE_OLLAMA)
		return mps_llamacpp_block_for(j, p, err); /* mps_llamacpp.c: llama.cpp's own buffers of the GGUF file */
	if (p->have_engine)
		memset(&p->engine, 0, sizeof(p->engine)); /* mps_plan_inference_on leaves it to the engine's plans */
	if (p->have_engine && p->model.architecture_known && p->model.arch.compressed_kv)
		mps_warn(&p->warnings,
			 "engine: %s's compressed attention is not in the engine references here: the predicted blocks and "
			 "tokens put the plan's key row per token and layer (%llu bytes per token in all) through the engine's "
			 "paged arithmetic, and the compressors' state the plan counts is outside them",
			 p->model.arch.model_type, (unsigned long long)p->mem.kv.bytes_per_token);
	return p->have_engine ? engine_block(j, p, err) : MP_OK;
}
