/*
 * mpc_llamacpp.c: llama.cpp and Ollama in an inference plan, both ways: the request's engine_options (the launch knobs
 * llama-server's arguments and Ollama's settings name, by one field table) and the answer's engine block for them
 * (the placement per device, the command, the buffers llama.cpp will print in its own printf formats, the speed
 * bounds, Ollama's settings and the llama-server command it starts). Reads the structs service/mps_llamacpp.c fills;
 * computes nothing of its own but the text.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../model/fields.h"
#include "codec.h"

#define MIB 1048576.0

/* ----- engine_options ---------------------------------------------------------------------------------- */

static const char *const program_names[] = { "llama-server", "llama-completion", "llama-cli", NULL };
static const char *const fa_names[] = { "auto", "on", "off", NULL };
static const char *const backend_names[] = { "cpu", "cuda", NULL }; /* by mp_llamacpp_backend */

typedef struct llama_body {
	int program, flash_attention, backend;
	uint64_t gpu_layers, n_batch, n_ubatch, n_cpu_moe, gpu_margin_bytes;
	char cache_type_k[16], cache_type_v[16];
	bool cpu_moe, kv_offload, mmap, swa_full, repack;
} llama_body;

#define LOFF(f) offsetof(llama_body, f)

static const mpm_field llama_fields[] = {
	{ .name = "program", .type = MPM_F_ENUM, .offset = LOFF(program), .names = program_names },
	{ .name = "gpu_layers", .type = MPM_F_U64, .offset = LOFF(gpu_layers), .min = 0, .max = MP_MAX_LAYERS + 1 },
	{ .name = "cache_type_k", .type = MPM_F_STRING, .offset = LOFF(cache_type_k),
	  .size = MPM_STR(llama_body, cache_type_k) },
	{ .name = "cache_type_v", .type = MPM_F_STRING, .offset = LOFF(cache_type_v),
	  .size = MPM_STR(llama_body, cache_type_v) },
	{ .name = "flash_attention", .type = MPM_F_ENUM, .offset = LOFF(flash_attention), .names = fa_names },
	{ .name = "tensor_split", .type = MPM_F_ANY },
	{ .name = "n_batch", .type = MPM_F_U64, .offset = LOFF(n_batch), .min = 1, .max = 1 << 20 },
	{ .name = "n_ubatch", .type = MPM_F_U64, .offset = LOFF(n_ubatch), .min = 1, .max = 1 << 20 },
	{ .name = "n_cpu_moe", .type = MPM_F_U64, .offset = LOFF(n_cpu_moe), .min = 0, .max = MP_MAX_LAYERS },
	{ .name = "cpu_moe", .type = MPM_F_BOOL, .offset = LOFF(cpu_moe) },
	{ .name = "kv_offload", .type = MPM_F_BOOL, .offset = LOFF(kv_offload) },
	{ .name = "mmap", .type = MPM_F_BOOL, .offset = LOFF(mmap) },
	{ .name = "swa_full", .type = MPM_F_BOOL, .offset = LOFF(swa_full) },
	{ .name = "repack", .type = MPM_F_BOOL, .offset = LOFF(repack) },
	{ .name = "backend", .type = MPM_F_ENUM, .offset = LOFF(backend), .names = backend_names },
	{ .name = "gpu_margin_bytes", .type = MPM_F_U64, .offset = LOFF(gpu_margin_bytes), .min = 0,
	  .max = UINT64_C(1) << 44 },
	{ .name = "host_device", .type = MPM_F_ANY },
};

/* A cache type by ggml's name (llama.cpp's -ctk/-ctv list), or an error naming field. */
static mp_status cache_type(const char *name, const char *field, uint32_t *out, mp_error *err)
{
	uint32_t t = mp_ggml_type_from_name(name);

	if (t < MP_GGML_TYPE_COUNT && mp_llamacpp_kv_type_ok(t)) {
		*out = t;
		return MP_OK;
	}
	return mp_fail(err, MP_EINVAL, field,
		       "'%s' is not a cache type llama.cpp takes: f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1 "
		       "(common/arg.cpp kv_cache_types)",
		       name);
}

