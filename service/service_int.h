/*
 * service_int.h: helpers shared by the service's own files (not part of its contract): the store underneath, the
 * presets built in, the warnings each answer may carry (mps_defaults.c) and the one inference evaluation the plan and
 * capacity share (mps_plan.c). Tests that reach the store under a service include it too.
 */
#ifndef MPS_SERVICE_INT_H
#define MPS_SERVICE_INT_H

#include "../db/store.h"
#include "mps_presets.h"
#include "service.h"

/*
 * Every stored device matching f (NULL = all) with id > after (NULL: from the first), in id order, at most limit of
 * them (0: all), each given to fn with no lock of the store held: the store copies them out a page at a time
 * (db/store.h: mp_store_device_page). fn returns MP_OK to go on; another status stops the walk and is returned.
 * *more (may be NULL) says whether further devices match past the limit. Errors: the store's, fn's, MP_ENOMEM.
 * mps_each_model is the same for models, each with the repo ids it stands for.
 */
mp_status mps_each_device(mps_service *s, const mp_store_device_filter *f, const char *after, size_t limit,
			  mps_device_fn fn, void *ctx, bool *more, mp_error *err);
mp_status mps_each_model(mps_service *s, const mp_store_model_filter *f, const char *after, size_t limit,
			 mps_model_fn fn, void *ctx, bool *more, mp_error *err);

/* The store underneath (borrowed; lives as long as s). Defined in service.c, which the helpers below serve and so
 * does not include this header. */
mp_store *mps_store(mps_service *s);

/* mps_warn without a format: the parts concatenated (a NULL part is empty), for the warnings every plan may carry
 * (printf's walk of a long format is most of a short warning's cost). The same repeat, limit and cut rules. */
void mps_warn_cat(mps_warnings *w, const char *const *parts, size_t nparts);
/* v in decimal digits, in buf (24 bytes); returns where they start. */
char *mps_u64_text(uint64_t v, char buf[24]);

/* The shape keys the model's config left out (mp_model.defaulted_keys), as one warning. */
void mps_warn_model(const mps_model *m, mps_warnings *w);
/* DeepSeek-V4 (m->compressed_kv): its cache is transformers' layout (kv: the answer has one); what activations and the
 * step leave out. Nothing for other models. */
void mps_warn_compressed_kv(const mp_model *m, bool kv, mps_warnings *w);
/*
 * activation_recomputation as the framework the request implies runs it, when the request leaves it out: finetune
 * qlora -> full (peft's prepare_model_for_kbit_training, use_gradient_checkpointing=True by default: the QLoRA
 * recipe, peft/utils/other.py); else none (transformers' TrainingArguments.gradient_checkpointing is false,
 * Megatron-LM recomputes only with --recompute-granularity). Sets req->recompute; returns where it came from:
 * "request", "finetune" or "default" (static).
 */
const char *mps_training_defaults(const mps_training_job *job, mp_training_req *req);
/* The warning of a defaulted recomputation (none for "request"): with mem, its activations against the total; full
 * (may be NULL) the same plan with full recomputation, and whether it fits. */
void mps_warn_recompute(const char *from, const mp_training_memory *mem, const mp_training_memory *full,
			bool full_fits, mps_warnings *w);
/* A device whose capacity is its marketed label (no usable_memory_bytes). */
void mps_warn_capacity(const mp_store_device *d, mps_warnings *w);
/* A warning when d is not NVIDIA's (nor a CPU) and neither the request (requested_context_bytes) nor the profile
 * gives the runtime's reserve: the CUDA context and vLLM's CUDA defaults are assumed. */
void mps_warn_runtime(const mp_store_device *d, uint64_t requested_context_bytes, mps_warnings *w);
/*
 * The weights the step analysis reads per class (mp_step_req.weights): NULL in *use when every matrix is plain
 * weight_dtype (the step's own sizes are exact); else the whole model's weights (tensor parallel 1) as the plan
 * stores them: `have` itself when the plan's weights are at tp 1, else computed into *out from m, weight_dtype and
 * o (formats, compute dtype). have may be NULL (compute). Errors: mp_weight_bytes's (fields under pointer).
 */
mp_status mps_step_weights(const mp_model *m, mp_dtype weight_dtype, const mp_inference_opts *o, const mp_weights *have,
			   uint64_t have_tp, const char *pointer, mp_weights *out, const mp_weights **use, mp_error *err);
/* A sequence beyond the model's context, planned because allow_beyond_max_position_embeddings is true. */
void mps_warn_context(const mp_model *m, uint64_t tokens, bool allow_beyond, mps_warnings *w);
/* The prefill chunk the plan took from its engine's defaults because the request gave none (mps_engine.c): one short
 * sentence. mps_warn_prefill_rows is the same once for a capacity answer, whose rows each name their chunk. */
void mps_warn_prefill(const mps_inference_plan *p, mps_warnings *w);
void mps_warn_prefill_rows(const mps_prefill_choice *c, mps_warnings *w);
/*
 * The fit's budget (capacity x gpu_memory_utilization): where its fraction came from, "request", "engine_default"
 * (vLLM's default, the engine named) or "default" (1: the whole capacity, no engine named to say otherwise; static);
 * and the warning when it is the last, naming what vLLM would keep (its defaults for dev, which may be NULL) or, for
 * SGLang and TensorRT-LLM, the fraction their KV pool takes instead.
 */
const char *mps_budget_from(const mps_inference_job *j);
/* fraction: the engine's default share on dev, as mps_inference_opts_on found it (mps_prefill_choice); 0 when not
 * known, to look it up */
void mps_warn_budget(const mps_inference_job *j, const mp_store_device *dev, double fraction, mps_warnings *w);
/* KV heads copied on several tensor-parallel ranks. */
void mps_warn_kv_replication(const mp_model *m, const mp_inference_memory *mem, mps_warnings *w);

/*
 * The inference plan of job (defaults resolved into out->job) for a resolved model on a resolved device (NULL:
 * none): memory, fit, valid tensor-parallel degrees, performance and warnings, into *out (model and device
 * copied in). POST /v1/plan/inference and every capacity row are this one evaluation, so they cannot disagree.
 * Errors: the planner's, naming the request's fields.
 */
mp_status mps_plan_inference_on(const mps_model *m, const mp_store_device *dev, const mps_inference_job *job,
				mps_inference_plan *out, mp_error *err);

/*
 * The engine block of a llama.cpp or Ollama plan (mps_llamacpp.c): the GGUF model's placement on the plan's device(s),
 * the command and the buffers llama.cpp allocates, into p->engine (the command's arguments) and p->llama (heap,
 * freed by mps_inference_plan_release). Errors: MP_EINVAL (a model not from a GGUF file, a launch llama.cpp or
 * Ollama refuses, naming the field), MP_ENOMEM, the planner's.
 */
mp_status mps_llamacpp_block_for(const mps_inference_job *j, mps_inference_plan *p, mp_error *err);
/* The speed bounds of p's llama.cpp placement again with host's rates for the layers in host memory (a CPU
 * profile; NULL: none, the host's part unbounded). A no-op without a llama block. Errors: the planner's. */
mp_status mps_llamacpp_speed_for(mps_inference_plan *p, const mp_store_device *host, mp_error *err);

#endif /* MPS_SERVICE_INT_H */
