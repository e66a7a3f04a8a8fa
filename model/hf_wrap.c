/*
 * hf_wrap.c: multimodal wrappers (Gemma 3, LLaVA, Mistral 3, Qwen2-VL, Qwen2.5-VL, Qwen3-VL and its MoE,
 * Qwen3.5 and its MoE). The decoder is the
 * config's text_config (its model_type, or the wrapper's default decoder), or the config itself when it is flat
 * (Qwen2-VL and Qwen2.5-VL checkpoints keep the decoder's keys at the top, as transformers still reads them); the
 * image tower and projector come from vision_config and the wrapper's own keys into mp_model.vision. Defaults are
 * the transformers 5.24 configuration classes': the wrapper's sub-config when vision_config is absent, the vision
 * config class's for keys a given vision_config leaves out. The KV cache is the decoder's alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hf_internal.h"
#include "model.h"

/* A vision config class's defaults (configuration_<tower>.py). */
typedef struct vision_defaults {
	const char *type; /* the vision_config's model_type */
	uint64_t hidden, inter, layers, channels, image, patch;
	/* Qwen-VL towers */
	uint64_t out_hidden, merge, temporal, positions, deepstack;
} vision_defaults;

static const vision_defaults vision_classes[] = {
    /* SiglipVisionConfig: 768 wide, MLP 3072, 12 layers, 224 px, 16 px patches, vision_use_head True */
    {"siglip_vision_model", 768, 3072, 12, 3, 224, 16, 0, 0, 0, 0, 0},
    /* CLIPVisionConfig: 768 wide, MLP 3072, 12 layers, 224 px, 32 px patches */
    {"clip_vision_model", 768, 3072, 12, 3, 224, 32, 0, 0, 0, 0, 0},
    /* PixtralVisionConfig: 1024 wide, MLP 4096, 24 layers, 1024 px, 16 px patches */
    {"pixtral", 1024, 4096, 24, 3, 1024, 16, 0, 0, 0, 0, 0},
    /* Qwen2VLVisionConfig: embed_dim 1280, mlp_ratio 4, depth 32, 14 px patches x 2 frames, merge 2, out 3584 */
    {"qwen2_vl_vision", 1280, 5120, 32, 3, 0, 14, 3584, 2, 2, 0, 0},
    /* Qwen2_5_VLVisionConfig: hidden 3584, MLP 3420, depth 32, 14 px x 2 frames, merge 2, out_hidden 3584 */
    {"qwen2_5_vl_vision", 3584, 3420, 32, 3, 0, 14, 3584, 2, 2, 0, 0},
    /* Qwen3VLVisionConfig: hidden 1152, MLP 4304, depth 27, 16 px x 2 frames, merge 2, out_hidden 3584, 2304
     * learned positions, DeepStack at layers 8, 16, 24 */
    {"qwen3_vl_vision", 1152, 4304, 27, 3, 0, 16, 3584, 2, 2, 2304, 3},
    /* Qwen3VLMoeVisionConfig: the same tower */
    {"qwen3_vl_moe_vision", 1152, 4304, 27, 3, 0, 16, 3584, 2, 2, 2304, 3},
    /* CohereCompassVisionConfig: Qwen3-VL's tower (CohereCompassVisionModel: the same modules and defaults) */
    {"cohere_compass_vision", 1152, 4304, 27, 3, 0, 16, 3584, 2, 2, 2304, 3},
    /* Llama4VisionConfig: 768 wide, MLP 5632, 34 layers, 448 px, 14 px patches (adapter and projector below) */
    {"llama4_vision_model", 768, 5632, 34, 3, 448, 14, 0, 0, 0, 0, 0},
    /* Qwen3_5VisionConfig, Qwen3_5MoeVisionConfig: Qwen3-VL's tower without DeepStack mergers */
    {"qwen3_5_vision", 1152, 4304, 27, 3, 0, 16, 3584, 2, 2, 2304, 0},
    {"qwen3_5_moe_vision", 1152, 4304, 27, 3, 0, 16, 3584, 2, 2, 2304, 0},
    /* Qwen4ExpVisionConfig: Qwen3.5's tower and defaults (no DeepStack) */
    {"qwen4_exp_vision", 1152, 4304, 27, 3, 0, 16, 3584, 2, 2, 2304, 0},
    /* Idefics3VisionConfig, SmolVLMVisionConfig, Idefics2VisionConfig: SigLIP's transformer without its head
     * (1152 or 768 wide, MLP 3072, 12 layers, 224 px, 32 px patches) */
    {"idefics3_vision", 1152, 3072, 12, 3, 224, 32, 0, 0, 0, 0, 0},
    {"smolvlm_vision", 1152, 3072, 12, 3, 224, 32, 0, 0, 0, 0, 0},
    {"idefics2_vision", 768, 3072, 12, 3, 224, 32, 0, 0, 0, 0, 0},
    /* Siglip2VisionConfig: 768 wide, MLP 3072, 12 layers, 16 px patches, num_patches 256 learned positions (no
     * image_size: the positions are the table's rows), vision_use_head True */
    {"siglip2_vision_model", 768, 3072, 12, 3, 0, 16, 0, 0, 0, 256, 0},
    /* VideoLlama3VisionConfig: SigLIP's blocks (768 wide, MLP 3072, 12 layers, 16 px patches), rotary positions */
    {"video_llama_3_vision", 768, 3072, 12, 3, 0, 16, 0, 0, 0, 0, 0},
    /* Exaone4_5_VisionConfig: Qwen2.5-VL's tower (3584 wide, MLP 3420, depth 32, 14 px x 2 frames, merge 2, out 3584)
     * with num_heads 16 and num_key_value_heads 8 in its fused qkv */
    {"exaone4_5_vision", 3584, 3420, 32, 3, 0, 14, 3584, 2, 2, 0, 0},
    /* PaddleOCRVisionConfig: SigLIP's tower (1152 wide, MLP 4304, 27 layers, 384 px, 14 px patches, no head),
     * spatial_merge_size 2 for the projector */
    {"paddleocr_vl_vision", 1152, 4304, 27, 3, 384, 14, 0, 2, 0, 0, 0},
    /* Cosmos3EdgeVisionConfig: SigLIP 2's tower (1152 wide, MLP 4304, 27 layers, 16 px patches, 256 positions, no
     * head), spatial_merge_size 2 */
    {"cosmos3_edge_vision", 1152, 4304, 27, 3, 0, 16, 0, 2, 0, 256, 0},
    /* Qwen2_5OmniVisionEncoderConfig: Qwen2.5-VL's tower and defaults */
    {"qwen2_5_omni_vision_encoder", 3584, 3420, 32, 3, 0, 14, 3584, 2, 2, 0, 0},
    /* Qwen3OmniMoeVisionEncoderConfig: Qwen3-VL's tower and defaults (DeepStack at 8, 16, 24), its mergers named as
     * Qwen2.5-VL's (mp_vision.omni_merger) */
    {"qwen3_omni_moe_vision_encoder", 1152, 4304, 27, 3, 0, 16, 3584, 2, 2, 2304, 3},
};

typedef struct wrap_row {
	const char *name;
	const char *text_type;   /* decoder when text_config gives no model_type, or the config is flat */
	const char *vision_type; /* vision class when vision_config gives no model_type */
	bool tie;                /* the wrapper's tie_word_embeddings default */
	bool tie_from_text;      /* a text_config's tie_word_embeddings true ties too (LLaVA, Qwen-VL back-compat) */
	bool flat;               /* the decoder's keys may sit at the top (Qwen2-VL, Qwen2.5-VL) */
	/* the wrapper's vision_config when absent (its SubConfig defaults), over the class's */
	uint64_t hidden, inter, layers, image, patch;
	uint8_t projector;       /* WRAP_PROJ_*: the wrapper's projector when it is not the tower's usual one */
	bool newline;            /* image_newline, a vector of the decoder's width under model. (LLaVA-NeXT) */
	bool no_head;            /* SigLIP without its attention-pooling head when vision_config is absent */
	bool text_required;      /* the wrapper's defaults for an absent text_config are not the decoder class's */
	const char *tower_root, *projector_root; /* NULL: the tower's */
	const char *text_root;   /* the decoder's root: NULL = model.language_model. (Idefics: model.text_model.) */
	/* the head is tied by the decoder's own config alone (Llama 4: lm_head lives in language_model, a
	 * Llama4ForCausalLM whose config is text_config; the wrapper's tie_word_embeddings ties nothing) */
	bool tie_inner;
} wrap_row;

/* What some wrappers add to their row (looked up by name: wrap_extra). */
typedef struct wrap_extra {
	const char *name;
	const char *twin_root; /* a second copy of the tower under this root (Video-LLaVA's image_tower) */
	uint64_t vision_heads; /* the absent vision_config's num_attention_heads where the wrapper's default needs
	                        * checking (Aya Vision's 14 heads do not divide its 1152) */
	const char *vision_alias; /* a vision_config model_type the wrapper's config renames to its vision_type
	                           * (HyperCLOVAXVisionV2Config.__post_init__: "qwen2_5_vl") */
	bool never_tied;          /* the class ties nothing whatever tie_word_embeddings says (Cosmos3-Edge's
	                           * _tied_weights_keys = {}) */
	uint8_t omni_audio;       /* the Omni Thinkers' audio encoder from audio_config (omni_audio): 2 Qwen2.5-Omni's,
	                           * 3 Qwen3-Omni's */
} wrap_extra;

static const wrap_extra wrap_extras[] = {
    {"video_llava", "model.image_tower.", 0, NULL, false, 0},
    {"aya_vision", NULL, 14, NULL, false, 0},
    {"hyperclovax_vision_v2", NULL, 0, "qwen2_5_vl", false, 0},
    {"qwen4_exp", NULL, 0, "qwen4_exp", false, 0}, /* Qwen4ExpConfig.__post_init__: an old checkpoint's "qwen4_exp" */
    {"cosmos3_edge", NULL, 0, NULL, true, 0},
    {"qwen2_5_omni_thinker", NULL, 0, NULL, false, 2},
    {"qwen3_omni_moe_thinker", NULL, 0, NULL, false, 3},
    {"inkling2", NULL, 0, NULL, true, 0},
    {"inkling2_loop", NULL, 0, NULL, true, 0},
    {"inkling_mm_model", NULL, 0, NULL, true, 0},
};

static void kimi_put(mp_model *m, uint8_t root, const char *path, const char *leaf, mp_tensor_kind k, uint64_t rows,
                     uint64_t cols, uint64_t count);

/* w's extras, or none (every member zero). */
static wrap_extra wrap_extra_of(const char *name)
{
	for (size_t i = 0; i < sizeof(wrap_extras) / sizeof(wrap_extras[0]); i++)
		if (strcmp(wrap_extras[i].name, name) == 0)
			return wrap_extras[i];
	return (wrap_extra){name, NULL, 0, NULL, false, 0};
}

/* Projectors of the wrappers below wraps[] (wrap_projector_v1), numbered apart from the list above. */
enum {
	WRAP_PROJ_LFM2 = 64, /* Lfm2VlMultiModalProjector: [LayerNorm], linear_1, GELU, linear_2 after a pixel unshuffle */
	WRAP_PROJ_AYA,       /* AyaVisionMultiModalProjector: pixel shuffle, LayerNorm, SwiGLU linear_1, linear_2 */
	WRAP_PROJ_HCX,       /* HyperCLOVAXVisionV2Model.projector: one biased linear after the Qwen2.5-VL merger */
	WRAP_PROJ_READOUT,   /* VideoLlama3Projector: readout.0 (tower -> decoder) and readout.2 (decoder square) */
	WRAP_PROJ_PADDLE,    /* PaddleOCRProjector: pre_norm, linear_1 over merge^2 patches, linear_2 */
	WRAP_PROJ_COSMOS3_EDGE, /* Cosmos3EdgePatchMerger: norm, linear_fc1 over merge^2 patches, linear_fc2 */
	WRAP_PROJ_KIMI,      /* Kimi K2.5's MoonViT tower and mm_projector, listed by the reader (kimi_k25_tower) */
	WRAP_PROJ_ARIA,      /* AriaProjector: learned queries, a cross-attention over the patches, an MLP */
	WRAP_PROJ_GLM_OCR,   /* GLM-OCR's own tower with its merger, listed by the reader (glm_ocr_tower) */
	WRAP_PROJ_INKLING2,  /* Inkling 2's tower with its merger, listed by model/hf_inkling.c (mpm_inkling2_tower) */
	WRAP_PROJ_INKLING,   /* Inkling's image and audio towers, listed by model/hf_inkling.c (mpm_inkling_towers) */
};

/* The wrappers' projectors other than their tower's usual one (mp_vision.projector), listed by the reader when the
 * planner has no kind for them (MP_PROJECTOR_NONE): */
enum {
	WRAP_PROJ_TOWER = 0, /* the tower's (decode_vision) */
	WRAP_PROJ_MLP2,      /* LLaVA's linear_1, GELU, linear_2 with biases, over any tower (LLaVA-NeXT, OneVision) */
	WRAP_PROJ_LINEAR,    /* one linear with a bias to projection_dim (PaliGemmaMultiModalProjector) */
	WRAP_PROJ_VIPLLAVA,  /* a LayerNorm over the concatenated feature layers, then linear_1 and linear_2 */
	WRAP_PROJ_SHUFFLE,   /* pixel shuffle by downsample_factor, linear_1 to alignment_intermediate_size, SwiGLU,
	                      * linear_2 from half of it (Cohere2VisionMultiModalProjector) */
	WRAP_PROJ_IDEFICS3,  /* pixel shuffle by scale_factor, one linear without bias (Idefics3Connector, SmolVLM's) */
	WRAP_PROJ_IDEFICS2,  /* a gated MLP to the decoder's width and the perceiver resampler (Idefics2Connector) */
	WRAP_PROJ_INTERNVL,  /* InternVL's own tower and projector, listed by the reader (internvl_tower) */
	WRAP_PROJ_GLM4V,     /* GLM-4V's own tower with its merger, listed by the reader (glm4v_tower) */
	WRAP_PROJ_FUYU,      /* no tower: vision_embed_tokens projects raw patches (FuyuModel) */
	WRAP_PROJ_ALIGNER,   /* linear1 and linear2 with biases under model.aligner (DeepseekVLAligner) */
	WRAP_PROJ_HYV4VL,    /* Hunyuan V4 VL's own tower and patch merger, listed by the reader (hyv4vl_tower) */
	WRAP_PROJ_MINIMAX_M3, /* MiniMax-M3's CLIP-like tower and two-MLP projector, listed by the reader (m3_tower) */
	WRAP_PROJ_STEP3P7,   /* Step 3.7's tower with its two downsampling convolutions and one linear, listed by the
	                      * reader (step3p7_tower) */
	WRAP_PROJ_DOTS3,     /* dots.llm3 Note's tower with its pyramid of experts and its audio encoder, listed by the
	                      * reader (dots3_towers) */
	WRAP_PROJ_GLM5_NEXT, /* GLM-5.3-Flash's tower with its downsample and merger, listed by the reader (glm5_tower) */
	WRAP_PROJ_ERNIE_VL,  /* ERNIE-4.5-VL's tower and resampler, listed by the reader (ernie_vl_tower) */
};

