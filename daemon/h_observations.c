/*
 * h_observations.c: POST /v1/observations (a write: what a running engine reported, from its node agent or a
 * person) and GET /v1/observations (the newest observations, memplan's error per engine, version, device and model,
 * and the terms plans take from them). Decode (codec/mpc_fleet.h) -> evaluate and store (service/mps_observe.h) -> encode;
 * after each new observation the /metrics gauges of the error and the observed terms are set again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../codec/mpc_fleet.h"
#include "../service/mps_observe.h"
#include "metrics.h"
#include "query.h"
#include "reply.h"
#include "routes.h"

#define LIST_DEFAULT 50
#define LIST_MAX 200
#define GROUPS_MAX 200		/* error series in /metrics and the listing */

/* The distinct (engine, version line, device) keys among the summaries, with each one's correction. */
static size_t corrections(mps_service *svc, const mps_obs_summary *rows, size_t n, mps_obs_correction *out,
			  char keys[][3][MP_STORE_ID_MAX], size_t cap)
{
	size_t k = 0;

	for (size_t i = 0; i < n && k < cap; i++) {
		mp_error e = MP_ERROR_INIT;
		char line[16];
		mps_obs_term t = mps_engine_term(rows[i].engine);
		size_t j;

		if (t == MPS_OBS_TERM_COUNT)
			continue;
		/* plans take the observations of their own release line (service/mps_observe.h mps_engine_plan_line) */
		mps_version_line(rows[i].engine_version, line, sizeof(line));
		for (j = 0; j < k; j++)
			if (strcmp(keys[j][0], mp_engine_name(rows[i].engine)) == 0 && strcmp(keys[j][1], line) == 0 &&
			    strcmp(keys[j][2], rows[i].device_id) == 0)
				break;
		if (j < k)
			continue;
		if (mps_observation_correction(svc, rows[i].engine, line, rows[i].device_id, t, &out[k], &e) != MP_OK)
			continue;
		snprintf(keys[k][0], MP_STORE_ID_MAX, "%s", mp_engine_name(rows[i].engine));
		snprintf(keys[k][1], MP_STORE_ID_MAX, "%s", line);
		snprintf(keys[k][2], MP_STORE_ID_MAX, "%s", rows[i].device_id);
		k++;
	}
	return k;
}

typedef struct obs_state {
	mps_obs_summary rows[GROUPS_MAX];
	size_t n;
	mps_obs_correction corr[GROUPS_MAX];
	char keys[GROUPS_MAX][3][MP_STORE_ID_MAX];
	size_t ncorr;
} obs_state;

static mp_status read_state(mps_service *svc, obs_state *s, mp_error *err)
{
	mp_status st = mps_observation_summaries(svc, s->rows, GROUPS_MAX, &s->n, err);

	s->ncorr = st == MP_OK ? corrections(svc, s->rows, s->n, s->corr, s->keys, GROUPS_MAX) : 0;
	return st;
}

/* memplan's error and the observed terms as gauges (called at start and after each observation). */
void mpd_observation_gauges(mpd_daemon *d)
{
	obs_state *s = malloc(sizeof(*s));
	mp_error e = MP_ERROR_INIT;

	if (s == NULL || d->metrics == NULL || d->svc == NULL || read_state(d->svc, s, &e) != MP_OK) {
		free(s);
		return;
	}
	for (size_t i = 0; i < s->n; i++) {
		const mps_obs_summary *r = &s->rows[i];
		mpd_label l[5] = { { "engine", mp_engine_name(r->engine) }, { "engine_version", r->engine_version },
				   { "device", r->device_id }, { "model", r->model_id }, { "figure", r->figure } };

		mpd_metrics_gauge_set(d->metrics, "memplan_observation_error_ratio",
				      "memplan's error against what running engines reported: (predicted - reported) / "
				      "reported of the figure, the median of the newest 50 observations per engine, "
				      "version, device and model (POST /v1/observations).",
				      l, 5, r->median_error_ratio, &e);
		mpd_metrics_gauge_set(d->metrics, "memplan_observations",
				      "Observations stored per engine, version, device, model and figure.", l, 5,
				      (double)r->observations, &e);
	}
	for (size_t i = 0; i < s->ncorr; i++) {
		mpd_label l[4] = { { "engine", s->keys[i][0] }, { "version_line", s->keys[i][1] },
				   { "device", s->keys[i][2] }, { "term", mps_obs_term_name(s->corr[i].term) } };

		mpd_metrics_gauge_set(d->metrics, "memplan_observed_term_bytes",
				      "The median of what observations imply for a memory term of the engine's budget "
				      "(bytes per GPU), per engine version line and device.",
				      l, 4, (double)s->corr[i].median_bytes, &e);
		mpd_metrics_gauge_set(d->metrics, "memplan_observed_term_applied",
				      "1 when plans of the engine on the device take the observed median for the term "
				      "(consistently off the model), else 0.",
				      l, 4, s->corr[i].applies ? 1 : 0, &e);
	}
	free(s);
}

