/*
 * engine.c: the serving engines around an inference plan. Resolves what a request leaves out the way the engine
 * it names would on the device (the prefill chunk, the block size, vLLM's utilisation), builds the launch
 * arguments that realise the plan with the figures the engine will print (planner/mp_engine.h). Fills structs;
 * formats no text (codec/ writes the command). The check of a pasted start-up log is engine_check.c's.
 */
#include <assert.h>
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
	const char *parts[] = {
		"prefill: max_num_batched_tokens not given: forwards of ", mps_u64_text(c->max_num_batched_tokens, digits),
		" tokens, ", prefill_basis(c), "'s default ", p->have_device ? "on this device" : "with no device given",
		" (", c->device_class, "; chunked prefill ",
		c->basis == MP_ENGINE_TRTLLM ? "as max_num_tokens schedules it" : c->chunked_prefill ? "on" : "off", ")"};

	if (c->defaulted)
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
	return j->engine.engine == MP_ENGINE_VLLM ? "engine_default" : "default";
}

void mps_warn_budget(const mps_inference_job *j, const mp_store_device *dev, double fraction, mps_warnings *w)
{
	mp_engine e = j->engine.engine;
	mp_engine_defaults d;
	uint64_t total = 0;
	unsigned hundredths;

	if (j->engine.utilization_given || e == MP_ENGINE_VLLM)
		return; /* the request's, or the named engine's own default: said by request.gpu_memory_utilization_from */
	if (dev && dev->hw.host_memory) {
		mps_warn(w,
			 "budget: the fit takes the whole of host memory (gpu_memory_utilization 1); a CPU engine sizes "
			 "its KV cache by its own setting (vLLM's CPU backend VLLM_CPU_KVCACHE_SPACE, llama.cpp's -c): give "
			 "gpu_memory_utilization for the share the job may use");
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
	st = mp_engine_defaults_for(e, engine_total_bytes(e, hw, nvml_memory_bytes), name, job_tp(j),
				    &d, err);
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
		if (!c.chunked_prefill) {
			uint64_t floor_tokens = c.basis == MP_ENGINE_SGLANG ? 16384 : chunk;

			chunk = j->req.sequence_length > floor_tokens ? j->req.sequence_length : floor_tokens;
		}
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

/* The --quantization value of vLLM and SGLang for the weights' format ("" when none: float weights). */
static const char *quantization_of(const mp_inference_req *r, const mp_inference_opts *o)
{
	switch (r->weight_dtype) {
	case MP_DTYPE_FP8_E4M3:
	case MP_DTYPE_FP8_E5M2:
		return "fp8";
	case MP_DTYPE_INT4:
		return o->formats.int4_scheme == MP_INT4_AWQ ? "awq" : "gptq";
	case MP_DTYPE_INT8:
	case MP_DTYPE_NF4:
		return "bitsandbytes";
	default:
		return is_gguf(r->weight_dtype) ? "gguf" : "";
	}
}

/* The engine's name for the KV dtype, or an error naming kv_cache_dtype with what the engine takes. */
static mp_status kv_arg(mp_engine e, mp_dtype kv, mp_dtype compute, const char *base, const char **out, mp_error *err)
{
	*out = NULL;
	if (kv == compute)
		*out = "auto";
	else if (kv == MP_DTYPE_FP8_E4M3)
		*out = e == MP_ENGINE_VLLM ? "fp8" : e == MP_ENGINE_SGLANG ? "fp8_e4m3" : "fp8";
	else if (kv == MP_DTYPE_FP8_E5M2 && e != MP_ENGINE_TRTLLM)
		*out = "fp8_e5m2";
	if (*out)
		return MP_OK;
	return mp_fail_at(err, MP_EINVAL, base, "/kv_cache_dtype",
			  "%s stores the KV cache in the compute dtype (%s) or in %s, not %s", mp_engine_name(e),
			  mp_dtype_name(compute), e == MP_ENGINE_TRTLLM ? "fp8 (e4m3)" : "fp8_e4m3 or fp8_e5m2",
			  mp_dtype_name(kv));
}

static void served_model(const mps_inference_job *j, const mps_model *m, mps_engine_block *b)
{
	b->model_arg_known = true;
	if (j->engine.served_model[0]) {
		snprintf(b->model_arg, sizeof(b->model_arg), "%s", j->engine.served_model);
		return;
	}
	for (size_t i = 0; j->model.kind == MPS_MODEL_STORED && i < sizeof(preset_repos) / sizeof(preset_repos[0]); i++)
		if (strcmp(m->id, preset_repos[i].id) == 0) {
			snprintf(b->model_arg, sizeof(b->model_arg), "%s", preset_repos[i].repo);
			return;
		}
	b->model_arg_known = false;
	snprintf(b->model_arg, sizeof(b->model_arg), "%s", m->id[0] ? m->id : "MODEL");
}

static mp_status vllm_args(const mps_inference_job *j, const mps_inference_plan *p, const char *kv,
			   mps_engine_block *b)
{
	const mp_inference_opts *o = &p->opts;
	uint64_t tp = p->mem.tensor_parallel_size, gpus = j->req.num_gpus ? j->req.num_gpus : tp;
	const char *q = quantization_of(&j->req, o);
	char f[16];

	b->program = "vllm serve";
	add_arg(b, "--tensor-parallel-size", "plan", "%llu", (unsigned long long)tp);
	if (gpus > tp)
		add_arg(b, "--data-parallel-size", "plan", "%llu", (unsigned long long)(gpus / tp));
	add_arg(b, "--max-model-len", "plan", "%llu", (unsigned long long)j->req.sequence_length);
	add_arg(b, "--max-num-seqs", "plan", "%llu", (unsigned long long)j->req.batch_size);
	if (o->attention != MP_ATTENTION_NONE)
		add_arg(b, "--max-num-batched-tokens", p->prefill.defaulted ? "default" : "request", "%llu",
			(unsigned long long)p->prefill.max_num_batched_tokens);
	fraction_text(o->gpu_memory_utilization, f, sizeof(f));
	add_arg(b, "--gpu-memory-utilization", j->engine.utilization_given ? "request" : "default", "%s", f);
	add_arg(b, "--kv-cache-dtype", "request", "%s", kv);
	add_arg(b, "--block-size", j->engine.block_size_given ? "request" : "default", "%llu",
		(unsigned long long)p->mem.kv.block_size);
	add_arg(b, "--dtype", "request", "%s", torch_dtype(o->compute_dtype));
	if (q[0])
		add_arg(b, "--quantization", "request", "%s", q);
	if (j->engine.chunked_prefill < 0)
		add_arg(b, "--no-enable-chunked-prefill", "request", "%s", "");
	return MP_OK;
}

static mp_status sglang_args(const mps_inference_job *j, const mps_inference_plan *p, const char *kv,
			     double fraction, mps_engine_block *b)
{
	const mp_inference_opts *o = &p->opts;
	uint64_t tp = p->mem.tensor_parallel_size, gpus = j->req.num_gpus ? j->req.num_gpus : tp;
	const char *q = quantization_of(&j->req, o);
	char f[16];

	b->program = "python3 -m sglang.launch_server";
	b->model_flag = "--model-path";
	add_arg(b, "--tp", "plan", "%llu", (unsigned long long)tp);
	if (gpus > tp)
		add_arg(b, "--dp", "plan", "%llu", (unsigned long long)(gpus / tp));
	add_arg(b, "--context-length", "plan", "%llu", (unsigned long long)j->req.sequence_length);
	fraction_text(fraction, f, sizeof(f));
	add_arg(b, "--mem-fraction-static", j->engine.mem_fraction_static > 0 ? "request" : "default", "%s", f);
	add_arg(b, "--max-running-requests", "plan", "%llu", (unsigned long long)j->req.batch_size);
	if (j->engine.chunked_prefill < 0)
		add_arg(b, "--chunked-prefill-size", "request", "-1");
	else if (o->attention != MP_ATTENTION_NONE)
		add_arg(b, "--chunked-prefill-size", p->prefill.defaulted ? "default" : "request", "%llu",
			(unsigned long long)p->prefill.max_num_batched_tokens);
	add_arg(b, "--kv-cache-dtype", "request", "%s", kv);
	if (p->mem.kv.block_size > 1)
		add_arg(b, "--page-size", j->engine.block_size_given ? "request" : "default", "%llu",
			(unsigned long long)p->mem.kv.block_size);
	add_arg(b, "--dtype", "request", "%s", torch_dtype(o->compute_dtype));
	if (q[0])
		add_arg(b, "--quantization", "request", "%s", q);
	return MP_OK;
}

static mp_status trtllm_args(const mps_inference_job *j, const mps_inference_plan *p, const char *kv,
			     double fraction, mps_engine_block *b, mp_error *err)
{
	const mp_inference_opts *o = &p->opts;
	char f[16];

	if (j->req.weight_dtype == MP_DTYPE_NF4 || is_gguf(j->req.weight_dtype))
		return mp_fail_at(err, MP_EINVAL, j->pointer, "/weight_dtype",
				  "trtllm loads float, fp8, int8 and int4 (AWQ/GPTQ) checkpoints, not %s",
				  mp_dtype_name(j->req.weight_dtype));
	b->program = "trtllm-serve";
	add_arg(b, "--backend", "default", "pytorch");
	add_arg(b, "--tp_size", "plan", "%llu", (unsigned long long)p->mem.tensor_parallel_size);
	add_arg(b, "--max_batch_size", "plan", "%llu", (unsigned long long)j->req.batch_size);
	if (o->attention != MP_ATTENTION_NONE)
		add_arg(b, "--max_num_tokens", p->prefill.defaulted ? "default" : "request", "%llu",
			(unsigned long long)p->prefill.max_num_batched_tokens);
	add_arg(b, "--max_seq_len", "plan", "%llu", (unsigned long long)j->req.sequence_length);
	fraction_text(fraction, f, sizeof(f));
	add_arg(b, "--kv_cache_free_gpu_memory_fraction", j->engine.free_gpu_memory_fraction > 0 ? "request" : "default",
		"%s", f);
	if (strcmp(kv, "auto") != 0 || p->mem.kv.block_size != 32) {
		/* KvCacheConfig has no command-line flag of its own: trtllm-serve reads it from this file */
		int n = snprintf(b->extra_options_yaml, sizeof(b->extra_options_yaml), "kv_cache_config:\n");

		if (strcmp(kv, "auto") != 0)
			n += snprintf(b->extra_options_yaml + n, sizeof(b->extra_options_yaml) - (size_t)n, "  dtype: %s\n",
				      kv);
		if (p->mem.kv.block_size != 32)
			snprintf(b->extra_options_yaml + n, sizeof(b->extra_options_yaml) - (size_t)n,
				 "  tokens_per_block: %llu\n", (unsigned long long)p->mem.kv.block_size);
		add_arg(b, "--extra_llm_api_options", "request", "extra_llm_api_options.yaml");
	}
	return MP_OK;
}

/* The engine block of plan p (computed with the options of mps_inference_opts_for). */
static mp_status engine_block(const mps_inference_job *j, mps_inference_plan *p, mp_error *err)
{
	mps_engine_block *b = &p->engine;
	mp_engine e = j->engine.engine;
	const mp_inference_opts *o = &p->opts;
	mp_dtype compute = o->compute_dtype ? o->compute_dtype : MP_DTYPE_BF16;
	const char *kv;
	double fraction;
	mp_status st;

	memset(b, 0, sizeof(*b));
	b->engine = e;
	if (o->length_scope == MP_LENGTH_SHARED)
		return mp_fail_at(err, MP_EINVAL, j->pointer, "/sequence_length_scope",
				  "%s gives every sequence its own max_model_len: sequence_length_scope shared is "
				  "llama.cpp's, not an engine's",
				  mp_engine_name(e));
	st = kv_arg(e, j->req.kv_cache_dtype, compute, j->pointer, &kv, err);
	if (st == MP_OK)
		st = mp_engine_defaults_for(e, p->have_device ? (e == MP_ENGINE_SGLANG && p->device.nvml_memory_bytes
								     ? p->device.nvml_memory_bytes
								     : p->fit.capacity_bytes)
							  : 0,
					    p->have_device ? p->device.name : NULL, p->mem.tensor_parallel_size,
					    &b->defaults, err);
	if (st != MP_OK)
		return st;
	fraction = e == MP_ENGINE_VLLM     ? o->gpu_memory_utilization
		   : e == MP_ENGINE_SGLANG ? (j->engine.mem_fraction_static > 0 ? j->engine.mem_fraction_static
										: b->defaults.memory_fraction)
					   : (j->engine.free_gpu_memory_fraction > 0 ? j->engine.free_gpu_memory_fraction
										    : b->defaults.memory_fraction);
	served_model(j, &p->model, b);
	if (e == MP_ENGINE_VLLM) {
		b->source = "vLLM 0.11 V1 engine: vllm/engine/arg_utils.py (get_batch_defaults), "
			    "vllm/v1/worker/gpu_worker.py (determine_available_memory), vllm/v1/core/kv_cache_utils.py";
		st = vllm_args(j, p, kv, b);
	} else if (e == MP_ENGINE_SGLANG) {
		b->source = "SGLang: python/sglang/srt/server_args.py (_handle_gpu_memory_settings), "
			    "python/sglang/srt/model_executor/model_runner.py (profile_max_num_token)";
		st = sglang_args(j, p, kv, fraction, b);
	} else {
		b->source = "TensorRT-LLM PyTorch backend (trtllm-serve): tensorrt_llm/_torch/pyexecutor/_util.py "
			    "(KvCacheCreator), resource_manager.py (calculate_max_num_blocks)";
		st = trtllm_args(j, p, kv, fraction, b, err);
	}
	if (st != MP_OK || !p->have_device)
		return st;

	/* what the engine will print: the plan's bytes through the engine's arithmetic */
	{
		mp_engine_inputs *in = &b->inputs;

		in->engine = e;
		in->total_memory_bytes = p->fit.capacity_bytes;
		in->context_bytes = p->mem.overhead_bytes;
		in->memory_fraction = fraction;
		in->block_size = p->mem.kv.block_size;
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
		in->batch_size = j->req.batch_size;
		st = mp_engine_weights_bytes(e, &p->model.arch, &p->mem.weights, compute, p->mem.tensor_parallel_size,
					     &in->weights_bytes, err);
		if (st == MP_OK)
			st = mp_engine_predict(in, &b->predicted, err);
		b->have_prediction = st == MP_OK;
	}
	return st;
}

mp_status mps_engine_block_for(const mps_inference_job *j, mps_inference_plan *p, mp_error *err)
{
	p->have_engine = j->engine.engine != MP_ENGINE_NONE;
	if (p->have_engine && p->model.architecture_known && p->model.arch.compressed_kv)
		mps_warn(&p->warnings,
			 "engine: %s's compressed attention is not in the engine references here: the predicted blocks and "
			 "tokens put the plan's key row per token and layer (%llu bytes per token in all) through the engine's "
			 "paged arithmetic, and the compressors' state the plan counts is outside them",
			 p->model.arch.model_type, (unsigned long long)p->mem.kv.bytes_per_token);
	return p->have_engine ? engine_block(j, p, err) : MP_OK;
}
