/*
 * base.c: status strings, error detail and checked 64-bit arithmetic (mp_base.h). No state.
 */
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
	}
	return "unknown";
}

mp_status mp_fail(mp_error *err, mp_status st, const char *field, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return st;
	snprintf(err->field, sizeof(err->field), "%s", field ? field : "");
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return st;
}

mp_status mp_fail_at(mp_error *err, mp_status st, const char *base, const char *field, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return st;
	if (base && strcmp(base, "?") == 0 && field && field[0] == '/') /* a query argument: "?name" */
		snprintf(err->field, sizeof(err->field), "?%s", field + 1);
	else
		snprintf(err->field, sizeof(err->field), "%s%s", base ? base : "", field ? field : "");
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return st;
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
