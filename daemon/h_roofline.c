/*
 * h_roofline.c: POST /v1/roofline (the roofline document) and GET /v1/devices/{id}/roofline.svg (the same answer
 * drawn). Each ?op= query argument is one operation in the compact KIND:key=value,... form; ?ridge_dtype= picks
 * the compute roof.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "../codec/codec.h"
#include "query.h"
#include "routes.h"

mp_status mpd_h_roofline(mpd_request *req, mpd_reply *rep)
{
	mps_roofline_request *rq = calloc(1, sizeof(*rq));
	mps_roofline_result *r = malloc(sizeof(*r));
	mp_status st = rq && r ? MP_OK : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");

	if (st == MP_OK)
		st = mpc_roofline_decode(req->json, rq, &rep->err);
	if (st == MP_OK)
		st = mps_roofline(req->d->svc, rq, r, &rep->err);
	if (st == MP_OK) {
		mpc_out w;

		mpc_out_init(&w);
		mpc_roofline_write(&w, rq, r);
		st = mpd_reply_json(rep, &w);
	}
	free(r);
	mpc_roofline_request_release(rq);
	free(rq);
	return st;
}

typedef struct op_args {
	mps_roofline_request *rq;
	mp_status st;
	mp_error *err;
} op_args;

static enum MHD_Result collect_op(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	op_args *a = cls;

	(void)kind;
	if (a->st != MP_OK || key == NULL || strcmp(key, "op") != 0)
		return MHD_YES;
	if (a->rq->nops >= MPS_ROOFLINE_MAX_OPS) {
		a->st = mp_fail(a->err, MP_EINVAL, "?op", "at most %d operations", MPS_ROOFLINE_MAX_OPS);
		return MHD_NO;
	}
	a->st = mpc_op_spec_decode(value ? value : "", "?op", &a->rq->ops[a->rq->nops], a->err);
	if (a->st == MP_OK)
		a->rq->nops++;
	return a->st == MP_OK ? MHD_YES : MHD_NO;
}

static const char *query_get(void *ctx, const char *name)
{
	return mpd_query(ctx, name);
}

mp_status mpd_h_device_roofline_svg(mpd_request *req, mpd_reply *rep)
{
	mps_roofline_request *rq = calloc(1, sizeof(*rq));
	mps_roofline_result *r = malloc(sizeof(*r));
	mpc_chart *chart = malloc(sizeof(*chart));
	const char *ridge = mpd_query(req, "ridge_dtype");
	op_args a = { rq, MP_OK, &rep->err };
	mp_status st = rq && r && chart ? MP_OK : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");

	if (st != MP_OK)
		goto out;
	/* the device from the path, the roof and the operations from the query: the request POST /v1/roofline takes */
	rq->device.given = true;
	snprintf(rq->device.pointer, sizeof(rq->device.pointer), "/device");
	if (!mp_valid_id(req->path_id)) {
		st = mp_fail(&rep->err, MP_EINVAL, "/device",
			     "the device id is not a valid id: ids match ^[a-z0-9][a-z0-9._-]{0,62}$ (1 to 63 bytes)");
		goto out;
	}
	snprintf(rq->device.id, sizeof(rq->device.id), "%s", req->path_id);
	rq->ridge_dtype = MP_DTYPE_BF16;
	snprintf(rq->ridge_pointer, sizeof(rq->ridge_pointer), "?ridge_dtype");
	if (ridge) {
		rq->ridge_dtype = mp_dtype_from_name(ridge);
		rq->ridge_dtype_given = true;
		if (rq->ridge_dtype == MP_DTYPE_INVALID) {
			char list[256];

			mp_dtype_list(MPC_ALL_DTYPES, list, sizeof(list));
			st = mp_fail(&rep->err, MP_EINVAL, "?ridge_dtype", "ridge_dtype must be one of: %s", list);
			goto out;
		}
	}
	rq->ops_given = true;
	MHD_get_connection_values((struct MHD_Connection *)req->conn, MHD_GET_ARGUMENT_KIND, collect_op, &a);
	st = a.st;
	/* ?model=ID (and its batch_size, context_tokens, ...): the model's decode and prefill operations as points */
	if (st == MP_OK && mpd_query(req, "model"))
		st = mpc_transformer_query_decode(query_get, req, &rq->transformer, &rep->err);
	else if (st == MP_OK && (mpd_query(req, "batch_size") || mpd_query(req, "context_tokens") ||
				 mpd_query(req, "prompt_tokens") || mpd_query(req, "weight_dtype") ||
				 mpd_query(req, "kv_cache_dtype") || mpd_query(req, "compute_dtype") ||
				 mpd_query(req, "tensor_parallel_size")))
		st = mp_fail(&rep->err, MP_EINVAL, "?model",
			     "batch_size, context_tokens, prompt_tokens, tensor_parallel_size, weight_dtype, kv_cache_dtype "
			     "and compute_dtype describe ?model's steps: give model=ID with them");
	if (st == MP_OK)
		st = mps_roofline(req->d->svc, rq, r, &rep->err);
	if (st != MP_OK) {
		if (strncmp(rep->err.field, "?/", 2) == 0) /* the steps' fields under "?": "?context_tokens" */
			memmove(rep->err.field + 1, rep->err.field + 2, strlen(rep->err.field + 2) + 1);
		goto out;
	}
	mpc_chart_from_result(rq, r, chart);
	rep->text = mpc_roofline_svg(chart);
	rep->text_type = "image/svg+xml";
	if (rep->text == NULL)
		st = mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
out:
	free(chart);
	free(r);
	mpc_roofline_request_release(rq);
	free(rq);
	return st;
}
