/*
 * decode.c: field-table decoding of JSON request bodies (see decode.h). Numbers arrive as doubles from
 * cJSON: integers are accepted only when integral and at most 2^53, so no value is silently rounded.
 */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "decode.h"

#define MAX_EXACT_INTEGER 9007199254740992.0 /* 2^53 */

static mp_status bad(mp_error *err, const char *pointer, const char *name, const char *fmt, const char *a)
{
	char field[96];

	snprintf(field, sizeof(field), "%s/%s", pointer, name);
	return mp_fail(err, MP_EINVAL, field, fmt, name, a);
}

static mp_status decode_one(const cJSON *v, const char *pointer, const mpd_field *f, void *dst, mp_error *err)
{
	char *p = (char *)dst + f->offset;
	char buf[256];

	switch (f->type) {
	case MPD_F_U64:
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
	case MPD_F_DOUBLE:
		if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < f->dmin ||
		    v->valuedouble > f->dmax) {
			snprintf(buf, sizeof(buf), "%g and %g", f->dmin, f->dmax);
			return bad(err, pointer, f->name, "%s must be a number between %s", buf);
		}
		*(double *)p = v->valuedouble;
		return MP_OK;
	case MPD_F_BOOL:
		if (!cJSON_IsBool(v))
			return bad(err, pointer, f->name, "%s must be true or false%s", "");
		*(bool *)p = cJSON_IsTrue(v);
		return MP_OK;
	case MPD_F_DTYPE: {
		mp_dtype dt = cJSON_IsString(v) ? mp_dtype_from_name(v->valuestring) : MP_DTYPE_INVALID;

		if (dt == MP_DTYPE_INVALID || !(f->dtypes & MPD_DT(dt))) {
			mp_dtype_list(f->dtypes, buf, sizeof(buf));
			return bad(err, pointer, f->name, "%s must be one of: %s", buf);
		}
		*(mp_dtype *)p = dt;
		return MP_OK;
	}
	case MPD_F_ENUM: {
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
	case MPD_F_STRING:
		if (!cJSON_IsString(v) || strlen(v->valuestring) == 0 || strlen(v->valuestring) >= f->size) {
			snprintf(buf, sizeof(buf), "%zu", f->size - 1);
			return bad(err, pointer, f->name, "%s must be a non-empty string of at most %s bytes", buf);
		}
		memcpy(p, v->valuestring, strlen(v->valuestring) + 1);
		return MP_OK;
	case MPD_F_ANY:
		return MP_OK;
	}
	return mp_fail(err, MP_EINTERNAL, "", "bad field table");
}

mp_status mpd_decode_fields(const cJSON *obj, const char *pointer, const mpd_field *fields, size_t nfields,
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

/* Length of the well-formed UTF-8 sequence at s (at most n bytes available), or 0 when it is ill-formed. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xBF;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		len = 2;
	else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		if (c == 0xE0)
			lo = 0xA0; /* no overlong forms */
		if (c == 0xED)
			hi = 0x9F; /* no surrogates */
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		if (c == 0xF0)
			lo = 0x90;
		if (c == 0xF4)
			hi = 0x8F; /* at most U+10FFFF */
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xBF)
			return 0;
	return len;
}

size_t mpd_utf8_invalid_at(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		size_t n = utf8_seq(p + i, len - i);

		if (n == 0)
			return i;
		i += n;
	}
	return len;
}

void mpd_utf8_sanitize(char *dst, size_t cap, const char *src)
{
	const unsigned char *p = (const unsigned char *)src;
	size_t len = strlen(src), i = 0, o = 0;

	if (cap == 0)
		return;
	while (i < len) {
		size_t n = utf8_seq(p + i, len - i);

		if (n == 0) {
			if (o + 1 >= cap)
				break;
			dst[o++] = '?';
			i++;
			continue;
		}
		if (o + n >= cap)
			break;
		memcpy(dst + o, p + i, n);
		o += n;
		i += n;
	}
	dst[o] = '\0';
}

