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
    /* Llama4VisionConfig: 768 wide, MLP 5632, 34 layers, 448 px, 14 px patches (adapter and projector below) */
    {"llama4_vision_model", 768, 5632, 34, 3, 448, 14, 0, 0, 0, 0, 0},
    /* Qwen3_5VisionConfig, Qwen3_5MoeVisionConfig: Qwen3-VL's tower without DeepStack mergers */
    {"qwen3_5_vision", 1152, 4304, 27, 3, 0, 16, 3584, 2, 2, 2304, 0},
    {"qwen3_5_moe_vision", 1152, 4304, 27, 3, 0, 16, 3584, 2, 2, 2304, 0},
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
} wrap_row;

static const wrap_row wraps[] = {
    /* Gemma3Config: Gemma3TextConfig + SiglipVisionConfig(); tied */
    {"gemma3", "gemma3_text", "siglip_vision_model", true, false, false, 0, 0, 0, 0, 0},
    /* LlavaConfig: LlamaConfig + CLIPVisionConfig(hidden 1024, MLP 4096, 24 layers, 336 px, 14 px patches) */
    {"llava", "llama", "clip_vision_model", false, true, false, 1024, 4096, 24, 336, 14},
    /* Mistral3Config: MistralConfig + PixtralVisionConfig(1024, 4096, 24 layers, 1540 px, 14 px patches); tied */
    {"mistral3", "mistral", "pixtral", true, false, false, 1024, 4096, 24, 1540, 14},
    {"qwen2_vl", "qwen2_vl_text", "qwen2_vl_vision", false, true, true, 0, 0, 0, 0, 0},
    {"qwen2_5_vl", "qwen2_5_vl_text", "qwen2_5_vl_vision", false, true, true, 0, 0, 0, 0, 0},
    /* Qwen3VLConfig, Qwen3VLMoeConfig: no back-compat for a text_config's tie_word_embeddings */
    {"qwen3_vl", "qwen3_vl_text", "qwen3_vl_vision", false, false, false, 0, 0, 0, 0, 0},
    {"qwen3_vl_moe", "qwen3_vl_moe_text", "qwen3_vl_vision", false, false, false, 0, 0, 0, 0, 0},
    /* Qwen3_5Config, Qwen3_5MoeConfig (Qwen3.5): the gated-delta-net decoders of hf_hybrid.c with the tower */
    {"qwen3_5", "qwen3_5_text", "qwen3_5_vision", false, false, false, 0, 0, 0, 0, 0},
    {"qwen3_5_moe", "qwen3_5_moe_text", "qwen3_5_moe_vision", false, false, false, 0, 0, 0, 0, 0},
    /* Llama4Config: Llama4TextConfig + Llama4VisionConfig */
    {"llama4", "llama4_text", "llama4_vision_model", false, false, false, 0, 0, 0, 0, 0},
};

/* How many entries a key holds: a list's length, 1 for a number (vision_feature_layer, deepstack_visual_indexes). */
static uint64_t list_len(const cJSON *v, uint64_t dflt)
{
	if (cJSON_IsArray(v))
		return (uint64_t)cJSON_GetArraySize(v);
	return v && !cJSON_IsNull(v) ? 1 : dflt;
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
	if (cJSON_IsString(vt) && strcmp(vt->valuestring, w->name) != 0)
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
	if (strcmp(d->type, "siglip_vision_model") == 0) {
		v->tower = MP_TOWER_SIGLIP;
		/* modeling_siglip.py SiglipVisionTransformer; Gemma3MultiModalProjector */
		v->norm = MP_NORM_LAYER;
		v->patch_bias = v->post_norm = v->attn_bias = v->mlp_bias = true;
		v->positions = (image / patch) * (image / patch);
		v->map_head = c.cfg ? hf_get_bool(&c, KEYS("vision_use_head"), true) : true;
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
	} else {
		/* the Qwen-VL towers (modeling_qwen2_vl.py, _2_5_vl.py, _3_vl.py): a 3-D patch convolution, fused qkv,
		 * the merger over spatial_merge_size^2 patches */
		bool q25 = strcmp(d->type, "qwen2_5_vl_vision") == 0, q3 = strncmp(d->type, "qwen3_", 6) == 0;

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
	if (v->projector == MP_PROJECTOR_MLP2) {
		bool llava = strcmp(w->name, "llava") == 0;

		v->feature_layers = list_len(cJSON_GetObjectItemCaseSensitive(top->cfg, "vision_feature_layer"), 1);
		v->projector_bias = hf_get_bool(top, KEYS("multimodal_projector_bias"), llava);
	}
	if (c.st != MP_OK)
		top->st = c.st;
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
	m->inv.roots[MP_ROOT_DECODER] = strcmp(w->name, "llama4") == 0 ? "language_model.model." : "model.language_model.";
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
	m->tie_word_embeddings = tie || (w->tie_from_text && text_tie);
	decode_vision(c, w, m);
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

