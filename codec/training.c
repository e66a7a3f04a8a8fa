/*
 * training.c: POST /v1/plan/training both ways: the request's field table (every training option is a field of
 * the body) and the answer: the api.md memory terms per GPU, the bytes-per-parameter convention echoed, the
 * per-term activation and logits breakdown, memory by phase and the fit.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/fields.h"
#include "codec.h"
#include "tables.h"

/* Index order matches the planner's enums. */
static const char *const precision_names[] = { "mixed_bf16", "mixed_fp16", "fp32", "amp_bf16", "amp_fp16", "bf16",
					       NULL };
static const char *const optimizer_names[] = { "adamw",		"adam",	     "adamw_8bit", "sgd",
					       "sgd_momentum", "adafactor", "lion",	  NULL };
static const char *const convention_names[] = { "16", "18", "20", NULL };
static const char *const recompute_names[] = { "none", "selective", "full", NULL };
static const char *const attention_names[] = { "fused", "eager", NULL };
static const char *const sharding_names[] = { "none",	 "zero1", "zero2", "zero3", "fsdp_full_shard",
					      "fsdp_shard_grad_op", NULL };
static const char *const finetune_names[] = { "full", "lora", "qlora", NULL };
static const char *const lora_target_names[] = { "q", "k", "v", "o", "gate", "up", "down", NULL };

typedef struct training_body {
	mp_training_req req;
	int precision, optimizer, convention, recompute, attention, sharding, finetune;
	bool dropout;
	mp_dtype state_dtype;
	char lora_targets[96];
} training_body;

#define TB(f) offsetof(training_body, f)
#define GPUS(nm, f) { .name = nm, .type = MPM_F_U64, .offset = TB(req.f), .min = 1, .max = MP_MAX_GPUS }

static const mpm_field training_fields[] = {
	{ .name = "model", .type = MPM_F_ANY, .required = true },
	{ .name = "precision", .type = MPM_F_ENUM, .required = true, .offset = TB(precision), .names = precision_names },
	{ .name = "optimizer", .type = MPM_F_ENUM, .required = true, .offset = TB(optimizer), .names = optimizer_names },
	{ .name = "micro_batch_size", .type = MPM_F_U64, .required = true, .offset = TB(req.micro_batch_size), .min = 1,
	  .max = MP_MAX_BATCH_SIZE },
	{ .name = "sequence_length", .type = MPM_F_U64, .required = true, .offset = TB(req.sequence_length), .min = 1,
	  .max = MP_MAX_SEQUENCE_LENGTH },
	/* 16, 18 or 20, a number or its string (read below: the table's enums are strings) */
	{ .name = "state_convention", .type = MPM_F_ANY },
	{ .name = "optimizer_state_dtype", .type = MPM_F_DTYPE, .offset = TB(state_dtype),
	  .dtypes = MPM_DT(MP_DTYPE_FP32) | MPM_DT(MP_DTYPE_BF16) | MPM_DT(MP_DTYPE_FP16) },
	{ .name = "global_batch_size", .type = MPM_F_U64, .offset = TB(req.global_batch_size), .min = 1,
	  .max = MP_MAX_BATCH_SIZE * MP_MAX_GPUS },
	{ .name = "activation_recomputation", .type = MPM_F_ENUM, .offset = TB(recompute), .names = recompute_names },
	{ .name = "attention", .type = MPM_F_ENUM, .offset = TB(attention), .names = attention_names },
	{ .name = "dropout", .type = MPM_F_BOOL, .offset = TB(dropout) },
	{ .name = "states_only", .type = MPM_F_BOOL, .offset = TB(req.states_only) },
	{ .name = "allow_beyond_max_position_embeddings", .type = MPM_F_BOOL, .offset = TB(req.allow_beyond_max_position) },
	GPUS("num_gpus", num_gpus),
	GPUS("tensor_parallel_size", tensor_parallel_size),
	{ .name = "sequence_parallel", .type = MPM_F_BOOL, .offset = TB(req.sequence_parallel) },
	GPUS("pipeline_parallel_size", pipeline_parallel_size),
	GPUS("context_parallel_size", context_parallel_size),
	GPUS("expert_parallel_size", expert_parallel_size),
	{ .name = "sharding", .type = MPM_F_ENUM, .offset = TB(sharding), .names = sharding_names },
	{ .name = "zero_bucket_elements", .type = MPM_F_U64, .offset = TB(req.zero_bucket_elements), .min = 1,
	  .max = UINT64_C(1) << 40 },
	{ .name = "finetune", .type = MPM_F_ENUM, .offset = TB(finetune), .names = finetune_names },
	{ .name = "lora_rank", .type = MPM_F_U64, .offset = TB(req.lora_rank), .min = 1, .max = 65536 },
	{ .name = "lora_targets", .type = MPM_F_STRING, .offset = TB(lora_targets), .size = MPM_STR(training_body, lora_targets) },
	{ .name = "cuda_context_bytes", .type = MPM_F_U64, .offset = TB(req.cuda_context_bytes), .min = 0,
	  .max = UINT64_C(1) << 40 },
	{ .name = "cublas_workspace_bytes", .type = MPM_F_U64, .offset = TB(req.cublas_workspace_bytes), .min = 1,
	  .max = UINT64_C(1) << 36 },
	{ .name = "device", .type = MPM_F_ANY },
};