mp_status mpd_h_observation_post(mpd_request *req, mpd_reply *rep)
{
	mpc_observation_request *rq = calloc(1, sizeof(*rq));
	mps_engine_check *check = malloc(sizeof(*check));
	mps_observation *o = malloc(sizeof(*o));
	bool existed = false;
	mp_status st = rq && check && o ? mpc_observation_decode(req->json, rq, &rep->err)
					: mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");

	/* the agent's form: the text is read for the pod's engine, once the pod says which */
	if (st == MP_OK && rq->rq.from_pod && rq->rq.pod.engine[0])
		st = mpc_observation_report(rq, mp_engine_from_name(rq->rq.pod.engine), &rep->err);
	if (st == MP_OK)
		st = mps_observation_evaluate(req->d->svc, req->d->nodes, (int64_t)time(NULL), &rq->rq, check, o,
					      &rep->err);
	if (st == MP_OK) {
		mpc_observation_settings(&check->plan, o->settings_json, sizeof(o->settings_json));
		st = mps_observation_store(req->d->svc, o, &existed, &rep->err);
	}
	if (st == MP_OK && existed) {
		size_t got = 0;
		bool more = false;

		st = mps_observation_page(req->d->svc, NULL, o->id + 1, o, 1, &got, &more, &rep->err);
	}
	if (st == MP_OK) {
		mpc_out w;
		mps_obs_correction c;
		mp_error e = MP_ERROR_INIT;
		mp_engine eng = mp_engine_from_name(o->engine);
		mps_obs_term t = mps_engine_term(eng);
		char line[16];

		mps_version_line(o->engine_version, line, sizeof(line));
		mpc_out_init(&w);
		mpc_w_obj(&w, NULL);
		mpc_observation_write(&w, "observation", o);
		if (t != MPS_OBS_TERM_COUNT &&
		    mps_observation_correction(req->d->svc, eng, line, o->device_id, t, &c, &e) == MP_OK)
			mpc_obs_correction_write(&w, "correction", &c);
		else
			mpc_w_null(&w, "correction");
		mpc_w_bool(&w, "stored_before", existed);
		mpc_w_end(&w);
		st = mpd_reply_json(rep, &w);
		if (st == MP_OK && !existed) {
			rep->http_status = 201;
			snprintf(rep->location, sizeof(rep->location), "/v1/observations?cursor=%lld", (long long)o->id + 1);
			mpd_observation_gauges(req->d);
		}
	}
	if (rq)
		mpc_observation_request_release(rq);
	free(rq);
	free(check);
	free(o);
	return st;
}

mp_status mpd_h_observations_list(mpd_request *req, mpd_reply *rep)
{
	mp_store_observation_filter f = { mpd_query(req, "engine"), mpd_query(req, "device"), mpd_query(req, "model") };
	uint64_t limit, cursor;
	mps_observation *rows = NULL;
	obs_state *s = NULL;
	size_t n = 0;
	bool more = false;
	mp_status st = mpd_query_u64(req, "limit", 1, LIST_MAX, LIST_DEFAULT, &limit, &rep->err);

	if (st == MP_OK)
		st = mpd_query_u64(req, "cursor", 0, INT64_MAX, 0, &cursor, &rep->err);
	if (st != MP_OK)
		return st;
	rows = malloc((size_t)limit * sizeof(*rows));
	s = malloc(sizeof(*s));
	st = rows && s ? mps_observation_page(req->d->svc, &f, (int64_t)cursor, rows, (size_t)limit, &n, &more, &rep->err)
		       : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	if (st == MP_OK)
		st = read_state(req->d->svc, s, &rep->err);
	if (st == MP_OK) {
		mpc_out w;

		mpc_out_init(&w);
		mpc_w_obj(&w, NULL);
		mpc_w_arr(&w, "items");
		for (size_t i = 0; i < n; i++)
			mpc_observation_write(&w, NULL, &rows[i]);
		mpc_w_end(&w);
		if (more && n) {
			char c[24];

			snprintf(c, sizeof(c), "%lld", (long long)rows[n - 1].id);
			mpc_w_str(&w, "next_cursor", c);
		} else {
			mpc_w_null(&w, "next_cursor");
		}
		mpc_w_arr(&w, "errors");
		for (size_t i = 0; i < s->n; i++)
			mpc_obs_summary_write(&w, NULL, &s->rows[i]);
		mpc_w_end(&w);
		mpc_w_arr(&w, "terms");
		for (size_t i = 0; i < s->ncorr; i++) {
			mpc_w_obj(&w, NULL);
			mpc_w_str(&w, "engine", s->keys[i][0]);
			mpc_w_str_or_null(&w, "version_line", s->keys[i][1]);
			mpc_w_str(&w, "device", s->keys[i][2]);
			mpc_obs_correction_write(&w, "correction", &s->corr[i]);
			mpc_w_end(&w);
		}
		mpc_w_end(&w);
		mpc_w_bool(&w, "observed_terms", mps_observed_terms_on(req->d->svc));
		mpc_w_end(&w);
		st = mpd_reply_json(rep, &w);
	}
	free(rows);
	free(s);
	return st;
}
