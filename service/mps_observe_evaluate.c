/*
 * mps_observe_evaluate.c: an observation (POST /v1/observations, a node agent's report) turned into the term it
 * measures (mps_observe.h mps_observation_evaluate): its plan (the pod's job or the given plan), the engine check of
 * what the engine printed, and the term derived backwards from the figure (mps_observe.c's header says how). Apart
 * from mps_observe.c, which plans read (mps_observed_apply), so that plans, checks and observations do not call
 * one another in a circle: this file -> mps_engine_check.c -> mps_plan.c -> mps_observe.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mps_k8s.h"
#include "mps_observe.h"
#include "service_int.h"

static const mps_engine_figure *first_figure(const mps_engine_report *r, mps_figure kind)
{
	for (size_t i = 0; i < r->nfigures; i++)
		if (r->figures[i].kind == kind)
			return &r->figures[i];
	return NULL;
}

/* The pod form's plan: the pod's job as the extender reads it, its engine, its model, the node's device. */
static mp_status pod_plan(mps_service *s, mps_node_cache *cache, int64_t now, mps_observation_request *rq,
			  mps_model *model, mp_error *err)
{
	mps_k8s_pod *pod = &rq->pod;
	mps_inference_request *plan = &rq->check.plan;
	mps_fit_job job;
	mp_engine e = mp_engine_from_name(pod->engine);
	char id[MP_STORE_ID_MAX] = "";
	mp_status st;

	if (pod->state == MPS_K8S_BAD_JOB)
		return mp_fail(err, MP_EINVAL, "/pod", "%s", pod->error);
	if (pod->state != MPS_K8S_JOB || pod->job.training || !pod->engine[0] || e == MP_ENGINE_COUNT)
		return mp_fail(err, MP_EINVAL, "/pod",
			       "memplan observes a vLLM or SGLang serving container (its launch as the extender reads it); "
			       "this pod has none%s%s", pod->note[0] ? ": " : "", pod->note);
	job = pod->job;
	st = mps_k8s_pod_model(s, pod, &job, model, id, err);
	if (st == MP_ENOTFOUND)
		return mp_fail(err, MP_ENOTFOUND, "/pod", "no stored model for '%.200s' (%s): store its config.json with "
			       "PUT /v1/models/{id}", pod->model_name, pod->model_from);
	if (st != MP_OK)
		return st;
	plan->job = job.u.inference;
	plan->job.model.arch = NULL; /* a stored id now (an inline model stays the pod's, resolved below) */
	if (job.u.inference.model.kind != MPS_MODEL_STORED)
		plan->job.model = job.u.inference.model; /* borrowed from the pod: released with it */
	plan->job.engine.engine = e;
	if (e == MP_ENGINE_SGLANG && plan->job.engine.utilization_given)
		plan->job.engine.mem_fraction_static = plan->job.opts.gpu_memory_utilization;
	if (!pod->num_gpus_given)
		plan->job.req.num_gpus = pod->gpus;
	if (pod->sequence_from_model)
		plan->job.req.sequence_length = mp_model_sequence_ceiling(&model->arch, false);
	if (plan->job.req.sequence_length == 0)
		return mp_fail(err, MP_EINVAL, "/pod", "the model states no context length: the launch gives it "
			       "(--max-model-len)");
	plan->device.given = true;
	plan->device.inline_profile = true;
	snprintf(plan->device.pointer, sizeof(plan->device.pointer), "/node");
	st = mps_k8s_node_device(s, cache, now, rq->node, pod->resource, &plan->device.profile, err);
	if (st == MP_OK)
		snprintf(plan->device.id, sizeof(plan->device.id), "%s", plan->device.profile.id);
	if (!rq->engine_version[0])
		mps_image_version(pod->image, rq->engine_version, sizeof(rq->engine_version));
	return st;
}

/* The plan follows the observed release's line (mps_observe.h); a plan naming another line cannot measure it. */
static mp_status plan_release(mps_observation_request *rq, mp_error *err)
{
	mps_engine_opts *eo = &rq->check.plan.job.engine;
	const mp_engine_version *v = rq->engine_version[0] ? mp_engine_version_find(eo->engine, rq->engine_version)
							   : NULL;

	if (v == NULL)
		return MP_OK; /* not a line memplan follows: the plan's own (its newest when it names none) */
	if (eo->version == NULL)
		eo->version = v;
	else if (eo->version != v)
		return mp_fail(err, MP_EINVAL, rq->from_pod ? "/pod" : "/plan/engine_version",
			       "the plan's engine_version (%s%s) is not the line of the observed engine_version %s (%s): "
			       "leave it out, or give the same line", eo->version->name,
			       rq->from_pod ? ", the pod's memplan.io/engine-version" : "", rq->engine_version, v->name);
	return MP_OK;
}

