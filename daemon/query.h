/*
 * query.h: query-string arguments of a request, validated like body fields (errors name "?<name>").
 */
#ifndef MPD_QUERY_H
#define MPD_QUERY_H

#include "daemon.h"

/* The raw value of ?name, or NULL. Borrowed from the connection for the request's lifetime. */
const char *mpd_query(const mpd_request *req, const char *name);

/* The value of request header `name` (any case), or NULL. Borrowed for the request's lifetime. */
const char *mpd_header(const mpd_request *req, const char *name);

/* ?name as an integer in [min, max]; dflt when absent. Errors: MP_EINVAL naming "?name". */
mp_status mpd_query_u64(const mpd_request *req, const char *name, uint64_t min, uint64_t max, uint64_t dflt,
			uint64_t *out, mp_error *err);

#endif /* MPD_QUERY_H */
