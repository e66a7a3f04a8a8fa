/*
 * h_engine.c: POST /v1/engine-check: decode (codec: the body and the pasted log) -> the plan and the comparison
 * (service) -> encode.
 */
#include <stdlib.h>

#include "../codec/codec.h"
#include "routes.h"

mp_status mpd_h_engine_check(mpd_request *req, mpd_reply *rep)
{
	mps_engine_check_request *rq = calloc(1, sizeof(*rq));
	mps_engine_check *c = malloc(sizeof(*c));
	mp_status st = rq && c ? MP_OK : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");

	if (st == MP_OK)
		st = mpc_engine_check_decode(req->json, rq, &rep->err);
	if (st == MP_OK)
		st = mps_model_ref_fetch(req->d->svc, &rq->plan.job.model, &rep->no_store, &rep->err);
	if (st == MP_OK)
		st = mps_engine_check_run(req->d->svc, rq, c, &rep->err);
	if (st == MP_OK) {
		mpc_out w;

		mpc_out_init(&w);
		mpc_engine_check_write(&w, rq, c);
		st = mpd_reply_json(rep, &w);
	}
	free(c);
	mpc_engine_check_request_release(rq);
	free(rq);
	return st;
}