static const wrap_row wraps[] = {
    /* Gemma3Config: Gemma3TextConfig + SiglipVisionConfig(); tied */
    {"gemma3", "gemma3_text", "siglip_vision_model", true, false, false, 0, 0, 0, 0, 0, WRAP_PROJ_TOWER, false, false, false, NULL, NULL, NULL, false},
    /* LlavaConfig: LlamaConfig + CLIPVisionConfig(hidden 1024, MLP 4096, 24 layers, 336 px, 14 px patches) */
    {"llava", "llama", "clip_vision_model", false, true, false, 1024, 4096, 24, 336, 14, WRAP_PROJ_TOWER, false, false, false, NULL, NULL, NULL, false},
    /* Mistral3Config: MistralConfig + PixtralVisionConfig(1024, 4096, 24 layers, 1540 px, 14 px patches); tied */
    {"mistral3", "mistral", "pixtral", true, false, false, 1024, 4096, 24, 1540, 14, WRAP_PROJ_TOWER, false, false, false, NULL, NULL, NULL, false},
    /* MistralLarge4Config: Mistral Large 4's decoder and Pixtral (its SubConfigSpec: 2048 wide, MLP 6144, 30 layers,
     * 1540 px, 14 px patches), Mistral 3's projector, untied */
    {"mistral_large4", "mistral_large4_text", "pixtral", false, false, false, 2048, 6144, 30, 1540, 14, WRAP_PROJ_TOWER,
     false, false, false, NULL, NULL, NULL, false},
    {"qwen2_vl", "qwen2_vl_text", "qwen2_vl_vision", false, true, true, 0, 0, 0, 0, 0, WRAP_PROJ_TOWER, false, false, false, NULL, NULL, NULL, false},
    {"qwen2_5_vl", "qwen2_5_vl_text", "qwen2_5_vl_vision", false, true, true, 0, 0, 0, 0, 0, WRAP_PROJ_TOWER, false, false, false, NULL, NULL, NULL, false},
    /* Qwen3VLConfig, Qwen3VLMoeConfig: no back-compat for a text_config's tie_word_embeddings */
    {"qwen3_vl", "qwen3_vl_text", "qwen3_vl_vision", false, false, false, 0, 0, 0, 0, 0, WRAP_PROJ_TOWER, false, false, false, NULL, NULL, NULL, false},
    {"qwen3_vl_moe", "qwen3_vl_moe_text", "qwen3_vl_vision", false, false, false, 0, 0, 0, 0, 0, WRAP_PROJ_TOWER, false, false, false, NULL, NULL, NULL, false},
    /* Qwen3_5Config, Qwen3_5MoeConfig (Qwen3.5): the gated-delta-net decoders of hf_hybrid.c with the tower */
    {"qwen3_5", "qwen3_5_text", "qwen3_5_vision", false, false, false, 0, 0, 0, 0, 0, WRAP_PROJ_TOWER, false, false, false, NULL, NULL, NULL, false},
    {"qwen3_5_moe", "qwen3_5_moe_text", "qwen3_5_moe_vision", false, false, false, 0, 0, 0, 0, 0, WRAP_PROJ_TOWER, false, false, false, NULL, NULL, NULL, false},
    /* Qwen4ExpConfig (Qwen4-Exp): its decoder (hf_hybrid.c) with Qwen3.5's tower, untied */
    {"qwen4_exp", "qwen4_exp_text", "qwen4_exp_vision", false, false, false, 0, 0, 0, 0, 0, WRAP_PROJ_TOWER, false, false, false, NULL, NULL, NULL, false},
    /* Llama4Config: Llama4TextConfig + Llama4VisionConfig */
    {"llama4", "llama4_text", "llama4_vision_model", false, false, false, 0, 0, 0, 0, 0, WRAP_PROJ_TOWER, false, false, false, NULL, NULL, NULL, true},
    /* ShieldGemma2Config: Gemma 3's (Gemma3ForConditionalGeneration); tied unless text_config unties */
    {"shieldgemma2", "gemma3_text", "siglip_vision_model", false, true, false, 0, 0, 0, 0, 0, WRAP_PROJ_TOWER, false, false,
     false, NULL, NULL, NULL, false},
    /* LlavaNextConfig, LlavaNextVideoConfig: LLaVA's CLIP tower and projector, image_newline; VipLlavaConfig: the
     * same tower, its projector over five feature layers (vision_feature_layer) */
    {"llava_next", "llama", "clip_vision_model", false, false, false, 1024, 4096, 24, 336, 14, WRAP_PROJ_MLP2, true, false,
     false, NULL, NULL, NULL, false},
    {"llava_next_video", "llama", "clip_vision_model", false, true, false, 1024, 4096, 24, 336, 14, WRAP_PROJ_MLP2, true,
     false, false, NULL, NULL, NULL, false},
    {"vipllava", "llama", "clip_vision_model", false, false, false, 1024, 4096, 24, 336, 14, WRAP_PROJ_VIPLLAVA, false,
     false, false, NULL, NULL, NULL, false},
    /* LlavaOnevisionConfig: Qwen2 and SigLIP (1152 wide, MLP 4304, 26 layers, 384 px, 14 px patches, no head),
     * LLaVA's projector, image_newline */
    {"llava_onevision", "qwen2", "siglip_vision_model", false, true, false, 1152, 4304, 26, 384, 14, WRAP_PROJ_MLP2, true,
     true, false, NULL, NULL, NULL, false},
    /* PaliGemmaConfig: Gemma and SigLIP (1152, MLP 4096, 27 layers, 224 px, 14 px, no head), tied, one linear
     * projector; its own defaults for an absent text_config (hidden 2048, 18 layers, kv 1) */
    {"paligemma", "gemma", "siglip_vision_model", true, false, false, 1152, 4096, 27, 224, 14, WRAP_PROJ_LINEAR, false, true,
     true, NULL, NULL, NULL, false},
    /* LightOnOcrConfig: Qwen3 (its own defaults for an absent text_config) and Pixtral (1540 px, 14 px patches) under
     * model.vision_encoder, Mistral 3's projector without biases under model.vision_projection, tied */
    {"lighton_ocr", "qwen3", "pixtral", true, false, false, 0, 0, 0, 1540, 14, WRAP_PROJ_TOWER, false, false, true,
     "model.vision_encoder.", "model.vision_projection.", NULL, false},
    /* Cohere2VisionConfig: Cohere 2 and SigLIP (1152, MLP 3072, 27 layers, 512 px, 16 px patches, with its head),
     * the pixel-shuffle SwiGLU projector, tied */
    {"cohere2_vision", "cohere2", "siglip_vision_model", true, false, false, 1152, 3072, 27, 512, 16, WRAP_PROJ_SHUFFLE,
     false, false, false, NULL, NULL, NULL, false},
    /* CohereCompassConfig: Cohere Compass's decoder and its Qwen3-VL tower, untied */
    {"cohere_compass", "cohere_compass_text", "cohere_compass_vision", false, false, false, 0, 0, 0, 0, 0, WRAP_PROJ_TOWER,
     false, false, false, NULL, NULL, NULL, false},
    /* Cosmos3OmniConfig: Qwen3-VL's decoder and tower */
    {"cosmos3_omni", "qwen3_vl_text", "qwen3_vl_vision", false, false, false, 0, 0, 0, 0, 0, WRAP_PROJ_TOWER, false, false,
     false, NULL, NULL, NULL, false},
    /* Idefics3Config, SmolVLMConfig: Llama and their SigLIP tower under model.vision_model, the decoder under
     * model.text_model, the pixel-shuffle connector; Idefics2Config: Mistral, its tower, the perceiver connector */
    {"idefics3", "llama", "idefics3_vision", false, false, false, 0, 0, 0, 0, 0, WRAP_PROJ_IDEFICS3, false, false, false,
     "model.vision_model.", "model.connector.", "model.text_model.", false},
    {"smolvlm", "llama", "smolvlm_vision", false, false, false, 0, 0, 0, 0, 0, WRAP_PROJ_IDEFICS3, false, false, false,
     "model.vision_model.", "model.connector.", "model.text_model.", false},
    {"idefics2", "mistral", "idefics2_vision", false, false, false, 0, 0, 0, 0, 0, WRAP_PROJ_IDEFICS2, false, false, false,
     "model.vision_model.", "model.connector.", "model.text_model.", false},
    /* Glm4vConfig, Glm46VConfig (and glmga, the same class), Glm4vMoeConfig: GLM-4V's decoders and tower */
    {"glm4v", "glm4v_text", "glm4v_vision", false, false, false, 0, 0, 0, 0, 0, WRAP_PROJ_GLM4V, false, false, false, NULL,
     NULL, NULL, false},
    {"glm46v", "glm4v_text", "glm4v_vision", false, false, false, 0, 0, 0, 0, 0, WRAP_PROJ_GLM4V, false, false, false,
     NULL, NULL, NULL, false},
    {"glmga", "glm4v_text", "glm4v_vision", false, false, false, 0, 0, 0, 0, 0, WRAP_PROJ_GLM4V, false, false, false, NULL,
     NULL, NULL, false},
    {"glm4v_moe", "glm4v_moe_text", "glm4v_moe_vision", false, false, false, 0, 0, 0, 0, 0, WRAP_PROJ_GLM4V, false, false,
     false, NULL, NULL, NULL, false},
    /* Ernie4_5_VLMoeConfig (ERNIE-4.5-VL): its decoder (model/hf_moe.c, two expert groups) with its own tower and
     * resampler; tied */
    {"ernie4_5_vl_moe", "ernie4_5_vl_moe_text", "ernie4_5_vl_moe_vision", true, false, false, 0, 0, 0, 0, 0,
     WRAP_PROJ_ERNIE_VL, false, false, false, NULL, NULL, NULL, false},
    /* FuyuConfig: Persimmon, raw patches projected by vision_embed_tokens, untied */
    {"fuyu", "persimmon", "none", false, false, false, 0, 0, 0, 0, 0, WRAP_PROJ_FUYU, false, false, false, NULL, NULL,
     NULL, false},
    /* DeepseekVLConfig: Llama and SigLIP (with its head) under model.vision_model, the aligner, tied */
    {"deepseek_vl", "llama", "siglip_vision_model", true, false, false, 0, 0, 0, 0, 0, WRAP_PROJ_ALIGNER, false, false,
     false, "model.vision_model.", NULL, NULL, false},
    /* HYV4VLConfig: Hunyuan V4 VL's decoder and its own tower (hyv4vl_tower), untied */
    {"hy_v4_vl", "hy_v4_vl_text", "hy_v4_vl_vision", false, false, false, 0, 0, 0, 0, 0, WRAP_PROJ_HYV4VL, false, false,
     false, NULL, NULL, NULL, false},
    /* MiniMaxM3VLConfig: MiniMax-M3's decoder and its own tower and projector (m3_tower); untied unless text_config
     * ties (its __post_init__) */
    {"minimax_m3_vl", "minimax_m3_vl_text", "minimax_m3_vl_vision", false, true, false, 0, 0, 0, 0, 0,
     WRAP_PROJ_MINIMAX_M3, false, false, false, NULL, NULL, NULL, false},
    /* Step3p7Config: Step 3.5's decoder (step3p5) and its own tower and projector (step3p7_tower); no
     * tie_word_embeddings field: untied unless the config states it */
    {.name = "step3p7", .text_type = "step3p5", .vision_type = "step3p5_vision", .projector = WRAP_PROJ_STEP3P7},
    /* Dots3NoteConfig: dots.llm3 Note's decoder (its keys in text_config, or at the top: flat) and its vision and
     * audio towers (dots3_towers), untied */
    {.name = "dots3_note", .text_type = "dots3_note_text", .vision_type = "dots3_note_vision_encoder", .flat = true,
     .projector = WRAP_PROJ_DOTS3},
    /* Glm5NextConfig (GLM-5.3-Flash): its decoder (in text_config, or at the top: flat) and its tower (glm5_tower),
     * untied */
    {.name = "glm5_next", .text_type = "glm5_next_text", .vision_type = "glm5_next_vision", .flat = true,
     .projector = WRAP_PROJ_GLM5_NEXT},
    /* InternVLConfig: Qwen2 and InternVL's tower (internvl_tower), tied */
    {"internvl", "qwen2", "internvl_vision", true, false, false, 0, 0, 0, 0, 0, WRAP_PROJ_INTERNVL, false, false, false,
     NULL, NULL, NULL, false},
    /* VideoLlavaConfig: Llama and CLIP (1024 wide, MLP 4096, 24 layers, 224 px, 14 px patches) twice, as
     * model.video_tower and model.image_tower, LLaVA's projector (multimodal_projector_bias True), untied */
    {.name = "video_llava", .text_type = "llama", .vision_type = "clip_vision_model", .hidden = 1024, .inter = 4096,
     .layers = 24, .image = 224, .patch = 14, .projector = WRAP_PROJ_MLP2, .tower_root = "model.video_tower."},
    /* Lfm2VlConfig: LFM2 and SigLIP 2 (Siglip2VisionConfig's defaults), its projector, tied (tie_embedding too) */
    {.name = "lfm2_vl", .text_type = "lfm2", .vision_type = "siglip2_vision_model", .tie = true,
     .projector = WRAP_PROJ_LFM2},
    /* AyaVisionConfig: Cohere 2 and SigLIP (1152 wide, MLP 4304, 26 layers, 384 px, 14 px patches, 14 heads, no
     * head), the pixel-shuffle LayerNorm SwiGLU projector, tied */
    {.name = "aya_vision", .text_type = "cohere2", .vision_type = "siglip_vision_model", .tie = true, .hidden = 1152,
     .inter = 4304, .layers = 26, .image = 384, .patch = 14, .projector = WRAP_PROJ_AYA, .no_head = true},
    /* HyperCLOVAXVisionV2Config: HyperCLOVAX and the Qwen2.5-VL tower under model.vision_model, one linear from
     * out_hidden_size to the decoder's width (model.projector), tied */
    {.name = "hyperclovax_vision_v2", .text_type = "hyperclovax", .vision_type = "qwen2_5_vl_vision", .tie = true,
     .projector = WRAP_PROJ_HCX, .tower_root = "model.vision_model.", .projector_root = "model."},
    /* VideoLlama3Config: Qwen2 and its SigLIP-like tower under model.vision_model, the readout projector
     * (model.projector.readout: Linear(tower, decoder), GELU, Linear(decoder, decoder), biased), untied */
    {.name = "video_llama_3", .text_type = "qwen2", .vision_type = "video_llama_3_vision", .projector = WRAP_PROJ_READOUT,
     .tower_root = "model.vision_model.", .projector_root = "model.projector."},
    /* Exaone4_5_Config: EXAONE 4 and its Qwen2.5-VL tower (GQA in the tower's qkv) with the merger under
     * model.visual, untied */
    {.name = "exaone4_5", .text_type = "exaone4", .vision_type = "exaone4_5_vision"},
    /* PaddleOCRVLConfig: ERNIE 4.5's decoder (paddleocr_vl_text), SigLIP's tower under model.visual.vision_model,
     * its projector under model.projector, tied (a text_config's tie, default true, ties too: its __post_init__) */
    {.name = "paddleocr_vl", .text_type = "paddleocr_vl_text", .vision_type = "paddleocr_vl_vision", .tie = true,
     .tie_from_text = true, .projector = WRAP_PROJ_PADDLE, .tower_root = "model.visual.vision_model.", .projector_root = "model.projector."},
    /* Cosmos3EdgeConfig: its ReLU^2 decoder (cosmos3_edge_text), SigLIP 2's tower under model.visual, the patch
     * merger under model.projector (projector_hidden_size 11520), never tied (_tied_weights_keys is empty) */
    {.name = "cosmos3_edge", .text_type = "cosmos3_edge_text", .vision_type = "cosmos3_edge_vision",
     .projector = WRAP_PROJ_COSMOS3_EDGE, .tower_root = "model.visual.", .projector_root = "model.projector."},
    /* Kimi_K25Config: DeepSeek-V3's decoder and the MoonViT tower (kimi_k25_tower), tied */
    {.name = "kimi_k25", .text_type = "deepseek_v3", .vision_type = "kimi_k25_vision", .tie = true,
     .projector = WRAP_PROJ_KIMI},
    /* Qwen2_5OmniThinkerConfig: its Qwen2 decoder, the Qwen2.5-VL tower under model.visual and the Whisper-like
     * audio encoder under model.audio_tower (omni_audio), untied */
    {.name = "qwen2_5_omni_thinker", .text_type = "qwen2_5_omni_text", .vision_type = "qwen2_5_omni_vision_encoder"},
    /* Qwen3OmniMoeThinkerConfig: its Qwen3-MoE decoder, the Qwen3-VL tower under model.visual and the audio encoder
     * with a 2-D convolution front end under model.audio_tower (omni_audio), untied */
    {.name = "qwen3_omni_moe_thinker", .text_type = "qwen3_omni_moe_text", .vision_type = "qwen3_omni_moe_vision_encoder"},
    /* AriaConfig: Aria's MoE decoder (aria_text), the Idefics3 SigLIP tower under model.vision_tower, AriaProjector
     * under model.multi_modal_projector, untied */
    {.name = "aria", .text_type = "aria_text", .vision_type = "idefics3_vision", .projector = WRAP_PROJ_ARIA},
    /* GlmOcrConfig: its GLM-4 decoder (glm_ocr_text) and tower (glm_ocr_tower), untied */
    {.name = "glm_ocr", .text_type = "glm_ocr_text", .vision_type = "glm_ocr_vision", .projector = WRAP_PROJ_GLM_OCR},
    /* Inkling2Config, Inkling2LoopConfig: Inkling 2's decoders (inkling2_text, inkling2_loop_text) and its tower
     * (mpm_inkling2_tower), never tied (_tied_weights_keys is empty) */
    {.name = "inkling2", .text_type = "inkling2_text", .vision_type = "inkling2_vision",
     .projector = WRAP_PROJ_INKLING2},
    {.name = "inkling2_loop", .text_type = "inkling2_loop_text", .vision_type = "inkling2_vision",
     .projector = WRAP_PROJ_INKLING2},
    /* InklingConfig: Inkling's decoder (inkling_text), its image and audio towers (mpm_inkling_towers), never tied */
    {.name = "inkling_mm_model", .text_type = "inkling_text", .vision_type = "inkling_vision",
     .projector = WRAP_PROJ_INKLING},
};

/* How many entries a key holds: a list's length, 1 for a number (vision_feature_layer, deepstack_visual_indexes). */
static uint64_t list_len(const cJSON *v, uint64_t dflt)
{
	if (cJSON_IsArray(v))
		return (uint64_t)cJSON_GetArraySize(v);
	return v && !cJSON_IsNull(v) ? 1 : dflt;
}

/*
 * SigLIP's and CLIP's attention (modeling_siglip.py SiglipAttention) raises "embed_dim must be divisible by
 * num_heads" when hidden_size is not a multiple of num_attention_heads: for the wrappers whose default tower needs
 * the check (wrap_extra.vision_heads: Aya Vision's 1152 wide, 14 heads), a 422 on num_attention_heads. c is the
 * vision_config's context (its cfg NULL when absent: the wrapper's heads); SiglipVisionConfig's default is 12.
 */
static void vision_heads_divide(hf_ctx *c, uint64_t absent_heads, const mp_vision *v)
{
	uint64_t heads = c->cfg ? hf_get_u64(c, KEYS("num_attention_heads"), 12) : absent_heads;

	if (c->st == MP_OK && (heads == 0 || v->hidden % heads != 0))
		hf_fail_key(c, "num_attention_heads",
		            c->cfg ? "the image tower's hidden_size must be a multiple of its num_attention_heads "
		                     "(SiglipAttention: embed_dim must be divisible by num_heads)"
		                   : "vision_config is required: the wrapper's default tower (1152 wide, 14 heads) does not "
		                     "build in transformers 5.24 (SiglipAttention: embed_dim must be divisible by num_heads); "
		                     "the published checkpoints state num_attention_heads 16");
}

/*
 * EXAONE 4.5's tower (modeling_exaone4_5.py Exaone4_5_VisionAttention): head_dim = hidden_size // num_heads (16),
 * the fused qkv Linear(hidden, (num_heads + 2 num_key_value_heads (8)) x head_dim) with a bias; proj stays hidden x
 * hidden. Default: head_dim 3584 // 16 = 224, qkv (16 + 16) x 224 = 7168 rows. num_attention_heads is num_heads's
 * other spelling (its attribute_map). num_key_value_heads must divide num_heads (num_key_value_groups, repeat_kv:
 * transformers builds such a tower but cannot run an image through it): a 422 names it otherwise. c is the
 * vision_config's context.
 */
static void vision_kv_heads(hf_ctx *c, mp_vision *v)
{
	uint64_t heads = hf_get_u64(c, KEYS("num_heads", "num_attention_heads"), 16);
	uint64_t kv = hf_get_u64(c, KEYS("num_key_value_heads"), 8);

	if (c->st != MP_OK)
		return;
	if (heads == 0 || heads > v->hidden) {
		hf_fail_key(c, "num_heads", "num_heads must be from 1 to the tower's hidden_size");
		return;
	}
	if (kv == 0 || heads % kv != 0) {
		hf_fail_key(c, "num_key_value_heads", "num_key_value_heads must be at least 1 and divide num_heads");
		return;
	}
	v->qkv_rows = (heads + 2 * kv) * (v->hidden / heads);
}

