/*
 * core.c: the data-type table and the crossing search.
 * Owns the one table of storage formats; nothing else in the planner knows a format's size.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "memplan.h"

/*
 * Storage formats. Sources: IEEE 754 and the OCP FP8 spec for the float types; ggml-common.h for the GGUF
 * blocks (block_q8_0: fp16 d + 32 x int8 = 34 B; block_q4_0: fp16 d + 16 B of nibbles = 18 B; block_q4_K:
 * 2 x fp16 + 12 B scales + 128 B = 144 B per 256; block_q5_K: 176 B per 256; block_q6_K: 210 B per 256).
 * int4 and nf4 are the raw 4-bit payload (2 values per byte); their group scales depend on the tensor's
 * shape and are added by the weight model, not here.
 */
static const struct {
	const char *name;
	mp_dtype_layout layout;
} dtype_table[MP_DTYPE_COUNT] = {
	[MP_DTYPE_INVALID] = { "invalid", { 0, 0 } },
	[MP_DTYPE_FP64] = { "fp64", { 1, 8 } },
	[MP_DTYPE_FP32] = { "fp32", { 1, 4 } },
	[MP_DTYPE_TF32] = { "tf32", { 1, 4 } },
	[MP_DTYPE_BF16] = { "bf16", { 1, 2 } },
	[MP_DTYPE_FP16] = { "fp16", { 1, 2 } },
	[MP_DTYPE_FP8_E4M3] = { "fp8_e4m3", { 1, 1 } },
	[MP_DTYPE_FP8_E5M2] = { "fp8_e5m2", { 1, 1 } },
	[MP_DTYPE_INT8] = { "int8", { 1, 1 } },
	[MP_DTYPE_INT4] = { "int4", { 2, 1 } },
	[MP_DTYPE_NF4] = { "nf4", { 2, 1 } },
	[MP_DTYPE_Q8_0] = { "q8_0", { 32, 34 } },
	[MP_DTYPE_Q4_0] = { "q4_0", { 32, 18 } },
	[MP_DTYPE_Q4_K] = { "q4_K", { 256, 144 } },
	[MP_DTYPE_Q5_K] = { "q5_K", { 256, 176 } },
	[MP_DTYPE_Q6_K] = { "q6_K", { 256, 210 } },
	/* OCP Microscaling Formats (MX) v1.0 sec. 5: MXFP4 = 32 FP4 E2M1 elements sharing one E8M0 scale; gpt-oss
	 * checkpoints store them as *_blocks (16 B) and *_scales (1 B) per 32 weights of a row. NVFP4 (NVIDIA
	 * TensorRT Model Optimizer): 16 E2M1 elements per FP8 E4M3 scale, plus one fp32 scale per tensor (added by
	 * the weight model). */
	[MP_DTYPE_MXFP4] = { "mxfp4", { 32, 17 } },
	[MP_DTYPE_NVFP4] = { "nvfp4", { 16, 9 } },
};

const char *mp_dtype_name(mp_dtype dt)
{
	if ((unsigned)dt >= MP_DTYPE_COUNT)
		return "invalid";
	return dtype_table[dt].name;
}

mp_dtype mp_dtype_from_name(const char *name)
{
	if (name == NULL)
		return MP_DTYPE_INVALID;
	for (int i = 1; i < MP_DTYPE_COUNT; i++)
		if (strcmp(dtype_table[i].name, name) == 0)
			return (mp_dtype)i;
	return MP_DTYPE_INVALID;
}

/* the spellings of config files (torch_dtype, dtype), engines (vLLM --dtype, --kv-cache-dtype) and people */
static const struct {
	const char *alias;
	mp_dtype dt;
} aliases[] = {
	{ "bfloat16", MP_DTYPE_BF16 }, { "float16", MP_DTYPE_FP16 }, { "half", MP_DTYPE_FP16 },
	{ "float32", MP_DTYPE_FP32 },  { "float", MP_DTYPE_FP32 },   { "float64", MP_DTYPE_FP64 },
	{ "double", MP_DTYPE_FP64 },   { "fp8", MP_DTYPE_FP8_E4M3 }, { "float8_e4m3fn", MP_DTYPE_FP8_E4M3 },
	{ "float8_e5m2", MP_DTYPE_FP8_E5M2 }, { "f16", MP_DTYPE_FP16 }, { "f32", MP_DTYPE_FP32 }, /* ggml's names */
};

