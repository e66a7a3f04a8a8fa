/*
 * hf_internal.h: what the config.json readers share inside model/ (hf_config.c, the first model types and the
 * helpers; hf_types.c, the dense decoder of the table's rows). A key that is absent or null takes the default; a key of
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
	const mp_names *names;	/* set by hf_decode_type: the decoder's tensor names (NULL: the Llama family's) */
	/* reads a nested config (a wrapper's text_config) by its model_type through the table (hf_decode_type, set by
	 * mpm_from_hf_row): the readers reach the table only through it, so the table and the readers it names
	 * do not include each other */
	bool (*decode_type)(struct hf_ctx *c, const char *type, bool text_only, mp_model *m);
} hf_ctx;

#define KEYS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* The first of the NULL-terminated alias keys that is present and not null (its name into *which), or NULL. */
const cJSON *hf_find(const hf_ctx *c, const char *const *keys, const char **which);
/* The spelling of keys the config uses (the first present and not null), else keys[0]: errors name the key as the
 * config spells it. */
const char *hf_key_of(const hf_ctx *c, const char *const *keys);
/* Whether key is present and not null. */
bool hf_has(const hf_ctx *c, const char *key);
/* Whether key is present with the value null (a config's explicit "none"). */
bool hf_is_null(const hf_ctx *c, const char *key);
uint64_t hf_get_u64(hf_ctx *c, const char *const *keys, uint64_t dflt);
double hf_get_double(hf_ctx *c, const cJSON *obj, const char *key, double dflt);
bool hf_get_bool(hf_ctx *c, const char *const *keys, bool dflt);
void hf_fail_key(hf_ctx *c, const char *key, const char *msg);
/* The sub-config `key` of a wrapper (vision_config, audio_config, qformer_config, ...) as a context of its own, its
 * JSON pointer written into pointer (cap bytes, the caller's): cfg NULL (the class defaults) when absent or null;
 * false and a 422 naming it when it is anything but an object; false when top already holds an error. */
bool hf_sub_config(hf_ctx *top, const char *key, char *pointer, size_t cap, hf_ctx *out);
/* a x b, or 0 and the error naming `key` when the product of two config values overflows 64 bits (a silent wrap would
 * give a small, wrong model). */
uint64_t hf_mul(hf_ctx *c, uint64_t a, uint64_t b, const char *key);
/* The rule of the configuration classes whose validate_architecture refuses a hidden_size that is not a multiple of
 * the heads, whatever head_dim says (LlamaConfig, Gemma2Config, Gemma3TextConfig, Gemma3nTextConfig, ArceeConfig,
 * ExaoneConfig, DeepseekV2Config, GPTNeoXConfig in transformers 5.24): a 422 naming heads_key. */
void hf_heads_divide_hidden(hf_ctx *c, const mp_model *m, const char *heads_key);
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

/*
 * A tensor of the family's own (a module no field of mp_model describes) into m's inventory, before mp_model_build
 * adds the rest: under roots[root] (MP_ROOT_*), path (static; NULL = none) and leaf (static); a matrix rows x cols
 * (MP_VIEW_LINEAR) or a vector of cols values; count of it; kind, TP split and step product as mp_tensor says.
 */
void hf_tensor(mp_model *m, uint8_t root, const char *path, const char *leaf, mp_tensor_kind kind, mp_tp_split split,
               mp_step_product step, bool vector, uint64_t rows, uint64_t cols, uint64_t count);
/* A tensor of an explicit shape (a convolution's, a buffer's) into m's inventory: a vector when ndim <= 1, else a matrix
 * of dims[0] rows; flags MP_TF_* (a buffer no checkpoint holds: MP_TF_BUFFER | MP_TF_UNCOUNTED). */
void hf_shape(mp_model *m, uint8_t root, const char *path, const char *leaf, mp_tensor_kind kind, unsigned flags,
              const uint64_t *dims, unsigned ndim, uint64_t count);
/* A tensor of the reader's own described by its class only (replicated, read by no step product unless the model's
 * attention differs per layer): an intermediate form while a family's modules are named one by one. */
void hf_legacy(mp_model *m, const char *name, mp_tensor_class cls, uint64_t rows, uint64_t cols, uint64_t count,
               bool vector);