/* The tower (vision_config) and projector (the wrapper's keys) into m->vision. */
static void decode_vision(hf_ctx *top, const wrap_row *w, mp_model *m)
{
	const cJSON *vc = cJSON_GetObjectItemCaseSensitive(top->cfg, "vision_config"), *vt;
	char pointer[MP_POINTER_MAX];
	hf_ctx c;
	const vision_defaults *d = NULL;
	const char *type = w->vision_type;
	mp_vision *v = &m->vision;
	uint64_t patch, image, channels, temporal;
	bool absent = !cJSON_IsObject(vc);

	if (vc && !cJSON_IsNull(vc) && absent) {
		hf_fail_key(top, "vision_config", "vision_config must be an object (the image tower's config)");
		return;
	}
	vt = absent ? NULL : cJSON_GetObjectItemCaseSensitive(vc, "model_type");
	/* older checkpoints name the tower by the wrapper's own type (Qwen2-VL, Qwen2.5-VL: "qwen2_5_vl") */
	if (cJSON_IsString(vt) && strcmp(vt->valuestring, w->name) != 0 &&
	    !(wrap_extra_of(w->name).vision_alias && strcmp(vt->valuestring, wrap_extra_of(w->name).vision_alias) == 0))
		type = vt->valuestring;
	for (size_t i = 0; i < sizeof(vision_classes) / sizeof(vision_classes[0]); i++)
		if (strcmp(type, vision_classes[i].type) == 0)
			d = &vision_classes[i];
	snprintf(pointer, sizeof(pointer), "%s/vision_config", top->pointer);
	c = (hf_ctx){absent ? NULL : vc, pointer, top->err, top->st, NULL, NULL, top->decode_type};
	if (d == NULL) {
		char msg[200];

		snprintf(msg, sizeof(msg), "vision_config model_type '%.40s' is not supported for %s (supported: %s)",
		         type, w->name, w->vision_type);
		hf_fail_key(&c, "model_type", msg);
		top->st = c.st;
		return;
	}
	/* no vision_config (c.cfg NULL): the wrapper's own defaults */
	v->hidden = absent && w->hidden ? w->hidden : d->hidden;
	v->intermediate = absent && w->inter ? w->inter : d->inter;
	v->layers = absent && w->layers ? w->layers : d->layers;
	image = absent && w->image ? w->image : d->image;
	patch = absent && w->patch ? w->patch : d->patch;
	channels = d->channels;
	temporal = d->temporal;
	v->out_hidden = m->hidden_size;
	v->merge = 1;
	if (!absent) {
		v->hidden = hf_get_u64(&c, KEYS("hidden_size", "embed_dim"), v->hidden);
		if (strcmp(d->type, "qwen2_vl_vision") == 0) { /* embed_dim is the width; hidden_size the output */
			v->hidden = hf_get_u64(&c, KEYS("embed_dim"), d->hidden);
			v->out_hidden = hf_get_u64(&c, KEYS("hidden_size"), d->out_hidden);
			uint64_t ratio = hf_get_u64(&c, KEYS("mlp_ratio"), 4);

			if (!mp_mul_u64(v->hidden, ratio, &v->intermediate))
				hf_fail_key(&c, "mlp_ratio", "embed_dim x mlp_ratio overflows 64 bits");
		} else {
			v->intermediate = hf_get_u64(&c, KEYS("intermediate_size"), v->intermediate);
		}
		v->layers = hf_get_u64(&c, KEYS("num_hidden_layers", "depth"), v->layers);
		image = hf_get_u64(&c, KEYS("image_size"), image);
		patch = hf_get_u64(&c, KEYS("patch_size"), patch);
		channels = hf_get_u64(&c, KEYS("num_channels", "in_channels", "in_chans"), channels);
		temporal = hf_get_u64(&c, KEYS("temporal_patch_size"), temporal);
	} else if (strcmp(d->type, "qwen2_vl_vision") == 0) {
		v->out_hidden = d->out_hidden;
	}
	if (c.st == MP_OK && (patch == 0 || v->hidden == 0 || v->layers == 0))
		hf_fail_key(&c,
		            patch == 0       ? "patch_size"
		            : v->hidden == 0 ? "hidden_size"
		                             : "num_hidden_layers",
		            "the image tower's patch_size, hidden_size and num_hidden_layers must be at least 1");
	if (c.st != MP_OK) {
		top->st = c.st;
		return;
	}
	/* every size below stays far under 2^64: the tower's own widths are checked by the planner (mp_model_validate) */
	if (patch > (UINT64_C(1) << 16) || channels > 256 || temporal > 256 || image > (UINT64_C(1) << 24)) {
		hf_fail_key(&c, patch > (UINT64_C(1) << 16) ? "patch_size" : image > (UINT64_C(1) << 24) ? "image_size"
		                                                                                    : "num_channels",
		            "the image tower's patch_size must be at most 65536, image_size 2^24, num_channels and "
		            "temporal_patch_size 256");
		top->st = c.st;
		return;
	}
	v->channels = channels;
	v->temporal = temporal;
	v->patch = patch;
	if (strcmp(d->type, "siglip2_vision_model") == 0 || strcmp(d->type, "cosmos3_edge_vision") == 0) {
		/* modeling_siglip2.py Siglip2VisionTransformer: SigLIP's blocks and head, a linear patch embedding, a
		 * table of num_patches positions; Cosmos3-Edge's (modeling_cosmos3_edge.py Cosmos3EdgeVisionModel): the
		 * same without a head */
		bool edge = strcmp(d->type, "cosmos3_edge_vision") == 0;

		v->tower = MP_TOWER_SIGLIP;
		v->norm = MP_NORM_LAYER;
		v->linear_patch = v->patch_bias = v->post_norm = v->attn_bias = v->mlp_bias = true;
		v->positions = c.cfg ? hf_get_u64(&c, KEYS("num_patches"), d->positions) : d->positions;
		v->map_head = edge ? false : c.cfg ? hf_get_bool(&c, KEYS("vision_use_head"), true) : !w->no_head;
		v->projector = MP_PROJECTOR_NONE;
		if (edge)
			v->merge = c.cfg ? hf_get_u64(&c, KEYS("spatial_merge_size"), d->merge) : d->merge;
	} else if (strcmp(d->type, "paddleocr_vl_vision") == 0) {
		/* modeling_paddleocr_vl.py PaddleOCRVisionModel: SigLIP's transformer (patch convolution with a bias,
		 * (image / patch)^2 positions, post_layernorm, no head) under its vision_model */
		v->tower = MP_TOWER_SIGLIP;
		v->norm = MP_NORM_LAYER;
		v->patch_bias = v->post_norm = v->attn_bias = v->mlp_bias = true;
		v->positions = (image / patch) * (image / patch);
		v->projector = MP_PROJECTOR_NONE;
		v->merge = c.cfg ? hf_get_u64(&c, KEYS("spatial_merge_size"), d->merge) : d->merge;
	} else if (strcmp(d->type, "video_llama_3_vision") == 0) {
		/* modeling_video_llama_3.py VideoLlama3VisionModel: SigLIP's embeddings without a position table
		 * (2-D rotary), its blocks and post_layernorm, no head */
		v->tower = MP_TOWER_SIGLIP;
		v->norm = MP_NORM_LAYER;
		v->patch_bias = v->post_norm = v->attn_bias = v->mlp_bias = true;
		v->projector = MP_PROJECTOR_NONE;
	} else if (strcmp(d->type, "siglip_vision_model") == 0 || strstr(d->type, "idefics") || strstr(d->type, "smolvlm")) {
		bool idefics = strcmp(d->type, "siglip_vision_model") != 0;

		v->tower = MP_TOWER_SIGLIP;
		/* modeling_siglip.py SiglipVisionTransformer (Idefics2/3's and SmolVLM's: the same modules, no head);
		 * Gemma3MultiModalProjector */
		v->norm = MP_NORM_LAYER;
		v->patch_bias = v->post_norm = v->attn_bias = v->mlp_bias = true;
		v->positions = (image / patch) * (image / patch);
		v->map_head = idefics ? false : c.cfg ? hf_get_bool(&c, KEYS("vision_use_head"), true) : !w->no_head;
		v->projector = MP_PROJECTOR_GEMMA3;
	} else if (strcmp(d->type, "clip_vision_model") == 0) {
		/* modeling_clip.py CLIPVisionTransformer (class token, pre_layrnorm, post_layernorm);
		 * LlavaMultiModalProjector */
		v->tower = MP_TOWER_CLIP;
		v->norm = MP_NORM_LAYER;
		v->class_embedding = v->pre_norm = v->post_norm = v->attn_bias = v->mlp_bias = true;
		v->positions = (image / patch) * (image / patch) + 1;
		v->projector = MP_PROJECTOR_MLP2;
		v->projector_norm = MP_NORM_NONE;
	} else if (strcmp(d->type, "llama4_vision_model") == 0) {
		/* a linear patch embedding (no bias), class token, learned positions (+1), LayerNorms pre and post,
		 * biased blocks, then the pixel-shuffle adapter and the projector (MP_PROJECTOR_LLAMA4) */
		v->tower = MP_TOWER_LLAMA4;
		v->tower_root = "vision_model.";
		v->projector_root = "multi_modal_projector.";
		v->norm = MP_NORM_LAYER;
		v->class_embedding = v->pre_norm = v->post_norm = v->attn_bias = v->mlp_bias = true;
		v->positions = (image / patch) * (image / patch) + 1;
		v->projector = MP_PROJECTOR_LLAMA4;
		v->adapter_in = c.cfg ? hf_get_u64(&c, KEYS("projector_input_dim"), 4096) : 4096;
		v->adapter_out = c.cfg ? hf_get_u64(&c, KEYS("projector_output_dim"), 4096) : 4096;
		v->feature_dim = c.cfg ? hf_get_u64(&c, KEYS("vision_output_dim"), 7680) : 7680;
	} else if (strcmp(d->type, "pixtral") == 0) {
		/* modeling_pixtral.py PixtralVisionModel (RMSNorm, gated MLP, no biases, rotary);
		 * Mistral3MultiModalProjector (RMSNorm, patch merger over spatial_merge_size^2 patches) */
		v->tower = MP_TOWER_PIXTRAL;
		v->norm = MP_NORM_RMS;
		v->pre_norm = v->gated_mlp = true;
		v->projector = MP_PROJECTOR_MLP2;
		v->projector_norm = MP_NORM_RMS;
		v->merge = hf_get_u64(top, KEYS("spatial_merge_size"), 2);
		v->patch_merger = true;
	} else {
		/* the Qwen-VL towers (modeling_qwen2_vl.py, _2_5_vl.py, _3_vl.py): a 3-D patch convolution, fused qkv,
		 * the merger over spatial_merge_size^2 patches */
		bool q25 = strcmp(d->type, "qwen2_5_vl_vision") == 0 || strcmp(d->type, "exaone4_5_vision") == 0 ||
		           strcmp(d->type, "qwen2_5_omni_vision_encoder") == 0,
		     q3 = strncmp(d->type, "qwen3_", 6) == 0 || strcmp(d->type, "cohere_compass_vision") == 0 ||
		          strcmp(d->type, "qwen4_exp_vision") == 0;

		v->tower = q3 ? MP_TOWER_QWEN3_VL : q25 ? MP_TOWER_QWEN2_5_VL : MP_TOWER_QWEN2_VL;
		v->tower_root = "model.visual.";
		v->projector_root = "model.visual.";
		v->norm = q25 ? MP_NORM_RMS : MP_NORM_LAYER;
		v->fused_qkv = v->attn_bias = v->mlp_bias = true;
		v->gated_mlp = q25;
		v->patch_bias = q3;
		v->projector = MP_PROJECTOR_QWEN_MERGER;
		v->projector_norm = q25 ? MP_NORM_RMS : MP_NORM_LAYER;
		v->merge = c.cfg ? hf_get_u64(&c, KEYS("spatial_merge_size"), d->merge) : d->merge;
		if (q25 || q3)
			v->out_hidden = c.cfg ? hf_get_u64(&c, KEYS("out_hidden_size"), d->out_hidden) : d->out_hidden;
		if (q3) {
			v->positions =
			    c.cfg ? hf_get_u64(&c, KEYS("num_position_embeddings"), d->positions) : d->positions;
			v->deepstack =
			    c.cfg && d->deepstack
			        ? list_len(cJSON_GetObjectItemCaseSensitive(c.cfg, "deepstack_visual_indexes"),
			                   d->deepstack)
			        : d->deepstack;
		}
	}
	if (w->projector == WRAP_PROJ_MLP2) {
		v->projector = MP_PROJECTOR_MLP2;
		v->projector_norm = MP_NORM_NONE;
	} else if (w->projector != WRAP_PROJ_TOWER) {
		v->projector = MP_PROJECTOR_NONE; /* the reader's own (wrap_projector) */
	}
	if (w->tower_root)
		v->tower_root = w->tower_root;
	if (w->projector_root)
		v->projector_root = w->projector_root;
	{
		wrap_extra x = wrap_extra_of(w->name);

		v->twin_root = x.twin_root;
		if (x.vision_heads)
			vision_heads_divide(&c, x.vision_heads, v);
		if (strcmp(d->type, "exaone4_5_vision") == 0)
			vision_kv_heads(&c, v);
		v->split_qkv = strcmp(d->type, "qwen2_5_omni_vision_encoder") == 0; /* Qwen2_5OmniVisionAttention */
		v->omni_merger = strcmp(d->type, "qwen3_omni_moe_vision_encoder") == 0;
	}
	if (v->projector == MP_PROJECTOR_MLP2) {
		bool llava = strcmp(w->name, "llava") == 0 || w->projector == WRAP_PROJ_MLP2;

		v->feature_layers = list_len(cJSON_GetObjectItemCaseSensitive(top->cfg, "vision_feature_layer"), 1);
		v->projector_bias = hf_get_bool(top, KEYS("multimodal_projector_bias"), llava);
	}
	if (c.st != MP_OK)
		top->st = c.st;
}

/*
 * Idefics2Connector (modeling_idefics2.py): modality_projection, a gated MLP from the tower's width to the decoder's
 * through the decoder's intermediate_size, then the perceiver resampler of perceiver_config (Idefics2PerceiverConfig:
 * hidden_size = the decoder's, resampler_n_latents 64 latents, resampler_depth 3 layers of resampler_n_heads 16 heads
 * of resampler_head_dim 96 and num_key_value_heads 4 KV heads, RMSNorms, a gated MLP of 4 x hidden, a final norm).
 */
static void idefics2_connector(hf_ctx *top, mp_model *m)
{
	const cJSON *pc = cJSON_GetObjectItemCaseSensitive(top->cfg, "perceiver_config");
	const cJSON *tc = cJSON_GetObjectItemCaseSensitive(top->cfg, "text_config");
	char pointer[96];
	hf_ctx c, t;
	uint64_t h = m->vision.hidden, out = m->hidden_size, inter, lat, depth, heads, hd, kv, q, k, ff;
	const char *lay = "perceiver_resampler.layers.{i}";

	t = (hf_ctx){cJSON_IsObject(tc) ? tc : NULL, top->pointer, top->err, top->st, NULL, NULL, top->decode_type};
	inter = m->intermediate_size ? m->intermediate_size : hf_get_u64(&t, KEYS("intermediate_size"), 14336);
	snprintf(pointer, sizeof(pointer), "%s/perceiver_config", top->pointer);
	c = (hf_ctx){cJSON_IsObject(pc) ? pc : NULL, pointer, top->err, top->st, NULL, NULL, top->decode_type};
	lat = hf_get_u64(&c, KEYS("resampler_n_latents"), 64);
	depth = hf_get_u64(&c, KEYS("resampler_depth"), 3);
	heads = hf_get_u64(&c, KEYS("resampler_n_heads"), 16);
	hd = hf_get_u64(&c, KEYS("resampler_head_dim"), 96);
	kv = hf_get_u64(&c, KEYS("num_key_value_heads"), 4);
	top->st = c.st;
	if (c.st != MP_OK)
		return;
	q = hf_mul(top, heads, hd, "perceiver_config");
	k = hf_mul(top, kv, hd, "perceiver_config");
	ff = hf_mul(top, 4, out, "perceiver_config");
	hf_tensor(m, MP_ROOT_PROJECTOR, "modality_projection", "gate_proj.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE,
	          MP_STEP_NONE, false, inter, h, 1);
	hf_tensor(m, MP_ROOT_PROJECTOR, "modality_projection", "up_proj.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE,
	          MP_STEP_NONE, false, inter, h, 1);
	hf_tensor(m, MP_ROOT_PROJECTOR, "modality_projection", "down_proj.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE,
	          MP_STEP_NONE, false, out, inter, 1);
	hf_tensor(m, MP_ROOT_PROJECTOR, "perceiver_resampler", "latents", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE,
	          false, lat, out, 1);
	hf_tensor(m, MP_ROOT_PROJECTOR, lay, "input_latents_norm.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE,
	          true, 1, out, depth);
	hf_tensor(m, MP_ROOT_PROJECTOR, lay, "input_context_norm.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE,
	          true, 1, out, depth);
	hf_tensor(m, MP_ROOT_PROJECTOR, "perceiver_resampler.layers.{i}.self_attn", "q_proj.weight", MP_TK_PROJECTOR,
	          MP_SPLIT_NONE, MP_STEP_NONE, false, q, out, depth);
	hf_tensor(m, MP_ROOT_PROJECTOR, "perceiver_resampler.layers.{i}.self_attn", "k_proj.weight", MP_TK_PROJECTOR,
	          MP_SPLIT_NONE, MP_STEP_NONE, false, k, out, depth);
	hf_tensor(m, MP_ROOT_PROJECTOR, "perceiver_resampler.layers.{i}.self_attn", "v_proj.weight", MP_TK_PROJECTOR,
	          MP_SPLIT_NONE, MP_STEP_NONE, false, k, out, depth);
	hf_tensor(m, MP_ROOT_PROJECTOR, "perceiver_resampler.layers.{i}.self_attn", "o_proj.weight", MP_TK_PROJECTOR,
	          MP_SPLIT_NONE, MP_STEP_NONE, false, out, q, depth);
	hf_tensor(m, MP_ROOT_PROJECTOR, lay, "post_attention_layernorm.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE,
	          MP_STEP_NONE, true, 1, out, depth);
	hf_tensor(m, MP_ROOT_PROJECTOR, "perceiver_resampler.layers.{i}.mlp", "gate_proj.weight", MP_TK_PROJECTOR,
	          MP_SPLIT_NONE, MP_STEP_NONE, false, ff, out, depth);
	hf_tensor(m, MP_ROOT_PROJECTOR, "perceiver_resampler.layers.{i}.mlp", "up_proj.weight", MP_TK_PROJECTOR,
	          MP_SPLIT_NONE, MP_STEP_NONE, false, ff, out, depth);
	hf_tensor(m, MP_ROOT_PROJECTOR, "perceiver_resampler.layers.{i}.mlp", "down_proj.weight", MP_TK_PROJECTOR,
	          MP_SPLIT_NONE, MP_STEP_NONE, false, out, ff, depth);
	hf_tensor(m, MP_ROOT_PROJECTOR, "perceiver_resampler", "norm.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE,
	          MP_STEP_NONE, true, 1, out, 1);
}

/* A side of a square image or patch: an integer, or a list of two equal integers (InternVL's (448, 448)). */
static uint64_t square_side(hf_ctx *c, const char *key, uint64_t dflt)
{
	const cJSON *v = c->cfg ? cJSON_GetObjectItemCaseSensitive(c->cfg, key) : NULL;

	if (cJSON_IsArray(v)) {
		const cJSON *a = cJSON_GetArrayItem(v, 0), *b = cJSON_GetArrayItem(v, 1);

		if (cJSON_GetArraySize(v) != 2 || !cJSON_IsNumber(a) || !cJSON_IsNumber(b) || a->valuedouble != b->valuedouble ||
		    a->valuedouble < 1 || a->valuedouble > 65536 || a->valuedouble != (double)(uint64_t)a->valuedouble) {
			hf_fail_key(c, key, "a list here must hold two equal integers from 1 to 65536 (a square)");
			return dflt;
		}
		return (uint64_t)a->valuedouble;
	}
	return hf_get_u64(c, (const char *const[]){key, NULL}, dflt);
}

/*
 * InternVL (modeling_internvl.py): InternVLVisionModel (InternVLVisionConfig: hidden 1024, 24 layers, MLP 4096, 448
 * px images of 14 px patches, LayerNorms or RMSNorms (norm_type), q/k/v with attention_bias, projection_layer with a
 * bias, RMSNorm q/k norms over the whole projections with use_qk_norm, layer-scale lambda_1 and lambda_2, a class
 * token, the absolute positions of patches + 1 (use_absolute_position_embeddings), a mask token (use_mask_token), a
 * final LayerNorm unless use_mean_pooling) and InternVLMultiModalProjector (a LayerNorm over the
 * 1 / downsample_ratio squared merged patches, linear_1 and linear_2 with biases), listed here with their names.
 */
