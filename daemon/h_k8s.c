/*
 * h_k8s.c: kube-scheduler's extender verbs, POST /v1/k8s/filter and POST /v1/k8s/prioritize: decode ExtenderArgs
 * (codec/mpc_k8s.h) -> placement (service/mps_k8s.h) -> ExtenderFilterResult or HostPriorityList. The answer is printed
 * here, while the request's Node objects it echoes are still alive. The filter also counts its outcomes and keeps
 * each recent pod's planned bytes per GPU as gauges, labelled so a dashboard can set them beside DCGM's framebuffer
 * figures (namespace and pod as dcgm-exporter's pod mapping labels them; modelName as DCGM names the GPU).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../codec/mpc_json.h"
#include "../codec/mpc_k8s.h"
#include "../codec/mpc_k8s_stream.h"
#include "../service/mps_k8s.h"
#include "log.h"
#include "metrics.h"
#include "routes.h"

/* Pods whose plans stay as gauges (the oldest go first): one series per pod and device profile it was judged on. */
#define PLANNED_SERIES_KEPT 2000

static void count(mpd_metrics *m, const char *verb, const mps_k8s_result *r)
{
	static const struct {
		const char *name;
		size_t off;
	} rows[] = { { "passed", offsetof(mps_k8s_result, passed) },
		     { "failed", offsetof(mps_k8s_result, failed) },
		     { "unresolvable", offsetof(mps_k8s_result, unresolvable) } };
	mpd_label l[2] = { { "verb", verb }, { "outcome", mps_k8s_outcome_name(r->outcome) } };
	mp_error e = MP_ERROR_INIT;

	mpd_metrics_counter_add(m, "memplan_k8s_pods_total",
				"Pods kube-scheduler asked the extender about, by verb and outcome (planned, no_job: no "
				"memplan annotation or serving container, unknown_model, unsupported, error).",
				l, 2, 1, &e);
	if (strcmp(verb, "filter") != 0)
		return;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		mpd_label nl = { "result", rows[i].name };

		mpd_metrics_counter_add(m, "memplan_k8s_filter_nodes_total",
					"Nodes the extender's filter judged, by result (failed: FailedNodes, unresolvable: "
					"FailedAndUnresolvableNodes).",
					&nl, 1, (double)*(const uint64_t *)(const void *)((const char *)r + rows[i].off), &e);
	}
	if (r->from_cache)
		mpd_metrics_counter_add(m, "memplan_k8s_cached_nodes_total",
					"Nodes the filter judged by their agent's report in the node cache (rather than the "
					"labels of the request).",
					NULL, 0, (double)r->from_cache, &e);
	if (r->unreported)
		mpd_metrics_counter_add(m, "memplan_k8s_unreported_nodes_total",
					"Node names sent alone (nodeCacheCapable: true) that the node cache held no report "
					"of: judged as nodes of unknown device.",
					NULL, 0, (double)r->unreported, &e);
	if (r->unknown_device)
		mpd_metrics_counter_add(m, "memplan_k8s_unknown_device_nodes_total",
					"Nodes whose GPU matched no device profile (alias or memory), passed or failed by "
					"--k8s-unknown-device.",
					NULL, 0, (double)r->unknown_device, &e);
}

