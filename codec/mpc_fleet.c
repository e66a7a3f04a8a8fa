/*
 * mpc_fleet.c: the node agent's report and the observation documents (mpc_fleet.h). Each body is read by a field table
 * (model/fields.h): every unknown, missing or bad member is named at once, with what it allows.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../model/fields.h"
#include "codec.h"
#include "mpc_fleet.h"
#include "mpc_k8s.h"

void mpc_iso8601(int64_t t, char *out, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (gmtime_r(&tt, &tm) == NULL || strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(out, len, "%s", "");
}

/* ----- the node agent's report ------------------------------------------------------------------------------ */

static const char *const sharing_names[] = { "none", "time-slicing", "mps", NULL };
static const char *const mig_names[] = { "none", "single", "mixed", NULL };

typedef struct node_body {
	mps_node_facts f;
	int sharing, mig;
} node_body;

#define NB(m) offsetof(node_body, f.m)
static const mpm_field node_fields[] = {
	{ .name = "product", .type = MPM_F_STRING, .offset = NB(product), .size = MPM_STR(mps_node_facts, product) },
	{ .name = "memory_mib", .type = MPM_F_U64, .offset = NB(memory_mib), .min = 1, .max = UINT64_C(16777216) },
	{ .name = "count", .type = MPM_F_U64, .offset = NB(count), .min = 0, .max = 4096 },
	{ .name = "profile", .type = MPM_F_STRING, .offset = NB(profile), .size = MPM_STR(mps_node_facts, profile) },
	{ .name = "replicas", .type = MPM_F_U64, .offset = NB(replicas), .min = 0, .max = 1024 },
	{ .name = "sharing_strategy", .type = MPM_F_ENUM, .offset = offsetof(node_body, sharing), .names = sharing_names },
	{ .name = "mig_strategy", .type = MPM_F_ENUM, .offset = offsetof(node_body, mig), .names = mig_names },
	{ .name = "mig", .type = MPM_F_ANY },
	{ .name = "agent", .type = MPM_F_STRING, .offset = NB(agent), .size = MPM_STR(mps_node_facts, agent) },
	{ .name = "lease_seconds", .type = MPM_F_U64, .offset = NB(lease_seconds), .min = MPS_NODE_LEASE_MIN_SECONDS,
	  .max = MPS_NODE_LEASE_MAX_SECONDS },
	/* what the document of a GET adds: accepted back, ignored */
	{ .name = "name", .type = MPM_F_ANY },
	{ .name = "updated_at", .type = MPM_F_ANY },
	{ .name = "expires_at", .type = MPM_F_ANY },
};

static const mpm_field mig_fields[] = {
	{ .name = "profile", .type = MPM_F_STRING, .required = true, .offset = offsetof(mps_node_mig, profile),
	  .size = MPM_STR(mps_node_mig, profile) },
	{ .name = "memory_mib", .type = MPM_F_U64, .required = true, .offset = offsetof(mps_node_mig, memory_mib),
	  .min = 1, .max = UINT64_C(16777216) },
	{ .name = "count", .type = MPM_F_U64, .required = true, .offset = offsetof(mps_node_mig, count), .min = 0,
	  .max = 4096 },
};

/* Printable ASCII without '"' and '\\' (a name the extender and the metrics labels may carry). */
static bool plain(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f || *s == '"' || *s == '\\')
			return false;
	return true;
}

bool mpc_node_name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > 253 || !(isalnum((unsigned char)name[0]) && isalnum((unsigned char)name[n - 1])))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') || name[i] == '-' ||
		      name[i] == '.'))
			return false;
	return true;
}

mp_status mpc_node_name_check(const char *name, mp_error *err)
{
	return mpc_node_name_ok(name) ? MP_OK
				      : mp_fail(err, MP_EINVAL, "/name", "a node name is a DNS subdomain, as spec.nodeName: 1 "
						"to 253 of a-z 0-9 '-' '.', starting and ending with a letter or digit");
}

