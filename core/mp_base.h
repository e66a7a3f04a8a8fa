/*
 * mp_base.h: the floor of the house. Status codes, error detail (one error, or a list of them), and checked
 * 64-bit arithmetic: the types every folder above shares. Holds no state and calls nothing but libc's snprintf.
 * The planner's contract (planner/memplan.h) includes it; nothing here knows JSON, SQL or HTTP.
 */
#ifndef MP_BASE_H
#define MP_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------------------------------------------------
 * Status codes. Append-only: the numbers are stable. mp_status_str() gives a short constant string; the daemon
 * maps each to one HTTP status in one switch (daemon/reply.c) and codec/ to one problem type.
 * Who returns which: the planner only MP_OK, MP_EINVAL, MP_EOVERFLOW, MP_EUNSUPPORTED and MP_EINTERNAL; the
 * model readers and codec/ also MP_EPARSE and MP_ENOMEM; db/ MP_ENOTFOUND, MP_EDB, MP_ECONFLICT; kernels/ and
 * the calibration jobs MP_ENOTBUILTIN, MP_ENODEV, MP_EBUSY; the daemon MP_ETOOLARGE, MP_EAUTH, MP_EFORBIDDEN,
 * MP_EOVERLOADED, MP_EPRECONDITION, MP_EFRAMING; db/ also MP_ESTORAGE and MP_ENOSPACE; hub/ MP_EUPSTREAM.
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
	MP_EOVERLOADED = 16,	/* too many heavy requests in flight: HTTP 503 with Retry-After */
	MP_ESTORAGE = 17,	/* the database cannot take writes (moved, deleted, read-only): HTTP 503 */
	MP_ENOSPACE = 18,	/* the disk holding the database is full: HTTP 507 */
	MP_EPRECONDITION = 19,	/* If-Match names another version of the resource: HTTP 412 */
	MP_EFRAMING = 20,	/* the HTTP message itself is malformed (framing, Host, header bytes): HTTP 400 */
	MP_EUPSTREAM = 21,	/* a service memplan fetched from (the Hugging Face Hub) failed, timed out, refused the
				 * credentials or sent more than its limit: HTTP 502 */
} mp_status;

/* Returns a constant, never NULL, lowercase string for any value (unknown values give "unknown"). */
const char *mp_status_str(mp_status st);

/*
 * Error detail filled by any function that returns something other than MP_OK. `field` is a JSON pointer into
 * the request document ("/batch_size", "/model/hf_config/num_key_value_heads"); `message` says what is wrong and
 * what is allowed. Caller-owned; functions write NUL-terminated strings, and nothing is cut without saying so:
 * a pointer longer than MP_POINTER_MAX - 1 bytes ends in "/..." after its last whole segment and its message says
 * how long it was; a message longer than MP_MESSAGE_MAX - 1 bytes ends in "...".
 *
 * The pointers the API forms from its own member names are far shorter than MP_POINTER_MAX: the longest, a fit
 * job's rope key "/jobs/4095/training/model/hf_config/text_config/rope_scaling/partial_rotary_factor", is 82 bytes.
 * Only a body's own keys (a member repeated under long keys of its own) can reach it.
 */
#define MP_POINTER_MAX 512
#define MP_MESSAGE_MAX 1024	/* long enough for every list of allowed values the API names in full */
typedef struct mp_errors mp_errors;
typedef struct mp_error {
	char field[MP_POINTER_MAX];
	char message[MP_MESSAGE_MAX];
	/* Where every problem of one request is collected (NULL: only the one above). Decoders that check many
	 * fields record each problem with mp_error_keep and go on, so one answer names them all (codec/, model/).
	 * Borrowed: the caller that set it owns the list. */
	mp_errors *all;
} mp_error;

/* An empty error with no list attached. Declare every mp_error with it (or zero it): a decoder that records its
 * problems follows `all`, so an uninitialised one would be followed into garbage. */
#define MP_ERROR_INIT { { 0 }, { 0 }, NULL }

/* Every problem of one request, in the order found (the daemon and the command line give one to the decoders). */
#define MP_MAX_ERRORS 16
struct mp_errors {
	size_t n;		/* entries filled */
	size_t dropped;		/* problems found beyond MP_MAX_ERRORS (counted, not kept) */
	struct {
		char field[MP_POINTER_MAX];
		char message[MP_MESSAGE_MAX];
	} item[MP_MAX_ERRORS];
};

/* Fills err (if not NULL) and returns st. printf-style. */
mp_status mp_fail(mp_error *err, mp_status st, const char *field, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 4, 5)))
#endif
	;

/*
 * mp_fail with the field built from a base JSON pointer and a member: base "/jobs/3/inference" and field
 * "/batch_size" give "/jobs/3/inference/batch_size"; a NULL base is "". Callers hand the planner the pointer of
 * the object it reads (mp_inference_req.json_pointer, ...) instead of rewriting fields after the fact. The base
 * "?" stands for a query string: field "/num_gpus" gives "?num_gpus" (GET /v1/capacity).
 */
mp_status mp_fail_at(mp_error *err, mp_status st, const char *base, const char *field, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 5, 6)))
#endif
	;

/*
 * Records err's current problem (field, message) in err->all when a list is attached, skipping an exact repeat of
 * one already there, and returns st unchanged: `return mp_error_keep(err, mp_fail(err, ...))` fails and keeps.
 * Without a list (or with err NULL) it only returns st.
 */