static void refuse(mp_problems *p, const char *pointer, const char *name, const char *why, mp_error *err)
{
	char field[128];

	snprintf(field, sizeof(field), "%s/engine_options/%s", pointer, name);
	mp_problems_note(p, mp_fail(err, MP_EINVAL, field, "%s", why), err);
}

mp_status mpc_llamacpp_opts_decode(const cJSON *v, const char *pointer, mp_engine engine, mps_llamacpp_opts *out,
				   mp_error *err)
{
	mp_problems p = MP_PROBLEMS_INIT;
	llama_body b;
	char field[128];
	const cJSON *ts;
	bool ollama = engine == MP_ENGINE_OLLAMA;

	memset(out, 0, sizeof(*out));
	out->gpu_layers = -1;
	out->cache_type_k = out->cache_type_v = MP_GGML_TYPE_COUNT;
	out->flash_attention = -1;
	out->n_cpu_moe = -1;
	out->backend = -1;
	if (v == NULL)
		return MP_OK;
	snprintf(field, sizeof(field), "%s/engine_options", pointer);
	if (engine != MP_ENGINE_LLAMACPP && !ollama)
		return mp_fail(err, MP_EINVAL, field,
			       "engine_options are llama.cpp's and Ollama's launch knobs: they apply only with engine "
			       "llamacpp or ollama");
	if (!cJSON_IsObject(v))
		return mp_fail(err, MP_EINVAL, field,
			       "engine_options is an object: {\"gpu_layers\": 20, \"cache_type_k\": \"q8_0\", ...}");
	out->given = true;
	memset(&b, 0, sizeof(b));
	b.kv_offload = b.mmap = b.repack = true;
	b.program = -1;
	b.flash_attention = -1;
	b.backend = -1;
	if (mp_problems_note(&p, mpm_decode_fields(v, field, llama_fields, MPM_COUNT(llama_fields), &b, err), err) ==
	    MP_ENOMEM)
		return mp_problems_end(&p, err);
	out->program = b.program >= 0 ? (mps_llamacpp_program)b.program : MPS_LLAMACPP_SERVER;
	if (mpc_member(v, "gpu_layers"))
		out->gpu_layers = (int32_t)b.gpu_layers;
	out->flash_attention = b.flash_attention <= 0 ? -1 : b.flash_attention == 1 ? 1 : 0;
	out->n_batch = (uint32_t)b.n_batch;
	out->n_ubatch = (uint32_t)b.n_ubatch;
	if (mpc_member(v, "n_cpu_moe"))
		out->n_cpu_moe = (int32_t)b.n_cpu_moe;
	out->cpu_moe = b.cpu_moe;
	out->no_kv_offload = !b.kv_offload;
	out->no_mmap = !b.mmap;
	out->mmap_given = mpc_member(v, "mmap") != NULL;
	out->swa_full = b.swa_full;
	out->no_repack = !b.repack;
	out->backend = b.backend;
	out->gpu_margin_bytes = b.gpu_margin_bytes;
	out->margin_given = mpc_member(v, "gpu_margin_bytes") != NULL;
	out->host_device_given = mpc_member(v, "host_device") != NULL;
	if (b.cache_type_k[0]) {
		snprintf(field, sizeof(field), "%s/engine_options/cache_type_k", pointer);
		mp_problems_note(&p, cache_type(b.cache_type_k, field, &out->cache_type_k, err), err);
	}
	if (b.cache_type_v[0]) {
		snprintf(field, sizeof(field), "%s/engine_options/cache_type_v", pointer);
		mp_problems_note(&p, cache_type(b.cache_type_v, field, &out->cache_type_v, err), err);
	}
	if ((ts = mpc_member(v, "tensor_split")) != NULL) {
		int n = cJSON_IsArray(ts) ? cJSON_GetArraySize(ts) : -1;
		bool ok = n >= 1 && n <= MP_LLAMACPP_MAX_DEVICES;
		double sum = 0;

		for (int i = 0; ok && i < n; i++) {
			const cJSON *x = cJSON_GetArrayItem(ts, i);
			ok = cJSON_IsNumber(x) && x->valuedouble >= 0 && x->valuedouble <= 1e6;
			if (ok) {
				out->tensor_split[i] = x->valuedouble;
				sum += x->valuedouble;
			}
		}
		if (!ok || sum <= 0)
			refuse(&p, pointer, "tensor_split",
			       "tensor_split is -ts: a list of 1 to 16 proportions, one per GPU (0 to 1e6, not all 0)", err);
		else
			out->n_tensor_split = (uint32_t)n;
	}
	if (ollama) {
		/* what Ollama 0.32.15 has no setting for (llm/llama_server.go startLlamaServer passes none of it) */
		static const struct {
			const char *name, *why;
		} no_setting[] = {
			{ "program", "Ollama starts llama-server itself: program is llama.cpp's" },
			{ "tensor_split", "Ollama passes no -ts: llama-server splits the layers by each GPU's free memory" },
			{ "n_ubatch", "Ollama passes num_batch as both -b and -ub: give n_batch" },
			{ "n_cpu_moe", "Ollama has no setting for --n-cpu-moe" },
			{ "cpu_moe", "Ollama has no setting for --cpu-moe" },
			{ "kv_offload", "Ollama has no setting for -nkvo" },
			{ "swa_full", "Ollama has no setting for --swa-full" },
			{ "repack", "Ollama has no setting for --no-repack" },
			{ "backend", "Ollama picks the backend of the GPUs it finds (CUDA, ROCm): give the device" },
		};
		for (size_t i = 0; i < sizeof(no_setting) / sizeof(no_setting[0]); i++)
			if (mpc_member(v, no_setting[i].name))
				refuse(&p, pointer, no_setting[i].name, no_setting[i].why, err);
		if (out->cache_type_k != MP_GGML_TYPE_COUNT && out->cache_type_v != MP_GGML_TYPE_COUNT &&
		    out->cache_type_k != out->cache_type_v)
			refuse(&p, pointer, "cache_type_v",
			       "OLLAMA_KV_CACHE_TYPE sets one type for K and V (--cache-type-k and --cache-type-v alike)", err);
	}
	if (out->cpu_moe && out->n_cpu_moe >= 0)
		refuse(&p, pointer, "n_cpu_moe", "give cpu_moe (every layer's experts) or n_cpu_moe (the first N), not both",
		       err);
	return mp_problems_end(&p, err);
}

