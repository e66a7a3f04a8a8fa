/*
 * engine.c: the serving engines' defaults by device and the start-up figures they print (KV cache memory,
 * blocks, tokens, concurrency), computed as each engine's source computes them (mp_engine.h names the files).
 * Pure arithmetic; no I/O. The engines round in Python floats and integer floor divisions: each step below says
 * which, so the figures match the printed ones to the engine's own rounding.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/mp_assert.h"
#include "memplan.h"

#define GIB 1073741824.0 /* 2^30: vLLM GiB_bytes, SGLang 1 << 30, TensorRT-LLM GB = 1 << 30 */
#define MIB 1048576.0

#define MIB_U UINT64_C(1048576)

/* The release lines, newest first per engine. The figures of each row are read from that release's source (its
 * `source`); the memory terms outside PyTorch are the public start-up logs' (bench/RESULTS.md, the engine table),
 * whose reports tests/data/engines/README.md names. */
static const mp_engine_version versions[] = {
	{.engine = MP_ENGINE_VLLM, .name = "0.33", .release = "0.33.0",
	 .source = "vLLM 0.33.0: vllm/config/cache.py (gpu_memory_utilization 0.92), vllm/v1/worker/utils.py "
		   "(request_memory: ceil), vllm/v1/worker/gpu_worker.py (init_device: NCCL and cuBLAS before the "
		   "snapshot; determine_available_memory: CUDA-graph estimate), vllm/utils/mem_utils.py "
		   "(memory_profiling), vllm/v1/core/kv_cache_planning.py (get_kv_cache_configs)",
	 .budget = MP_BUDGET_VLLM_V1_CONSUMED, .memory_fraction = 0.92, .block_size = 16, .mla_block_size = 16,
	 .mla_block_size_sm100 = 32,
	 /* platforms/cuda.py _get_backend_priorities on sm90: FLASH_ATTN_MLA (MultipleOf(16); its
	  * supported_kv_cache_dtypes auto, float16, bfloat16) then FLASHMLA ([64], fp8 and fp8_e4m3 too); on sm100
	  * FLASHINFER_MLA ([32, 64], fp8 too) first either way. No MLA backend lists fp8_e5m2. */
	 .mla_block_size_fp8 = 64, .mla_no_fp8_e5m2 = true,
	 /* config/vllm.py __post_init__: attention_chunk_size without the env flag sets
	  * need_disable_hybrid_kv_cache_manager; kv_cache_utils.unify_hybrid_kv_cache_specs makes them full */
	 .chunked_local_unified = true,
	 /* quantization/mxfp4.py GptOssMxfp4Config.override_quantization_method: quant_method mxfp4, model_type gpt_oss */
	 .mxfp4_experts_name = "gpt_oss_mxfp4",
	 /* the attention backends' kernel block sizes: multiples of 16 (FLASH_ATTN, FLASHINFER) */
	 .block_size_mask = (UINT64_C(1) << 4) | (UINT64_C(1) << 5) | (UINT64_C(1) << 6) | (UINT64_C(1) << 7) |
			    (UINT64_C(1) << 8),
	 .non_torch_bytes = 64 * MIB_U, .nccl_bytes_per_peer = 256 * MIB_U, .custom_allreduce_bytes = 64 * MIB_U,
	 .nccl_in_budget = false, .context_in_budget = false,
	 .cuda_graph_base_bytes = 276 * MIB_U, .cuda_graph_bytes_per_size = 6 * MIB_U,
	 .has_bitsandbytes = false, .has_gguf = false, .no_prefix_flags = true, .chunked_prefill_flag = false,
	 .has_nvfp4 = true, .fp8_kv_name = "fp8", .awq_name = "auto_awq", .gptq_name = "auto_gptq"},
	{.engine = MP_ENGINE_VLLM, .name = "0.11", .release = "0.11.0",
	 .source = "vLLM 0.11.0: vllm/engine/arg_utils.py (get_batch_defaults), vllm/v1/worker/gpu_worker.py "
		   "(requested_memory: int; the snapshot before init_worker_distributed_environment), "
		   "vllm/utils/__init__.py (memory_profiling), vllm/v1/core/kv_cache_utils.py",
	 .budget = MP_BUDGET_VLLM_V1, .memory_fraction = 0.9, .block_size = 16, .mla_block_size = 64,
	 .mla_block_size_sm100 = 128,
	 .block_size_mask = (UINT64_C(1) << 0) | (UINT64_C(1) << 3) | (UINT64_C(1) << 4) | (UINT64_C(1) << 5) |
			    (UINT64_C(1) << 6) | (UINT64_C(1) << 7),
	 .non_torch_bytes = 160 * MIB_U, .nccl_bytes_per_peer = 256 * MIB_U, .custom_allreduce_bytes = 64 * MIB_U,
	 .nccl_in_budget = true, .context_in_budget = false,
	 .has_bitsandbytes = true, .has_gguf = true, .no_prefix_flags = true, .chunked_prefill_flag = false,
	 .has_nvfp4 = true,
	 /* config/__init__.py VllmConfig.__post_init__: chunked local attention disables the hybrid manager */
	 .chunked_local_unified = true,
	 /* the checkpoint's quant_method, Mxfp4Config (gpt-oss came in 0.10.1) */
	 .mxfp4_experts_name = "mxfp4",
	 /* awq.py, gptq.py get_supported_act_dtypes: [torch.half] */
	 .awq_needs_float16 = true, .gptq_needs_float16 = true,
	 .fp8_kv_name = "fp8", .awq_name = "awq", .gptq_name = "gptq"},
	{.engine = MP_ENGINE_VLLM, .name = "0.7", .release = "0.7.2",
	 .source = "vLLM 0.7.2 (the V0 engine, 0.7's default): vllm/worker/worker.py (init_device: the free memory "
		   "taken after the CUDA context and before init_worker_distributed_environment; "
		   "determine_num_available_blocks: total x util - (weights + non-torch increase + torch peak "
		   "increase)), vllm/utils.py (MemorySnapshot, memory_profiling), vllm/worker/model_runner.py "
		   "(profile_run), vllm/engine/arg_utils.py (--block-size choices 8 to 128)",
	 .budget = MP_BUDGET_VLLM_V0, .memory_fraction = 0.9, .block_size = 16, .mla_block_size = 16,
	 .mla_block_size_sm100 = 16,
	 .block_size_mask = (UINT64_C(1) << 3) | (UINT64_C(1) << 4) | (UINT64_C(1) << 5) | (UINT64_C(1) << 6) |
			    (UINT64_C(1) << 7),
	 /* the non-torch increase over the baseline on one GPU: the kernels CUDA loads lazily and cuBLAS's handle
	  * during the profile (V0 0.7-0.8 start-up logs: "non_torch_memory takes 0.06GiB" to 0.08) */
	 .non_torch_bytes = 64 * MIB_U, .nccl_bytes_per_peer = 256 * MIB_U, .custom_allreduce_bytes = 64 * MIB_U,
	 .nccl_in_budget = true, .context_in_budget = false,
	 .has_bitsandbytes = true, .has_gguf = true, .no_prefix_flags = false, .chunked_prefill_flag = true,
	 .awq_needs_float16 = true, .gptq_needs_float16 = true,
	 .fp8_kv_name = "fp8", .awq_name = "awq", .gptq_name = "gptq"},
	{.engine = MP_ENGINE_VLLM, .name = "0.6", .release = "0.6.4.post1",
	 .source = "vLLM 0.6.4: vllm/worker/worker.py (determine_num_available_blocks: total x util - peak, the "
		   "CUDA context inside: non_torch_memory is all CUDA memory less torch's; 0.6.5 and 0.6.6 measure it "
		   "over a baseline as 0.7 does), vllm/config.py (SchedulerConfig: max_num_batched_tokens >= max_model_len "
		   "without chunked prefill), vllm/engine/arg_utils.py (--block-size choices 8, 16, 32)",
	 .budget = MP_BUDGET_VLLM_V0, .memory_fraction = 0.9, .block_size = 16, .mla_block_size = 0,
	 .block_size_mask = (UINT64_C(1) << 3) | (UINT64_C(1) << 4) | (UINT64_C(1) << 5),
	 .non_torch_bytes = 0, .nccl_bytes_per_peer = 256 * MIB_U, .custom_allreduce_bytes = 64 * MIB_U,
	 /* V0's non_torch_memory, the CUDA context (torch 2.5, CUDA 12 lazy loading) inside: 0.35 GiB on one GPU
	  * (vllm #10517, "Memory profiling results") */
	 .nccl_in_budget = true, .context_in_budget = true, .context_bytes = 375809638,
	 .has_bitsandbytes = true, .has_gguf = true, .no_prefix_flags = false, .chunked_prefill_flag = true,
	 .awq_needs_float16 = true, .gptq_needs_float16 = true,
	 .fp8_kv_name = "fp8", .awq_name = "awq", .gptq_name = "gptq"},
	{.engine = MP_ENGINE_SGLANG, .name = "0.5", .release = "0.5.23",
	 .source = "SGLang 0.5.23: python/sglang/srt/arg_groups/memory_hook.py (handle_gpu_memory_settings, "
		   "reserve_for_graph_mb), python/sglang/srt/model_executor/model_runner.py, "
		   "python/sglang/srt/layers/quantization (awq: float16; gptq_marlin on CUDA)",
	 .budget = MP_BUDGET_SGLANG, .memory_fraction = 0.95, .block_size = 1,
	 .non_torch_bytes = 0, .nccl_bytes_per_peer = 256 * MIB_U, .custom_allreduce_bytes = 64 * MIB_U,
	 .nccl_in_budget = false, .has_bitsandbytes = true, .has_gguf = true, .has_nvfp4 = true, .no_prefix_flags = false,
	 .awq_needs_float16 = true, .gptq_marlin_only = true, .chunk_divisible_by_page = true,
	 /* configs/model_config.py mm_disabled_models: Gemma3ForConditionalGeneration, Llama4ForConditionalGeneration,
	  * Step3VLForConditionalGeneration (and Inkling's, which memplan reads as a decoder) */
	 .multimodal_off_types = "gemma3 llama4 step3_vl",
	 .fp8_kv_name = "fp8_e4m3", .awq_name = "awq", .gptq_name = "gptq_marlin"},
	{.engine = MP_ENGINE_TRTLLM, .name = "1.2", .release = "1.2.1",
	 .source = "TensorRT-LLM 1.2.1 (read from source; its wheel is not on PyPI): "
		   "tensorrt_llm/_torch/pyexecutor/_util.py (KvCacheCreator), tensorrt_llm/llmapi/llm_args.py "
		   "(KvCacheConfig, TorchLlmArgs), tensorrt_llm/commands/serve.py",
	 .budget = MP_BUDGET_TRTLLM, .memory_fraction = 0.9, .block_size = 32,
	 .nccl_bytes_per_peer = 256 * MIB_U, .custom_allreduce_bytes = 64 * MIB_U, .nccl_in_budget = true,
	 .has_nvfp4 = true, .fp8_kv_name = "fp8", .awq_name = "", .gptq_name = ""},
};

