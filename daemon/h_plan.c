/*
 * h_plan.c: POST /v1/plan/inference and POST /v1/plan/training: decode (codec) -> plan (service) -> encode.
 */
#include <stdlib.h>

#include "../codec/codec.h"
#include "routes.h"

mp_status mpd_h_plan_inference(mpd_request *req, mpd_reply *rep)
{
	mps_inference_request *rq = malloc(sizeof(*rq));
	mps_inference_plan *plan = malloc(sizeof(*plan));
	mp_status st = rq && plan ? MP_OK : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");

	if (st == MP_OK)
		st = mpc_inference_decode(req->json, "", true, rq, &rep->err);
	if (st == MP_OK)
		st = mps_plan_inference(req->d->svc, rq, plan, &rep->err);
	if (st == MP_OK) { /* written as text, no tree (codec.h) */
		rep->text = mpc_inference_plan_print(rq, plan, NULL);
		rep->text_type = "application/json";
		if (rep->text == NULL)
			st = mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	}
	free(plan);
	free(rq);
	return st;
}

mp_status mpd_h_plan_training(mpd_request *req, mpd_reply *rep)
{
	mps_training_request *rq = malloc(sizeof(*rq));
	mps_training_plan *plan = malloc(sizeof(*plan));
	mp_status st = rq && plan ? MP_OK : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");

	if (st == MP_OK)
		st = mpc_training_decode(req->json, "", true, rq, &rep->err);
	if (st == MP_OK)
		st = mps_plan_training(req->d->svc, rq, plan, &rep->err);
	if (st == MP_OK && (rep->json = mpc_training_plan_json(rq, plan)) == NULL)
		st = mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	free(plan);
	free(rq);
	return st;
}
