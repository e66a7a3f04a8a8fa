/*
 * hf_config.h: decodes a Hugging Face config.json (as cJSON) into the planner's mp_model.
 * Owns the per-model_type knowledge of transformers' configuration defaults and key aliases; the planner
 * never sees JSON. Used by the daemon's handlers, the CLI and the store's preset seeding.
 */
#ifndef MPD_HF_CONFIG_H
#define MPD_HF_CONFIG_H

#include <cjson/cJSON.h>

#include "../planner/memplan.h"

/* The largest context a RoPE scaling may declare (factor x original_max_position_embeddings): 2^40 positions,
 * far above any plan's sequence_length (at most 2^24) and exact in a double; beyond it the config is refused
 * (422 naming .../rope_scaling/factor or .../rope_parameters/factor). */
#define MPD_MAX_ROPE_SCALED_POSITIONS (UINT64_C(1) << 40)

/*
 * Fills *m from cfg. Keys the config leaves out (or sets to null) take the model type's defaults as
 * transformers' <Type>Config.__init__ would. `pointer` is the JSON pointer of cfg in the request (for
 * example "/model/hf_config"); error fields are built under it. Errors: MP_EINVAL (a key has the wrong
 * type or an impossible value), MP_EUNSUPPORTED (model_type is not one memplan knows).
 * Borrowed: cfg. Owned by the caller: *m.
 */
mp_status mpd_model_from_hf(const cJSON *cfg, const char *pointer, mp_model *m, mp_error *err);

/*
 * Fills *m from a generic architecture object (hidden_size, num_hidden_layers, num_attention_heads,
 * num_key_value_heads, head_dim, intermediate_size, ffn_kind, vocab_size, norms, biases, experts, MLA ranks;
 * see openapi.yaml ModelArchitecture) for models whose model_type memplan does not know. Errors: MP_EINVAL
 * naming "<pointer>/<key>". Borrowed: arch. Owned by the caller: *m.
 */
mp_status mpd_model_from_architecture(const cJSON *arch, const char *pointer, mp_model *m, mp_error *err);

/* A comma-separated list of the supported model_type values, for error messages. Static storage. */
const char *mpd_hf_supported_types(void);

/* Parses config JSON text and counts its parameters (the store's preset-seeding callback). */
mp_status mpd_hf_count_parameters(const char *config_json, uint64_t *parameters, mp_error *err);

#endif /* MPD_HF_CONFIG_H */
