/*
 * sdpa.c: which kernel torch.nn.functional.scaled_dot_product_attention runs for transformers' "sdpa" attention,
 * from the constraints of PyTorch's dispatcher (sdp_utils.cpp) and what transformers hands it. The memory models
 * ask it because the choice decides whether the score matrices exist: flash and the memory-efficient kernel keep
 * none, the math fallback keeps them as eager attention does. Pure function of the model's shape.
 */
#include "memplan.h"

mp_sdpa_kernel mp_sdpa_kernel_of(const mp_model *m, uint64_t compute_bytes, uint64_t heads, uint64_t kv_heads,
				 bool masked)
{
	/* transformers expands k/v to every query head when it passes a mask (use_gqa_in_sdpa is false then) */
	bool grouped = !masked && m->attn_kind == MP_ATTN_GQA && kv_heads < heads;
	uint64_t d = m->attn_kind == MP_ATTN_MLA ? m->qk_nope_head_dim + m->qk_rope_head_dim : m->head_dim;
	bool half = compute_bytes == 2;

	/* flash: check_for_attn_mask, check_head_dim_size_flash (<= 256, % 8), 16-bit dtypes, GQA supported; MLA's
	 * v head differs from q/k (check_head_dim_size_flash wants them equal) */
	if (half && !masked && d <= 256 && d % 8 == 0 &&
	    (m->attn_kind != MP_ATTN_MLA || m->v_head_dim == d))
		return MP_SDPA_FLASH;
	/* efficient: fp32/fp16/bf16 on sm80+, masks as bias, equal head counts (no GQA) */
	if (!grouped && (compute_bytes == 4 || half))
		return MP_SDPA_EFFICIENT;
	return MP_SDPA_MATH;
}

const char *mp_sdpa_kernel_name(mp_sdpa_kernel k)
{
	switch (k) {
	case MP_SDPA_FLASH: return "flash";
	case MP_SDPA_EFFICIENT: return "efficient";
	case MP_SDPA_MATH: return "math";
	}
	return "invalid";
}