/* The families' tensor names (model/hf_names.c). */
extern const mp_names mpm_names_phi3, mpm_names_glm, mpm_names_glm4, mpm_names_post_norms, mpm_names_apertus, mpm_names_bitnet, mpm_names_phi, mpm_names_starcoder2, mpm_names_hunyuan, mpm_names_gpt2, mpm_names_gpt_bigcode, mpm_names_gptj, mpm_names_gpt_neox, mpm_names_falcon, mpm_names_falcon_two_ln, mpm_names_gpt_oss, mpm_names_phimoe, mpm_names_qwen_moe, mpm_names_minimax_m2, mpm_names_ernie4_5_moe, mpm_names_ernie4_5_vl_moe, mpm_names_granitemoe, mpm_names_llama4, mpm_names_llama4_text, mpm_names_mamba, mpm_names_jamba, mpm_names_granitemoehybrid, mpm_names_granitemoehybrid_dense, mpm_names_nemotron_h, mpm_names_lfm2, mpm_names_qwen3_next, mpm_names_qwen3_5, mpm_names_longcat, mpm_names_zamba2;
/* model/hf_classic.c's families */
extern const mp_names mpm_names_opt, mpm_names_opt_proj, mpm_names_bloom, mpm_names_gpt_neo, mpm_names_codegen, mpm_names_mpt, mpm_names_mllama, mpm_names_xglm, mpm_names_biogpt;
/* model/hf_rows.c's and the new dense rows' */
extern const mp_names mpm_names_hyperclovax, mpm_names_vaultgemma, mpm_names_nanochat, mpm_names_persimmon, mpm_names_ctrl, mpm_names_openai_gpt, mpm_names_gpt_neox_japanese, mpm_names_moshi, mpm_names_apertus_pruned, mpm_names_dbrx, mpm_names_jetmoe;
/* Gemma 4's names by [per-layer inputs + 2 x MoE block], Gemma 3n's by [per-layer inputs]. */
extern const mp_names mpm_names_gemma4[4], mpm_names_gemma3n[2];
/* Gemma 3n's timm tower (model/hf_gemma3n_timm.c, generated). */
extern const mp_tensor mpm_gemma3n_timm[];
extern const size_t mpm_gemma3n_timm_count;
extern const uint64_t mpm_gemma3n_timm_parameters;

struct mpm_dense;
struct mpm_type;
/* The dense decoder of every dense row (model/hf_types.c). */
void mpm_read_dense(hf_ctx *c, const struct mpm_dense *d, mp_model *m);
/* The families' readers the rows of model/mpm_types.c name (each in the file of its family). */
void mpm_read_gpt2(hf_ctx *c, mp_model *m);
void mpm_read_falcon(hf_ctx *c, mp_model *m);
void mpm_read_gpt_neox(hf_ctx *c, mp_model *m);
void mpm_read_qwen2_moe(hf_ctx *c, mp_model *m);
void mpm_read_qwen3_moe(hf_ctx *c, mp_model *m);
void mpm_read_gptj(hf_ctx *c, mp_model *m);
void mpm_read_gpt_bigcode(hf_ctx *c, mp_model *m);
void mpm_read_mamba(hf_ctx *c, mp_model *m);
void mpm_read_mamba2(hf_ctx *c, mp_model *m);
void mpm_read_gpt_oss(hf_ctx *c, mp_model *m);
void mpm_read_mla(hf_ctx *c, mp_model *m);
void mpm_read_glm4_moe(hf_ctx *c, mp_model *m);
void mpm_read_olmoe(hf_ctx *c, mp_model *m);
void mpm_read_granitemoe(hf_ctx *c, mp_model *m);
void mpm_read_phimoe(hf_ctx *c, mp_model *m);
void mpm_read_ernie4_5_moe(hf_ctx *c, mp_model *m);
void mpm_read_ernie4_5_vl_moe_text(hf_ctx *c, mp_model *m);
void mpm_read_minimax_m2(hf_ctx *c, mp_model *m);
void mpm_read_dots1(hf_ctx *c, mp_model *m);
void mpm_read_qwen3_vl_moe_text(hf_ctx *c, mp_model *m);
void mpm_read_qwen3_omni_moe_text(hf_ctx *c, mp_model *m);
void mpm_read_llama4_text(hf_ctx *c, mp_model *m);
void mpm_read_hunyuan_v1_moe(hf_ctx *c, mp_model *m);
void mpm_read_longcat_flash(hf_ctx *c, mp_model *m);
void mpm_read_qwen3_next(hf_ctx *c, mp_model *m);
void mpm_read_qwen3_5_text(hf_ctx *c, mp_model *m);
void mpm_read_qwen3_5_moe_text(hf_ctx *c, mp_model *m);
void mpm_read_kimi_linear(hf_ctx *c, mp_model *m);
void mpm_read_bailing_hybrid(hf_ctx *c, mp_model *m);
void mpm_read_minimax(hf_ctx *c, mp_model *m);
void mpm_read_lfm2(hf_ctx *c, mp_model *m);
void mpm_read_lfm2_moe(hf_ctx *c, mp_model *m);
void mpm_read_lfm3(hf_ctx *c, mp_model *m);
void mpm_read_zamba(hf_ctx *c, mp_model *m);
void mpm_read_olmo_hybrid(hf_ctx *c, mp_model *m);
void mpm_read_lara_mini(hf_ctx *c, mp_model *m);
void mpm_read_hrm_text(hf_ctx *c, mp_model *m);
void mpm_read_doge(hf_ctx *c, mp_model *m);
void mpm_read_modernbert_decoder(hf_ctx *c, mp_model *m);
void mpm_read_xlstm(hf_ctx *c, mp_model *m);
void mpm_read_dory(hf_ctx *c, mp_model *m);
void mpm_read_cpmant(hf_ctx *c, mp_model *m);
extern const mp_names mpm_names_cpmant;
extern const mp_names mpm_names_xlstm;
extern const mp_names mpm_names_modernbert_decoder;
extern const mp_names mpm_names_olmo_hybrid;
extern const mp_names mpm_names_lfm3;
void mpm_read_jamba(hf_ctx *c, mp_model *m);
void mpm_read_bamba(hf_ctx *c, mp_model *m);
void mpm_read_granitemoehybrid(hf_ctx *c, mp_model *m);
void mpm_read_nemotron_h(hf_ctx *c, mp_model *m);
void mpm_read_falcon_h1(hf_ctx *c, mp_model *m);
void mpm_read_zamba2(hf_ctx *c, mp_model *m);
void mpm_read_wrapper(hf_ctx *c, mp_model *m);
/* model/hf_wrap_qformer.c: BLIP-2, InstructBLIP(-Video); GOT-OCR 2, PP-Chart2Table; DeepSeek-VL hybrid; Qianfan-OCR;
 * Granite 4 Vision;
 * MiniCPM-V 4.6 and 4.7, MiniCPM-OCR; Ovis2; MOSS transcribe-diarize; GIT */
