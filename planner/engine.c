/*
 * engine.c: the serving engines' defaults by device and the start-up figures they print (KV cache memory,
 * blocks, tokens, concurrency), computed as each engine's source computes them (mp_engine.h names the files).
 * Pure arithmetic; no I/O. The engines round in Python floats and integer floor divisions: each step below says
 * which, so the figures match the printed ones to the engine's own rounding.
 */
#include <math.h>
#include <string.h>

#include "../core/mp_assert.h"
#include "memplan.h"

#define GIB 1073741824.0 /* 2^30: vLLM GiB_bytes, SGLang 1 << 30, TensorRT-LLM GB = 1 << 30 */
#define MIB 1048576.0

const char *mp_engine_name(mp_engine e)
{
	static const char *const names[] = {
	    [MP_ENGINE_NONE] = "none", [MP_ENGINE_VLLM] = "vllm", [MP_ENGINE_SGLANG] = "sglang",
	    [MP_ENGINE_TRTLLM] = "trtllm", [MP_ENGINE_LLAMACPP] = "llamacpp", [MP_ENGINE_OLLAMA] = "ollama",
	};
	MP_STATIC_ASSERT(MP_COUNT_OF(names) == MP_ENGINE_COUNT, "a name per mp_engine");

	return (unsigned)e < MP_ENGINE_COUNT ? names[e] : "invalid";
}

mp_engine mp_engine_from_name(const char *name)
{
	for (int e = 0; name && e < MP_ENGINE_COUNT; e++)
		if (strcmp(name, mp_engine_name((mp_engine)e)) == 0)
			return (mp_engine)e;
	return MP_ENGINE_COUNT;
}

/* "a100" in the name, ASCII case-insensitive (vLLM: "a100" not in current_platform.get_device_name().lower()). */
static bool name_has_a100(const char *name)
{
	static const char pat[] = "a100";

	for (const char *p = name ? name : ""; *p; p++) {
		size_t i = 0;

		while (i < 4 && p[i] && (p[i] == pat[i] || (p[i] >= 'A' && p[i] <= 'Z' && p[i] + 32 == pat[i])))
			i++;
		if (i == 4)
			return true;
	}
	return false;
}

/* SGLang _handle_gpu_memory_settings: (chunked_prefill_size, cuda_graph_max_bs) by the GPU's MiB. */
static void sglang_bucket(double mib, uint64_t tp, mp_engine_defaults *d)
{
	static const struct {
		double below_gib;
		uint64_t chunk, bs_small, bs_tp4;
		const char *what;
	} buckets[] = {
		{20, 2048, 8, 8, "below 20 GiB (T4, 4080)"},
		{35, 2048, 24, 80, "20-35 GiB (A10, 4090, 5090)"},
		{60, 4096, 32, 160, "35-60 GiB (A100 40GB, L40)"},
		{90, 8192, 256, 512, "60-90 GiB (H100, A100 80GB)"},
		{160, 8192, 256, 512, "90-160 GiB (H20, H200)"},
	};

	for (size_t i = 0; i < MP_COUNT_OF(buckets); i++)
		/* the first bucket above the memory: the rows ascend */
		if (MP_ALWAYS(i == 0 || buckets[i - 1].below_gib < buckets[i].below_gib) &&
		    mib < buckets[i].below_gib * 1024) {
			d->max_num_batched_tokens = buckets[i].chunk;
			d->cuda_graph_max_bs = tp < 4 ? buckets[i].bs_small : buckets[i].bs_tp4;
			d->device_class = buckets[i].what;
			return;
		}
	d->max_num_batched_tokens = 16384;
	d->cuda_graph_max_bs = 512;
	d->device_class = "160 GiB and more (B200, MI300)";
}

