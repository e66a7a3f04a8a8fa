/*
 * plan.c: the inference and training plans. Resolves the model and the device, runs the memory planner, and
 * with a device the fit and (inference) the performance block: the roofline floors of one decode step and of the
 * prefill, from the same step analysis as POST /v1/roofline. Fills result structs; encodes nothing.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "service.h"

/* The performance block on dev: decode at the last token of sequence_length, prefill of sequence_length tokens,
 * and the batch where decode turns compute-bound. Per GPU with tensor parallelism (all-reduces not modelled). */
static mp_status performance(const mps_model *m, const mp_inference_req *req, const mp_device *dev, uint64_t tp,
			     mps_performance *out, mp_error *err)
{
	mp_step_req sr;
	mp_status st;

	memset(&sr, 0, sizeof(sr));
	sr.weight_dtype = req->weight_dtype;
	sr.kv_cache_dtype = req->kv_cache_dtype;
	sr.batch_size = req->batch_size;
	sr.context_tokens = req->sequence_length > 0 ? req->sequence_length - 1 : 0;
	sr.prompt_tokens = req->sequence_length;
	sr.allow_beyond_max_position = true; /* the plan has already applied the context rule and its override */
	sr.tensor_parallel_size = tp;
	sr.json_pointer = req->json_pointer;
	out->tensor_parallel_size = tp;
	st = mp_step_analyze(&m->arch, dev, MP_PHASE_DECODE, &sr, &out->decode, err);
	if (st == MP_OK)
		st = mp_step_analyze(&m->arch, dev, MP_PHASE_PREFILL, &sr, &out->prefill, err);
	if (st == MP_OK) /* from the decode step just analysed: no further analyses (mp_roofline.h) */
		mp_step_crossing_batch(&out->decode, &out->compute_bound_batch);
	return st;
}

mp_status mps_plan_inference(mps_service *s, const mps_inference_request *rq, mps_inference_plan *out, mp_error *err)
{
	mp_inference_req req = rq->job.req;
	mp_status st;
	uint64_t gen = mp_store_generation(mps_store(s)); /* once: the model and the device read at the same state */

	/* every member cleared but the device profile and the two steps (36 KB), each filled before it is read:
	 * the device when have_device, the steps by their analysis */
	memset(out, 0, offsetof(mps_inference_plan, device));
	memset(&out->fit, 0, offsetof(mps_inference_plan, perf) - offsetof(mps_inference_plan, fit));
	out->perf.compute_bound_batch = 0;
	out->perf.tensor_parallel_size = 0;
	out->perf.decode.nops = out->perf.prefill.nops = 0;
	req.json_pointer = rq->job.pointer;
	st = mps_model_resolve_at(s, &rq->job.model, gen, &out->model, err);
	if (st == MP_OK && !out->model.architecture_known)
		st = mp_fail(
			err, MP_EINVAL, rq->job.model.pointer,
			"the KV cache needs the architecture, not a bare parameter count: give the model as a stored id, "
			"{\"hf_config\": {...}} or {\"architecture\": {...}} with at least hidden_size, num_hidden_layers, "
			"num_attention_heads, vocab_size and intermediate_size (num_key_value_heads and head_dim when they "
			"differ from the defaults)");
	if (st == MP_OK && rq->device.given) {
		st = mps_device_resolve_at(s, &rq->device, gen, &out->device, err);
		out->have_device = st == MP_OK;
	}
	if (st == MP_OK)
		st = mp_plan_inference_ex(&out->model.arch, &out->model.params, &req, &rq->job.opts,
					  out->have_device ? &out->device.hw : NULL, &out->mem, &out->fit, err);
	if (st != MP_OK)
		return st;
	out->ntp = mp_valid_tp_degrees(&out->model.arch, out->tp_degrees, MP_MAX_TP_DEGREES);
	if (out->ntp > MP_MAX_TP_DEGREES)
		out->ntp = MP_MAX_TP_DEGREES;
	if (out->have_device)
		st = performance(&out->model, &req, &out->device.hw, out->mem.tensor_parallel_size, &out->perf, err);
	return st;
}

mp_status mps_plan_training(mps_service *s, const mps_training_request *rq, mps_training_plan *out, mp_error *err)
{
	mp_training_req req = rq->job.req;
	const mp_model *arch;
	mp_status st;

	memset(out, 0, sizeof(*out));
	req.json_pointer = rq->job.pointer;
	st = mps_model_resolve(s, &rq->job.model, &out->model, err);
	if (st == MP_OK && rq->device.given) {
		st = mps_device_resolve(s, &rq->device, &out->device, err);
		out->have_device = st == MP_OK;
	}
	if (st != MP_OK)
		return st;
	if (out->have_device && req.cuda_context_bytes == 0 && out->device.hw.cuda_context_bytes)
		req.cuda_context_bytes = out->device.hw.cuda_context_bytes;
	arch = out->model.architecture_known ? &out->model.arch : NULL;
	st = mp_plan_training_fit(arch, &out->model.params, &req, out->have_device ? &out->device.hw : NULL, &out->mem,
				  &out->fit, err);
	if (st != MP_OK || arch == NULL)
		return st;
	/* the published formulas for the same shape (case BR-13), whole model, 16-bit, no parallelism */
	for (int f = 0; f < MP_FORMULA_COUNT; f++) {
		mp_error e;

		out->formula_known[f] = mp_activation_formula_bytes(arch, req.micro_batch_size, req.sequence_length,
								    (mp_activation_formula)f, &out->formula_bytes[f],
								    &e) == MP_OK;
	}
	return MP_OK;
}