/* The pod's plan per GPU on each device profile it was judged on. */
static void planned(mpd_metrics *m, const mpc_k8s_args *a, const mps_k8s_result *r)
{
	char gpus[24];
	mp_error e = MP_ERROR_INIT;

	if (r->outcome != MPS_K8S_OUT_PLANNED)
		return;
	snprintf(gpus, sizeof(gpus), "%llu", (unsigned long long)a->rq.pod.gpus);
	{
		/* the latest filter call's plan only: a re-planned pod's earlier series (another model, GPU count or
		 * profile) go first, so that a dashboard's max by (namespace, pod) is the plan now */
		mpd_label who[2] = { { "namespace", a->rq.pod.namespace_ }, { "pod", a->rq.pod.name } };

		mpd_metrics_gauge_drop(m, "memplan_k8s_planned_memory_bytes", who, 2);
		mpd_metrics_gauge_drop(m, "memplan_k8s_planned_capacity_bytes", who, 2);
	}
	for (size_t i = 0; i < r->nclasses; i++) {
		const mps_k8s_class *c = &r->classes[i];
		mpd_label l[6] = { { "namespace", a->rq.pod.namespace_ }, { "pod", a->rq.pod.name },
				   { "model", r->model_id },		  { "profile", c->device.id },
				   { "modelName", c->model_name_label },  { "gpus", gpus } };

		if (!c->known)
			continue;
		mpd_metrics_gauge_set(m, "memplan_k8s_planned_memory_bytes",
				      "Bytes per GPU memplan planned for the pod's job on the device profile (the latest "
				      "filter call); join with DCGM_FI_DEV_FB_USED x 1048576 on namespace, pod, modelName.",
				      l, 6, (double)c->total_bytes, &e);
		mpd_metrics_gauge_set(m, "memplan_k8s_planned_capacity_bytes",
				      "Bytes per GPU the pod's job was judged against on the device profile (capacity, "
				      "at most the node's nvidia.com/gpu.memory, shared GPUs split).",
				      l, 6, (double)c->capacity_bytes, &e);
	}
	mpd_metrics_gauge_trim(m, "memplan_k8s_planned_memory_bytes", PLANNED_SERIES_KEPT);
	mpd_metrics_gauge_trim(m, "memplan_k8s_planned_capacity_bytes", PLANNED_SERIES_KEPT);
}

/*
 * The filter's answer around the echoed Node texts (mpc_k8s_filter_pieces): the head, each passing node's text
 * with a ',' between, the tail. Owns the arguments (their texts) until the response is done.
 */
typedef struct echo_stream {
	mpc_k8s_args *a;
	char *head, *tail;
	size_t head_len, tail_len;
	size_t *pass;		/* indexes of the nodes that passed, in order */
	size_t npass;
	size_t piece;		/* 0: head, 1..2 npass - 1: texts and commas, 2 npass (or 1): tail */
	size_t off;		/* bytes of the piece already sent */
} echo_stream;

static void echo_free(void *ctx)
{
	echo_stream *e = ctx;

	mpc_k8s_args_free(e->a);
	free(e->a);
	free(e->head);
	free(e->tail);
	free(e->pass);
	free(e);
}

/* The bytes of piece k (its pointer and length). */
static const char *echo_piece(const echo_stream *e, size_t k, size_t *len)
{
	size_t items = e->npass ? 2 * e->npass - 1 : 0;

	if (k == 0) {
		*len = e->head_len;
		return e->head;
	}
	if (k <= items) {
		if (k % 2 == 0) {
			*len = 1;
			return ",";
		}
		*len = e->a->echo_len[e->pass[k / 2]];
		return e->a->echo + e->a->echo_at[e->pass[k / 2]];
	}
	if (k == items + 1) {
		*len = e->tail_len;
		return e->tail;
	}
	*len = 0;
	return NULL;
}

static ssize_t echo_read(void *ctx, char *buf, size_t max)
{
	echo_stream *e = ctx;
	size_t n = 0;

	while (n < max) {
		size_t len;
		const char *p = echo_piece(e, e->piece, &len);
		size_t take;

		if (p == NULL)
			break;
		take = len - e->off < max - n ? len - e->off : max - n;
		memcpy(buf + n, p + e->off, take);
		n += take;
		e->off += take;
		if (e->off == len) {
			e->piece++;
			e->off = 0;
		}
	}
	return (ssize_t)n;
}