mp_status mp_engine_defaults_for(mp_engine e, uint64_t total_memory_bytes, const char *device_name, uint64_t tp,
                                 mp_engine_defaults *out, mp_error *err)
{
	memset(out, 0, sizeof(*out));
	if (tp == 0)
		tp = 1;
	switch (e) {
	case MP_ENGINE_NONE:
	case MP_ENGINE_VLLM:
		/* arg_utils.get_batch_defaults, UsageContext.OPENAI_API_SERVER (vllm serve); the A100 exception is
		 * PR #17885 (a larger budget lowered its throughput) */
		if ((double)total_memory_bytes >= 70 * GIB && !name_has_a100(device_name)) {
			out->max_num_batched_tokens = 8192;
			out->max_num_seqs = 1024;
			out->device_class = "70 GiB or more, not an A100";
		} else {
			out->max_num_batched_tokens = 2048;
			out->max_num_seqs = 256;
			out->device_class = total_memory_bytes == 0 ? "device unknown (vLLM's fallback: below 70 GiB)"
			                    : name_has_a100(device_name) ? "an A100"
			                                                 : "below 70 GiB";
		}
		out->memory_fraction = 0.9; /* CacheConfig.gpu_memory_utilization */
		out->block_size = 16;       /* CacheConfig.block_size on CUDA */
		return MP_OK;
	case MP_ENGINE_SGLANG: {
		double mib = (double)total_memory_bytes / MIB, reserved;

		out->block_size = 1; /* ServerArgs.page_size */
		if (total_memory_bytes == 0) {
			out->max_num_batched_tokens = 4096;
			out->cuda_graph_max_bs = 160;
			out->memory_fraction = 0.88;
			out->device_class = "device unknown (SGLang's fallback)";
			return MP_OK;
		}
		sglang_bucket(mib, tp, out);
		reserved = 512 + 1.5 * (double)(out->max_num_batched_tokens > 2048 ? out->max_num_batched_tokens : 2048) +
		           2 * (double)out->cuda_graph_max_bs + (double)tp / 8 * 1024;
		if (mib > 60 * 1024 && reserved < 10 * 1024)
			reserved = 10 * 1024;
		out->reserved_mib = reserved;
		/* round((gpu_mem - reserved_mem) / gpu_mem, 3): Python rounds half to even, the ties of which a
		 * ratio of MiB counts does not meet in practice */
		out->memory_fraction = round((mib - reserved) / mib * 1000) / 1000;
		return MP_OK;
	}
	case MP_ENGINE_TRTLLM:
		out->max_num_batched_tokens = 8192; /* max_num_tokens */
		out->max_num_seqs = 2048;           /* max_batch_size */
		out->memory_fraction = 0.9;         /* KvCacheConfig.free_gpu_memory_fraction */
		out->block_size = 32;               /* KvCacheConfig.tokens_per_block */
		out->device_class = "any device (TensorRT-LLM's defaults do not depend on it)";
		return MP_OK;
	case MP_ENGINE_LLAMACPP:
	case MP_ENGINE_OLLAMA:
		/* common_params n_ubatch 512 (Ollama: num_batch 512, passed as -b and -ub), one sequence */
		out->max_num_batched_tokens = 512;
		out->max_num_seqs = 1;
		out->memory_fraction = 1.0;
		out->block_size = MP_LLAMACPP_CTX_PAD;
		out->device_class = e == MP_ENGINE_OLLAMA ? "any device (Ollama's num_batch default, 512)"
							  : "any device (llama.cpp's -ub default, 512)";
		return MP_OK;
	default:
		return mp_fail(err, MP_EINVAL, "/engine", "engine must be vllm, sglang, trtllm, llamacpp or ollama");
	}
}

static uint64_t cdiv(uint64_t a, uint64_t b)
{
	return b ? a / b + (a % b != 0) : 0;
}

uint64_t mp_vllm_num_blocks(double available_bytes, uint64_t page_bytes, uint64_t layers)
{
	double a = floor(available_bytes);

	if (a <= 0 || page_bytes == 0 || layers == 0 || a >= 18446744073709551615.0)
		return 0;
	return (uint64_t)a / page_bytes / layers;
}

double mp_vllm_max_concurrency(uint64_t num_blocks, uint64_t block_size, uint64_t max_model_len)
{
	uint64_t per = cdiv(max_model_len, block_size);

	return per ? (double)num_blocks / (double)per : 0;
}

uint64_t mp_sglang_max_total_num_tokens(double total_gib, double after_weights_gib, double fraction,
                                        uint64_t cell_size)
{
	double rest = after_weights_gib - total_gib * (1 - fraction), t;

	if (cell_size == 0 || !(rest > 0))
		return 0;
	t = floor(rest * GIB / (double)cell_size);
	return t >= 18446744073709551615.0 ? 0 : (uint64_t)t;
}