/* The figure the observation compares, and the term it measures (the arithmetic of the file's head). */
static mp_status derive(const mps_engine_check *c, const mps_engine_report *r, mps_observation *o, mp_error *err)
{
	const mps_engine_block *b = &c->plan.engine;
	const mp_engine_inputs *in = &b->inputs;
	const mp_engine_prediction *p = &b->predicted;
	const mps_engine_figure *f;
	const char *where = r->from_metrics ? "/metrics" : "/log";

	if (!b->have_prediction)
		return mp_fail(err, MP_EINVAL, where, "the plan gives no engine prediction to compare");
	if (b->engine == MP_ENGINE_VLLM) {
		const mps_engine_figure *u = first_figure(r, MPS_FIG_MEMORY_FRACTION);
		double blocks, unit = (double)p->page_bytes * (double)p->group_layers;
		double requested = (double)p->requested_memory_bytes;
		double peak = (double)(p->profile_peak_bytes ? p->profile_peak_bytes : in->activation_bytes);
		bool ceiled = in->version && in->version->budget == MP_BUDGET_VLLM_V1_CONSUMED;

		if ((f = first_figure(r, MPS_FIG_NUM_GPU_BLOCKS)) != NULL) {
			blocks = f->reported;
			snprintf(o->figure, sizeof(o->figure), "num_gpu_blocks");
			o->predicted = (double)p->num_gpu_blocks;
		} else if ((f = first_figure(r, MPS_FIG_KV_CACHE_TOKENS)) != NULL && in->block_size) {
			blocks = floor(f->reported / (double)in->block_size) * (double)(p->kv_groups ? p->kv_groups : 1);
			snprintf(o->figure, sizeof(o->figure), "kv_cache_tokens");
			o->predicted = (double)p->kv_cache_tokens;
		} else {
			return mp_fail(err, MP_EINVAL, where, "the report gives neither num_gpu_blocks "
				       "(vllm:cache_config_info) nor the GPU KV cache size in tokens: no figure to compare");
		}
		if (u && u->reported > 0 && u->reported <= 1) /* what the engine ran with, rounded as its release does */
			requested = ceiled ? ceil((double)in->total_memory_bytes * u->reported)
					   : floor((double)in->total_memory_bytes * u->reported);
		o->reported = f->reported;
		snprintf(o->term, sizeof(o->term), "%s", mps_obs_term_name(MPS_OBS_NON_TORCH));
		o->term_observed_bytes = (int64_t)llround(requested - (blocks + 0.5) * unit - (double)in->weights_bytes -
							  peak);
		o->term_modelled_bytes = b->observed[MPS_OBS_NON_TORCH].modelled_bytes;
		o->term_resolution_bytes = (int64_t)unit;
	} else if (b->engine == MP_ENGINE_SGLANG) {
		double page = (double)(in->block_size ? in->block_size : 1), cell = (double)p->cell_size_bytes;

		if ((f = first_figure(r, MPS_FIG_KV_CACHE_TOKENS)) == NULL || in->memory_fraction <= 0)
			return mp_fail(err, MP_EINVAL, where, "the report gives no KV cache size in tokens (SGLang's "
				       "\"KV Cache is allocated. #tokens\"): no figure to compare");
		snprintf(o->figure, sizeof(o->figure), "kv_cache_tokens");
		o->reported = f->reported;
		o->predicted = (double)p->max_total_num_tokens;
		snprintf(o->term, sizeof(o->term), "%s", mps_obs_term_name(MPS_OBS_CONTEXT));
		o->term_observed_bytes = (int64_t)llround((double)in->total_memory_bytes -
							  ((f->reported + page / 2) * cell + (double)in->weights_bytes) /
								  in->memory_fraction);
		o->term_modelled_bytes = b->observed[MPS_OBS_CONTEXT].modelled_bytes;
		o->term_resolution_bytes = (int64_t)(page * cell / in->memory_fraction);
	} else {
		if ((f = first_figure(r, MPS_FIG_KV_CACHE_TOKENS)) == NULL)
			return mp_fail(err, MP_EINVAL, where, "the report gives no max tokens in the KV cache: no figure "
				       "to compare");
		snprintf(o->figure, sizeof(o->figure), "kv_cache_tokens");
		o->reported = f->reported;
		o->predicted = (double)p->max_tokens;
	}
	o->error_ratio = o->reported > 0 ? (o->predicted - o->reported) / o->reported : 0;
	return MP_OK;
}

mp_status mps_observation_evaluate(mps_service *s, mps_node_cache *cache, int64_t now, mps_observation_request *rq,
				   mps_engine_check *check, mps_observation *out, mp_error *err)
{
	mps_model *model = NULL;
	mp_status st = MP_OK;

	memset(out, 0, sizeof(*out));
	if (rq->from_pod) {
		model = malloc(sizeof(*model));
		if (model == NULL)
			return mp_fail(err, MP_ENOMEM, "", "out of memory");
		st = pod_plan(s, cache, now, rq, model, err);
		free(model);
		if (st != MP_OK)
			return st;
		snprintf(out->node, sizeof(out->node), "%s", rq->node);
		snprintf(out->namespace_, sizeof(out->namespace_), "%s", rq->pod.namespace_);
		snprintf(out->pod, sizeof(out->pod), "%s", rq->pod.name);
	}
	if (rq->check.report.engine != rq->check.plan.job.engine.engine)
		return mp_fail(err, MP_EINTERNAL, "", "the report was read for another engine than the plan's");
	st = plan_release(rq, err);
	if (st != MP_OK)
		return st;
	st = mps_engine_check_run(s, &rq->check, check, err);
	if (st != MP_OK)
		return st;
	st = derive(check, &rq->check.report, out, err);
	if (st != MP_OK)
		return st;
	snprintf(out->engine, sizeof(out->engine), "%s", mp_engine_name(check->plan.engine.engine));
	snprintf(out->engine_version, sizeof(out->engine_version), "%s", rq->engine_version);
	mps_version_line(rq->engine_version, out->version_line, sizeof(out->version_line));
	snprintf(out->device_id, sizeof(out->device_id), "%s", check->plan.device.id);
	snprintf(out->model_id, sizeof(out->model_id), "%s", check->plan.model.id[0] ? check->plan.model.id : "inline");
	snprintf(out->source, sizeof(out->source), "%s", rq->check.report.from_metrics ? "metrics" : "log");
	snprintf(out->key, sizeof(out->key), "%s", rq->key);
	snprintf(out->observed_at, sizeof(out->observed_at), "%s", rq->observed_at);
	return MP_OK;
}

