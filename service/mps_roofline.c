/*
 * mps_roofline.c: POST /v1/roofline and the roofline chart: the device (stored or inline), each operation on its
 * roofline, a measured time against its floor, Little's law when the profile has a latency, and the transformer
 * step analysis (decode, prefill, the batch where decode turns compute-bound).
 */
#include <stdio.h>
#include <string.h>

#include "service_int.h"

/* A transformer field's name as a warning gives it: "/transformer/batch_size", or "?batch_size" in a chart's query. */
static const char *member(const mps_roofline_transformer *t, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", t->pointer, strcmp(t->pointer, "?") == 0 ? "" : "/", name);
	return buf;
}

/*
 * The transformer form: the model resolved, its data types as the inference plan resolves them (mps_inference_defaults,
 * the one resolution both use), the 4096-token defaults stopped at the model's context, then the decode and prefill
 * steps. Each default that changes the answer is a warning; the resolved request is kept in *out for the echo.
 */
static mp_status transformer(mps_service *s, const mps_roofline_transformer *t, const mp_device *dev,
			     mps_roofline_result *out, mp_error *err)
{
	mps_inference_job job = t->job;
	mp_step_req req = t->req;
	mp_weights whole;
	mp_status st = mps_model_resolve(s, &job.model, &out->model, err);
	uint64_t limit;
	char name[48];

	if (st == MP_OK && !out->model.architecture_known)
		st = mp_fail(err, MP_EINVAL, job.model.pointer,
			     "the step analysis needs the architecture: a stored id, {\"hf_config\": {...}} or "
			     "{\"architecture\": {...}}");
	if (st != MP_OK)
		return st;
	/* weight and KV dtypes "auto" (or absent) and the compute dtype, as POST /v1/plan/inference takes them on dev:
	 * an AWQ config is int4 from its quantization_config, an fp16 one keeps its KV cache in fp16 */
	mps_inference_defaults(&out->model.arch, dev, &job, &out->choice, &out->warnings);
	req.weight_dtype = job.req.weight_dtype;
	req.kv_cache_dtype = job.req.kv_cache_dtype;
	out->compute_dtype = job.opts.compute_dtype;
	out->int4_scheme = job.opts.formats.int4_scheme;
	mps_warn_model(&out->model, &out->warnings);
	mps_warn_compressed_kv(&out->model.arch, false, &out->warnings);
	/* the 4096-token defaults stop at the model's context (gpt2 has 1024 positions) */
	out->batch_size_from = t->batch_given ? "request" : "default";
	out->context_tokens_from = t->context_given ? "request" : "default";
	out->prompt_tokens_from = t->prompt_given ? "request" : "default";
	out->activation_dtype_from = t->activation_given ? "request" : "default";
	out->tensor_parallel_size_from = t->tp_given ? "request" : "default";
	/* per GPU of tensor_parallel_size, as the plan's performance block: a degree the model cannot split by is the
	 * plan's own 422 */
	if (t->tp_given && req.tensor_parallel_size > 1) {
		st = mp_check_tp_degree(&out->model.arch, req.tensor_parallel_size, t->pointer, err);
		if (st != MP_OK)
			return st;
	}
	limit = mp_model_context_limit(&out->model.arch);
	if (limit > 0 && !t->context_given && req.context_tokens >= limit) {
		req.context_tokens = limit - 1;
		out->context_tokens_from = "model_context";
	}
	if (limit > 0 && !t->prompt_given && req.prompt_tokens > limit) {
		req.prompt_tokens = limit;
		out->prompt_tokens_from = "model_context";
	}
	if (!t->batch_given)
		mps_warn(&out->warnings,
			 "%s was not given: the steps are for batch %llu (one sequence); give batch_size, the sequences "
			 "decoded together, for the batch you serve",
			 member(t, "batch_size", name, sizeof(name)), (unsigned long long)req.batch_size);
	/* the context changes the answer only through the KV reads of attention layers (a Mamba model has none) */
	if (!t->context_given && mp_model_attention_layers(&out->model.arch) > 0) {
		char why[96] = "the default";

		if (strcmp(out->context_tokens_from, "model_context") == 0)
			snprintf(why, sizeof(why), "the 4096-token default, stopped below the model's context of %llu",
				 (unsigned long long)limit);
		mps_warn(&out->warnings,
			 "%s was not given: the decode step reads each sequence's KV cache of %llu tokens (%s); give "
			 "context_tokens, the tokens already in the cache",
			 member(t, "context_tokens", name, sizeof(name)), (unsigned long long)req.context_tokens, why);
	}
	if (!t->prompt_given) {
		char why[96] = "the default";

		if (strcmp(out->prompt_tokens_from, "model_context") == 0)
			snprintf(why, sizeof(why), "the 4096-token default, stopped at the model's context of %llu",
				 (unsigned long long)limit);
		mps_warn(&out->warnings,
			 "%s was not given: the prefill is of %llu tokens per sequence (%s); give prompt_tokens, the "
			 "prompt length",
			 member(t, "prompt_tokens", name, sizeof(name)), (unsigned long long)req.prompt_tokens, why);
	}
	req.json_pointer = t->pointer;
	/* the matrices as the inference plan stores them (mps_step_weights: the plan's own rule); `whole` lives until
	 * both analyses are done (req.weights points into it) */
	st = mps_step_weights(&out->model.arch, req.weight_dtype, &job.opts, NULL, 1, t->pointer, &whole, &req.weights,
			      err);
	if (st != MP_OK)
		return st;
	st = mp_step_analyze(&out->model.arch, dev, MP_PHASE_DECODE, &req, &out->decode, err);
	if (st == MP_OK)
		st = mp_step_analyze(&out->model.arch, dev, MP_PHASE_PREFILL, &req, &out->prefill, err);
	if (st == MP_OK) /* from the decode step just analysed (mp_roofline.h) */
		mp_step_crossing_batch(&out->decode, &out->decode_compute_bound_batch);
	req.json_pointer = NULL;
	req.weights = NULL; /* borrowed for the analyses only */
	out->step = req;
	out->have_transformer = st == MP_OK;
	return st;
}