static uint64_t or1(uint64_t v)
{
	return v ? v : 1;
}

/* "q,k,v,o" or "all" -> MP_LORA_* mask. */
static mp_status parse_targets(const char *s, const char *pointer, uint32_t *mask, mp_error *err)
{
	char buf[96];
	size_t len;

	*mask = 0;
	if (s[0] == '\0' || strcmp(s, "all") == 0) {
		*mask = MP_LORA_ALL;
		return MP_OK;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *p = buf; *p; p += len + (p[len] == ',')) {
		int i;

		len = strcspn(p, ",");
		for (i = 0; lora_target_names[i]; i++)
			if (strlen(lora_target_names[i]) == len && strncmp(p, lora_target_names[i], len) == 0)
				break;
		if (lora_target_names[i] == NULL)
			return mp_fail_at(err, MP_EINVAL, pointer, "/lora_targets",
				       "lora_targets is \"all\" or a comma-separated list of q, k, v, o, gate, up, down");
		*mask |= 1u << i;
	}
	return MP_OK;
}

static void layer_json(cJSON *o, const mp_layer_activations *l)
{
	mpc_add_u64(o, "norms_bytes", l->norms);
	mpc_add_u64(o, "projection_inputs_bytes", l->projection_inputs);
	mpc_add_u64(o, "attention_bytes", l->attention);
	mpc_add_u64(o, "attention_scores_bytes", l->attention_scores);
	mpc_add_u64(o, "mlp_bytes", l->mlp);
	mpc_add_u64(o, "moe_bytes", l->moe);
	mpc_add_u64(o, "dropout_masks_bytes", l->dropout_masks);
	mpc_add_u64(o, "total_bytes", l->total);
}

static void phase_json(cJSON *o, const char *key, const mp_phase_memory *p, uint64_t context)
{
	cJSON *ph = cJSON_AddObjectToObject(o, key);

	mpc_add_u64(ph, "allocated_bytes", p->allocated_bytes);
	mpc_add_u64(ph, "total_bytes", p->allocated_bytes + context);
	cJSON_AddStringToObject(ph, "moment", p->moment ? p->moment : "");
	cJSON_AddStringToObject(ph, "binding_term", p->binding_term ? p->binding_term : "");
}

static const char *const phase_keys[MP_TRAIN_PHASE_COUNT] = { "forward", "backward", "optimizer_step" };

