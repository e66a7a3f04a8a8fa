/*
 * mps_observe.c: observations of running engines and the terms plans take from them (mps_observe.h). The engines'
 * arithmetic run backwards (planner/mp_engine.h says it forwards), on the release line the observation names:
 *   vLLM V1: num_gpu_blocks = available // page // group_layers with available = requested - (weights + the
 *     profile's peak + the rest of the budget: memory outside PyTorch, CUDA graphs from 0.21 on), requested =
 *     int(total x util) (ceil from 0.21 on), so a reported count B puts available in [B, B + 1) x page x
 *     group_layers, and the budget beyond the weights and the profile's peak at
 *       non_torch = requested - (B + 1/2) x page x group_layers - weights - peak,
 *     within half a block of every layer either way (the resolution is one block of every layer);
 *   SGLang: max_total_num_tokens = rest // cell rounded down to the page, rest = f x (total - context) - weights,
 *     so a reported count T puts the memory taken before the weights (the CUDA context, NCCL) at
 *       context = total - ((T + page / 2) x cell + weights) / f,
 *     within page x cell / (2 f) either way.
 * Applied, the median stands for every modelled term it covers (mp_engine_inputs.observed).
 * Worked example (tests/test_fleet.c): Llama-3.1-8B bf16 on an H100 SXM5 at utilisation 0.9 on vLLM 0.11 predicts
 * 28,277 blocks of 16 tokens (2 MiB a block over 32 layers at 64 KiB each; 160 MiB outside PyTorch modelled); a pod
 * reporting 27,701 blocks implies 1,375,258,214 bytes beyond the weights and the activation peak.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mps_observe.h"
#include "service_int.h"

#define GIB 1073741824.0

void mps_version_line(const char *version, char *out, size_t len)
{
	const char *p = version ? version : "";
	size_t dots = 0, n = 0;

	if (*p == 'v')
		p++;
	out[0] = '\0';
	if (!(*p >= '0' && *p <= '9'))
		return;
	for (; p[n] && ((p[n] >= '0' && p[n] <= '9') || p[n] == '.'); n++) {
		if (p[n] == '.' && ++dots == 2)
			break;
	}
	if (dots == 0 || n >= len || p[n - 1] == '.')
		return;
	memcpy(out, p, n);
	out[n] = '\0';
}

void mps_image_version(const char *image, char *out, size_t len)
{
	const char *at = image ? strrchr(image, ':') : NULL;
	const char *slash = image ? strrchr(image, '/') : NULL;
	size_t n = 0;

	out[0] = '\0';
	if (at == NULL || (slash && slash > at)) /* "host:5000/vllm" is a registry port, not a tag */
		return;
	at++;
	if (*at == 'v')
		at++;
	if (!(*at >= '0' && *at <= '9'))
		return;
	while (at[n] && at[n] != '@' && n + 1 < len)
		n++;
	memcpy(out, at, n);
	out[n] = '\0';
}

const char *mps_engine_plan_line(const mp_engine_version *v)
{
	return v ? v->name : "";
}

mps_obs_term mps_engine_term(mp_engine e)
{
	return e == MP_ENGINE_VLLM ? MPS_OBS_NON_TORCH : e == MP_ENGINE_SGLANG ? MPS_OBS_CONTEXT : MPS_OBS_TERM_COUNT;
}

/* ----- the rule ---------------------------------------------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median of n values (the lower middle one of an even count: a value some observation had). */
static int64_t median_i64(int64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_i64);
	return v[(n - 1) / 2];
}

void mps_obs_correct(const mp_store_term_sample *samples, size_t n, mps_obs_correction *out)
{
	int64_t obs[MPS_OBS_WINDOW], dev[MPS_OBS_WINDOW], side;
	size_t k = n < MPS_OBS_WINDOW ? n : MPS_OBS_WINDOW, need;

	out->applies = false;
	out->observations = k;
	out->off_same_side = 0;
	out->median_bytes = 0;
	out->why[0] = '\0';
	if (k == 0) {
		snprintf(out->why, sizeof(out->why), "no observations");
		return;
	}
	for (size_t i = 0; i < k; i++) {
		obs[i] = samples[i].observed_bytes;
		dev[i] = samples[i].observed_bytes - samples[i].modelled_bytes;
	}
	out->median_bytes = median_i64(obs, k);
	side = median_i64(dev, k);
	for (size_t i = 0; i < k; i++) {
		int64_t d = samples[i].observed_bytes - samples[i].modelled_bytes;

		if ((side > 0 && d > samples[i].resolution_bytes) || (side < 0 && -d > samples[i].resolution_bytes))
			out->off_same_side++;
	}
	need = (size_t)ceil(MPS_OBS_AGREE * (double)k);
	if (k < MPS_OBS_MIN)
		snprintf(out->why, sizeof(out->why), "%zu of the %d observations needed", k, MPS_OBS_MIN);
	else if (out->off_same_side < need)
		snprintf(out->why, sizeof(out->why),
			 "%llu of %zu observations lie beyond their resolution on one side of the model (%zu needed): the "
			 "model is not consistently off", (unsigned long long)out->off_same_side, k, need);
	else
		out->applies = true;
}