/* ----- the engine block ---------------------------------------------------------------------------------- */

/* How llama.cpp names slot s's buffers of a kind: the host's model buffer is CPU_Mapped under mmap (CUDA_Host
 * without it on a CUDA build with GPUs: pinned), its KV buffer CPU, its output and compute buffers CUDA_Host on a
 * CUDA build with GPUs (CPU else); GPU d is CUDA<d-1>, or RPC<d-1> for the CPU backend's RPC servers (which print as
 * RPC0[host:port]). */
typedef enum buf_kind { BUF_MODEL, BUF_KV, BUF_OUTPUT, BUF_COMPUTE } buf_kind;

static void slot_name(const mps_llamacpp_block *k, uint32_t s, buf_kind kind, char *buf, size_t len)
{
	bool cuda_host = k->backend == MP_LLAMACPP_CUDA && k->params.n_devices > 0;

	if (s > 0) {
		snprintf(buf, len, "%s%u", k->backend == MP_LLAMACPP_CUDA ? "CUDA" : "RPC", s - 1);
		return;
	}
	switch (kind) {
	case BUF_MODEL:
		snprintf(buf, len, "%s", k->params.mmap ? "CPU_Mapped" : cuda_host ? "CUDA_Host" : "CPU");
		return;
	case BUF_KV:
		snprintf(buf, len, "CPU");
		return;
	default:
		snprintf(buf, len, "%s", cuda_host ? "CUDA_Host" : "CPU");
		return;
	}
}