static void internvl_tower(hf_ctx *top, mp_model *m)
{
	const cJSON *nt;
	char pointer[96];
	hf_ctx c;
	uint64_t h, L, inter, ch, image, patch, pos, merge, in;
	bool rms, bias, qk, mask, abs_pos, pooling;
	double ratio;
	const char *lay = "encoder.layer.{i}";

	if (!hf_sub_config(top, "vision_config", pointer, sizeof(pointer), &c))
		return;
	h = hf_get_u64(&c, KEYS("hidden_size"), 1024);
	L = hf_get_u64(&c, KEYS("num_hidden_layers"), 24);
	inter = hf_get_u64(&c, KEYS("intermediate_size"), 4096);
	ch = hf_get_u64(&c, KEYS("num_channels"), 3);
	image = square_side(&c, "image_size", 448);
	patch = square_side(&c, "patch_size", 14);
	bias = hf_get_bool(&c, KEYS("attention_bias"), false);
	qk = hf_get_bool(&c, KEYS("use_qk_norm"), false);
	mask = hf_get_bool(&c, KEYS("use_mask_token"), false);
	abs_pos = hf_get_bool(&c, KEYS("use_absolute_position_embeddings"), true);
	pooling = hf_get_bool(&c, KEYS("use_mean_pooling"), true);
	nt = c.cfg ? cJSON_GetObjectItemCaseSensitive(c.cfg, "norm_type") : NULL;
	rms = cJSON_IsString(nt) && strcmp(nt->valuestring, "rms_norm") == 0;
	if (nt && !cJSON_IsNull(nt) && !(cJSON_IsString(nt) && (rms || strcmp(nt->valuestring, "layer_norm") == 0)))
		hf_fail_key(&c, "norm_type", "norm_type must be \"layer_norm\" or \"rms_norm\"");
	ratio = hf_get_double(top, top->cfg, "downsample_ratio", 0.5);
	if (c.st == MP_OK && (h == 0 || L == 0 || patch == 0 || image < patch || h > (UINT64_C(1) << 20) ||
	                      inter > (UINT64_C(1) << 24) || L > MP_MAX_LAYERS || ch > 256))
		hf_fail_key(&c, "hidden_size",
		            "the image tower needs a width (below 2^20), layers (at most 1024), a patch no larger than the "
		            "image, an MLP below 2^24 and at most 256 channels");
	top->st = c.st;
	if (top->st == MP_OK && !(ratio > 0 && ratio <= 1))
		hf_fail_key(top, "downsample_ratio", "downsample_ratio must be in (0, 1]");
	if (top->st != MP_OK)
		return;
	merge = (uint64_t)(1.0 / ratio);
	in = merge * merge * h;
	pos = (image / patch) * (image / patch) + 1;
	mp_inventory_root(&m->inv, MP_ROOT_TOWER, "model.vision_tower.");
	mp_inventory_root(&m->inv, MP_ROOT_PROJECTOR, "model.multi_modal_projector.");
	{
		uint64_t cls[3] = {1, 1, h}, pe[3] = {1, pos, h}, conv[4] = {h, ch, patch, patch};

		hf_shape(m, MP_ROOT_TOWER, "embeddings", "cls_token", MP_TK_VISION, 0, cls, 3, 1);
		if (mask)
			hf_shape(m, MP_ROOT_TOWER, "embeddings", "mask_token", MP_TK_VISION, 0, cls, 3, 1);
		if (abs_pos)
			hf_shape(m, MP_ROOT_TOWER, "embeddings", "position_embeddings", MP_TK_VISION, 0, pe, 3, 1);
		hf_shape(m, MP_ROOT_TOWER, "embeddings.patch_embeddings", "projection.weight", MP_TK_VISION, 0, conv, 4, 1);
		hf_tensor(m, MP_ROOT_TOWER, "embeddings.patch_embeddings", "projection.bias", MP_TK_VISION, MP_SPLIT_NONE,
		          MP_STEP_NONE, true, 1, h, 1);
	}
	hf_tensor(m, MP_ROOT_TOWER, lay, "lambda_1", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
	hf_tensor(m, MP_ROOT_TOWER, lay, "lambda_2", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
	{
		static const char *const qkv[] = {"q_proj.weight", "k_proj.weight", "v_proj.weight"};
		static const char *const qkvb[] = {"q_proj.bias", "k_proj.bias", "v_proj.bias"};

		for (int i = 0; i < 3; i++) {
			hf_tensor(m, MP_ROOT_TOWER, "encoder.layer.{i}.attention", qkv[i], MP_TK_VISION, MP_SPLIT_NONE,
			          MP_STEP_NONE, false, h, h, L);
			if (bias)
				hf_tensor(m, MP_ROOT_TOWER, "encoder.layer.{i}.attention", qkvb[i], MP_TK_VISION, MP_SPLIT_NONE,
				          MP_STEP_NONE, true, 1, h, L);
		}
	}
	hf_tensor(m, MP_ROOT_TOWER, "encoder.layer.{i}.attention", "projection_layer.weight", MP_TK_VISION, MP_SPLIT_NONE,
	          MP_STEP_NONE, false, h, h, L);
	hf_tensor(m, MP_ROOT_TOWER, "encoder.layer.{i}.attention", "projection_layer.bias", MP_TK_VISION, MP_SPLIT_NONE,
	          MP_STEP_NONE, true, 1, h, L);
	if (qk) {
		hf_tensor(m, MP_ROOT_TOWER, "encoder.layer.{i}.attention", "q_norm.weight", MP_TK_VISION, MP_SPLIT_NONE,
		          MP_STEP_NONE, true, 1, h, L);
		hf_tensor(m, MP_ROOT_TOWER, "encoder.layer.{i}.attention", "k_norm.weight", MP_TK_VISION, MP_SPLIT_NONE,
		          MP_STEP_NONE, true, 1, h, L);
	}
	hf_tensor(m, MP_ROOT_TOWER, "encoder.layer.{i}.mlp", "fc1.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false,
	          inter, h, L);
	hf_tensor(m, MP_ROOT_TOWER, "encoder.layer.{i}.mlp", "fc1.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
	          inter, L);
	hf_tensor(m, MP_ROOT_TOWER, "encoder.layer.{i}.mlp", "fc2.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false,
	          h, inter, L);
	hf_tensor(m, MP_ROOT_TOWER, "encoder.layer.{i}.mlp", "fc2.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
	          h, L);
	hf_tensor(m, MP_ROOT_TOWER, lay, "layernorm_before.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
	hf_tensor(m, MP_ROOT_TOWER, lay, "layernorm_after.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
	if (!rms) {
		hf_tensor(m, MP_ROOT_TOWER, lay, "layernorm_before.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h,
		          L);
		hf_tensor(m, MP_ROOT_TOWER, lay, "layernorm_after.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h,
		          L);
	}
	if (!pooling) {
		hf_tensor(m, MP_ROOT_TOWER, NULL, "layernorm.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, 1);
		hf_tensor(m, MP_ROOT_TOWER, NULL, "layernorm.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, 1);
	}
	hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "layer_norm.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, in,
	          1);
	hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "layer_norm.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, in, 1);
	hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "linear_1.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false,
	          m->hidden_size, in, 1);
	hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "linear_1.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
	          m->hidden_size, 1);
	hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "linear_2.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false,
	          m->hidden_size, m->hidden_size, 1);
	hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "linear_2.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
	          m->hidden_size, 1);
}

/*
 * GLM-4V, GLM-4.1V, GLM-4.5V, GLM-4.6V (modeling_glm4v.py Glm4vVisionModel; Glm4vVisionConfig: depth 24, hidden
 * 1536, 336 px images of 14 px patches x 2 frames, spatial_merge_size 2, out_hidden_size 4096, intermediate_size
 * 13696): a 3-D patch convolution with a bias, learned positions of (image / patch)^2, blocks of RMSNorms, a fused
 * qkv (attention_bias) and proj without bias, a gated MLP of out_hidden_size without biases; post_layernorm, the
 * downsample convolution over merge x merge patches to out_hidden_size with a bias, post_conv_layernorm, and the
 * merger (proj, a LayerNorm, a gated MLP of intermediate_size, no biases) under model.visual.
 */
static void glm4v_tower(hf_ctx *top, mp_model *m)
{
	char pointer[96];
	hf_ctx c;
	uint64_t h, L, ch, image, patch, tp, merge, out, inter;
	bool bias;
	const char *blk = "blocks.{i}";

	if (!hf_sub_config(top, "vision_config", pointer, sizeof(pointer), &c))
		return;
	L = hf_get_u64(&c, KEYS("depth", "num_hidden_layers"), 24);
	h = hf_get_u64(&c, KEYS("hidden_size"), 1536);
	bias = hf_get_bool(&c, KEYS("attention_bias"), false);
	ch = hf_get_u64(&c, KEYS("in_channels"), 3);
	image = square_side(&c, "image_size", 336);
	patch = square_side(&c, "patch_size", 14);
	tp = square_side(&c, "temporal_patch_size", 2);
	merge = hf_get_u64(&c, KEYS("spatial_merge_size"), 2);
	out = hf_get_u64(&c, KEYS("out_hidden_size"), 4096);
	inter = hf_get_u64(&c, KEYS("intermediate_size"), 13696);
	if (c.st == MP_OK && (h == 0 || L == 0 || patch == 0 || image < patch || merge == 0 || tp == 0 ||
	                      h > (UINT64_C(1) << 20) || out > (UINT64_C(1) << 20) || inter > (UINT64_C(1) << 24) ||
	                      L > MP_MAX_LAYERS || ch > 256 || merge > 64 || tp > 64))
		hf_fail_key(&c, "hidden_size",
		            "the image tower needs a width and out_hidden_size (below 2^20), a depth (at most 1024), a patch "
		            "no larger than the image, spatial_merge_size and temporal_patch_size from 1 to 64");
	top->st = c.st;
	if (top->st != MP_OK)
		return;
	mp_inventory_root(&m->inv, MP_ROOT_TOWER, "model.visual.");
	{
		uint64_t conv[5] = {h, ch, tp, patch, patch}, down[4] = {out, h, merge, merge};

		hf_tensor(m, MP_ROOT_TOWER, "embeddings", "position_embedding.weight", MP_TK_VISION, MP_SPLIT_NONE,
		          MP_STEP_NONE, false, (image / patch) * (image / patch), h, 1);
		hf_shape(m, MP_ROOT_TOWER, "patch_embed", "proj.weight", MP_TK_VISION, 0, conv, 5, 1);
		hf_tensor(m, MP_ROOT_TOWER, "patch_embed", "proj.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, 1);
		hf_shape(m, MP_ROOT_TOWER, NULL, "downsample.weight", MP_TK_VISION, 0, down, 4, 1);
		hf_tensor(m, MP_ROOT_TOWER, NULL, "downsample.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, out, 1);
	}
	hf_tensor(m, MP_ROOT_TOWER, blk, "norm1.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
	hf_tensor(m, MP_ROOT_TOWER, blk, "norm2.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
	hf_tensor(m, MP_ROOT_TOWER, "blocks.{i}.attn", "qkv.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, 3 * h,
	          h, L);
	if (bias)
		hf_tensor(m, MP_ROOT_TOWER, "blocks.{i}.attn", "qkv.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
		          3 * h, L);
	hf_tensor(m, MP_ROOT_TOWER, "blocks.{i}.attn", "proj.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, h, h,
	          L);
	hf_tensor(m, MP_ROOT_TOWER, "blocks.{i}.mlp", "gate_proj.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false,
	          out, h, L);
	hf_tensor(m, MP_ROOT_TOWER, "blocks.{i}.mlp", "up_proj.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false,
	          out, h, L);
	hf_tensor(m, MP_ROOT_TOWER, "blocks.{i}.mlp", "down_proj.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false,
	          h, out, L);
	hf_tensor(m, MP_ROOT_TOWER, NULL, "post_layernorm.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, 1);
	hf_tensor(m, MP_ROOT_TOWER, NULL, "post_conv_layernorm.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
	          h, 1);
	hf_tensor(m, MP_ROOT_TOWER, "merger", "proj.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false, out, out,
	          1);
	hf_tensor(m, MP_ROOT_TOWER, "merger", "post_projection_norm.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE,
	          true, 1, out, 1);
	hf_tensor(m, MP_ROOT_TOWER, "merger", "post_projection_norm.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE,
	          true, 1, out, 1);
	hf_tensor(m, MP_ROOT_TOWER, "merger", "gate_proj.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false,
	          inter, out, 1);
	hf_tensor(m, MP_ROOT_TOWER, "merger", "up_proj.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false, inter,
	          out, 1);
	hf_tensor(m, MP_ROOT_TOWER, "merger", "down_proj.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false, out,
	          inter, 1);
}

/*
 * ERNIE-4.5-VL (modeling_ernie4_5_vl_moe.py; Ernie4_5_VLMoeVisionConfig: depth 32, hidden 1280, intermediate_size
 * 5120, 16 heads, 3 channels, 14 px patches, spatial_merge_size 2, temporal_merge_size 2): model.vision_tower. holds
 * patch_embed.proj (a linear from channels x patch^2 to hidden, no bias), per block LayerNorms norm1 and norm2, attn.qkv
 * (3 hidden x hidden) and attn.proj, mlp.fc1 and fc2, all biased, and the final LayerNorm ln; model.resampler_model.
 * (Ernie4_5_VLMoeVariableResolutionResamplerModel, s = hidden x merge^2) holds spatial_linear (fc1 s -> s, fc2 s -> s,
 * a LayerNorm of s), temporal_linear (fc1 s x temporal_merge -> s, fc2 s -> s, a LayerNorm of s), mlp (s -> the
 * decoder's width, biased) and after_norm (an RMSNorm of the decoder's width). Worked example (the defaults, decoder
 * 2560): tower 630,433,280, resampler 144,225,280. Errors: a 422 naming the key for a width, depth, patch or merge of 0
 * or past the bounds below, or heads that do not divide the width (the attention's reshape fails).
 */
static void ernie_vl_tower(hf_ctx *top, mp_model *m)
{
	char pointer[96];
	hf_ctx c;
	uint64_t h, inter, L, heads, ch, patch, merge, tm, sd, out = m->hidden_size;
	const char *blk = "blocks.{i}", *att = "blocks.{i}.attn", *mlp = "blocks.{i}.mlp", *sl = "spatial_linear",
	           *tl = "temporal_linear";

	if (!hf_sub_config(top, "vision_config", pointer, sizeof(pointer), &c))
		return;
	L = hf_get_u64(&c, KEYS("depth", "num_hidden_layers"), 32);
	h = hf_get_u64(&c, KEYS("hidden_size"), 1280);
	inter = hf_get_u64(&c, KEYS("intermediate_size"), 5120);
	heads = hf_get_u64(&c, KEYS("num_heads", "num_attention_heads"), 16);
	ch = hf_get_u64(&c, KEYS("in_channels"), 3);
	patch = hf_get_u64(&c, KEYS("patch_size"), 14);
	merge = hf_get_u64(&c, KEYS("spatial_merge_size"), 2);
	tm = hf_get_u64(&c, KEYS("temporal_merge_size"), 2);
	if (c.st == MP_OK && (h == 0 || h > (UINT64_C(1) << 20) || inter == 0 || inter > (UINT64_C(1) << 24) || L == 0 ||
	                      L > MP_MAX_LAYERS || ch == 0 || ch > 256 || patch == 0 || patch > 1024 || merge == 0 ||
	                      merge > 64 || tm == 0 || tm > 64))
		hf_fail_key(&c, "hidden_size",
		            "the image tower needs a width (below 2^20), intermediate_size (below 2^24), a depth (at most "
		            "1024), in_channels from 1 to 256, patch_size from 1 to 1024 and spatial_merge_size and "
		            "temporal_merge_size from 1 to 64");
	else if (c.st == MP_OK && (heads == 0 || h % heads != 0))
		hf_fail_key(&c, hf_key_of(&c, KEYS("num_heads", "num_attention_heads")),
		            "num_heads must divide the image tower's hidden_size (its attention splits the width into heads)");
	top->st = c.st;
	if (top->st != MP_OK)
		return;
	sd = h * merge * merge;
	mp_inventory_root(&m->inv, MP_ROOT_TOWER, "model.vision_tower.");
	mp_inventory_root(&m->inv, MP_ROOT_PROJECTOR, "model.resampler_model.");
	kimi_put(m, MP_ROOT_TOWER, "patch_embed", "proj.weight", MP_TK_VISION, h, ch * patch * patch, 1);
	kimi_put(m, MP_ROOT_TOWER, blk, "norm1.weight", MP_TK_VISION, 1, h, L);
	kimi_put(m, MP_ROOT_TOWER, blk, "norm1.bias", MP_TK_VISION, 1, h, L);
	kimi_put(m, MP_ROOT_TOWER, blk, "norm2.weight", MP_TK_VISION, 1, h, L);
	kimi_put(m, MP_ROOT_TOWER, blk, "norm2.bias", MP_TK_VISION, 1, h, L);
	kimi_put(m, MP_ROOT_TOWER, att, "qkv.weight", MP_TK_VISION, 3 * h, h, L);
	kimi_put(m, MP_ROOT_TOWER, att, "qkv.bias", MP_TK_VISION, 1, 3 * h, L);
	kimi_put(m, MP_ROOT_TOWER, att, "proj.weight", MP_TK_VISION, h, h, L);
	kimi_put(m, MP_ROOT_TOWER, att, "proj.bias", MP_TK_VISION, 1, h, L);
	kimi_put(m, MP_ROOT_TOWER, mlp, "fc1.weight", MP_TK_VISION, inter, h, L);
	kimi_put(m, MP_ROOT_TOWER, mlp, "fc1.bias", MP_TK_VISION, 1, inter, L);
	kimi_put(m, MP_ROOT_TOWER, mlp, "fc2.weight", MP_TK_VISION, h, inter, L);
	kimi_put(m, MP_ROOT_TOWER, mlp, "fc2.bias", MP_TK_VISION, 1, h, L);
	kimi_put(m, MP_ROOT_TOWER, NULL, "ln.weight", MP_TK_VISION, 1, h, 1);
	kimi_put(m, MP_ROOT_TOWER, NULL, "ln.bias", MP_TK_VISION, 1, h, 1);
	for (int pass = 0; pass < 2; pass++) {
		const char *at = pass ? tl : sl;

		kimi_put(m, MP_ROOT_PROJECTOR, at, "fc1.weight", MP_TK_PROJECTOR, sd, pass ? sd * tm : sd, 1);
		kimi_put(m, MP_ROOT_PROJECTOR, at, "fc1.bias", MP_TK_PROJECTOR, 1, sd, 1);
		kimi_put(m, MP_ROOT_PROJECTOR, at, "fc2.weight", MP_TK_PROJECTOR, sd, sd, 1);
		kimi_put(m, MP_ROOT_PROJECTOR, at, "fc2.bias", MP_TK_PROJECTOR, 1, sd, 1);
		kimi_put(m, MP_ROOT_PROJECTOR, at, "ln.weight", MP_TK_PROJECTOR, 1, sd, 1);
		kimi_put(m, MP_ROOT_PROJECTOR, at, "ln.bias", MP_TK_PROJECTOR, 1, sd, 1);
	}
	kimi_put(m, MP_ROOT_PROJECTOR, NULL, "mlp.weight", MP_TK_PROJECTOR, out, sd, 1);
	kimi_put(m, MP_ROOT_PROJECTOR, NULL, "mlp.bias", MP_TK_PROJECTOR, 1, out, 1);
	kimi_put(m, MP_ROOT_PROJECTOR, NULL, "after_norm.weight", MP_TK_PROJECTOR, 1, out, 1);
}

/*
 * AriaProjector (modeling_aria.py): query, max(projector_patch_to_query_dict's values) (AriaConfig's default {1225:
 * 128, 4900: 256}: 256) learned queries of the tower's width h; cross_attn: q_proj, k_proj, v_proj h x h without
 * biases, multihead_attn (nn.MultiheadAttention of vision_config.num_attention_heads: in_proj 3h x h and out_proj h x
 * h, biased), linear h x h biased, layer_norm and layer_norm_kv LayerNorms of h; layer_norm of h; feed_forward
 * linear_in h -> the decoder's width and linear_out the decoder's square, without biases. Default (h 1152, decoder
 * 4096): 256 x 1152 + 3 x 1152^2 + (3 x 1152^2 + 3 x 1152) + 2 x (1152^2 + 1152) + 6 x 1152 + 4096 x 1152 + 4096^2 =
 * 32,420,224. Errors: a 422 on projector_patch_to_query_dict when it is not an object of positive integers, on
 * vision_config.num_attention_heads when it does not divide h (MultiheadAttention asserts).
 */
static void aria_projector(hf_ctx *c, mp_model *m)
{
	const cJSON *pq = cJSON_GetObjectItemCaseSensitive(c->cfg, "projector_patch_to_query_dict"), *e;
	const cJSON *vc = cJSON_GetObjectItemCaseSensitive(c->cfg, "vision_config");
	uint64_t h = m->vision.hidden, out = m->hidden_size, q = 256, heads = 16;
	const char *ca = "cross_attn";

	if (pq && !cJSON_IsNull(pq)) {
		q = 0;
		if (!cJSON_IsObject(pq) || cJSON_GetArraySize(pq) == 0) {
			hf_fail_key(c, "projector_patch_to_query_dict",
			            "projector_patch_to_query_dict must be an object of patch counts to query counts");
			return;
		}
		cJSON_ArrayForEach(e, pq)
		{
			if (!cJSON_IsNumber(e) || e->valuedouble < 1 || e->valuedouble > (double)(UINT64_C(1) << 24) ||
			    e->valuedouble != (double)(uint64_t)e->valuedouble) {
				hf_fail_key(c, "projector_patch_to_query_dict",
				            "projector_patch_to_query_dict's query counts must be integers from 1 to 2^24");
				return;
			}
			if ((uint64_t)e->valuedouble > q)
				q = (uint64_t)e->valuedouble;
		}
	}
	if (cJSON_IsObject(vc)) { /* Idefics3VisionConfig's num_attention_heads: 16 */
		char pointer[96];
		hf_ctx v;

		snprintf(pointer, sizeof(pointer), "%s/vision_config", c->pointer);
		v = (hf_ctx){vc, pointer, c->err, c->st, NULL, NULL, c->decode_type};
		heads = hf_get_u64(&v, KEYS("num_attention_heads"), 16);
		if (v.st == MP_OK && (heads == 0 || h % heads != 0))
			hf_fail_key(&v, "num_attention_heads",
			            "the image tower's num_attention_heads must divide its hidden_size (AriaCrossAttention's "
			            "nn.MultiheadAttention)");
		c->st = v.st;
		if (c->st != MP_OK)
			return;
	}
	kimi_put(m, MP_ROOT_PROJECTOR, NULL, "query", MP_TK_PROJECTOR, q, h, 1);
	kimi_put(m, MP_ROOT_PROJECTOR, ca, "q_proj.weight", MP_TK_PROJECTOR, h, h, 1);
	kimi_put(m, MP_ROOT_PROJECTOR, ca, "k_proj.weight", MP_TK_PROJECTOR, h, h, 1);
	kimi_put(m, MP_ROOT_PROJECTOR, ca, "v_proj.weight", MP_TK_PROJECTOR, h, h, 1);
	kimi_put(m, MP_ROOT_PROJECTOR, "cross_attn.multihead_attn", "in_proj_weight", MP_TK_PROJECTOR, 3 * h, h, 1);
	kimi_put(m, MP_ROOT_PROJECTOR, "cross_attn.multihead_attn", "in_proj_bias", MP_TK_PROJECTOR, 1, 3 * h, 1);
	kimi_put(m, MP_ROOT_PROJECTOR, "cross_attn.multihead_attn", "out_proj.weight", MP_TK_PROJECTOR, h, h, 1);
	kimi_put(m, MP_ROOT_PROJECTOR, "cross_attn.multihead_attn", "out_proj.bias", MP_TK_PROJECTOR, 1, h, 1);
	kimi_put(m, MP_ROOT_PROJECTOR, ca, "linear.weight", MP_TK_PROJECTOR, h, h, 1);
	kimi_put(m, MP_ROOT_PROJECTOR, ca, "linear.bias", MP_TK_PROJECTOR, 1, h, 1);
	kimi_put(m, MP_ROOT_PROJECTOR, ca, "layer_norm.weight", MP_TK_PROJECTOR, 1, h, 1);
	kimi_put(m, MP_ROOT_PROJECTOR, ca, "layer_norm.bias", MP_TK_PROJECTOR, 1, h, 1);
	kimi_put(m, MP_ROOT_PROJECTOR, ca, "layer_norm_kv.weight", MP_TK_PROJECTOR, 1, h, 1);
	kimi_put(m, MP_ROOT_PROJECTOR, ca, "layer_norm_kv.bias", MP_TK_PROJECTOR, 1, h, 1);
	kimi_put(m, MP_ROOT_PROJECTOR, NULL, "layer_norm.weight", MP_TK_PROJECTOR, 1, h, 1);
	kimi_put(m, MP_ROOT_PROJECTOR, NULL, "layer_norm.bias", MP_TK_PROJECTOR, 1, h, 1);
	kimi_put(m, MP_ROOT_PROJECTOR, "feed_forward", "linear_in.weight", MP_TK_PROJECTOR, out, h, 1);
	kimi_put(m, MP_ROOT_PROJECTOR, "feed_forward", "linear_out.weight", MP_TK_PROJECTOR, out, out, 1);
}

/*
 * The projectors of wrappers_v1's rows, from the tower's width h (m->vision.hidden) to the decoder's (out):
 *   LFM2-VL (modeling_lfm2_vl.py Lfm2VlMultiModalProjector): in = h x downsample_factor^2 (2); a LayerNorm of in
 *     when projector_use_layernorm (True); linear_1 in -> projector_hidden_size (2560) and linear_2 to out, biased
 *     when projector_bias (True). Default: 768 x 4 = 3072 -> 2560 -> 2560 (LFM2's width), 14,429,184 parameters.
 *   Aya Vision (modeling_aya_vision.py AyaVisionMultiModalProjector): in = h x downsample_factor^2 (2); layernorm
 *     of in; linear_1 in -> alignment_intermediate_size (getattr's default: the decoder's hidden_size), linear_2
 *     from half of it to out, both biased.
 *   HyperCLOVAX-Vision-V2 (modeling_hyperclovax_vision_v2.py): projector, nn.Linear(out_hidden_size, out) biased.
 *   VideoLLaMA 3 (modeling_video_llama_3.py VideoLlama3Projector): readout.0 h -> out and readout.2 out -> out, both
 *     biased. Default: 768 x 4096 + 4096 + 4096 x 4096 + 4096 = 19,931,136.
 *   PaddleOCR-VL (modeling_paddleocr_vl.py PaddleOCRProjector): hm = h x spatial_merge_size^2 (the vision_config's,
 *     2); pre_norm a LayerNorm of h, linear_1 hm -> hm, linear_2 hm -> out, biased. Default: 2 x 1152 + 4608 x
 *     4608 + 4608 + 4608 x 1024 + 1024 = 25,960,192.
 *   Cosmos3-Edge (modeling_cosmos3_edge.py Cosmos3EdgePatchMerger): norm a LayerNorm of h, linear_fc1 hm ->
 *     projector_hidden_size (the wrapper's, 11520), linear_fc2 to out, biased. Default: 2 x 1152 + 4608 x 11520 +
 *     11520 + 11520 x 2048 + 2048 = 76,692,992.
 */
static void wrap_projector_v1(hf_ctx *c, const wrap_row *w, mp_model *m)
{
	uint64_t h = m->vision.hidden, out = m->hidden_size, ds, in;

	if (w->projector == WRAP_PROJ_ARIA) {
		aria_projector(c, m);
		return;
	}
	if (w->projector == WRAP_PROJ_PADDLE || w->projector == WRAP_PROJ_COSMOS3_EDGE) {
		bool paddle = w->projector == WRAP_PROJ_PADDLE;
		uint64_t hm = hf_mul(c, hf_mul(c, m->vision.merge, m->vision.merge, "spatial_merge_size"), h,
		                     "spatial_merge_size");
		uint64_t mid = paddle ? hm : hf_get_u64(c, KEYS("projector_hidden_size"), 11520);

		if (c->st == MP_OK && mid == 0)
			hf_fail_key(c, "projector_hidden_size", "projector_hidden_size must be at least 1");
		if (c->st != MP_OK)
			return;
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, paddle ? "pre_norm.weight" : "norm.weight", MP_TK_PROJECTOR,
		          MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, 1);
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, paddle ? "pre_norm.bias" : "norm.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE,
		          MP_STEP_NONE, true, 1, h, 1);
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, paddle ? "linear_1.weight" : "linear_fc1.weight", MP_TK_PROJECTOR,
		          MP_SPLIT_NONE, MP_STEP_NONE, false, mid, hm, 1);
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, paddle ? "linear_1.bias" : "linear_fc1.bias", MP_TK_PROJECTOR,
		          MP_SPLIT_NONE, MP_STEP_NONE, true, 1, mid, 1);
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, paddle ? "linear_2.weight" : "linear_fc2.weight", MP_TK_PROJECTOR,
		          MP_SPLIT_NONE, MP_STEP_NONE, false, out, mid, 1);
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, paddle ? "linear_2.bias" : "linear_fc2.bias", MP_TK_PROJECTOR,
		          MP_SPLIT_NONE, MP_STEP_NONE, true, 1, out, 1);
		return;
	}
	if (w->projector == WRAP_PROJ_READOUT) {
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "readout.0.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false,
		          out, h, 1);
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "readout.0.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
		          out, 1);
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "readout.2.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false,
		          out, out, 1);
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "readout.2.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
		          out, 1);
		return;
	}
	if (w->projector == WRAP_PROJ_HCX) {
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "projector.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false,
		          out, m->vision.out_hidden, 1);
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "projector.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
		          out, 1);
		return;
	}
	ds = hf_get_u64(c, KEYS("downsample_factor"), 2);
	if (c->st == MP_OK && (ds == 0 || ds > 64)) {
		hf_fail_key(c, "downsample_factor", "downsample_factor must be from 1 to 64 (the pixel shuffle's side)");
		return;
	}
	in = hf_mul(c, ds * ds, h, "downsample_factor");
	if (w->projector == WRAP_PROJ_LFM2) {
		uint64_t mid = hf_get_u64(c, KEYS("projector_hidden_size"), 2560);
		bool bias = hf_get_bool(c, KEYS("projector_bias"), true), ln = hf_get_bool(c, KEYS("projector_use_layernorm"), true);

		if (c->st == MP_OK && mid == 0)
			hf_fail_key(c, "projector_hidden_size", "projector_hidden_size must be at least 1");
		if (c->st != MP_OK)
			return;
		if (ln) {
			hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "layer_norm.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE,
			          true, 1, in, 1);
			hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "layer_norm.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE,
			          true, 1, in, 1);
		}
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "linear_1.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false,
		          mid, in, 1);
		if (bias)
			hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "linear_1.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true,
			          1, mid, 1);
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "linear_2.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false,
		          out, mid, 1);
		if (bias)
			hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "linear_2.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true,
			          1, out, 1);
		return;
	}
	{ /* WRAP_PROJ_AYA */
		uint64_t align = hf_get_u64(c, KEYS("alignment_intermediate_size"), out);

		if (c->st == MP_OK && (align < 2 || align % 2))
			hf_fail_key(c, "alignment_intermediate_size",
			            "alignment_intermediate_size must be even and at least 2 (SwiGLU halves it)");
		if (c->st != MP_OK)
			return;
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "layernorm.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
		          in, 1);
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "layernorm.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
		          in, 1);
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "linear_1.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false,
		          align, in, 1);
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "linear_1.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
		          align, 1);
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "linear_2.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false,
		          out, align / 2, 1);
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "linear_2.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
		          out, 1);
	}
}