/* request: the fields as the planner took them. */
static void request_json(cJSON *doc, const mp_training_req *r, const mp_training_memory *mem)
{
	cJSON *o;

	o = cJSON_AddObjectToObject(doc, "request");
	cJSON_AddStringToObject(o, "precision", precision_names[r->precision]);
	cJSON_AddStringToObject(o, "optimizer", optimizer_names[r->optimizer]);
	mpc_add_u64(o, "micro_batch_size", r->micro_batch_size);
	mpc_add_u64(o, "sequence_length", r->sequence_length);
	mpc_add_u64(o, "global_batch_size", r->micro_batch_size * mem->data_parallel_size * mem->gradient_accumulation_steps);
	cJSON_AddStringToObject(o, "activation_recomputation", recompute_names[r->recompute]);
	cJSON_AddStringToObject(o, "attention", attention_names[r->attention]);
	/* what runs: eager, or the kernel SDPA picks for "fused" (flash, efficient, or its math fallback) */
	mpc_add_str_or_null(o, "attention_kernel", mem->attention_kernel);
	cJSON_AddBoolToObject(o, "dropout", !r->no_dropout);
	cJSON_AddStringToObject(o, "optimizer_state_dtype",
				r->optimizer_state_dtype != MP_DTYPE_INVALID ? mp_dtype_name(r->optimizer_state_dtype)
				: r->optimizer == MP_OPTIMIZER_ADAMW_8BIT    ? "int8"
				: r->precision == MP_PRECISION_BF16	     ? "bf16"
									     : "fp32");
	cJSON_AddStringToObject(o, "finetune", finetune_names[r->finetune]);
	if (r->finetune != MP_FINETUNE_FULL)
		mpc_add_u64(o, "lora_rank", r->lora_rank);

}

/* layout and bytes_per_parameter, parameters and memory: the api.md terms per GPU. */
static void states_json(cJSON *doc, const mp_training_req *r, const mp_training_memory *mem)
{
	cJSON *o;

	o = cJSON_AddObjectToObject(doc, "layout");
	mpc_add_u64(o, "num_gpus", or1(r->num_gpus));
	mpc_add_u64(o, "data_parallel_size", mem->data_parallel_size);
	mpc_add_u64(o, "tensor_parallel_size", or1(r->tensor_parallel_size));
	cJSON_AddBoolToObject(o, "sequence_parallel", r->sequence_parallel);
	mpc_add_u64(o, "pipeline_parallel_size", or1(r->pipeline_parallel_size));
	mpc_add_u64(o, "context_parallel_size", or1(r->context_parallel_size));
	mpc_add_u64(o, "expert_parallel_size", or1(r->expert_parallel_size));
	cJSON_AddStringToObject(o, "sharding", sharding_names[r->sharding]);
	mpc_add_u64(o, "gradient_accumulation_steps", mem->gradient_accumulation_steps);
	mpc_add_u64(o, "microbatches_in_flight", mem->activations.microbatches_in_flight);

	o = cJSON_AddObjectToObject(doc, "bytes_per_parameter");
	cJSON_AddStringToObject(o, "convention", mem->convention ? mem->convention : "");
	cJSON_AddStringToObject(o, "composition", mem->composition ? mem->composition : "");
	mpc_add_u64(o, "weights", mem->weight_bytes_per_parameter);
	mpc_add_u64(o, "gradients", mem->gradient_bytes_per_parameter);
	mpc_add_u64(o, "master_weights", mem->master_weight_bytes_per_parameter);
	mpc_add_num(o, "optimizer_states", mem->optimizer_bytes_per_parameter);
	mpc_add_num(o, "total", mem->weight_bytes_per_parameter + mem->gradient_bytes_per_parameter +
						    mem->master_weight_bytes_per_parameter +
						    mem->optimizer_bytes_per_parameter);

	o = cJSON_AddObjectToObject(doc, "parameters");
	mpc_add_u64(o, "on_gpu", mem->parameters_on_gpu);
	mpc_add_u64(o, "trainable", mem->trainable_parameters);
	mpc_add_u64(o, "lora", mem->lora_parameters);

	o = cJSON_AddObjectToObject(doc, "memory");
	mpc_add_u64(o, "weights_bytes", mem->weights_bytes);
	mpc_add_u64(o, "gradients_bytes", mem->gradients_bytes);
	mpc_add_u64(o, "optimizer_states_bytes", mem->optimizer_states_bytes);
	mpc_add_u64(o, "master_weights_bytes", mem->master_weights_bytes);
	if (mem->activations_known) {
		mpc_add_u64(o, "activations_bytes", mem->activations_bytes);
		mpc_add_u64(o, "logits_bytes", mem->logits_bytes);
	} else {
		cJSON_AddNullToObject(o, "activations_bytes");
		cJSON_AddNullToObject(o, "logits_bytes");
	}
	mpc_add_u64(o, "overhead_bytes", mem->overhead_bytes);
	mpc_add_u64(o, "total_bytes", mem->total_bytes);
	mpc_add_u64(o, "states_bytes", mem->states_bytes);

}

