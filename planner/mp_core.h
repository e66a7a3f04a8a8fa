/*
 * mp_core.h: data types and storage formats, and the crossing search. Status codes, error detail and checked
 * arithmetic come from the floor below (core/mp_base.h); the planner returns only MP_OK, MP_EINVAL, MP_EOVERFLOW,
 * MP_EUNSUPPORTED and MP_EINTERNAL.
 * Part of the planner's public contract; include "memplan.h", not this file.
 */
#ifndef MP_CORE_H
#define MP_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/mp_base.h"

/* ---------------------------------------------------------------------------------------------------------
 * Searching a monotone quantity for its crossing (the fit solver's largest batch and longest sequence, the
 * roofline's first compute-bound batch).
 * ------------------------------------------------------------------------------------------------------- */

/* g(x) for one integer x, into *out; may return an error, which ends the search. +INFINITY is allowed. */
typedef mp_status (*mp_crossing_fn)(void *ctx, uint64_t x, double *out, mp_error *err);

/*
 * The smallest x in (lo, hi] with g(x) >= 0, given g(lo) = glo < 0 <= ghi = g(hi) and g changing sign once on
 * [lo, hi] (g need not be linear or even continuous; only the sign pattern matters). The result is therefore the
 * one plain bisection finds. The probes differ: the first MP_CROSSING_INTERPOLATIONS are placed by linear
 * interpolation between the bracket's ends (regula falsi, e.g. Press et al., Numerical Recipes 3rd ed., section
 * 9.2), then bisection takes over. For a g linear in x, as a plan's bytes are in the batch size, the first probe
 * lands on the crossing and the second confirms it: 2 evaluations instead of log2(hi - lo), which is 17 to 20
 * in the searches above. Every probe narrows the bracket with a real evaluation, so a g far from linear
 * costs at most MP_CROSSING_INTERPOLATIONS more probes than bisection.
 * Worked example (tests/test_planner.c): g(x) = 3x - 1000 on (1, 65536] -> 334 after 2 evaluations of g.
 * evaluations (may be NULL) gets the number of calls of g. Errors: those of g. Borrows ctx for the call.
 */
#define MP_CROSSING_INTERPOLATIONS 3
mp_status mp_search_crossing(uint64_t lo, double glo, uint64_t hi, double ghi, mp_crossing_fn g, void *ctx,
                             uint64_t *out, unsigned *evaluations, mp_error *err);

/* ---------------------------------------------------------------------------------------------------------
 * Data types and storage formats.
 *
 * A format stores `block_values` values in `block_bytes` bytes, so a tensor of n values takes
 * ceil(n / block_values) * block_bytes bytes. Plain types have blocks of one value. Block formats carry
 * their scales inside the block: GGUF q8_0 is 32 int8 values + one fp16 scale = 34 bytes per 32 values
 * (ggml-common.h, block_q8_0); q4_0 is 32 4-bit values + one fp16 scale = 18 bytes.
 * ------------------------------------------------------------------------------------------------------- */
typedef enum mp_dtype {
	MP_DTYPE_INVALID = 0,
	MP_DTYPE_FP64,
	MP_DTYPE_FP32,
	MP_DTYPE_TF32,
	MP_DTYPE_BF16,
	MP_DTYPE_FP16,
	MP_DTYPE_FP8_E4M3,
	MP_DTYPE_FP8_E5M2,
	MP_DTYPE_INT8,
	MP_DTYPE_INT4,
	MP_DTYPE_NF4,
	MP_DTYPE_Q8_0,
	MP_DTYPE_Q4_0,
	MP_DTYPE_Q4_K,
	MP_DTYPE_Q5_K,
	MP_DTYPE_Q6_K,
	MP_DTYPE_MXFP4, /* OCP microscaling FP4: 32 E2M1 values (16 B) + one E8M0 scale byte = 17 B per block */
	MP_DTYPE_NVFP4, /* NVIDIA FP4: 16 E2M1 values (8 B) + one FP8 E4M3 scale byte = 9 B per block */
	MP_DTYPE_COUNT
} mp_dtype;

typedef struct mp_dtype_layout {
	uint32_t block_values;	/* values per block, >= 1 */
	uint32_t block_bytes;	/* bytes per block, scales included */
} mp_dtype_layout;

/* The canonical API name ("bf16", "q8_0", ...); "invalid" for values outside the enum. */
const char *mp_dtype_name(mp_dtype dt);
/* Parses a canonical name; MP_DTYPE_INVALID when unknown. NULL-safe. */
mp_dtype mp_dtype_from_name(const char *name);
/*
 * A data type as config files, engines and people spell it: a canonical name in any case ("BF16", "Q4_K"), an
 * optional "torch." prefix, or an alias: bfloat16, float16, half, float32, float, float64, double, fp8 and
 * float8_e4m3fn (fp8_e4m3: vLLM's and PyTorch's default fp8), float8_e5m2. MP_DTYPE_INVALID otherwise; NULL-safe.
 * Worked example (tests/test_fidelity.c): "bfloat16" -> bf16, "Half" -> fp16, "torch.float32" -> fp32.
 */
/* The dtype of a misspelt name ("fp8e4m3", "bfloat", "bf61"): mp_nearest_word over the names and aliases above,
 * among the dtypes of mask (bit 1 << dtype); MP_DTYPE_INVALID when none is near. */
mp_dtype mp_dtype_nearest(const char *name, unsigned mask);
mp_dtype mp_dtype_from_alias(const char *name);
/* The aliases mp_dtype_from_alias takes beyond the canonical names, for error messages. */
#define MP_DTYPE_ALIASES "any case; aliases bfloat16, float16, half, f16, float32, f32, fp8 = fp8_e4m3"
/* Storage layout of a format (see above). {0, 0} for MP_DTYPE_INVALID. */
mp_dtype_layout mp_dtype_layout_of(mp_dtype dt);
/* A comma-separated list of the names in `allowed` (a mask of 1u << dtype), for error messages. */
void mp_dtype_list(uint32_t allowed, char *buf, size_t len);

/* Bytes of n values stored as dt: ceil(n / block_values) * block_bytes. False on overflow. */
bool mp_dtype_bytes(mp_dtype dt, uint64_t n, uint64_t *out);

#endif /* MP_CORE_H */
