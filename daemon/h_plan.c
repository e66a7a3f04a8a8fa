/*
 * h_plan.c: POST /v1/plan/inference and POST /v1/plan/training. Parse the body, hand it to plan.c.
 */
#include "decode.h"
#include "plan.h"
#include "routes.h"

typedef mp_status (*plan_fn)(mp_store *store, const cJSON *body, cJSON **out, mp_error *err);

static mp_status run(mpd_request *req, mpd_reply *rep, plan_fn fn)
{
	cJSON *body = NULL;
	mp_status st = mpd_parse_body(req->body, req->body_len, &body, &rep->err);

	if (st == MP_OK)
		st = fn(req->d->store, body, &rep->json, &rep->err);
	cJSON_Delete(body);
	return st;
}

mp_status mpd_h_plan_inference(mpd_request *req, mpd_reply *rep)
{
	return run(req, rep, mpd_plan_inference);
}

mp_status mpd_h_plan_training(mpd_request *req, mpd_reply *rep)
{
	return run(req, rep, mpd_plan_training);
}
