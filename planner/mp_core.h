/*
 * mp_core.h: status codes, error detail, checked arithmetic and data types.
 * Part of the planner's public contract; include "memplan.h", not this file.
 */
#ifndef MP_CORE_H
#define MP_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------------------------------------------------
 * Status codes. Append-only: the numbers are stable. mp_status_str() gives a short constant string.
 * The daemon maps each to one HTTP status in a single table (daemon/reply.c).
 * ------------------------------------------------------------------------------------------------------- */
typedef enum mp_status {
	MP_OK = 0,
	MP_EINVAL = 1,		/* a value is out of its allowed range or inconsistent: HTTP 422 */
	MP_EOVERFLOW = 2,	/* a derived quantity does not fit in 64 bits: HTTP 422 */
	MP_EUNSUPPORTED = 3,	/* well-formed but not modelled (unknown model_type, ...): HTTP 422 */
	MP_ENOTFOUND = 4,	/* unknown id: HTTP 404 */
	MP_ENOMEM = 5,		/* allocation failed (never from the planner): HTTP 500 */
	MP_EPARSE = 6,		/* malformed document (bad JSON): HTTP 400 */
	MP_EDB = 7,		/* the store failed: HTTP 500 */
	MP_ENOTBUILTIN = 8,	/* feature compiled out: HTTP 501 */
	MP_ENODEV = 9,		/* hardware absent: HTTP 503 */
	MP_EBUSY = 10,		/* hardware or job slot busy: HTTP 409 */
	MP_ECONFLICT = 11,	/* state conflict (id exists, precondition failed): HTTP 409 */
	MP_ETOOLARGE = 12,	/* request too large: HTTP 413 */
	MP_EINTERNAL = 13,	/* an invariant broke: HTTP 500 */
	MP_EAUTH = 14,		/* credentials missing: HTTP 401 */
	MP_EFORBIDDEN = 15,	/* credentials wrong: HTTP 403 */
} mp_status;

/* Returns a constant, never NULL, lowercase string for any value (unknown values give "unknown"). */
const char *mp_status_str(mp_status st);

/*
 * Error detail filled by any function that returns something other than MP_OK. `field` is a JSON pointer
 * relative to the request document ("/batch_size", "/model/num_key_value_heads"); `message` says what is
 * wrong and what is allowed. Caller-owned; functions write NUL-terminated, truncated strings.
 */
typedef struct mp_error {
	char field[96];
	char message[320];
} mp_error;

/* Fills err (if not NULL) and returns st. printf-style; the planner's only use of formatting. */
mp_status mp_fail(mp_error *err, mp_status st, const char *field, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 4, 5)))
#endif
	;

/* ---------------------------------------------------------------------------------------------------------
 * Checked 64-bit arithmetic. Each returns false on overflow and leaves *out unspecified.
 * ------------------------------------------------------------------------------------------------------- */
bool mp_mul_u64(uint64_t a, uint64_t b, uint64_t *out);

/* The largest byte total a plan may report: 2^53 (about 9 PB). JSON numbers are exact integers only up to 2^53,
 * and no device is within a million times of it, so a larger total is refused (MP_EOVERFLOW) rather than
 * rounded. */
#define MP_MAX_PLAN_BYTES (UINT64_C(1) << 53)
bool mp_add_u64(uint64_t a, uint64_t b, uint64_t *out);
/* *acc += a * b, checked. */
bool mp_muladd_u64(uint64_t *acc, uint64_t a, uint64_t b);

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
/* Storage layout of a format (see above). {0, 0} for MP_DTYPE_INVALID. */
mp_dtype_layout mp_dtype_layout_of(mp_dtype dt);
/* A comma-separated list of the names in `allowed` (a mask of 1u << dtype), for error messages. */
void mp_dtype_list(uint32_t allowed, char *buf, size_t len);

/* Bytes of n values stored as dt: ceil(n / block_values) * block_bytes. False on overflow. */
bool mp_dtype_bytes(mp_dtype dt, uint64_t n, uint64_t *out);

#endif /* MP_CORE_H */
