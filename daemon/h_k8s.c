/*
 * h_k8s.c: kube-scheduler's extender verbs, POST /v1/k8s/filter and POST /v1/k8s/prioritize: decode ExtenderArgs
 * (codec/k8s.h) -> placement (service/k8s.h) -> ExtenderFilterResult or HostPriorityList. The answer is printed
 * here, while the request's Node objects it echoes are still alive. The filter also counts its outcomes and keeps
 * each recent pod's planned bytes per GPU as gauges, labelled so a dashboard can set them beside DCGM's framebuffer
 * figures (namespace and pod as dcgm-exporter's pod mapping labels them; modelName as DCGM names the GPU).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../codec/json.h"
#include "../codec/k8s.h"
#include "../service/k8s.h"
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

static mp_status k8s_verb(mpd_request *req, mpd_reply *rep, bool prioritize)
{
	const mpd_config *cfg = &req->d->cfg;
	mps_k8s_policy policy = { cfg->k8s_unknown_device_fails, cfg->k8s_headroom_floor_percent / 100.0, req->d->nodes,
				  (int64_t)time(NULL) };
	mpc_k8s_args a;
	mps_k8s_result r;
	mp_status st = mpc_k8s_args_decode(req->json, &a, &rep->err);

	memset(&r, 0, sizeof(r));
	if (st == MP_OK)
		st = mps_k8s_place(req->d->svc, &a.rq, &policy, &r, &rep->err);
	if (st == MP_OK) {
		mpc_out w;

		/* written now: the filter's answer echoes the request's Node objects, freed after the handler */
		mpc_out_init(&w);
		if (prioritize)
			mpc_k8s_prioritize_write(&w, &a, &r);
		else
			mpc_k8s_filter_write(&w, &a, &r);
		st = mpd_reply_json(rep, &w);
	}
	if (st == MP_OK && req->d->metrics) {
		count(req->d->metrics, prioritize ? "prioritize" : "filter", &r);
		if (!prioritize)
			planned(req->d->metrics, &a, &r);
	}
	if (st == MP_OK)
		mpd_log((mpd_log_level)cfg->log_level, MPD_LOG_DEBUG,
			"k8s %s %s/%s: %s%s%s, %zu nodes: %llu passed, %llu failed, %llu unresolvable",
			prioritize ? "prioritize" : "filter", a.rq.pod.namespace_, a.rq.pod.name,
			mps_k8s_outcome_name(r.outcome), r.model_id[0] ? " " : "", r.model_id, a.rq.nnodes,
			(unsigned long long)r.passed, (unsigned long long)r.failed, (unsigned long long)r.unresolvable);
	mps_k8s_result_free(&r);
	mpc_k8s_args_free(&a);
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
