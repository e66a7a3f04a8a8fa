/*
 * ggml.c: ggml's type table (mp_ggml.h) and the byte counts of rows and tensors built on it. Owns the one copy of
 * ggml's block sizes in memplan; must not know anything of files or of llama.cpp's buffers.
 */
#include <string.h>
#include <strings.h>

#include "memplan.h"

/*
 * llama.cpp 0c1e5709 (llama-cpp-python 0.3.36), ggml/src/ggml.c type_traits[] with the block structs of
 * ggml/src/ggml-common.h, each a static_assert there:
 *   q4_0 = fp16 d + 16 B            = 18 per 32     q4_1 = 2 fp16 + 16 B          = 20 per 32
 *   q5_0 = fp16 + 4 B qh + 16 B     = 22 per 32     q5_1 = 2 fp16 + 4 + 16        = 24 per 32
 *   q8_0 = fp16 + 32 B              = 34 per 32     q8_1 = 2 fp16 + 32            = 36 per 32
 *   q2_K = 2 fp16 + 16 + 64         = 84 per 256    q3_K = fp16 + 64 + 32 + 12    = 110 per 256
 *   q4_K = 2 fp16 + 12 + 128        = 144 per 256   q5_K = 2 fp16 + 12 + 128 + 32 = 176 per 256
 *   q6_K = fp16 + 16 + 192          = 210 per 256   q8_K = f32 + 256 + 32         = 292 per 256
 *   iq2_xxs = fp16 + 64             = 66 per 256    iq2_xs = fp16 + 64 + 8        = 74 per 256
 *   iq2_s = fp16 + 64 + 16          = 82 per 256    iq3_xxs = fp16 + 96           = 98 per 256
 *   iq3_s = fp16 + 104 + 4          = 110 per 256   iq1_s = fp16 + 32 + 16        = 50 per 256
 *   iq1_m = 32 + 16 + 8             = 56 per 256    iq4_nl = fp16 + 16            = 18 per 32
 *   iq4_xs = fp16 + 2 + 4 + 128     = 136 per 256   tq1_0 = fp16 + 4 + 48         = 54 per 256
 *   tq2_0 = fp16 + 64               = 66 per 256    mxfp4 = e8m0 + 16             = 17 per 32
 *   nvfp4 = 4 ue4m3 + 32            = 36 per 64     q1_0 = fp16 + 16              = 18 per 128
 *   q2_0 = fp16 + 16                = 18 per 64
 */
static const mp_ggml_traits traits[MP_GGML_TYPE_COUNT] = {
	[MP_GGML_F32] = { "f32", 1, 4, false },
	[MP_GGML_F16] = { "f16", 1, 2, false },
	[MP_GGML_Q4_0] = { "q4_0", 32, 18, true },
	[MP_GGML_Q4_1] = { "q4_1", 32, 20, true },
	[MP_GGML_Q5_0] = { "q5_0", 32, 22, true },
	[MP_GGML_Q5_1] = { "q5_1", 32, 24, true },
	[MP_GGML_Q8_0] = { "q8_0", 32, 34, true },
	[MP_GGML_Q8_1] = { "q8_1", 32, 36, true },
	[MP_GGML_Q2_K] = { "q2_K", 256, 84, true },
	[MP_GGML_Q3_K] = { "q3_K", 256, 110, true },
	[MP_GGML_Q4_K] = { "q4_K", 256, 144, true },
	[MP_GGML_Q5_K] = { "q5_K", 256, 176, true },
	[MP_GGML_Q6_K] = { "q6_K", 256, 210, true },
	[MP_GGML_Q8_K] = { "q8_K", 256, 292, true },
	[MP_GGML_IQ2_XXS] = { "iq2_xxs", 256, 66, true },
	[MP_GGML_IQ2_XS] = { "iq2_xs", 256, 74, true },
	[MP_GGML_IQ3_XXS] = { "iq3_xxs", 256, 98, true },
	[MP_GGML_IQ1_S] = { "iq1_s", 256, 50, true },
	[MP_GGML_IQ4_NL] = { "iq4_nl", 32, 18, true },
	[MP_GGML_IQ3_S] = { "iq3_s", 256, 110, true },
	[MP_GGML_IQ2_S] = { "iq2_s", 256, 82, true },
	[MP_GGML_IQ4_XS] = { "iq4_xs", 256, 136, true },
	[MP_GGML_I8] = { "i8", 1, 1, false },
	[MP_GGML_I16] = { "i16", 1, 2, false },
	[MP_GGML_I32] = { "i32", 1, 4, false },
	[MP_GGML_I64] = { "i64", 1, 8, false },
	[MP_GGML_F64] = { "f64", 1, 8, false },
	[MP_GGML_IQ1_M] = { "iq1_m", 256, 56, true },
	[MP_GGML_BF16] = { "bf16", 1, 2, false },
	[MP_GGML_TQ1_0] = { "tq1_0", 256, 54, true },
	[MP_GGML_TQ2_0] = { "tq2_0", 256, 66, true },
	[MP_GGML_MXFP4] = { "mxfp4", 32, 17, true },
	[MP_GGML_NVFP4] = { "nvfp4", 64, 36, true },
	[MP_GGML_Q1_0] = { "q1_0", 128, 18, true },
	[MP_GGML_Q2_0] = { "q2_0", 64, 18, true },
};

