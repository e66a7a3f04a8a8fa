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

/* What a field takes, for its messages: "an integer between 1 and 1048576", "one of: fused, eager", ... */
static void allowed_of(const mpm_field *f, char *buf, size_t len)
{
	switch (f->type) {
	case MPM_F_U64:
		snprintf(buf, len, "an integer between %llu and %llu", (unsigned long long)f->min,
			 (unsigned long long)f->max);
		return;
	case MPM_F_DOUBLE:
		snprintf(buf, len, "a number between %g and %g", f->dmin, f->dmax);
		return;
	case MPM_F_BOOL:
		snprintf(buf, len, "true or false");
		return;
	case MPM_F_DTYPE: {
		char list[512];

		mp_dtype_list(f->dtypes, list, sizeof(list));
		snprintf(buf, len, "one of: %s (" MP_DTYPE_ALIASES ")", list);
		return;
	}
	case MPM_F_ENUM: {
		char list[512] = "";

		for (int i = 0; f->names[i]; i++)
			if (!mp_list_add(list, sizeof(list), f->names[i]))
				break;
		snprintf(buf, len, "one of: %s", list);
		return;
	}
	case MPM_F_STRING:
		snprintf(buf, len, "a non-empty string of at most %zu bytes", f->size - 1);
		return;
	case MPM_F_ANY:
		snprintf(buf, len, "a value");
		return;
	}
	snprintf(buf, len, "a value");
}

/* A member's JSON pointer: "<pointer>/<name>"; under the base "?" (a query string, as mp_fail_at writes it)
 * "?<name>". The name is cut at 60 bytes. */
static void member_pointer(char *field, size_t cap, const char *pointer, const char *name)
{
	snprintf(field, cap, "%s%s%.60s", pointer, strcmp(pointer, "?") == 0 ? "" : "/", name);
}

/* A misspelt value's problem: "did you mean <near>? (got '<got>'); <name> must be <allowed>". */
static mp_status bad_near(mp_error *err, const char *pointer, const mpm_field *f, const char *got, const char *near)
{
	char field[MP_POINTER_MAX], allowed[640];

	member_pointer(field, sizeof(field), pointer, f->name);
	allowed_of(f, allowed, sizeof(allowed));
	return mp_fail(err, MP_EINVAL, field, "did you mean %s? (got '%.40s'); %s must be %s", near, got, f->name,
		       allowed);
}

/* A field's problem: "<pointer>/<name>" with "<name> <what>: <allowed>[ (got ...)]". */
static mp_status bad(mp_error *err, const char *pointer, const mpm_field *f, const char *what, const char *got)
{
	char field[MP_POINTER_MAX], allowed[640];

	member_pointer(field, sizeof(field), pointer, f->name);
	allowed_of(f, allowed, sizeof(allowed));
	return mp_fail(err, MP_EINVAL, field, "%s %s %s%s", f->name, what, allowed, got ? got : "");
}

/* What a refused value was, for the message: " (got -1)", " (got the string \"4\")", " (got null)", ... */
static const char *got_of(const cJSON *v, char *buf, size_t len)
{
	if (cJSON_IsNumber(v))
		snprintf(buf, len, " (got %.17g)", v->valuedouble);
	else if (cJSON_IsString(v))
		snprintf(buf, len, " (got the string \"%.24s%s\")", v->valuestring, strlen(v->valuestring) > 24 ? "..." : "");
	else if (cJSON_IsBool(v))
		snprintf(buf, len, " (got %s)", cJSON_IsTrue(v) ? "true" : "false");
	else if (cJSON_IsNull(v))
		snprintf(buf, len, " (got null)");
	else
		snprintf(buf, len, " (got %s)", cJSON_IsArray(v) ? "an array" : "an object");
	return buf;
}

