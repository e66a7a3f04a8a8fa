/*
 * hf_internal.h: what the config.json readers share inside model/ (hf_config.c, the first model types and the
 * helpers; hf_types.c, the types added for issue 14). A key that is absent or null takes the default; a key of
 * the wrong type sets the context's error naming it under the config's pointer. Not a public header.
 */
#ifndef MPM_HF_INTERNAL_H
#define MPM_HF_INTERNAL_H

#include <cjson/cJSON.h>

#include "../planner/memplan.h"

typedef struct hf_ctx {
	const cJSON *cfg;	/* the object whose members are the config keys (the text_config of a wrapper) */
	const char *pointer;	/* its JSON pointer in the request */
	mp_error *err;
	mp_status st;		/* the first error; every reader below is a no-op once it is set */
	const cJSON *text;	/* set by a wrapper's decoder: the object its decoder's keys came from */
} hf_ctx;

#define KEYS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* The first of the NULL-terminated alias keys that is present and not null (its name into *which), or NULL. */
const cJSON *hf_find(const hf_ctx *c, const char *const *keys, const char **which);
/* Whether key is present and not null. */
bool hf_has(const hf_ctx *c, const char *key);
/* Whether key is present with the value null (a config's explicit "none"). */
bool hf_is_null(const hf_ctx *c, const char *key);
uint64_t hf_get_u64(hf_ctx *c, const char *const *keys, uint64_t dflt);
double hf_get_double(hf_ctx *c, const cJSON *obj, const char *key, double dflt);
bool hf_get_bool(hf_ctx *c, const char *const *keys, bool dflt);
void hf_fail_key(hf_ctx *c, const char *key, const char *msg);
/* a x b, or 0 and the error naming `key` when the product of two config values overflows 64 bits (a silent wrap would
 * give a small, wrong model). */
uint64_t hf_mul(hf_ctx *c, uint64_t a, uint64_t b, const char *key);
/* head_dim: explicit, else hidden_size / heads (which must divide). */
void hf_derive_head_dim(hf_ctx *c, mp_model *m, const char *heads_key);
/* RoPE keys (rope_parameters, rope_scaling, partial_rotary_factor) into rotary_dim, rope_type and the scaled
 * context. */
void hf_decode_rope(hf_ctx *c, mp_model *m, double partial_default);
/* layer_types: counts the sliding-window layers (and refuses unknown kinds). */
void hf_decode_layer_types(hf_ctx *c, mp_model *m);
void hf_decode_mlp_only_layers(hf_ctx *c, mp_model *m);
/*
 * The sliding window under `key`: absent = dflt (the type's default); null, 0 or false = no window (transformers
 * reads None as full attention: Mistral-7B-v0.3's "sliding_window": null is no window, not the 4096 default).
 */
uint64_t hf_window(hf_ctx *c, const char *key, uint64_t dflt);

/* A model type the readers know: its name and its decoder (which fills *m from c->cfg). */
typedef struct hf_type {
	const char *name;
	void (*decode)(hf_ctx *c, mp_model *m);
} hf_type;

/* The types of hf_types.c, and how many. */
extern const hf_type mpm_hf_more_types[];
extern const size_t mpm_hf_more_count;
/* The mixture-of-experts types of hf_moe.c (the DeepSeek family's MLA rows, GQA decoders with experts). */
extern const hf_type mpm_hf_moe_types[];
extern const size_t mpm_hf_moe_count;

/* The hybrid decoders of hf_hybrid.c (attention beside a linear-attention or convolution mixer). */
extern const hf_type mpm_hf_hybrid_types[];
extern const size_t mpm_hf_hybrid_count;
/* The multimodal wrappers of hf_wrap.c (a decoder in text_config, or flat, beside a vision_config). */
extern const hf_type mpm_hf_wrapper_types[];
extern const size_t mpm_hf_wrapper_count;

/* The Gemma decoders of hf_gemma.c whose layers differ (Gemma 4, Gemma 3n), with their wrappers. */
extern const hf_type mpm_hf_gemma_types[];
extern const size_t mpm_hf_gemma_count;

/* DeepSeek-V4 of hf_deepseek4.c (hyper-connections, compressed attention). */
extern const hf_type mpm_hf_deepseek4_types[];
extern const size_t mpm_hf_deepseek4_count;

/* Decodes c->cfg as model_type `type` into *m (model_type set); text_only skips the wrappers (a text_config's type).
 * False when no reader knows the type. */
bool hf_decode_type(hf_ctx *c, const char *type, bool text_only, mp_model *m);

#endif /* MPM_HF_INTERNAL_H */
