/*
 * h_engine.c: POST /v1/engine-check: decode (codec: the body and the pasted log) -> the plan and the comparison
 * (service) -> encode; llama.cpp and Ollama logs through their own reader and check (llamacpp_log.c, llamacpp_check.c).
 */
#include <stdlib.h>

#include "../codec/codec.h"
#include "routes.h"

/* engine llamacpp or ollama: the buffer lines of llama.cpp's log beside the plan's placement */
static mp_status llama_check(mpd_request *req, mpd_reply *rep)
{
	mps_llama_check_request *rq = calloc(1, sizeof(*rq));
	mps_llama_check *c = calloc(1, sizeof(*c));
	mp_status st = rq && c ? MP_OK : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");

	if (st == MP_OK)
		st = mpc_llama_check_decode(req->json, rq, &rep->err);
	if (st == MP_OK)
		st = mps_model_ref_fetch(req->d->svc, &rq->plan.job.model, &rep->no_store, &rep->err);
	if (st == MP_OK)
		st = mps_llama_check_run(req->d->svc, rq, c, &rep->err);
	if (st == MP_OK) {
		mpc_out w;

		mpc_out_init(&w);
		mpc_llama_check_write(&w, rq, c);
		st = mpd_reply_json(rep, &w);
	}
	if (c)
		mps_inference_plan_release(&c->plan);
	free(c);
	if (rq)
		mpc_inference_request_release(&rq->plan);
	free(rq);
	return st;
}

/* vLLM, SGLang, TensorRT-LLM: the engine's start-up figures beside its arithmetic on the plan */
static mp_status serving_check(mpd_request *req, mpd_reply *rep)
{
	mps_engine_check_request *rq = calloc(1, sizeof(*rq));
	mps_engine_check *c = calloc(1, sizeof(*c));
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
	if (c)
		mps_inference_plan_release(&c->plan);
	free(c);
	mpc_engine_check_request_release(rq);
	free(rq);
	return st;
}

mp_status mpd_h_engine_check(mpd_request *req, mpd_reply *rep)
{
	return mpc_llama_check_engine(req->json) ? llama_check(req, rep) : serving_check(req, rep);
}