/* breakdown: per-layer activations, the published formulas, the logits chain, the overheads. */
static void breakdown_json(cJSON *doc, const mp_training_req *r, const mps_training_plan *p)
{
	const mp_training_memory *mem = &p->mem;
	cJSON *o, *b;

	b = cJSON_AddObjectToObject(doc, "breakdown");
	if (mem->activations_known) {
		const mp_activation_memory *a = &mem->activations;
		const mp_logits_memory *g = &mem->logits;

		o = cJSON_AddObjectToObject(b, "activations");
		layer_json(cJSON_AddObjectToObject(o, "per_layer"), &a->layer);
		mpc_add_u64(o, "layers_on_gpu", a->layers_on_gpu);
		mpc_add_u64(o, "saved_per_layer_bytes", a->saved_per_layer);
		mpc_add_u64(o, "layers_bytes", a->layers_bytes);
		mpc_add_u64(o, "embedding_bytes", a->embedding_bytes);
		mpc_add_u64(o, "head_bytes", a->head_bytes);
		mpc_add_u64(o, "autocast_weight_copies_bytes", a->autocast_weight_copies_bytes);
		mpc_add_u64(o, "recompute_bytes", a->recompute_bytes);
		mpc_add_u64(o, "backward_transient_bytes", a->backward_transient_bytes);
		/* the published formulas for the same shape (case BR-13), whole model, 16-bit, no parallelism */
		o = cJSON_AddObjectToObject(b, "formulas");
		for (int f = 0; f < MP_FORMULA_COUNT; f++) {
			char key[48];

			snprintf(key, sizeof(key), "%s_bytes", mp_activation_formula_name((mp_activation_formula)f));
			if (p->formula_known[f])
				mpc_add_u64(o, key, p->formula_bytes[f]);
		}
		o = cJSON_AddObjectToObject(b, "logits");
		mpc_add_u64(o, "tokens", g->tokens);
		mpc_add_u64(o, "logits_bytes", g->logits_bytes);
		mpc_add_u64(o, "upcast_bytes", g->upcast_bytes);
		mpc_add_u64(o, "log_probs_bytes", g->log_probs_bytes);
		mpc_add_u64(o, "forward_peak_bytes", g->forward_peak_bytes);
		mpc_add_u64(o, "backward_peak_bytes", g->backward_peak_bytes);
	}
	o = cJSON_AddObjectToObject(b, "overhead");
	mpc_add_u64(o, "cuda_context_bytes", mem->cuda_context_bytes);
	mpc_add_u64(o, "workspace_bytes", mem->workspace_bytes);
	mpc_add_u64(o, "comm_buffer_bytes", mem->comm_buffer_bytes);
	mpc_add_u64(o, "optimizer_transient_bytes", mem->optimizer_transient_bytes);
	if (r->finetune != MP_FINETUNE_FULL)
		mpc_add_u64(b, "lora_base_bytes", mem->lora_base_bytes);

}

