/*
 * mpc_json.c: request bodies as JSON trees (strict: no NUL, no duplicate member, well-formed UTF-8) and the one writer
 * of JSON text, mpc_out (see mpc_json.h). cJSON parses, and its printer escapes the writer's strings.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "mpc_json.h"

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

/* Appends key to a JSON pointer (RFC 6901: ~ as ~0, / as ~1); one too long for cap ends in "/...". */
static void pointer_append(char *ptr, size_t cap, const char *key)
{
	(void)mp_pointer_add(ptr, cap, key); /* a pointer too long ends in "/..." (core/mp_base.h) */
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
	int index;		/* position among the object's members */
	const cJSON *item;
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
 * object. Returns the repeated member (the earliest repeat in document order, its later copy), or NULL with
 * *status MP_OK when there is none, MP_ENOMEM when it could not look. Builds no pointer on the way (every body
 * is checked): path_to names the member once one is found.
 */
static const cJSON *find_duplicate(const cJSON *v, mp_status *status)
{
	const cJSON *c, *found;
	int n = 0, i = 0;

	cJSON_ArrayForEach(c, v) n++;
	if (cJSON_IsObject(v) && n > 1 && n <= 12) {
		/* a small object (every request body's top level): each pair compared, no allocation; the earliest
		 * repeat in document order, as the sorted search below finds it */
		const cJSON *x, *y;

		for (x = v->child; x; x = x->next) {
			for (y = v->child; y != x; y = y->next)
				if (strcmp(x->string ? x->string : "", y->string ? y->string : "") == 0)
					return x;
		}
	} else if (cJSON_IsObject(v) && n > 1) {
		key_at *keys = malloc((size_t)n * sizeof(*keys));
		int dup = -1;

		if (keys == NULL) {
			*status = MP_ENOMEM;
			return v;
		}
		cJSON_ArrayForEach(c, v)
		{
			keys[i].key = c->string ? c->string : "";
			keys[i].index = i;
			keys[i].item = c;
			i++;
		}
		qsort(keys, (size_t)n, sizeof(*keys), key_cmp);
		for (i = 1; i < n; i++)
			if (strcmp(keys[i - 1].key, keys[i].key) == 0 && (dup < 0 || keys[i].index < keys[dup].index))
				dup = i;
		found = dup >= 0 ? keys[dup].item : NULL;
		free(keys);
		if (found)
			return found;
	}
	cJSON_ArrayForEach(c, v)
	{
		if ((found = find_duplicate(c, status)) != NULL)
			return found;
	}
	return NULL;
}

/* The JSON pointer of target inside v appended to ptr (cap bytes; one too long ends in "/...": core/mp_base.h).
 * false when target is not in v. */
static bool path_to(const cJSON *v, const cJSON *target, char *ptr, size_t cap)
{
	const cJSON *c;
	int i = 0;

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
		if (c == target || path_to(c, target, ptr, cap))
			return true;
		ptr[keep] = '\0';
		i++;
	}
	return false;
}

