/*
 * base.c: status strings, error detail and checked 64-bit arithmetic (mp_base.h). No state.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mp_base.h"

const char *mp_status_str(mp_status st)
{
	switch (st) {
	case MP_OK: return "ok";
	case MP_EINVAL: return "invalid value";
	case MP_EOVERFLOW: return "value too large";
	case MP_EUNSUPPORTED: return "unsupported";
	case MP_ENOTFOUND: return "not found";
	case MP_ENOMEM: return "out of memory";
	case MP_EPARSE: return "malformed document";
	case MP_EDB: return "database error";
	case MP_ENOTBUILTIN: return "not built in";
	case MP_ENODEV: return "hardware not available";
	case MP_EBUSY: return "busy";
	case MP_ECONFLICT: return "conflict";
	case MP_ETOOLARGE: return "request too large";
	case MP_EINTERNAL: return "internal error";
	case MP_EAUTH: return "authentication required";
	case MP_EFORBIDDEN: return "forbidden";
	case MP_EOVERLOADED: return "overloaded";
	case MP_ESTORAGE: return "database unavailable for writes";
	case MP_ENOSPACE: return "no space left for the database";
	case MP_EPRECONDITION: return "precondition failed";
	case MP_EFRAMING: return "malformed HTTP request";
	case MP_EUPSTREAM: return "the upstream service failed";
	}
	return "unknown";
}

/* The marks of a cut: a pointer cut after its last whole segment, a message cut at a character boundary. */
static const char pointer_cut[] = "/...";
static const char message_cut[] = "...";

/* err->field = base + field ("?" + "/x" = "?x"), cut after a whole segment when it does not fit; its length when cut
 * (0 when whole). */
static size_t set_field(mp_error *err, const char *base, const char *field)
{
	size_t cap = sizeof(err->field), n;
	const char *b = base ? base : "", *f = field ? field : "";

	if (strcmp(b, "?") == 0 && f[0] == '/') /* a query argument: "?name" */
		b = "?", f++;
	n = strlen(b) + strlen(f);
	if (n < cap) {
		memcpy(err->field, b, strlen(b));
		memcpy(err->field + strlen(b), f, strlen(f) + 1);
		return 0;
	}
	/* keep the longest head that ends at a '/' and leaves room for the mark */
	{
		char whole[2 * MP_POINTER_MAX];
		size_t keep;

		snprintf(whole, sizeof(whole), "%s%s", b, f);
		keep = cap - sizeof(pointer_cut);
		while (keep > 0 && whole[keep] != '/')
			keep--;
		memcpy(err->field, whole, keep);
		memcpy(err->field + keep, pointer_cut, sizeof(pointer_cut));
	}
	return n;
}

/* err->message from fmt, "..." at its end when it did not fit (never inside a UTF-8 character); then, when the
 * field was cut (cut_from bytes long), a note of it. */
static void set_message(mp_error *err, size_t cut_from, const char *fmt, va_list ap)
{
	size_t cap = sizeof(err->message);
	int n = vsnprintf(err->message, cap, fmt, ap);

	if (n >= 0 && (size_t)n >= cap) {
		size_t at = cap - sizeof(message_cut);

		while (at > 0 && ((unsigned char)err->message[at] & 0xC0) == 0x80)
			at--; /* a UTF-8 continuation byte: start of the character instead */
		memcpy(err->message + at, message_cut, sizeof(message_cut));
	}
	if (cut_from) {
		char note[96];
		size_t used = strlen(err->message);

		snprintf(note, sizeof(note), " (the field's JSON pointer is %zu bytes long: it is shown cut)", cut_from);
		if (used + strlen(note) < cap)
			memcpy(err->message + used, note, strlen(note) + 1);
	}
}

mp_status mp_fail(mp_error *err, mp_status st, const char *field, const char *fmt, ...)
{
	va_list ap;
	size_t cut;

	if (err == NULL)
		return st;
	cut = set_field(err, NULL, field);
	va_start(ap, fmt);
	set_message(err, cut, fmt, ap);
	va_end(ap);
	return st;
}

mp_status mp_fail_at(mp_error *err, mp_status st, const char *base, const char *field, const char *fmt, ...)
{
	va_list ap;
	size_t cut;

	if (err == NULL)
		return st;
	cut = set_field(err, base, field);
	va_start(ap, fmt);
	set_message(err, cut, fmt, ap);
	va_end(ap);
	return st;
}

bool mp_pointer_add(char *buf, size_t cap, const char *segment)
{
	size_t used, need = 1;

	if (buf == NULL || cap == 0)
		return false;
	used = strlen(buf);
	if (used >= sizeof(pointer_cut) - 1 && strcmp(buf + used - (sizeof(pointer_cut) - 1), pointer_cut) == 0)
		return false; /* already cut */
	for (const char *c = segment ? segment : ""; *c; c++)
		need += *c == '~' || *c == '/' ? 2 : 1;
	if (used + need >= cap) {
		size_t at = used;

		/* the mark after the last whole segment that leaves room for it */
		while (at > 0 && at + sizeof(pointer_cut) > cap)
			for (at--; at > 0 && buf[at] != '/'; at--)
				;
		if (at + sizeof(pointer_cut) <= cap)
			memcpy(buf + at, pointer_cut, sizeof(pointer_cut));
		return false;
	}
	buf[used++] = '/';
	for (const char *c = segment ? segment : ""; *c; c++) {
		if (*c == '~' || *c == '/') {
			buf[used++] = '~';
			buf[used++] = *c == '~' ? '0' : '1';
		} else {
			buf[used++] = *c;
		}
	}
	buf[used] = '\0';
	return true;
}

