/*
 * h_fit.c: POST /v1/fit (the scheduler's batch) and GET /v1/capacity (the dashboard's table): decode (codec) ->
 * service, whose answers the codec writes as they come -> reply. A large fit answer is written while it is sent
 * (the largest allowed, 1.6 million rows and about 95 MB, never held whole): every error is found first
 * (mps_fit_prepare), so the status line is always true.
 */
#include <stdlib.h>
#include <string.h>

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
	return st;
}

/* Answers of at most this many rows are computed whole (one buffer, a Content-Length, about 1.2 MB at most);
 * larger ones are written while they are sent. */
#define FIT_WHOLE_ROWS 20000

/* A fit answer streamed job by job: the decoded request, the prepared plan and the writer live until the response
 * is done (daemon.h: mpd_reply.stream_read). At most one job's text is held at a time. */
typedef struct fit_stream {
	mps_fit_request rq;
	mps_fit_plan *plan;
	mpc_fit_writer *w;
	size_t next_job;	/* the next job to write */
	bool begun, ended;
	char *text;		/* written, not yet sent */
	size_t len, off;
} fit_stream;

static void fit_stream_free(void *ctx)
{
	fit_stream *f = ctx;

	mps_fit_plan_free(f->plan);
	mpc_fit_writer_free(f->w);
	mpc_fit_request_free(&f->rq);
	free(f->text);
	free(f);
}

/* The next piece of text: the head and the first job, then one job at a time, then the tail. false when out of
 * memory; *done when everything was written. */
static bool fit_stream_more(fit_stream *f, bool *done)
{
	mp_status st = MP_OK;

	*done = false;
	if (!f->begun) {
		f->begun = true;
		st = mps_fit_emit_begin(f->plan, mpc_fit_sink(), f->w);
	}
	if (st == MP_OK && f->next_job < mps_fit_plan_jobs(f->plan)) {
		st = mps_fit_emit(f->plan, f->next_job++, mpc_fit_sink(), f->w);
	} else if (st == MP_OK && !f->ended) {
		f->ended = true;
		mpc_fit_writer_end(f->w);
	} else if (st == MP_OK) {
		*done = true;
		return true;
	}
	free(f->text);
	f->off = 0;
	f->text = mpc_fit_writer_take(f->w, &f->len);
	if (f->ended && f->text) { /* the newline every JSON answer ends with (reply.c adds it to whole ones) */
		char *p = realloc(f->text, f->len + 2);

		if (p == NULL)
			return false;
		f->text = p;
		f->text[f->len++] = '\n';
		f->text[f->len] = '\0';
	}
	return st == MP_OK && !mpc_fit_writer_failed(f->w);
}

static ssize_t fit_stream_read(void *ctx, char *buf, size_t max)
{
	fit_stream *f = ctx;
	size_t n;

	while (f->off >= f->len) {
		bool done;

		if (!fit_stream_more(f, &done))
			return -1; /* out of memory mid-answer: the connection is closed, the answer visibly cut */
		if (done)
			return 0;
	}
	n = f->len - f->off < max ? f->len - f->off : max;
	memcpy(buf, f->text + f->off, n);
	f->off += n;
	return (ssize_t)n;
}

mp_status mpd_h_fit(mpd_request *req, mpd_reply *rep)
{
	fit_stream *f = calloc(1, sizeof(*f));
	mp_status st = f ? mpc_fit_decode(req->json, &f->rq, &rep->err) : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");

	/* models given by repository: from the Hugging Face cache or the Hub, before anything is planned */
	if (st == MP_OK)
		st = mps_fit_fetch_models(req->d->svc, &f->rq, &rep->no_store, &rep->err);
	if (st == MP_OK && req->text) { /* the table for people (it holds one job's rows at a time) */
		st = fit_text(req, &f->rq, rep);
		fit_stream_free(f);
		return st;
	}
	if (st == MP_OK && (f->w = mpc_fit_writer_new(&f->rq)) == NULL)
		st = mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	/* every error is found here, before the first byte is sent */
	if (st == MP_OK)
		st = mps_fit_prepare(req->d->svc, &f->rq, &f->plan, &rep->err);
	if (st != MP_OK) {
		if (f)
			fit_stream_free(f);
		return st;
	}
	if (f->rq.njobs * mps_fit_plan_devices(f->plan) * f->rq.ngpu_counts <= FIT_WHOLE_ROWS) {
		st = mps_fit_emit_begin(f->plan, mpc_fit_sink(), f->w);
		for (size_t i = 0; i < f->rq.njobs && st == MP_OK; i++)
			st = mps_fit_emit(f->plan, i, mpc_fit_sink(), f->w);
		if (st == MP_OK) {
			rep->text = mpc_fit_writer_finish(f->w);
			f->w = NULL;
			rep->text_type = "application/json";
			if (rep->text == NULL)
				st = mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
		}
		fit_stream_free(f);
		return st == MP_ENOMEM ? mp_fail(&rep->err, st, "", "out of memory") : st;
	}
	rep->stream_read = fit_stream_read;
	rep->stream_free = fit_stream_free;
	rep->stream_ctx = f;
	rep->text_type = "application/json";
	return MP_OK;
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
