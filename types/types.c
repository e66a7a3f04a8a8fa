/*
 * types.c: the names the API gives the enums of types.h and the words of a capped list's last entry, so that the
 * decoders, the encoders and the service spell them alike. Tables only: no state, no allocation.
 */
#include <stdio.h>

#include "fleet_types.h"
#include "types.h"

bool mps_warnings_left_out(const mps_warnings *w, char *buf, size_t len)
{
	if (len)
		buf[0] = '\0';
	if (w == NULL || w->dropped == 0)
		return false;
	snprintf(buf, len, "warnings: %zu more %s left out (an answer keeps the first %d)", w->dropped,
		 w->dropped == 1 ? "was" : "were", MPS_MAX_WARNINGS);
	return true;
}

const char *mps_figure_name(mps_figure f)
{
	static const char *const names[MPS_FIG_COUNT] = {
		"weights_loaded_gib", "total_gpu_memory_gib", "free_gpu_memory_gib", "memory_fraction",
		"requested_memory_gib", "non_torch_memory_gib", "activation_peak_gib", "peak_torch_memory_gib",
		"available_kv_cache_gib", "num_gpu_blocks", "kv_cache_tokens", "max_concurrency",
		"needed_kv_cache_gib", "estimated_max_model_len_tokens", "block_size_tokens",
		"available_after_weights_gib", "k_cache_gib", "v_cache_gib", "available_after_pool_gib",
		"max_running_requests", "chunked_prefill_size_tokens", "context_len_tokens", "kv_size_per_token_bytes",
		"kv_cache_bytes", "cuda_graph_gib", "kv_cache_gib",
	};

	return (unsigned)f < MPS_FIG_COUNT ? names[f] : "invalid";
}

const char *mps_device_label(const mp_store_device *d)
{
	return d->id[0] ? d->id : d->name[0] ? d->name : "the inline profile";
}

const char *mps_obs_term_name(mps_obs_term t)
{
	switch (t) {
	case MPS_OBS_NON_TORCH: return "non_torch_bytes";
	case MPS_OBS_CONTEXT: return "context_bytes";
	case MPS_OBS_TERM_COUNT: break;
	}
	return "invalid";
}

const char *mps_llama_figure_name(mps_llama_fig f)
{
	static const char *const names[MPS_LF_COUNT] = {
		"model_buffer_mib", "kv_buffer_mib", "compute_buffer_mib", "output_buffer_mib", "kv_size_mib", "k_mib",
		"v_mib", "kv_cells", "offloaded_layers", "n_ctx", "n_ctx_seq", "n_batch", "n_ubatch", "n_seq_max",
		"default_num_ctx", "launch_ctx", "launch_parallel", "launch_gpu_layers", "launch_batch", "launch_ubatch",
	};

	return (unsigned)f < MPS_LF_COUNT ? names[f] : "invalid";
}
