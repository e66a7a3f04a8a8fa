/*
 * decode.h: request decoding by a field table. Each request type declares its fields once (name, type,
 * required, range, destination); decoding then validates every value and names the field of the first
 * problem. Unknown fields are rejected, so a typo never silently falls back to a default.
 */
#ifndef MPD_DECODE_H
#define MPD_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "../planner/memplan.h"

typedef enum mpd_ftype {
	MPD_F_U64,	/* integer in [min, max] -> uint64_t */
	MPD_F_DOUBLE,	/* number in [dmin, dmax] -> double */
	MPD_F_BOOL,	/* -> bool */
	MPD_F_DTYPE,	/* dtype name allowed by `dtypes` mask -> mp_dtype */
	MPD_F_ENUM,	/* one of `names` -> int (its index) */
	MPD_F_STRING,	/* -> char[size] */
	MPD_F_ANY,	/* any JSON value, decoded by the handler (skipped here, only checked for presence) */
} mpd_ftype;

typedef struct mpd_field {
	const char *name;
	mpd_ftype type;
	bool required;
	size_t offset;			/* into the destination struct */
	size_t size;			/* MPD_F_STRING: buffer size */
	uint64_t min, max;		/* MPD_F_U64 */
	double dmin, dmax;		/* MPD_F_DOUBLE (inclusive) */
	uint32_t dtypes;		/* MPD_F_DTYPE: mask of 1u << mp_dtype */
	const char *const *names;	/* MPD_F_ENUM: NULL-terminated */
} mpd_field;

#define MPD_DT(x) (1u << (x))

/*
 * Decodes obj into dst by the table. Fields that are absent keep the value dst already holds (the
 * caller's documented default); required fields must be present. Errors: MP_EINVAL naming
 * "<pointer>/<field>" for the first bad or unknown field.
 */
mp_status mpd_decode_fields(const cJSON *obj, const char *pointer, const mpd_field *fields, size_t nfields,
			    void *dst, mp_error *err);

/* Parses a request body, which must be NUL-terminated at body[len]; MP_EPARSE with the position of the error when it is not JSON, MP_EINVAL when the
 * top level is not an object, when a string holds U+0000, or when a member name appears twice in one object (naming
 * the repeated member, e.g. "/model/hf_config/num_hidden_layers"). The result is owned by the caller (cJSON_Delete). */
mp_status mpd_parse_body(const char *body, size_t len, cJSON **out, mp_error *err);

/*
 * The offset of the first byte of s[0..len) that is not part of a well-formed UTF-8 sequence (RFC 3629:
 * no overlong forms, no surrogates, nothing above U+10FFFF), or len when all of it is valid.
 */
size_t mpd_utf8_invalid_at(const char *s, size_t len);

/* Copies src into dst (size cap, NUL-terminated) replacing every byte of an ill-formed UTF-8 sequence by '?',
 * so text that echoes a request can always be sent as JSON. Cuts only at a character boundary. */
void mpd_utf8_sanitize(char *dst, size_t cap, const char *src);

#endif /* MPD_DECODE_H */
