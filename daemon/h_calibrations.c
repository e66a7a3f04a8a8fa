/*
 * h_calibrations.c: the calibration resource. POST /v1/calibrations starts a job (202 + Location),
 * GET /v1/calibrations/{id} reports state, progress and results, DELETE /v1/calibrations/{id} cancels.
 * Thin: decoding, jobs and documents live in calib_jobs.c / calib_doc.c.
 */
#include <stdio.h>

#include "calib_jobs.h"
#include "decode.h"
#include "routes.h"

static mp_status need_jobs(mpd_request *req, mpd_reply *rep)
{
	if (req->d->calib == NULL)
		return mp_fail(&rep->err, MP_EINTERNAL, "", "calibration jobs are not available in this daemon");
	return MP_OK;
}

mp_status mpd_h_calibration_create(mpd_request *req, mpd_reply *rep)
{
	cJSON *body = NULL;
	mpd_calib_request rq;
	char id[MPD_CALIB_ID_MAX];
	mp_status st = need_jobs(req, rep);

	if (st == MP_OK)
		st = mpd_parse_body(req->body, req->body_len, &body, &rep->err);
	if (st == MP_OK)
		st = mpd_calib_decode(req->d->store, body, &rq, &rep->err);
	cJSON_Delete(body);
	if (st == MP_OK)
		st = mpd_calib_start(req->d->calib, &rq, id, &rep->err);
	if (st == MP_OK)
		st = mpd_calib_get(req->d->calib, id, &rep->json, &rep->err);
	if (st != MP_OK)
		return st;
	rep->http_status = 202;
	snprintf(rep->location, sizeof(rep->location), "/v1/calibrations/%s", id);
	return MP_OK;
}

mp_status mpd_h_calibration_get(mpd_request *req, mpd_reply *rep)
{
	mp_status st = need_jobs(req, rep);

	if (st != MP_OK)
		return st;
	return mpd_calib_get(req->d->calib, req->path_id, &rep->json, &rep->err);
}

mp_status mpd_h_calibration_cancel(mpd_request *req, mpd_reply *rep)
{
	mp_status st = need_jobs(req, rep);

	if (st == MP_OK)
		st = mpd_calib_cancel(req->d->calib, req->path_id, &rep->json, &rep->err);
	if (st == MP_OK)
		rep->http_status = 202;
	return st;
}
