/*
 * mpc_training.c: POST /v1/plan/training both ways: the request's field table (every training option is a field of
 * the body) and the answer: the api.md memory terms per GPU, the bytes-per-parameter convention echoed, the
 * per-term activation and logits breakdown, memory by phase and the fit.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/fields.h"
#include "codec.h"
#include "mpc_tables.h"

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

static void layer_write(mpc_out *w, const char *key, const mp_layer_activations *l)
{
	mpc_w_obj(w, key);
	mpc_w_u64(w, "norms_bytes", l->norms);
	mpc_w_u64(w, "projection_inputs_bytes", l->projection_inputs);
	mpc_w_u64(w, "attention_bytes", l->attention);
	mpc_w_u64(w, "attention_scores_bytes", l->attention_scores);
	mpc_w_u64(w, "mlp_bytes", l->mlp);
	mpc_w_u64(w, "moe_bytes", l->moe);
	mpc_w_u64(w, "dropout_masks_bytes", l->dropout_masks);
	mpc_w_u64(w, "total_bytes", l->total);
	mpc_w_end(w);
}

static void phase_write(mpc_out *w, const char *key, const mp_phase_memory *p, uint64_t context)
{
	mpc_w_obj(w, key);
	mpc_w_u64(w, "allocated_bytes", p->allocated_bytes);
	mpc_w_u64(w, "total_bytes", p->allocated_bytes + context);
	mpc_w_str(w, "moment", p->moment ? p->moment : "");
	mpc_w_str(w, "binding_term", p->binding_term ? p->binding_term : "");
	mpc_w_end(w);
}

static const char *const phase_keys[MP_TRAIN_PHASE_COUNT] = { "forward", "backward", "optimizer_step" };

/* request: the fields as the planner took them. */
static void request_write(mpc_out *w, const mp_training_req *r, const char *recompute_from,
			  const mp_training_memory *mem)
{
	mpc_w_obj(w, "request");
	mpc_w_str(w, "precision", precision_names[r->precision]);
	mpc_w_str(w, "optimizer", optimizer_names[r->optimizer]);
	mpc_w_u64(w, "micro_batch_size", r->micro_batch_size);
	mpc_w_u64(w, "sequence_length", r->sequence_length);
	mpc_w_u64(w, "global_batch_size", r->micro_batch_size * mem->data_parallel_size * mem->gradient_accumulation_steps);
	mpc_w_str(w, "activation_recomputation", recompute_names[r->recompute]);
	mpc_w_str(w, "activation_recomputation_from", recompute_from ? recompute_from : "request");
	mpc_w_str(w, "attention", attention_names[r->attention]);
	/* what runs: eager, or the kernel SDPA picks for "fused" (flash, efficient, or its math fallback) */
	mpc_w_str_or_null(w, "attention_kernel", mem->attention_kernel);
	mpc_w_bool(w, "dropout", !r->no_dropout);
	/* as the planner keeps the states: LoRA's and QLoRA's adapters are fp32 (PEFT), so are their moments */
	mpc_w_str(w, "optimizer_state_dtype",
		  r->optimizer_state_dtype != MP_DTYPE_INVALID ? mp_dtype_name(r->optimizer_state_dtype)
		  : r->optimizer == MP_OPTIMIZER_ADAMW_8BIT    ? "int8"
		  : r->finetune != MP_FINETUNE_FULL	     ? "fp32"
		  : r->precision == MP_PRECISION_BF16	     ? "bf16"
							     : "fp32");
	mpc_w_str(w, "finetune", finetune_names[r->finetune]);
	if (r->finetune != MP_FINETUNE_FULL)
		mpc_w_u64(w, "lora_rank", r->lora_rank);
	mpc_w_end(w);
}