void mpm_read_blip2(hf_ctx *c, mp_model *m);
void mpm_read_got_ocr2(hf_ctx *c, mp_model *m);
void mpm_read_deepseek_vl_hybrid(hf_ctx *c, mp_model *m);
void mpm_read_deepseek_ocr(hf_ctx *c, mp_model *m);
/* model/hf_vq.c: Chameleon, Janus; model/hf_mllama.c: IDEFICS */
void mpm_read_janus(hf_ctx *c, mp_model *m);
void mpm_read_idefics(hf_ctx *c, mp_model *m);
void mpm_read_chameleon(hf_ctx *c, mp_model *m);
void mpm_read_apertus1p5(hf_ctx *c, mp_model *m);
void mpm_read_qianfan_ocr(hf_ctx *c, mp_model *m);
void mpm_read_granite4_vision(hf_ctx *c, mp_model *m);
void mpm_read_minicpmv(hf_ctx *c, mp_model *m);
void mpm_read_ovis2(hf_ctx *c, mp_model *m);
void mpm_read_moss_transcribe_diarize(hf_ctx *c, mp_model *m);
void mpm_read_git(hf_ctx *c, mp_model *m);
/* The decoder of a wrapper's text_config into m (its model_type, else dflt's class defaults; `required`: a 422 when
 * absent), c->names and c->text set, m->model_type the wrapper's; false (c->st set) when memplan does not read it. */
bool hf_wrap_read_text(hf_ctx *c, const char *dflt, bool required, mp_model *m);
/* tie_word_embeddings of a wrapper whose lm_head sits at the top: its key (class default dflt), or text_config's when
 * only that states one. */
void hf_wrap_tie(hf_ctx *c, mp_model *m, bool dflt);
/* The class defaults of a CLIP-style vision_config: hidden and MLP widths, layers, heads, channels, image and patch
 * sides in px. */
typedef struct mpm_clip_defaults {
	uint64_t hidden, intermediate, layers, heads, channels, image, patch;
} mpm_clip_defaults;
/* A CLIP tower (modeling_clip.py CLIPVisionTransformer's modules) read from vision_config v with the class defaults
 * d (embed_dim: the width under IDEFICS's embed_dim, hidden_size its alias; else hidden_size), checked as its
 * attention class (named in the 422) and memplan's bounds do, and set in t under tower_root with no projector of its
 * own (the reader lists it under projector_root); out is the width it hands the decoder. Returns the tower's width;
 * on a bad key, v's error in c->st and 0. Used by GIT, Kosmos-2 and IDEFICS (model/hf_wrap_qformer.c). */