mp_status mp_error_keep(mp_error *err, mp_status st)
{
	mp_errors *all = err ? err->all : NULL;

	if (all == NULL || st == MP_OK)
		return st;
	for (size_t i = 0; i < all->n; i++)
		if (strcmp(all->item[i].field, err->field) == 0 && strcmp(all->item[i].message, err->message) == 0)
			return st;
	if (all->n == MP_MAX_ERRORS) {
		all->dropped++;
		return st;
	}
	snprintf(all->item[all->n].field, sizeof(all->item[0].field), "%s", err->field);
	snprintf(all->item[all->n].message, sizeof(all->item[0].message), "%s", err->message);
	all->n++;
	return st;
}

mp_status mp_problems_note(mp_problems *p, mp_status st, mp_error *err)
{
	if (st == MP_OK)
		return st;
	mp_error_keep(err, st);
	if (p->st == MP_OK) {
		p->st = st;
		snprintf(p->field, sizeof(p->field), "%s", err ? err->field : "");
		snprintf(p->message, sizeof(p->message), "%s", err ? err->message : "");
	}
	return st;
}

mp_status mp_problems_end(const mp_problems *p, mp_error *err)
{
	if (p->st != MP_OK && err) {
		snprintf(err->field, sizeof(err->field), "%s", p->field);
		snprintf(err->message, sizeof(err->message), "%s", p->message);
	}
	return p->st;
}

bool mp_list_add(char *buf, size_t cap, const char *item)
{
	static const char more[] = ", ...";
	size_t used, need;

	if (buf == NULL || cap == 0)
		return false;
	used = strlen(buf);
	if (used >= sizeof(more) - 1 && strcmp(buf + used - (sizeof(more) - 1), more) == 0)
		return false; /* already cut */
	need = (used ? 2 : 0) + strlen(item);
	/* room for the item and, should a later one not fit, the ", ..." that would follow it */
	if (used + need + sizeof(more) <= cap) {
		snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", item);
		return true;
	}
	if (used + sizeof(more) <= cap)
		snprintf(buf + used, cap - used, "%s", used ? more : "...");
	return false;
}

bool mp_valid_id(const char *id)
{
	size_t n = id ? strlen(id) : 0;

	if (n == 0 || n >= 64 || !((id[0] >= 'a' && id[0] <= 'z') || (id[0] >= '0' && id[0] <= '9')))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = id[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_'))
			return false;
	}
	return true;
}

bool mp_alias_key(const char *alias, char *out, size_t len)
{
	size_t i = 0;

	if (len == 0)
		return false;
	for (; alias && alias[i]; i++) {
		char c = alias[i];

		if (i + 1 >= len) {
			out[i] = '\0';
			return false;
		}
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		else if (c == ' ' || c == '_')
			c = '-';
		out[i] = c;
	}
	out[i] = '\0';
	return true;
}

/* asked lowercased without separators into out (64 bytes); false when it does not fit */
static bool compact_word(const char *s, char *out)
{
	size_t o = 0;

	for (; s && *s; s++) {
		char c = *s;

		if (c == '-' || c == '_' || c == '.' || c == ' ')
			continue;
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (o + 1 >= 64)
			return false;
		out[o++] = c;
	}
	out[o] = '\0';
	return true;
}

static unsigned levenshtein(const char *a, const char *b)
{
	unsigned row[64], n = (unsigned)strlen(b);

	for (unsigned j = 0; j <= n; j++)
		row[j] = j;
	for (unsigned i = 1; a[i - 1]; i++) {
		unsigned diag = row[0];

		row[0] = i;
		for (unsigned j = 1; j <= n; j++) {
			unsigned up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			if (up + 1 < best)
				best = up + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[n];
}

const char *mp_nearest_word(const char *asked, const char *const *words, size_t n)
{
	char a[64], w[64];
	const char *best = NULL;
	unsigned best_d = UINT_MAX, tol;
	size_t la;

	if (!compact_word(asked, a) || a[0] == '\0')
		return NULL;
	la = strlen(a);
	tol = la < 4 ? 0 : (unsigned)(la / 3); /* a word of 1 to 3 letters is near only when spelt alike */
	for (size_t i = 0; i < n; i++) {
		unsigned d;

		if (words[i] == NULL || !compact_word(words[i], w))
			continue;
		d = la >= 3 && strncmp(w, a, la) == 0 && w[la] ? 1 : levenshtein(a, w);
		if (d <= tol && d < best_d) {
			best_d = d;
			best = words[i];
		}
	}
	return best;
}
