/*
 * query.c: query-string access for handlers; libmicrohttpd has already split and unescaped the arguments.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <microhttpd.h>

#include "query.h"

const char *mpd_query(const mpd_request *req, const char *name)
{
	return MHD_lookup_connection_value((struct MHD_Connection *)req->conn, MHD_GET_ARGUMENT_KIND, name);
}

const char *mpd_header(const mpd_request *req, const char *name)
{
	return MHD_lookup_connection_value((struct MHD_Connection *)req->conn, MHD_HEADER_KIND, name);
}

mp_status mpd_query_u64(const mpd_request *req, const char *name, uint64_t min, uint64_t max, uint64_t dflt,
			uint64_t *out, mp_error *err)
{
	const char *v = mpd_query(req, name);
	char *end = NULL, field[64];
	unsigned long long n;

	*out = dflt;
	if (v == NULL)
		return MP_OK;
	snprintf(field, sizeof(field), "?%s", name);
	errno = 0;
	n = strtoull(v, &end, 10);
	if (v[0] == '-' || v[0] == '\0' || *end || errno || n < min || n > max)
		return mp_fail(err, MP_EINVAL, field, "%s must be an integer between %llu and %llu", name,
			       (unsigned long long)min, (unsigned long long)max);
	*out = n;
	return MP_OK;
}
