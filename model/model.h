/*
 * model.h: the readers of model descriptions. A Hugging Face config.json (as a cJSON tree or as text) or the API's
 * generic architecture object becomes the planner's mp_model. Owns the per-model_type knowledge of transformers'
 * configuration defaults and key aliases, so the planner never sees JSON. JSON in, planner structs out: no store,
 * no HTTP, no files. Used by codec/ (inline models in requests) and service/ (stored models, presets).
 */
#ifndef MPM_MODEL_H
#define MPM_MODEL_H

#include <cjson/cJSON.h>

#include "../planner/memplan.h"

/* The largest context a RoPE scaling may declare (factor x original_max_position_embeddings): 2^40 positions,
 * far above any plan's sequence_length (at most 2^24) and exact in a double; beyond it the config is refused
 * (422 naming .../rope_scaling/factor or .../rope_parameters/factor). */
#define MPM_MAX_ROPE_SCALED_POSITIONS (UINT64_C(1) << 40)

/*
 * Fills *m from cfg. Keys the config leaves out (or sets to null) take the model type's defaults as
 * transformers' <Type>Config.__init__ would. `pointer` is the JSON pointer of cfg in the request (for
 * example "/model/hf_config"); error fields are built under it. Also sets the training-time details
 * (mpm_training_extras). Errors: MP_EINVAL (a key has the wrong type or an impossible value), MP_EUNSUPPORTED
 * (model_type is not one memplan knows). Borrowed: cfg. Owned by the caller: *m.
 * Worked example (tests/test_models.c): ../ref/models/llama-3-8b.json -> 32 layers, 8 KV heads, 8,030,261,248
 * parameters once counted.
 */
mp_status mpm_from_hf(const cJSON *cfg, const char *pointer, mp_model *m, mp_error *err);

/*
 * mpm_from_hf reading cfg as the type `row` says (model/mpm_types.h) whatever its model_type names; row NULL: the
 * table's row of the config's model_type (mpm_from_hf). A row a caller writes is how a new type is tried before it
 * joins model/mpm_types.c. Errors and ownership: those of mpm_from_hf; borrowed: row.
 * Worked example (tests/test_types.c): Helium's row, written in the test, reads helium's default config to
 * 2,172,643,840 parameters, what transformers 5.24 builds (tests/ref/hf/groundtruth.json, helium-default).
 */
struct mpm_type;
mp_status mpm_from_hf_row(const cJSON *cfg, const char *pointer, const struct mpm_type *row, mp_model *m,
			  mp_error *err);

/* mpm_from_hf over config text (a stored model's config_json). Errors: MP_EPARSE (not JSON), those of
 * mpm_from_hf. Borrowed: json. */
mp_status mpm_from_hf_text(const char *json, const char *pointer, mp_model *m, mp_error *err);

/*
 * Fills *m from a generic architecture object (hidden_size, num_hidden_layers, num_attention_heads,
 * num_key_value_heads, head_dim, intermediate_size, ffn_kind, vocab_size, norms, biases, experts, MLA ranks;
 * see openapi.yaml ModelArchitecture) for models whose model_type memplan does not know. Errors: MP_EINVAL
 * naming "<pointer>/<key>". Borrowed: arch. Owned by the caller: *m.
 */
mp_status mpm_from_architecture(const cJSON *arch, const char *pointer, mp_model *m, mp_error *err);

/* A comma-separated list of the supported model_type values, for error messages. Static storage. */
const char *mpm_supported_types(void);

/*
 * Sets m->attention_dropout, hidden_dropout, embedding_dropout (probability > 0) and composite_activation
 * (gelu_new) from cfg (NULL: none given), with the model type's transformers defaults for absent keys
 * (GPT2Config: 0.1 for attn_pdrop, resid_pdrop and embd_pdrop, activation_function "gelu_new"; Llama-family
 * configs: no dropout). Only the training planner reads them. Never fails: values of the wrong type count as
 * absent. Borrowed: cfg.
 */
void mpm_training_extras(const cJSON *cfg, mp_model *m);

/*
 * What the config says about itself beside its shape (model/hf_facts.c), into m's config_* members: the checkpoint
 * dtype ("dtype", or the older "torch_dtype"; fp32, bf16 or fp16), its quantization_config (gptq/awq 4-bit ->
 * int4 with the scheme and group_size, fp8 -> fp8_e4m3, bitsandbytes -> nf4 or int8), and the shape keys it leaves
 * out (m->defaulted_keys, "name=value" with the value the type's default gave; m->max_position_defaulted). The
 * keys checked for every type are the hidden size, layers, heads, vocabulary and context under any of their
 * transformers spellings (n_embd, n_layer, ...; text_config too); the FFN width and KV heads only for the types
 * whose configs always state them (the llama family, phi3, deepseek_v3). Also the tanh soft-capping keys
 * (attn_logit_softcapping, final_logit_softcapping; Gemma2Config defaults 50.0 and 30.0, null = off).
 * mpm_from_hf calls it; m's shape must be decoded already. Never fails. Borrowed: cfg.
 * Worked example (tests/test_fidelity.c): {"model_type": "llama", "hidden_size": 4096} -> defaulted_keys
 * "num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=32, intermediate_size=11008,
 * vocab_size=32000, max_position_embeddings=2048".
 */
void mpm_config_facts(const cJSON *cfg, mp_model *m);
/* The same for a config whose decoder sits in text (a multimodal wrapper's text_config; NULL or cfg: a flat
 * config): shape facts from text, dtype and quantization_config from text else from the top-level cfg. */
void mpm_config_facts_of(const cJSON *cfg, const cJSON *text, mp_model *m);

#endif /* MPM_MODEL_H */