/* phases and the notes on what the figures include. */
static void phases_json(cJSON *doc, const mp_training_memory *mem)
{
	cJSON *o, *notes;
	char buf[320];

	o = cJSON_AddObjectToObject(doc, "phases");
	for (int i = 0; i < MP_TRAIN_PHASE_COUNT; i++)
		phase_json(o, phase_keys[i], &mem->phases[i], mem->cuda_context_bytes);
	cJSON_AddStringToObject(doc, "peak_phase", phase_keys[mem->peak_phase]);
	cJSON_AddStringToObject(doc, "binding_term", mem->binding_term ? mem->binding_term : "");

	notes = cJSON_AddArrayToObject(doc, "notes");
	snprintf(buf, sizeof(buf), "Model states: %s.", mem->composition ? mem->composition : "");
	mpc_append(notes, cJSON_CreateString(buf));
	if (!mem->activations_known) {
		mpc_append(notes, cJSON_CreateString(
			"states_only: total_bytes counts model states alone (no activations, logits, CUDA context or "
			"workspaces), as the bytes-per-parameter conventions do."));
	} else {
		mpc_append(notes, cJSON_CreateString(
			"Memory is per GPU (the busiest pipeline stage). total_bytes is the peak phase's allocator bytes "
			"plus the CUDA context; the memory terms are each term's size, which do not all coexist."));
		mpc_append(notes, cJSON_CreateString(
			"Activations: Korthikanti et al. 2022 (arXiv 2205.05198) eq. 1 extended term by term to what "
			"PyTorch autograd saves for this regime, attention kernel, MLP and norm; logits: three fp32 "
			"tokens x vocab tensors at log_softmax backward (transformers ForCausalLMLoss upcasts)."));
		mpc_append(notes, cJSON_CreateString(
			"Checked against an H200 (PyTorch 2.11, transformers 5.17, GPT-2): every measured training row "
			"within 1% (bench/RESULTS.md)."));
	}
}

static cJSON *document(const mps_model *m, const mp_training_req *r, const mps_training_plan *p)
{
	cJSON *doc = cJSON_CreateObject();

	if (doc == NULL)
		return NULL;
	mpc_add_item(doc, "model", mpc_model_json(m));
	request_json(doc, r, &p->mem);
	states_json(doc, r, &p->mem);
	breakdown_json(doc, r, p);
	phases_json(doc, &p->mem);
	mpc_add_item(doc, "warnings", mpc_warnings_json(&p->warnings));
	return doc;
}


mp_status mpc_training_decode(const cJSON *body, const char *pointer, bool allow_device, mps_training_request *out,
			      mp_error *err)
{
	training_body tb;
	mps_training_job *j = &out->job;
	mp_problems p = MP_PROBLEMS_INIT;
	char field[96];
	mp_status st;

	memset(out, 0, sizeof(*out));
	memset(&tb, 0, sizeof(tb));
	snprintf(j->pointer, sizeof(j->pointer), "%s", pointer);
	tb.dropout = true;
	tb.req.num_gpus = 1;
	/* every problem of the body at once: its fields, the LoRA settings, the model and the device */
	st = mp_problems_note(&p, mpm_decode_fields(body, pointer, training_fields, MPM_COUNT(training_fields), &tb, err),
			      err);
	if (st == MP_ENOMEM || !cJSON_IsObject(body))
		return mp_problems_end(&p, err);
	tb.req.precision = (mp_precision)tb.precision;
	tb.req.optimizer = (mp_optimizer)tb.optimizer;
	{
		const cJSON *sc = cJSON_GetObjectItemCaseSensitive(body, "state_convention");
		int v = -1;

		for (int i = 0; sc && convention_names[i]; i++)
			if ((cJSON_IsNumber(sc) && sc->valuedouble == atof(convention_names[i])) ||
			    (cJSON_IsString(sc) && strcmp(sc->valuestring, convention_names[i]) == 0))
				v = i;
		if (sc && !cJSON_IsNull(sc) && v < 0) {
			mpc_join(field, sizeof(field), pointer, "/state_convention");
			mp_problems_note(&p,
					 mp_fail(err, MP_EINVAL, field,
						 "state_convention must be 16, 18 or 20 (bytes per parameter of the model "
						 "states; a number or a string)"),
					 err);
		} else if (v >= 0)
			tb.convention = v;
	}
	tb.req.convention = (mp_state_convention)tb.convention;
	tb.req.recompute = (mp_recompute)tb.recompute;
	tb.req.attention = (mp_train_attention)tb.attention;
	tb.req.sharding = (mp_sharding)tb.sharding;
	tb.req.finetune = (mp_finetune)tb.finetune;
	tb.req.optimizer_state_dtype = tb.state_dtype;
	tb.req.no_dropout = !tb.dropout;
	if (tb.req.finetune != MP_FINETUNE_FULL && tb.req.lora_rank == 0 &&
	    !cJSON_GetObjectItemCaseSensitive(body, "lora_rank"))
		mp_problems_note(&p,
				 mp_fail_at(err, MP_EINVAL, pointer, "/lora_rank",
					    "lora_rank is required with finetune lora or qlora: an integer between 1 and "
					    "65536 (the adapters' rank r)"),
				 err);
	/* LoRA settings without LoRA would be silently ignored */
	if (tb.req.finetune == MP_FINETUNE_FULL && cJSON_GetObjectItemCaseSensitive(body, "lora_rank"))
		mp_problems_note(&p,
				 mp_fail_at(err, MP_EINVAL, pointer, "/lora_rank",
					    "lora_rank applies only with finetune lora or qlora (finetune is full)"),
				 err);
	if (tb.req.finetune == MP_FINETUNE_FULL && cJSON_GetObjectItemCaseSensitive(body, "lora_targets"))
		mp_problems_note(&p,
				 mp_fail_at(err, MP_EINVAL, pointer, "/lora_targets",
					    "lora_targets applies only with finetune lora or qlora (finetune is full)"),
				 err);
	mp_problems_note(&p, parse_targets(tb.lora_targets, pointer, &tb.req.lora_targets, err), err);
	j->req = tb.req;
	snprintf(field, sizeof(field), "%s/model", pointer);
	if (mp_problems_note(&p,
			     mpc_model_ref_decode(cJSON_GetObjectItemCaseSensitive(body, "model"), field, true, &j->model,
						  err),
			     err) == MP_ENOMEM)
		return mp_problems_end(&p, err);
	snprintf(field, sizeof(field), "%s/device", pointer);
	if (!allow_device && cJSON_GetObjectItemCaseSensitive(body, "device"))
		mp_problems_note(&p,
				 mp_fail(err, MP_EINVAL, field,
					 "a job names no device: the devices are given once for the whole batch in the "
					 "top-level \"devices\" list"),
				 err);
	else if (mp_problems_note(&p,
				  mpc_device_ref_decode(cJSON_GetObjectItemCaseSensitive(body, "device"), field,
							&out->device, err),
				  err) == MP_OK)
		mp_problems_note(&p, mpc_device_ref_require_memory(&out->device, err), err);
	return mp_problems_end(&p, err);
}

