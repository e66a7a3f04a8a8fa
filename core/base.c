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
	snprintf(err->field, sizeof(err->field), "%s%s", base ? base : "", field ? field : "");
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return st;
}

bool mp_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
	return !__builtin_mul_overflow(a, b, out);
}

bool mp_add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
	return !__builtin_add_overflow(a, b, out);
}

bool mp_muladd_u64(uint64_t *acc, uint64_t a, uint64_t b)
{
	uint64_t p;

	return mp_mul_u64(a, b, &p) && mp_add_u64(*acc, p, acc);
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
