/*
 * h_plan.c: POST /v1/plan/inference and POST /v1/plan/training: decode (codec) -> plan (service) -> render, as
 * JSON or, with ?format=text, as the text for people (the verdict first), both from the same structs.
 */
#include <stdlib.h>

#include "../codec/codec.h"
#include "routes.h"

#define TEXT_HINT "The JSON answer (without ?format=text) has every figure."

mp_status mpd_h_plan_inference(mpd_request *req, mpd_reply *rep)
{
	mps_inference_request *rq = calloc(1, sizeof(*rq));
	mps_inference_plan *plan = calloc(1, sizeof(*plan));
	mp_status st = rq && plan ? MP_OK : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");

	if (st == MP_OK)
		st = mps_lookups_note(req->d->svc, &rq->job.model, &rq->device,
				      mpc_inference_decode(req->json, "", true, rq, &rep->err), &rep->err);
	if (st == MP_OK) /* a Hugging Face repository from its cache: files outside the store, never cached */
		st = mps_model_ref_fetch(req->d->svc, &rq->job.model, &rep->no_store, &rep->err);
	if (st == MP_OK)
		st = mps_plan_inference(req->d->svc, rq, plan, &rep->err);
	if (st == MP_OK) {
		/* the JSON answer or, with ?format=text, the text for people: two renderers of the same structs */
		rep->text = req->text ? mpc_inference_plan_text(rq, plan, false, TEXT_HINT)
				      : mpc_inference_plan_print(rq, plan, NULL);
		rep->text_type = req->text ? "text/plain; charset=utf-8" : "application/json";
		if (rep->text == NULL)
			st = mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	}
	mps_inference_plan_release(plan);
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
		st = mps_lookups_note(req->d->svc, &rq->job.model, &rq->device,
				      mpc_training_decode(req->json, "", true, rq, &rep->err), &rep->err);
	if (st == MP_OK)
		st = mps_model_ref_fetch(req->d->svc, &rq->job.model, &rep->no_store, &rep->err);
	if (st == MP_OK)
		st = mps_plan_training(req->d->svc, rq, plan, &rep->err);
	if (st == MP_OK) {
		rep->text = req->text ? mpc_training_plan_text(rq, plan, false, TEXT_HINT)
				      : mpc_training_plan_print(rq, plan, NULL);
		rep->text_type = req->text ? "text/plain; charset=utf-8" : "application/json";
		if (rep->text == NULL)
			st = mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	}
	free(plan);
	mpc_training_request_release(rq);
	free(rq);
	return st;
}