mp_status mpc_node_decode(const cJSON *body, const char *name, mps_node_facts *out, mp_error *err)
{
	node_body b;
	mp_problems p = MP_PROBLEMS_INIT;
	const cJSON *mig = cJSON_GetObjectItemCaseSensitive(body, "mig"), *m;
	const cJSON *given = cJSON_GetObjectItemCaseSensitive(body, "name");
	size_t n = name ? strlen(name) : 0;

	memset(&b, 0, sizeof(b));
	b.f.lease_seconds = MPS_NODE_LEASE_DEFAULT_SECONDS;
	if (!cJSON_IsObject(body))
		return mp_fail(err, MP_EINVAL, "", "a node report is an object: {\"product\": ..., \"memory_mib\": ..., "
			       "\"count\": ..., \"lease_seconds\": ...}");
	if (!mpc_node_name_ok(name) || n >= sizeof(b.f.name))
		mp_problems_note(&p, mpc_node_name_check("", err), err);
	else
		memcpy(b.f.name, name, n + 1);
	if (given && !(cJSON_IsString(given) && name && strcmp(given->valuestring, name) == 0))
		mp_problems_note(&p, mp_fail(err, MP_EINVAL, "/name", "name, when given, must be the path's node name"),
				 err);
	mp_problems_note(&p, mpm_decode_fields(body, "", node_fields, MPM_COUNT(node_fields), &b, err), err);
	b.f.count_given = cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(body, "count"));
	if (b.f.product[0] && !plain(b.f.product))
		mp_problems_note(&p, mp_fail(err, MP_EINVAL, "/product", "product is NVML's name or GPU Feature "
					     "Discovery's product label: printable ASCII, no quotes"), err);
	if (b.f.profile[0] && !mp_valid_id(b.f.profile))
		mp_problems_note(&p, mp_fail(err, MP_EINVAL, "/profile", "profile is a stored device id: 1 to 63 of "
					     "a-z 0-9 . - _"), err);
	if (b.f.agent[0] && !plain(b.f.agent))
		mp_problems_note(&p, mp_fail(err, MP_EINVAL, "/agent", "agent is printable ASCII, no quotes"), err);
	if (!b.f.product[0] && !b.f.profile[0] && !b.f.memory_mib && !cJSON_IsArray(mig))
		mp_problems_note(&p, mp_fail(err, MP_EINVAL, "/product", "a report names the GPUs: product (NVML's "
					     "name), memory_mib, or profile (a stored device id)"), err);
	if (mig && !cJSON_IsNull(mig) && !cJSON_IsArray(mig))
		mp_problems_note(&p, mp_fail(err, MP_EINVAL, "/mig", "mig is a list of {profile, memory_mib, count}"), err);
	const cJSON *migs = cJSON_IsArray(mig) ? mig : NULL;

	cJSON_ArrayForEach(m, migs)
	{
		char ptr[32];

		snprintf(ptr, sizeof(ptr), "/mig/%zu", b.f.nmig);
		if (b.f.nmig == MPS_NODE_MAX_MIG) {
			mp_problems_note(&p, mp_fail(err, MP_EINVAL, ptr, "at most %d MIG profiles a node",
						     MPS_NODE_MAX_MIG), err);
			break;
		}
		if (!cJSON_IsObject(m)) {
			mp_problems_note(&p, mp_fail(err, MP_EINVAL, ptr, "a MIG profile is {profile, memory_mib, count}"),
					 err);
			b.f.nmig++;
			continue;
		}
		mp_problems_note(&p, mpm_decode_fields(m, ptr, mig_fields, MPM_COUNT(mig_fields), &b.f.mig[b.f.nmig], err),
				 err);
		if (b.f.mig[b.f.nmig].profile[0] && !plain(b.f.mig[b.f.nmig].profile))
			mp_problems_note(&p, mp_fail(err, MP_EINVAL, ptr, "a MIG profile name is printable ASCII"), err);
		b.f.nmig++;
	}
	snprintf(b.f.sharing_strategy, sizeof(b.f.sharing_strategy), "%s", sharing_names[b.sharing]);
	snprintf(b.f.mig_strategy, sizeof(b.f.mig_strategy), "%s", mig_names[b.mig]);
	if (b.mig != 0 && b.f.nmig == 0)
		mp_problems_note(&p, mp_fail(err, MP_EINVAL, "/mig", "mig_strategy %s needs the MIG profiles (mig)",
					     mig_names[b.mig]), err);
	*out = b.f;
	return mp_problems_end(&p, err);
}