#define NVERSIONS (sizeof(versions) / sizeof(versions[0]))

const mp_engine_version *mp_engine_versions(size_t *n)
{
	*n = NVERSIONS;
	return versions;
}

const mp_engine_version *mp_engine_version_find(mp_engine e, const char *name)
{
	const mp_engine_version *best = NULL;

	if (e == MP_ENGINE_NONE)
		e = MP_ENGINE_VLLM;
	if (name && name[0] == 'v')
		name++;
	for (size_t i = 0; i < NVERSIONS; i++) {
		size_t n;

		if (versions[i].engine != e)
			continue;
		if (name == NULL || name[0] == '\0')
			return &versions[i];
		n = strlen(versions[i].name);
		/* "0.33" names its line, and so do "0.33.0" and "v0.33.1"; "0.3" does not match "0.33" */
		if (strncmp(name, versions[i].name, n) == 0 && (name[n] == '\0' || name[n] == '.') &&
		    (best == NULL || strlen(best->name) < n))
			best = &versions[i];
	}
	return best;
}

void mp_engine_version_names(mp_engine e, char *buf, size_t len)
{
	size_t used = 0;

	if (len == 0)
		return;
	buf[0] = '\0';
	if (e == MP_ENGINE_NONE)
		e = MP_ENGINE_VLLM;
	for (size_t i = 0; i < NVERSIONS; i++) {
		int n;

		if (versions[i].engine != e)
			continue;
		n = snprintf(buf + used, len - used, "%s%s (%s)", used ? ", " : "", versions[i].name,
			     versions[i].release);
		if (n < 0 || (size_t)n >= len - used)
			return;
		used += (size_t)n;
	}
}

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