static void line(mpc_out *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void line(mpc_out *w, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	mpc_w_str(w, NULL, buf);
}

/* The lines llama.cpp 0c1e5709 prints about the buffers, in its printf formats (src/llama-model.cpp load_tensors,
 * src/llama-context.cpp, src/llama-kv-cache.cpp). */
static void log_lines(mpc_out *w, const mps_llamacpp_block *k)
{
	const mp_llamacpp_params *p = &k->params;
	const mp_llamacpp_plan *pl = &k->plan;
	uint32_t slots = p->n_devices + 1;
	char name[32];

	mpc_w_arr(w, "log_lines");
	if (p->n_devices > 0) {
		/* load_tensors: n_gpu = min(-ngl, n_layer); the output layer first, then n_gpu - 1 "repeating" */
		int n_gpu = (int)(pl->gpu_layers < p->n_layer ? pl->gpu_layers : p->n_layer), n_rep = n_gpu;
		if (n_rep > 0) {
			line(w, "load_tensors: offloading output layer to GPU");
			n_rep--;
		}
		line(w, "load_tensors: offloading %d repeating layers to GPU", n_rep);
		line(w, "load_tensors: offloaded %u/%u layers to GPU", pl->gpu_layers, p->n_layer + 1);
	}
	for (uint32_t i = 0; i < slots; i++) {
		uint32_t s = (i + 1) % slots; /* the GPUs' buffers, then the host's */
		if (pl->model_bytes[s] == 0)
			continue;
		slot_name(k, s, BUF_MODEL, name, sizeof(name));
		line(w, "load_tensors: %12s model buffer size = %8.2f MiB", name, (double)pl->model_bytes[s] / MIB);
	}
	slot_name(k, 0, BUF_OUTPUT, name, sizeof(name));
	line(w, "llama_context: %10s  output buffer size = %8.2f MiB", name, (double)pl->output_bytes / MIB);
	/* the caches: the full-attention one, then (an SWA model) the sliding-window one, each its buffers and its size */
	for (int swa = 0; swa <= 1; swa++) {
		uint32_t layers = swa ? pl->kv_layers_swa : pl->kv_layers - pl->kv_layers_swa;
		uint64_t kb = swa ? pl->k_bytes_swa : pl->k_bytes, vb = swa ? pl->v_bytes_swa : pl->v_bytes;
		uint32_t cells = swa ? pl->kv_size_swa : pl->n_ctx_seq;

		if (layers == 0)
			continue;
		for (uint32_t s = 0; s < slots; s++) {
			uint64_t b = swa ? pl->kv_bytes_swa[s] : pl->kv_bytes[s] - pl->kv_bytes_swa[s];
			if (b == 0)
				continue;
			slot_name(k, s, BUF_KV, name, sizeof(name));
			line(w, "llama_kv_cache: %10s KV buffer size = %8.2f MiB", name, (double)b / MIB);
		}
		line(w, "llama_kv_cache: size = %7.2f MiB (%6u cells, %3u layers, %2u/%u seqs), K (%s): %7.2f MiB, V (%s): "
			"%7.2f MiB",
		     (double)((float)(kb + vb) / (1024.0f * 1024.0f)), cells, layers, p->n_seq_max ? p->n_seq_max : 1,
		     pl->n_stream, mp_ggml_traits_of(p->type_k).name, (double)((float)kb / (1024.0f * 1024.0f)),
		     mp_ggml_traits_of(p->type_v).name, (double)((float)vb / (1024.0f * 1024.0f)));
	}
	for (uint32_t i = 0; i < slots; i++) {
		uint32_t s = (i + 1) % slots;
		if (pl->compute_bytes[s] <= 1)
			continue;
		slot_name(k, s, BUF_COMPUTE, name, sizeof(name));
		line(w, "sched_reserve: %10s compute buffer size = %8.2f MiB", name, (double)pl->compute_bytes[s] / MIB);
	}
	mpc_w_end(w);
}

static void bytes_or_null(mpc_out *w, const char *key, bool known, uint64_t v)
{
	if (known)
		mpc_w_u64(w, key, v);
	else
		mpc_w_null(w, key);
}

static void placement_write(mpc_out *w, const mps_llamacpp_block *k)
{
	const mp_llamacpp_params *p = &k->params;
	const mp_llamacpp_plan *pl = &k->plan;
	char name[32];

	mpc_w_obj(w, "placement");
	mpc_w_lit(w, "backend", k->backend == MP_LLAMACPP_CUDA ? "cuda" : "cpu");
	mpc_w_str(w, "backend_from", k->backend_from ? k->backend_from : "default");
	mpc_w_u64(w, "layers", p->n_layer);
	mpc_w_u64(w, "offloadable_layers", (uint64_t)p->n_layer + 1);
	mpc_w_i64(w, "gpu_layers", p->n_gpu_layers);
	mpc_w_str(w, "gpu_layers_from", k->gpu_layers_from ? k->gpu_layers_from : "request");
	mpc_w_u64(w, "offloaded_layers", pl->gpu_layers);
	mpc_w_bool(w, "output_layer_on_gpu", pl->layer_device[p->n_layer] != 0);
	if (k->have_device)
		mpc_w_i64(w, "max_gpu_layers", k->max_gpu_layers);
	else
		mpc_w_null(w, "max_gpu_layers");
	if (k->have_device) {
		mpc_w_u64(w, "max_context", k->max_context);
		mpc_w_u64(w, "context_limit", k->context_limit);
	} else {
		mpc_w_null(w, "max_context");
		mpc_w_null(w, "context_limit");
	}
	if (k->have_device || k->host_only)
		mpc_w_bool(w, "fits", k->fits);
	else
		mpc_w_null(w, "fits");
	bytes_or_null(w, "capacity_bytes", k->have_device, k->capacity_bytes);
	bytes_or_null(w, "cuda_context_bytes", k->have_device, k->context_bytes);
	bytes_or_null(w, "margin_bytes", k->have_device, k->margin_bytes);
	bytes_or_null(w, "budget_bytes", k->have_device, k->budget_bytes);
	mpc_w_arr(w, "devices");
	for (uint32_t s = 0; s <= p->n_devices; s++) {
		mpc_w_obj(w, NULL);
		slot_name(k, s, BUF_COMPUTE, name, sizeof(name));
		mpc_w_str(w, "device", s == 0 ? "host" : name);
		mpc_w_lit(w, "role", s == 0 ? "host" : "gpu");
		mpc_w_u64(w, "layers", pl->slot_layers[s]);
		mpc_w_bool(w, "output_layer", pl->layer_device[p->n_layer] == s);
		mpc_w_u64(w, "model_bytes", pl->model_bytes[s]);
		mpc_w_u64(w, "kv_cache_bytes", pl->kv_bytes[s]);
		mpc_w_u64(w, "compute_bytes", pl->compute_bytes[s]);
		mpc_w_u64(w, "output_bytes", s == 0 ? pl->output_bytes : 0);
		mpc_w_u64(w, "total_bytes", pl->total_bytes[s]);
		if (s == 0) {
			bytes_or_null(w, "memory_bytes", k->host_memory_bytes > 0, k->host_memory_bytes);
			if (k->host_memory_bytes > 0)
				mpc_w_bool(w, "fits", k->host_fits);
			else
				mpc_w_null(w, "fits");
			mpc_w_lit(w, "model_bytes_are", p->mmap ? "the mapped file (page cache)" : "allocated");
		} else {
			bytes_or_null(w, "budget_bytes", k->have_device, k->budget_bytes);
			if (k->have_device)
				mpc_w_bool(w, "fits", pl->total_bytes[s] <= k->budget_bytes);
			else
				mpc_w_null(w, "fits");
		}
		mpc_w_end(w);
	}
	mpc_w_end(w);
	mpc_w_end(w);

	mpc_w_obj(w, "context");
	mpc_w_u64(w, "n_ctx", pl->n_ctx);
	mpc_w_u64(w, "n_ctx_seq", pl->n_ctx_seq);
	mpc_w_u64(w, "n_seq_max", p->n_seq_max);
	mpc_w_u64(w, "n_stream", pl->n_stream);
	mpc_w_bool(w, "kv_unified", p->kv_unified);
	mpc_w_u64(w, "n_batch", pl->n_batch);
	mpc_w_u64(w, "n_ubatch", pl->n_ubatch);
	mpc_w_lit(w, "flash_attention", p->flash_attn ? "on" : "off");
	mpc_w_lit(w, "flash_attention_from", k->flash_attention_auto ? "auto" : "request");
	mpc_w_str(w, "cache_type_k", mp_ggml_traits_of(p->type_k).name);
	mpc_w_str(w, "cache_type_v", mp_ggml_traits_of(p->type_v).name);
	mpc_w_u64(w, "kv_cells_swa", pl->kv_size_swa);
	mpc_w_u64(w, "k_bytes", pl->k_bytes + pl->k_bytes_swa);
	mpc_w_u64(w, "v_bytes", pl->v_bytes + pl->v_bytes_swa);
	mpc_w_end(w);
}

static void phase_write(mpc_out *w, const char *prefix, const mp_llamacpp_phase *ph, uint32_t s)
{
	char key[64];

	snprintf(key, sizeof(key), "%s_bytes", prefix);
	mpc_w_num(w, key, ph->bytes[s]);
	snprintf(key, sizeof(key), "%s_flops", prefix);
	mpc_w_num(w, key, ph->flops[s]);
	snprintf(key, sizeof(key), "%s_seconds", prefix);
	if (ph->unknown[s])
		mpc_w_null(w, key);
	else
		mpc_w_num(w, key, ph->seconds[s]);
	snprintf(key, sizeof(key), "%s_bound", prefix);
	mpc_w_lit(w, key, ph->unknown[s] ? "unknown" : ph->seconds[s] == 0 ? "none" : ph->compute_bound[s] ? "compute"
										  : "memory");
}

static void performance_write(mpc_out *w, const mps_llamacpp_block *k)
{
	const mp_llamacpp_speed *sp = &k->speed;
	char name[32];

	mpc_w_obj(w, "performance");
	if (sp->decode.known) {
		mpc_w_num(w, "decode_step_seconds", sp->decode.seconds_total);
		mpc_w_num(w, "tokens_per_second_per_sequence", sp->decode_tokens_per_second_per_sequence);
		mpc_w_num(w, "tokens_per_second_total", sp->decode_tokens_per_second_total);
	} else {
		mpc_w_null(w, "decode_step_seconds");
		mpc_w_null(w, "tokens_per_second_per_sequence");
		mpc_w_null(w, "tokens_per_second_total");
	}
	if (sp->prefill.known) {
		mpc_w_num(w, "prefill_seconds", sp->prefill.seconds_total);
		mpc_w_num(w, "prefill_tokens_per_second", sp->prefill_tokens_per_second);
	} else {
		mpc_w_null(w, "prefill_seconds");
		mpc_w_null(w, "prefill_tokens_per_second");
	}
	mpc_w_u64(w, "sequences", k->speed_req.sequences);
	mpc_w_u64(w, "context_tokens", k->speed_req.context_tokens);
	mpc_w_u64(w, "prompt_tokens", k->speed_req.prompt_tokens);
	mpc_w_num(w, "expert_fraction_read_per_step", sp->expert_fraction_decode);
	mpc_w_str_or_null(w, "host_profile", k->host_name);
	mpc_w_arr(w, "devices");
	for (uint32_t s = 0; s <= k->params.n_devices; s++) {
		const mp_llamacpp_rate *r = &k->speed_req.rate[s];

		mpc_w_obj(w, NULL);
		slot_name(k, s, BUF_COMPUTE, name, sizeof(name));
		mpc_w_str(w, "device", s == 0 ? "host" : name);
		mpc_w_num_or_null(w, "memory_bandwidth_bytes_per_second", r->bandwidth_bytes_per_second);
		mpc_w_num_or_null(w, "flops_per_second", r->flops_per_second);
		phase_write(w, "decode", &sp->decode, s);
		phase_write(w, "prefill", &sp->prefill, s);
		mpc_w_end(w);
	}
	mpc_w_end(w);
	mpc_w_end(w);
}

static void ollama_write(mpc_out *w, const mps_inference_plan *p, const mps_llamacpp_block *k)
{
	const mps_ollama_settings *o = &k->ollama;

	mpc_w_obj(w, "ollama");
	mpc_w_str(w, "version", "0.32.15");
	mpc_w_obj(w, "options");
	mpc_w_u64(w, "num_ctx", o->num_ctx);
	mpc_w_i64(w, "num_gpu", o->num_gpu);
	mpc_w_u64(w, "num_batch", o->num_batch);
	if (!p->llama->params.mmap)
		mpc_w_bool(w, "use_mmap", false);
	mpc_w_end(w);
	mpc_w_obj(w, "environment");
	mpc_w_str_or_null(w, "OLLAMA_FLASH_ATTENTION", o->flash_attention_env);
	mpc_w_str_or_null(w, "OLLAMA_KV_CACHE_TYPE", o->kv_cache_type_env);
	{
		char np[16];
		snprintf(np, sizeof(np), "%u", o->num_parallel);
		mpc_w_str(w, "OLLAMA_NUM_PARALLEL", np);
	}
	mpc_w_end(w);
	mpc_w_lit(w, "num_batch_from", o->num_batch_auto ? "ollama_automatic" : "request");
	bytes_or_null(w, "default_num_ctx", o->default_num_ctx > 0, o->default_num_ctx);
	mpc_w_u64(w, "predicted_vram_bytes", o->predicted_vram_bytes);
	bytes_or_null(w, "available_bytes", o->available_bytes > 0, o->available_bytes);
	{
		char *mf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&mf, &len);

		if (f) {
			fprintf(f, "FROM %s\nPARAMETER num_ctx %u\nPARAMETER num_gpu %d\nPARAMETER num_batch %u\n",
				p->engine.model_arg, o->num_ctx, o->num_gpu, o->num_batch);
			if (!p->llama->params.mmap)
				fprintf(f, "PARAMETER use_mmap false\n");
		}
		if (f && fclose(f) == 0 && mf)
			mpc_w_str(w, "modelfile", mf);
		else
			w->failed = true;
		free(mf);
	}
	{
		char *cmd = mpc_engine_command(&p->engine);
		if (cmd == NULL) {
			w->failed = true;
			return;
		}
		mpc_w_str(w, "llama_server_command", cmd);
		free(cmd);
	}
	mpc_w_end(w);
}

