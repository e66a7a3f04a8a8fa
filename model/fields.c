/*
 * fields.c: field-table decoding of JSON objects (see fields.h). Numbers arrive as doubles from cJSON: integers
 * are accepted only when integral and at most 2^53, so no value is silently rounded.
 */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "fields.h"

#define MAX_EXACT_INTEGER ((double)MP_MAX_PLAN_BYTES) /* 2^53 */

static mp_status bad(mp_error *err, const char *pointer, const char *name, const char *fmt, const char *a)
{
	char field[96];

	snprintf(field, sizeof(field), "%s/%s", pointer, name);
	return mp_fail(err, MP_EINVAL, field, fmt, name, a);
}

static mp_status decode_one(const cJSON *v, const char *pointer, const mpm_field *f, void *dst, mp_error *err)
{
	char *p = (char *)dst + f->offset;
	char buf[256];

	switch (f->type) {
	case MPM_F_U64:
		if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < 0 ||
		    v->valuedouble > MAX_EXACT_INTEGER) {
			snprintf(buf, sizeof(buf), "%llu and %llu", (unsigned long long)f->min,
				 (unsigned long long)f->max);
			return bad(err, pointer, f->name, "%s must be an integer between %s", buf);
		}
		if ((uint64_t)v->valuedouble < f->min || (uint64_t)v->valuedouble > f->max) {
			snprintf(buf, sizeof(buf), "%llu and %llu (got %.17g)", (unsigned long long)f->min,
				 (unsigned long long)f->max, v->valuedouble);
			return bad(err, pointer, f->name, "%s must be between %s", buf);
		}
		*(uint64_t *)p = (uint64_t)v->valuedouble;
		return MP_OK;
	case MPM_F_DOUBLE:
		if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < f->dmin ||
		    v->valuedouble > f->dmax) {
			snprintf(buf, sizeof(buf), "%g and %g", f->dmin, f->dmax);
			return bad(err, pointer, f->name, "%s must be a number between %s", buf);
		}
		*(double *)p = v->valuedouble;
		return MP_OK;
	case MPM_F_BOOL:
		if (!cJSON_IsBool(v))
			return bad(err, pointer, f->name, "%s must be true or false%s", "");
		*(bool *)p = cJSON_IsTrue(v);
		return MP_OK;
	case MPM_F_DTYPE: {
		mp_dtype dt = cJSON_IsString(v) ? mp_dtype_from_name(v->valuestring) : MP_DTYPE_INVALID;

		if (dt == MP_DTYPE_INVALID || !(f->dtypes & MPM_DT(dt))) {
			mp_dtype_list(f->dtypes, buf, sizeof(buf));
			return bad(err, pointer, f->name, "%s must be one of: %s", buf);
		}
		*(mp_dtype *)p = dt;
		return MP_OK;
	}
	case MPM_F_ENUM: {
		size_t used = 0;

		for (int i = 0; f->names[i]; i++)
			if (cJSON_IsString(v) && strcmp(v->valuestring, f->names[i]) == 0) {
				*(int *)p = i;
				return MP_OK;
			}
		buf[0] = '\0';
		for (int i = 0; f->names[i] && used < sizeof(buf); i++) {
			int n = snprintf(buf + used, sizeof(buf) - used, "%s%s", i ? ", " : "", f->names[i]);

			if (n < 0)
				break;
			used += (size_t)n;
		}
		return bad(err, pointer, f->name, "%s must be one of: %s", buf);
	}
	case MPM_F_STRING:
		if (!cJSON_IsString(v) || strlen(v->valuestring) == 0 || strlen(v->valuestring) >= f->size) {
			snprintf(buf, sizeof(buf), "%zu", f->size - 1);
			return bad(err, pointer, f->name, "%s must be a non-empty string of at most %s bytes", buf);
		}
		memcpy(p, v->valuestring, strlen(v->valuestring) + 1);
		return MP_OK;
	case MPM_F_ANY:
		return MP_OK;
	}
	return mp_fail(err, MP_EINTERNAL, "", "bad field table");
}

mp_status mpm_decode_fields(const cJSON *obj, const char *pointer, const mpm_field *fields, size_t nfields,
			    void *dst, mp_error *err)
{
	const cJSON *v;

	if (!cJSON_IsObject(obj))
		return mp_fail(err, MP_EINVAL, pointer[0] ? pointer : "/", "expected a JSON object");
	/* Unknown keys first: a misspelt optional field must not pass unnoticed. */
	cJSON_ArrayForEach(v, obj)
	{
		size_t i;

		for (i = 0; i < nfields; i++)
			if (strcmp(fields[i].name, v->string) == 0)
				break;
		if (i == nfields) {
			char field[96], known[512];
			size_t used = 0;

			known[0] = '\0';
			for (i = 0; i < nfields && used < sizeof(known); i++) {
				int n = snprintf(known + used, sizeof(known) - used, "%s%s", i ? ", " : "",
						 fields[i].name);

				if (n < 0)
					break;
				used += (size_t)n;
			}
			snprintf(field, sizeof(field), "%s/%.60s", pointer, v->string);
			return mp_fail(err, MP_EINVAL, field, "unknown field '%.60s'; known fields: %s", v->string,
				       known);
		}
	}
	for (size_t i = 0; i < nfields; i++) {
		mp_status st;

		v = cJSON_GetObjectItemCaseSensitive(obj, fields[i].name);
		if (v == NULL) {
			if (fields[i].required)
				return bad(err, pointer, fields[i].name, "%s is required%s", "");
			continue;
		}
		st = decode_one(v, pointer, &fields[i], dst, err);
		if (st != MP_OK)
			return st;
	}
	return MP_OK;
}