/* Whether a roof's peak came from another dtype in a way the answer must say: a matrix peak of another dtype, or
 * vector work at a matrix peak. Vector work at the CUDA-core fp32 rate is the model itself (mp_device_peak:
 * frameworks do 16-bit elementwise math in fp32 registers). */
static bool assumed_peak(const mp_roof *r)
{
	return r->peak_fallback && !(r->unit == MP_UNIT_VECTOR && r->peak_dtype == MP_DTYPE_FP32);
}

/* One warning per (dtype asked, unit, peak used) among the operations, naming each operation that took it. */
static void warn_fallbacks(const mps_roofline_request *rq, const mps_roofline_result *out, const char *device,
			   mps_warnings *w)
{
	bool done[MPS_ROOFLINE_MAX_OPS] = { false };

	for (size_t i = 0; i < out->nops; i++) {
		const mp_roof *r = &out->ops[i].roof;
		mp_dtype asked;
		char ops[400] = "";

		if (done[i] || !assumed_peak(r))
			continue;
		asked = r->compute_dtype;
		for (size_t j = i; j < out->nops; j++) {
			const mp_roof *o = &out->ops[j].roof;

			if (done[j] || !assumed_peak(o) || o->unit != r->unit || o->peak_dtype != r->peak_dtype ||
			    o->compute_dtype != asked)
				continue;
			done[j] = true;
			mp_list_add(ops, sizeof(ops), rq->ops[j].pointer);
		}
		if (r->unit == MP_UNIT_VECTOR) /* a profile with matrix peaks only: vector work at a tensor-core rate */
			mps_warn(w,
				 "%s: the device (%s) has no vector (CUDA-core) rate for %s work, nor an fp32 one; the %s "
				 "matrix peak (%.4g TFLOP/s) is used, so the floor assumes vector work at the tensor-core "
				 "rate; add vector_flops_per_second or an fp32 peak to the profile",
				 ops, device, mp_dtype_name(asked), mp_dtype_name(r->peak_dtype),
				 r->peak_flops_per_second / 1e12);
		else
			mps_warn(w,
				 "%s: the device (%s) has no dense %s matrix peak; the %s peak (%.4g TFLOP/s) is used, so "
				 "the floor assumes %s work runs as fast as %s there; add a %s peak to the profile if the "
				 "device has one",
				 ops, device, mp_dtype_name(asked), mp_dtype_name(r->peak_dtype),
				 r->peak_flops_per_second / 1e12, mp_dtype_name(asked), mp_dtype_name(r->peak_dtype),
				 mp_dtype_name(asked));
	}
}

/* Whether the comma-separated list (mp_list_add's) holds item as a whole entry. */
static bool list_has(const char *list, const char *item)
{
	size_t n = strlen(item);

	for (const char *p = list; (p = strstr(p, item)) != NULL; p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ','))
			return true;
	return false;
}

/* The same for the transformer's steps: one warning per (dtype asked, peak used), naming the step operations that
 * took it in either phase (the same layers in both: "qkv, o_proj, ..."). */