char *mpc_plan_engine_command(const mps_inference_plan *p)
{
	const mps_llamacpp_block *k = p->llama;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (!p->have_engine)
		return NULL;
	if (k == NULL || k->engine != MP_ENGINE_OLLAMA)
		return mpc_engine_command(&p->engine);
	/* Ollama: the server's environment, then the options of a request */
	if ((f = open_memstream(&text, &len)) == NULL)
		return NULL;
	if (k->ollama.flash_attention_env)
		fprintf(f, "OLLAMA_FLASH_ATTENTION=%s ", k->ollama.flash_attention_env);
	if (k->ollama.kv_cache_type_env)
		fprintf(f, "OLLAMA_KV_CACHE_TYPE=%s ", k->ollama.kv_cache_type_env);
	fprintf(f, "OLLAMA_NUM_PARALLEL=%u ollama serve", k->ollama.num_parallel);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

void mpc_llamacpp_block_write(mpc_out *w, const char *key, const mps_inference_plan *p)
{
	const mps_llamacpp_block *k = p->llama;
	const mps_engine_block *b = &p->engine;
	char *cmd = mpc_plan_engine_command(p);

	if (cmd == NULL || k == NULL) {
		free(cmd);
		w->failed = true;
		return;
	}
	mpc_w_obj(w, key);
	mpc_w_str(w, "name", mp_engine_name(k->engine));
	mpc_w_str(w, "program", k->engine == MP_ENGINE_OLLAMA ? "ollama" : b->program);
	mpc_w_str(w, "source", b->source ? b->source : "");
	mpc_w_str(w, "command", cmd);
	free(cmd);
	mpc_w_str(w, "model_argument", b->model_arg);
	mpc_w_arr(w, "args");
	for (size_t i = 0; i < b->nargs; i++) {
		mpc_w_obj(w, NULL);
		mpc_w_str(w, "flag", b->args[i].flag);
		if (b->args[i].value[0])
			mpc_w_str(w, "value", b->args[i].value);
		else
			mpc_w_null(w, "value");
		mpc_w_str(w, "source", b->args[i].source);
		mpc_w_end(w);
	}
	mpc_w_end(w);
	placement_write(w, k);
	mpc_w_obj(w, "predicted");
	log_lines(w, k);
	mpc_w_end(w);
	performance_write(w, k);
	if (k->engine == MP_ENGINE_OLLAMA)
		ollama_write(w, p, k);
	mpc_w_arr(w, "notes");
	mpc_w_lit(w, NULL,
		  "placement.devices: llama.cpp's buffers per device as it allocates them (src/llama-model.cpp "
		  "load_tensors: the last gpu_layers layers, the output layer counted, on the GPUs split by -ts or each "
		  "GPU's memory); the model and KV buffers are llama.cpp's arithmetic to the byte (tests/ref/llamacpp: 595 "
		  "runs), the compute buffers a model of its graph reserve (within 10% in every reference run, all on "
		  "llama.cpp's CPU backend: warnings say where CUDA's differ). predicted.log_lines are the lines it will print, in its own formats (MiB = 2^20 bytes).");
	mpc_w_lit(w, NULL,
		  "budget_bytes per GPU = capacity x gpu_memory_utilization - the CUDA context - margin_bytes (llama.cpp's "
		  "--fit-target default, 1024 MiB, for the CUDA pool's flash-attention and cuBLAS scratch outside the "
		  "buffers); max_gpu_layers and max_context are the largest -ngl and -c whose buffers fit it.");
	if (k->engine == MP_ENGINE_OLLAMA)
		mpc_w_lit(w, NULL,
			  "Ollama 0.32.15 starts llama-server (ollama.llama_server_command, the arguments that set memory; "
			  "--model is the blob of the model) with num_ctx x OLLAMA_NUM_PARALLEL cells; give the options per "
			  "request or in a Modelfile (ollama.modelfile). Ollama vendors llama.cpp b10488; the buffers are "
			  "llama.cpp 0c1e5709's (b11312) arithmetic, the one memplan is tested against. Ollama itself was "
			  "not run: its rules are read from its source at v0.32.15.");
	mpc_w_lit(w, NULL,
		  "performance: roofline floors per device (max(bytes / memory bandwidth, FLOPs / peak): a GPU at its fp16 "
		  "rate, the host at its fp32 rate), the devices one after another; the host's layers need a host profile "
		  "(engine_options.host_device: a CPU calibration, POST /v1/calibrations with target cpu), else its time "
		  "is null. llama.cpp's offload of large host matmuls to the GPU during the prefill (weights copied over "
		  "PCIe) is not modelled.");
	mpc_w_end(w);
	mpc_w_end(w);
}