uint64_t mpm_clip_vision(hf_ctx *c, hf_ctx *v, const mpm_clip_defaults *d, bool embed_dim, const char *attention,
                         mp_vision *t, const char *tower_root, const char *projector_root, uint64_t out);
/* model/hf_wrap_vl.c: LFM3-VL, Granite-Docling, FastVLM, HunyuanOCR, Molmo2, Kosmos-2, Kosmos-2.5 */
void mpm_read_lfm3_vl(hf_ctx *c, mp_model *m);
void mpm_read_granite_docling(hf_ctx *c, mp_model *m);
void mpm_read_fast_vlm(hf_ctx *c, mp_model *m);
void mpm_read_perception_lm(hf_ctx *c, mp_model *m);
void mpm_read_hunyuan_vl(hf_ctx *c, mp_model *m);
void mpm_read_molmo2_text(hf_ctx *c, mp_model *m);
void mpm_read_molmo2(hf_ctx *c, mp_model *m);
extern const mp_names mpm_names_molmo2;
extern const mp_names mpm_names_kosmos2;
void mpm_read_kosmos2(hf_ctx *c, mp_model *m);
void mpm_read_kosmos2_5(hf_ctx *c, mp_model *m);
/* model/hf_fast_vlm_timm.c (generated): FastVLM's timm fastvit_mci3 tower */
extern const mp_tensor mpm_fast_vlm_timm[];
extern const size_t mpm_fast_vlm_timm_count;
extern const uint64_t mpm_fast_vlm_timm_parameters;
/* model/hf_perception_lm_timm.c (generated): Perception LM's timm vit_pe_core_large_patch14_336 tower */
extern const mp_tensor mpm_perception_lm_timm[];
extern const size_t mpm_perception_lm_timm_count;
extern const uint64_t mpm_perception_lm_timm_parameters;
void mpm_read_nemotron_h_omni(hf_ctx *c, mp_model *m);
void mpm_read_phi4_multimodal(hf_ctx *c, mp_model *m);
void mpm_read_muse_glimmer(hf_ctx *c, mp_model *m);
void mpm_read_muse_spark(hf_ctx *c, mp_model *m);
void mpm_read_gemma4(hf_ctx *c, mp_model *m);
void mpm_read_gemma4_text(hf_ctx *c, mp_model *m);
void mpm_read_gemma4_unified(hf_ctx *c, mp_model *m);
void mpm_read_gemma4_unified_text(hf_ctx *c, mp_model *m);
void mpm_read_gemma3n(hf_ctx *c, mp_model *m);
void mpm_read_gemma3n_text(hf_ctx *c, mp_model *m);
void mpm_read_deepseek_v4(hf_ctx *c, mp_model *m);
void mpm_read_opt(hf_ctx *c, mp_model *m);
void mpm_read_bloom(hf_ctx *c, mp_model *m);
void mpm_read_gpt_neo(hf_ctx *c, mp_model *m);
void mpm_read_codegen(hf_ctx *c, mp_model *m);
void mpm_read_mpt(hf_ctx *c, mp_model *m);
void mpm_read_mllama(hf_ctx *c, mp_model *m);
void mpm_read_xglm(hf_ctx *c, mp_model *m);
void mpm_read_biogpt(hf_ctx *c, mp_model *m);
void mpm_read_emu3(hf_ctx *c, mp_model *m);
void mpm_read_internlm3(hf_ctx *c, mp_model *m);
void mpm_read_iquestcoder(hf_ctx *c, mp_model *m);
void mpm_read_hyperclovax(hf_ctx *c, mp_model *m);
void mpm_read_diffllama(hf_ctx *c, mp_model *m);
void mpm_read_ctrl(hf_ctx *c, mp_model *m);
void mpm_read_openai_gpt(hf_ctx *c, mp_model *m);
void mpm_read_gpt_neox_japanese(hf_ctx *c, mp_model *m);
void mpm_read_moshi(hf_ctx *c, mp_model *m);
void mpm_read_minicpm3(hf_ctx *c, mp_model *m);
void mpm_read_sarvam_moe(hf_ctx *c, mp_model *m);
void mpm_read_mellum(hf_ctx *c, mp_model *m);
void mpm_read_solar_open(hf_ctx *c, mp_model *m);
void mpm_read_flex_olmo(hf_ctx *c, mp_model *m);
void mpm_read_granitemoeshared(hf_ctx *c, mp_model *m);
void mpm_read_granitemoe_swa(hf_ctx *c, mp_model *m);
void mpm_read_cohere2_moe(hf_ctx *c, mp_model *m);
void mpm_read_apertus1p5_text(hf_ctx *c, mp_model *m);
void mpm_read_muse_glimmer_text(hf_ctx *c, mp_model *m);
void mpm_read_muse_spark_text(hf_ctx *c, mp_model *m);
extern const mp_names mpm_names_muse_spark;
void mpm_read_dbrx(hf_ctx *c, mp_model *m);
void mpm_read_glm4v_moe_text(hf_ctx *c, mp_model *m);
void mpm_read_deepseek_ocr_text(hf_ctx *c, mp_model *m);
void mpm_read_jetmoe(hf_ctx *c, mp_model *m);
void mpm_read_exaone_moe(hf_ctx *c, mp_model *m);
void mpm_read_hy_v3(hf_ctx *c, mp_model *m);
void mpm_read_mimo_v2_flash(hf_ctx *c, mp_model *m);
extern const mp_names mpm_names_minimax_m3;
void mpm_read_minimax_m3_vl_text(hf_ctx *c, mp_model *m);
void mpm_read_cohere_compass_text(hf_ctx *c, mp_model *m);
extern const mp_names mpm_names_axk2;
void mpm_read_axk2(hf_ctx *c, mp_model *m);
void mpm_read_hy_v4(hf_ctx *c, mp_model *m);