uint64_t mp_trtllm_max_tokens(double available_bytes, uint64_t kv_size_per_token)
{
	double t;

	if (kv_size_per_token == 0 || !(available_bytes > 0))
		return 0;
	t = floor(available_bytes / (double)kv_size_per_token);
	return t >= 18446744073709551615.0 ? 0 : (uint64_t)t;
}

uint64_t mp_trtllm_blocks(uint64_t max_tokens, uint64_t tokens_per_block)
{
	return cdiv(max_tokens, tokens_per_block);
}

/* vLLM's KV cache groups: one group of every layer when they are of one kind; else groups of min(full, window)
 * layers, each kind's count rounded up to whole groups (kv_cache_utils._get_kv_cache_config_uniform_page_size,
 * padding layers included). */
static void vllm_groups(const mp_engine_inputs *in, uint64_t *groups, uint64_t *group_layers, uint64_t *full_groups,
                        uint64_t *window_groups)
{
	if (in->full_layers == 0 || in->window_layers == 0) {
		*groups = 1;
		*group_layers = in->full_layers + in->window_layers;
		*full_groups = in->full_layers ? 1 : 0;
		*window_groups = in->window_layers ? 1 : 0;
		return;
	}
	*group_layers = in->full_layers < in->window_layers ? in->full_layers : in->window_layers;
	*full_groups = cdiv(in->full_layers, *group_layers);
	*window_groups = cdiv(in->window_layers, *group_layers);
	*groups = *full_groups + *window_groups;
}

/* Blocks one request of len tokens takes in every group (FullAttentionSpec / SlidingWindowSpec
 * max_memory_usage_bytes over the page size). */
static uint64_t vllm_blocks_for(const mp_engine_inputs *in, uint64_t len, uint64_t full_groups, uint64_t window_groups)
{
	uint64_t b = full_groups * cdiv(len, in->block_size);

	if (window_groups) {
		uint64_t w = in->sliding_window ? in->sliding_window - 1 + in->max_num_batched_tokens : len;

		b += window_groups * (cdiv(w < len ? w : len, in->block_size) + 1);
	}
	return b;
}

