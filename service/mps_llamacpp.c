/*
 * mps_llamacpp.c: llama.cpp and Ollama around an inference plan of a GGUF model. Resolves the launch the request leaves
 * out the way llama-server (llama.cpp 0c1e5709) or Ollama 0.32.15 would, finds the largest -ngl and context that fit
 * the GPUs, and fills the engine block: the command that realises the placement, llama.cpp's buffers per device
 * (planner/llamacpp.c) and the speed bounds of the placement. Fills structs; formats no text (codec/mpc_llamacpp.c).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "service_int.h"

#define MIB_U (UINT64_C(1) << 20)
/* llama.cpp's --fit-target default (common/common.h fit_params_target: 1024 MiB per device): what it leaves free
 * beside its buffers for the CUDA pool (flash attention's and cuBLAS's scratch) and other processes */
#define LLAMACPP_MARGIN_BYTES (1024 * MIB_U)

static void arg(mps_engine_block *b, const char *flag, const char *source, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void arg(mps_engine_block *b, const char *flag, const char *source, const char *fmt, ...)
{
	mps_engine_arg *a;
	va_list ap;

	if (b->nargs == MPS_ENGINE_MAX_ARGS)
		return; /* the longest command below has 22 arguments */
	a = &b->args[b->nargs++];
	a->flag = flag;
	a->source = source;
	va_start(ap, fmt);
	vsnprintf(a->value, sizeof(a->value), fmt, ap);
	va_end(ap);
}

/* The ggml cache type of a plan's kv_cache_dtype, MP_GGML_TYPE_COUNT when llama.cpp has none. */
static uint32_t cache_type_of(mp_dtype dt)
{
	switch (dt) {
	case MP_DTYPE_FP32: return MP_GGML_F32;
	case MP_DTYPE_FP16: return MP_GGML_F16;
	case MP_DTYPE_BF16: return MP_GGML_BF16;
	case MP_DTYPE_Q8_0: return MP_GGML_Q8_0;
	case MP_DTYPE_Q4_0: return MP_GGML_Q4_0;
	default: return MP_GGML_TYPE_COUNT;
	}
}

static bool vendor_is(const mp_store_device *d, const char *v)
{
	return strcasecmp(d->vendor, v) == 0;
}

/* The file's bytes as Ollama's os.Stat sees them: the end of the last tensor of each file. */
static uint64_t file_bytes(const mpm_checkpoint *c)
{
	uint64_t end = 0;

	for (size_t i = 0; i < c->n_llama_tensors; i++) {
		uint64_t e = c->llama_tensors[i].file_offset + c->llama_tensors[i].bytes;
		if (e > end)
			end = e;
	}
	return end;
}

/* The comma list of -ts. */
static void split_text(const mps_llamacpp_opts *o, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (uint32_t i = 0; i < o->n_tensor_split && used + 1 < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%g", i ? "," : "", o->tensor_split[i]);
}

/* llama-server's, llama-completion's and llama-cli's arguments for the launch (common/arg.cpp at 0c1e5709). */
static void llamacpp_args(const mps_inference_job *j, const mps_llamacpp_block *k, mps_engine_block *b)
{
	const mp_llamacpp_params *p = &k->params;
	const mps_llamacpp_opts *o = &j->llama;
	static const char *const programs[] = { "llama-server", "llama-completion", "llama-cli" };
	char ts[256];

	b->program = programs[k->program];
	b->model_flag = "-m";
	arg(b, "-c", "plan", "%u", k->n_ctx_asked);
	if (k->program == MPS_LLAMACPP_SERVER) {
		arg(b, "-np", "plan", "%u", p->n_seq_max);
		if (p->kv_unified)
			arg(b, "-kvu", "plan", "%s", "");
	}
	arg(b, "-ngl", k->host_only ? "plan" : k->gpu_layers_from[0] == 'r' ? "request" : "plan", "%d", p->n_gpu_layers);
	if (o->n_tensor_split) {
		split_text(o, ts, sizeof(ts));
		arg(b, "-ts", "request", "%s", ts);
	}
	if (p->type_k != MP_GGML_F16)
		arg(b, "-ctk", "request", "%s", mp_ggml_traits_of(p->type_k).name);
	if (p->type_v != MP_GGML_F16)
		arg(b, "-ctv", "request", "%s", mp_ggml_traits_of(p->type_v).name);
	if (o->flash_attention >= 0)
		arg(b, "-fa", "request", "%s", o->flash_attention ? "on" : "off");
	if (o->n_batch)
		arg(b, "-b", "request", "%u", o->n_batch);
	if (o->n_ubatch)
		arg(b, "-ub", "request", "%u", o->n_ubatch);
	if (o->cpu_moe)
		arg(b, "--cpu-moe", "request", "%s", "");
	else if (o->n_cpu_moe >= 0)
		arg(b, "--n-cpu-moe", "request", "%d", o->n_cpu_moe);
	if (o->no_kv_offload)
		arg(b, "-nkvo", "request", "%s", "");
	if (o->no_mmap)
		arg(b, "--load-mode", "request", "none");
	if (o->swa_full)
		arg(b, "--swa-full", "request", "%s", "");
	if (o->no_repack)
		arg(b, "--no-repack", "request", "%s", "");
	/* the placement is the plan's, not llama.cpp's own fit of the unset arguments */
	arg(b, "--fit", "plan", "off");
}

/* The llama-server command Ollama 0.32.15 starts (llm/llama_server.go startLlamaServer, appendLlamaServerLogArgs,
 * appendLoadModeArgs, appendFlashAttentionArgs, appendBatchArgs), the arguments that set memory, in its order. */
static void ollama_args(const mps_llamacpp_block *k, mps_engine_block *b)
{
	const mp_llamacpp_params *p = &k->params;
	const mps_ollama_settings *o = &k->ollama;

	b->program = "llama-server";
	b->model_flag = "--model";
	arg(b, "--port", "default", "PORT");
	arg(b, "--host", "default", "127.0.0.1");
	arg(b, "--no-webui", "default", "%s", "");
	arg(b, "--offline", "default", "%s", "");
	arg(b, "-c", "plan", "%u", k->n_ctx_asked);
	arg(b, "-np", "plan", "%u", o->num_parallel);
	arg(b, "--log-verbosity", "default", "4");
	arg(b, "--no-log-prefix", "default", "%s", "");
	arg(b, "--no-log-timestamps", "default", "%s", "");
	if (!p->mmap)
		arg(b, "--load-mode", o->mmap_off ? "default" : "request", "none");
	if (o->kv_cache_type_env) {
		arg(b, "--cache-type-k", "request", "%s", o->kv_cache_type_env);
		arg(b, "--cache-type-v", "request", "%s", o->kv_cache_type_env);
	}
	arg(b, "--flash-attn", o->flash_attention_env ? "request" : "default", "%s",
	    o->flash_attention_env ? (o->flash_attention_env[0] == '1' ? "on" : "off") : "auto");
	arg(b, "-b", o->num_batch_auto ? "default" : "request", "%u", o->num_batch);
	arg(b, "-ub", o->num_batch_auto ? "default" : "request", "%u", o->num_batch);
	arg(b, "-ngl", k->gpu_layers_from[0] == 'r' ? "request" : "plan", "%d", o->num_gpu);
}

/* The rates a device's layers run at: its memory bandwidth, and the dense rate of its matrices (a GPU's fp16 tensor
 * rate: llama.cpp's CUDA kernels dequantise to it or run int8 MMA at least as fast; a CPU's fp32 rate). */
static mp_llamacpp_rate rate_of(const mp_device *hw, bool cpu)
{
	mp_llamacpp_rate r;

	r.bandwidth_bytes_per_second = hw->memory_bandwidth_bytes_per_second;
	r.flops_per_second = hw->peak_flops_per_second[cpu ? MP_DTYPE_FP32 : MP_DTYPE_FP16];
	if (r.flops_per_second <= 0)
		r.flops_per_second = hw->peak_flops_per_second[MP_DTYPE_FP32];
	return r;
}

mp_status mps_llamacpp_speed_for(mps_inference_plan *p, const mp_store_device *host, mp_error *err)
{
	mps_llamacpp_block *k = p->llama;
	const mpm_checkpoint *c = p->model.ckpt;
	mp_status st;

	if (k == NULL || c == NULL)
		return MP_OK;
	if (host) {
		k->speed_req.rate[0] = rate_of(&host->hw, true);
		snprintf(k->host_name, sizeof(k->host_name), "%s", mps_device_label(host));
		k->host_memory_bytes = mp_device_capacity_bytes(&host->hw);
		k->host_fits = k->host_bytes <= k->host_memory_bytes;
	}
	st = mp_llamacpp_speed_of(&k->params, c->llama_tensors, c->n_llama_tensors, &k->plan, &k->speed_req, &k->speed,
				  err);
	k->have_speed = st == MP_OK && k->speed.decode.known && k->speed.prefill.known;
	return st;
}

/* The launch half of the params: what the request says, else llama.cpp's (Ollama's) default. */
static mp_status resolve_launch(const mps_inference_job *j, const mps_inference_plan *p, mps_llamacpp_block *k,
				mp_error *err)
{
	const mps_llamacpp_opts *o = &j->llama;
	const mp_inference_req *r = &p->job.req;
	mp_llamacpp_params *q = &k->params;
	bool ollama = k->engine == MP_ENGINE_OLLAMA, shared = p->opts.length_scope == MP_LENGTH_SHARED;
	uint64_t ctx;
	char ptr[96];

	k->program = ollama ? MPS_LLAMACPP_SERVER : o->program;
	if (k->program != MPS_LLAMACPP_SERVER && r->batch_size > 1)
		return mp_fail_at(err, MP_EINVAL, j->pointer, "/batch_size",
				  "%s decodes one sequence: batch_size 1, or engine_options.program llama-server for %llu "
				  "parallel slots (-np)",
				  k->program == MPS_LLAMACPP_COMPLETION ? "llama-completion" : "llama-cli",
				  (unsigned long long)r->batch_size);
	if (ollama && shared)
		return mp_fail_at(err, MP_EINVAL, j->pointer, "/sequence_length_scope",
				  "Ollama gives each of its OLLAMA_NUM_PARALLEL slots num_ctx tokens (-c num_ctx x "
				  "parallel): sequence_length_scope per_sequence");
	/* the devices: a CPU device is the host alone; else num_gpus GPUs (one) */
	k->host_only = (p->have_device && strcmp(p->device.kind, "cpu") == 0) || o->no_gpu;
	k->have_device = p->have_device && !k->host_only;
	q->n_devices = k->host_only ? 0 : (uint32_t)(r->num_gpus ? r->num_gpus : 1);
	if (q->n_devices > MP_LLAMACPP_MAX_DEVICES)
		return mp_fail_at(err, MP_EINVAL, j->pointer, "/num_gpus", "llama.cpp drives at most %d devices",
				  MP_LLAMACPP_MAX_DEVICES);
	if (o->n_tensor_split > q->n_devices)
		return mp_fail_at(err, MP_EINVAL, j->pointer, "/engine_options/tensor_split",
				  "%u proportions for %u GPU(s): -ts gives one per GPU (num_gpus)", o->n_tensor_split,
				  q->n_devices);
	for (uint32_t d = 0; d < o->n_tensor_split; d++)
		q->tensor_split[d] = o->tensor_split[d];
	/* the buffer type's padding: CUDA's (and HIP's, the same ggml-cuda code) or the CPU's (RPC servers of it) */
	if (o->backend >= 0) {
		k->backend = (mp_llamacpp_backend)o->backend;
		k->backend_from = "request";
	} else if (!p->have_device || k->host_only || vendor_is(&p->device, "NVIDIA") || vendor_is(&p->device, "AMD")) {
		k->backend = MP_LLAMACPP_CUDA;
		k->backend_from = p->have_device && !k->host_only ? "device_vendor" : "default";
	} else {
		return mp_fail_at(err, MP_EINVAL, j->pointer, "/engine_options/backend",
				  "memplan models llama.cpp's CUDA (and HIP) and CPU buffer types; the device's vendor is %s: "
				  "give engine_options.backend (cuda or cpu)",
				  p->device.vendor[0] ? p->device.vendor : "not given");
	}
	q->backend = k->backend;
	q->mmap = !o->no_mmap;
	q->kv_offload = !o->no_kv_offload;
	q->n_cpu_moe = o->cpu_moe ? q->n_layer : o->n_cpu_moe > 0 ? (uint32_t)o->n_cpu_moe : 0;
	q->override = MP_LLAMACPP_OT_NONE;
	q->swa_full = o->swa_full;
	/* -np slots: each holds sequence_length (per_sequence: -c batch x length, a stream each) or all share it
	 * (shared: -c length, one unified stream, -kvu) */
	q->n_seq_max = (uint32_t)r->batch_size;
	q->kv_unified = shared && r->batch_size > 1;
	if (!mp_mul_u64(shared ? 1 : r->batch_size, r->sequence_length, &ctx) || ctx > UINT32_MAX - MP_LLAMACPP_CTX_PAD)
		return mp_fail_at(err, MP_EOVERFLOW, j->pointer, "/sequence_length",
				  "batch_size x sequence_length overflows llama.cpp's 32-bit -c");
	if (ollama && q->n_ctx_train && r->sequence_length > q->n_ctx_train) {
		/* llm/server.go NewLlamaServer: "requested context size too large for model": num_ctx = n_ctx_train */
		ctx = (uint64_t)q->n_ctx_train * r->batch_size;
		k->ollama.num_ctx = q->n_ctx_train;
	} else if (ollama) {
		k->ollama.num_ctx = (uint32_t)r->sequence_length;
	}
	q->n_ctx = (uint32_t)ctx;
	k->n_ctx_asked = (uint32_t)ctx;
	/* the cache types: engine_options, else kv_cache_dtype when the request gave it, else f16 */
	q->type_k = o->cache_type_k;
	q->type_v = o->cache_type_v;
	if (ollama && q->type_k == MP_GGML_TYPE_COUNT)
		q->type_k = q->type_v; /* OLLAMA_KV_CACHE_TYPE: one type */
	if (ollama && q->type_v == MP_GGML_TYPE_COUNT)
		q->type_v = q->type_k;
	if (q->type_k == MP_GGML_TYPE_COUNT || q->type_v == MP_GGML_TYPE_COUNT) {
		uint32_t t = j->kv_cache_dtype_auto ? MP_GGML_F16 : cache_type_of(r->kv_cache_dtype);
		if (t == MP_GGML_TYPE_COUNT)
			return mp_fail_at(err, MP_EINVAL, j->pointer, "/kv_cache_dtype",
					  "llama.cpp has no %s cache: kv_cache_dtype fp16, bf16, fp32, q8_0 or q4_0, or "
					  "engine_options.cache_type_k / cache_type_v (f16, bf16, f32, q8_0, q4_0, q4_1, "
					  "iq4_nl, q5_0, q5_1)",
					  mp_dtype_name(r->kv_cache_dtype));
		if (q->type_k == MP_GGML_TYPE_COUNT)
			q->type_k = t;
		if (q->type_v == MP_GGML_TYPE_COUNT)
			q->type_v = t;
	}
	/* flash attention: auto resolves on where the backend runs it (llama-context.cpp: "Flash Attention was auto,
	 * set to enabled" on the CPU and CUDA backends for these heads), and a quantised V turns auto on */
	k->flash_attention_auto = o->flash_attention < 0;
	q->flash_attn = o->flash_attention != 0;
	snprintf(ptr, sizeof(ptr), "%s/engine_options/cache_type_v", j->pointer);
	{
		char pk[96];
		snprintf(pk, sizeof(pk), "%s/engine_options/cache_type_k", j->pointer);
		return mp_llamacpp_check_cache_types(q, pk, ptr, err);
	}
}

/* Ollama's settings for the resolved launch (and its automatic num_batch when the request gives none). */
static void ollama_settings(const mps_inference_job *j, const mps_inference_plan *p, mps_llamacpp_block *k)
{
	mps_ollama_settings *o = &k->ollama;
	mp_llamacpp_params *q = &k->params;
	uint64_t eff, head_dim, total = 0;

	o->num_parallel = (uint32_t)p->job.req.batch_size;
	if (k->have_device)
		total = k->capacity_bytes * q->n_devices;
	o->default_num_ctx = k->have_device ? mp_ollama_default_num_ctx(total) : 0;
	o->available_bytes = total;
	eff = (uint64_t)o->num_ctx * o->num_parallel;
	head_dim = q->n_embd / (q->head_count_max ? q->head_count_max : 1);
	o->predicted_vram_bytes = mp_ollama_predict_server_vram(file_bytes(p->model.ckpt), q->n_layer,
								 q->head_count_kv_min, head_dim, eff);
	if (j->llama.n_batch) {
		o->num_batch = j->llama.n_batch;
	} else {
		o->num_batch_auto = true;
		o->num_batch = mp_ollama_auto_num_batch(eff, o->predicted_vram_bytes, o->available_bytes,
							j->llama.flash_attention == 0,
							k->have_device && vendor_is(&p->device, "NVIDIA"), k->capacity_bytes);
	}
	q->n_batch = q->n_ubatch = o->num_batch;
	/* sched.go disableMmapDefaultReason: CPU only (num_gpu 0 or no GPU) loads without mmap unless use_mmap is set */
	if (!j->llama.mmap_given && (k->host_only || j->llama.gpu_layers == 0)) {
		o->mmap_off = true;
		q->mmap = false;
	}
	if (j->llama.flash_attention >= 0)
		o->flash_attention_env = j->llama.flash_attention ? "1" : "0";
	if (q->type_k != MP_GGML_F16)
		o->kv_cache_type_env = mp_ggml_traits_of(q->type_k).name;
}

mp_status mps_llamacpp_block_for(const mps_inference_job *j, mps_inference_plan *p, mp_error *err)
{
	const mpm_checkpoint *c = p->model.ckpt;
	mps_llamacpp_block *k;
	mp_llamacpp_params *q;
	uint64_t budget[MP_LLAMACPP_SLOTS] = { 0 };
	mp_status st;

	memset(&p->engine, 0, sizeof(p->engine));
	p->engine.engine = j->engine.engine;
	if (c == NULL || c->format != MPM_CKPT_GGUF || c->llama == NULL)
		return mp_fail(err, MP_EINVAL, p->job.model.pointer[0] ? p->job.model.pointer : "/model",
			       "engine %s plans llama.cpp's own buffers from the GGUF file's tensors: give the model as "
			       "{\"gguf_header\": \"<base64 of the file's first bytes>\"} (the CLI: --model FILE.gguf)",
			       mp_engine_name(j->engine.engine));
	if ((k = calloc(1, sizeof(*k))) == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	p->llama = k;
	k->engine = j->engine.engine;
	k->params = *c->llama;
	q = &k->params;
	if ((st = resolve_launch(j, p, k, err)) != MP_OK)
		return st;
	if (mp_ggml_to_dtype(q->type_k) != p->job.req.kv_cache_dtype ||
	    mp_ggml_to_dtype(q->type_v) != p->job.req.kv_cache_dtype)
		/* K and V apart, or a type memplan has no format for (q4_1, iq4_nl, q5_0, q5_1): one answer, two caches */
		mps_warn(&p->warnings,
			 "kv_cache: memory, fit and performance are of kv_cache_dtype %s; the command's cache is -ctk %s -ctv "
			 "%s, which engine.placement's KV buffers are of",
			 mp_dtype_name(p->job.req.kv_cache_dtype), mp_ggml_traits_of(q->type_k).name,
			 mp_ggml_traits_of(q->type_v).name);
	/* each GPU's budget: its capacity (x gpu_memory_utilization when given) less the CUDA context and a margin */
	if (k->have_device) {
		double util = p->opts.gpu_memory_utilization > 0 ? p->opts.gpu_memory_utilization : 1.0;
		uint64_t cap = (uint64_t)floor((double)p->fit.capacity_bytes * util);

		k->capacity_bytes = p->fit.capacity_bytes;
		/* the CUDA context (the plan's overhead); the CPU backend's devices (RPC servers) have none */
		k->context_bytes = k->backend == MP_LLAMACPP_CUDA ? p->mem.overhead_bytes : 0;
		k->margin_bytes = j->llama.margin_given ? j->llama.gpu_margin_bytes : LLAMACPP_MARGIN_BYTES;
		k->budget_bytes = cap > k->context_bytes + k->margin_bytes ? cap - k->context_bytes - k->margin_bytes : 0;
		for (uint32_t d = 1; d <= q->n_devices; d++) {
			budget[d] = k->budget_bytes;
			q->device_free_bytes[d - 1] = k->capacity_bytes;
		}
	}
	if (k->engine == MP_ENGINE_OLLAMA)
		ollama_settings(j, p, k);
	else {
		q->n_batch = j->llama.n_batch;
		q->n_ubatch = j->llama.n_ubatch;
	}
	/* the layers: the request's -ngl, else the largest that fits, else (no device) every layer */
	if (k->host_only) {
		q->n_gpu_layers = 0;
		k->gpu_layers_from = "host_only";
	} else if (j->llama.gpu_layers >= 0) {
		q->n_gpu_layers = j->llama.gpu_layers > (int32_t)q->n_layer + 1 ? (int32_t)q->n_layer + 1 : j->llama.gpu_layers;
		k->gpu_layers_from = "request";
	} else if (k->have_device) {
		int32_t ngl;
		st = mp_llamacpp_max_gpu_layers(q, c->llama_tensors, c->n_llama_tensors, budget, &ngl, &k->plan, err);
		if (st != MP_OK)
			return st;
		q->n_gpu_layers = ngl < 0 ? 0 : ngl;
		/* every layer fits only as llama.cpp's retry without pipeline parallelism: plan that launch */
		q->no_pipeline = k->plan.pipeline_fallback;
		k->gpu_layers_from = "largest_that_fits";
	} else {
		q->n_gpu_layers = (int32_t)q->n_layer + 1;
		k->gpu_layers_from = "all_layers";
	}
	if ((st = mp_llamacpp_plan_buffers(q, c->llama_tensors, c->n_llama_tensors, &k->plan, err)) != MP_OK)
		return st;
	k->plan.pipeline_fallback = q->no_pipeline;
	if (k->have_device && k->plan.sched_copies > 1) {
		/* the 4 copies of pipeline parallelism over budget on a GPU: llama.cpp retries without them
		 * (llama-context.cpp sched_reserve), and so does the plan */
		bool over = false;
		for (uint32_t d = 1; d <= q->n_devices; d++)
			over = over || k->plan.total_bytes[d] > budget[d];
		if (over) {
			q->no_pipeline = true;
			if ((st = mp_llamacpp_plan_buffers(q, c->llama_tensors, c->n_llama_tensors, &k->plan, err)) != MP_OK)
				return st;
			k->plan.pipeline_fallback = true;
		}
	}
	k->max_gpu_layers = -1;
	k->fits = true;
	if (k->have_device) {
		mp_llamacpp_plan *best = malloc(sizeof(*best));
		int32_t ngl = -1;

		if (best == NULL)
			return mp_fail(err, MP_ENOMEM, "", "out of memory");
		st = mp_llamacpp_max_gpu_layers(q, c->llama_tensors, c->n_llama_tensors, budget, &ngl, best, err);
		free(best);
		if (st != MP_OK)
			return st;
		k->max_gpu_layers = ngl;
		for (uint32_t d = 1; d <= q->n_devices; d++)
			k->fits = k->fits && k->plan.total_bytes[d] <= budget[d];
		/* the longest context at this -ngl: up to the model's context per stream */
		{
			uint64_t limit = q->n_ctx_train ? (uint64_t)q->n_ctx_train * (q->kv_unified ? 1 : q->n_seq_max)
							 : MP_MAX_SEQUENCE_LENGTH;
			if (limit > UINT32_MAX - MP_LLAMACPP_CTX_PAD)
				limit = UINT32_MAX - MP_LLAMACPP_CTX_PAD;
			k->context_limit = (uint32_t)limit;
			st = mp_llamacpp_max_context(q, c->llama_tensors, c->n_llama_tensors, budget, (uint32_t)limit,
						     &k->max_context, err);
			if (st != MP_OK)
				return st;
		}
	}
	if (k->engine == MP_ENGINE_OLLAMA)
		k->ollama.num_gpu = q->n_gpu_layers;
	k->host_bytes = k->plan.total_bytes[0];
	if (k->host_only && p->have_device) {
		k->host_memory_bytes = mp_device_capacity_bytes(&p->device.hw);
		k->host_fits = k->host_bytes <= k->host_memory_bytes;
		k->fits = k->host_fits;
	}

	/* the command */
	p->engine.model_arg_known = j->engine.served_model[0] != '\0';
	snprintf(p->engine.model_arg, sizeof(p->engine.model_arg), "%s",
		 j->engine.served_model[0] ? j->engine.served_model : "MODEL.gguf");
	if (k->engine == MP_ENGINE_OLLAMA) {
		p->engine.source = "Ollama 0.32.15 (github.com/ollama/ollama v0.32.15: llm/llama_server.go startLlamaServer, "
				   "server/sched.go, server/routes.go, envconfig/config.go) starting llama-server; the buffers are "
				   "llama.cpp 0c1e5709's arithmetic (planner/llamacpp.c)";
		ollama_args(k, &p->engine);
	} else {
		p->engine.source = "llama.cpp 0c1e5709 (llama-cpp-python 0.3.36's sdist): common/arg.cpp, "
				   "src/llama-model.cpp load_tensors, src/llama-context.cpp, src/llama-kv-cache.cpp "
				   "(planner/llamacpp.c)";
		llamacpp_args(j, k, &p->engine);
	}

	/* the speed: each GPU's rates; the host's come with a host profile (mps_llamacpp_speed_for), or the device
	 * when it is the host */
	k->speed_req.sequences = (uint32_t)p->job.req.batch_size;
	k->speed_req.context_tokens = p->job.req.sequence_length > 0 ? p->job.req.sequence_length - 1 : 0;
	k->speed_req.prompt_tokens = p->job.req.sequence_length;
	if (k->host_only && p->have_device)
		k->speed_req.rate[0] = rate_of(&p->device.hw, true);
	else if (p->have_device)
		for (uint32_t d = 1; d <= q->n_devices; d++)
			k->speed_req.rate[d] = rate_of(&p->device.hw, false);
	if ((st = mps_llamacpp_speed_for(p, k->host_only && p->have_device ? &p->device : NULL, err)) != MP_OK)
		return st;

	/* what the answer rests on */
	if (k->flash_attention_auto)
		mps_warn(&p->warnings,
			 "engine: -fa auto taken as on (llama.cpp resolves it on where the backend runs flash attention, "
			 "the CPU and CUDA backends for these head sizes; give engine_options.flash_attention to fix it)");
	if (k->engine == MP_ENGINE_OLLAMA && j->llama.gpu_layers < 0 && k->have_device)
		mps_warn(&p->warnings,
			 "engine: num_gpu %d is memplan's largest -ngl that fits (a %llu MiB margin per GPU); with num_gpu "
			 "unset Ollama passes no -ngl and llama-server's own --fit places the layers (not modelled)",
			 q->n_gpu_layers, (unsigned long long)(k->margin_bytes / MIB_U));
	if (k->engine == MP_ENGINE_OLLAMA && q->n_ctx_train && p->job.req.sequence_length > q->n_ctx_train)
		mps_warn(&p->warnings,
			 "engine: num_ctx %llu is above the model's context_length %u: Ollama lowers it to %u "
			 "(llm/server.go NewLlamaServer)",
			 (unsigned long long)p->job.req.sequence_length, q->n_ctx_train, q->n_ctx_train);
	if (k->backend == MP_LLAMACPP_CUDA && q->n_devices > 0)
		/* measured on the CPU backend with RPC servers as GPUs (tests/ref/llamacpp); the CUDA terms are from
		 * ggml-cuda.cu (ggml_cuda_pool; ggml_backend_cuda_device_offload_op with GGML_OP_OFFLOAD_MIN_BATCH 32) and
		 * ggml-backend.cpp ggml_backend_sched_backend_id_from_cur ("1.off") */
		mps_warn(&p->warnings,
			 "engine: compute buffers are llama.cpp's CPU-backend arithmetic (its references ran no GPU); on "
			 "CUDA, flash attention's and cuBLAS's scratch is CUDA's own pool beside them (inside the margin), "
			 "and a matmul whose weight stays in host memory (layers past -ngl, -ot / --n-cpu-moe experts) runs "
			 "on the first GPU at 32 or more tokens, its weight copied into that GPU's compute buffer (not "
			 "modelled: up to the largest such weight more; --no-op-offload keeps it on the host)");
	if (k->plan.pipeline_fallback)
		mps_warn(&p->warnings,
			 "engine: pipeline parallelism's 4 copies of the graph's inputs exceed a GPU's budget; llama.cpp then "
			 "retries without it (\"compute buffer allocation failed, retrying without pipeline parallelism\"), "
			 "and the buffers are those of that retry");
	if (k->have_device && !k->fits)
		mps_warn(&p->warnings,
			 "engine: llama.cpp's buffers at -ngl %d exceed a GPU's budget (%llu bytes: capacity less the CUDA "
			 "context and the margin); engine.placement.max_gpu_layers and max_context say what fits",
			 q->n_gpu_layers, (unsigned long long)k->budget_bytes);
	return MP_OK;
}