void mpc_node_write(mpc_out *w, const char *key, const mps_node_facts *f)
{
	char at[32];

	mpc_w_obj(w, key);
	mpc_w_str(w, "name", f->name);
	mpc_w_str_or_null(w, "product", f->product);
	mpc_w_u64_or_null(w, "memory_mib", f->memory_mib);
	mpc_w_u64(w, "count", f->count);
	mpc_w_str_or_null(w, "profile", f->profile);
	mpc_w_u64(w, "replicas", f->replicas);
	mpc_w_str(w, "sharing_strategy", f->sharing_strategy[0] ? f->sharing_strategy : "none");
	mpc_w_str(w, "mig_strategy", f->mig_strategy[0] ? f->mig_strategy : "none");
	mpc_w_arr(w, "mig");
	for (size_t i = 0; i < f->nmig; i++) {
		mpc_w_obj(w, NULL);
		mpc_w_str(w, "profile", f->mig[i].profile);
		mpc_w_u64(w, "memory_mib", f->mig[i].memory_mib);
		mpc_w_u64(w, "count", f->mig[i].count);
		mpc_w_end(w);
	}
	mpc_w_end(w);
	mpc_w_str_or_null(w, "agent", f->agent);
	mpc_w_u64(w, "lease_seconds", f->lease_seconds);
	mpc_iso8601(f->updated_at, at, sizeof(at));
	mpc_w_str(w, "updated_at", at);
	mpc_iso8601(f->expires_at, at, sizeof(at));
	mpc_w_str(w, "expires_at", at);
	mpc_w_end(w);
}

/* ----- observations ----------------------------------------------------------------------------------------- */

static const char *const obs_engines[] = { "vllm", "sglang", "trtllm", NULL };

typedef struct obs_body {
	int engine;
	char engine_version[32];
	char key[200];
	char observed_at[32];
	char node[MPS_K8S_NAME_MAX];
} obs_body;

static const mpm_field obs_fields[] = {
	{ .name = "engine", .type = MPM_F_ENUM, .offset = offsetof(obs_body, engine), .names = obs_engines },
	{ .name = "engine_version", .type = MPM_F_STRING, .offset = offsetof(obs_body, engine_version),
	  .size = MPM_STR(obs_body, engine_version) },
	{ .name = "key", .type = MPM_F_STRING, .offset = offsetof(obs_body, key), .size = MPM_STR(obs_body, key) },
	{ .name = "observed_at", .type = MPM_F_STRING, .offset = offsetof(obs_body, observed_at),
	  .size = MPM_STR(obs_body, observed_at) },
	{ .name = "node", .type = MPM_F_STRING, .offset = offsetof(obs_body, node), .size = MPM_STR(obs_body, node) },
	{ .name = "pod", .type = MPM_F_ANY },
	{ .name = "plan", .type = MPM_F_ANY },
	{ .name = "log", .type = MPM_F_ANY },
	{ .name = "metrics", .type = MPM_F_ANY },
};

/* "0.11.0", "v0.5.23-cu126", "0.6.3.post1": digits and dots first (a leading 'v' dropped), then anything printable. */
static bool version_ok(const char *v)
{
	if (*v == 'v')
		v++;
	return *v >= '0' && *v <= '9' && plain(v);
}

/* "YYYY-MM-DDTHH:MM:SSZ". */
static bool iso_ok(const char *s)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:ddZ";

	if (strlen(s) != sizeof(shape) - 1)
		return false;
	for (size_t i = 0; shape[i]; i++)
		if (shape[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != shape[i])
			return false;
	return true;
}