/* layout and bytes_per_parameter, parameters and memory: the api.md terms per GPU. */
static void states_write(mpc_out *w, const mp_training_req *r, const mp_training_memory *mem)
{
	mpc_w_obj(w, "layout");
	mpc_w_u64(w, "num_gpus", or1(r->num_gpus));
	mpc_w_u64(w, "data_parallel_size", mem->data_parallel_size);
	mpc_w_u64(w, "tensor_parallel_size", or1(r->tensor_parallel_size));
	mpc_w_bool(w, "sequence_parallel", r->sequence_parallel);
	mpc_w_u64(w, "pipeline_parallel_size", or1(r->pipeline_parallel_size));
	mpc_w_u64(w, "context_parallel_size", or1(r->context_parallel_size));
	mpc_w_u64(w, "expert_parallel_size", or1(r->expert_parallel_size));
	mpc_w_str(w, "sharding", sharding_names[r->sharding]);
	mpc_w_u64(w, "gradient_accumulation_steps", mem->gradient_accumulation_steps);
	mpc_w_u64(w, "microbatches_in_flight", mem->activations.microbatches_in_flight);
	mpc_w_end(w);

	mpc_w_obj(w, "bytes_per_parameter");
	mpc_w_str(w, "convention", mem->convention ? mem->convention : "");
	mpc_w_str(w, "composition", mem->composition ? mem->composition : "");
	mpc_w_num(w, "weights", mem->weight_bytes_per_parameter);
	mpc_w_u64(w, "gradients", mem->gradient_bytes_per_parameter);
	mpc_w_u64(w, "master_weights", mem->master_weight_bytes_per_parameter);
	mpc_w_num(w, "optimizer_states", mem->optimizer_bytes_per_parameter);
	mpc_w_num(w, "total", mem->weight_bytes_per_parameter + mem->gradient_bytes_per_parameter +
				      mem->master_weight_bytes_per_parameter + mem->optimizer_bytes_per_parameter);
	mpc_w_end(w);

	mpc_w_obj(w, "parameters");
	mpc_w_u64(w, "on_gpu", mem->parameters_on_gpu);
	mpc_w_u64(w, "trainable", mem->trainable_parameters);
	mpc_w_u64(w, "lora", mem->lora_parameters);
	mpc_w_end(w);

	mpc_w_obj(w, "memory");
	mpc_w_u64(w, "weights_bytes", mem->weights_bytes);
	mpc_w_u64(w, "gradients_bytes", mem->gradients_bytes);
	mpc_w_u64(w, "optimizer_states_bytes", mem->optimizer_states_bytes);
	mpc_w_u64(w, "master_weights_bytes", mem->master_weights_bytes);
	if (mem->activations_known) {
		mpc_w_u64(w, "activations_bytes", mem->activations_bytes);
		mpc_w_u64(w, "logits_bytes", mem->logits_bytes);
	} else {
		mpc_w_null(w, "activations_bytes");
		mpc_w_null(w, "logits_bytes");
	}
	mpc_w_u64(w, "overhead_bytes", mem->overhead_bytes);
	mpc_w_u64(w, "total_bytes", mem->total_bytes);
	mpc_w_u64(w, "states_bytes", mem->states_bytes);
	mpc_w_end(w);
}

/* breakdown: per-layer activations, the published formulas, the logits chain, the overheads. */
static void breakdown_write(mpc_out *w, const mp_training_req *r, const mps_training_plan *p)
{
	const mp_training_memory *mem = &p->mem;

	mpc_w_obj(w, "breakdown");
	if (mem->activations_known) {
		const mp_activation_memory *a = &mem->activations;
		const mp_logits_memory *g = &mem->logits;

		mpc_w_obj(w, "activations");
		layer_write(w, "per_layer", &a->layer);
		mpc_w_u64(w, "layers_on_gpu", a->layers_on_gpu);
		mpc_w_u64(w, "saved_per_layer_bytes", a->saved_per_layer);
		mpc_w_u64(w, "layers_bytes", a->layers_bytes);
		mpc_w_u64(w, "embedding_bytes", a->embedding_bytes);
		mpc_w_u64(w, "head_bytes", a->head_bytes);
		mpc_w_u64(w, "autocast_weight_copies_bytes", a->autocast_weight_copies_bytes);
		mpc_w_u64(w, "recompute_bytes", a->recompute_bytes);
		mpc_w_u64(w, "backward_transient_bytes", a->backward_transient_bytes);
		mpc_w_end(w);
		/* the published formulas for the same shape (case BR-13), whole model, 16-bit, no parallelism */
		mpc_w_obj(w, "formulas");
		for (int f = 0; f < MP_FORMULA_COUNT; f++) {
			char key[48];

			snprintf(key, sizeof(key), "%s_bytes", mp_activation_formula_name((mp_activation_formula)f));
			if (p->formula_known[f])
				mpc_w_u64(w, key, p->formula_bytes[f]);
		}
		mpc_w_end(w);
		mpc_w_obj(w, "logits");
		mpc_w_u64(w, "tokens", g->tokens);
		mpc_w_u64(w, "logits_bytes", g->logits_bytes);
		mpc_w_u64(w, "upcast_bytes", g->upcast_bytes);
		mpc_w_u64(w, "log_probs_bytes", g->log_probs_bytes);
		mpc_w_u64(w, "forward_peak_bytes", g->forward_peak_bytes);
		mpc_w_u64(w, "backward_peak_bytes", g->backward_peak_bytes);
		mpc_w_end(w);
	}
	mpc_w_obj(w, "overhead");
	mpc_w_u64(w, "cuda_context_bytes", mem->cuda_context_bytes);
	mpc_w_u64(w, "workspace_bytes", mem->workspace_bytes);
	mpc_w_u64(w, "comm_buffer_bytes", mem->comm_buffer_bytes);
	mpc_w_u64(w, "optimizer_transient_bytes", mem->optimizer_transient_bytes);
	mpc_w_end(w);
	if (r->finetune != MP_FINETUNE_FULL)
		mpc_w_u64(w, "lora_base_bytes", mem->lora_base_bytes);
	mpc_w_end(w);
}