bool mpc_find_duplicate(const cJSON *v, char *ptr, size_t cap, mp_status *status)
{
	const cJSON *dup;

	*status = MP_OK;
	dup = find_duplicate(v, status);
	if (dup == NULL)
		return false;
	if (*status == MP_OK) {
		*status = MP_EINVAL;
		path_to(v, dup, ptr, cap);
	}
	return true;
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
		size_t at = end && end >= body ? (size_t)(end - body) : 0, depth = 0;
		bool in_string = false, escaped = false;

		/* cJSON stops at CJSON_NESTING_LIMIT levels: a body that nests that deep before the error is refused for
		 * its depth, not called invalid */
		for (size_t i = 0; i < at && i < len && depth < CJSON_NESTING_LIMIT; i++) {
			char ch = body[i];

			if (in_string) {
				if (escaped)
					escaped = false;
				else if (ch == '\\')
					escaped = true;
				else if (ch == '"')
					in_string = false;
			} else if (ch == '"')
				in_string = true;
			else if (ch == '[' || ch == '{')
				depth++;
			else if ((ch == ']' || ch == '}') && depth)
				depth--;
		}
		if (depth >= CJSON_NESTING_LIMIT)
			return mp_fail(err, MP_EPARSE, "", "the request body nests arrays and objects deeper than %d levels "
				       "(near byte %zu): no request of this API nests more than a few",
				       CJSON_NESTING_LIMIT, at);
		return mp_fail(err, MP_EPARSE, "", "the request body is not valid JSON (error near byte %zu)", at);
	}
	if (!cJSON_IsObject(doc)) {
		cJSON_Delete(doc);
		return mp_fail(err, MP_EINVAL, "", "the request body must be a JSON object");
	}
	{
		mp_status st = refuse_nul(body, len, err);
		const cJSON *dup = st == MP_OK ? find_duplicate(doc, &st) : NULL;

		if (dup && st == MP_ENOMEM) {
			st = mp_fail(err, MP_ENOMEM, "", "out of memory");
		} else if (dup) {
			char ptr[sizeof(err->field)] = "";

			path_to(doc, dup, ptr, sizeof(ptr));
			st = mp_fail(err, MP_EINVAL, ptr, "a member appears twice in one object; give each once");
		}
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
 * costs about ten times as much, and a plan prints about a hundred integers. Two digits per division. */
static int int_digits(long long v, char *buf)
{
	static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
				    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
				    "8081828384858687888990919293949596979899";
	char tmp[24];
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
	int n = sizeof(tmp), k = 0, len;

	while (u >= 100) {
		unsigned d = (unsigned)(u % 100) * 2;

		u /= 100;
		tmp[--n] = pairs[d + 1];
		tmp[--n] = pairs[d];
	}
	if (u >= 10) {
		tmp[--n] = pairs[u * 2 + 1];
		tmp[--n] = pairs[u * 2];
	} else {
		tmp[--n] = (char)('0' + u);
	}
	if (v < 0)
		buf[k++] = '-';
	len = (int)sizeof(tmp) - n;
	memcpy(buf + k, tmp + n, (size_t)len);
	k += len;
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

/* ----- answers written as text (mpc_json.h: mpc_out) ------------------------------------------------------------ */

void mpc_out_init(mpc_out *o)
{
	memset(o, 0, sizeof(*o));
}

void mpc_out_free(mpc_out *o)
{
	free(o->buf);
	memset(o, 0, sizeof(*o));
}

char *mpc_out_finish(mpc_out *o, size_t *len)
{
	char *text = o->failed || o->depth != 0 || o->buf == NULL ? NULL : o->buf;

	if (text)
		o->buf = NULL;
	if (len)
		*len = text ? o->len : 0;
	mpc_out_free(o);
	return text;
}

cJSON *mpc_out_parse(mpc_out *o)
{
	char *text = mpc_out_finish(o, NULL);
	cJSON *doc = text ? cJSON_Parse(text) : NULL;

	free(text);
	return doc;
}

char *mpc_out_take(mpc_out *o, size_t *len)
{
	char *text = o->failed ? NULL : o->buf;

	*len = text ? o->len : 0;
	if (o->failed)
		return NULL;
	o->buf = NULL;
	o->len = o->cap = 0;
	return text;
}

/* Grows the buffer to hold n more bytes and a NUL. */
static bool grow(mpc_out *o, size_t n)
{
	size_t cap;
	char *p;

	if (o->failed)
		return false;
	cap = o->cap ? o->cap : 8192; /* a plan's answer is about 5 KB */
	while (cap < o->len + n + 1)
		cap *= 2;
	p = realloc(o->buf, cap);
	if (p == NULL) {
		o->failed = true;
		failures++; /* counted like cJSON's own (mpc_alloc_failures): the answer is incomplete */
		return false;
	}
	o->buf = p;
	o->cap = cap;
	return true;
}

/* Room for n more bytes and a NUL (the buffer is never full when failed is set: cap stays at len). */
static inline bool reserve(mpc_out *o, size_t n)
{
	return (o->len + n + 1 <= o->cap && !o->failed) || grow(o, n);
}

static inline void put(mpc_out *o, const char *s, size_t n)
{
	if (!reserve(o, n))
		return;
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

/* The bytes JSON escapes: control characters, the quote and the backslash (cJSON prints every other byte as it
 * is, UTF-8 included). */
static const unsigned char escaped[256] = {
	[0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1, [0x05] = 1, [0x06] = 1, [0x07] = 1,
	[0x08] = 1, [0x09] = 1, [0x0A] = 1, [0x0B] = 1, [0x0C] = 1, [0x0D] = 1, [0x0E] = 1, [0x0F] = 1,
	[0x10] = 1, [0x11] = 1, [0x12] = 1, [0x13] = 1, [0x14] = 1, [0x15] = 1, [0x16] = 1, [0x17] = 1,
	[0x18] = 1, [0x19] = 1, [0x1A] = 1, [0x1B] = 1, [0x1C] = 1, [0x1D] = 1, [0x1E] = 1, [0x1F] = 1,
	['"'] = 1, ['\\'] = 1,
};

/* Whether s[0..n) holds nothing JSON escapes, eight bytes at a time: a byte below 0x20, or equal to '"' or '\\',
 * sets its high bit in the mask below (the exact "has a zero byte" test, Hacker's Delight 6-1; bytes >= 0x80 never
 * match), then the table for the last few bytes. */
static bool plain(const char *s, size_t n)
{
	const uint64_t ones = UINT64_C(0x0101010101010101), highs = UINT64_C(0x8080808080808080);
	const uint64_t quotes = ones * '"', backslashes = ones * '\\', spaces = ones * 0x20;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t x, q, b;

		memcpy(&x, s + i, 8);
		q = x ^ quotes;
		b = x ^ backslashes;
		if (((x - spaces) & ~x & highs) | ((q - ones) & ~q & highs) | ((b - ones) & ~b & highs))
			return false;
	}
	for (; i < n; i++)
		if (escaped[(unsigned char)s[i]])
			return false;
	return true;
}

/* A JSON string: copied between quotes when plain, else escaped by cJSON's printer. */
static void put_string(mpc_out *o, const char *s)
{
	size_t n = strlen(s);

	if (plain(s, n)) {
		if (!reserve(o, n + 2))
			return;
		o->buf[o->len++] = '"';
		memcpy(o->buf + o->len, s, n);
		o->len += n;
		o->buf[o->len++] = '"';
		o->buf[o->len] = '\0';
		return;
	}
	{
		cJSON item;
		int room = n < (size_t)(INT32_MAX / 8) ? (int)(6 * n + 8) : 0; /* \u00XX is the longest escape */

		memset(&item, 0, sizeof(item));
		item.type = cJSON_String;
		item.valuestring = (char *)s; /* only read */
		if (room == 0 || !reserve(o, (size_t)room)) {
			o->failed = true;
			return;
		}
		if (!cJSON_PrintPreallocated(&item, o->buf + o->len, room, false)) {
			o->failed = true;
			return;
		}
		o->len += strlen(o->buf + o->len);
	}
}

/* The comma before a value, and its key. Keys are the encoders' own member names (literals, tensor-class and dtype
 * names: nothing to escape), written as they are. */
static void begin_value(mpc_out *o, const char *key)
{
	bool comma = o->depth > 0 && o->more[o->depth - 1];
	size_t n = key ? strlen(key) : 0;
	char *p;

	if (o->depth > 0)
		o->more[o->depth - 1] = true;
	if (!reserve(o, n + 4))
		return;
	p = o->buf + o->len;
	if (comma)
		*p++ = ',';
	if (key) {
		*p++ = '"';
		memcpy(p, key, n);
		p += n;
		*p++ = '"';
		*p++ = ':';
	}
	*p = '\0';
	o->len = (size_t)(p - o->buf);
}

static void open_container(mpc_out *o, const char *key, char open, char close)
{
	begin_value(o, key);
	if (o->depth >= MPC_OUT_MAX_DEPTH) {
		o->failed = true;
		return;
	}
	put(o, &open, 1);
	o->more[o->depth] = false;
	o->close[o->depth] = close;
	o->depth++;
}

void mpc_w_obj(mpc_out *o, const char *key)
{
	open_container(o, key, '{', '}');
}

void mpc_w_arr(mpc_out *o, const char *key)
{
	open_container(o, key, '[', ']');
}

void mpc_w_end(mpc_out *o)
{
	if (o->depth == 0) {
		o->failed = true;
		return;
	}
	o->depth--;
	put(o, &o->close[o->depth], 1);
}

/*
 * The text cJSON's print_number gives for v (see mpc_w_num), computed without printf when it can be decided exactly:
 * glibc's printf rounds the exact binary value, and its "%1.15g" costs about 3,000 instructions and a malloc per
 * call, so a plan's four fractional figures cost more than the rest of its answer. Here, for 1e-9 <= |v| < 1e16:
 *   x = |v| x 10^s (s <= 27, so 10^s is exact in the 64-bit long double mantissa) carries one rounding, relative
 *   2^-64, an absolute error below 2^-7 for x < 10^17; when x's fraction is within 0.01 of 1/2 (a tie, or too
 *   close to tell) this gives up and the caller uses snprintf. Otherwise round(x) is printf's digit string.
 *   The read-back of the 15-digit form (cJSON's sscanf, correctly rounded) is D x 10^k: exact in long double for
 *   k >= 0, one rounding for k < 0, which gives up when the quotient lies within one long double unit of a midpoint
 *   between doubles (the only place where rounding twice could differ from rounding once).
 * Returns false (the caller prints with snprintf) outside that range, without an 80-bit long double, or when it
 * gave up. tests/test_codec.c compares it with cJSON's printer on a million doubles, ties and boundaries included.
 */
#if LDBL_MANT_DIG >= 64
static const long double pow10l_exact[28] = {
	1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,  1e10L, 1e11L, 1e12L, 1e13L,
	1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L, 1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L,
};

/* The p significant digits of a (1e-9 <= a < 1e16) as an integer in [10^(p-1), 10^p) and the decimal exponent of
 * the first one; false when too close to a rounding boundary to decide. */
static bool digits_of(long double a, int p, uint64_t *d, int *exp10)
{
	const long double lim = pow10l_exact[p], low = pow10l_exact[p - 1];
	int e = (int)floor(log10((double)a)), s;
	long double x = 0, f;

	for (int tries = 0; tries < 3; tries++) {
		s = p - 1 - e;
		if (s < 0 || s > 27)
			return false;
		x = a * pow10l_exact[s];
		if (fabsl(x - lim) < 0.02L || fabsl(x - low) < 0.02L)
			return false; /* at a power of ten: let printf decide */
		if (x >= lim)
			e++;
		else if (x < low)
			e--;
		else
			break;
	}
	if (!(x >= low && x < lim))
		return false;
	f = x - floorl(x);
	if (fabsl(f - 0.5L) < 0.01L)
		return false;
	*d = (uint64_t)floorl(x) + (f > 0.5L);
	if ((long double)*d >= lim) { /* 99...9.6 rounds up to the next power of ten */
		*d = (uint64_t)low;
		e++;
	}
	*exp10 = e;
	return true;
}

/* printf's "%1.<p>g" layout of p digits d (no leading zero) with exponent e: fixed for -4 <= e < p, else d.ddde+XX;
 * trailing zeros (and a bare point) removed. */
static int layout_g(bool neg, uint64_t d, int p, int e, char *out)
{
	char dig[24];
	int nd = p, o = 0;

	for (int i = p - 1; i >= 0; i--) {
		dig[i] = (char)('0' + d % 10);
		d /= 10;
	}
	while (nd > 1 && dig[nd - 1] == '0')
		nd--;
	if (neg)
		out[o++] = '-';
	if (e < -4 || e >= p) {
		out[o++] = dig[0];
		if (nd > 1) {
			out[o++] = '.';
			for (int i = 1; i < nd; i++)
				out[o++] = dig[i];
		}
		out[o++] = 'e';
		out[o++] = e < 0 ? '-' : '+';
		if (e < 0)
			e = -e;
		if (e >= 100)
			out[o++] = (char)('0' + e / 100);
		out[o++] = (char)('0' + e / 10 % 10);
		out[o++] = (char)('0' + e % 10);
	} else if (e >= 0) {
		for (int i = 0; i <= e; i++)
			out[o++] = dig[i];
		if (nd > e + 1) {
			out[o++] = '.';
			for (int i = e + 1; i < nd; i++)
				out[o++] = dig[i];
		}
	} else {
		out[o++] = '0';
		out[o++] = '.';
		for (int i = 0; i < -e - 1; i++)
			out[o++] = '0';
		for (int i = 0; i < nd; i++)
			out[o++] = dig[i];
	}
	out[o] = '\0';
	return o;
}

static bool fast_number(double v, char *out, int *n)
{
	long double a = fabsl((long double)v), t;
	uint64_t d15, d17;
	int e15, e17, k;

	if (!(a >= 1e-9L && a < 1e16L) || !digits_of(a, 15, &d15, &e15))
		return false;
	/* cJSON's read-back of the 15 digits: the double nearest d15 x 10^(e15 - 14) */
	k = e15 - 14;
	if (k >= 0) {
		t = (long double)d15 * pow10l_exact[k];
	} else {
		int ex;
		uint64_t mant, tail;

		if (-k > 27)
			return false;
		t = (long double)d15 / pow10l_exact[-k];
		mant = (uint64_t)ldexpl(frexpl(t, &ex), 64);
		tail = mant & 0x7FF; /* the 11 bits a double drops */
		if (tail >= 0x3FF && tail <= 0x401)
			return false;
	}
	{
		double back = (double)t, big = fabs(back) > fabs(v) ? fabs(back) : fabs(v);

		if (fabs(back - fabs(v)) <= big * DBL_EPSILON) {
			*n = layout_g(v < 0, d15, 15, e15, out);
			return true;
		}
	}
	if (!digits_of(a, 17, &d17, &e17))
		return false;
	*n = layout_g(v < 0, d17, 17, e17, out);
	return true;
}
#else
static bool fast_number(double v, char *out, int *n)
{
	(void)v;
	(void)out;
	(void)n;
	return false;
}
#endif

void mpc_w_u64(mpc_out *o, const char *key, uint64_t v)
{
	char digits[24];
	size_t n;

	if (v > MP_MAX_PLAN_BYTES) { /* exact up to 2^53, cJSON's digits of the double beyond */
		mpc_w_num(o, key, (double)v);
		return;
	}
	begin_value(o, key);
	n = (size_t)int_digits((long long)v, digits);
	put(o, digits, n);
}

void mpc_w_i64(mpc_out *o, const char *key, int64_t v)
{
	mpc_w_num(o, key, (double)v);
}

void mpc_w_num(mpc_out *o, const char *key, double v)
{
	char digits[64];

	begin_value(o, key);
	if (isfinite(v) && fabs(v) <= (double)MP_MAX_PLAN_BYTES && v == floor(v) && !(v == 0 && signbit(v))) {
		size_t n = (size_t)int_digits((long long)v, digits); /* mpc_number's raw digits */

		put(o, digits, n);
		return;
	}
	/* cJSON's print_number, step for step (cJSON 1.7: "%1.15g" when it reads back within DBL_EPSILON, relative,
	 * else "%1.17g"; NaN and infinities as null). tests/test_codec.c checks the bytes against cJSON's printer. */
	if (isnan(v) || isinf(v)) {
		put(o, "null", 4);
		return;
	}
	{
		int n = 0;

		if (!fast_number(v, digits, &n)) {
			double back, big;

			n = snprintf(digits, sizeof(digits), "%1.15g", v);
			back = strtod(digits, NULL); /* sscanf's conversion, at a third of the cost */
			big = fabs(back) > fabs(v) ? fabs(back) : fabs(v);
			if (!(fabs(back - v) <= big * DBL_EPSILON))
				n = snprintf(digits, sizeof(digits), "%1.17g", v);
		}
		if (n <= 0 || (size_t)n >= sizeof(digits)) {
			o->failed = true;
			return;
		}
		put(o, digits, (size_t)n);
	}
}

void mpc_w_str(mpc_out *o, const char *key, const char *v)
{
	begin_value(o, key);
	put_string(o, v ? v : "");
}

void mpc_w_lit(mpc_out *o, const char *key, const char *v)
{
	size_t n = strlen(v);

	begin_value(o, key);
	if (!reserve(o, n + 2))
		return;
	o->buf[o->len++] = '"';
	memcpy(o->buf + o->len, v, n);
	o->len += n;
	o->buf[o->len++] = '"';
	o->buf[o->len] = '\0';
}

void mpc_w_bool(mpc_out *o, const char *key, bool v)
{
	begin_value(o, key);
	if (v)
		put(o, "true", 4);
	else
		put(o, "false", 5);
}

void mpc_w_null(mpc_out *o, const char *key)
{
	begin_value(o, key);
	put(o, "null", 4);
}

void mpc_w_u64_or_null(mpc_out *o, const char *key, uint64_t v)
{
	if (v)
		mpc_w_u64(o, key, v);
	else
		mpc_w_null(o, key);
}

void mpc_w_num_or_null(mpc_out *o, const char *key, double v)
{
	if (v > 0)
		mpc_w_num(o, key, v);
	else
		mpc_w_null(o, key);
}

void mpc_w_str_or_null(mpc_out *o, const char *key, const char *v)
{
	if (v && *v)
		mpc_w_str(o, key, v);
	else
		mpc_w_null(o, key);
}

void mpc_w_raw(mpc_out *o, const char *key, const char *json, size_t len)
{
	begin_value(o, key);
	put(o, json, len);
}

void mpc_w_item(mpc_out *o, const char *key, const cJSON *item)
{
	char *text = mpc_print(item, false);

	begin_value(o, key);
	if (text == NULL) {
		o->failed = true;
		return;
	}
	put(o, text, strlen(text));
	cJSON_free(text);
}

const cJSON *mpc_member(const cJSON *obj, const char *key)
{
	if (obj == NULL || key == NULL || !(cJSON_IsObject(obj) || cJSON_IsArray(obj)))
		return NULL;
	for (const cJSON *v = obj->child; v; v = v->next)
		if (v->string && v->string[0] == key[0] && strcmp(v->string, key) == 0)
			return v;
	return NULL;
}

void mpc_join(char *dst, size_t cap, const char *a, const char *b)
{
	size_t n = 0;

	if (cap == 0)
		return;
	for (; a && *a && n + 1 < cap; a++)
		dst[n++] = *a;
	for (; b && *b && n + 1 < cap; b++)
		dst[n++] = *b;
	dst[n] = '\0';
}

/* Whole numbers back to raw digits, as mpc_number builds them. */
static bool exact_numbers(cJSON *v)
{
	cJSON *c;

	for (c = v ? v->child : NULL; c; c = c->next) {
		if (cJSON_IsNumber(c)) {
			double x = c->valuedouble;
			cJSON *raw;

			if (!(isfinite(x) && fabs(x) <= (double)MP_MAX_PLAN_BYTES && x == floor(x) && !(x == 0 && signbit(x))))
				continue;
			raw = mpc_number(x);
			/* an object member keeps its key (the replacement by name copies it) */
			if (raw == NULL || !(c->string ? cJSON_ReplaceItemInObjectCaseSensitive(v, c->string, raw)
						       : cJSON_ReplaceItemViaPointer(v, c, raw))) {
				cJSON_Delete(raw);
				return false;
			}
			c = raw;
		} else if (!exact_numbers(c)) {
			return false;
		}
	}
	return true;
}

cJSON *mpc_parse_exact(const char *text)
{
	cJSON *doc = text ? cJSON_Parse(text) : NULL;

	if (doc && !exact_numbers(doc)) {
		cJSON_Delete(doc);
		return NULL;
	}
	return doc;
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