mp_status mp_error_keep(mp_error *err, mp_status st);

/*
 * A decoder's running tally of problems: mp_problems_note records one (mp_error_keep) and remembers the first;
 * mp_problems_end puts the first back into err and returns its status (MP_OK when there was none). The idiom of
 * every decoder that checks many fields before it answers:
 *     mp_problems p = MP_PROBLEMS_INIT;
 *     mp_problems_note(&p, step_a(..., err), err);  mp_problems_note(&p, step_b(..., err), err);
 *     return mp_problems_end(&p, err);
 */
typedef struct mp_problems {
	mp_status st;
	char field[MP_POINTER_MAX];
	char message[MP_MESSAGE_MAX];
} mp_problems;
#define MP_PROBLEMS_INIT { MP_OK, "", "" }
/* Notes st (nothing when MP_OK); returns st. */
mp_status mp_problems_note(mp_problems *p, mp_status st, mp_error *err);
mp_status mp_problems_end(const mp_problems *p, mp_error *err);

/*
 * Appends the JSON pointer segment `segment` (RFC 6901: '~' written "~0", '/' written "~1"; "" a top-level
 * member "/") to the pointer in buf (cap bytes, NUL-terminated). A segment that does not fit whole is not cut: the
 * pointer ends in "/..." instead (once; later segments are dropped with it) and false is returned.
 * Worked example (tests/test_codec.c): cap 12, "/jobs" + "3" -> "/jobs/3"; + "inference" -> "/jobs/3/..."
 */
bool mp_pointer_add(char *buf, size_t cap, const char *segment);

/*
 * Appends item to the comma-separated list in buf (cap bytes, NUL-terminated): ", item" (or item when buf is
 * empty). An item that would not fit whole is left out and the list ends with ", ..." (once), so no list an error
 * message quotes is ever cut inside a word. Returns false once an item was left out.
 * Worked example (tests/test_fidelity.c): cap 20, items "alpha", "beta", "gamma" -> "alpha, beta, ...".
 */
bool mp_list_add(char *buf, size_t cap, const char *item);

/* ---------------------------------------------------------------------------------------------------------
 * Checked 64-bit arithmetic. Each returns false on overflow and leaves *out unspecified.
 * ------------------------------------------------------------------------------------------------------- */
/* inline: the planner calls them hundreds of times per plan (GCC's and Clang's overflow builtins) */
static inline bool mp_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
	return !__builtin_mul_overflow(a, b, out);
}

static inline bool mp_add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
	return !__builtin_add_overflow(a, b, out);
}

/* *acc += a * b, checked. */
static inline bool mp_muladd_u64(uint64_t *acc, uint64_t a, uint64_t b)
{
	uint64_t p;

	return mp_mul_u64(a, b, &p) && mp_add_u64(*acc, p, acc);
}

/* The largest byte total a plan may report: 2^53 (about 9 PB). JSON numbers are exact integers only up to 2^53,
 * and no device is within a million times of it, so a larger total is refused (MP_EOVERFLOW) rather than
 * rounded. The one definition: codec/ prints whole numbers up to it as exact integers. */
#define MP_MAX_PLAN_BYTES (UINT64_C(1) << 53)

/* Whether id is a valid resource id (devices, models): ^[a-z0-9][a-z0-9._-]{0,62}$, 1 to 63 bytes. The one id
 * rule: the store, the decoders and the daemon all ask this. NULL-safe. */
bool mp_valid_id(const char *id);

/*
 * The key a device alias is matched by: ASCII lowercased, ' ' and '_' turned into '-', so the NVML name "NVIDIA H100
 * 80GB HBM3", GPU Feature Discovery's nvidia.com/gpu.product "NVIDIA-H100-80GB-HBM3" and Slurm's AutoDetect=nvml
 * GRES type "nvidia_h100_80gb_hbm3" are one key, "nvidia-h100-80gb-hbm3". Writes at most len - 1 bytes and a NUL
 * into out; returns false (out truncated) when the key does not fit. NULL-safe for alias.
 */
bool mp_alias_key(const char *alias, char *out, size_t len);

/*
 * The word of words (n of them; NULL entries skipped) a misspelt `asked` most likely meant, or NULL when none is
 * near: both compared ASCII-lowercased with '-', '_', '.' and ' ' dropped ("fp8e4m3" is "fp8_e4m3"), nearest by
 * Levenshtein distance (one edit per letter added, dropped or changed; a swap of two letters is two) within a third
 * of asked's length (none below 4 letters: "x" is near no field); a word asked is the start of (3 letters at least: "bfloat" -> "bfloat16") is at
 * distance 1. Ties go to the earlier word. Strings of 64 bytes or more are never near. Worked examples (tests/
 * test_suggest.c): "sequence_lenght" -> sequence_length, "fp8e4m3" -> fp8_e4m3, "adamw8bit" -> adamw_8bit.
 */
const char *mp_nearest_word(const char *asked, const char *const *words, size_t n);

/* A file embedded at build time by tools/embed.c (the contract, the web page's files). Arrays of these end with a
 * { NULL, NULL, 0 } entry. */
typedef struct mp_embedded_file {
	const char *name;	/* base name without extension: "openapi", "index" */
	const char *data;	/* NUL-terminated contents */
	size_t len;
} mp_embedded_file;

#endif /* MP_BASE_H */