mp_ggml_traits mp_ggml_traits_of(uint32_t t)
{
	mp_ggml_traits none = { NULL, 0, 0, false };

	if (t >= MP_GGML_TYPE_COUNT || traits[t].block_values == 0)
		return none;
	return traits[t];
}

bool mp_ggml_type_valid(uint32_t t)
{
	return t < MP_GGML_TYPE_COUNT && traits[t].block_values != 0;
}

uint32_t mp_ggml_type_from_name(const char *name)
{
	if (name == NULL)
		return MP_GGML_TYPE_COUNT;
	for (uint32_t t = 0; t < MP_GGML_TYPE_COUNT; t++)
		if (traits[t].name != NULL && strcasecmp(traits[t].name, name) == 0)
			return t;
	return MP_GGML_TYPE_COUNT;
}

bool mp_ggml_row_bytes(uint32_t type, uint64_t n, uint64_t *out)
{
	mp_ggml_traits tr = mp_ggml_traits_of(type);

	if (tr.block_values == 0 || n % tr.block_values != 0)
		return false;
	return mp_mul_u64(n / tr.block_values, tr.block_bytes, out);
}

bool mp_ggml_tensor_bytes(uint32_t type, const uint64_t *ne, uint32_t n_dims, uint64_t *out)
{
	uint64_t bytes;

	/* ggml_nbytes for a contiguous tensor: nb[1] = row bytes of ne[0], nb[i] = nb[i-1] x ne[i-1]; dimensions a
	 * file leaves out are 1 (gguf.cpp), so a tensor of no dimensions is one value */
	if (!mp_ggml_row_bytes(type, n_dims == 0 ? 1 : ne[0], &bytes))
		return false;
	for (uint32_t i = 1; i < n_dims; i++)
		if (!mp_mul_u64(bytes, ne[i], &bytes))
			return false;
	*out = bytes;
	return true;
}

mp_dtype mp_ggml_to_dtype(uint32_t type)
{
	switch (type) {
	case MP_GGML_F32: return MP_DTYPE_FP32;
	case MP_GGML_F16: return MP_DTYPE_FP16;
	case MP_GGML_BF16: return MP_DTYPE_BF16;
	case MP_GGML_F64: return MP_DTYPE_FP64;
	case MP_GGML_Q8_0: return MP_DTYPE_Q8_0;
	case MP_GGML_Q4_0: return MP_DTYPE_Q4_0;
	case MP_GGML_Q4_K: return MP_DTYPE_Q4_K;
	case MP_GGML_Q5_K: return MP_DTYPE_Q5_K;
	case MP_GGML_Q6_K: return MP_DTYPE_Q6_K;
	case MP_GGML_MXFP4: return MP_DTYPE_MXFP4;
	default: return MP_DTYPE_INVALID;
	}
}