static void warn_step_fallbacks(const mps_roofline_result *out, const char *device, mps_warnings *w)
{
	struct {
		mp_dtype asked, used;
		double peak;
	} seen[8];
	size_t nseen = 0;

	for (int ph = 0; ph < 2; ph++) {
		const mp_step *s = ph ? &out->prefill : &out->decode;

		for (size_t i = 0; i < s->nops; i++) {
			const mp_roof *r = &s->ops[i].roof;
			size_t k;

			if (!assumed_peak(r))
				continue;
			for (k = 0; k < nseen; k++)
				if (seen[k].asked == r->compute_dtype && seen[k].used == r->peak_dtype)
					break;
			if (k == nseen && nseen < sizeof(seen) / sizeof(seen[0])) {
				seen[nseen].asked = r->compute_dtype;
				seen[nseen].used = r->peak_dtype;
				seen[nseen++].peak = r->peak_flops_per_second;
			}
		}
	}
	for (size_t k = 0; k < nseen; k++) {
		char ops[400] = "";

		for (int ph = 0; ph < 2; ph++) {
			const mp_step *s = ph ? &out->prefill : &out->decode;

			for (size_t i = 0; i < s->nops; i++) {
				const mp_roof *r = &s->ops[i].roof;

				if (assumed_peak(r) && r->compute_dtype == seen[k].asked && r->peak_dtype == seen[k].used &&
				    !list_has(ops, s->ops[i].name))
					mp_list_add(ops, sizeof(ops), s->ops[i].name);
			}
		}
		mps_warn(w,
			 "transformer decode and prefill (%s): the device (%s) has no dense %s peak; the %s peak (%.4g "
			 "TFLOP/s) is used, so the steps assume %s work runs as fast as %s there",
			 ops, device, mp_dtype_name(seen[k].asked), mp_dtype_name(seen[k].used), seen[k].peak / 1e12,
			 mp_dtype_name(seen[k].asked), mp_dtype_name(seen[k].used));
	}
}

mp_status mps_roofline(mps_service *s, const mps_roofline_request *rq, mps_roofline_result *out, mp_error *err)
{
	const mp_device *hw;
	mp_dtype used, vused;
	mp_status st;

	memset(out, 0, sizeof(*out));
	st = mps_device_resolve(s, &rq->device, &out->device, err);
	if (st != MP_OK)
		return st;
	hw = &out->device.hw;
	if (!(hw->memory_bandwidth_bytes_per_second > 0))
		return mp_fail(err, MP_EINVAL, rq->device.pointer, "the device has no memory bandwidth");
	out->ridge_dtype = rq->ridge_dtype;
	if (rq->ridge_dtype_given && !(hw->peak_flops_per_second[rq->ridge_dtype] > 0)) {
		/* an explicit ridge dtype the device has no dense peak for: no silent fallback to another roof */
		uint32_t have = 0;
		char list[256];

		for (int t = 0; t < MP_DTYPE_COUNT; t++)
			if (hw->peak_flops_per_second[t] > 0)
				have |= 1u << t;
		mp_dtype_list(have, list, sizeof(list));
		return mp_fail(err, MP_EINVAL, rq->ridge_pointer,
			       "the device has no dense %s peak; ridge_dtype must be one it has: %s",
			       mp_dtype_name(rq->ridge_dtype), have ? list : "(none)");
	}
	out->peak_flops_per_second = mp_device_peak(hw, rq->ridge_dtype, MP_UNIT_MATRIX, &used, NULL);
	out->peak_dtype = used;
	/* no ridge_dtype given and the device has no bf16 peak (a V100: fp16 only): the ridge is the roof it has,
	 * and is labelled with it */
	if (!rq->ridge_dtype_given && used != MP_DTYPE_INVALID && hw->peak_flops_per_second[used] > 0)
		out->ridge_dtype = used;
	out->vector_flops_per_second = mp_device_peak(hw, MP_DTYPE_FP32, MP_UNIT_VECTOR, &vused, NULL);
	out->ridge_flops_per_byte = mp_device_ridge(hw, out->ridge_dtype);
	if (hw->memory_latency_seconds > 0)
		out->have_littles_law = mp_little(hw->memory_bandwidth_bytes_per_second, hw->memory_latency_seconds,
						  hw->sm_count, &out->littles_law, NULL) == MP_OK;
	for (size_t i = 0; i < rq->nops; i++) {
		mp_op op = rq->ops[i].op;
		mps_roofline_op_result *r = &out->ops[i];

		op.json_pointer = rq->ops[i].pointer; /* the planner names the op's fields under it */
		st = mp_roofline(hw, &op, &r->roof, err);
		if (st != MP_OK)
			return st;
		if (rq->ops[i].measured_seconds > 0) {
			r->measured = true;
			mp_check_measurement(&r->roof, rq->ops[i].measured_seconds, &r->check);
		}
		out->nops++;
	}
	warn_fallbacks(rq, out, out->device.id[0] ? out->device.id : "the inline profile", &out->warnings);
	if (rq->transformer.given) {
		st = transformer(s, &rq->transformer, hw, out, err);
		if (st == MP_OK)
			warn_step_fallbacks(out, out->device.id[0] ? out->device.id : "the inline profile",
					    &out->warnings);
	}
	return st;
}