/*
 * U+0000 in a JSON string: cJSON decodes the escape into a NUL that silently ends the C string ("bf16\u0000junk"
 * reads as "bf16"). Finds each \u0000 escape inside a string of the raw text; returns how many and, in
 * marked (when not NULL, a copy of body), replaces its digits by FFFF, a noncharacter the caller checks is
 * otherwise absent, so the parsed tree shows where the NUL was.
 */
static size_t find_nul_escapes(const char *body, size_t len, char *marked)
{
	bool in_string = false;
	size_t found = 0;

	for (size_t i = 0; i < len; i++) {
		if (!in_string) {
			in_string = body[i] == '"';
			continue;
		}
		if (body[i] == '"') {
			in_string = false;
		} else if (body[i] == '\\' && i + 1 < len) {
			if (body[i + 1] == 'u' && i + 5 < len && strncmp(body + i + 2, "0000", 4) == 0) {
				found++;
				if (marked)
					memcpy(marked + i + 2, "FFFF", 4);
			}
			i++; /* the escaped character (a quote or backslash does not end or start anything) */
		}
	}
	return found;
}

/* Appends key to a JSON pointer (RFC 6901: ~ as ~0, / as ~1), cut to cap. */
static void pointer_append(char *ptr, size_t cap, const char *key)
{
	size_t used = strlen(ptr);

	if (used + 1 < cap)
		ptr[used++] = '/';
	for (; *key && used + 2 < cap; key++) {
		if (*key == '~' || *key == '/') {
			ptr[used++] = '~';
			ptr[used++] = *key == '~' ? '0' : '1';
		} else {
			ptr[used++] = *key;
		}
	}
	ptr[used] = '\0';
}

/* The pointer of the first key or string holding the U+FFFF marker. */
static bool find_marker(const cJSON *v, char *ptr, size_t cap)
{
	static const char marker[] = "\xEF\xBF\xBF";
	const cJSON *c;
	int i = 0;

	if (cJSON_IsString(v) && strstr(v->valuestring, marker))
		return true;
	cJSON_ArrayForEach(c, v)
	{
		size_t keep = strlen(ptr);
		char index[24];

		if (c->string) {
			pointer_append(ptr, cap, c->string);
			if (strstr(c->string, marker))
				return true;
		} else {
			snprintf(index, sizeof(index), "%d", i);
			pointer_append(ptr, cap, index);
		}
		if (find_marker(c, ptr, cap))
			return true;
		ptr[keep] = '\0';
		i++;
	}
	return false;
}

/* Refuses a body with U+0000 in a string, naming the member (422) when the marker trick can locate it. */
static mp_status refuse_nul(const char *body, size_t len, mp_error *err)
{
	char *marked;
	cJSON *doc;
	char ptr[sizeof(err->field)] = "";
	bool located = false;

	if (find_nul_escapes(body, len, NULL) == 0)
		return MP_OK;
	marked = strstr(body, "\xEF\xBF\xBF") == NULL && strstr(body, "\\uFFFF") == NULL &&
			 strstr(body, "\\uffff") == NULL
		     ? malloc(len + 1)
		     : NULL;
	if (marked) {
		memcpy(marked, body, len + 1);
		find_nul_escapes(body, len, marked);
		doc = cJSON_ParseWithLength(marked, len + 1);
		located = doc && find_marker(doc, ptr, sizeof(ptr));
		cJSON_Delete(doc);
		free(marked);
	}
	return mp_fail(err, MP_EINVAL, located ? ptr : "",
		       "strings must not contain U+0000 (\\u0000): it would end the value early");
}

typedef struct key_at {
	const char *key;
	int index;	/* position among the object's members */
} key_at;

static int key_cmp(const void *a, const void *b)
{
	const key_at *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : (x->index > y->index) - (x->index < y->index);
}