/* ----- ggml-alloc.c ggml_dyn_tallocr, one chunk --------------------------------------------------------------- */

static bool align_up(const mp_ggml_dyn_alloc *a, uint64_t bytes, uint64_t *out)
{
	if (bytes > UINT64_MAX - (a->alignment - 1))
		return false;
	*out = (bytes + a->alignment - 1) / a->alignment * a->alignment;
	return true;
}

void mp_ggml_dyn_init(mp_ggml_dyn_alloc *a, uint64_t alignment)
{
	a->alignment = alignment ? alignment : 1;
	a->n_free = 1;
	a->offset[0] = 0;
	a->size[0] = UINT64_MAX / 2; /* the last block: a chunk of a buffer type without a maximum size */
	a->max_size = 0;
	a->overflow = false;
}

static void remove_block(mp_ggml_dyn_alloc *a, uint32_t i)
{
	for (; i + 1 < a->n_free; i++) {
		a->offset[i] = a->offset[i + 1];
		a->size[i] = a->size[i + 1];
	}
	a->n_free--;
}

uint64_t mp_ggml_dyn_take(mp_ggml_dyn_alloc *a, uint64_t bytes)
{
	uint64_t size, best_size = UINT64_MAX, at;
	uint32_t best = UINT32_MAX;

	if (a->overflow || a->n_free == 0 || !align_up(a, bytes, &size)) {
		a->overflow = true;
		return 0;
	}
	/* the best fitting block besides the last (<=: of equal sizes the later) */
	for (uint32_t i = 0; i + 1 < a->n_free; i++)
		if (a->size[i] >= size && a->size[i] <= best_size) {
			best = i;
			best_size = a->size[i];
		}
	if (best == UINT32_MAX) {
		best = a->n_free - 1;
		if (a->size[best] < size) {
			a->overflow = true;
			return 0;
		}
	}
	at = a->offset[best];
	a->offset[best] += size;
	a->size[best] -= size;
	if (a->size[best] == 0)
		remove_block(a, best);
	if (at + size > a->max_size)
		a->max_size = at + size;
	return at;
}

void mp_ggml_dyn_give(mp_ggml_dyn_alloc *a, uint64_t offset, uint64_t bytes)
{
	uint64_t size;
	uint32_t pos = 0;

	if (a->overflow || !align_up(a, bytes, &size)) {
		a->overflow = true;
		return;
	}
	for (uint32_t i = 0; i < a->n_free; i++) {
		/* the range ends a free block: grow it, and join the next if they now touch */
		if (a->offset[i] + a->size[i] == offset) {
			a->size[i] += size;
			if (i + 1 < a->n_free && a->offset[i] + a->size[i] == a->offset[i + 1]) {
				a->size[i] += a->size[i + 1];
				remove_block(a, i + 1);
			}
			return;
		}
		/* the range starts one: grow it downwards, and join the previous if they now touch */
		if (offset + size == a->offset[i]) {
			a->offset[i] = offset;
			a->size[i] += size;
			if (i > 0 && a->offset[i - 1] + a->size[i - 1] == a->offset[i]) {
				a->size[i - 1] += a->size[i];
				remove_block(a, i);
			}
			return;
		}
	}
	if (a->n_free >= MP_GGML_MAX_FREE_BLOCKS) {
		a->overflow = true;
		return;
	}
	while (pos < a->n_free && a->offset[pos] < offset)
		pos++;
	for (uint32_t i = a->n_free; i > pos; i--) {
		a->offset[i] = a->offset[i - 1];
		a->size[i] = a->size[i - 1];
	}
	a->offset[pos] = offset;
	a->size[pos] = size;
	a->n_free++;
}
