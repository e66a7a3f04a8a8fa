/*
 * mps_plan.c: the inference and training plans. Resolves the model and the device, runs the memory planner, and
 * with a device the fit and (inference) the performance block: the roofline floors of one decode step and of the
 * prefill, from the same step analysis as POST /v1/roofline, and the engine block (mps_engine.c). What the request
 * leaves out is taken as the engine it names (vLLM when none) would take it on the device. Fills result structs;
 * encodes nothing.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mps_observe.h"
#include "service_int.h"

/* The performance block on dev: decode at the last token of sequence_length, prefill of sequence_length tokens,
 * and the batch where decode turns compute-bound. Per GPU with tensor parallelism (all-reduces not modelled). */
static mp_status performance(const mps_model *m, const mp_inference_req *req, const mp_inference_opts *o,
			     const mp_inference_memory *mem, const mp_device *dev, uint64_t tp, mps_performance *out,
			     mp_error *err)
{
	mp_step_req sr;
	mp_weights whole;
	const mp_weights *classes = NULL;
	mp_status st;

	memset(&sr, 0, sizeof(sr));
	/* the matrices as the memory above stores them (an AWQ model's fp16 lm_head, its group scales) */
	st = mps_step_weights(&m->arch, req->weight_dtype, o, &mem->weights, tp, req->json_pointer, &whole, &classes,
			      err);
	if (st != MP_OK)
		return st;
	sr.weights = classes;
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

/* A model read from a checkpoint: at tensor-parallel degree 1 with the checkpoint's own format, the weights are the
 * file's tensors to the byte (per class as the name table files them); otherwise the inventory's, with a warning
 * when the two differ. A file whose tensors differ from the inventory is named tensor by tensor. */
static mp_status checkpoint_weights(mps_inference_plan *out, const mp_inference_req *req, mp_error *err)
{
	const mpm_checkpoint *c = out->model.ckpt;
	uint64_t tp = out->opts.tensor_parallel_size ? out->opts.tensor_parallel_size : req->num_gpus ? req->num_gpus : 1;
	mp_weight_formats f = out->opts.formats;
	mp_weights computed;
	char why[1024];
	mp_status st;

	f.json_pointer = req->json_pointer;
	st = mp_weight_bytes(&out->model.arch, req->weight_dtype, out->opts.compute_dtype, &f, 1, &computed, err);
	if (st != MP_OK)
		return st;
	out->inventory_weights_bytes = computed.total_bytes;
	if (!c->match.ok) {
		mpm_match_describe(&c->match, why, sizeof(why));
		mps_warn(&out->warnings,
			 "checkpoint: the file's tensors differ from the %s inventory memplan builds: %s",
			 out->model.arch.model_type, why);
	}
	if (strcmp(out->choice.weight_dtype_from ? out->choice.weight_dtype_from : "", "checkpoint") != 0)
		return MP_OK; /* another format asked for: the inventory in it */
	if (tp == 1) {
		mpm_checkpoint_weights(c, &computed, &out->checkpoint_weights);
		out->weights_from_checkpoint = true;
		out->opts.weights = &out->checkpoint_weights;
		if (computed.total_bytes != c->tensor_bytes || !c->weight_dtype_exact)
			mps_warn(&out->warnings,
				 "weights: weights_bytes is the checkpoint's %llu tensors, %llu bytes; the inventory in %s%s "
				 "gives %llu bytes, so the classes' formats are the nearest the planner names and their bytes "
				 "the file's",
				 (unsigned long long)c->tensors, (unsigned long long)c->tensor_bytes,
				 mp_dtype_name(req->weight_dtype), c->weight_dtype_exact ? "" : " (the nearest format)",
				 (unsigned long long)computed.total_bytes);
	} else if (computed.total_bytes != c->tensor_bytes) {
		mps_warn(&out->warnings,
			 "weights: at tensor_parallel_size %llu each GPU's weights are the inventory's in %s (%llu bytes "
			 "at one GPU; the checkpoint's tensors are %llu bytes)",
			 (unsigned long long)tp, mp_dtype_name(req->weight_dtype),
			 (unsigned long long)computed.total_bytes, (unsigned long long)c->tensor_bytes);
	}
	return MP_OK;
}

mp_status mps_plan_inference_on(const mps_model *m, const mp_store_device *dev, const mps_inference_job *job,
				mps_inference_plan *out, mp_error *err)
{
	mp_inference_req req;
	mp_status st;

	/* every member but the model, the job and the device (copied in below) and perf's two steps (filled by their
	 * analysis before they are read) is cleared: the 36 KB of the steps are not cleared per plan or capacity row */
	memset(&out->choice, 0, offsetof(mps_inference_plan, device) - offsetof(mps_inference_plan, choice));
	memset(&out->fit, 0, offsetof(mps_inference_plan, perf) - offsetof(mps_inference_plan, fit));
	out->perf.compute_bound_batch = 0;
	out->perf.tensor_parallel_size = 0;
	out->perf.decode.nops = out->perf.prefill.nops = 0;
	/* the engine block (8 KB) is cleared where an engine is named (mps_engine_block_for); without one only its
	 * engine member is set, and every reader asks have_engine first */
	memset(&out->opts, 0, offsetof(mps_inference_plan, engine) - offsetof(mps_inference_plan, opts));
	out->engine.engine = MP_ENGINE_NONE;
	memset(&out->tensors, 0, sizeof(*out) - offsetof(mps_inference_plan, tensors));
	/* out->model may already be m (the plan endpoint resolves into it) */
	mps_model_copy(&out->model, m);
	out->job = *job;
	out->have_device = dev != NULL;
	if (dev && &out->device != dev)
		out->device = *dev;
	/* the data types the request left to "auto" (vLLM's rule), then what it left to its engine (vLLM when none
	 * is named) on this device: the prefill chunk, the KV block, the utilisation */
	if (out->model.ckpt && out->job.weight_dtype_auto && out->model.ckpt->weight_dtype != MP_DTYPE_INVALID) {
		/* the checkpoint's own format: its matrices as the file stores them */
		const mpm_checkpoint *c = out->model.ckpt;

		out->job.req.weight_dtype = c->weight_dtype;
		out->job.weight_dtype_auto = false;
		if (c->weight_dtype == MP_DTYPE_INT4) {
			out->job.opts.formats.int4_scheme = c->int4_scheme;
			if (c->int4_group_size && !out->job.int4_group_size_given)
				out->job.opts.formats.int4_group_size = c->int4_group_size;
		}
		/* llama.cpp computes a GGUF's activations in f32 and keeps its KV cache in f16 by default: the plan's
		 * compute (and "auto" KV) dtype is fp16 */
		bool gguf_compute = c->format == MPM_CKPT_GGUF && !out->job.compute_dtype_given;

		if (gguf_compute) {
			out->job.opts.compute_dtype = MP_DTYPE_FP16;
			out->job.compute_dtype_given = true;
		}
		mps_inference_defaults(&out->model.arch, dev ? &dev->hw : NULL, &out->job, &out->choice,
				       &out->warnings);
		out->choice.weight_dtype_from = "checkpoint";
		if (gguf_compute)
			out->choice.compute_dtype_from = "checkpoint";
	} else {
		mps_inference_defaults(&out->model.arch, dev ? &dev->hw : NULL, &out->job, &out->choice,
				       &out->warnings);
	}
	req = out->job.req;
	req.json_pointer = out->job.pointer;
	st = mps_inference_opts_for(&out->job, dev, &out->opts, &out->prefill, err);
	out->budget_from = mps_budget_from(&out->job);
	if (st == MP_OK && out->model.ckpt)
		st = checkpoint_weights(out, &req, err);
	if (st == MP_OK)
		st = mp_plan_inference_ex(&out->model.arch, &out->model.params, &req, &out->opts, dev ? &dev->hw : NULL,
					  &out->mem, &out->fit, err);
	if (st != MP_OK)
		return st;
	out->ntp = mp_valid_tp_degrees(&out->model.arch, out->tp_degrees, MP_MAX_TP_DEGREES);
	if (out->ntp > MP_MAX_TP_DEGREES)
		out->ntp = MP_MAX_TP_DEGREES;
	if (!out->job.prefill_warned_by_answer)
		mps_warn_prefill(out, &out->warnings);
	if (out->opts.tensor_parallel_size == 0 && req.num_gpus > 1)
		mps_warn(&out->warnings,
			 "tensor_parallel_size was not given, so the %llu GPUs of num_gpus hold one replica split by "
			 "tensor parallelism (tensor_parallel_size %llu); give tensor_parallel_size to plan data-parallel "
			 "replicas instead (num_gpus a multiple of it)",
			 (unsigned long long)req.num_gpus, (unsigned long long)out->mem.tensor_parallel_size);
	mps_warn_model(&out->model, &out->warnings);
	if (out->model.architecture_known)
		mps_warn_compressed_kv(&out->model.arch, true, &out->warnings);
	mps_warn_context(&out->model.arch, req.sequence_length, out->opts.allow_beyond_max_position, &out->warnings);
	mps_warn_kv_replication(&out->model.arch, &out->mem, &out->warnings);
	if (dev) {
		mps_warn_budget(&out->job, dev, out->prefill.memory_fraction, &out->warnings);
		mps_warn_capacity(dev, &out->warnings);
		mps_warn_runtime(dev, job->req.cuda_context_bytes, &out->warnings);
		st = performance(&out->model, &req, &out->opts, &out->mem, &dev->hw, out->mem.tensor_parallel_size,
				 &out->perf, err);
	}
	if (st == MP_OK)
		st = mps_engine_block_for(&out->job, out, err);
	if (st == MP_OK && out->have_engine && out->engine.have_prediction && out->fit.fits &&
	    (out->job.engine.engine == MP_ENGINE_SGLANG || out->job.engine.engine == MP_ENGINE_TRTLLM ||
	     out->job.engine.engine == MP_ENGINE_VLLM) &&
	    out->engine.predicted.max_concurrency < (double)out->job.req.batch_size)
		/* where the engine's own pool is short of the batch the fit holds (SGLang's and TensorRT-LLM's
		 * shares; vLLM's chunked layers cached whole), say so once, with the knob that helps */
		mps_warn(&out->warnings,
			 "fit: the batch fits the fit's budget, but %s's own KV pool holds %llu tokens, %.2f sequences of "
			 "%llu (engine.predicted.holds_batch false%s); %s",
			 mp_engine_name(out->job.engine.engine), (unsigned long long)out->engine.predicted.kv_cache_tokens,
			 out->engine.predicted.max_concurrency, (unsigned long long)out->job.req.sequence_length,
			 out->engine.predicted.kv_cache_tokens == 0 ? ": it would not start" : "",
			 out->job.engine.engine == MP_ENGINE_TRTLLM
				 ? "its free_gpu_memory_fraction is of the memory the profile leaves: give a larger one, "
				   "fewer sequences or more GPUs"
				 : "give fewer sequences or more GPUs");
	if (st == MP_OK && out->have_engine && out->llama && !out->engine.model_arg_known)
		mps_warn(&out->warnings,
			 "engine.command: the model argument is \"%s\"; give served_model (the path of the .gguf file %s "
			 "loads)",
			 out->engine.model_arg, out->llama->engine == MP_ENGINE_OLLAMA ? "Ollama's Modelfile FROM" : "llama.cpp");
	else if (st == MP_OK && out->have_engine && !out->engine.model_arg_known && out->engine.model_arg[0] != '<')
		/* (a "<... checkpoint of ...>" placeholder was said by the engine block's own warning) */
		mps_warn(&out->warnings,
			 "engine.command: the model argument is \"%s\", the request's model id; give served_model (the "
			 "Hugging Face repository or the path the engine loads)",
			 out->engine.model_arg);
	return st;
}

mp_status mps_lookups_note(mps_service *s, const mps_model_ref *m, const mps_device_ref *d, mp_status st,
			   mp_error *err)
{
	mp_error e = {{0}, {0}, err ? err->all : NULL};

	if (st == MP_OK || err == NULL || err->all == NULL)
		return st;
	if (m && m->kind == MPS_MODEL_STORED) {
		mps_model *mm = malloc(sizeof(*mm));

		if (mm && mps_model_resolve(s, m, mm, &e) == MP_ENOTFOUND)
			mp_error_keep(&e, MP_ENOTFOUND);
		free(mm);
	}
	if (d && d->given && !d->inline_profile) {
		mp_store_device *dd = malloc(sizeof(*dd));

		if (dd && mps_device_resolve(s, d, dd, &e) == MP_ENOTFOUND)
			mp_error_keep(&e, MP_ENOTFOUND);
		free(dd);
	}
	return st;
}

mp_status mps_plan_inference(mps_service *s, const mps_inference_request *rq, mps_inference_plan *out, mp_error *err)
{
	mp_status st;
	uint64_t gen = mp_store_generation(mps_store(s)); /* once: the model and the device read at the same state */

	out->have_device = false;
	st = mps_model_resolve_at(s, &rq->job.model, gen, &out->model, err);
	/* a model not found: the device is looked up too, so that one answer names both */
	if (st == MP_ENOTFOUND && rq->device.given && !rq->device.inline_profile)
		return mps_lookups_note(s, NULL, &rq->device, mp_error_keep(err, st), err);
	if (st == MP_OK && !out->model.architecture_known)
		st = mp_fail(
			err, MP_EINVAL, rq->job.model.pointer,
			"the KV cache needs the architecture, not a bare parameter count: give the model as a stored id, "
			"{\"hf_config\": {...}} or {\"architecture\": {...}} with at least hidden_size, num_hidden_layers, "
			"num_attention_heads, vocab_size and intermediate_size (num_key_value_heads and head_dim when they "
			"differ from the defaults)");
	if (st == MP_OK && rq->device.given)
		st = mps_device_resolve_at(s, &rq->device, gen, &out->device, err);
	if (st != MP_OK)
		return st;
	st = mps_plan_inference_on(&out->model, rq->device.given ? &out->device : NULL, &rq->job, out, err);
	if (st == MP_OK && out->llama && rq->host_device.given) {
		/* the host of a llama.cpp placement: its rates bound the layers in host memory */
		mp_store_device *host = malloc(sizeof(*host));

		st = host ? mps_device_resolve_at(s, &rq->host_device, gen, host, err)
			  : mp_fail(err, MP_ENOMEM, "", "out of memory");
		if (st == MP_OK)
			st = mps_llamacpp_speed_for(out, host, err);
		free(host);
	}
	if (st == MP_OK) /* the engine's terms that observations of it on this device measured (mps_observe.h) */
		st = mps_observed_apply(s, out, err);
	if (st == MP_OK && rq->job.include_tensors) {
		/* the tensors as this plan stores them: its formats on one of its tensor-parallel ranks */
		mps_tensors_query q = {out->job.req.weight_dtype, out->opts.compute_dtype, out->mem.tensor_parallel_size,
				       &out->opts.formats};

		st = mps_tensors_of(&out->model.arch, &q, &out->tensors, err);
	}
	return st;
}

mp_status mps_plan_training(mps_service *s, const mps_training_request *rq, mps_training_plan *out, mp_error *err)
{
	mp_training_req req = rq->job.req;
	const mp_model *arch;
	mp_status st;

	memset(out, 0, sizeof(*out));
	req.json_pointer = rq->job.pointer;
	out->recompute_from = mps_training_defaults(&rq->job, &req);
	st = mps_model_resolve(s, &rq->job.model, &out->model, err);
	if (st == MP_ENOTFOUND && rq->device.given && !rq->device.inline_profile)
		return mps_lookups_note(s, NULL, &rq->device, mp_error_keep(err, st), err);
	if (st == MP_OK && rq->device.given) {
		st = mps_device_resolve(s, &rq->device, &out->device, err);
		out->have_device = st == MP_OK;
	}
	if (st != MP_OK)
		return st;
	if (out->have_device && req.cuda_context_bytes == 0 && out->device.hw.cuda_context_bytes)
		req.cuda_context_bytes = out->device.hw.cuda_context_bytes;
	if (out->have_device) /* a CPU: no CUDA context, no cuBLAS workspaces */
		req.host_memory = out->device.hw.host_memory;
	arch = out->model.architecture_known ? &out->model.arch : NULL;
	st = mp_plan_training_fit(arch, &out->model.params, &req, out->have_device ? &out->device.hw : NULL, &out->mem,
				  &out->fit, err);
	if (st != MP_OK)
		return st;
	out->req = req;
	out->req.json_pointer = NULL;
	if (strcmp(out->recompute_from, "default") == 0 && out->mem.activations_known) {
		/* the verdict rests on the default: when it does not fit, say what full recomputation would give */
		mp_training_memory *full = NULL;
		mp_training_fit full_fit;
		mp_training_req r = req;
		mp_error e = MP_ERROR_INIT;

		r.recompute = MP_RECOMPUTE_FULL;
		if (out->have_device && !out->fit.fit.fits && (full = malloc(sizeof(*full))) != NULL &&
		    mp_plan_training_fit(arch, &out->model.params, &r, &out->device.hw, full, &full_fit, &e) != MP_OK) {
			free(full);
			full = NULL;
		}
		mps_warn_recompute(out->recompute_from, &out->mem, full, full && full_fit.fit.fits, &out->warnings);
		free(full);
	} else if (out->mem.activations_known) { /* states_only: no activations for it to change */
		mps_warn_recompute(out->recompute_from, &out->mem, NULL, false, &out->warnings);
	}
	mps_warn_model(&out->model, &out->warnings);
	if (out->model.architecture_known)
		mps_warn_compressed_kv(&out->model.arch, false, &out->warnings);
	if (out->have_device) {
		mps_warn_capacity(&out->device, &out->warnings);
		mps_warn_runtime(&out->device, rq->job.req.cuda_context_bytes, &out->warnings);
	}
	if (arch == NULL)
		return MP_OK;
	mps_warn_context(arch, req.sequence_length, req.allow_beyond_max_position, &out->warnings);
	if (req.attention == MP_TRAIN_ATTENTION_FUSED && out->mem.attention_kernel &&
	    strcmp(out->mem.attention_kernel, "math") == 0)
		mps_warn(&out->warnings,
			 "attention fused: PyTorch's SDPA has no fused kernel for this call (fp32 with grouped-query heads: "
			 "flash needs 16 bits, the memory-efficient kernel equal head counts), so it runs its math "
			 "fallback and keeps the score matrices, %llu bytes per layer; a 16-bit regime (amp_bf16, bf16) "
			 "runs flash instead",
			 (unsigned long long)out->mem.activations.layer.attention_scores);
	/* the published formulas for the same shape (case BR-13), whole model, 16-bit, no parallelism */
	for (int f = 0; f < MP_FORMULA_COUNT; f++) {
		mp_error e = MP_ERROR_INIT;

		out->formula_known[f] = mp_activation_formula_bytes(arch, req.micro_batch_size, req.sequence_length,
								    (mp_activation_formula)f, &out->formula_bytes[f],
								    &e) == MP_OK;
	}
	return MP_OK;
}
