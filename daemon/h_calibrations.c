/*
 * h_calibrations.c: the calibration resource. POST /v1/calibrations starts a job (202 + Location),
 * GET /v1/calibrations/{id} reports state, progress and results, DELETE /v1/calibrations/{id} cancels.
 * Thin: decoding and documents in codec/mpc_calib.c, jobs in service/mps_calib.c.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../codec/mpc_calib.h"
#include "routes.h"

static mp_status need_jobs(mpd_request *req, mpd_reply *rep)
{
	if (req->d->calib == NULL)
		return mp_fail(&rep->err, MP_EINTERNAL, "", "calibration jobs are not available in this daemon");
	return MP_OK;
}

/* The job's document as the answer (the copy is freed here). */
static mp_status answer(mpd_reply *rep, mps_calib_job *job)
{
	mpc_out w;

	mpc_out_init(&w);
	mpc_calib_job_write(&w, job);
	mps_calib_job_free(job);
	return mpd_reply_json(rep, &w);
}

mp_status mpd_h_calibration_create(mpd_request *req, mpd_reply *rep)
{
	mps_calib_request rq;
	mps_inference_request *fit = malloc(sizeof(*fit));
	mps_inference_plan *plan = NULL;
	mps_calib_job *job = NULL;
	bool has_fit = false;
	char id[MPS_CALIB_ID_MAX];
	mp_status st = fit ? need_jobs(req, rep) : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");

	if (st == MP_OK)
		st = mpc_calib_decode(req->json, &rq, fit, &has_fit, &rep->err);
	if (st == MP_OK && has_fit) {
		/* the fit check allocates the plan's bytes: the same plan POST /v1/plan/inference gives */
		plan = calloc(1, sizeof(*plan));
		st = plan ? mps_plan_inference(req->d->svc, fit, plan, &rep->err)
			  : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
		if (st == MP_OK)
			mps_calib_fit_from_plan(plan, &rq);
	}
	mps_inference_plan_release(plan);
	free(plan);
	free(fit);
	if (st == MP_OK)
		st = mps_calib_start(req->d->calib, &rq, id, &rep->err);
	if (st == MP_OK)
		st = mps_calib_get(req->d->calib, id, &job, &rep->err);
	if (st == MP_OK)
		st = answer(rep, job);
	if (st != MP_OK)
		return st;
	rep->http_status = 202;
	snprintf(rep->location, sizeof(rep->location), "/v1/calibrations/%s", id);
	return MP_OK;
}

mp_status mpd_h_calibration_get(mpd_request *req, mpd_reply *rep)
{
	mps_calib_job *job = NULL;
	mp_status st = need_jobs(req, rep);

	if (st == MP_OK)
		st = mps_calib_get(req->d->calib, req->path_id, &job, &rep->err);
	return st == MP_OK ? answer(rep, job) : st;
}

mp_status mpd_h_calibration_cancel(mpd_request *req, mpd_reply *rep)
{
	mps_calib_job *job = NULL;
	mp_status st = need_jobs(req, rep);

	if (st == MP_OK)
		st = mps_calib_cancel(req->d->calib, req->path_id, &job, &rep->err);
	if (st == MP_OK)
		st = answer(rep, job);
	if (st == MP_OK)
		rep->http_status = 202;
	return st;
}
