/*
 * fleet.h: the fleet-wide questions as functions, shared by the HTTP handlers and the benchmark:
 * POST /v1/fit (h_fit.c) and GET /v1/capacity (h_capacity.c).
 */
#ifndef MPD_FLEET_H
#define MPD_FLEET_H

#include <cjson/cJSON.h>

#include "../db/store.h"

/* POST /v1/fit: body in, document out (caller owns). Errors name the field ("/jobs/3/inference/batch_size"). */
mp_status mpd_fit(mp_store *store, const cJSON *body, cJSON **out, mp_error *err);

typedef struct mpd_capacity_req {
	char model[MP_STORE_ID_MAX];	/* stored model id */
	uint64_t sequence_length;	/* tokens per sequence */
	mp_dtype weight_dtype, kv_cache_dtype;
	const char *vendor, *source;	/* device filters, NULL = all */
} mpd_capacity_req;

/* GET /v1/capacity as a document (caller owns). Errors: MP_ENOTFOUND ("?model"), MP_EINVAL, MP_EDB. */
mp_status mpd_capacity(mp_store *store, const mpd_capacity_req *r, cJSON **out, mp_error *err);
/* The same document as an aligned text table for people (GB/GiB labelled). Caller frees. */
char *mpd_capacity_text(const cJSON *doc);

#endif /* MPD_FLEET_H */
