/*
 * h_plan.c: POST /v1/plan/inference and POST /v1/plan/training: decode (codec) -> plan (service) -> encode, as
 * JSON or, with ?format=text, as the text for people (the verdict first) rendered from the same document.
 */
#include <stdlib.h>

#include "../codec/codec.h"
#include "routes.h"

/* ?format=text: the document as text (consumed). */
static mp_status as_text(mpd_request *req, mpd_reply *rep)
{
	if (!req->text || rep->json == NULL)
		return MP_OK;
	rep->text = mpc_plan_text(rep->json, false, "The JSON answer (without ?format=text) has every figure.");
	cJSON_Delete(rep->json);
	rep->json = NULL;
	if (rep->text == NULL)
		return mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	rep->text_type = "text/plain; charset=utf-8";
	return MP_OK;
}

mp_status mpd_h_plan_inference(mpd_request *req, mpd_reply *rep)
{
	mps_inference_request *rq = calloc(1, sizeof(*rq));
	mps_inference_plan *plan = malloc(sizeof(*plan));
	mp_status st = rq && plan ? MP_OK : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");

	if (st == MP_OK)
		st = mpc_inference_decode(req->json, "", true, rq, &rep->err);
	if (st == MP_OK)
		st = mps_plan_inference(req->d->svc, rq, plan, &rep->err);
	if (st == MP_OK && (req->text || rep->pretty)) { /* the tree the text renderer and the indenter read */
		if ((rep->json = mpc_inference_plan_json(rq, plan)) == NULL)
			st = mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
		if (st == MP_OK)
			st = as_text(req, rep);
	} else if (st == MP_OK) { /* the common case, written as text with no tree (codec.h) */
		rep->text = mpc_inference_plan_print(rq, plan, NULL);
		rep->text_type = "application/json";
		if (rep->text == NULL)
			st = mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	}
	free(plan);
	mpc_inference_request_release(rq);
	free(rq);
	return st;
}

mp_status mpd_h_plan_training(mpd_request *req, mpd_reply *rep)
{
	mps_training_request *rq = calloc(1, sizeof(*rq));
	mps_training_plan *plan = malloc(sizeof(*plan));
	mp_status st = rq && plan ? MP_OK : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");

	if (st == MP_OK)
		st = mpc_training_decode(req->json, "", true, rq, &rep->err);
	if (st == MP_OK)
		st = mps_plan_training(req->d->svc, rq, plan, &rep->err);
	if (st == MP_OK && (rep->json = mpc_training_plan_json(rq, plan)) == NULL)
		st = mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	if (st == MP_OK)
		st = as_text(req, rep);
	free(plan);
	mpc_training_request_release(rq);
	free(rq);
	return st;
}