mp_status mpc_observation_decode(const cJSON *body, mpc_observation_request *wrap, mp_error *err)
{
	mps_observation_request *out = &wrap->rq;
	obs_body b;
	mp_problems p = MP_PROBLEMS_INIT;
	const cJSON *pod = cJSON_GetObjectItemCaseSensitive(body, "pod");
	const cJSON *plan = cJSON_GetObjectItemCaseSensitive(body, "plan");
	const cJSON *log = cJSON_GetObjectItemCaseSensitive(body, "log");
	const cJSON *metrics = cJSON_GetObjectItemCaseSensitive(body, "metrics");
	const cJSON *text = log ? log : metrics;
	mp_status st;

	memset(wrap, 0, sizeof(*wrap));
	memset(&b, 0, sizeof(b));
	b.engine = -1;
	if (!cJSON_IsObject(body))
		return mp_fail(err, MP_EINVAL, "", "an observation is an object: {\"pod\": ..., \"node\": ..., \"metrics\": "
			       "...} or {\"engine\": ..., \"plan\": ..., \"metrics\" or \"log\": ...}");
	st = mpm_decode_fields(body, "", obs_fields, MPM_COUNT(obs_fields), &b, err);
	mp_problems_note(&p, st, err);
	if (st == MP_ENOMEM)
		return st;
	if ((pod == NULL) == (plan == NULL))
		mp_problems_note(&p, mp_fail(err, MP_EINVAL, pod ? "/plan" : "/pod",
					     "give exactly one of pod (the serving pod's object, as the kubelet lists it, with "
					     "node) and plan (a POST /v1/plan/inference body with its device, with engine)"),
				 err);
	if ((log == NULL) == (metrics == NULL))
		mp_problems_note(&p, mp_fail(err, MP_EINVAL, log ? "/metrics" : "/log",
					     "give exactly one of log (the engine's start-up log) and metrics (its /metrics "
					     "text)"), err);
	else if (!cJSON_IsString(text))
		mp_problems_note(&p, mp_fail(err, MP_EINVAL, log ? "/log" : "/metrics",
					     "%s is a string (the text, as the engine wrote it)", log ? "log" : "metrics"),
				 err);
	if (b.engine_version[0] && !version_ok(b.engine_version))
		mp_problems_note(&p, mp_fail(err, MP_EINVAL, "/engine_version", "engine_version is the release, as "
					     "\"0.11.0\" or \"v0.5.23\""), err);
	if (b.observed_at[0] && !iso_ok(b.observed_at))
		mp_problems_note(&p, mp_fail(err, MP_EINVAL, "/observed_at", "observed_at is ISO 8601 UTC, "
					     "\"2026-12-01T10:00:00Z\""), err);
	if (b.key[0] && !plain(b.key))
		mp_problems_note(&p, mp_fail(err, MP_EINVAL, "/key", "key is printable ASCII, no quotes"), err);
	if (pod && !plan) {
		out->from_pod = true;
		if (!cJSON_IsObject(pod))
			mp_problems_note(&p, mp_fail(err, MP_EINVAL, "/pod", "pod is a Kubernetes Pod object"), err);
		else
			mpc_k8s_read_pod(pod, &out->pod);
		if (b.engine >= 0)
			mp_problems_note(&p, mp_fail(err, MP_EINVAL, "/engine", "with pod the engine is its serving "
						     "container's: leave engine out"), err);
		if (!b.node[0])
			mp_problems_note(&p, mp_fail(err, MP_EINVAL, "/node", "with pod, node names the node it runs on "
						     "(spec.nodeName): its device is that node's"), err);
		else if (!plain(b.node) || strchr(b.node, ' '))
			mp_problems_note(&p, mp_fail(err, MP_EINVAL, "/node", "a node name is a DNS subdomain"), err);
	} else if (plan && !pod) {
		cJSON *named;

		if (b.node[0])
			mp_problems_note(&p, mp_fail(err, MP_EINVAL, "/node", "node goes with pod; a plan names its "
						     "device"), err);
		if (b.engine < 0 && !cJSON_GetObjectItemCaseSensitive(body, "engine"))
			mp_problems_note(&p, mp_fail(err, MP_EINVAL, "/engine", "with plan, engine names the engine that "
						     "ran it: vllm, sglang, trtllm"), err);
		if (!cJSON_IsObject(plan)) {
			mp_problems_note(&p, mp_fail(err, MP_EINVAL, "/plan", "plan is a POST /v1/plan/inference body with "
						     "the device the engine ran on"), err);
		} else if (b.engine >= 0) {
			const cJSON *pe = cJSON_GetObjectItemCaseSensitive(plan, "engine");

			if (pe && !(cJSON_IsString(pe) && strcmp(pe->valuestring, obs_engines[b.engine]) == 0))
				mp_problems_note(&p, mp_fail(err, MP_EINVAL, "/plan/engine", "plan.engine, when given, "
							     "must be the observation's engine (%s)",
							     obs_engines[b.engine]), err);
			named = cJSON_Duplicate(plan, true);
			if (named == NULL || (pe == NULL && !cJSON_AddStringToObject(named, "engine", obs_engines[b.engine]))) {
				cJSON_Delete(named);
				return mp_fail(err, MP_ENOMEM, "", "out of memory");
			}
			st = mpc_inference_decode(named, "/plan", true, &out->check.plan, err);
			cJSON_Delete(named);
			if (st == MP_ENOMEM)
				return st;
			mp_problems_note(&p, st, err);
			if (st == MP_OK && !out->check.plan.device.given)
				mp_problems_note(&p, mp_fail(err, MP_EINVAL, "/plan/device", "the plan names the device the "
							     "engine ran on"), err);
		}
	}
	snprintf(out->node, sizeof(out->node), "%s", b.node);
	snprintf(out->engine_version, sizeof(out->engine_version), "%.31s",
		 b.engine_version + (b.engine_version[0] == 'v'));
	snprintf(out->key, sizeof(out->key), "%s", b.key);
	snprintf(out->observed_at, sizeof(out->observed_at), "%s", b.observed_at);
	if (cJSON_IsString(text)) {
		wrap->metrics = metrics != NULL;
		wrap->text = strdup(text->valuestring);
		if (wrap->text == NULL)
			return mp_fail(err, MP_ENOMEM, "", "out of memory");
	}
	/* the person's form knows its engine now: its text is read here, with every other problem */
	if (!out->from_pod && b.engine >= 0 && wrap->text)
		mp_problems_note(&p, mpc_observation_report(wrap, (mp_engine)(b.engine + 1), err), err);
	return mp_problems_end(&p, err);
}