/*
 * Finds a member name that appears twice in one object anywhere in v (cJSON keeps both and lookups see the
 * first, so {"batch_size":1,"batch_size":64} would silently plan batch 1). Sorting keeps it O(n log n) per
 * object. On a find, ptr holds the pointer of the repeated member (the earliest repeat in document order)
 * and *status is MP_EINVAL, or MP_ENOMEM when it could not look.
 */
static bool find_duplicate(const cJSON *v, char *ptr, size_t cap, mp_status *status)
{
	const cJSON *c;
	int n = 0, i = 0;

	cJSON_ArrayForEach(c, v) n++;
	if (cJSON_IsObject(v) && n > 1) {
		key_at *keys = malloc((size_t)n * sizeof(*keys));
		int dup = -1;

		if (keys == NULL) {
			*status = MP_ENOMEM;
			return true;
		}
		cJSON_ArrayForEach(c, v)
		{
			keys[i].key = c->string ? c->string : "";
			keys[i].index = i;
			i++;
		}
		qsort(keys, (size_t)n, sizeof(*keys), key_cmp);
		for (i = 1; i < n; i++)
			if (strcmp(keys[i - 1].key, keys[i].key) == 0 && (dup < 0 || keys[i].index < keys[dup].index))
				dup = i;
		if (dup >= 0) {
			pointer_append(ptr, cap, keys[dup].key);
			free(keys);
			*status = MP_EINVAL;
			return true;
		}
		free(keys);
	}
	i = 0;
	cJSON_ArrayForEach(c, v)
	{
		size_t keep = strlen(ptr);
		char index[24];

		if (c->string) {
			pointer_append(ptr, cap, c->string);
		} else {
			snprintf(index, sizeof(index), "%d", i);
			pointer_append(ptr, cap, index);
		}
		if (find_duplicate(c, ptr, cap, status))
			return true;
		ptr[keep] = '\0';
		i++;
	}
	return false;
}

mp_status mpd_parse_body(const char *body, size_t len, cJSON **out, mp_error *err)
{
	const char *end = NULL;
	cJSON *doc;
	size_t bad_at;

	*out = NULL;
	if (len == 0)
		return mp_fail(err, MP_EPARSE, "", "the request body is empty; send a JSON object");
	/* JSON text is UTF-8 (RFC 8259 section 8.1): anything else could come back raw in an error message */
	bad_at = mpd_utf8_invalid_at(body, len);
	if (memchr(body, '\0', len) != NULL)
		return mp_fail(err, MP_EPARSE, "", "the request body holds a NUL byte (byte %zu): not JSON text",
			       (size_t)((const char *)memchr(body, '\0', len) - body));
	if (bad_at != len)
		return mp_fail(err, MP_EPARSE, "", "the request body is not valid UTF-8 (byte %zu)", bad_at);
	/* body[len] is the NUL the server keeps after the data; cJSON counts it in the length. */
	doc = cJSON_ParseWithLengthOpts(body, len + 1, &end, true);
	if (doc == NULL) {
		size_t at = end && end >= body ? (size_t)(end - body) : 0;

		return mp_fail(err, MP_EPARSE, "", "the request body is not valid JSON (error near byte %zu)", at);
	}
	if (!cJSON_IsObject(doc)) {
		cJSON_Delete(doc);
		return mp_fail(err, MP_EINVAL, "", "the request body must be a JSON object");
	}
	{
		mp_status st = refuse_nul(body, len, err);
		char ptr[sizeof(err->field)] = "";

		if (st == MP_OK && find_duplicate(doc, ptr, sizeof(ptr), &st))
			st = st == MP_ENOMEM ? mp_fail(err, MP_ENOMEM, "", "out of memory")
					     : mp_fail(err, MP_EINVAL, ptr,
						       "a member appears twice in one object; give each once");
		if (st != MP_OK) {
			cJSON_Delete(doc);
			return st;
		}
	}
	*out = doc;
	return MP_OK;
}