/* phases and the notes on what the figures include. */
static void phases_write(mpc_out *w, const mp_training_memory *mem)
{
	char buf[320];

	mpc_w_obj(w, "phases");
	for (int i = 0; i < MP_TRAIN_PHASE_COUNT; i++)
		phase_write(w, phase_keys[i], &mem->phases[i], mem->cuda_context_bytes);
	mpc_w_end(w);
	mpc_w_str(w, "peak_phase", phase_keys[mem->peak_phase]);
	mpc_w_str(w, "binding_term", mem->binding_term ? mem->binding_term : "");

	mpc_w_arr(w, "notes");
	snprintf(buf, sizeof(buf), "Model states: %s.", mem->composition ? mem->composition : "");
	mpc_w_str(w, NULL, buf);
	if (!mem->activations_known) {
		mpc_w_lit(w, NULL,
			  "states_only: total_bytes counts model states alone (no activations, logits, CUDA context or "
			  "workspaces), as the bytes-per-parameter conventions do.");
	} else {
		mpc_w_lit(w, NULL,
			  "Memory is per GPU (the busiest pipeline stage). total_bytes is the peak phase's allocator bytes "
			  "plus the CUDA context; the memory terms are each term's size, which do not all coexist.");
		mpc_w_lit(w, NULL,
			  "Activations: Korthikanti et al. 2022 (arXiv 2205.05198) eq. 1 extended term by term to what "
			  "PyTorch autograd saves for this regime, attention kernel, MLP and norm; logits: three fp32 "
			  "tokens x vocab tensors at log_softmax backward (transformers ForCausalLMLoss upcasts).");
		mpc_w_lit(w, NULL,
			  "Checked against an H200 (PyTorch 2.11, transformers 5.17, GPT-2): every measured training row "
			  "within 1% (bench/RESULTS.md).");
	}
	mpc_w_end(w);
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
	j->recompute_given = cJSON_GetObjectItemCaseSensitive(body, "activation_recomputation") != NULL;
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

void mpc_training_plan_write(mpc_out *w, const mps_training_request *rq, const mps_training_plan *p)
{
	mpc_w_obj(w, NULL);
	mpc_model_write(w, "model", &p->model);
	(void)rq;
	request_write(w, &p->req, p->recompute_from, &p->mem);
	states_write(w, &p->req, &p->mem);
	breakdown_write(w, &p->req, p);
	phases_write(w, &p->mem);
	mpc_warnings_write(w, &p->warnings);
	if (p->have_device) {
		/* the inference plan's fit block (one encoder) with the smallest GPU count of the training layout; and
		 * min_num_gpus, its old name, kept one release as a deprecated alias with the same value (its former 0
		 * for "none" read as "needs no GPU" to a scheduler, so it is null too) */
		mpc_w_obj(w, "fit");
		mpc_fit_members_write(w, &p->fit.fit, &p->device, p->fit.min_num_gpus);
		if (!p->device.hw.host_memory)
			mpc_w_u64_or_null(w, "min_num_gpus", p->fit.min_num_gpus);
		mpc_w_end(w);
	}
	mpc_w_end(w);
}

const mpm_field *mpc_training_field_table(size_t *n)
{
	*n = MPM_COUNT(training_fields);
	return training_fields;
}

char *mpc_training_plan_print(const mps_training_request *rq, const mps_training_plan *p, size_t *len)
{
	mpc_out w;

	mpc_out_init(&w);
	mpc_training_plan_write(&w, rq, p);
	return mpc_out_finish(&w, len);
}

const char *mpc_training_precision_name(mp_precision v)
{
	return precision_names[v];
}

const char *mpc_training_optimizer_name(mp_optimizer v)
{
	return optimizer_names[v];
}

const char *mpc_training_recompute_name(mp_recompute v)
{
	return recompute_names[v];
}

const char *mpc_training_sharding_name(mp_sharding v)
{
	return sharding_names[v];
}

const char *mpc_training_phase_name(mp_train_phase v)
{
	return phase_keys[v];
}