/* The enumeration's later types (model/hf_recurrent.c, ...): their names and readers. */
extern const mp_names mpm_names_rwkv, mpm_names_recurrent_gemma;
void mpm_read_rwkv(hf_ctx *c, mp_model *m);
void mpm_read_recurrent_gemma(hf_ctx *c, mp_model *m);
/* model/hf_decoders.c */
extern const mp_names mpm_names_aria, mpm_names_kolibri1, mpm_names_laguna, mpm_names_afmoe;
void mpm_read_jais2(hf_ctx *c, mp_model *m);
void mpm_read_aria_text(hf_ctx *c, mp_model *m);
void mpm_read_kolibri1(hf_ctx *c, mp_model *m);
void mpm_read_flint(hf_ctx *c, mp_model *m);
void mpm_read_laguna(hf_ctx *c, mp_model *m);
void mpm_read_afmoe(hf_ctx *c, mp_model *m);
void mpm_read_axk1(hf_ctx *c, mp_model *m);
void mpm_read_beam(hf_ctx *c, mp_model *m);
extern const mp_names mpm_names_step3p5;
void mpm_read_step3p5(hf_ctx *c, mp_model *m);
/* model/hf_inkling.c */
extern const mp_names mpm_names_inkling, mpm_names_inkling2;
void mpm_read_inkling_text(hf_ctx *c, mp_model *m);
void mpm_read_inkling2_text(hf_ctx *c, mp_model *m);
void mpm_read_inkling2_loop_text(hf_ctx *c, mp_model *m);
/* Inkling 2's image tower and merger into m (its decoder read): dflt_text is text_hidden_size's default when
 * vision_config is absent. */
void mpm_inkling2_tower(hf_ctx *top, mp_model *m, uint64_t dflt_text);
/* Inkling's image (hierarchical MLP) and audio towers into m (its decoder read). */
void mpm_inkling_towers(hf_ctx *top, mp_model *m);
extern const mp_names mpm_names_mistral_large4;
void mpm_read_mistral_large4_text(hf_ctx *c, mp_model *m);
extern const mp_names mpm_names_dots3_note;
void mpm_read_dots3_note_text(hf_ctx *c, mp_model *m);
void mpm_read_zaya(hf_ctx *c, mp_model *m);
extern const mp_names mpm_names_zaya;
extern const mp_names mpm_names_qwen4_exp;
void mpm_read_qwen4_exp_text(hf_ctx *c, mp_model *m);
void mpm_read_glm5_next_text(hf_ctx *c, mp_model *m);

/* Reads c->cfg by row t (its model_type set, its names noted in c->names). */
void hf_decode_row(hf_ctx *c, const struct mpm_type *t, mp_model *m);

/* Decodes c->cfg as model_type `type` into *m (model_type set); text_only skips the wrappers (a text_config's type).
 * False when no reader knows the type. */
bool hf_decode_type(hf_ctx *c, const char *type, bool text_only, mp_model *m);

#endif /* MPM_HF_INTERNAL_H */