/* A tensor of kind k under root: rows x cols, or a vector of cols values when rows is 1. */
static void kimi_put(mp_model *m, uint8_t root, const char *path, const char *leaf, mp_tensor_kind k, uint64_t rows,
                     uint64_t cols, uint64_t count)
{
	hf_tensor(m, root, path, leaf, k, MP_SPLIT_NONE, MP_STEP_NONE, rows == 1, rows, cols, count);
}

/*
 * Kimi K2.5's tower and projector (modeling_kimi_k25.py Kimi_K25VisionModel, Kimi_K25MultimodalProjection;
 * Kimi_K25VisionConfig: hidden_size 1152, intermediate_size 4304, num_hidden_layers 27, num_attention_heads 16, 14 px
 * patches, a learned pos_emb_height x pos_emb_width (64 x 64) grid of positions, merge_kernel_size [2, 2]):
 * model.vision_tower: patch_embed.proj a Conv2d(3, hidden, patch) with a bias, patch_embed.pos_emb.position_embeddings
 * [height, width, hidden]; per layer LayerNorms norm1 and norm2, attn q_proj, k_proj, v_proj and proj (hidden x
 * hidden, biased), mlp fc1 and fc2 (biased); final_layernorm. model.mm_projector: pre_norm a LayerNorm of the
 * wrapper's projection_hidden_size (1152), in_proj hm x hm and out_proj hm -> the decoder's width, biased, hm = hidden x
 * merge_kernel_size[0] x [1]. Default: tower 416,866,032, projector 2 x 1152 + 4608 x 4608 + 4608 + 4608 x 7168 + 7168
 * = 54,277,888. Errors: a 422 naming the key for a width, depth or grid of 0 or past the bounds below.
 */
static void kimi_k25_tower(hf_ctx *top, mp_model *m)
{
	const cJSON *mk;
	char pointer[96];
	hf_ctx c;
	uint64_t h, inter, L, patch, ph, pw, k0 = 2, k1 = 2, hm, ph_norm, out = m->hidden_size;
	const char *lay = "layers.{i}", *attn = "layers.{i}.attn", *mlp = "layers.{i}.mlp";

	if (!hf_sub_config(top, "vision_config", pointer, sizeof(pointer), &c))
		return;
	h = hf_get_u64(&c, KEYS("hidden_size"), 1152);
	inter = hf_get_u64(&c, KEYS("intermediate_size"), 4304);
	L = hf_get_u64(&c, KEYS("num_hidden_layers"), 27);
	patch = square_side(&c, "patch_size", 14);
	ph = hf_get_u64(&c, KEYS("pos_emb_height"), 64);
	pw = hf_get_u64(&c, KEYS("pos_emb_width"), 64);
	mk = c.cfg ? cJSON_GetObjectItemCaseSensitive(c.cfg, "merge_kernel_size") : NULL;
	if (c.st == MP_OK && mk && !cJSON_IsNull(mk)) {
		const cJSON *a = cJSON_GetArrayItem(mk, 0), *b = cJSON_GetArrayItem(mk, 1);

		if (!cJSON_IsArray(mk) || cJSON_GetArraySize(mk) != 2 || !cJSON_IsNumber(a) || !cJSON_IsNumber(b) ||
		    a->valuedouble < 1 || a->valuedouble > 64 || b->valuedouble < 1 || b->valuedouble > 64 ||
		    a->valuedouble != (double)(uint64_t)a->valuedouble || b->valuedouble != (double)(uint64_t)b->valuedouble)
			hf_fail_key(&c, "merge_kernel_size", "merge_kernel_size must be a list of two integers from 1 to 64");
		else {
			k0 = (uint64_t)a->valuedouble;
			k1 = (uint64_t)b->valuedouble;
		}
	}
	if (c.st == MP_OK && (h == 0 || L == 0 || inter == 0 || ph == 0 || pw == 0 || h > (UINT64_C(1) << 20) ||
	                      inter > (UINT64_C(1) << 24) || L > MP_MAX_LAYERS || ph > 4096 || pw > 4096))
		hf_fail_key(&c, h == 0 || h > (UINT64_C(1) << 20) ? "hidden_size"
		                : L == 0 || L > MP_MAX_LAYERS    ? "num_hidden_layers"
		                : inter == 0 || inter > (UINT64_C(1) << 24) ? "intermediate_size"
		                                                            : "pos_emb_height",
		            "the image tower needs a width from 1 to 2^20, intermediate_size from 1 to 2^24, 1 to 1024 layers "
		            "and a position grid (pos_emb_height, pos_emb_width) from 1 to 4096 a side");
	top->st = c.st;
	if (top->st != MP_OK)
		return;
	ph_norm = hf_get_u64(top, KEYS("projection_hidden_size"), 1152);
	if (top->st == MP_OK && (ph_norm == 0 || ph_norm > (UINT64_C(1) << 24)))
		hf_fail_key(top, "projection_hidden_size", "projection_hidden_size must be from 1 to 2^24");
	if (top->st != MP_OK)
		return;
	hm = h * k0 * k1;
	mp_inventory_root(&m->inv, MP_ROOT_TOWER, "model.vision_tower.");
	mp_inventory_root(&m->inv, MP_ROOT_PROJECTOR, "model.mm_projector.");
	{
		uint64_t conv[4] = {h, 3, patch, patch}, grid[3] = {ph, pw, h};

		hf_shape(m, MP_ROOT_TOWER, "patch_embed", "proj.weight", MP_TK_VISION, 0, conv, 4, 1);
		kimi_put(m, MP_ROOT_TOWER, "patch_embed", "proj.bias", MP_TK_VISION, 1, h, 1);
		hf_shape(m, MP_ROOT_TOWER, "patch_embed.pos_emb", "position_embeddings", MP_TK_VISION, 0, grid, 3, 1);
	}
	kimi_put(m, MP_ROOT_TOWER, lay, "norm1.weight", MP_TK_VISION, 1, h, L);
	kimi_put(m, MP_ROOT_TOWER, lay, "norm1.bias", MP_TK_VISION, 1, h, L);
	kimi_put(m, MP_ROOT_TOWER, lay, "norm2.weight", MP_TK_VISION, 1, h, L);
	kimi_put(m, MP_ROOT_TOWER, lay, "norm2.bias", MP_TK_VISION, 1, h, L);
	kimi_put(m, MP_ROOT_TOWER, attn, "q_proj.weight", MP_TK_VISION, h, h, L);
	kimi_put(m, MP_ROOT_TOWER, attn, "q_proj.bias", MP_TK_VISION, 1, h, L);
	kimi_put(m, MP_ROOT_TOWER, attn, "k_proj.weight", MP_TK_VISION, h, h, L);
	kimi_put(m, MP_ROOT_TOWER, attn, "k_proj.bias", MP_TK_VISION, 1, h, L);
	kimi_put(m, MP_ROOT_TOWER, attn, "v_proj.weight", MP_TK_VISION, h, h, L);
	kimi_put(m, MP_ROOT_TOWER, attn, "v_proj.bias", MP_TK_VISION, 1, h, L);
	kimi_put(m, MP_ROOT_TOWER, attn, "proj.weight", MP_TK_VISION, h, h, L);
	kimi_put(m, MP_ROOT_TOWER, attn, "proj.bias", MP_TK_VISION, 1, h, L);
	kimi_put(m, MP_ROOT_TOWER, mlp, "fc1.weight", MP_TK_VISION, inter, h, L);
	kimi_put(m, MP_ROOT_TOWER, mlp, "fc1.bias", MP_TK_VISION, 1, inter, L);
	kimi_put(m, MP_ROOT_TOWER, mlp, "fc2.weight", MP_TK_VISION, h, inter, L);
	kimi_put(m, MP_ROOT_TOWER, mlp, "fc2.bias", MP_TK_VISION, 1, h, L);
	kimi_put(m, MP_ROOT_TOWER, NULL, "final_layernorm.weight", MP_TK_VISION, 1, h, 1);
	kimi_put(m, MP_ROOT_TOWER, NULL, "final_layernorm.bias", MP_TK_VISION, 1, h, 1);
	kimi_put(m, MP_ROOT_PROJECTOR, NULL, "pre_norm.weight", MP_TK_PROJECTOR, 1, ph_norm, 1);
	kimi_put(m, MP_ROOT_PROJECTOR, NULL, "pre_norm.bias", MP_TK_PROJECTOR, 1, ph_norm, 1);
	kimi_put(m, MP_ROOT_PROJECTOR, NULL, "in_proj.weight", MP_TK_PROJECTOR, hm, hm, 1);
	kimi_put(m, MP_ROOT_PROJECTOR, NULL, "in_proj.bias", MP_TK_PROJECTOR, 1, hm, 1);
	kimi_put(m, MP_ROOT_PROJECTOR, NULL, "out_proj.weight", MP_TK_PROJECTOR, out, hm, 1);
	kimi_put(m, MP_ROOT_PROJECTOR, NULL, "out_proj.bias", MP_TK_PROJECTOR, 1, out, 1);
}

/*
 * GLM-OCR's tower (modeling_glm_ocr.py GlmOcrVisionModel; GlmOcrVisionConfig: depth 24, hidden_size 1024, num_heads
 * 16, attention_bias True, 14 px patches x 2 frames, spatial_merge_size 2, out_hidden_size 1536, intermediate_size
 * 4096) under model.visual: the 3-D patch convolution with a bias; blocks of RMSNorms norm1 and norm2, a fused qkv and
 * proj, q_norm and k_norm of head_dim (hidden // num_heads), a gated MLP of intermediate_size, every projection biased
 * when attention_bias; post_layernorm; downsample, a convolution over merge x merge patches to out_hidden_size with a
 * bias; the merger: proj out x out, post_projection_norm a LayerNorm, a gated MLP of out x in_channels, no biases. No
 * position table (rotary). Default: 434,120,192. Errors: a 422 naming the key of a size of 0 or past the bounds below.
 */
static void glm_ocr_tower(hf_ctx *top, mp_model *m)
{
	char pointer[96];
	hf_ctx c;
	uint64_t h, L, heads, ch, patch, tp, merge, out, inter, hd;
	bool bias;
	const char *blk = "blocks.{i}", *attn = "blocks.{i}.attn", *mlp = "blocks.{i}.mlp";
	const uint8_t T = MP_ROOT_TOWER;

	if (!hf_sub_config(top, "vision_config", pointer, sizeof(pointer), &c))
		return;
	L = hf_get_u64(&c, KEYS("depth", "num_hidden_layers"), 24);
	h = hf_get_u64(&c, KEYS("hidden_size"), 1024);
	heads = hf_get_u64(&c, KEYS("num_heads", "num_attention_heads"), 16);
	bias = hf_get_bool(&c, KEYS("attention_bias"), true);
	ch = hf_get_u64(&c, KEYS("in_channels"), 3);
	patch = square_side(&c, "patch_size", 14);
	tp = square_side(&c, "temporal_patch_size", 2);
	merge = hf_get_u64(&c, KEYS("spatial_merge_size"), 2);
	out = hf_get_u64(&c, KEYS("out_hidden_size"), 1536);
	inter = hf_get_u64(&c, KEYS("intermediate_size"), 4096);
	if (c.st == MP_OK && (h == 0 || L == 0 || patch == 0 || merge == 0 || tp == 0 || ch == 0 || heads == 0 ||
	                      heads > h || h > (UINT64_C(1) << 20) || out == 0 || out > (UINT64_C(1) << 20) ||
	                      inter == 0 || inter > (UINT64_C(1) << 24) || L > MP_MAX_LAYERS || ch > 256 || merge > 64 ||
	                      tp > 64))
		hf_fail_key(&c, heads == 0 || heads > h ? "num_heads" : "hidden_size",
		            "the image tower needs a width and out_hidden_size from 1 to 2^20, num_heads from 1 to the width, "
		            "intermediate_size from 1 to 2^24, 1 to 1024 layers, in_channels from 1 to 256, spatial_merge_size "
		            "and temporal_patch_size from 1 to 64");
	top->st = c.st;
	if (top->st != MP_OK)
		return;
	hd = h / heads;
	mp_inventory_root(&m->inv, T, "model.visual.");
	{
		uint64_t conv[5] = {h, ch, tp, patch, patch}, down[4] = {out, h, merge, merge};

		hf_shape(m, T, "patch_embed", "proj.weight", MP_TK_VISION, 0, conv, 5, 1);
		kimi_put(m, T, "patch_embed", "proj.bias", MP_TK_VISION, 1, h, 1);
		hf_shape(m, T, NULL, "downsample.weight", MP_TK_VISION, 0, down, 4, 1);
		kimi_put(m, T, NULL, "downsample.bias", MP_TK_VISION, 1, out, 1);
	}
	kimi_put(m, T, blk, "norm1.weight", MP_TK_VISION, 1, h, L);
	kimi_put(m, T, blk, "norm2.weight", MP_TK_VISION, 1, h, L);
	kimi_put(m, T, attn, "qkv.weight", MP_TK_VISION, 3 * h, h, L);
	kimi_put(m, T, attn, "proj.weight", MP_TK_VISION, h, h, L);
	kimi_put(m, T, attn, "q_norm.weight", MP_TK_VISION, 1, hd, L);
	kimi_put(m, T, attn, "k_norm.weight", MP_TK_VISION, 1, hd, L);
	kimi_put(m, T, mlp, "gate_proj.weight", MP_TK_VISION, inter, h, L);
	kimi_put(m, T, mlp, "up_proj.weight", MP_TK_VISION, inter, h, L);
	kimi_put(m, T, mlp, "down_proj.weight", MP_TK_VISION, h, inter, L);
	if (bias) {
		kimi_put(m, T, attn, "qkv.bias", MP_TK_VISION, 1, 3 * h, L);
		kimi_put(m, T, attn, "proj.bias", MP_TK_VISION, 1, h, L);
		kimi_put(m, T, mlp, "gate_proj.bias", MP_TK_VISION, 1, inter, L);
		kimi_put(m, T, mlp, "up_proj.bias", MP_TK_VISION, 1, inter, L);
		kimi_put(m, T, mlp, "down_proj.bias", MP_TK_VISION, 1, h, L);
	}
	kimi_put(m, T, NULL, "post_layernorm.weight", MP_TK_VISION, 1, h, 1);
	kimi_put(m, T, "merger", "proj.weight", MP_TK_PROJECTOR, out, out, 1);
	kimi_put(m, T, "merger", "post_projection_norm.weight", MP_TK_PROJECTOR, 1, out, 1);
	kimi_put(m, T, "merger", "post_projection_norm.bias", MP_TK_PROJECTOR, 1, out, 1);
	kimi_put(m, T, "merger", "gate_proj.weight", MP_TK_PROJECTOR, out * ch, out, 1);
	kimi_put(m, T, "merger", "up_proj.weight", MP_TK_PROJECTOR, out * ch, out, 1);
	kimi_put(m, T, "merger", "down_proj.weight", MP_TK_PROJECTOR, out, out * ch, 1);
}

