/*
 * json.c: request bodies as JSON trees (strict: no NUL, no duplicate member, well-formed UTF-8) and JSON text for
 * replies (see json.h). Uses cJSON for all parsing and printing.
 */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "json.h"

static _Thread_local unsigned long failures; /* cJSON allocations that failed on this thread (mpc_json_init) */

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

size_t mpc_utf8_invalid_at(const char *s, size_t len)
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

void mpc_utf8_sanitize(char *dst, size_t cap, const char *src)
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

mp_status mpc_parse_body(const char *body, size_t len, cJSON **out, mp_error *err)
{
	const char *end = NULL;
	cJSON *doc;
	size_t bad_at;

	*out = NULL;
	if (len == 0)
		return mp_fail(err, MP_EPARSE, "", "the request body is empty; send a JSON object");
	/* JSON text is UTF-8 (RFC 8259 section 8.1): anything else could come back raw in an error message */
	bad_at = mpc_utf8_invalid_at(body, len);
	if (memchr(body, '\0', len) != NULL)
		return mp_fail(err, MP_EPARSE, "", "the request body holds a NUL byte (byte %zu): not JSON text",
			       (size_t)((const char *)memchr(body, '\0', len) - body));
	if (bad_at != len)
		return mp_fail(err, MP_EPARSE, "", "the request body is not valid UTF-8 (byte %zu)", bad_at);
	/* body[len] is the NUL the server keeps after the data; cJSON counts it in the length. */
	{
		unsigned long failed = mpc_alloc_failures();

		doc = cJSON_ParseWithLengthOpts(body, len + 1, &end, true);
		if (doc == NULL && mpc_alloc_failures() != failed) /* cJSON ran out of memory: not the client's JSON */
			return mp_fail(err, MP_ENOMEM, "", "out of memory");
	}
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

/* ----- numbers and printing ------------------------------------------------------------------------------- */

/* The decimal digits of v into buf (at least 21 bytes), NUL-terminated; returns their count. printf's "%lld"
 * costs about ten times as much, and a plan prints about a hundred integers. */
static int int_digits(long long v, char *buf)
{
	char tmp[24];
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
	int n = 0, k = 0;

	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		buf[k++] = '-';
	while (n)
		buf[k++] = tmp[--n];
	buf[k] = '\0';
	return k;
}

cJSON *mpc_number(double v)
{
	if (isfinite(v) && fabs(v) <= (double)MP_MAX_PLAN_BYTES && v == floor(v) && !(v == 0 && signbit(v))) {
		char digits[24];

		int_digits((long long)v, digits);
		return cJSON_CreateRaw(digits);
	}
	return cJSON_CreateNumber(v);
}

cJSON *mpc_add_item(cJSON *obj, const char *key, cJSON *item)
{
	if (item == NULL)
		return NULL;
	if (obj == NULL || !cJSON_AddItemToObject(obj, key, item)) {
		cJSON_Delete(item);
		return NULL;
	}
	return item;
}

cJSON *mpc_append(cJSON *arr, cJSON *item)
{
	if (item == NULL)
		return NULL;
	if (arr == NULL || !cJSON_AddItemToArray(arr, item)) {
		cJSON_Delete(item);
		return NULL;
	}
	return item;
}

cJSON *mpc_set_item(cJSON *obj, const char *key, cJSON *item)
{
	if (item == NULL)
		return NULL;
	if (obj != NULL && cJSON_GetObjectItemCaseSensitive(obj, key) != NULL) {
		if (!cJSON_ReplaceItemInObjectCaseSensitive(obj, key, item)) {
			cJSON_Delete(item);
			return NULL;
		}
		return item;
	}
	return mpc_add_item(obj, key, item);
}

cJSON *mpc_add_num(cJSON *obj, const char *key, double v)
{
	return mpc_add_item(obj, key, mpc_number(v));
}

cJSON *mpc_add_u64(cJSON *obj, const char *key, uint64_t v)
{
	return mpc_add_item(obj, key, mpc_number((double)v));
}

cJSON *mpc_add_i64(cJSON *obj, const char *key, int64_t v)
{
	return mpc_add_item(obj, key, mpc_number((double)v));
}

cJSON *mpc_add_u64_or_null(cJSON *obj, const char *key, uint64_t v)
{
	return v ? mpc_add_u64(obj, key, v) : cJSON_AddNullToObject(obj, key);
}

cJSON *mpc_add_num_or_null(cJSON *obj, const char *key, double v)
{
	return v > 0 ? mpc_add_num(obj, key, v) : cJSON_AddNullToObject(obj, key);
}

cJSON *mpc_add_str_or_null(cJSON *obj, const char *key, const char *v)
{
	return v && *v ? cJSON_AddStringToObject(obj, key, v) : cJSON_AddNullToObject(obj, key);
}

char *mpc_print(const cJSON *doc, bool pretty)
{
	if (doc == NULL)
		return NULL;
	/* the text is built in one buffer sized for a typical document */
	return cJSON_PrintBuffered(doc, 8192, pretty);
}

/* Makes every whole number of magnitude up to 2^53 under item a raw item of its digits, as the encoders add them. */
static bool numbers_as_raw(cJSON *item)
{
	cJSON *c = item->child;

	while (c) {
		cJSON *next = c->next;

		if (cJSON_IsNumber(c)) {
			cJSON *n = mpc_number(c->valuedouble);

			/* the member keeps its name: ReplaceItemViaPointer moves the item, not the key */
			if (n && c->string) {
				size_t len = strlen(c->string) + 1;

				n->string = cJSON_malloc(len);
				if (n->string)
					memcpy(n->string, c->string, len);
			}
			if (n == NULL || (c->string && n->string == NULL) || !cJSON_ReplaceItemViaPointer(item, c, n)) {
				cJSON_Delete(n);
				return false;
			}
		} else if ((cJSON_IsObject(c) || cJSON_IsArray(c)) && !numbers_as_raw(c)) {
			return false;
		}
		c = next;
	}
	return true;
}

char *mpc_reprint(const char *json, bool pretty)
{
	cJSON *doc = cJSON_Parse(json);
	char *text = doc && numbers_as_raw(doc) ? mpc_print(doc, pretty) : NULL;

	cJSON_Delete(doc);
	return text;
}

cJSON *mpc_as_parsed(const cJSON *doc)
{
	char *text = mpc_print(doc, false);
	cJSON *copy = text ? cJSON_Parse(text) : NULL;

	cJSON_free(text);
	return copy;
}

/* ----- allocation failures -------------------------------------------------------------------------------- */

static void *(*json_malloc)(size_t) = malloc;

static void *counting_malloc(size_t n)
{
	void *p = json_malloc(n);

	if (p == NULL)
		failures++;
	return p;
}

static void plain_free(void *p)
{
	free(p);
}

void mpc_json_init(void *(*malloc_fn)(size_t))
{
	cJSON_Hooks hooks = { counting_malloc, plain_free };

	json_malloc = malloc_fn ? malloc_fn : malloc;
	cJSON_InitHooks(&hooks);
}

unsigned long mpc_alloc_failures(void)
{
	return failures;
}
