/*
 * h_fit.c: POST /v1/fit (the scheduler's batch) and GET /v1/capacity (the dashboard's table): decode (codec) ->
 * service, whose answers the codec writes as they come -> reply. A fit answer is computed whole before a byte of it is
 * sent, so the status line is always true and the heavy slot is free while it is sent (see mpd_h_fit).
 */
#include <stdlib.h>
#include <string.h>

#include "../codec/codec.h"
#include "query.h"
#include "routes.h"

/* A text table for people holds at most this many rows (job x device x GPU count, about 1.4 MB): the largest fit
 * as text was 31 MB and 1.9 CPU s that no one reads; past it the answer is a 413 saying to ask for JSON. */
#define FIT_TEXT_MAX_ROWS 20000

/* The text writer's sink with the bound above checked once the devices are known (before any job is judged). */
typedef struct bounded_text {
	mpc_fit_text *w;
	mp_error *err;
} bounded_text;

static mp_status bt_begin(void *ctx, const mps_fit_request *rq, size_t ndevices)
{
	bounded_text *b = ctx;
	uint64_t rows = (uint64_t)rq->njobs * ndevices * rq->ngpu_counts;

	if (rows > FIT_TEXT_MAX_ROWS)
		return mp_fail(b->err, MP_ETOOLARGE, "?format",
			       "the table for people would have %llu rows (%zu jobs x %zu devices x %zu GPU counts), more "
			       "than the %d format=text writes: ask for JSON (without ?format=text), or fewer jobs, devices "
			       "or gpu_counts",
			       (unsigned long long)rows, rq->njobs, ndevices, rq->ngpu_counts, FIT_TEXT_MAX_ROWS);
	return mpc_fit_text_sink()->begin(b->w, rq, ndevices);
}

static mp_status bt_job_begin(void *ctx, const mps_fit_job *job, const mps_model *model, const mps_warnings *warnings)
{
	return mpc_fit_text_sink()->job_begin(((bounded_text *)ctx)->w, job, model, warnings);
}

static mp_status bt_device(void *ctx, const mps_fit_device *dev, const mps_fit_row *rows, size_t nrows,
			   uint64_t smallest)
{
	return mpc_fit_text_sink()->device(((bounded_text *)ctx)->w, dev, rows, nrows, smallest);
}

static mp_status bt_job_end(void *ctx)
{
	return mpc_fit_text_sink()->job_end(((bounded_text *)ctx)->w);
}

static const mps_fit_sink bounded_text_sink = { bt_begin, bt_job_begin, bt_device, bt_job_end };

/* ?format=text: the table for people, written as the service computes it. */
static mp_status fit_text(mpd_request *req, mps_fit_request *rq, mpd_reply *rep)
{
	bounded_text b = { mpc_fit_text_new(rq), &rep->err };
	mp_status st = b.w ? mps_fit(req->d->svc, rq, &bounded_text_sink, &b, &rep->err)
			   : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");

	if (st == MP_OK) {
		rep->text = mpc_fit_text_finish(b.w);
		b.w = NULL;
		rep->text_type = "text/plain; charset=utf-8";
		if (rep->text == NULL)
			st = mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	}
	mpc_fit_text_free(b.w);
	return st;
}

/*
 * The answer is computed whole, job after job into one buffer (the largest allowed, 1.6 million rows, is about 70 MB
 * of text; mps_fit plans each job just before writing it), then sent from that buffer: the heavy slot goes back as
 * soon as it is computed, however slowly the client reads (server.c: the send deadline), and the status line is
 * true because nothing is sent before the last job is written. The buffer counts in the daemon's budget of bytes
 * in flight (--max-request-memory-bytes).
 */
mp_status mpd_h_fit(mpd_request *req, mpd_reply *rep)
{
	mps_fit_request rq;
	mpc_fit_writer *w = NULL;
	mp_status st = mpc_fit_decode(req->json, &rq, &rep->err);

	/* models given by repository: from the Hugging Face cache or the Hub, before anything is planned */
	if (st == MP_OK)
		st = mps_fit_fetch_models(req->d->svc, &rq, &rep->no_store, &rep->err);
	if (st == MP_OK && req->text) { /* the table for people (it holds one job's rows at a time) */
		st = fit_text(req, &rq, rep);
		mpc_fit_request_free(&rq);
		return st;
	}
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
	return st == MP_ENOMEM ? mp_fail(&rep->err, st, "", "out of memory") : st;
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
		st = mps_capacity(req->d->svc, &rq, &model, mpc_capacity_row, doc, mpc_capacity_doc_cursor(doc), &rep->err);
	if (st != MP_OK) {
		mpc_capacity_doc_free(doc);
		return st == MP_ENOMEM ? mp_fail(&rep->err, st, "", "out of memory") : st;
	}
	rep->text = text ? mpc_capacity_text(doc, &model) : mpc_capacity_json(doc, &model, NULL);
	rep->text_type = text ? "text/plain; charset=utf-8" : "application/json";
	mpc_capacity_doc_free(doc);
	return rep->text ? MP_OK : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
}