/*
 * Qwen2.5-Omni's audio encoder (modeling_qwen2_5_omni.py Qwen2_5OmniAudioEncoder; Qwen2_5OmniAudioEncoderConfig:
 * num_mel_bins 128, d_model 1280, encoder_layers 32, encoder_attention_heads 20, encoder_ffn_dim 5120, output_dim
 * 3584) under model.audio_tower, counted with the towers (kind vision, as generate.py's VISION counts audio_tower):
 * conv1 Conv1d(mel, d, 3) and conv2 Conv1d(d, d, 3) with biases, audio_bos_eos_token an Embedding(2, output_dim); per
 * layer q_proj, v_proj and out_proj d x d with biases, k_proj without, self_attn_layer_norm and final_layer_norm
 * LayerNorms, fc1 d -> ffn and fc2 ffn -> d with biases; ln_post, proj d -> output_dim with a bias. Default: 639,647,232.
 * Qwen3-Omni's (modeling_qwen3_omni_moe.py Qwen3OmniMoeAudioEncoder; downsample_hidden_size 480): three Conv2d of
 * downsample_hidden_size channels (1 input, 3 x 3, biased), conv_out Linear(downsample_hidden_size x f, d) without a
 * bias where f = (((mel + 1) // 2 + 1) // 2 + 1) // 2 (16 for 128 bins), the same layers with a k_proj bias, ln_post,
 * proj1 d -> d and proj2 d -> output_dim with biases, no audio_bos_eos_token. Default: 649,894,784.
 * Errors: a 422 naming encoder_attention_heads when it does not divide d_model (Qwen2_5OmniAudioAttention raises), or
 * the key of a size of 0 or past the bounds below.
 */
static void omni_audio(hf_ctx *top, mp_model *m, bool v3)
{
	const cJSON *ac = cJSON_GetObjectItemCaseSensitive(top->cfg, "audio_config");
	char pointer[96];
	hf_ctx c;
	uint64_t mel, d, L, heads, ffn, out, dh = 0;
	const char *lay = "layers.{i}", *att = "layers.{i}.self_attn";
	const uint8_t A = MP_ROOT_EXTRA;

	if (ac && !cJSON_IsNull(ac) && !cJSON_IsObject(ac)) {
		hf_fail_key(top, "audio_config", "audio_config must be an object (the audio encoder's config)");
		return;
	}
	snprintf(pointer, sizeof(pointer), "%s/audio_config", top->pointer);
	c = (hf_ctx){cJSON_IsObject(ac) ? ac : NULL, pointer, top->err, top->st, NULL, NULL, top->decode_type};
	mel = hf_get_u64(&c, KEYS("num_mel_bins"), 128);
	d = hf_get_u64(&c, KEYS("d_model", "hidden_size"), 1280);
	L = hf_get_u64(&c, KEYS("encoder_layers", "num_hidden_layers"), 32);
	heads = hf_get_u64(&c, KEYS("encoder_attention_heads", "num_attention_heads"), 20);
	ffn = hf_get_u64(&c, KEYS("encoder_ffn_dim"), 5120);
	out = hf_get_u64(&c, KEYS("output_dim"), 3584);
	if (v3) {
		dh = hf_get_u64(&c, KEYS("downsample_hidden_size"), 480);
		if (c.st == MP_OK && (dh == 0 || dh > (UINT64_C(1) << 16)))
			hf_fail_key(&c, "downsample_hidden_size", "downsample_hidden_size must be from 1 to 65536");
	}
	if (c.st == MP_OK && (mel == 0 || mel > 4096 || d == 0 || d > (UINT64_C(1) << 20) || L == 0 || L > MP_MAX_LAYERS ||
	                      ffn == 0 || ffn > (UINT64_C(1) << 24) || out == 0 || out > (UINT64_C(1) << 20)))
		hf_fail_key(&c, mel == 0 || mel > 4096 ? "num_mel_bins"
		                : d == 0 || d > (UINT64_C(1) << 20) ? "d_model"
		                : L == 0 || L > MP_MAX_LAYERS ? "encoder_layers"
		                : ffn == 0 || ffn > (UINT64_C(1) << 24) ? "encoder_ffn_dim"
		                                                        : "output_dim",
		            "the audio encoder needs num_mel_bins from 1 to 4096, d_model and output_dim from 1 to 2^20, 1 to "
		            "1024 encoder_layers and encoder_ffn_dim from 1 to 2^24");
	if (c.st == MP_OK && (heads == 0 || d % heads != 0))
		hf_fail_key(&c, "encoder_attention_heads",
		            "encoder_attention_heads must divide d_model (Qwen2_5OmniAudioAttention: embed_dim must be "
		            "divisible by num_heads)");
	top->st = c.st;
	if (top->st != MP_OK)
		return;
	mp_inventory_root(&m->inv, A, "model.audio_tower.");
	if (v3) {
		uint64_t c1[4] = {dh, 1, 3, 3}, c2[4] = {dh, dh, 3, 3}, f = (((mel + 1) / 2 + 1) / 2 + 1) / 2;

		hf_shape(m, A, NULL, "conv2d1.weight", MP_TK_VISION, 0, c1, 4, 1);
		kimi_put(m, A, NULL, "conv2d1.bias", MP_TK_VISION, 1, dh, 1);
		hf_shape(m, A, NULL, "conv2d2.weight", MP_TK_VISION, 0, c2, 4, 1);
		kimi_put(m, A, NULL, "conv2d2.bias", MP_TK_VISION, 1, dh, 1);
		hf_shape(m, A, NULL, "conv2d3.weight", MP_TK_VISION, 0, c2, 4, 1);
		kimi_put(m, A, NULL, "conv2d3.bias", MP_TK_VISION, 1, dh, 1);
		kimi_put(m, A, NULL, "conv_out.weight", MP_TK_VISION, d, dh * f, 1);
	} else {
		uint64_t c1[3] = {d, mel, 3}, c2[3] = {d, d, 3};

		hf_shape(m, A, NULL, "conv1.weight", MP_TK_VISION, 0, c1, 3, 1);
		kimi_put(m, A, NULL, "conv1.bias", MP_TK_VISION, 1, d, 1);
		hf_shape(m, A, NULL, "conv2.weight", MP_TK_VISION, 0, c2, 3, 1);
		kimi_put(m, A, NULL, "conv2.bias", MP_TK_VISION, 1, d, 1);
		kimi_put(m, A, NULL, "audio_bos_eos_token.weight", MP_TK_VISION, 2, out, 1);
	}
	kimi_put(m, A, att, "q_proj.weight", MP_TK_VISION, d, d, L);
	kimi_put(m, A, att, "q_proj.bias", MP_TK_VISION, 1, d, L);
	kimi_put(m, A, att, "k_proj.weight", MP_TK_VISION, d, d, L);
	if (v3)
		kimi_put(m, A, att, "k_proj.bias", MP_TK_VISION, 1, d, L);
	kimi_put(m, A, att, "v_proj.weight", MP_TK_VISION, d, d, L);
	kimi_put(m, A, att, "v_proj.bias", MP_TK_VISION, 1, d, L);
	kimi_put(m, A, att, "out_proj.weight", MP_TK_VISION, d, d, L);
	kimi_put(m, A, att, "out_proj.bias", MP_TK_VISION, 1, d, L);
	kimi_put(m, A, lay, "self_attn_layer_norm.weight", MP_TK_VISION, 1, d, L);
	kimi_put(m, A, lay, "self_attn_layer_norm.bias", MP_TK_VISION, 1, d, L);
	kimi_put(m, A, lay, "fc1.weight", MP_TK_VISION, ffn, d, L);
	kimi_put(m, A, lay, "fc1.bias", MP_TK_VISION, 1, ffn, L);
	kimi_put(m, A, lay, "fc2.weight", MP_TK_VISION, d, ffn, L);
	kimi_put(m, A, lay, "fc2.bias", MP_TK_VISION, 1, d, L);
	kimi_put(m, A, lay, "final_layer_norm.weight", MP_TK_VISION, 1, d, L);
	kimi_put(m, A, lay, "final_layer_norm.bias", MP_TK_VISION, 1, d, L);
	kimi_put(m, A, NULL, "ln_post.weight", MP_TK_VISION, 1, d, 1);
	kimi_put(m, A, NULL, "ln_post.bias", MP_TK_VISION, 1, d, 1);
	if (v3) {
		kimi_put(m, A, NULL, "proj1.weight", MP_TK_PROJECTOR, d, d, 1);
		kimi_put(m, A, NULL, "proj1.bias", MP_TK_PROJECTOR, 1, d, 1);
		kimi_put(m, A, NULL, "proj2.weight", MP_TK_PROJECTOR, out, d, 1);
		kimi_put(m, A, NULL, "proj2.bias", MP_TK_PROJECTOR, 1, out, 1);
		return;
	}
	kimi_put(m, A, NULL, "proj.weight", MP_TK_PROJECTOR, out, d, 1);
	kimi_put(m, A, NULL, "proj.bias", MP_TK_PROJECTOR, 1, out, 1);
}

/*
 * Hunyuan V4 VL's tower (modeling_hy_v4_vl.py HYV4VLVisionModel, HYV4VLVisionConfig: hidden 1536, MLP 6144, 40 layers,
 * 16 heads (attention_heads) of hidden / heads (head_dim when given), 3 channels, 16 px patches, max_image_size 2048,
 * spatial_merge_size 2, out_hidden_size 6144) under model.vision_tower.: embeddings.patch_embedding (a Conv2d with a
 * bias), embeddings.position_embedding ((max_image_size / patch)^2 + 1 rows), per layer LayerNorms layer_norm1 and
 * layer_norm2, q, k, v and o projections with biases, fc1 and fc2 with biases; patch_merger: before_rms (an RMSNorm of
 * hidden), proj_conv (hidden -> hidden x merge^2, a merge x merge Conv2d with a bias), proj_out (a 1 x 1 Conv2d to
 * out_hidden_size with a bias) and image_newline (out_hidden_size). Worked example (the defaults): 1,235,126,784.
 */