mp_status mps_observation_correction(mps_service *s, mp_engine e, const char *version_line, const char *device_id,
				     mps_obs_term term, mps_obs_correction *out, mp_error *err)
{
	mp_store_term_sample *samples = malloc(MPS_OBS_WINDOW * sizeof(*samples));
	size_t n = 0;
	mp_status st;

	memset(out, 0, sizeof(*out));
	out->term = term;
	if (samples == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	st = mp_store_term_samples(mps_store(s), mp_engine_name(e), version_line, device_id, mps_obs_term_name(term),
				   samples, MPS_OBS_WINDOW, &n, err);
	if (st == MP_OK)
		mps_obs_correct(samples, n, out);
	free(samples);
	return st;
}

/* ----- plans ------------------------------------------------------------------------------------------------ */

/* What the model has for term t of block b: vLLM, the terms inside the budget but the profile's peak (memory
 * outside PyTorch, CUDA graphs, NCCL and the context where the release counts them there); SGLang, the terms outside
 * it (the CUDA context, NCCL). Without terms (no release row), the inputs' own. */
static int64_t modelled_term(const mps_engine_block *b, mps_obs_term t)
{
	const mp_engine_prediction *p = &b->predicted;
	uint64_t sum = 0;

	if (b->inputs.version == NULL)
		return t == MPS_OBS_NON_TORCH ? (int64_t)b->inputs.non_torch_bytes : (int64_t)b->inputs.context_bytes;
	for (size_t i = 0; i < p->nterms; i++) {
		const mp_engine_term *x = &p->terms[i];

		if (t == MPS_OBS_NON_TORCH ? x->in_budget && strcmp(x->name, "profile_activation") != 0 &&
						     strcmp(x->name, "sampler") != 0
					   : !x->in_budget)
			sum += x->bytes;
	}
	return (int64_t)sum;
}

mp_status mps_observed_apply(mps_service *s, mps_inference_plan *p, mp_error *err)
{
	mps_engine_block *b = &p->engine;
	mp_engine e = b->engine;
	mps_obs_term t = mps_engine_term(e);
	mps_observed_term *o;
	mps_obs_correction c;
	mp_engine_inputs in;
	mp_status st;

	if (!p->have_engine || !b->have_prediction || !p->have_device || t == MPS_OBS_TERM_COUNT)
		return MP_OK;
	o = &b->observed[t];
	memset(o, 0, sizeof(*o));
	o->modelled_bytes = modelled_term(b, t);
	if (!mps_observed_terms_on(s) || p->job.engine.observed_terms_off || !p->device.id[0])
		return MP_OK;
	snprintf(b->observed_version_line, sizeof(b->observed_version_line), "%s", mps_engine_plan_line(b->version));
	st = mps_observation_correction(s, e, b->observed_version_line, p->device.id, t, &c, err);
	if (st != MP_OK || !c.applies)
		return st;
	in = b->inputs;
	in.observed = true;
	in.observed_bytes = c.median_bytes > 0 ? (uint64_t)c.median_bytes : 0;
	st = mp_engine_predict(&in, &b->predicted, err);
	if (st != MP_OK)
		return st;
	b->inputs = in;
	o->observed = true;
	o->observations = c.observations;
	o->observed_bytes = c.median_bytes;
	mps_warn(&p->warnings,
		 "observed: %s is %.3f GiB, the median of %llu observations of %s%s%s on %s (memplan's model: %.3f GiB); "
		 "\"observed_terms\": false gives the model's",
		 mps_obs_term_name(t), (double)c.median_bytes / GIB, (unsigned long long)c.observations, mp_engine_name(e),
		 b->observed_version_line[0] ? " " : "", b->observed_version_line, p->device.id,
		 (double)o->modelled_bytes / GIB);
	return MP_OK;
}

mp_status mps_observation_store(mps_service *s, mps_observation *o, bool *existed, mp_error *err)
{
	if (!o->observed_at[0]) {
		time_t t = time(NULL);
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(o->observed_at, sizeof(o->observed_at), "%Y-%m-%dT%H:%M:%SZ", &tm);
	}
	if (!mps_writable(s, NULL, 0))
		return mp_fail(err, MP_ESTORAGE, "", "the database cannot keep a write now (GET /v1/health says why)");
	return mp_store_observation_add(mps_store(s), o, &o->id, existed, err);
}

mp_status mps_observation_page(mps_service *s, const mp_store_observation_filter *f, int64_t before,
			       mps_observation *rows, size_t cap, size_t *n, bool *more, mp_error *err)
{
	return mp_store_observation_page(mps_store(s), f, before, rows, cap, n, more, err);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

mp_status mps_observation_summaries(mps_service *s, mps_obs_summary *rows, size_t cap, size_t *n, mp_error *err)
{
	mp_store_observation_group *g = malloc((cap ? cap : 1) * sizeof(*g));
	double ratios[MPS_OBS_WINDOW];
	size_t ng = 0, k;
	mp_status st;

	*n = 0;
	if (g == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	st = mp_store_observation_groups(mps_store(s), g, cap, &ng, err);
	for (size_t i = 0; i < ng && st == MP_OK; i++) {
		mps_obs_summary *r = &rows[*n];

		st = mp_store_observation_errors(mps_store(s), &g[i], ratios, MPS_OBS_WINDOW, &k, err);
		if (st != MP_OK || k == 0)
			continue;
		memset(r, 0, sizeof(*r));
		r->engine = mp_engine_from_name(g[i].engine);
		snprintf(r->engine_version, sizeof(r->engine_version), "%s", g[i].engine_version);
		snprintf(r->device_id, sizeof(r->device_id), "%s", g[i].device_id);
		snprintf(r->model_id, sizeof(r->model_id), "%s", g[i].model_id);
		snprintf(r->figure, sizeof(r->figure), "%s", g[i].figure);
		r->observations = g[i].count;
		r->last_error_ratio = ratios[0];
		qsort(ratios, k, sizeof(ratios[0]), cmp_double);
		r->median_error_ratio = k % 2 ? ratios[k / 2] : (ratios[k / 2 - 1] + ratios[k / 2]) / 2;
		(*n)++;
	}
	free(g);
	return st;
}