static cJSON *fit_json(const mp_training_fit *tf, const mp_store_device *dev)
{
	const mp_fit *fit = &tf->fit;
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "device", dev->id);
	cJSON_AddBoolToObject(o, "fits", fit->fits);
	mpc_add_u64(o, "capacity_bytes", fit->capacity_bytes);
	cJSON_AddStringToObject(o, "capacity_source", dev->hw.usable_memory_bytes ? "usable_memory_bytes" : "memory_bytes");
	mpc_add_i64(o, "headroom_bytes", fit->headroom_bytes);
	cJSON_AddStringToObject(o, "binding_term", fit->binding_term ? fit->binding_term : "weights");
	mpc_add_u64(o, "max_batch_size", fit->max_batch_size);
	mpc_add_u64(o, "max_sequence_length", fit->max_sequence_length);
	cJSON_AddStringToObject(o, "max_sequence_length_bound", fit->max_sequence_length_at_context ? "context" : "memory");
	/* the inference plan's name and convention (null: no count fits); min_num_gpus is the old name, kept one
	 * release as a deprecated alias with the same value: its former 0 for "none" read as "needs no GPU" to a
	 * scheduler, so it is null too */
	mpc_add_u64_or_null(o, "min_gpus", tf->min_num_gpus);
	mpc_add_u64_or_null(o, "min_num_gpus", tf->min_num_gpus);
	return o;
}

cJSON *mpc_training_plan_json(const mps_training_request *rq, const mps_training_plan *p)
{
	cJSON *doc = document(&p->model, &rq->job.req, p);

	if (doc && p->have_device)
		mpc_add_item(doc, "fit", fit_json(&p->fit, &p->device));
	return doc;
}

const mpm_field *mpc_training_field_table(size_t *n)
{
	*n = MPM_COUNT(training_fields);
	return training_fields;
}