/* SGLang 0.5.23 handle_gpu_memory_settings: (chunked_prefill_size, decode max_bs) by the GPU's MiB. */
static void sglang_bucket(double mib, uint64_t tp, mp_engine_defaults *d)
{
	static const struct {
		double below_gib;
		uint64_t chunk, bs_small, bs_tp4;
		const char *what;
	} buckets[] = {
		{20, 2048, 8, 8, "below 20 GiB (T4, 4080)"},
		{35, 4096, 48, 160, "20-35 GiB (A10, 4090, 5090)"},
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

/* SGLang generate_prefill_cuda_graph_batch_sizes(max_bs): how many of its capture sizes are <= max_bs. */
static uint64_t sglang_prefill_sizes(uint64_t max_bs)
{
	static const struct {
		uint64_t from, to, step;
	} runs[] = {{4, 32, 4}, {48, 256, 16}, {288, 512, 32}, {576, 1024, 64}, {1280, 4096, 256}, {4608, UINT64_MAX, 512}};
	uint64_t n = 0;

	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
		for (uint64_t v = runs[i].from; v <= runs[i].to && v <= max_bs; v += runs[i].step)
			n++;
	return n;
}

mp_status mp_engine_defaults_at(const mp_engine_version *v, uint64_t total_memory_bytes, const char *device_name,
                                uint64_t tp, const mp_engine_launch *launch, mp_engine_defaults *out, mp_error *err)
{
	static const mp_engine_launch none;
	const mp_engine_launch *l = launch ? launch : &none;

	memset(out, 0, sizeof(*out));
	if (v == NULL)
		return mp_fail(err, MP_EINVAL, "/engine", "engine must be vllm, sglang or trtllm");
	out->version = v;
	out->device_memory_bytes = total_memory_bytes;
	if (tp == 0)
		tp = 1;
	out->memory_fraction = v->memory_fraction;
	out->block_size = v->block_size;
	switch (v->engine) {
	case MP_ENGINE_NONE:
	case MP_ENGINE_VLLM:
		/* arg_utils.get_batch_defaults, UsageContext.OPENAI_API_SERVER (vllm serve); the A100 exception is
		 * PR #17885 (a larger budget lowered its throughput); 0.33 adds the 160 GiB tier (B200) */
		if (v->budget == MP_BUDGET_VLLM_V1_CONSUMED && (double)total_memory_bytes >= 160 * GIB) {
			out->max_num_batched_tokens = 16384;
			out->max_num_seqs = 1024;
			out->device_class = "160 GiB or more";
		} else if ((double)total_memory_bytes >= 70 * GIB && !name_has_a100(device_name)) {
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
		if (v->budget == MP_BUDGET_VLLM_V0) {
			/* V0 SchedulerConfig: without chunked prefill max(max_model_len, 2048); 256 sequences */
			out->max_num_batched_tokens = 2048;
			out->max_num_seqs = 256;
			out->device_class = "V0: max(max_model_len, 2048) without chunked prefill, any device";
		}
		return MP_OK;
	case MP_ENGINE_SGLANG: {
		double mib = (double)total_memory_bytes / MIB, reserved;
		uint64_t c, bs, pbs;

		if (total_memory_bytes == 0) {
			out->max_num_batched_tokens = 4096;
			out->cuda_graph_max_bs = 160;
			out->device_class = "device unknown (SGLang's fallback)";
			return MP_OK; /* memory_fraction: the row's 0.95 */
		}
		sglang_bucket(mib, tp, out);
		if (l->max_running_requests && out->cuda_graph_max_bs > l->max_running_requests)
			out->cuda_graph_max_bs = l->max_running_requests;
		c = l->chunk ? l->chunk : out->max_num_batched_tokens;
		pbs = l->mla && c > 8192 ? 8192 : c;
		out->prefill_graph_sizes = l->vit_hidden ? 0 : sglang_prefill_sizes(pbs);
		bs = out->cuda_graph_max_bs;
		reserved = 512 + 1.5 * (double)(c > 2048 ? c : 2048) + (double)tp / 8 * 1024 + 2 * (double)bs +
		           (l->mla ? 1536 : 8 * (double)out->prefill_graph_sizes);
		if (mib > 60 * 1024 && reserved < 10 * 1024)
			reserved = 10 * 1024;
		out->reserved_mib = reserved;
		/* round((gpu_mem - reserved_mem) / gpu_mem, 3): Python rounds half to even, the ties of which a
		 * ratio of MiB counts does not meet in practice */
		out->memory_fraction = round((mib - reserved) / mib * 1000) / 1000;
		if (l->vit_hidden) {
			/* adjust_mem_fraction_for_vlm: 0.95, then 10% per doubling of the ViT's layers x hidden^2
			 * over ViT-L/14's (24 x 1024^2), clamped to [0.8, 1.05] */
			double ratio = (double)l->vit_layers * (double)l->vit_hidden * (double)l->vit_hidden /
			               (24.0 * 1024 * 1024), f = 1.0 - 0.1 * (ratio - 1.0);

			f = f < 0.8 ? 0.8 : f > 1.05 ? 1.05 : f;
			out->memory_fraction *= 0.95 * f;
			out->device_class = "a multimodal model (SGLang's ViT adjustment)";
		}
		return MP_OK;
	}
	case MP_ENGINE_TRTLLM:
		out->max_num_batched_tokens = 8192; /* max_num_tokens */
		out->max_num_seqs = 2048;           /* max_batch_size */
		out->device_class = "any device (TensorRT-LLM's defaults do not depend on it)";
		return MP_OK;
	default:
		return mp_fail(err, MP_EINVAL, "/engine", "engine must be vllm, sglang, trtllm, llamacpp or ollama");
	}
}

/* llama.cpp and Ollama have no release rows (their defaults do not move between the builds memplan is tested
 * against: common/common.h of llama.cpp 0c1e5709; Ollama's api/types.go): common_params n_ubatch 512 (Ollama:
 * num_batch 512, passed as -b and -ub), one sequence, the context padded to MP_LLAMACPP_CTX_PAD. */
static mp_status llamacpp_defaults(mp_engine e, uint64_t total_memory_bytes, mp_engine_defaults *out)
{
	memset(out, 0, sizeof(*out));
	out->device_memory_bytes = total_memory_bytes;
	out->max_num_batched_tokens = 512;
	out->max_num_seqs = 1;
	out->memory_fraction = 1.0;
	out->block_size = MP_LLAMACPP_CTX_PAD;
	out->device_class = e == MP_ENGINE_OLLAMA ? "any device (Ollama's num_batch default, 512)"
						  : "any device (llama.cpp's -ub default, 512)";
	return MP_OK;
}

mp_status mp_engine_defaults_for(mp_engine e, uint64_t total_memory_bytes, const char *device_name, uint64_t tp,
                                 mp_engine_defaults *out, mp_error *err)
{
	if ((unsigned)e >= MP_ENGINE_COUNT) {
		memset(out, 0, sizeof(*out));
		return mp_fail(err, MP_EINVAL, "/engine", "engine must be vllm, sglang, trtllm, llamacpp or ollama");
	}
	(void)tp;
	if (e == MP_ENGINE_LLAMACPP || e == MP_ENGINE_OLLAMA)
		return llamacpp_defaults(e, total_memory_bytes, out);
	return mp_engine_defaults_at(mp_engine_version_find(e, NULL), total_memory_bytes, device_name, tp, NULL, out,
	                             err);
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

static void add_term(mp_engine_prediction *p, const char *name, uint64_t bytes, bool in_budget, const char *source)
{
	if (p->nterms < MP_ENGINE_MAX_TERMS)
		p->terms[p->nterms++] = (mp_engine_term){name, bytes, in_budget, source};
}

/* vLLM 0.33 CompilationConfig: capture sizes [1, 2, 4] + range(8, 256, 8) + range(256, max + 1, 16), max =
 * min(2 x max_num_seqs, 512) (vllm/config/compilation.py, 0.33.0). */
static uint64_t vllm_capture_sizes(uint64_t max_num_seqs)
{
	uint64_t max = max_num_seqs * 2 < 512 ? max_num_seqs * 2 : 512, n = 0;

	if (max_num_seqs == 0)
		max = 512;
	for (uint64_t s = 1; s <= 4 && s <= max; s *= 2)
		n++;
	for (uint64_t s = 8; s < 256 && s <= max; s += 8)
		n++;
	for (uint64_t s = 256; s <= max; s += 16)
		n++;
	return n;
}

/*
 * The terms observations measured in place of the modelled ones they cover (mp_engine_predict): vLLM's terms
 * inside the budget but the profile's peak, SGLang's outside it; *in_b and *out_b follow.
 */
static void observed_terms(const mp_engine_inputs *in, mp_engine_prediction *p, uint64_t *in_b, uint64_t *out_b)
{
	bool vllm = in->engine == MP_ENGINE_VLLM || in->engine == MP_ENGINE_NONE;
	size_t k = 0;

	if (!vllm && in->engine != MP_ENGINE_SGLANG)
		return;
	for (size_t i = 0; i < p->nterms; i++) {
		const mp_engine_term *t = &p->terms[i];
		bool covered = vllm ? t->in_budget && strcmp(t->name, "profile_activation") != 0 &&
					      strcmp(t->name, "sampler") != 0
				    : !t->in_budget;

		if (!covered)
			p->terms[k++] = *t;
	}
	p->nterms = k;
	if (vllm) {
		p->cuda_graph_bytes = 0;
		add_term(p, "observed_non_torch", in->observed_bytes, true,
			 "the median of observations of this release on this device: what the budget held beyond the "
			 "weights and the profile's peak (service/mps_observe.c)");
		*in_b = p->profile_peak_bytes + in->observed_bytes;
	} else {
		add_term(p, "observed_context", in->observed_bytes, false,
			 "the median of observations of this release on this device: the memory taken before the weights "
			 "(service/mps_observe.c)");
		*out_b = in->observed_bytes;
	}
}

/*
 * vLLM V0's profile run (vLLM 0.6.4-0.7.x, vllm/worker/model_runner.py profile_run; worker.py
 * determine_num_available_blocks reads torch's allocated_bytes.all.peak), for a dense decoder with a gated MLP: the
 * peak per rank of the two moments torch's allocator sees, into *forward (every rank) and *sampler (the driver, rank
 * 0, the only one that samples: execute_model returns before the sampler elsewhere), each with what persists through
 * both (cuBLAS's workspace, allocated at the first matmul; the int64 input_tokens, input_positions and slot_mapping
 * of the T = max_num_batched_tokens dummy tokens).
 * The forward, per token, at the largest of three moments of a decoder layer (models/llama.py, qwen2.py 0.6.4:
 * LlamaModel.forward keeps the previous layer's output bound in its loop, which input_layernorm's fused_add_rms_norm
 * normalises in place, and the residual; h, q, kv, F per rank, the all-reduced output a second h where TP > 1):
 *   attention, at o_proj: previous output + residual + qkv_proj's output (q + 2 kv) + the attention output (q) +
 *     o_proj's output (h) [+ h];
 *   SiluAndMul: previous output + residual + the normed attention output (3 h) + gate_up's output (2 F) + act's (F)
 *     (LlamaMLP.forward rebinds x, so gate_up is freed before down_proj);
 *   down_proj: 3 h + act's output (F) + down_proj's (h) [+ h], and gate_up's (2 F) where the MLP keeps it bound
 *     (qwen2.py's Qwen2MLP: gate_up, _ = self.gate_up_proj(x); llama.py rebinds x).
 * The sampler (layers/sampler.py 0.6.4, SamplingParams(top_p=0.99, top_k=vocab - 1) in profile_run): the
 * logits of the last token of each of R = min(max_num_seqs, T) dummy sequences, over the padded vocabulary in the
 * model dtype (execute_model keeps them), with the model's final hidden states (T x h) still bound; its peak is
 * _apply_top_k_top_p's logits.sort: the float32 logits (4 B) and the sort's float32 values and int64 indices (12 B),
 * and inside ATen's segmented sort the int64 iota of source indices (8 B) and cub's SortPairs buffers for keys and
 * values (12 B): 36 B per logit over the model dtype's.
 * Worked example (vllm #10517, Llama-3.1-8B on an RTX 3090, T = 20,000): 3 x 8,192 + 3 x 28,672 = 110,592 B a
 * token + 24 B of inputs, x 20,000, + 8.125 MiB of cuBLAS workspace = 2,220,839,680 B (2.0683 GiB), which with the
 * weights' 14.9888 GiB vLLM prints as peak_torch_memory=17.06GiB. False on overflow.
 */
static bool v0_profile(const mp_engine_inputs *in, uint64_t tp, uint64_t *forward, uint64_t *sampler)
{
	uint64_t a = in->compute_bytes, h = in->hidden_size, q = in->q_width / tp, kv = in->kv_width / tp,
		 f = in->ffn_size / tp, ar = tp > 1 ? h : 0, T = in->max_num_batched_tokens, attn, mlp, down, tok,
		 reqs, vpad = (in->vocab_size + 63) / 64 * 64, persist, x;
	bool ok;

	attn = 2 * h + q + 2 * kv + q + h + ar;
	mlp = 3 * h + 3 * f;
	down = 3 * h + (in->gate_up_kept ? 2 * f : 0) + f + h + ar;
	tok = attn > mlp ? attn : mlp;
	tok = tok > down ? tok : down;
	ok = mp_mul_u64(T, 3 * 8, &persist) && mp_add_u64(persist, in->cublas_workspace_bytes, &persist) &&
	     mp_mul_u64(tok, a, &tok) && mp_mul_u64(T, tok, forward) && mp_add_u64(*forward, persist, forward);
	reqs = in->max_num_seqs < T || T == 0 ? in->max_num_seqs : T;
	ok = ok && mp_mul_u64(reqs, vpad * a, sampler) && mp_mul_u64(reqs, in->vocab_size * 36, &x) &&
	     mp_add_u64(*sampler, x, sampler) && mp_mul_u64(T, h * a, &x) && mp_add_u64(*sampler, x, sampler) &&
	     mp_add_u64(*sampler, persist, sampler);
	return ok;
}

/*
 * The memory terms a release subtracts beyond the plan's weights and KV (per GPU), into p->terms; returns the
 * part inside the budget (non_kv less the weights) and sets *outside to what only lowers the free memory.
 * With in->version NULL: the older arithmetic (activation + non_torch as given, nothing else).
 */
static mp_status engine_terms(const mp_engine_inputs *in, uint64_t *inside, uint64_t *outside, mp_engine_prediction *p,
                              mp_error *err)
{
	const mp_engine_version *v = in->version;
	uint64_t tp = in->tp ? in->tp : 1, nccl = 0, forward = in->activation_bytes, sampler = 0, unsharded = 0,
		 reqs, in_b = 0, out_b = 0;
	bool ok = true;

	if (v == NULL) {
		*outside = 0;
		if (!mp_add_u64(in->activation_bytes, in->observed ? in->observed_bytes : in->non_torch_bytes, inside))
			return mp_fail(err, MP_EOVERFLOW, "", "the engine's memory figures overflow 64 bits");
		p->profile_peak_bytes = in->activation_bytes;
		return MP_OK;
	}
	if (tp > 1) {
		/* NCCL's channel buffers per peer, and the custom all-reduce's IPC buffers (vLLM
		 * custom_all_reduce.py, SGLang and TensorRT-LLM their own), on every rank */
		ok = ok && mp_mul_u64(tp - 1, v->nccl_bytes_per_peer, &nccl);
		if (in->custom_allreduce && tp <= 8)
			ok = ok && mp_add_u64(nccl, v->custom_allreduce_bytes, &nccl);
	}
	if (v->budget == MP_BUDGET_VLLM_V0 && in->ffn_size && in->vocab_size && in->hidden_size) {
		ok = ok && v0_profile(in, tp, &forward, &sampler);
	} else if (tp > 1) {
		/* the residual stream and the all-reduced outputs are whole on every rank: two tokens x hidden
		 * tensors the plan's per-GPU activations divide by the degree */
		ok = ok && mp_mul_u64(in->max_num_batched_tokens, in->hidden_size, &unsharded) &&
		     mp_mul_u64(unsharded, in->compute_bytes * 2, &unsharded);
		unsharded = unsharded / tp * (tp - 1);
		ok = ok && mp_add_u64(forward, unsharded, &forward);
	}
	if (v->engine == MP_ENGINE_VLLM && in->vocab_size && sampler == 0) {
		/* _dummy_sampler_run (gpu_model_runner.py; V0 model_runner profile_run): the logits of
		 * min(max_num_seqs, max_num_batched_tokens) requests over the whole vocabulary on every rank, in the
		 * model dtype, their float32 copy, and the top-k/top-p sort's float32 values and int64 indices */
		reqs = in->max_num_seqs < in->max_num_batched_tokens || in->max_num_batched_tokens == 0
			       ? in->max_num_seqs
			       : in->max_num_batched_tokens;
		ok = ok && mp_mul_u64(reqs, in->vocab_size, &sampler) &&
		     mp_mul_u64(sampler, in->compute_bytes + 4 + 4 + 8, &sampler);
	}
	if (!ok)
		return mp_fail(err, MP_EOVERFLOW, "", "the engine's memory figures overflow 64 bits");
	p->profile_peak_bytes = forward > sampler ? forward : sampler;
	/* outside the budget first */
	add_term(p, "cuda_context", in->context_bytes, v->context_in_budget,
		 "CUDA context: the device profile's cuda_context_bytes (the plan's overhead_bytes)");
	(v->context_in_budget ? &in_b : &out_b)[0] += in->context_bytes;
	if (tp > 1) {
		add_term(p, "nccl_buffers", nccl, v->nccl_in_budget,
			 v->nccl_in_budget ? "NCCL and custom all-reduce buffers, allocated after the baseline snapshot "
					     "(modelled per peer: tests/data/engines public logs)"
					   : "NCCL and custom all-reduce buffers, allocated before the baseline snapshot "
					     "(gpu_worker.py init_device) or before the weights (SGLang)");
		(v->nccl_in_budget ? &in_b : &out_b)[0] += nccl;
	}
	if (v->non_torch_bytes) {
		add_term(p, "non_torch", v->non_torch_bytes, true,
			 "memory outside PyTorch the load and profile add (cuBLAS workspaces, attention buffers; modelled "
			 "from the public logs' non_torch_memory)");
		in_b += v->non_torch_bytes;
	}
	if (v->engine != MP_ENGINE_SGLANG) {
		bool v0 = v->budget == MP_BUDGET_VLLM_V0 && in->ffn_size && in->vocab_size && in->hidden_size;

		add_term(p, "profile_activation", forward, true,
			 v0 ? "vLLM V0's profile forward at max_num_batched_tokens, per rank (worker/model_runner.py "
			      "profile_run, models/llama.py 0.6.4): the previous layer's output, the residual and the normed "
			      "attention output whole, gate_up's and SiluAndMul's outputs sharded, the int64 inputs and "
			      "cuBLAS's workspace"
			    : "the profile run's forward at max_num_batched_tokens, per rank: the plan's activations plus "
			      "the hidden-size tensors every rank holds whole");
		if (sampler)
			add_term(p, "sampler", sampler, true,
				 v0 ? "vLLM V0's profile sampler on the driver rank (layers/sampler.py 0.6.4): min(max_num_seqs, "
				      "tokens) logits over the vocabulary in the model dtype, and at logits.sort 36 B a logit "
				      "(float32 copy, sorted values, int64 indices, ATen's iota and cub's buffers), with the "
				      "final hidden states; counted when above the forward's peak"
				    : "the profile's dummy sampler run: max_num_seqs logits over the vocabulary (model dtype, "
				      "float32, sorted values, int64 indices), counted when above the forward's peak");
		in_b += p->profile_peak_bytes;
	}
	if (v->cuda_graph_base_bytes && in->cuda_graphs) {
		p->cuda_graph_bytes = v->cuda_graph_base_bytes + v->cuda_graph_bytes_per_size *
		                                                     vllm_capture_sizes(in->max_num_seqs);
		add_term(p, "cuda_graphs", p->cuda_graph_bytes, true,
			 "vLLM 0.21 on: profile_cudagraph_memory's estimate, subtracted "
			 "(VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1, the default; modelled per capture size)");
		in_b += p->cuda_graph_bytes;
	}
	if (in->non_torch_bytes) {
		add_term(p, "non_torch_given", in->non_torch_bytes, true, "the request's non-torch memory");
		in_b += in->non_torch_bytes;
	}
	if (in->observed)
		observed_terms(in, p, &in_b, &out_b);
	*inside = in_b;
	*outside = out_b;
	return MP_OK;
}

static mp_status predict_vllm(const mp_engine_inputs *in, mp_engine_prediction *p, mp_error *err)
{
	uint64_t groups, gl, fg, wg, non_kv = in->weights_bytes, group_page, lo, hi, inside, outside;
	double requested = (double)in->total_memory_bytes * in->memory_fraction;
	mp_status st = engine_terms(in, &inside, &outside, p, err);

	if (st != MP_OK)
		return st;
	if (!mp_add_u64(non_kv, inside, &non_kv) || !mp_mul_u64(in->kv_row_bytes, in->block_size, &p->page_bytes))
		return mp_fail(err, MP_EOVERFLOW, "", "the engine's memory figures overflow 64 bits");
	/* request_memory: math.ceil in 0.21 on, int() before */
	p->requested_memory_bytes = in->version && in->version->budget == MP_BUDGET_VLLM_V1_CONSUMED
	                                    ? (uint64_t)ceil(requested)
	                                    : (uint64_t)requested;
	p->non_kv_cache_bytes = non_kv;
	p->available_kv_cache_bytes = (int64_t)p->requested_memory_bytes - (int64_t)non_kv;
	vllm_groups(in, &groups, &gl, &fg, &wg);
	p->kv_groups = groups;
	p->group_layers = gl;
	p->num_gpu_blocks = mp_vllm_num_blocks((double)p->available_kv_cache_bytes, p->page_bytes, gl);
	p->kv_cache_tokens = p->num_gpu_blocks / groups * in->block_size;
	p->blocks_per_request = vllm_blocks_for(in, in->max_model_len, fg, wg);
	p->max_concurrency = p->blocks_per_request ? (double)p->num_gpu_blocks / (double)p->blocks_per_request : 0;
	if (in->version && in->version->budget == MP_BUDGET_VLLM_V1_CONSUMED)
		/* vLLM 0.33.0 kv_cache_utils.get_kv_cache_capacity: int(max_concurrency x max_model_len), group-aware (a
		 * sliding-window layer holds its window, not max_model_len); 0.11 printed num_blocks // groups x block */
		p->kv_cache_tokens = (uint64_t)(p->max_concurrency * (double)in->max_model_len);
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
	uint64_t layers = in->full_layers + in->window_layers, page = in->block_size ? in->block_size : 1, inside,
		 outside;
	double total, need;
	mp_status st = engine_terms(in, &inside, &outside, p, err);

	if (st != MP_OK)
		return st;
	if (!mp_mul_u64(in->kv_row_bytes, layers, &p->cell_size_bytes))
		return mp_fail(err, MP_EOVERFLOW, "", "the KV cell size overflows 64 bits");
	/* get_available_gpu_memory after init_torch_distributed: free = total - CUDA context - NCCL (the terms
	 * outside: with a version, the context is among them) */
	if (in->version == NULL)
		outside = in->observed ? in->observed_bytes : in->context_bytes;
	total = in->total_memory_bytes > outside ? (double)(in->total_memory_bytes - outside) / GIB : 0;
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
	uint64_t layers = in->full_layers + in->window_layers, peak = in->weights_bytes, inside, outside;
	double free_bytes;
	mp_status st = engine_terms(in, &inside, &outside, p, err);

	if (st != MP_OK)
		return st;
	/* the profile's peak (torch + non-torch) holds every term: TensorRT-LLM measures it from the device */
	if (in->version == NULL)
		outside = in->context_bytes;
	if (!mp_mul_u64(in->kv_row_bytes, layers, &p->kv_size_per_token_bytes) || !mp_add_u64(peak, inside, &peak) ||
	    !mp_add_u64(peak, outside, &peak))
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

/*
 * The bytes torch's caching allocator counts in allocated_bytes beyond a tensor of `bytes` (c10/cuda/
 * CUDACachingAllocator.cpp, torch 2.5 to 2.9): a request of at least kMinLargeAlloc (10 MiB) takes a new segment
 * rounded up to kRoundLarge (2 MiB), and the block is split only when more than kSmallSize (1 MiB) would remain
 * (should_split), so a tensor within 1 MiB under a 2 MiB multiple is counted at the whole segment. Smaller requests
 * are carved from 2 MiB or 20 MiB segments and counted at their 512-byte rounding. Worked example: a 35 MiB qkv_proj
 * shard takes a 36 MiB segment whose 1 MiB rest is not split: 1 MiB more.
 */
static uint64_t allocator_rest(uint64_t bytes)
{
	const uint64_t large = 10 * MIB_U, round = 2 * MIB_U, small = MIB_U;
	uint64_t seg;

	if (bytes < large)
		return 0;
	seg = (bytes + round - 1) / round * round;
	return seg - bytes <= small ? seg - bytes : 0;
}

/* What the caching allocator adds to vLLM's parameters of a dense decoder in a float format, per rank: each
 * layer's fused qkv_proj, o_proj, gate_up_proj and down_proj shards (vLLM's QKVParallelLinear,
 * MergedColumnParallelLinear, RowParallelLinear: one nn.Parameter each, allocated on the GPU at model init), the
 * embedding and lm_head shards of the padded vocabulary; 0 for any other model (experts, MLA, quantised formats). */
static uint64_t vllm_allocator_rest(const mp_model *m, const mp_weights *w, uint64_t a, uint64_t tp)
{
	const mp_dtype fa = w->cls[MP_TC_ATTENTION].format, fm = w->cls[MP_TC_MLP].format;
	uint64_t h = m->hidden_size, q = m->num_heads * m->head_dim / tp, kv = m->num_kv_heads * m->head_dim / tp,
		 f = m->intermediate_size / tp, vpad = (m->vocab_size + 63) / 64 * 64 / tp, layer, head;

	if (m->num_experts || m->attn_kind != MP_ATTN_GQA || m->ffn_kind != MP_FFN_GATED || m->attn_per_layer ||
	    fa != fm || (fa != MP_DTYPE_BF16 && fa != MP_DTYPE_FP16 && fa != MP_DTYPE_FP32) ||
	    mp_dtype_layout_of(fa).block_bytes != a || m->num_kv_heads < tp || h > (UINT64_C(1) << 24) ||
	    q > (UINT64_C(1) << 24) || f > (UINT64_C(1) << 26) || vpad > (UINT64_C(1) << 26))
		return 0;
	layer = allocator_rest((q + 2 * kv) * h * a) + allocator_rest(h * q * a) + allocator_rest(2 * f * h * a) +
		allocator_rest(h * f * a);
	head = allocator_rest(vpad * h * a) * (m->tie_word_embeddings ? 1 : 2);
	return layer * m->num_layers + head;
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
	if (!mp_add_u64(total, vllm_allocator_rest(m, w, a, tp), &total))
		return mp_fail(err, MP_EOVERFLOW, mp_model_pointer(m), "the engine's weight bytes overflow 64 bits");
	*out = total;
	return MP_OK;
}