static mp_status predict_vllm(const mp_engine_inputs *in, mp_engine_prediction *p, mp_error *err)
{
	uint64_t groups, gl, fg, wg, non_kv = in->weights_bytes, group_page, lo, hi;
	double requested = (double)in->total_memory_bytes * in->memory_fraction;

	if (!mp_add_u64(non_kv, in->activation_bytes, &non_kv) || !mp_add_u64(non_kv, in->non_torch_bytes, &non_kv) ||
	    !mp_mul_u64(in->kv_row_bytes, in->block_size, &p->page_bytes))
		return mp_fail(err, MP_EOVERFLOW, "", "the engine's memory figures overflow 64 bits");
	p->requested_memory_bytes = (uint64_t)requested;
	p->non_kv_cache_bytes = non_kv;
	p->available_kv_cache_bytes = (int64_t)p->requested_memory_bytes - (int64_t)non_kv;
	vllm_groups(in, &groups, &gl, &fg, &wg);
	p->kv_groups = groups;
	p->group_layers = gl;
	p->num_gpu_blocks = mp_vllm_num_blocks((double)p->available_kv_cache_bytes, p->page_bytes, gl);
	p->kv_cache_tokens = p->num_gpu_blocks / groups * in->block_size;
	p->blocks_per_request = vllm_blocks_for(in, in->max_model_len, fg, wg);
	p->max_concurrency = p->blocks_per_request ? (double)p->num_gpu_blocks / (double)p->blocks_per_request : 0;
	if (!mp_mul_u64(p->page_bytes, gl, &group_page) ||
	    !mp_mul_u64(p->blocks_per_request, group_page, &p->needed_kv_cache_bytes))
		return mp_fail(err, MP_EOVERFLOW, "", "the KV cache one request needs overflows 64 bits");
	p->serves_max_model_len = p->available_kv_cache_bytes > 0 &&
	                          p->needed_kv_cache_bytes <= (uint64_t)p->available_kv_cache_bytes;
	/* estimate_max_model_len: the largest length whose needed memory fits, by bisection over [1, max_model_len] */
	lo = 1;
	hi = in->max_model_len;
	p->estimated_max_model_len = 0;
	while (p->available_kv_cache_bytes > 0 && lo <= hi) {
		uint64_t mid = lo + (hi - lo) / 2, need;

		if (mp_mul_u64(vllm_blocks_for(in, mid, fg, wg), group_page, &need) &&
		    need <= (uint64_t)p->available_kv_cache_bytes) {
			p->estimated_max_model_len = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	{
		/* the utilisation at which the pool holds batch_size requests of max_model_len */
		double need = (double)non_kv + (double)in->batch_size * (double)p->needed_kv_cache_bytes;

		p->required_memory_fraction = in->total_memory_bytes ? need / (double)in->total_memory_bytes : 0;
	}
	return MP_OK;
}

static mp_status predict_sglang(const mp_engine_inputs *in, mp_engine_prediction *p, mp_error *err)
{
	uint64_t layers = in->full_layers + in->window_layers, page = in->block_size ? in->block_size : 1;
	double total, need;

	if (!mp_mul_u64(in->kv_row_bytes, layers, &p->cell_size_bytes))
		return mp_fail(err, MP_EOVERFLOW, "", "the KV cell size overflows 64 bits");
	/* get_available_gpu_memory after init_torch_distributed: free = total - CUDA context (and NCCL) */
	total = in->total_memory_bytes > in->context_bytes ? (double)(in->total_memory_bytes - in->context_bytes) / GIB
	                                                   : 0;
	p->total_gpu_memory_gib = total;
	p->available_after_weights_gib = total - (double)in->weights_bytes / GIB;
	p->rest_memory_gib = p->available_after_weights_gib - total * (1 - in->memory_fraction);
	p->max_total_num_tokens =
	    mp_sglang_max_total_num_tokens(total, p->available_after_weights_gib, in->memory_fraction, p->cell_size_bytes);
	p->max_total_num_tokens = p->max_total_num_tokens / page * page;
	p->kv_cache_tokens = p->max_total_num_tokens;
	if (!mp_mul_u64(p->max_total_num_tokens, p->cell_size_bytes / 2, &p->k_size_bytes))
		return mp_fail(err, MP_EOVERFLOW, "", "the KV pool overflows 64 bits");
	if (in->max_num_seqs)
		p->max_running_requests = in->max_num_seqs;
	else {
		double r = in->max_model_len ? floor((double)p->max_total_num_tokens / (double)in->max_model_len * 512) : 0;

		p->max_running_requests = r < 2048 ? 2048 : r > 4096 ? 4096 : (uint64_t)r;
	}
	p->max_concurrency = in->max_model_len ? (double)p->max_total_num_tokens / (double)in->max_model_len : 0;
	p->serves_max_model_len = p->max_total_num_tokens >= in->max_model_len && p->max_total_num_tokens > 0;
	/* weights + pool = fraction x total: the fraction whose pool holds batch_size x max_model_len tokens */
	need = (double)in->weights_bytes + (double)in->batch_size * (double)in->max_model_len * (double)p->cell_size_bytes;
	p->required_memory_fraction = total > 0 ? need / (total * GIB) : 0;
	return MP_OK;
}

static mp_status predict_trtllm(const mp_engine_inputs *in, mp_engine_prediction *p, mp_error *err)
{
	uint64_t layers = in->full_layers + in->window_layers, peak = in->weights_bytes;
	double free_bytes;

	if (!mp_mul_u64(in->kv_row_bytes, layers, &p->kv_size_per_token_bytes) ||
	    !mp_add_u64(peak, in->activation_bytes, &peak) || !mp_add_u64(peak, in->context_bytes, &peak) ||
	    !mp_add_u64(peak, in->non_torch_bytes, &peak))
		return mp_fail(err, MP_EOVERFLOW, "", "the engine's memory figures overflow 64 bits");
	p->peak_memory_bytes = peak;
	free_bytes = (double)in->total_memory_bytes - (double)peak;
	p->available_kv_cache_bytes = free_bytes > 0 ? (int64_t)(free_bytes * in->memory_fraction) : (int64_t)free_bytes;
	p->max_tokens = mp_trtllm_max_tokens(free_bytes * in->memory_fraction, p->kv_size_per_token_bytes);
	p->blocks_in_primary_pool = mp_trtllm_blocks(p->max_tokens, in->block_size);
	p->num_gpu_blocks = p->blocks_in_primary_pool;
	p->kv_cache_tokens = p->max_tokens;
	p->max_concurrency = in->max_model_len ? (double)p->max_tokens / (double)in->max_model_len : 0;
	p->serves_max_model_len = p->max_tokens >= in->max_model_len && p->max_tokens > 0;
	p->required_memory_fraction =
	    free_bytes > 0 ? (double)in->batch_size * (double)in->max_model_len * (double)p->kv_size_per_token_bytes /
	                         free_bytes
	                   : 0;
	return MP_OK;
}

mp_status mp_engine_predict(const mp_engine_inputs *in, mp_engine_prediction *out, mp_error *err)
{
	memset(out, 0, sizeof(*out));
	if (in->full_layers + in->window_layers == 0)
		return mp_fail(err, MP_EINVAL, "/model", "the engines' KV arithmetic needs at least one attention layer");
	if (in->block_size == 0)
		return mp_fail(err, MP_EINVAL, "/kv_block_size", "the block size must be at least 1 token");
	switch (in->engine) {
	case MP_ENGINE_NONE:
	case MP_ENGINE_VLLM:
		return predict_vllm(in, out, err);
	case MP_ENGINE_SGLANG:
		return predict_sglang(in, out, err);
	case MP_ENGINE_TRTLLM:
		return predict_trtllm(in, out, err);
	default:
		return mp_fail(err, MP_EINVAL, "/engine", "engine must be vllm, sglang, trtllm, llamacpp or ollama");
	}
}

/* Positions vLLM's rotary embedding caches (rotary_embedding.get_rope and its scaling classes). */
static uint64_t rope_positions(const mp_model *m)
{
	if (strcmp(m->rope_type, "linear") == 0 || strcmp(m->rope_type, "dynamic") == 0 ||
	    strcmp(m->rope_type, "yarn") == 0)
		return m->rope_scaled_max_position ? m->rope_scaled_max_position : m->max_position_embeddings;
	return m->max_position_embeddings;
}

mp_status mp_engine_weights_bytes(mp_engine e, const mp_model *m, const mp_weights *w, mp_dtype compute_dtype,
                                  uint64_t tp, uint64_t *out, mp_error *err)
{
	uint64_t total = w->total_bytes, a = mp_dtype_layout_of(compute_dtype ? compute_dtype : MP_DTYPE_BF16).block_bytes;

	*out = total;
	if (e == MP_ENGINE_TRTLLM)
		return MP_OK;
	if (tp == 0)
		tp = 1;
	if (m->rotary_dim) {
		uint64_t cache;
		uint64_t sets = m->rotary_buffer_sets ? m->rotary_buffer_sets : 1;

		/* one cos_sin_cache [positions, rotary_dim] per distinct embedding (get_rope's _ROPE_DICT), in the
		 * model dtype, on every rank */
		if (!mp_mul_u64(rope_positions(m), m->rotary_dim, &cache) || !mp_mul_u64(cache, a * sets, &cache) ||
		    !mp_add_u64(total, cache, &total))
			return mp_fail(err, MP_EOVERFLOW, mp_model_pointer(m), "the RoPE cache overflows 64 bits");
	}
	if (m->vocab_size % 64) {
		/* pad_vocab_size(vocab, 64): the padded rows take the class's bytes per row */
		uint64_t pad = 64 - m->vocab_size % 64;
		const mp_tensor_class cls[2] = {MP_TC_EMBEDDINGS, MP_TC_LM_HEAD};

		for (int i = 0; i < 2; i++) {
			const mp_weight_class_bytes *c = &w->cls[cls[i]];
			double extra = c->parameters ? (double)c->bytes * (double)(pad * m->hidden_size) / (double)c->parameters
			                             : 0;

			total += (uint64_t)ceil(extra);
		}
	}
	*out = total;
	return MP_OK;
}