mp_status mpc_observation_report(mpc_observation_request *rq, mp_engine e, mp_error *err)
{
	return mpc_engine_report_parse(e, rq->text ? rq->text : "", rq->metrics, rq->metrics ? "/metrics" : "/log",
				       &rq->rq.check.report, err);
}

void mpc_observation_request_release(mpc_observation_request *rq)
{
	if (rq == NULL)
		return;
	if (rq->rq.from_pod) {
		/* the plan's model is the pod's (service/mps_observe.c copies the ref): released once, with the pod */
		rq->rq.check.plan.job.model.arch = NULL;
		mpc_model_ref_release(rq->rq.pod.job.training ? &rq->rq.pod.job.u.train.model
							    : &rq->rq.pod.job.u.inference.model);
	}
	mpc_engine_check_request_release(&rq->rq.check);
	free(rq->text);
	rq->text = NULL;
}

void mpc_observation_write(mpc_out *w, const char *key, const mps_observation *o)
{
	mpc_w_obj(w, key);
	mpc_w_i64(w, "id", o->id);
	mpc_w_str(w, "observed_at", o->observed_at);
	mpc_w_str_or_null(w, "key", o->key);
	mpc_w_str(w, "engine", o->engine);
	mpc_w_str_or_null(w, "engine_version", o->engine_version);
	mpc_w_str_or_null(w, "version_line", o->version_line);
	mpc_w_str(w, "device", o->device_id);
	mpc_w_str(w, "model", o->model_id);
	mpc_w_str_or_null(w, "node", o->node);
	mpc_w_str_or_null(w, "namespace", o->namespace_);
	mpc_w_str_or_null(w, "pod", o->pod);
	mpc_w_str(w, "source", o->source);
	if (o->settings_json[0])
		mpc_w_raw(w, "settings", o->settings_json, strlen(o->settings_json));
	else
		mpc_w_null(w, "settings");
	mpc_w_str(w, "figure", o->figure);
	mpc_w_num(w, "reported", o->reported);
	mpc_w_num(w, "predicted", o->predicted);
	mpc_w_num(w, "error_ratio", o->error_ratio);
	if (o->term[0]) {
		mpc_w_obj(w, "term");
		mpc_w_str(w, "name", o->term);
		mpc_w_i64(w, "observed_bytes", o->term_observed_bytes);
		mpc_w_i64(w, "modelled_bytes", o->term_modelled_bytes);
		mpc_w_i64(w, "resolution_bytes", o->term_resolution_bytes);
		mpc_w_end(w);
	} else {
		mpc_w_null(w, "term");
	}
	mpc_w_end(w);
}

