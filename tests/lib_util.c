/*
 * lib_util.c: the plan endpoints as library calls (see lib_util.h).
 */
#include <stdlib.h>
#include <string.h>

#include "../codec/codec.h"
#include "lib_util.h"

mp_status lib_answer(mps_service *svc, const char *kind, const cJSON *body, char **out, mp_error *err)
{
	unsigned long failed = mpc_alloc_failures();
	mp_status st = MP_OK;
	mpc_out w;

	*out = NULL;
	mpc_out_init(&w);
	if (strcmp(kind, "inference") == 0) {
		mps_inference_request *rq = calloc(1, sizeof(*rq));
		mps_inference_plan *p = calloc(1, sizeof(*p));

		st = rq && p ? mpc_inference_decode(body, "", true, rq, err) : mp_fail(err, MP_ENOMEM, "", "out of memory");
		if (st == MP_OK)
			st = mps_plan_inference(svc, rq, p, err);
		if (st == MP_OK)
			mpc_inference_plan_write(&w, rq, p);
		mps_inference_plan_release(p);
		free(p);
		mpc_inference_request_release(rq);
		free(rq);
	} else if (strcmp(kind, "training") == 0) {
		mps_training_request *rq = calloc(1, sizeof(*rq));
		mps_training_plan *p = malloc(sizeof(*p));

		st = rq && p ? mpc_training_decode(body, "", true, rq, err) : mp_fail(err, MP_ENOMEM, "", "out of memory");
		if (st == MP_OK)
			st = mps_plan_training(svc, rq, p, err);
		if (st == MP_OK)
			mpc_training_plan_write(&w, rq, p);
		free(p);
		mpc_training_request_release(rq);
		free(rq);
	} else if (strcmp(kind, "roofline") == 0) {
		mps_roofline_request *rq = calloc(1, sizeof(*rq));
		mps_roofline_result *r = malloc(sizeof(*r));

		st = rq && r ? mpc_roofline_decode(body, rq, err) : mp_fail(err, MP_ENOMEM, "", "out of memory");
		if (st == MP_OK)
			st = mps_roofline(svc, rq, r, err);
		if (st == MP_OK)
			mpc_roofline_write(&w, rq, r);
		free(r);
		mpc_roofline_request_release(rq);
		free(rq);
	} else if (strcmp(kind, "engine-check") == 0 && mpc_llama_check_engine(body)) {
		mps_llama_check_request *rq = calloc(1, sizeof(*rq));
		mps_llama_check *c = calloc(1, sizeof(*c));

		st = rq && c ? mpc_llama_check_decode(body, rq, err) : mp_fail(err, MP_ENOMEM, "", "out of memory");
		if (st == MP_OK)
			st = mps_llama_check_run(svc, rq, c, err);
		if (st == MP_OK)
			mpc_llama_check_write(&w, rq, c);
		if (c)
			mps_inference_plan_release(&c->plan);
		free(c);
		if (rq)
			mpc_inference_request_release(&rq->plan);
		free(rq);
	} else if (strcmp(kind, "engine-check") == 0) {
		mps_engine_check_request *rq = calloc(1, sizeof(*rq));
		mps_engine_check *c = malloc(sizeof(*c));

		st = rq && c ? mpc_engine_check_decode(body, rq, err) : mp_fail(err, MP_ENOMEM, "", "out of memory");
		if (st == MP_OK)
			st = mps_engine_check_run(svc, rq, c, err);
		if (st == MP_OK)
			mpc_engine_check_write(&w, rq, c);
		free(c);
		mpc_engine_check_request_release(rq);
		free(rq);
	} else if (strcmp(kind, "fit") == 0) {
		mps_fit_request rq;
		mpc_fit_writer *fw = NULL;

		st = mpc_fit_decode(body, &rq, err);
		if (st == MP_OK)
			st = mps_fit_fetch_models(svc, &rq, NULL, err);
		if (st == MP_OK && (fw = mpc_fit_writer_new(&rq)) == NULL)
			st = mp_fail(err, MP_ENOMEM, "", "out of memory");
		if (st == MP_OK)
			st = mps_fit(svc, &rq, mpc_fit_sink(), fw, err);
		if (st == MP_OK) {
			*out = mpc_fit_writer_finish(fw);
			fw = NULL;
		}
		mpc_fit_writer_free(fw);
		mpc_fit_request_free(&rq);
	} else {
		st = mp_fail(err, MP_EINVAL, "", "unknown kind %s", kind);
	}
	if (*out == NULL)
		*out = mpc_out_finish(&w, NULL);
	else
		mpc_out_free(&w);
	if (st == MP_OK && *out == NULL)
		st = mp_fail(err, MP_ENOMEM, "", "out of memory");
	if (st != MP_OK || (mpc_alloc_failures() != failed && st != MP_ENOMEM)) { /* as the daemon's dispatch */
		free(*out);
		*out = NULL;
		if (st == MP_OK)
			st = mp_fail(err, MP_ENOMEM, "", "out of memory");
	}
	return st;
}