mp_dtype mp_dtype_from_alias(const char *name)
{
	if (name == NULL)
		return MP_DTYPE_INVALID;
	if (strncmp(name, "torch.", 6) == 0)
		name += 6;
	for (int i = 1; i < MP_DTYPE_COUNT; i++)
		if (strcasecmp(dtype_table[i].name, name) == 0)
			return (mp_dtype)i;
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strcasecmp(aliases[i].alias, name) == 0)
			return aliases[i].dt;
	return MP_DTYPE_INVALID;
}

mp_dtype_layout mp_dtype_layout_of(mp_dtype dt)
{
	if ((unsigned)dt >= MP_DTYPE_COUNT)
		return dtype_table[MP_DTYPE_INVALID].layout;
	return dtype_table[dt].layout;
}

void mp_dtype_list(uint32_t allowed, char *buf, size_t len)
{
	if (len == 0)
		return;
	buf[0] = '\0';
	for (int i = 1; i < MP_DTYPE_COUNT; i++)
		if ((allowed & (1u << i)) && !mp_list_add(buf, len, dtype_table[i].name))
			return; /* whole names only: the list ends with ", ..." */
}

bool mp_dtype_bytes(mp_dtype dt, uint64_t n, uint64_t *out)
{
	mp_dtype_layout l = mp_dtype_layout_of(dt);
	uint64_t blocks;

	if (l.block_values == 0)
		return false;
	blocks = n / l.block_values + (n % l.block_values != 0);
	return mp_mul_u64(blocks, l.block_bytes, out);
}

mp_status mp_search_crossing(uint64_t lo, double glo, uint64_t hi, double ghi, mp_crossing_fn g, void *ctx,
                             uint64_t *out, unsigned *evaluations, mp_error *err)
{
	unsigned n = 0;

	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		double r, v;
		mp_status st;

		if (n < MP_CROSSING_INTERPOLATIONS && isfinite(glo) && isfinite(ghi) && ghi > glo) {
			/* where the line through the bracket's ends crosses zero; its ceiling is the first integer at or
			 * past it, pulled inside (lo, hi) so that every probe narrows the bracket */
			r = ceil((double)lo + (double)(hi - lo) * (-glo / (ghi - glo)));
			mid = r <= (double)lo ? lo + 1 : r >= (double)hi ? hi - 1 : (uint64_t)r;
		}
		st = g(ctx, mid, &v, err);
		n++;
		if (st != MP_OK) {
			if (evaluations)
				*evaluations = n;
			return st;
		}
		if (v >= 0) {
			hi = mid;
			ghi = v;
		} else {
			lo = mid;
			glo = v;
		}
	}
	*out = hi;
	if (evaluations)
		*evaluations = n;
	return MP_OK;
}

mp_dtype mp_dtype_nearest(const char *name, unsigned mask)
{
	const char *words[MP_DTYPE_COUNT + sizeof(aliases) / sizeof(aliases[0])];
	mp_dtype dts[MP_DTYPE_COUNT + sizeof(aliases) / sizeof(aliases[0])];
	const char *w;
	size_t n = 0;

	for (int i = 1; i < MP_DTYPE_COUNT; i++)
		if (mask & (1u << i)) {
			dts[n] = (mp_dtype)i;
			words[n++] = dtype_table[i].name;
		}
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (mask & (1u << aliases[i].dt)) {
			dts[n] = aliases[i].dt;
			words[n++] = aliases[i].alias;
		}
	w = mp_nearest_word(name, words, n);
	for (size_t i = 0; w && i < n; i++)
		if (words[i] == w)
			return dts[i];
	return MP_DTYPE_INVALID;
}