void mpc_obs_correction_write(mpc_out *w, const char *key, const mps_obs_correction *c)
{
	mpc_w_obj(w, key);
	mpc_w_str(w, "term", mps_obs_term_name(c->term));
	mpc_w_bool(w, "applies", c->applies);
	mpc_w_i64(w, "median_bytes", c->median_bytes);
	mpc_w_u64(w, "observations", c->observations);
	mpc_w_u64(w, "off_same_side", c->off_same_side);
	mpc_w_str_or_null(w, "why_not", c->why);
	mpc_w_end(w);
}

void mpc_obs_summary_write(mpc_out *w, const char *key, const mps_obs_summary *s)
{
	mpc_w_obj(w, key);
	mpc_w_str(w, "engine", mp_engine_name(s->engine));
	mpc_w_str_or_null(w, "engine_version", s->engine_version);
	mpc_w_str(w, "device", s->device_id);
	mpc_w_str(w, "model", s->model_id);
	mpc_w_str(w, "figure", s->figure);
	mpc_w_u64(w, "observations", s->observations);
	mpc_w_num(w, "median_error_ratio", s->median_error_ratio);
	mpc_w_num(w, "last_error_ratio", s->last_error_ratio);
	mpc_w_end(w);
}

void mpc_observation_settings(const mps_inference_plan *p, char *out, size_t len)
{
	const mp_inference_req *r = &p->job.req;
	const mps_engine_block *b = &p->engine;
	mpc_out w;
	size_t n = 0;
	char *text;

	mpc_out_init(&w);
	mpc_w_obj(&w, NULL);
	mpc_w_str(&w, "model", p->model.id);
	mpc_w_str(&w, "device", p->device.id);
	mpc_w_lit(&w, "engine", mp_engine_name(b->engine));
	mpc_w_lit(&w, "weight_dtype", mp_dtype_name(r->weight_dtype));
	mpc_w_lit(&w, "kv_cache_dtype", mp_dtype_name(r->kv_cache_dtype));
	mpc_w_u64(&w, "batch_size", r->batch_size);
	mpc_w_u64(&w, "sequence_length", r->sequence_length);
	mpc_w_u64(&w, "tensor_parallel_size", p->mem.tensor_parallel_size);
	mpc_w_u64(&w, "num_gpus", r->num_gpus ? r->num_gpus : p->mem.tensor_parallel_size);
	mpc_w_num(&w, "memory_fraction", b->inputs.memory_fraction);
	mpc_w_u64(&w, "kv_block_size", b->inputs.block_size);
	mpc_w_u64(&w, "max_num_batched_tokens", b->inputs.max_num_batched_tokens);
	mpc_w_end(&w);
	text = mpc_out_finish(&w, &n);
	snprintf(out, len, "%s", text && n < len ? text : "");
	free(text);
}
