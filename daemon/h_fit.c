/*
 * h_fit.c: POST /v1/fit (the scheduler's batch) and GET /v1/capacity (the dashboard's table): decode (codec) ->
 * service, whose answers the codec writes as they come -> reply.
 */
#include <stdlib.h>

#include "../codec/codec.h"
#include "query.h"
#include "routes.h"

/* ?format=text: the table for people, written as the service computes it. */
static mp_status fit_text(mpd_request *req, mps_fit_request *rq, mpd_reply *rep)
{
	mpc_fit_text *w = mpc_fit_text_new(rq);
	mp_status st = w ? mps_fit(req->d->svc, rq, mpc_fit_text_sink(), w, &rep->err)
			 : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");

	if (st == MP_OK) {
		rep->text = mpc_fit_text_finish(w);
		w = NULL;
		rep->text_type = "text/plain; charset=utf-8";
		if (rep->text == NULL)
			st = mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	}
	mpc_fit_text_free(w);
	mpc_fit_request_free(rq);
	return st;
}

mp_status mpd_h_fit(mpd_request *req, mpd_reply *rep)
{
	mps_fit_request rq;
	mpc_fit_writer *w = NULL;
	mp_status st = mpc_fit_decode(req->json, &rq, &rep->err);

	if (st == MP_OK && req->text)
		return fit_text(req, &rq, rep);

	if (st == MP_OK && (w = mpc_fit_writer_new(&rq)) == NULL)
		st = mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	if (st == MP_OK)
		st = mps_fit(req->d->svc, &rq, mpc_fit_sink(), w, &rep->err);
	if (st == MP_OK) {
		rep->text = mpc_fit_writer_finish(w);
		w = NULL;
		rep->text_type = "application/json";
		if (rep->text == NULL)
			st = mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	}
	mpc_fit_writer_free(w);
	mpc_fit_request_free(&rq);
	return st;
}

static const char *query_get(void *ctx, const char *name)
{
	return mpd_query(ctx, name);
}

mp_status mpd_h_capacity(mpd_request *req, mpd_reply *rep)
{
	mps_capacity_request rq;
	mps_model model;
	mpc_capacity_doc *doc = NULL;
	bool text = false;
	mp_status st = mpc_capacity_decode(query_get, req, &rq, &text, &rep->err);

	if (st == MP_OK && (doc = mpc_capacity_doc_new(&rq)) == NULL)
		st = mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	if (st == MP_OK)
		st = mps_capacity(req->d->svc, &rq, &model, mpc_capacity_row, doc, &rep->err);
	if (st != MP_OK) {
		mpc_capacity_doc_free(doc);
		return st == MP_ENOMEM ? mp_fail(&rep->err, st, "", "out of memory") : st;
	}
	rep->json = mpc_capacity_doc_finish(doc, &model);
	if (rep->json == NULL)
		return mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	if (text) {
		rep->text = mpc_capacity_text(rep->json);
		if (rep->text == NULL)
			return mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
		rep->text_type = "text/plain; charset=utf-8";
	}
	return MP_OK;
}