static mp_status decode_one(const cJSON *v, const char *pointer, const mpm_field *f, void *dst, mp_error *err)
{
	char *p = (char *)dst + f->offset;
	char got[64];

	switch (f->type) {
	case MPM_F_U64:
		if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < 0 ||
		    v->valuedouble > MAX_EXACT_INTEGER)
			return bad(err, pointer, f, "must be", got_of(v, got, sizeof(got)));
		if ((uint64_t)v->valuedouble < f->min || (uint64_t)v->valuedouble > f->max) {
			snprintf(got, sizeof(got), " (got %.17g)", v->valuedouble);
			return bad(err, pointer, f, "must be", got);
		}
		*(uint64_t *)p = (uint64_t)v->valuedouble;
		return MP_OK;
	case MPM_F_DOUBLE:
		if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < f->dmin ||
		    v->valuedouble > f->dmax)
			return bad(err, pointer, f, "must be", got_of(v, got, sizeof(got)));
		*(double *)p = v->valuedouble;
		return MP_OK;
	case MPM_F_BOOL:
		if (!cJSON_IsBool(v))
			return bad(err, pointer, f, "must be", got_of(v, got, sizeof(got)));
		*(bool *)p = cJSON_IsTrue(v);
		return MP_OK;
	case MPM_F_DTYPE: {
		mp_dtype dt = cJSON_IsString(v) ? mp_dtype_from_alias(v->valuestring) : MP_DTYPE_INVALID;

		if (dt == MP_DTYPE_INVALID || !(f->dtypes & MPM_DT(dt))) {
			mp_dtype near = cJSON_IsString(v) ? mp_dtype_nearest(v->valuestring, f->dtypes) : MP_DTYPE_INVALID;

			if (near != MP_DTYPE_INVALID)
				return bad_near(err, pointer, f, v->valuestring, mp_dtype_name(near));
			return bad(err, pointer, f, "must be", NULL);
		}
		*(mp_dtype *)p = dt;
		return MP_OK;
	}
	case MPM_F_ENUM: {
		const char *near;
		size_t n = 0;

		for (int i = 0; f->names[i]; i++, n++)
			if (cJSON_IsString(v) && strcmp(v->valuestring, f->names[i]) == 0) {
				*(int *)p = i;
				return MP_OK;
			}
		near = cJSON_IsString(v) ? mp_nearest_word(v->valuestring, f->names, n) : NULL;
		return near ? bad_near(err, pointer, f, v->valuestring, near) : bad(err, pointer, f, "must be", NULL);
	}
	case MPM_F_STRING:
		if (!cJSON_IsString(v) || strlen(v->valuestring) == 0 || strlen(v->valuestring) >= f->size)
			return bad(err, pointer, f, "must be", NULL);
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
	mp_problems fp = MP_PROBLEMS_INIT;
	const cJSON *seen[MPM_MAX_TABLE_FIELDS] = { 0 }; /* each field's member, found in one pass over the object */
	const cJSON *v;

	if (!cJSON_IsObject(obj))
		return mp_error_keep(err, mp_fail(err, MP_EINVAL, pointer[0] ? pointer : "/", "expected a JSON object"));
	if (nfields > MPM_MAX_TABLE_FIELDS)
		return mp_fail(err, MP_EINTERNAL, pointer, "a field table of %zu fields (at most %d)", nfields,
			       MPM_MAX_TABLE_FIELDS);
	/* Unknown keys: a misspelt optional field must not pass unnoticed. Every problem is recorded (mp_error_keep)
	 * and the decode goes on, so one answer names them all; the first is returned. */
	cJSON_ArrayForEach(v, obj)
	{
		size_t i;

		for (i = 0; i < nfields; i++)
			if (fields[i].name[0] == v->string[0] && strcmp(fields[i].name, v->string) == 0)
				break;
		if (i < nfields) {
			if (seen[i] == NULL) /* the first of a repeated key, as cJSON's lookup (the parser refuses repeats) */
				seen[i] = v;
			continue;
		}
		{
			char field[MP_POINTER_MAX], known[768] = "", hint[96] = "";
			const char *names[MPM_MAX_TABLE_FIELDS], *near;

			for (i = 0; i < nfields; i++)
				if (!mp_list_add(known, sizeof(known), fields[i].name))
					break;
			for (i = 0; i < nfields && i < MPM_MAX_TABLE_FIELDS; i++)
				names[i] = fields[i].name;
			near = mp_nearest_word(v->string, names, i);
			if (near)
				snprintf(hint, sizeof(hint), "did you mean %s? ", near);
			member_pointer(field, sizeof(field), pointer, v->string);
			mp_problems_note(&fp,
					 mp_fail(err, MP_EINVAL, field, "unknown field '%.60s'; %sknown fields: %s",
						 v->string, hint, known),
					 err);
		}
	}
	for (size_t i = 0; i < nfields; i++) {
		mp_status st;

		v = seen[i];
		if (v == NULL) {
			/* an MPM_F_ANY member's absence is its caller's to name: it knows what is allowed there */
			if (fields[i].required && fields[i].type != MPM_F_ANY)
				mp_problems_note(&fp, bad(err, pointer, &fields[i], "is required:", NULL), err);
			continue;
		}
		st = decode_one(v, pointer, &fields[i], dst, err);
		mp_problems_note(&fp, st, err);
	}
	return mp_problems_end(&fp, err);
}