static void hyv4vl_tower(hf_ctx *top, mp_model *m)
{
	char pointer[96];
	hf_ctx c;
	uint64_t h, L, heads, hd, ch, image, patch, merge, out, inter, q, mh;
	const char *blk = "layers.{i}", *att = "layers.{i}.self_attn", *mlp = "layers.{i}.mlp", *pm = "patch_merger";

	if (!hf_sub_config(top, "vision_config", pointer, sizeof(pointer), &c))
		return;
	L = hf_get_u64(&c, KEYS("num_hidden_layers"), 40);
	h = hf_get_u64(&c, KEYS("hidden_size"), 1536);
	heads = hf_get_u64(&c, KEYS("num_attention_heads", "attention_heads"), 16);
	ch = hf_get_u64(&c, KEYS("num_channels"), 3);
	image = hf_get_u64(&c, KEYS("max_image_size"), 2048);
	patch = hf_get_u64(&c, KEYS("patch_size"), 16);
	merge = hf_get_u64(&c, KEYS("spatial_merge_size"), 2);
	out = hf_get_u64(&c, KEYS("out_hidden_size"), 6144);
	inter = hf_get_u64(&c, KEYS("intermediate_size"), 6144);
	hd = heads ? hf_get_u64(&c, KEYS("head_dim"), h / heads) : 0;
	if (c.st == MP_OK && (h == 0 || L == 0 || heads == 0 || hd == 0 || patch == 0 || image < patch || merge == 0 ||
	                      h > (UINT64_C(1) << 20) || out > (UINT64_C(1) << 20) || inter > (UINT64_C(1) << 24) ||
	                      hd > (UINT64_C(1) << 16) || heads > 4096 || L > MP_MAX_LAYERS || ch > 256 || merge > 64 ||
	                      image / patch > 4096))
		hf_fail_key(&c, "hidden_size",
		            "the image tower needs a width and out_hidden_size (below 2^20), heads of a width, a depth (at "
		            "most 1024), a patch no larger than max_image_size, spatial_merge_size from 1 to 64");
	top->st = c.st;
	if (top->st != MP_OK)
		return;
	q = heads * hd;
	mh = h * merge * merge;
	mp_inventory_root(&m->inv, MP_ROOT_TOWER, "model.vision_tower.");
	{
		uint64_t conv[4] = {h, ch, patch, patch}, pconv[4] = {mh, h, merge, merge}, oconv[4] = {out, mh, 1, 1};

		hf_shape(m, MP_ROOT_TOWER, "embeddings", "patch_embedding.weight", MP_TK_VISION, 0, conv, 4, 1);
		hf_tensor(m, MP_ROOT_TOWER, "embeddings", "patch_embedding.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE,
		          true, 1, h, 1);
		hf_tensor(m, MP_ROOT_TOWER, "embeddings", "position_embedding.weight", MP_TK_VISION, MP_SPLIT_NONE,
		          MP_STEP_NONE, false, (image / patch) * (image / patch) + 1, h, 1);
		hf_tensor(m, MP_ROOT_TOWER, pm, "before_rms.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h,
		          1);
		hf_shape(m, MP_ROOT_TOWER, pm, "proj_conv.weight", MP_TK_PROJECTOR, 0, pconv, 4, 1);
		hf_tensor(m, MP_ROOT_TOWER, pm, "proj_conv.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, mh, 1);
		hf_shape(m, MP_ROOT_TOWER, pm, "proj_out.weight", MP_TK_PROJECTOR, 0, oconv, 4, 1);
		hf_tensor(m, MP_ROOT_TOWER, pm, "proj_out.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, out, 1);
		hf_tensor(m, MP_ROOT_TOWER, pm, "image_newline", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, out, 1);
	}
	hf_tensor(m, MP_ROOT_TOWER, blk, "layer_norm1.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
	hf_tensor(m, MP_ROOT_TOWER, blk, "layer_norm1.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
	hf_tensor(m, MP_ROOT_TOWER, blk, "layer_norm2.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
	hf_tensor(m, MP_ROOT_TOWER, blk, "layer_norm2.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
	hf_tensor(m, MP_ROOT_TOWER, att, "q_proj.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, q, h, L);
	hf_tensor(m, MP_ROOT_TOWER, att, "q_proj.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, q, L);
	hf_tensor(m, MP_ROOT_TOWER, att, "k_proj.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, q, h, L);
	hf_tensor(m, MP_ROOT_TOWER, att, "k_proj.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, q, L);
	hf_tensor(m, MP_ROOT_TOWER, att, "v_proj.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, q, h, L);
	hf_tensor(m, MP_ROOT_TOWER, att, "v_proj.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, q, L);
	hf_tensor(m, MP_ROOT_TOWER, att, "o_proj.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, h, q, L);
	hf_tensor(m, MP_ROOT_TOWER, att, "o_proj.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
	hf_tensor(m, MP_ROOT_TOWER, mlp, "fc1.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, inter, h, L);
	hf_tensor(m, MP_ROOT_TOWER, mlp, "fc1.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, inter, L);
	hf_tensor(m, MP_ROOT_TOWER, mlp, "fc2.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, h, inter, L);
	hf_tensor(m, MP_ROOT_TOWER, mlp, "fc2.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
}

/*
 * MiniMax-M3's tower and projector (modeling_minimax_m3_vl.py; MiniMaxM3VLVisionConfig: hidden 1280, MLP 5120, 32
 * layers, 16 heads, 3 channels, 14 px patches x temporal_patch_size 2, spatial_merge_size 2): under
 * model.vision_tower., embeddings.proj (a Conv3d without bias), pre_layrnorm, per layer q, k, v and out_proj
 * (hidden x hidden with biases), layer_norm1 and layer_norm2 (LayerNorms), fc1 and fc2 with biases; under
 * model.multi_modal_projector., linear_1 (tower width -> projector_hidden_size 6144), linear_2 (-> the decoder's
 * width), merge_linear_1 (the decoder's width x spatial_merge_size^2 -> projector_hidden_size) and merge_linear_2 (->
 * the decoder's width), all with biases. Worked example (the defaults): 631,185,920 + 234,381,312.
 */
static void m3_tower(hf_ctx *top, mp_model *m)
{
	char pointer[96];
	hf_ctx c;
	uint64_t h, L, ch, patch, tp, merge, inter, P, th = m->hidden_size, mh;
	const char *blk = "layers.{i}", *att = "layers.{i}.self_attn", *mlp = "layers.{i}.mlp";

	if (!hf_sub_config(top, "vision_config", pointer, sizeof(pointer), &c))
		return;
	L = hf_get_u64(&c, KEYS("num_hidden_layers"), 32);
	h = hf_get_u64(&c, KEYS("hidden_size"), 1280);
	ch = hf_get_u64(&c, KEYS("num_channels"), 3);
	patch = hf_get_u64(&c, KEYS("patch_size"), 14);
	tp = hf_get_u64(&c, KEYS("temporal_patch_size"), 2);
	merge = hf_get_u64(&c, KEYS("spatial_merge_size"), 2);
	inter = hf_get_u64(&c, KEYS("intermediate_size"), 5120);
	P = hf_get_u64(top, KEYS("projector_hidden_size"), 6144);
	if (c.st == MP_OK && (h == 0 || L == 0 || patch == 0 || tp == 0 || merge == 0 || h > (UINT64_C(1) << 20) ||
	                      inter > (UINT64_C(1) << 24) || L > MP_MAX_LAYERS || ch > 256 || merge > 64 || tp > 64 ||
	                      patch > 1024))
		hf_fail_key(&c, "hidden_size",
		            "the image tower needs a width (below 2^20), a depth (at most 1024), patch_size, "
		            "temporal_patch_size and spatial_merge_size of at least 1");
	top->st = c.st;
	if (top->st == MP_OK && (P == 0 || P > (UINT64_C(1) << 24)))
		hf_fail_key(top, "projector_hidden_size", "projector_hidden_size must be from 1 to 2^24");
	if (top->st != MP_OK)
		return;
	mh = hf_mul(top, th, merge * merge, "hidden_size");
	mp_inventory_root(&m->inv, MP_ROOT_TOWER, "model.vision_tower.");
	mp_inventory_root(&m->inv, MP_ROOT_PROJECTOR, "model.multi_modal_projector.");
	{
		uint64_t conv[5] = {h, ch, tp, patch, patch};

		hf_shape(m, MP_ROOT_TOWER, "embeddings", "proj.weight", MP_TK_VISION, 0, conv, 5, 1);
	}
	hf_tensor(m, MP_ROOT_TOWER, NULL, "pre_layrnorm.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, 1);
	hf_tensor(m, MP_ROOT_TOWER, NULL, "pre_layrnorm.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, 1);
	for (int k = 0; k < 4; k++) {
		static const char *const w[4] = {"q_proj.weight", "k_proj.weight", "v_proj.weight", "out_proj.weight"};
		static const char *const b[4] = {"q_proj.bias", "k_proj.bias", "v_proj.bias", "out_proj.bias"};

		hf_tensor(m, MP_ROOT_TOWER, att, w[k], MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, h, h, L);
		hf_tensor(m, MP_ROOT_TOWER, att, b[k], MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
	}
	hf_tensor(m, MP_ROOT_TOWER, blk, "layer_norm1.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
	hf_tensor(m, MP_ROOT_TOWER, blk, "layer_norm1.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
	hf_tensor(m, MP_ROOT_TOWER, blk, "layer_norm2.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
	hf_tensor(m, MP_ROOT_TOWER, blk, "layer_norm2.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
	hf_tensor(m, MP_ROOT_TOWER, mlp, "fc1.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, inter, h, L);
	hf_tensor(m, MP_ROOT_TOWER, mlp, "fc1.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, inter, L);
	hf_tensor(m, MP_ROOT_TOWER, mlp, "fc2.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, h, inter, L);
	hf_tensor(m, MP_ROOT_TOWER, mlp, "fc2.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
	hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "linear_1.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false, P, h,
	          1);
	hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "linear_1.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, P, 1);
	hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "linear_2.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false, th, P,
	          1);
	hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "linear_2.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, th, 1);
	hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "merge_linear_1.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false,
	          P, mh, 1);
	hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "merge_linear_1.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
	          P, 1);
	hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "merge_linear_2.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false,
	          th, P, 1);
	hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "merge_linear_2.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
	          th, 1);
}

/*
 * Step 3.7's tower and projector (modeling_step3p7.py Step3p7VisionModel, Step3p7Model), from vision_config
 * (Step3p7VisionConfig: hidden_size 1536 (width), num_hidden_layers 47 (layers), num_channels 3, image_size 728,
 * patch_size 14, mlp_ratio 8960 / 1536; intermediate_size is always int(hidden_size x mlp_ratio), whatever the config
 * says): under model.vision_model the patch convolution (no bias) and a learned table of (image_size / patch_size)^2
 * positions, pre_layernorm, per layer q, k, v and out_proj with biases, fc1 and fc2 with biases, layernorm_before and
 * layernorm_after, the layer scales lambda_1 and lambda_2; then downsampler1 (3 x 3, hidden -> 2 hidden) and
 * downsampler2 (2 hidden -> 4 hidden) with biases; model.multi_modal_projector, one linear 4 x hidden -> the decoder's
 * width, its bias when projector_bias (false). Worked example (step3p7-default): 47 layers x 36,988,160 + the patch
 * convolution 903,168 + 2704 positions x 1536 + pre_layernorm 3,072 + downsamplers 42,470,400 and 169,875,456 + the
 * projector 4096 x 6144 = 1,981,014,784 parameters, as transformers counts.
 */
static void step3p7_tower(hf_ctx *top, mp_model *m)
{
	char pointer[96];
	hf_ctx c;
	uint64_t h, L, ch, patch, image, inter, grid, th = m->hidden_size;
	double ratio;
	bool pbias;
	const char *blk = "layers.{i}", *att = "layers.{i}.self_attn", *mlp = "layers.{i}.mlp";

	if (!hf_sub_config(top, "vision_config", pointer, sizeof(pointer), &c))
		return;
	L = hf_get_u64(&c, KEYS("layers", "num_hidden_layers"), 47);
	h = hf_get_u64(&c, KEYS("width", "hidden_size"), 1536);
	ch = hf_get_u64(&c, KEYS("num_channels"), 3);
	patch = hf_get_u64(&c, KEYS("patch_size"), 14);
	image = hf_get_u64(&c, KEYS("image_size"), 728);
	ratio = hf_get_double(&c, c.cfg, "mlp_ratio", 8960.0 / 1536.0);
	pbias = hf_get_bool(top, KEYS("projector_bias"), false);
	if (c.st == MP_OK && (h == 0 || L == 0 || patch == 0 || h > (UINT64_C(1) << 20) || L > MP_MAX_LAYERS || ch > 256 ||
	                      patch > 1024 || image > (UINT64_C(1) << 20)))
		hf_fail_key(&c, "hidden_size",
		            "the image tower needs a width (below 2^20), a depth (at most 1024), a patch_size of 1 to 1024 "
		            "and an image_size below 2^20");
	if (c.st == MP_OK && !(ratio > 0 && (double)h * ratio < (double)(UINT64_C(1) << 24)))
		hf_fail_key(&c, "mlp_ratio", "mlp_ratio must be positive, the MLP width (hidden_size x mlp_ratio) below 2^24");
	top->st = c.st;
	if (top->st != MP_OK)
		return;
	inter = (uint64_t)((double)h * ratio); /* Step3p7VisionConfig: int(self.hidden_size * self.mlp_ratio) */
	grid = (image / patch) * (image / patch);
	mp_inventory_root(&m->inv, MP_ROOT_TOWER, "model.vision_model.");
	mp_inventory_root(&m->inv, MP_ROOT_PROJECTOR, "model.multi_modal_projector.");
	{
		uint64_t conv[4] = {h, ch, patch, patch}, d1[4] = {2 * h, h, 3, 3}, d2[4] = {4 * h, 2 * h, 3, 3};

		hf_shape(m, MP_ROOT_TOWER, "embeddings", "patch_embedding.weight", MP_TK_VISION, 0, conv, 4, 1);
		hf_shape(m, MP_ROOT_TOWER, NULL, "downsampler1.weight", MP_TK_VISION, 0, d1, 4, 1);
		hf_shape(m, MP_ROOT_TOWER, NULL, "downsampler2.weight", MP_TK_VISION, 0, d2, 4, 1);
	}
	hf_tensor(m, MP_ROOT_TOWER, NULL, "downsampler1.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, 2 * h, 1);
	hf_tensor(m, MP_ROOT_TOWER, NULL, "downsampler2.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, 4 * h, 1);
	hf_tensor(m, MP_ROOT_TOWER, "embeddings", "position_embedding.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE,
	          false, grid, h, 1);
	hf_tensor(m, MP_ROOT_TOWER, NULL, "pre_layernorm.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, 1);
	hf_tensor(m, MP_ROOT_TOWER, NULL, "pre_layernorm.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, 1);
	for (int k = 0; k < 4; k++) {
		static const char *const w[4] = {"q_proj.weight", "k_proj.weight", "v_proj.weight", "out_proj.weight"};
		static const char *const b[4] = {"q_proj.bias", "k_proj.bias", "v_proj.bias", "out_proj.bias"};

		hf_tensor(m, MP_ROOT_TOWER, att, w[k], MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, h, h, L);
		hf_tensor(m, MP_ROOT_TOWER, att, b[k], MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
	}
	for (int k = 0; k < 6; k++) {
		static const char *const v[6] = {"layernorm_before.weight", "layernorm_before.bias", "layernorm_after.weight",
		                                 "layernorm_after.bias", "lambda_1", "lambda_2"};

		hf_tensor(m, MP_ROOT_TOWER, blk, v[k], MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
	}
	hf_tensor(m, MP_ROOT_TOWER, mlp, "fc1.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, inter, h, L);
	hf_tensor(m, MP_ROOT_TOWER, mlp, "fc1.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, inter, L);
	hf_tensor(m, MP_ROOT_TOWER, mlp, "fc2.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, h, inter, L);
	hf_tensor(m, MP_ROOT_TOWER, mlp, "fc2.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
	hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false, th, 4 * h, 1);
	if (pbias)
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, th, 1);
}

/* A whole number from 0 to 2^24 under key of c (dflt when absent), or 0 and a 422. */
static uint64_t dots3_size(hf_ctx *c, const char *const *keys, uint64_t dflt)
{
	uint64_t v = hf_get_u64(c, keys, dflt);

	if (c->st == MP_OK && v > (UINT64_C(1) << 24))
		hf_fail_key(c, keys[0], "must be at most 2^24");
	return v;
}

/*
 * dots.llm3 Note's towers (modeling_dots3_note.py Dots3NoteVisionModel, Dots3NoteAudioModel), from vision_config
 * (Dots3NoteVisionConfig: hidden_size 1536 (embed_dim), intermediate_size 4224, 42 layers, num_channels 3,
 * patch_size 14, moe_intermediate_size 2112, attention_bias (use_bias) and mlp_bias false, the "sparse" layers of
 * mlp_layer_types holding per_layer_config's num_local_experts (64 by default) behind a router and its
 * e_score_correction_bias buffer; absent both, pyramid_num_routed's -1 x 25, 4, 8, ..., 64, 64; adapter_in_dim,
 * adapter_out_dim and adapter_merge_size for the merger) and audio_config (Dots3NoteAudioConfig: hidden_size 1280,
 * intermediate_size 5120, 32 layers, downsample_hidden_size 480, feature_size 128, attention_bias true on q, v and o,
 * adapter_out_dim 5120). Vision: patch_embed (a biased convolution and its RMSNorm), per block norm1, attn.qkv,
 * attn.proj, q_norm and k_norm of hidden / heads, norm2, a gated MLP or the experts; the final norm; the merger
 * (ln_q, mlp.0 over merge^2 patches, mlp.2 to adapter_out_dim). Audio: three 3 x 3 convolutions, conv_out (480 x
 * ceil(feature_size / 8) -> hidden), per layer q/k/v/o, gate_up_proj and down_proj with biases and two RMSNorms; its
 * layer_norm and the adapter (LayerNorm, fc1, fc2). The class's checks are 422s naming the key.
 */
static void dots3_towers(hf_ctx *top, mp_model *m)
{
	static const uint64_t pyramid[42] = {0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
	                                     0,  0,  0,  0,  4,  8,  12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64, 64};
	char pointer[96];
	hf_ctx c, a;
	const cJSON *mlt, *plc, *pyr, *v;
	uint64_t h, inter, L, ch, patch, moe, heads, merge, ain, aout, experts[MP_MAX_LAYERS], E;
	uint64_t groups[32][2], ng = 0, dense = 0;
	const char *blk = "blocks.{i}";

	if (!hf_sub_config(top, "vision_config", pointer, sizeof(pointer), &c))
		return;
	h = dots3_size(&c, KEYS("embed_dim", "hidden_size"), 1536);
	inter = dots3_size(&c, KEYS("intermediate_size"), 4224);
	L = hf_get_u64(&c, KEYS("num_hidden_layers"), 42);
	ch = dots3_size(&c, KEYS("num_channels"), 3);
	patch = dots3_size(&c, KEYS("patch_size"), 14);
	moe = dots3_size(&c, KEYS("moe_intermediate_size"), 2112);
	heads = hf_get_u64(&c, KEYS("num_heads", "num_attention_heads"), 24);
	merge = dots3_size(&c, KEYS("spatial_merge_size"), 2);
	E = dots3_size(&c, KEYS("num_local_experts"), 64);
	ain = dots3_size(&c, KEYS("adapter_in_dim"), 1536);
	aout = dots3_size(&c, KEYS("adapter_out_dim"), 5120);
	if (c.st == MP_OK && (L == 0 || L > MP_MAX_LAYERS || heads == 0 || h % heads != 0 || patch == 0))
		hf_fail_key(&c, L == 0 || L > MP_MAX_LAYERS ? "num_hidden_layers" : "num_attention_heads",
		            "the tower needs 1 to 1024 layers, a patch_size, and heads that divide hidden_size");
	if (c.st == MP_OK && ain != h)
		hf_fail_key(&c, "adapter_in_dim", "adapter_in_dim must match hidden_size (Dots3NoteVisionConfig)");
	if (c.st == MP_OK && aout != m->hidden_size)
		hf_fail_key(&c, "adapter_out_dim", "adapter_out_dim must match the text hidden size (Dots3NoteConfig)");
	if (c.st == MP_OK && hf_get_u64(&c, KEYS("adapter_merge_size"), 2) != merge)
		hf_fail_key(&c, "adapter_merge_size", "adapter_merge_size must match spatial_merge_size");
	top->st = c.st;
	if (top->st != MP_OK)
		return;
	/* which blocks hold experts, and how many */
	mlt = c.cfg ? cJSON_GetObjectItemCaseSensitive(c.cfg, "mlp_layer_types") : NULL;
	pyr = c.cfg ? cJSON_GetObjectItemCaseSensitive(c.cfg, "pyramid_num_routed") : NULL;
	plc = c.cfg ? cJSON_GetObjectItemCaseSensitive(c.cfg, "per_layer_config") : NULL;
	for (uint64_t i = 0; i < L; i++)
		experts[i] = 0;
	if (cJSON_IsArray(pyr) || (!cJSON_IsArray(mlt) && (pyr == NULL || cJSON_IsNull(pyr)))) {
		uint64_t i = 0;

		/* layer i reads entry i: a longer list builds, a shorter one fails */
		if (cJSON_IsArray(pyr) ? (uint64_t)cJSON_GetArraySize(pyr) < L : L > 42) {
			hf_fail_key(&c, "pyramid_num_routed", "pyramid_num_routed must give an expert count for each layer (-1: "
			                                      "dense); its default has 42");
			top->st = c.st;
			return;
		}
		if (cJSON_IsArray(pyr)) {
			cJSON_ArrayForEach(v, pyr)
			{
				if (i < L)
					experts[i] = cJSON_IsNumber(v) && v->valuedouble > 0 && v->valuedouble <= 65536
					                 ? (uint64_t)v->valuedouble
					                 : 0;
				i++;
			}
		} else {
			for (i = 0; i < L; i++)
				experts[i] = pyramid[i];
		}
	} else {
		uint64_t i = 0;

		/* Dots3NoteVisionBlock reads entry i of layer i: a longer list builds (its tail unread) */
		if (!cJSON_IsArray(mlt) || (uint64_t)cJSON_GetArraySize(mlt) < L) {
			hf_fail_key(&c, "mlp_layer_types", "mlp_layer_types must list \"dense\" or \"sparse\" for each layer");
			top->st = c.st;
			return;
		}
		cJSON_ArrayForEach(v, mlt)
		{
			if (i < L)
				experts[i] = cJSON_IsString(v) && strcmp(v->valuestring, "sparse") == 0 ? E : 0;
			i++;
		}
		/* per_layer_config's num_local_experts for its layers ("05" or "5") */
		if (!cJSON_IsObject(plc))
			plc = NULL;
		cJSON_ArrayForEach(v, plc)
		{
			char *end;
			unsigned long long k = strtoull(v->string, &end, 10);
			const cJSON *e = cJSON_GetObjectItemCaseSensitive(v, "num_local_experts");

			if (*end == '\0' && k < L && experts[k] && cJSON_IsNumber(e) && e->valuedouble >= 1 &&
			    e->valuedouble <= 65536)
				experts[k] = (uint64_t)e->valuedouble;
		}
	}
	if (hf_get_bool(&c, KEYS("mlp_bias"), false)) {
		for (uint64_t i = 0; i < L; i++)
			if (experts[i]) {
				hf_fail_key(&c, "mlp_bias", "Dots3 vision stacked experts require mlp_bias false");
				top->st = c.st;
				return;
			}
	}
	for (uint64_t i = 0; i < L; i++) {
		uint64_t k = 0;

		if (experts[i] == 0) {
			dense++;
			continue;
		}
		while (k < ng && groups[k][0] != experts[i])
			k++;
		if (k == ng) {
			if (ng == 32) {
				hf_fail_key(&c, "per_layer_config", "at most 32 distinct expert counts are planned");
				top->st = c.st;
				return;
			}
			groups[ng][0] = experts[i];
			groups[ng++][1] = 0;
		}
		groups[k][1]++;
	}
	mp_inventory_root(&m->inv, MP_ROOT_TOWER, "model.vision_tower.");
	{
		uint64_t conv[4] = {h, ch, patch, patch};
		bool bias = hf_get_bool(&c, KEYS("use_bias", "attention_bias"), false), mb = hf_get_bool(&c, KEYS("mlp_bias"), false);
		uint64_t hd = h / heads, mh = hf_mul(top, h, merge * merge, "spatial_merge_size");
		const char *mlp = "blocks.{i}.mlp";

		hf_shape(m, MP_ROOT_TOWER, "patch_embed", "proj.weight", MP_TK_VISION, 0, conv, 4, 1);
		hf_tensor(m, MP_ROOT_TOWER, "patch_embed", "proj.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, 1);
		hf_tensor(m, MP_ROOT_TOWER, "patch_embed", "norm.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, 1);
		hf_tensor(m, MP_ROOT_TOWER, blk, "norm1.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
		hf_tensor(m, MP_ROOT_TOWER, blk, "norm2.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
		hf_tensor(m, MP_ROOT_TOWER, "blocks.{i}.attn", "qkv.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false,
		          3 * h, h, L);
		hf_tensor(m, MP_ROOT_TOWER, "blocks.{i}.attn", "proj.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false,
		          h, h, L);
		if (bias) {
			hf_tensor(m, MP_ROOT_TOWER, "blocks.{i}.attn", "qkv.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true,
			          1, 3 * h, L);
			hf_tensor(m, MP_ROOT_TOWER, "blocks.{i}.attn", "proj.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true,
			          1, h, L);
		}
		hf_tensor(m, MP_ROOT_TOWER, "blocks.{i}.attn", "q_norm.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true,
		          1, hd, L);
		hf_tensor(m, MP_ROOT_TOWER, "blocks.{i}.attn", "k_norm.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true,
		          1, hd, L);
		if (dense) {
			static const char *const w[3] = {"gate_proj.weight", "up_proj.weight", "down_proj.weight"};
			static const char *const b[3] = {"gate_proj.bias", "up_proj.bias", "down_proj.bias"};

			for (int k = 0; k < 3; k++) {
				hf_tensor(m, MP_ROOT_TOWER, mlp, w[k], MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false,
				          k == 2 ? h : inter, k == 2 ? inter : h, dense);
				if (mb)
					hf_tensor(m, MP_ROOT_TOWER, mlp, b[k], MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
					          k == 2 ? h : inter, dense);
			}
		}
		for (uint64_t k = 0; k < ng; k++) {
			uint64_t gu[3] = {groups[k][0], 2 * moe, h}, dn[3] = {groups[k][0], h, moe}, bb[1] = {groups[k][0]};

			hf_shape(m, MP_ROOT_TOWER, mlp, "experts.gate_up_proj", MP_TK_VISION, 0, gu, 3, groups[k][1]);
			hf_shape(m, MP_ROOT_TOWER, mlp, "experts.down_proj", MP_TK_VISION, 0, dn, 3, groups[k][1]);
			hf_tensor(m, MP_ROOT_TOWER, mlp, "gate.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false,
			          groups[k][0], h, groups[k][1]);
			hf_shape(m, MP_ROOT_TOWER, mlp, "e_score_correction_bias", MP_TK_VISION, MP_TF_BUFFER, bb, 1,
			         groups[k][1]);
		}
		hf_tensor(m, MP_ROOT_TOWER, NULL, "norm.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, 1);
		hf_tensor(m, MP_ROOT_TOWER, "merger", "ln_q.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, 1);
		hf_tensor(m, MP_ROOT_TOWER, "merger", "ln_q.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, 1);
		hf_tensor(m, MP_ROOT_TOWER, "merger", "mlp.0.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false, mh,
		          mh, 1);
		hf_tensor(m, MP_ROOT_TOWER, "merger", "mlp.0.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, mh, 1);
		hf_tensor(m, MP_ROOT_TOWER, "merger", "mlp.2.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false, aout,
		          mh, 1);
		hf_tensor(m, MP_ROOT_TOWER, "merger", "mlp.2.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, aout,
		          1);
	}
	/* the audio encoder */
	if (!hf_sub_config(top, "audio_config", pointer, sizeof(pointer), &a))
		return;
	{
		uint64_t ah = dots3_size(&a, KEYS("hidden_size"), 1280), ai = dots3_size(&a, KEYS("intermediate_size"), 5120);
		uint64_t al = hf_get_u64(&a, KEYS("num_hidden_layers"), 32), ds = dots3_size(&a, KEYS("downsample_hidden_size"), 480);
		uint64_t fs = dots3_size(&a, KEYS("feature_size"), 128), ao = dots3_size(&a, KEYS("adapter_out_dim"), 5120);
		uint64_t aheads = hf_get_u64(&a, KEYS("num_attention_heads"), 20);
		uint64_t ain2 = dots3_size(&a, KEYS("adapter_input_size"), 1280);
		bool ab = hf_get_bool(&a, KEYS("attention_bias"), true);
		uint64_t c1[4] = {ds, 1, 3, 3}, c2[4] = {ds, ds, 3, 3};
		const char *al_p = "layers.{i}", *aa = "layers.{i}.self_attn", *am = "layers.{i}.mlp";

		if (a.st == MP_OK && (al == 0 || al > MP_MAX_LAYERS || aheads == 0 || ah % aheads != 0 || ds == 0))
			hf_fail_key(&a, al == 0 || al > MP_MAX_LAYERS ? "num_hidden_layers" : "num_attention_heads",
			            "the audio encoder needs 1 to 1024 layers, heads that divide hidden_size and a "
			            "downsample_hidden_size");
		if (a.st == MP_OK && ain2 != ah)
			hf_fail_key(&a, "adapter_input_size", "adapter_input_size must match hidden_size (Dots3NoteAudioConfig)");
		if (a.st == MP_OK && ao != m->hidden_size)
			hf_fail_key(&a, "adapter_out_dim", "adapter_out_dim must match the text hidden size (Dots3NoteConfig)");
		top->st = a.st;
		if (top->st != MP_OK)
			return;
		mp_inventory_root(&m->inv, MP_ROOT_EXTRA, "model.audio_tower.");
		hf_shape(m, MP_ROOT_EXTRA, "conv_stem.convs.{i}", "weight", MP_TK_VISION, 0, c1, 4, 1);
		hf_shape(m, MP_ROOT_EXTRA, "conv_stem.convs.{i}", "weight", MP_TK_VISION, 0, c2, 4, 2);
		hf_tensor(m, MP_ROOT_EXTRA, "conv_stem.convs.{i}", "bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, ds,
		          3);
		hf_tensor(m, MP_ROOT_EXTRA, "conv_stem", "conv_out.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, ah,
		          hf_mul(top, ds, (fs + 7) / 8, "downsample_hidden_size"), 1);
		for (int k = 0; k < 4; k++) {
			static const char *const w[4] = {"q_proj.weight", "k_proj.weight", "v_proj.weight", "o_proj.weight"};
			static const char *const b[4] = {"q_proj.bias", NULL, "v_proj.bias", "o_proj.bias"};

			hf_tensor(m, MP_ROOT_EXTRA, aa, w[k], MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, ah, ah, al);
			if (ab && b[k])
				hf_tensor(m, MP_ROOT_EXTRA, aa, b[k], MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, ah, al);
		}
		hf_tensor(m, MP_ROOT_EXTRA, al_p, "input_layernorm.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
		          ah, al);
		hf_tensor(m, MP_ROOT_EXTRA, al_p, "post_attention_layernorm.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE,
		          true, 1, ah, al);
		hf_tensor(m, MP_ROOT_EXTRA, am, "gate_up_proj.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, 2 * ai,
		          ah, al);
		hf_tensor(m, MP_ROOT_EXTRA, am, "gate_up_proj.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, 2 * ai,
		          al);
		hf_tensor(m, MP_ROOT_EXTRA, am, "down_proj.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, ah, ai, al);
		hf_tensor(m, MP_ROOT_EXTRA, am, "down_proj.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, ah, al);
		hf_tensor(m, MP_ROOT_EXTRA, NULL, "layer_norm.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, ah, 1);
		hf_tensor(m, MP_ROOT_EXTRA, "adapter", "norm.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, ah,
		          1);
		hf_tensor(m, MP_ROOT_EXTRA, "adapter", "norm.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, ah, 1);
		hf_tensor(m, MP_ROOT_EXTRA, "adapter", "fc1.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false, ao, ah,
		          1);
		hf_tensor(m, MP_ROOT_EXTRA, "adapter", "fc1.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, ao, 1);
		hf_tensor(m, MP_ROOT_EXTRA, "adapter", "fc2.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false, ao, ao,
		          1);
		hf_tensor(m, MP_ROOT_EXTRA, "adapter", "fc2.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, ao, 1);
	}
}

/*
 * GLM-5.3-Flash's tower (modeling_glm5_next.py Glm5NextVisionModel), from vision_config (Glm5NextVisionConfig: depth
 * 24, hidden_size 1024, num_heads 16, in_channels 3, patch_size 14, temporal_patch_size 2, spatial_merge_size 2,
 * out_hidden_size 1536, intermediate_size 4096, projection_intermediate_size 10240, attention_bias true): the 3-D
 * patch convolution with its bias; per block norm1 and norm2 (RMSNorm), attn.qkv and attn.proj, q_norm and k_norm of
 * hidden / heads, a gated MLP (attention_bias gives the attention and the MLP their biases); post_layernorm; downsample (a merge x merge convolution to
 * out_hidden_size, biased); the merger: proj (out x out), post_projection_norm (a LayerNorm), and a gated MLP of
 * projection_intermediate_size without biases.
 */
static void glm5_tower(hf_ctx *top, mp_model *m)
{
	char pointer[96];
	hf_ctx c;
	uint64_t h, L, heads, ch, patch, tp, merge, out, inter, pint;
	bool ab;
	const char *blk = "blocks.{i}", *att = "blocks.{i}.attn", *mlp = "blocks.{i}.mlp";

	if (!hf_sub_config(top, "vision_config", pointer, sizeof(pointer), &c))
		return;
	L = hf_get_u64(&c, KEYS("depth", "num_hidden_layers"), 24);
	h = dots3_size(&c, KEYS("hidden_size"), 1024);
	heads = hf_get_u64(&c, KEYS("num_heads", "num_attention_heads"), 16);
	ch = dots3_size(&c, KEYS("in_channels"), 3);
	patch = dots3_size(&c, KEYS("patch_size"), 14);
	tp = dots3_size(&c, KEYS("temporal_patch_size"), 2);
	merge = dots3_size(&c, KEYS("spatial_merge_size"), 2);
	out = dots3_size(&c, KEYS("out_hidden_size"), 1536);
	inter = dots3_size(&c, KEYS("intermediate_size"), 4096);
	pint = dots3_size(&c, KEYS("projection_intermediate_size"), 10240);
	ab = hf_get_bool(&c, KEYS("attention_bias"), true);
	if (c.st == MP_OK && (L == 0 || L > MP_MAX_LAYERS || heads == 0 || h % heads != 0 || patch == 0 || merge == 0))
		hf_fail_key(&c, L == 0 || L > MP_MAX_LAYERS ? "depth" : "num_heads",
		            "the tower needs 1 to 1024 layers, heads that divide hidden_size, a patch_size and a "
		            "spatial_merge_size");
	top->st = c.st;
	if (top->st != MP_OK)
		return;
	mp_inventory_root(&m->inv, MP_ROOT_TOWER, "model.visual.");
	{
		uint64_t conv[5] = {h, ch, tp, patch, patch}, down[4] = {out, h, merge, merge};
		static const char *const w[3] = {"gate_proj.weight", "up_proj.weight", "down_proj.weight"};
		static const char *const b[3] = {"gate_proj.bias", "up_proj.bias", "down_proj.bias"};

		hf_shape(m, MP_ROOT_TOWER, "patch_embed", "proj.weight", MP_TK_VISION, 0, conv, 5, 1);
		hf_tensor(m, MP_ROOT_TOWER, "patch_embed", "proj.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, 1);
		hf_tensor(m, MP_ROOT_TOWER, blk, "norm1.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
		hf_tensor(m, MP_ROOT_TOWER, blk, "norm2.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
		hf_tensor(m, MP_ROOT_TOWER, att, "qkv.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, 3 * h, h, L);
		hf_tensor(m, MP_ROOT_TOWER, att, "proj.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, h, h, L);
		if (ab) {
			hf_tensor(m, MP_ROOT_TOWER, att, "qkv.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, 3 * h, L);
			hf_tensor(m, MP_ROOT_TOWER, att, "proj.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
		}
		hf_tensor(m, MP_ROOT_TOWER, att, "q_norm.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h / heads,
		          L);
		hf_tensor(m, MP_ROOT_TOWER, att, "k_norm.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h / heads,
		          L);
		for (int k = 0; k < 3; k++) {
			hf_tensor(m, MP_ROOT_TOWER, mlp, w[k], MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, k == 2 ? h : inter,
			          k == 2 ? inter : h, L);
			if (ab) /* Glm5NextVisionMLP's biases follow attention_bias */
				hf_tensor(m, MP_ROOT_TOWER, mlp, b[k], MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
				          k == 2 ? h : inter, L);
			hf_tensor(m, MP_ROOT_TOWER, "merger", w[k], MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false,
			          k == 2 ? out : pint, k == 2 ? pint : out, 1);
		}
		hf_tensor(m, MP_ROOT_TOWER, NULL, "post_layernorm.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h,
		          1);
		hf_shape(m, MP_ROOT_TOWER, NULL, "downsample.weight", MP_TK_VISION, 0, down, 4, 1);
		hf_tensor(m, MP_ROOT_TOWER, NULL, "downsample.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, out, 1);
		hf_tensor(m, MP_ROOT_TOWER, "merger", "proj.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false, out,
		          out, 1);
		hf_tensor(m, MP_ROOT_TOWER, "merger", "post_projection_norm.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE,
		          MP_STEP_NONE, true, 1, out, 1);
		hf_tensor(m, MP_ROOT_TOWER, "merger", "post_projection_norm.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE,
		          true, 1, out, 1);
	}
}

/* The projectors listed by the reader (WRAP_PROJ_LINEAR, _VIPLLAVA, _SHUFFLE) and LLaVA-NeXT's image_newline, from
 * the tower's width (m->vision.hidden) to the decoder's (m->hidden_size). */
static void wrap_projector(hf_ctx *c, const wrap_row *w, mp_model *m)
{
	uint64_t h = m->vision.hidden, out = m->hidden_size;

	if (c->st != MP_OK)
		return;
	mp_inventory_root(&m->inv, MP_ROOT_PROJECTOR,
	                  m->vision.projector_root ? m->vision.projector_root : "model.multi_modal_projector.");
	if (w->newline) {
		mp_inventory_root(&m->inv, MP_ROOT_EXTRA, "model.");
		hf_tensor(m, MP_ROOT_EXTRA, NULL, "image_newline", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, out,
		          1);
	}
	switch (w->projector) {
	case WRAP_PROJ_LINEAR: {
		/* PaliGemmaConfig copies projection_dim (2048) into the tower's config, and PaliGemmaMultiModalProjector
		 * projects to it whatever the decoder's width: transformers 5.24 builds (and runs text through) a config
		 * whose projection_dim differs from text_config.hidden_size, so it is counted as given (its image tokens
		 * could not join the text embeddings) */
		uint64_t dim = hf_get_u64(c, KEYS("projection_dim"), 2048);

		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "linear.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false, dim,
		          h, 1);
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "linear.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, dim,
		          1);
		break;
	}
	case WRAP_PROJ_VIPLLAVA: {
		const cJSON *fl = cJSON_GetObjectItemCaseSensitive(c->cfg, "vision_feature_layer");
		uint64_t n = fl == NULL || cJSON_IsNull(fl) ? 5 : list_len(fl, 5), in = hf_mul(c, n, h, "vision_feature_layer");

		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "projector_layernorm.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE,
		          MP_STEP_NONE, true, 1, in, 1);
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "projector_layernorm.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE,
		          MP_STEP_NONE, true, 1, in, 1);
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "linear_1.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false,
		          out, in, 1);
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "linear_1.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
		          out, 1);
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "linear_2.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false,
		          out, out, 1);
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "linear_2.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
		          out, 1);
		break;
	}
	case WRAP_PROJ_SHUFFLE: {
		uint64_t ds = hf_get_u64(c, KEYS("downsample_factor"), 2), align = hf_get_u64(c, KEYS("alignment_intermediate_size"), 36864);
		uint64_t in = hf_mul(c, hf_mul(c, ds, ds, "downsample_factor"), h, "downsample_factor");

		if (c->st == MP_OK && (align % 2 || ds == 0 || ds > 64)) {
			hf_fail_key(c, align % 2 ? "alignment_intermediate_size" : "downsample_factor",
			            "alignment_intermediate_size must be even (SwiGLU halves it) and downsample_factor from 1 "
			            "to 64");
			return;
		}
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "linear_1.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false,
		          align, in, 1);
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "linear_1.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
		          align, 1);
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "linear_2.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false,
		          out, align / 2, 1);
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "linear_2.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
		          out, 1);
		break;
	}
	case WRAP_PROJ_IDEFICS3: {
		uint64_t sf = hf_get_u64(c, KEYS("scale_factor"), 2);

		if (c->st == MP_OK && (sf == 0 || sf > 64)) {
			hf_fail_key(c, "scale_factor", "scale_factor must be from 1 to 64 (the pixel shuffle's side)");
			return;
		}
		hf_tensor(m, MP_ROOT_PROJECTOR, NULL, "modality_projection.proj.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE,
		          MP_STEP_NONE, false, out, hf_mul(c, hf_mul(c, sf, sf, "scale_factor"), h, "scale_factor"), 1);
		break;
	}
	case WRAP_PROJ_IDEFICS2:
		idefics2_connector(c, m);
		break;
	case WRAP_PROJ_LFM2:
	case WRAP_PROJ_AYA:
	case WRAP_PROJ_HCX:
	case WRAP_PROJ_READOUT:
	case WRAP_PROJ_PADDLE:
	case WRAP_PROJ_COSMOS3_EDGE:
	case WRAP_PROJ_ARIA:
		wrap_projector_v1(c, w, m);
		break;
	case WRAP_PROJ_ALIGNER:
		mp_inventory_root(&m->inv, MP_ROOT_EXTRA, "model.aligner.");
		hf_tensor(m, MP_ROOT_EXTRA, NULL, "linear1.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false, out, h,
		          1);
		hf_tensor(m, MP_ROOT_EXTRA, NULL, "linear1.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, out, 1);
		hf_tensor(m, MP_ROOT_EXTRA, NULL, "linear2.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false, out,
		          out, 1);
		hf_tensor(m, MP_ROOT_EXTRA, NULL, "linear2.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, out, 1);
		break;
	default:
		break;
	}
}

static void decode_wrapper(hf_ctx *c, const wrap_row *w, mp_model *m)
{
	const cJSON *tc = cJSON_GetObjectItemCaseSensitive(c->cfg, "text_config"), *tt;
	char pointer[MP_POINTER_MAX], name[32];
	hf_ctx t;
	bool tie, text_tie;

	if (tc && !cJSON_IsNull(tc) && !cJSON_IsObject(tc)) {
		hf_fail_key(c, "text_config", "text_config must be an object (the decoder's config)");
		return;
	}
	if (!cJSON_IsObject(tc) && !w->flat)
		tc = NULL; /* no text_config: the decoder's class defaults */
	if (tc == NULL && w->text_required) {
		char msg[200];

		snprintf(msg, sizeof(msg), "text_config is required: %s's defaults for its decoder are not %s's class "
		                           "defaults, which memplan would take",
		         w->name, w->text_type);
		hf_fail_key(c, "text_config", msg);
		return;
	}
	snprintf(pointer, sizeof(pointer), "%s%s", c->pointer, cJSON_IsObject(tc) ? "/text_config" : "");
	t = (hf_ctx){cJSON_IsObject(tc) ? tc : (w->flat ? c->cfg : NULL), pointer, c->err, c->st, NULL, NULL, c->decode_type};
	/* t.cfg NULL (no text_config): every decoder key takes its class default */
	tt = t.cfg ? cJSON_GetObjectItemCaseSensitive(t.cfg, "model_type") : NULL;
	if (cJSON_IsString(tt) && t.cfg != c->cfg) {
		if (!t.decode_type(&t, tt->valuestring, true, m)) {
			char msg[300];

			snprintf(
			    msg, sizeof(msg),
			    "text_config model_type '%.40s' is not a decoder memplan reads (%s's default is %s; the "
			    "model_type 422 of an hf_config lists every supported type)",
			    tt->valuestring, w->name, w->text_type);
			hf_fail_key(&t, "model_type", msg);
		}
	} else {
		t.decode_type(&t, w->text_type, true, m);
	}
	c->st = t.st;
	c->names = strcmp(w->name, "llama4") == 0 ? &mpm_names_llama4 : t.names;
	if (c->st != MP_OK)
		return;
	/* transformers 5 keeps a wrapper's decoder under model.language_model (Llama 4: language_model.model, its head
	 * language_model.lm_head) */
	m->inv.roots[MP_ROOT_DECODER] = w->text_root                     ? w->text_root
	                                : strcmp(w->name, "llama4") == 0 ? "language_model.model."
	                                                                 : "model.language_model.";
	snprintf(name, sizeof(name), "%s", w->name);
	snprintf(m->model_type, sizeof(m->model_type), "%s", name);
	snprintf(m->json_pointer, sizeof(m->json_pointer), "%.63s", pointer);
	c->text = t.cfg;
	/* tie_word_embeddings is the wrapper's (transformers 5 ties from the outer config); LLaVA and the Qwen-VL
	 * configs also take a text_config's true (their back-compat in __post_init__). A config that leaves the outer
	 * key out but states it in text_config is a checkpoint saved that way (Mistral-Small-3.1: its lm_head is a
	 * tensor of its own): it takes the text_config's, as vLLM loads it. transformers 5.24 would take the wrapper
	 * class's default there (Mistral3Config's True ties the head: tests/ref/hf/README.md). */
	text_tie = m->tie_word_embeddings;
	tie = hf_get_bool(c, KEYS("tie_word_embeddings"), w->tie);
	if (t.cfg == c->cfg || (!hf_has(c, "tie_word_embeddings") && t.cfg && hf_has(&t, "tie_word_embeddings")))
		tie = text_tie; /* flat: the one key is both; else the checkpoint's own statement */
	m->tie_word_embeddings = w->tie_inner ? text_tie : tie || (w->tie_from_text && text_tie);
	if (wrap_extra_of(w->name).never_tied)
		m->tie_word_embeddings = false;
	/* Lfm2VlConfig.__post_init__: tie_embedding, when given, is tie_word_embeddings */
	if (w->projector == WRAP_PROJ_LFM2 && hf_has(c, "tie_embedding"))
		m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_embedding"), true);
	if (w->projector == WRAP_PROJ_FUYU) {
		/* FuyuConfig: patch_size 30, num_channels 3; vision_embed_tokens maps a raw patch to the decoder's width */
		uint64_t p = hf_get_u64(c, KEYS("patch_size"), 30), ch = hf_get_u64(c, KEYS("num_channels"), 3);

		if (c->st == MP_OK && (p == 0 || p > 1024 || ch == 0 || ch > 256)) {
			hf_fail_key(c, p == 0 || p > 1024 ? "patch_size" : "num_channels",
			            "patch_size must be from 1 to 1024 and num_channels from 1 to 256");
			return;
		}
		mp_inventory_root(&m->inv, MP_ROOT_EXTRA, "model.");
		hf_tensor(m, MP_ROOT_EXTRA, NULL, "vision_embed_tokens.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE,
		          false, m->hidden_size, p * p * ch, 1);
		hf_tensor(m, MP_ROOT_EXTRA, NULL, "vision_embed_tokens.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE,
		          true, 1, m->hidden_size, 1);
		return;
	}
	if (w->projector == WRAP_PROJ_KIMI) {
		kimi_k25_tower(c, m);
		return;
	}
	if (w->projector == WRAP_PROJ_GLM_OCR) {
		glm_ocr_tower(c, m);
		return;
	}
	if (w->projector == WRAP_PROJ_INKLING) {
		mpm_inkling_towers(c, m);
		return;
	}
	if (w->projector == WRAP_PROJ_INKLING2) {
		mpm_inkling2_tower(c, m, strcmp(w->name, "inkling2_loop") == 0 ? 2304 : 4608);
		return;
	}
	if (w->projector == WRAP_PROJ_INTERNVL || w->projector == WRAP_PROJ_GLM4V || w->projector == WRAP_PROJ_HYV4VL ||
	    w->projector == WRAP_PROJ_MINIMAX_M3 || w->projector == WRAP_PROJ_STEP3P7 || w->projector == WRAP_PROJ_DOTS3 ||
	    w->projector == WRAP_PROJ_GLM5_NEXT || w->projector == WRAP_PROJ_ERNIE_VL) {
		(w->projector == WRAP_PROJ_INTERNVL      ? internvl_tower
		 : w->projector == WRAP_PROJ_GLM4V       ? glm4v_tower
		 : w->projector == WRAP_PROJ_HYV4VL      ? hyv4vl_tower
		 : w->projector == WRAP_PROJ_MINIMAX_M3 ? m3_tower
		 : w->projector == WRAP_PROJ_STEP3P7    ? step3p7_tower
		 : w->projector == WRAP_PROJ_DOTS3      ? dots3_towers
		 : w->projector == WRAP_PROJ_ERNIE_VL   ? ernie_vl_tower
		                                         : glm5_tower)(c, m);
		return;
	}
	decode_vision(c, w, m);
	wrap_projector(c, w, m);
	if (c->st == MP_OK && wrap_extra_of(w->name).omni_audio)
		omni_audio(c, m, wrap_extra_of(w->name).omni_audio == 3);
}

/* The wrappers' one decoder: hf_decode_type set m->model_type to the type being read, which names its row. */
void mpm_read_wrapper(hf_ctx *c, mp_model *m)
{
	for (size_t i = 0; i < sizeof(wraps) / sizeof(wraps[0]); i++)
		if (strcmp(m->model_type, wraps[i].name) == 0) {
			decode_wrapper(c, &wraps[i], m);
			return;
		}
	hf_fail_key(c, "model_type", "no wrapper row for this model_type"); /* unreachable: the table below */
}