/* The filter's answer as an echo stream (it takes req->k8s); MP_ENOMEM when memory runs out. */
static mp_status echo_answer(mpd_request *req, mpd_reply *rep, const mps_k8s_result *r)
{
	echo_stream *e = calloc(1, sizeof(*e));
	mpc_k8s_args *a = req->k8s;
	uint64_t total = 0;

	if (e == NULL || (e->pass = malloc((a->rq.nnodes ? a->rq.nnodes : 1) * sizeof(*e->pass))) == NULL ||
	    mpc_k8s_filter_pieces(a, r, &e->head, &e->head_len, &e->tail, &e->tail_len) != MP_OK) {
		if (e) {
			free(e->pass);
			free(e);
		}
		return mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	}
	{ /* the newline every JSON answer ends with */
		char *t = realloc(e->tail, e->tail_len + 2);

		if (t == NULL) {
			free(e->head);
			free(e->tail);
			free(e->pass);
			free(e);
			return mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
		}
		e->tail = t;
		e->tail[e->tail_len++] = '\n';
		e->tail[e->tail_len] = '\0';
	}
	for (size_t i = 0; i < a->rq.nnodes; i++)
		if (r->nodes[i].verdict == MPS_K8S_PASS) {
			e->pass[e->npass++] = i;
			total += a->echo_len[i];
		}
	total += e->head_len + e->tail_len + (e->npass ? e->npass - 1 : 0);
	e->a = a;
	req->k8s = NULL;
	rep->stream_read = echo_read;
	rep->stream_free = echo_free;
	rep->stream_ctx = e;
	rep->stream_length = total;
	rep->stream_ready = true;
	rep->text_type = "application/json";
	return MP_OK;
}

static mp_status k8s_verb(mpd_request *req, mpd_reply *rep, bool prioritize)
{
	const mpd_config *cfg = &req->d->cfg;
	mps_k8s_policy policy = { cfg->k8s_unknown_device_fails, cfg->k8s_headroom_floor_percent / 100.0, req->d->nodes,
				  (int64_t)time(NULL) };
	mpc_k8s_args own, *args;
	mps_k8s_result r;
	mp_status st;
	bool echo;

	memset(&own, 0, sizeof(own));
	args = req->k8s ? req->k8s : &own;
	st = req->k8s ? MP_OK : mpc_k8s_args_decode(req->json, &own, &rep->err);
	echo = !prioritize && args->echo && args->nodes_given;

	memset(&r, 0, sizeof(r));
	if (st == MP_OK)
		st = mps_k8s_place(req->d->svc, &args->rq, &policy, &r, &rep->err);
	if (st == MP_OK && req->d->metrics) {
		count(req->d->metrics, prioritize ? "prioritize" : "filter", &r);
		if (!prioritize)
			planned(req->d->metrics, args, &r);
	}
	if (st == MP_OK)
		mpd_log((mpd_log_level)cfg->log_level, MPD_LOG_DEBUG,
			"k8s %s %s/%s: %s%s%s, %zu nodes: %llu passed, %llu failed, %llu unresolvable",
			prioritize ? "prioritize" : "filter", args->rq.pod.namespace_, args->rq.pod.name,
			mps_k8s_outcome_name(r.outcome), r.model_id[0] ? " " : "", r.model_id, args->rq.nnodes,
			(unsigned long long)r.passed, (unsigned long long)r.failed, (unsigned long long)r.unresolvable);
	if (st == MP_OK && echo && r.error[0] == '\0') {
		st = echo_answer(req, rep, &r); /* takes the arguments: free nothing of them here */
		mps_k8s_result_free(&r);
		return st;
	}
	if (st == MP_OK) {
		mpc_out w;

		/* written now: the filter's answer echoes the request's Node objects, freed after the handler */
		mpc_out_init(&w);
		if (prioritize)
			mpc_k8s_prioritize_write(&w, args, &r);
		else
			mpc_k8s_filter_write(&w, args, &r);
		st = mpd_reply_json(rep, &w);
	}
	mps_k8s_result_free(&r);
	if (args == &own)
		mpc_k8s_args_free(&own); /* (the server frees what it decoded as the body came) */
	return st;
}

mp_status mpd_h_k8s_filter(mpd_request *req, mpd_reply *rep)
{
	return k8s_verb(req, rep, false);
}

mp_status mpd_h_k8s_prioritize(mpd_request *req, mpd_reply *rep)
{
	return k8s_verb(req, rep, true);
}
