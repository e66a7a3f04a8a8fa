/*
 * fields.h: decoding of JSON objects by a field table. Each object type declares its fields once (name, type,
 * required, range, destination); decoding then validates every value and names the field of every problem.
 * Unknown members are refused, so a typo never silently falls back to a default. The model readers use it for the
 * architecture object, and codec/ (one floor up) for every request body.
 */
#ifndef MPM_FIELDS_H
#define MPM_FIELDS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "../planner/memplan.h"

typedef enum mpm_ftype {
	MPM_F_U64,	/* integer in [min, max] -> uint64_t */
	MPM_F_DOUBLE,	/* number in [dmin, dmax] -> double */
	MPM_F_BOOL,	/* -> bool */
	MPM_F_DTYPE,	/* dtype name or alias (mp_dtype_from_alias) allowed by `dtypes` mask -> mp_dtype */
	MPM_F_ENUM,	/* one of `names` -> int (its index) */
	MPM_F_STRING,	/* -> char[size] */
	MPM_F_ANY,	/* any JSON value, decoded by the caller (skipped here, only checked for presence) */
} mpm_ftype;

typedef struct mpm_field {
	const char *name;
	mpm_ftype type;
	bool required;
	size_t offset;			/* into the destination struct */
	size_t size;			/* MPM_F_STRING: buffer size (sizeof the member: see MPM_STR) */
	uint64_t min, max;		/* MPM_F_U64 */
	double dmin, dmax;		/* MPM_F_DOUBLE (inclusive) */
	uint32_t dtypes;		/* MPM_F_DTYPE: mask of 1u << mp_dtype */
	const char *const *names;	/* MPM_F_ENUM: NULL-terminated */
} mpm_field;

#define MPM_DT(x) (1u << (x))
/* The size of a string member of type T, for .size: the table can never disagree with the struct. */
#define MPM_STR(T, member) sizeof(((T *)0)->member)
#define MPM_COUNT(table) (sizeof(table) / sizeof((table)[0]))

/* The most fields one table may have (the inference body has about 40). */
#define MPM_MAX_TABLE_FIELDS 64

/*
 * Decodes obj into dst by the table. Fields that are absent keep the value dst already holds (the
 * caller's documented default); required fields must be present (an MPM_F_ANY field's absence is left to the
 * caller, which decodes it). Every problem is checked, not only the first: each unknown, missing or bad field
 * is recorded in err->all (mp_error_keep) with what the field allows, and the decode goes on. Returns the first
 * problem's status with err naming it ("<pointer>/<field>"). Borrows obj and fields; writes only dst.
 */
mp_status mpm_decode_fields(const cJSON *obj, const char *pointer, const mpm_field *fields, size_t nfields,
			    void *dst, mp_error *err);

#endif /* MPM_FIELDS_H */
