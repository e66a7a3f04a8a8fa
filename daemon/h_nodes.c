/*
 * h_nodes.c: the node cache's resource, fed by the node agents. PUT /v1/nodes/{name} (a report: the node's GPUs
 * and a lease; a write, so it needs the token when one is set), GET and DELETE /v1/nodes/{name}, GET /v1/nodes
 * (the reports that hold now, by name; cursor pagination). Thin: decode (codec/mpc_fleet.h) -> the cache
 * (service/mps_nodes.h) -> encode. The clock is read here, once per request.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../codec/mpc_fleet.h"
#include "metrics.h"
#include "query.h"
#include "reply.h"
#include "routes.h"

#define LIST_DEFAULT 100
#define LIST_MAX 1000

static void node_gauge(mpd_request *req)
{
	mp_error e = MP_ERROR_INIT;

	if (req->d->metrics)
		mpd_metrics_gauge_set(req->d->metrics, "memplan_nodes_reported",
				      "Nodes whose agent's report is in the node cache (held until its lease ends): what "
				      "the extender judges names-only requests by.",
				      NULL, 0, (double)mps_node_cache_size(req->d->nodes), &e);
}

static mp_status answer(mpd_reply *rep, const mps_node_facts *f)
{
	mpc_out w;

	mpc_out_init(&w);
	mpc_node_write(&w, NULL, f);
	return mpd_reply_json(rep, &w);
}

mp_status mpd_h_node_put(mpd_request *req, mpd_reply *rep)
{
	mps_node_facts *f = malloc(sizeof(*f));
	int64_t now = (int64_t)time(NULL);
	bool created = false;
	mp_status st = f ? mpc_node_decode(req->json, req->path_id, f, &rep->err)
			 : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");

	if (st == MP_OK && f->profile[0]) {
		/* the profile the node is judged by must be in the catalog (the agent publishes it before reporting): a
		 * name that is not would make the node an unknown device, passed or failed by policy, not by its GPUs */
		mp_store_device *d = malloc(sizeof(*d));
		mp_error e = MP_ERROR_INIT;
		mp_status got = d ? mps_device_get(req->d->svc, f->profile, d, &e) : MP_ENOMEM;

		free(d);
		if (got == MP_ENOTFOUND)
			st = mp_fail(&rep->err, MP_EINVAL, "/profile",
				     "profile '%s' is not a stored device: PUT /v1/devices/%s (or POST /v1/calibrations) "
				     "first, or leave profile out",
				     f->profile, f->profile);
		else if (got != MP_OK)
			st = mp_fail(&rep->err, got, "/profile", "%s", got == MP_ENOMEM ? "out of memory" : e.message);
	}
	if (st == MP_OK)
		st = mps_node_cache_put(req->d->nodes, f, now, &created, &rep->err);
	if (st == MP_OK && mps_node_cache_get(req->d->nodes, f->name, now, f))
		st = answer(rep, f);
	if (st == MP_OK && created) {
		rep->http_status = 201;
		snprintf(rep->location, sizeof(rep->location), "/v1/nodes/%.170s", f->name);
	}
	if (st == MP_OK)
		node_gauge(req);
	free(f);
	return st;
}

mp_status mpd_h_node_get(mpd_request *req, mpd_reply *rep)
{
	mps_node_facts *f = malloc(sizeof(*f));
	mp_status st = f ? mpc_node_name_check(req->path_id, &rep->err) : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");

	if (st == MP_OK && !mps_node_cache_get(req->d->nodes, req->path_id, (int64_t)time(NULL), f))
		st = mp_fail(&rep->err, MP_ENOTFOUND, "/name",
			     "the node cache holds no report of this node: its agent has not reported, or its lease ended");
	if (st == MP_OK)
		st = answer(rep, f);
	free(f);
	return st;
}

mp_status mpd_h_node_delete(mpd_request *req, mpd_reply *rep)
{
	if (mpc_node_name_check(req->path_id, &rep->err) != MP_OK)
		return MP_EINVAL;
	if (!mps_node_cache_remove(req->d->nodes, req->path_id))
		return mp_fail(&rep->err, MP_ENOTFOUND, "/name", "the node cache holds no report of this node");
	rep->http_status = 204;
	node_gauge(req);
	return MP_OK;
}

mp_status mpd_h_nodes_list(mpd_request *req, mpd_reply *rep)
{
	uint64_t limit;
	size_t n = 0;
	bool more = false;
	mps_node_facts *rows = NULL;
	int64_t now = (int64_t)time(NULL);
	mp_status st = mpd_query_u64(req, "limit", 1, LIST_MAX, LIST_DEFAULT, &limit, &rep->err);
	mpc_out w;

	if (st != MP_OK)
		return st;
	mps_node_cache_expire(req->d->nodes, now);
	rows = malloc((size_t)limit * sizeof(*rows));
	if (rows == NULL)
		return mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	st = mps_node_cache_page(req->d->nodes, now, mpd_query(req, "cursor"), rows, (size_t)limit, &n, &more, &rep->err);
	if (st == MP_OK) {
		mpc_out_init(&w);
		mpc_w_obj(&w, NULL);
		mpc_w_arr(&w, "items");
		for (size_t i = 0; i < n; i++)
			mpc_node_write(&w, NULL, &rows[i]);
		mpc_w_end(&w);
		if (more && n)
			mpc_w_str(&w, "next_cursor", rows[n - 1].name);
		else
			mpc_w_null(&w, "next_cursor");
		mpc_w_end(&w);
		st = mpd_reply_json(rep, &w);
	}
	free(rows);
	if (st == MP_OK)
		node_gauge(req);
	return st;
}
