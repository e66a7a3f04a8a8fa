/*
 * hf_wrap_qformer.c: the captioning and OCR wrappers whose towers planner/vision.c has no kind for, each listed here
 * under transformers 5.24's names: BLIP-2, InstructBLIP and InstructBLIP-Video (modeling_blip_2.py,
 * modeling_instructblip.py, modeling_instructblipvideo.py: an EVA ViT, the Q-Former and its query tokens, the
 * language projection, and any causal decoder as text_config under language_model.), and GOT-OCR 2 and PP-Chart2Table
 * (modeling_got_ocr2.py: SAM's windowed ViT with its neck, two strided convolutions and a linear into a Qwen2
 * decoder). The KV cache is the decoder's alone: the towers run once per image and keep nothing per token.
 */
#include <stdio.h>
#include <string.h>

#include "hf_internal.h"
#include "model.h"
#include "mpm_types.h"

/* A matrix out x in of a tower (no decoder step reads it), and its bias. */
static void mat(mp_model *m, uint8_t root, const char *path, const char *leaf, mp_tensor_kind k, uint64_t out,
                uint64_t in, uint64_t count)
{
	hf_tensor(m, root, path, leaf, k, MP_SPLIT_NONE, MP_STEP_NONE, false, out, in, count);
}

static void vec(mp_model *m, uint8_t root, const char *path, const char *leaf, mp_tensor_kind k, uint64_t n,
                uint64_t count)
{
	hf_tensor(m, root, path, leaf, k, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, n, count);
}

/* nn.Linear(in, out) named x: x.weight [out, in] and, with a bias, x.bias [out]. */
#define LIN(m, root, path, x, k, out, in, bias, count)                                                                 \
	do {                                                                                                           \
		mat(m, root, path, x ".weight", k, out, in, count);                                                    \
		if (bias)                                                                                              \
			vec(m, root, path, x ".bias", k, out, count);                                                  \
	} while (0)
/* nn.LayerNorm(n) named x: x.weight and x.bias [n]. */
#define LN(m, root, path, x, k, n, count)                                                                              \
	do {                                                                                                           \
		vec(m, root, path, x ".weight", k, n, count);                                                          \
		vec(m, root, path, x ".bias", k, n, count);                                                            \
	} while (0)

/*
 * The decoder of text_config into m (its model_type, else dflt; an absent text_config: dflt's class defaults, or a
 * 422 when `required` because the wrapper's own defaults for it differ from that class's). Sets c->names, c->text,
 * m->json_pointer and m->model_type back to the wrapper's. False (c->st set) when the decoder is not one memplan reads.
 */
static bool read_text_as(hf_ctx *c, const char *dflt, const char *own, bool required, mp_model *m);
static bool read_text_key(hf_ctx *c, const char *key, const char *dflt, const char *own, bool required, mp_model *m);

static bool read_text(hf_ctx *c, const char *dflt, bool required, mp_model *m)
{
	return read_text_as(c, dflt, NULL, required, m);
}

/* read_text, with a text_config whose model_type is `own` (the wrapper's own name for its decoder's config class)
 * read as dflt. */
static bool read_text_as(hf_ctx *c, const char *dflt, const char *own, bool required, mp_model *m)
{
	return read_text_key(c, "text_config", dflt, own, required, m);
}

/* read_text_as, the decoder's config under `key` (a wrapper's older spelling of text_config: llm_config). */
static bool read_text_key(hf_ctx *c, const char *key, const char *dflt, const char *own, bool required, mp_model *m)
{
	const cJSON *tc = cJSON_GetObjectItemCaseSensitive(c->cfg, key), *tt;
	char pointer[MP_POINTER_MAX], wrapper[sizeof(m->model_type)];
	hf_ctx t;

	snprintf(wrapper, sizeof(wrapper), "%s", m->model_type);
	if (tc && !cJSON_IsNull(tc) && !cJSON_IsObject(tc)) {
		hf_fail_key(c, key, "text_config must be an object (the decoder's config)");
		return false;
	}
	if (!cJSON_IsObject(tc) && required) {
		char msg[200];

		snprintf(msg, sizeof(msg), "%s is required: %s's defaults for its decoder are not %s's class "
		                           "defaults, which memplan would take",
		         key, wrapper, dflt);
		hf_fail_key(c, key, msg);
		return false;
	}
	snprintf(pointer, sizeof(pointer), "%s%s%s", c->pointer, cJSON_IsObject(tc) ? "/" : "", cJSON_IsObject(tc) ? key : "");
	t = (hf_ctx){cJSON_IsObject(tc) ? tc : NULL, pointer, c->err, c->st, NULL, NULL, c->decode_type};
	tt = t.cfg ? cJSON_GetObjectItemCaseSensitive(t.cfg, "model_type") : NULL;
	if (!t.decode_type(&t, cJSON_IsString(tt) && !(own && strcmp(tt->valuestring, own) == 0) ? tt->valuestring : dflt,
	                   true, m) &&
	    t.st == MP_OK) {
		char msg[300];

		snprintf(msg, sizeof(msg),
		         "text_config model_type '%.40s' is not a decoder memplan reads (%s's default is %s; the model_type "
		         "422 of an hf_config lists every supported type)",
		         tt->valuestring, wrapper, dflt);
		hf_fail_key(&t, "model_type", msg);
	}
	c->st = t.st;
	c->names = t.names;
	c->text = t.cfg;
	snprintf(m->model_type, sizeof(m->model_type), "%s", wrapper);
	snprintf(m->json_pointer, sizeof(m->json_pointer), "%.63s", pointer);
	return c->st == MP_OK;
}

/* tie_word_embeddings of a wrapper whose lm_head sits at the top (the wrapper's key, its class default dflt; a config
 * that states it in text_config alone takes that, as the other wrappers: tests/ref/hf/README.md). */
static void wrapper_tie(hf_ctx *c, mp_model *m, bool dflt)
{
	bool text_tie = m->tie_word_embeddings;

	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), dflt);
	if (!hf_has(c, "tie_word_embeddings") && c->text && cJSON_GetObjectItemCaseSensitive(c->text, "tie_word_embeddings"))
		m->tie_word_embeddings = text_tie;
}

/* read_text and wrapper_tie for the wrappers of the other files (hf_internal.h) */
bool hf_wrap_read_text(hf_ctx *c, const char *dflt, bool required, mp_model *m)
{
	return read_text(c, dflt, required, m);
}

void hf_wrap_tie(hf_ctx *c, mp_model *m, bool dflt)
{
	wrapper_tie(c, m, dflt);
}

/* ----- BLIP-2, InstructBLIP, InstructBLIP-Video ---------------------------------------------------------------- */

/* A causal decoder's root under BLIP's language_model (AutoModelForCausalLM.from_config(text_config)): the decoder's own
 * root ("model.", OPT's "model.decoder.") prefixed, as static strings; NULL for a root not listed. */
static const char *under_language_model(const char *root)
{
	static const char *const roots[][2] = {{"model.", "language_model.model."},
	                                       {"model.decoder.", "language_model.model.decoder."},
	                                       {"transformer.", "language_model.transformer."},
	                                       {"gpt_neox.", "language_model.gpt_neox."}};

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (strcmp(root, roots[i][0]) == 0)
			return roots[i][1];
	return NULL;
}

/*
 * Blip2VisionModel (InstructBlipVisionModel the same; Blip2VisionConfig: hidden 1408, MLP 6144, 39 layers, 16 heads,
 * 224 px images of 14 px patches, qkv_bias True): a class token [1, 1, h], positions [1, (image / patch)^2 + 1, h], a
 * 3-channel patch convolution with a bias, blocks of LayerNorms, a fused qkv (its bias q, 0, v with qkv_bias) and a
 * biased projection, fc1 and fc2 with biases, post_layernorm. Returns the tower's width (0 on error).
 */
static uint64_t blip_vision(hf_ctx *c, mp_model *m)
{
	char pointer[MP_POINTER_MAX];
	hf_ctx v;
	uint64_t h, inter, L, heads, image, patch, side;
	bool qkv_bias;
	const char *lay = "encoder.layers.{i}", *attn = "encoder.layers.{i}.self_attn", *mlp = "encoder.layers.{i}.mlp";

	if (!hf_sub_config(c, "vision_config", pointer, sizeof(pointer), &v))
		return 0;
	h = hf_get_u64(&v, KEYS("hidden_size"), 1408);
	inter = hf_get_u64(&v, KEYS("intermediate_size"), 6144);
	L = hf_get_u64(&v, KEYS("num_hidden_layers"), 39);
	heads = hf_get_u64(&v, KEYS("num_attention_heads"), 16);
	image = hf_get_u64(&v, KEYS("image_size"), 224);
	patch = hf_get_u64(&v, KEYS("patch_size"), 14);
	qkv_bias = hf_get_bool(&v, KEYS("qkv_bias"), true);
	if (v.st == MP_OK && (heads == 0 || h % heads != 0))
		hf_fail_key(&v, "num_attention_heads",
		            "hidden_size must be a multiple of num_attention_heads (Blip2Attention raises ValueError)");
	if (v.st == MP_OK && (h == 0 || h > (UINT64_C(1) << 20) || L == 0 || L > MP_MAX_LAYERS || inter == 0 ||
	                      inter > (UINT64_C(1) << 24) || patch == 0 || patch > image || image > (UINT64_C(1) << 16)))
		hf_fail_key(&v, h == 0 || h > (UINT64_C(1) << 20) ? "hidden_size"
		                : L == 0 || L > MP_MAX_LAYERS      ? "num_hidden_layers"
		                : inter == 0 || inter > (UINT64_C(1) << 24) ? "intermediate_size"
		                                                            : "patch_size",
		            "the image tower needs hidden_size from 1 to 2^20, num_hidden_layers from 1 to 1024, "
		            "intermediate_size from 1 to 2^24 and a patch_size from 1 to image_size (at most 65536)");
	c->st = v.st;
	if (c->st != MP_OK)
		return 0;
	side = image / patch;
	mp_inventory_root(&m->inv, MP_ROOT_TOWER, "vision_model.");
	{
		uint64_t cls[3] = {1, 1, h}, pos[3] = {1, side * side + 1, h}, conv[4] = {h, 3, patch, patch};

		hf_shape(m, MP_ROOT_TOWER, "embeddings", "class_embedding", MP_TK_VISION, 0, cls, 3, 1);
		hf_shape(m, MP_ROOT_TOWER, "embeddings", "position_embedding", MP_TK_VISION, 0, pos, 3, 1);
		hf_shape(m, MP_ROOT_TOWER, "embeddings", "patch_embedding.weight", MP_TK_VISION, 0, conv, 4, 1);
		vec(m, MP_ROOT_TOWER, "embeddings", "patch_embedding.bias", MP_TK_VISION, h, 1);
	}
	LN(m, MP_ROOT_TOWER, lay, "layer_norm1", MP_TK_VISION, h, L);
	LN(m, MP_ROOT_TOWER, lay, "layer_norm2", MP_TK_VISION, h, L);
	LIN(m, MP_ROOT_TOWER, attn, "qkv", MP_TK_VISION, 3 * h, h, qkv_bias, L);
	LIN(m, MP_ROOT_TOWER, attn, "projection", MP_TK_VISION, h, h, true, L);
	LIN(m, MP_ROOT_TOWER, mlp, "fc1", MP_TK_VISION, inter, h, true, L);
	LIN(m, MP_ROOT_TOWER, mlp, "fc2", MP_TK_VISION, h, inter, true, L);
	LN(m, MP_ROOT_TOWER, NULL, "post_layernorm", MP_TK_VISION, h, 1);
	return h;
}

/* The Q-Former's module paths under its own root (BLIP-2's qformer.), or under a module's that holds it as qformer
 * (Granite 4 Vision's downsamplers). */
enum { QF_SELF, QF_SELF_OUT, QF_CROSS, QF_CROSS_OUT, QF_INTER, QF_OUT, QF_INTER_Q, QF_OUT_Q, QF_PATHS };
#define QF_PATHS_UNDER(p)                                                                                              \
	{                                                                                                              \
		p "encoder.layer.{i}.attention.attention", p "encoder.layer.{i}.attention.output",                     \
		    p "encoder.layer.{i}.crossattention.attention", p "encoder.layer.{i}.crossattention.output",       \
		    p "encoder.layer.{i}.intermediate", p "encoder.layer.{i}.output",                                  \
		    p "encoder.layer.{i}.intermediate_query", p "encoder.layer.{i}.output_query"                       \
	}
static const char *const qf_paths[QF_PATHS] = QF_PATHS_UNDER("");
static const char *const qf_paths_nested[QF_PATHS] = QF_PATHS_UNDER("qformer.");

/*
 * The Q-Former's encoder layers (Blip2QFormerEncoder) under root and paths, `copies` Q-Formers of them: per layer
 * BERT's self-attention (query, key, value, output.dense with biases, output.LayerNorm), the cross-attention of `cross`
 * of the L layers (key and value from enc_h, the tower's width), the text branch (intermediate, output) with
 * text_input, and the query branch (intermediate_query, output_query).
 */
static void qformer_encoder(mp_model *m, uint8_t root, const char *const *p, uint64_t h, uint64_t inter, uint64_t enc_h,
                            uint64_t L, uint64_t cross, bool text_input, uint64_t copies)
{
	uint64_t n = L * copies, x = cross * copies;

	LIN(m, root, p[QF_SELF], "query", MP_TK_PROJECTOR, h, h, true, n);
	LIN(m, root, p[QF_SELF], "key", MP_TK_PROJECTOR, h, h, true, n);
	LIN(m, root, p[QF_SELF], "value", MP_TK_PROJECTOR, h, h, true, n);
	LIN(m, root, p[QF_SELF_OUT], "dense", MP_TK_PROJECTOR, h, h, true, n);
	LN(m, root, p[QF_SELF_OUT], "LayerNorm", MP_TK_PROJECTOR, h, n);
	LIN(m, root, p[QF_CROSS], "query", MP_TK_PROJECTOR, h, h, true, x);
	LIN(m, root, p[QF_CROSS], "key", MP_TK_PROJECTOR, h, enc_h, true, x);
	LIN(m, root, p[QF_CROSS], "value", MP_TK_PROJECTOR, h, enc_h, true, x);
	LIN(m, root, p[QF_CROSS_OUT], "dense", MP_TK_PROJECTOR, h, h, true, x);
	LN(m, root, p[QF_CROSS_OUT], "LayerNorm", MP_TK_PROJECTOR, h, x);
	if (text_input) {
		LIN(m, root, p[QF_INTER], "dense", MP_TK_PROJECTOR, inter, h, true, n);
		LIN(m, root, p[QF_OUT], "dense", MP_TK_PROJECTOR, h, inter, true, n);
		LN(m, root, p[QF_OUT], "LayerNorm", MP_TK_PROJECTOR, h, n);
	}
	LIN(m, root, p[QF_INTER_Q], "dense", MP_TK_PROJECTOR, inter, h, true, n);
	LIN(m, root, p[QF_OUT_Q], "dense", MP_TK_PROJECTOR, h, inter, true, n);
	LN(m, root, p[QF_OUT_Q], "LayerNorm", MP_TK_PROJECTOR, h, n);
}

/*
 * The Q-Former (Blip2QFormerModel; Blip2QFormerConfig: hidden 768, 12 layers, 12 heads, MLP 3072, cross-attention to
 * the tower's width every cross_attention_frequency 2 layers from layer 0, use_qformer_text_input False; vocabulary
 * 30522 and 512 positions for InstructBLIP's embeddings): BLIP-2's final layernorm, or InstructBLIP's embeddings
 * (word and position tables, a LayerNorm) and text branch (intermediate and output in every layer); per layer
 * BERT's self-attention (query, key, value, output.dense with biases, output.LayerNorm), the cross-attention (key
 * and value from the tower's width) and the query branch (intermediate_query, output_query). Then query_tokens
 * [1, num_query_tokens, hidden] and language_projection (hidden -> the decoder's width, with a bias).
 */
static void qformer(hf_ctx *c, bool instruct, uint64_t vision_h, mp_model *m)
{
	char pointer[MP_POINTER_MAX];
	hf_ctx q;
	uint64_t h, L, heads, inter, vocab, pos, freq, nq, cross;
	bool text_input;

	if (!hf_sub_config(c, "qformer_config", pointer, sizeof(pointer), &q))
		return;
	h = hf_get_u64(&q, KEYS("hidden_size"), 768);
	L = hf_get_u64(&q, KEYS("num_hidden_layers"), 12);
	heads = hf_get_u64(&q, KEYS("num_attention_heads"), 12);
	inter = hf_get_u64(&q, KEYS("intermediate_size"), 3072);
	vocab = hf_get_u64(&q, KEYS("vocab_size"), 30522);
	pos = hf_get_u64(&q, KEYS("max_position_embeddings"), 512);
	freq = hf_get_u64(&q, KEYS("cross_attention_frequency"), 2);
	text_input = instruct || hf_get_bool(&q, KEYS("use_qformer_text_input"), false);
	/* Blip2QFormerMultiHeadAttention raises ValueError unless the heads divide hidden_size or the config has an
	 * embedding_size */
	if (q.st == MP_OK && (heads == 0 || (h % heads != 0 && !hf_has(&q, "embedding_size"))))
		hf_fail_key(&q, "num_attention_heads",
		            "hidden_size must be a multiple of num_attention_heads (the Q-Former's attention raises "
		            "ValueError)");
	if (q.st == MP_OK && freq == 0)
		hf_fail_key(&q, "cross_attention_frequency",
		            "cross_attention_frequency must be at least 1 (layer i cross-attends when i % it is 0)");
	if (q.st == MP_OK && (h == 0 || h > (UINT64_C(1) << 20) || L == 0 || L > MP_MAX_LAYERS || inter == 0 ||
	                      inter > (UINT64_C(1) << 24) || vocab > (UINT64_C(1) << 24) || pos > (UINT64_C(1) << 24)))
		hf_fail_key(&q, h == 0 || h > (UINT64_C(1) << 20) ? "hidden_size"
		                : L == 0 || L > MP_MAX_LAYERS      ? "num_hidden_layers"
		                : inter == 0 || inter > (UINT64_C(1) << 24) ? "intermediate_size"
		                : vocab > (UINT64_C(1) << 24)               ? "vocab_size"
		                                                            : "max_position_embeddings",
		            "the Q-Former needs hidden_size from 1 to 2^20, num_hidden_layers from 1 to 1024, "
		            "intermediate_size from 1 to 2^24 and vocab_size and max_position_embeddings below 2^24");
	c->st = q.st;
	nq = hf_get_u64(c, KEYS("num_query_tokens"), 32);
	if (c->st == MP_OK && (nq == 0 || nq > (UINT64_C(1) << 20)))
		hf_fail_key(c, "num_query_tokens", "num_query_tokens must be from 1 to 2^20");
	if (c->st != MP_OK)
		return;
	cross = (L + freq - 1) / freq; /* layers 0, freq, 2 freq, ... below L */
	mp_inventory_root(&m->inv, MP_ROOT_EXTRA, "qformer.");
	if (instruct) {
		mat(m, MP_ROOT_EXTRA, "embeddings", "word_embeddings.weight", MP_TK_PROJECTOR, vocab, h, 1);
		mat(m, MP_ROOT_EXTRA, "embeddings", "position_embeddings.weight", MP_TK_PROJECTOR, pos, h, 1);
		LN(m, MP_ROOT_EXTRA, "embeddings", "layernorm", MP_TK_PROJECTOR, h, 1);
	} else {
		LN(m, MP_ROOT_EXTRA, NULL, "layernorm", MP_TK_PROJECTOR, h, 1);
	}
	qformer_encoder(m, MP_ROOT_EXTRA, qf_paths, h, inter, vision_h, L, cross, text_input, 1);
	/* the wrapper's own: query_tokens and language_projection at the top of the state_dict */
	mp_inventory_root(&m->inv, MP_ROOT_PROJECTOR, "");
	{
		uint64_t tokens[3] = {1, nq, h};

		hf_shape(m, MP_ROOT_PROJECTOR, NULL, "query_tokens", MP_TK_PROJECTOR, 0, tokens, 3, 1);
	}
	LIN(m, MP_ROOT_PROJECTOR, NULL, "language_projection", MP_TK_PROJECTOR, m->hidden_size, h, true, 1);
}

/*
 * BLIP-2, InstructBLIP, InstructBLIP-Video (Blip2Config, InstructBlipConfig, InstructBlipVideoConfig: text_config
 * OPTConfig() by default). The decoder is AutoModelForCausalLM of text_config under language_model. (its head
 * language_model.lm_head, tied by text_config's tie_word_embeddings alone: the wrapper's key ties nothing in
 * transformers 5.24); a text_config of an encoder-decoder (Flan-T5's checkpoints) is not a decoder memplan reads.
 */
void mpm_read_blip2(hf_ctx *c, mp_model *m)
{
	bool instruct = strncmp(m->model_type, "instructblip", 12) == 0;
	const mp_names *n;
	const char *root;
	uint64_t vh;

	{
		const cJSON *tc = cJSON_GetObjectItemCaseSensitive(c->cfg, "text_config");
		const cJSON *tt = cJSON_IsObject(tc) ? cJSON_GetObjectItemCaseSensitive(tc, "model_type") : NULL;
		hf_ctx t = {tc, "", c->err, c->st, NULL, NULL, c->decode_type};
		char pointer[MP_POINTER_MAX];

		/* transformers builds AutoModelForSeq2SeqLM for a text_config outside the causal-LM mapping */
		if (cJSON_IsString(tt) && (strcmp(tt->valuestring, "t5") == 0 || strcmp(tt->valuestring, "mt5") == 0 ||
		                           strcmp(tt->valuestring, "umt5") == 0)) {
			snprintf(pointer, sizeof(pointer), "%s/text_config", c->pointer);
			t.pointer = pointer;
			hf_fail_key(&t, "model_type",
			            "text_config is an encoder-decoder (BLIP's Flan-T5 checkpoints: transformers builds "
			            "AutoModelForSeq2SeqLM), not a decoder-only language model whose KV cache memplan plans");
			c->st = t.st;
			return;
		}
	}
	if (!read_text(c, "opt", false, m))
		return;
	n = c->names ? c->names : &mp_names_llama;
	root = under_language_model(n->root);
	if (root == NULL || n->head_root) {
		hf_fail_key(c, "text_config",
		            "this text_config's decoder keeps its tensors under a root memplan does not place under "
		            "BLIP's language_model (OPT, Llama and the decoders rooted at model., transformer. or "
		            "gpt_neox. are read)");
		return;
	}
	m->inv.roots[MP_ROOT_TOP] = "language_model.";
	m->inv.roots[MP_ROOT_DECODER] = root;
	vh = blip_vision(c, m);
	if (c->st == MP_OK)
		qformer(c, instruct, vh, m);
}

/* ----- GOT-OCR 2, PP-Chart2Table ---------------------------------------------------------------------------------- */

/*
 * GotOcr2VisionEncoder (PPChart2TableVisionConfig the same; GotOcr2VisionConfig: hidden 768, 12 layers, 12 heads,
 * mlp_dim 3072, 3 channels, 1024 px images of 16 px patches, output_channels 256, qkv_bias, use_abs_pos, use_rel_pos,
 * window_size 14, global_attn_indexes (2, 5, 8, 11)), under model.vision_tower.: pos_embed [1, S, S, h] (S = image /
 * patch), the patch convolution with a bias, blocks of LayerNorms, qkv (qkv_bias) and proj (biased), relative
 * positions rel_pos_h and rel_pos_w [2 n - 1, h / heads] (n the window, or S on a global layer and where window_size
 * is 0), lin1 and lin2 with biases; the neck (a 1x1 and a 3x3 convolution to output_channels without bias, each
 * followed by a LayerNorm). Returns output_channels (0 on error).
 */
typedef struct sam_spec {
	const char *key;	/* the sub-config: "vision_config", "high_res_vision_config" */
	uint8_t root;		/* the inventory root the tower goes under, and its name (static) */
	const char *root_name;
	bool sam_class;		/* SamVisionConfig: mlp_dim null or absent is int(hidden_size x mlp_ratio 4.0) */
	bool needs_global;	/* the wrapper reads global_attn_indexes[0] (DeepseekVLHybridModel: an empty list is an
				 * IndexError) */
	uint64_t hidden;	/* out: the tower's width */
} sam_spec;

static uint64_t sam_tower(hf_ctx *c, mp_model *m, sam_spec *sp)
{
	char pointer[MP_POINTER_MAX];
	hf_ctx v;
	const cJSON *gl;
	uint64_t h, L, heads, ch, image, patch, oc, win, mlp, side, global = 0, hd, listed = 4;
	bool qkv_bias, abs_pos, rel_pos;
	const char *lay = "layers.{i}", *attn = "layers.{i}.attn", *ml = "layers.{i}.mlp";
	uint8_t root = sp->root;

	if (!hf_sub_config(c, sp->key, pointer, sizeof(pointer), &v))
		return 0;
	h = hf_get_u64(&v, KEYS("hidden_size"), 768);
	oc = hf_get_u64(&v, KEYS("output_channels"), 256);
	L = hf_get_u64(&v, KEYS("num_hidden_layers"), 12);
	heads = hf_get_u64(&v, KEYS("num_attention_heads"), 12);
	ch = hf_get_u64(&v, KEYS("num_channels"), 3);
	image = hf_get_u64(&v, KEYS("image_size"), 1024);
	patch = hf_get_u64(&v, KEYS("patch_size"), 16);
	qkv_bias = hf_get_bool(&v, KEYS("qkv_bias"), true);
	abs_pos = hf_get_bool(&v, KEYS("use_abs_pos"), true);
	rel_pos = hf_get_bool(&v, KEYS("use_rel_pos"), true);
	win = hf_get_u64(&v, KEYS("window_size"), 14);
	if (sp->sam_class && !hf_has(&v, "mlp_dim")) {
		double r = hf_get_double(&v, v.cfg, "mlp_ratio", 4.0);

		mlp = r > 0 && r < 65536 && h <= (UINT64_C(1) << 20) ? (uint64_t)((double)h * r) : 0;
		if (v.st == MP_OK && mlp == 0)
			hf_fail_key(&v, "mlp_ratio", "mlp_ratio must make hidden_size x mlp_ratio at least 1 (below 2^36)");
	} else {
		mlp = hf_get_u64(&v, KEYS("mlp_dim"), 3072);
	}
	if (v.st == MP_OK && (h == 0 || h > (UINT64_C(1) << 20) || L == 0 || L > MP_MAX_LAYERS || heads == 0 ||
	                      heads > h || oc == 0 || oc > (UINT64_C(1) << 20) || ch == 0 || ch > 256 || patch == 0 ||
	                      patch > image || image > (UINT64_C(1) << 16) || mlp == 0 || mlp > (UINT64_C(1) << 24) ||
	                      win > (UINT64_C(1) << 16)))
		hf_fail_key(&v, h == 0 || h > (UINT64_C(1) << 20) ? "hidden_size"
		                : L == 0 || L > MP_MAX_LAYERS      ? "num_hidden_layers"
		                : heads == 0 || heads > h          ? "num_attention_heads"
		                : oc == 0 || oc > (UINT64_C(1) << 20) ? "output_channels"
		                : ch == 0 || ch > 256                 ? "num_channels"
		                : mlp == 0 || mlp > (UINT64_C(1) << 24) ? "mlp_dim"
		                : win > (UINT64_C(1) << 16)             ? "window_size"
		                                                        : "patch_size",
		            "the SAM tower needs hidden_size and output_channels from 1 to 2^20, num_hidden_layers from 1 to "
		            "1024, 1 to hidden_size heads, 1 to 256 channels, mlp_dim from 1 to 2^24, a window_size of at "
		            "most 65536 and a patch_size from 1 to image_size (at most 65536)");
	gl = v.cfg ? cJSON_GetObjectItemCaseSensitive(v.cfg, "global_attn_indexes") : NULL;
	if (v.st == MP_OK && gl && !cJSON_IsNull(gl)) {
		const cJSON *e;
		bool seen[MP_MAX_LAYERS] = {false};

		if (!cJSON_IsArray(gl))
			hf_fail_key(&v, "global_attn_indexes", "global_attn_indexes must be a list of layer indices");
		listed = (uint64_t)cJSON_GetArraySize(gl);
		cJSON_ArrayForEach(e, gl)
		{
			if (!cJSON_IsNumber(e) || e->valuedouble != (double)(int64_t)e->valuedouble) {
				hf_fail_key(&v, "global_attn_indexes", "global_attn_indexes must hold integers");
				break;
			}
			/* a layer is global when its index is in the list (python's `i in`): others never match */
			if (e->valuedouble >= 0 && e->valuedouble < (double)L && !seen[(size_t)e->valuedouble]) {
				seen[(size_t)e->valuedouble] = true;
				global++;
			}
		}
	} else if (v.st == MP_OK) {
		static const uint64_t dflt[] = {2, 5, 8, 11};

		for (size_t i = 0; i < 4; i++)
			global += dflt[i] < L;
	}
	if (v.st == MP_OK && sp->needs_global && listed == 0)
		hf_fail_key(&v, "global_attn_indexes",
		            "global_attn_indexes must name at least one layer (the wrapper reads its first entry)");
	c->st = v.st;
	if (c->st != MP_OK)
		return 0;
	side = image / patch;
	hd = h / heads;
	sp->hidden = h;
	mp_inventory_root(&m->inv, root, sp->root_name);
	{
		uint64_t pos[4] = {1, side, side, h}, conv[4] = {h, ch, patch, patch}, c1[4] = {oc, h, 1, 1},
		         c2[4] = {oc, oc, 3, 3};

		if (abs_pos)
			hf_shape(m, root, NULL, "pos_embed", MP_TK_VISION, 0, pos, 4, 1);
		hf_shape(m, root, "patch_embed", "projection.weight", MP_TK_VISION, 0, conv, 4, 1);
		vec(m, root, "patch_embed", "projection.bias", MP_TK_VISION, h, 1);
		hf_shape(m, root, "neck", "conv1.weight", MP_TK_VISION, 0, c1, 4, 1);
		hf_shape(m, root, "neck", "conv2.weight", MP_TK_VISION, 0, c2, 4, 1);
	}
	LN(m, root, "neck", "layer_norm1", MP_TK_VISION, oc, 1);
	LN(m, root, "neck", "layer_norm2", MP_TK_VISION, oc, 1);
	LN(m, root, lay, "layer_norm1", MP_TK_VISION, h, L);
	LN(m, root, lay, "layer_norm2", MP_TK_VISION, h, L);
	LIN(m, root, attn, "qkv", MP_TK_VISION, 3 * h, h, qkv_bias, L);
	LIN(m, root, attn, "proj", MP_TK_VISION, h, h, true, L);
	if (rel_pos) {
		uint64_t windowed = win ? L - global : 0, full = L - windowed;

		mat(m, root, attn, "rel_pos_h", MP_TK_VISION, 2 * win - 1, hd, windowed);
		mat(m, root, attn, "rel_pos_w", MP_TK_VISION, 2 * win - 1, hd, windowed);
		mat(m, root, attn, "rel_pos_h", MP_TK_VISION, 2 * side - 1, hd, full);
		mat(m, root, attn, "rel_pos_w", MP_TK_VISION, 2 * side - 1, hd, full);
	}
	LIN(m, root, ml, "lin1", MP_TK_VISION, mlp, h, true, L);
	LIN(m, root, ml, "lin2", MP_TK_VISION, h, mlp, true, L);
	return oc;
}

/*
 * GOT-OCR 2 and PP-Chart2Table (GotOcr2Config, PPChart2TableConfig; both build GotOcr2ForConditionalGeneration): the
 * SAM tower, GotOcr2MultiModalProjector (conv_upsampler1 output_channels -> 2x, conv_upsampler2 -> the decoder's
 * width, 3x3 without bias; multimodal_projector, a linear with a bias) under model.multi_modal_projector., and the
 * Qwen2 decoder of text_config under model.language_model. with lm_head at the top, tied by the wrapper's
 * tie_word_embeddings (True by default; a config that states it only in text_config takes that, as the other
 * wrappers). The class's text_config defaults (Qwen2 of 1024 wide, 24 layers, vocabulary 151860) are not Qwen2Config's:
 * text_config is required.
 */
void mpm_read_got_ocr2(hf_ctx *c, mp_model *m)
{
	uint64_t oc, th;

	if (!read_text(c, "qwen2", true, m))
		return;
	m->inv.roots[MP_ROOT_DECODER] = "model.language_model.";
	wrapper_tie(c, m, true);
	oc = sam_tower(c, m, &(sam_spec){"vision_config", MP_ROOT_TOWER, "model.vision_tower.", false, false, 0});
	if (c->st != MP_OK)
		return;
	th = m->hidden_size;
	mp_inventory_root(&m->inv, MP_ROOT_PROJECTOR, "model.multi_modal_projector.");
	{
		uint64_t up1[4] = {2 * oc, oc, 3, 3}, up2[4] = {th, 2 * oc, 3, 3};

		hf_shape(m, MP_ROOT_PROJECTOR, NULL, "conv_upsampler1.weight", MP_TK_PROJECTOR, 0, up1, 4, 1);
		hf_shape(m, MP_ROOT_PROJECTOR, NULL, "conv_upsampler2.weight", MP_TK_PROJECTOR, 0, up2, 4, 1);
	}
	LIN(m, MP_ROOT_PROJECTOR, NULL, "multimodal_projector", MP_TK_PROJECTOR, th, th, true, 1);
}

/* ----- DeepSeek-VL hybrid ------------------------------------------------------------------------------------------- */


/* A SigLIP tower's configuration class: its model_type and defaults. */
typedef struct siglip_spec {
	const char *model_type;	/* the vision_config's model_type it takes */
	uint64_t hidden, intermediate, layers, heads, image, patch;
	bool head_key;		/* vision_use_head says whether the attention-pooling head is built (else always) */
} siglip_spec;

/* SiglipVisionConfig: hidden 768, MLP 3072, 12 layers, 12 heads, 224 px images of 16 px patches, vision_use_head */
static const siglip_spec siglip_class = {"siglip_vision_model", 768, 3072, 12, 12, 224, 16, true};

/*
 * SiglipVisionModel (SiglipVisionConfig, or a class built as it: sp) as planner/vision.c's SigLIP tower under
 * tower_root, with no projector of its kind (the wrapper lists its own). Returns the tower's width (0 on error).
 */
static uint64_t siglip_tower_of(hf_ctx *c, const siglip_spec *sp, mp_model *m, const char *tower_root,
                                const char *projector_root)
{
	char pointer[MP_POINTER_MAX], msg[160];
	hf_ctx v;
	const cJSON *mt;
	mp_vision *t = &m->vision;
	uint64_t h, inter, L, heads, ch, image, patch;

	if (!hf_sub_config(c, "vision_config", pointer, sizeof(pointer), &v))
		return 0;
	mt = v.cfg ? cJSON_GetObjectItemCaseSensitive(v.cfg, "model_type") : NULL;
	snprintf(msg, sizeof(msg), "vision_config model_type must be %s (the SigLIP tower)", sp->model_type);
	if (mt && !cJSON_IsNull(mt) && !(cJSON_IsString(mt) && strcmp(mt->valuestring, sp->model_type) == 0))
		hf_fail_key(&v, "model_type", msg);
	h = hf_get_u64(&v, KEYS("hidden_size"), sp->hidden);
	inter = hf_get_u64(&v, KEYS("intermediate_size"), sp->intermediate);
	L = hf_get_u64(&v, KEYS("num_hidden_layers"), sp->layers);
	heads = hf_get_u64(&v, KEYS("num_attention_heads"), sp->heads);
	ch = hf_get_u64(&v, KEYS("num_channels"), 3);
	image = hf_get_u64(&v, KEYS("image_size"), sp->image);
	patch = hf_get_u64(&v, KEYS("patch_size"), sp->patch);
	t->map_head = sp->head_key ? hf_get_bool(&v, KEYS("vision_use_head"), true) : true;
	if (v.st == MP_OK && (heads == 0 || h % heads != 0))
		hf_fail_key(&v, "num_attention_heads",
		            "hidden_size must be a multiple of num_attention_heads (SiglipAttention raises ValueError; "
		            "the pooling head's nn.MultiheadAttention refuses it too)");
	if (v.st == MP_OK && (h == 0 || h > (UINT64_C(1) << 20) || L == 0 || L > MP_MAX_LAYERS || inter == 0 ||
	                      inter > (UINT64_C(1) << 24) || ch == 0 || ch > 256 || patch == 0 || patch > image ||
	                      image > (UINT64_C(1) << 16)))
		hf_fail_key(&v, h == 0 || h > (UINT64_C(1) << 20) ? "hidden_size"
		                : L == 0 || L > MP_MAX_LAYERS      ? "num_hidden_layers"
		                : inter == 0 || inter > (UINT64_C(1) << 24) ? "intermediate_size"
		                : ch == 0 || ch > 256                       ? "num_channels"
		                                                            : "patch_size",
		            "the SigLIP tower needs hidden_size from 1 to 2^20, num_hidden_layers from 1 to 1024, "
		            "intermediate_size from 1 to 2^24, 1 to 256 channels and a patch_size from 1 to image_size "
		            "(at most 65536)");
	c->st = v.st;
	if (c->st != MP_OK)
		return 0;
	t->tower = MP_TOWER_SIGLIP;
	t->tower_root = tower_root;
	t->projector_root = projector_root;
	t->hidden = h;
	t->intermediate = inter;
	t->layers = L;
	t->channels = ch;
	t->patch = patch;
	t->positions = (image / patch) * (image / patch);
	t->norm = MP_NORM_LAYER;
	t->patch_bias = t->post_norm = t->attn_bias = t->mlp_bias = true;
	t->projector = MP_PROJECTOR_NONE;
	t->merge = 1;
	t->out_hidden = m->hidden_size;
	return h;
}

/* The SigLIP tower of SiglipVisionConfig's defaults (siglip_tower_of). */
static uint64_t siglip_tower(hf_ctx *c, mp_model *m, const char *tower_root, const char *projector_root)
{
	return siglip_tower_of(c, &siglip_class, m, tower_root, projector_root);
}

/*
 * DeepSeek-VL hybrid (DeepseekVLHybridConfig: Llama's class defaults for text_config, SigLIP's for vision_config,
 * SamVisionConfig's for high_res_vision_config; tied by default): the SigLIP tower under model.vision_model.; the SAM
 * tower (SamVisionModel) under model.high_res_vision_model.vision_encoder.; DeepseekVLSamVisionNeck again outside it
 * (high_res_vision_neck), DeepseekVLSamVisionProj (conv1 oc -> 2 oc, conv2 -> 4 oc, 3x3 without bias),
 * high_res_vision_alpha [1]; the aligner (vision_proj and high_res_vision_proj to half the decoder's width, proj, all
 * biased); the decoder under model.language_model., lm_head at the top.
 */
void mpm_read_deepseek_vl_hybrid(hf_ctx *c, mp_model *m)
{
	sam_spec sp = {"high_res_vision_config", MP_ROOT_EXTRA, "model.high_res_vision_model.vision_encoder.", true, true, 0};
	uint64_t oc, vh, th;

	if (!read_text(c, "llama", false, m))
		return;
	m->inv.roots[MP_ROOT_DECODER] = "model.language_model.";
	wrapper_tie(c, m, true);
	vh = siglip_tower(c, m, "model.vision_model.", "model.");
	if (c->st != MP_OK)
		return;
	oc = sam_tower(c, m, &sp);
	if (c->st != MP_OK)
		return;
	th = m->hidden_size;
	mp_inventory_root(&m->inv, MP_ROOT_PROJECTOR, "model.");
	{
		uint64_t alpha[1] = {1}, c1[4] = {oc, sp.hidden, 1, 1}, c2[4] = {oc, oc, 3, 3}, p1[4] = {2 * oc, oc, 3, 3},
		         p2[4] = {4 * oc, 2 * oc, 3, 3};

		hf_shape(m, MP_ROOT_PROJECTOR, NULL, "high_res_vision_alpha", MP_TK_PROJECTOR, 0, alpha, 1, 1);
		hf_shape(m, MP_ROOT_PROJECTOR, "high_res_vision_neck", "conv1.weight", MP_TK_VISION, 0, c1, 4, 1);
		hf_shape(m, MP_ROOT_PROJECTOR, "high_res_vision_neck", "conv2.weight", MP_TK_VISION, 0, c2, 4, 1);
		hf_shape(m, MP_ROOT_PROJECTOR, "high_res_vision_proj", "conv1.weight", MP_TK_PROJECTOR, 0, p1, 4, 1);
		hf_shape(m, MP_ROOT_PROJECTOR, "high_res_vision_proj", "conv2.weight", MP_TK_PROJECTOR, 0, p2, 4, 1);
	}
	LN(m, MP_ROOT_PROJECTOR, "high_res_vision_neck", "layer_norm1", MP_TK_VISION, oc, 1);
	LN(m, MP_ROOT_PROJECTOR, "high_res_vision_neck", "layer_norm2", MP_TK_VISION, oc, 1);
	LIN(m, MP_ROOT_PROJECTOR, "aligner", "vision_proj", MP_TK_PROJECTOR, th / 2, vh, true, 1);
	LIN(m, MP_ROOT_PROJECTOR, "aligner", "high_res_vision_proj", MP_TK_PROJECTOR, th / 2, 4 * oc, true, 1);
	LIN(m, MP_ROOT_PROJECTOR, "aligner", "proj", MP_TK_PROJECTOR, th, th, true, 1);
}

/* A CLIP tower (modeling_clip.py CLIPVisionTransformer: class embedding, pre and post LayerNorms, biased
 * projections) of hidden h, MLP inter, L layers, ch channels, patch px patches over image px (positions: the patch
 * grid and the class token), under tower_root, with no projector of planner/vision.c's own: the reader lists it under
 * projector_root. out: the width it hands the decoder. */
static void clip_tower(mp_vision *t, const char *tower_root, const char *projector_root, uint64_t h, uint64_t inter,
		       uint64_t L, uint64_t ch, uint64_t patch, uint64_t image, uint64_t out)
{
	t->tower = MP_TOWER_CLIP;
	t->tower_root = tower_root;
	t->projector_root = projector_root;
	t->hidden = h;
	t->intermediate = inter;
	t->layers = L;
	t->channels = ch;
	t->patch = patch;
	t->positions = (image / patch) * (image / patch) + 1;
	t->norm = MP_NORM_LAYER;
	t->class_embedding = t->pre_norm = t->post_norm = t->attn_bias = t->mlp_bias = true;
	t->projector = MP_PROJECTOR_NONE;
	t->merge = 1;
	t->out_hidden = out;
}

/*
 * A CLIP-style vision_config (GIT's GitVisionConfig, IDEFICS's IdeficsVisionConfig) into m->vision as clip_tower's
 * tower under tower_root: its width under width_keys (the first named in errors), intermediate_size, layers, heads
 * (dividing the width: the tower's attention raises ValueError otherwise), channels, image and patch sizes, each with
 * d's default. Returns the width (0, c->st set, on a bad value).
 */
uint64_t hf_clip_vision(hf_ctx *c, const char *const *width_keys, const hf_clip_shape *d, const char *tower_root,
                        const char *projector_root, mp_model *m)
{
	char pointer[MP_POINTER_MAX], msg[320];
	hf_ctx v;
	uint64_t h, inter, L, heads, ch, image, patch;
	const char *wk = width_keys[0];

	if (!hf_sub_config(c, "vision_config", pointer, sizeof(pointer), &v))
		return 0;
	h = hf_get_u64(&v, width_keys, d->hidden);
	inter = hf_get_u64(&v, KEYS("intermediate_size"), d->inter);
	L = hf_get_u64(&v, KEYS("num_hidden_layers"), d->layers);
	heads = hf_get_u64(&v, KEYS("num_attention_heads"), d->heads);
	ch = hf_get_u64(&v, KEYS("num_channels"), 3);
	image = hf_get_u64(&v, KEYS("image_size"), d->image);
	patch = hf_get_u64(&v, KEYS("patch_size"), d->patch);
	if (v.st == MP_OK && (heads == 0 || h % heads != 0)) {
		snprintf(msg, sizeof(msg), "%s must be a multiple of num_attention_heads (the tower's attention raises "
		                           "ValueError)", wk);
		hf_fail_key(&v, "num_attention_heads", msg);
	}
	if (v.st == MP_OK && (h == 0 || h > (UINT64_C(1) << 20) || L == 0 || L > MP_MAX_LAYERS || inter == 0 ||
	                      inter > (UINT64_C(1) << 24) || ch == 0 || ch > 256 || patch == 0 || patch > image ||
	                      image > (UINT64_C(1) << 16))) {
		snprintf(msg, sizeof(msg),
		         "the CLIP tower needs %s from 1 to 2^20, num_hidden_layers from 1 to 1024, intermediate_size "
		         "from 1 to 2^24, 1 to 256 channels and a patch_size from 1 to image_size (at most 65536)", wk);
		hf_fail_key(&v, h == 0 || h > (UINT64_C(1) << 20) ? wk
		                : L == 0 || L > MP_MAX_LAYERS      ? "num_hidden_layers"
		                : inter == 0 || inter > (UINT64_C(1) << 24) ? "intermediate_size"
		                : ch == 0 || ch > 256                       ? "num_channels"
		                                                            : "patch_size",
		            msg);
	}
	c->st = v.st;
	if (c->st != MP_OK)
		return 0;
	clip_tower(&m->vision, tower_root, projector_root, h, inter, L, ch, patch, image, m->hidden_size);
	return h;
}

/* ----- Qianfan-OCR ---------------------------------------------------------------------------------------------------- */

/* An image side or patch side: an integer, or a list of two integers (height, width) as the InternViT-style configs
 * write (448, 448). Sets *a and *b; a 422 naming key otherwise. */
static void two_sides(hf_ctx *c, const char *key, uint64_t dflt, uint64_t *a, uint64_t *b)
{
	const cJSON *v = c->cfg ? cJSON_GetObjectItemCaseSensitive(c->cfg, key) : NULL;

	if (cJSON_IsArray(v)) {
		const cJSON *x = cJSON_GetArrayItem(v, 0), *y = cJSON_GetArrayItem(v, 1);

		if (cJSON_GetArraySize(v) != 2 || !cJSON_IsNumber(x) || !cJSON_IsNumber(y) || x->valuedouble < 1 ||
		    y->valuedouble < 1 || x->valuedouble > 65536 || y->valuedouble > 65536 ||
		    x->valuedouble != (double)(uint64_t)x->valuedouble || y->valuedouble != (double)(uint64_t)y->valuedouble) {
			hf_fail_key(c, key, "a list here must hold two integers from 1 to 65536 (height, width)");
			*a = *b = dflt;
			return;
		}
		*a = (uint64_t)x->valuedouble;
		*b = (uint64_t)y->valuedouble;
		return;
	}
	*a = *b = hf_get_u64(c, (const char *const[]){key, NULL}, dflt);
}

/*
 * Qianfan-OCR (QianfanOCRConfig: Qwen3's class defaults for text_config, untied; QianfanOCRVisionConfig: hidden 1024,
 * 24 layers, 16 heads, MLP 4096, 448 px images of 14 px patches, attention_bias True, LayerNorms or RMSNorms
 * (norm_type), RMSNorm q/k norms over the whole width with use_qk_norm, a mask token with use_mask_token, positions of
 * the patches + 1 with use_absolute_position_embeddings, a final LayerNorm unless use_mean_pooling): InternVL's tower
 * with its layers at model.vision_tower.layers.{i} (the cls token, layer-scale lambda_1 and lambda_2, q/k/v,
 * projection_layer with a bias, fc1 and fc2), then QianfanOCRMultiModalProjector (a LayerNorm over the
 * int(1 / downsample_ratio)^2 merged patches, linear_1 and linear_2 with biases).
 */
void mpm_read_qianfan_ocr(hf_ctx *c, mp_model *m)
{
	char pointer[MP_POINTER_MAX];
	hf_ctx v;
	const cJSON *nt;
	uint64_t h, L, heads, inter, ch, ih, iw, ph, pw, pos, merge, in, th;
	bool bias, qk, mask, abs_pos, pooling, rms;
	double ratio;
	const char *lay = "layers.{i}", *attn = "layers.{i}.attention", *mlp = "layers.{i}.mlp";

	if (!read_text(c, "qwen3", false, m))
		return;
	m->inv.roots[MP_ROOT_DECODER] = "model.language_model.";
	wrapper_tie(c, m, false);
	if (!hf_sub_config(c, "vision_config", pointer, sizeof(pointer), &v))
		return;
	h = hf_get_u64(&v, KEYS("hidden_size"), 1024);
	L = hf_get_u64(&v, KEYS("num_hidden_layers"), 24);
	heads = hf_get_u64(&v, KEYS("num_attention_heads"), 16);
	inter = hf_get_u64(&v, KEYS("intermediate_size"), 4096);
	ch = hf_get_u64(&v, KEYS("num_channels"), 3);
	two_sides(&v, "image_size", 448, &ih, &iw);
	two_sides(&v, "patch_size", 14, &ph, &pw);
	bias = hf_get_bool(&v, KEYS("attention_bias"), true);
	qk = hf_get_bool(&v, KEYS("use_qk_norm"), false);
	mask = hf_get_bool(&v, KEYS("use_mask_token"), false);
	abs_pos = hf_get_bool(&v, KEYS("use_absolute_position_embeddings"), true);
	pooling = hf_get_bool(&v, KEYS("use_mean_pooling"), true);
	nt = v.cfg ? cJSON_GetObjectItemCaseSensitive(v.cfg, "norm_type") : NULL;
	rms = cJSON_IsString(nt) && strcmp(nt->valuestring, "rms_norm") == 0;
	if (nt && !cJSON_IsNull(nt) && !(cJSON_IsString(nt) && (rms || strcmp(nt->valuestring, "layer_norm") == 0)))
		hf_fail_key(&v, "norm_type", "norm_type must be \"layer_norm\" or \"rms_norm\"");
	if (v.st == MP_OK && (heads == 0 || h % heads != 0))
		hf_fail_key(&v, "num_attention_heads",
		            "hidden_size must be a multiple of num_attention_heads (QianfanOCRVisionAttention raises "
		            "ValueError)");
	if (v.st == MP_OK && (h == 0 || h > (UINT64_C(1) << 20) || L == 0 || L > MP_MAX_LAYERS || inter == 0 ||
	                      inter > (UINT64_C(1) << 24) || ch == 0 || ch > 256 || ph > ih || pw > iw))
		hf_fail_key(&v, h == 0 || h > (UINT64_C(1) << 20) ? "hidden_size"
		                : L == 0 || L > MP_MAX_LAYERS      ? "num_hidden_layers"
		                : inter == 0 || inter > (UINT64_C(1) << 24) ? "intermediate_size"
		                : ch == 0 || ch > 256                       ? "num_channels"
		                                                            : "patch_size",
		            "the image tower needs hidden_size from 1 to 2^20, num_hidden_layers from 1 to 1024, "
		            "intermediate_size from 1 to 2^24, 1 to 256 channels and a patch no larger than the image");
	c->st = v.st;
	ratio = hf_get_double(c, c->cfg, "downsample_ratio", 0.5);
	if (c->st == MP_OK && !(ratio > 0 && ratio <= 1))
		hf_fail_key(c, "downsample_ratio", "downsample_ratio must be in (0, 1]");
	if (c->st != MP_OK)
		return;
	merge = (uint64_t)(1.0 / ratio);
	in = merge * merge * h;
	pos = (ih / ph) * (iw / pw) + 1;
	th = m->hidden_size;
	mp_inventory_root(&m->inv, MP_ROOT_TOWER, "model.vision_tower.");
	mp_inventory_root(&m->inv, MP_ROOT_PROJECTOR, "model.multi_modal_projector.");
	{
		uint64_t cls[3] = {1, 1, h}, pe[3] = {1, pos, h}, conv[4] = {h, ch, ph, pw};

		hf_shape(m, MP_ROOT_TOWER, "embeddings", "cls_token", MP_TK_VISION, 0, cls, 3, 1);
		if (mask)
			hf_shape(m, MP_ROOT_TOWER, "embeddings", "mask_token", MP_TK_VISION, 0, cls, 3, 1);
		if (abs_pos)
			hf_shape(m, MP_ROOT_TOWER, "embeddings", "position_embeddings", MP_TK_VISION, 0, pe, 3, 1);
		hf_shape(m, MP_ROOT_TOWER, "embeddings.patch_embeddings", "projection.weight", MP_TK_VISION, 0, conv, 4, 1);
		vec(m, MP_ROOT_TOWER, "embeddings.patch_embeddings", "projection.bias", MP_TK_VISION, h, 1);
	}
	vec(m, MP_ROOT_TOWER, lay, "lambda_1", MP_TK_VISION, h, L);
	vec(m, MP_ROOT_TOWER, lay, "lambda_2", MP_TK_VISION, h, L);
	LIN(m, MP_ROOT_TOWER, attn, "q_proj", MP_TK_VISION, h, h, bias, L);
	LIN(m, MP_ROOT_TOWER, attn, "k_proj", MP_TK_VISION, h, h, bias, L);
	LIN(m, MP_ROOT_TOWER, attn, "v_proj", MP_TK_VISION, h, h, bias, L);
	LIN(m, MP_ROOT_TOWER, attn, "projection_layer", MP_TK_VISION, h, h, true, L);
	if (qk) {
		vec(m, MP_ROOT_TOWER, attn, "q_norm.weight", MP_TK_VISION, h, L);
		vec(m, MP_ROOT_TOWER, attn, "k_norm.weight", MP_TK_VISION, h, L);
	}
	LIN(m, MP_ROOT_TOWER, mlp, "fc1", MP_TK_VISION, inter, h, true, L);
	LIN(m, MP_ROOT_TOWER, mlp, "fc2", MP_TK_VISION, h, inter, true, L);
	if (rms) {
		vec(m, MP_ROOT_TOWER, lay, "layernorm_before.weight", MP_TK_VISION, h, L);
		vec(m, MP_ROOT_TOWER, lay, "layernorm_after.weight", MP_TK_VISION, h, L);
	} else {
		LN(m, MP_ROOT_TOWER, lay, "layernorm_before", MP_TK_VISION, h, L);
		LN(m, MP_ROOT_TOWER, lay, "layernorm_after", MP_TK_VISION, h, L);
	}
	if (!pooling)
		LN(m, MP_ROOT_TOWER, NULL, "layernorm", MP_TK_VISION, h, 1);
	LN(m, MP_ROOT_PROJECTOR, NULL, "layer_norm", MP_TK_PROJECTOR, in, 1);
	LIN(m, MP_ROOT_PROJECTOR, NULL, "linear_1", MP_TK_PROJECTOR, th, in, true, 1);
	LIN(m, MP_ROOT_PROJECTOR, NULL, "linear_2", MP_TK_PROJECTOR, th, th, true, 1);
}

/* ----- Granite 4 Vision ------------------------------------------------------------------------------------------------ */

/* "q/w" of downsample_rate into *q and *w (each 1 to 1024); false and a 422 otherwise. */
static bool downsample_rate(hf_ctx *c, uint64_t *q, uint64_t *w)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->cfg, "downsample_rate");
	unsigned long long a = 0, b = 0;
	int used = 0;

	if (!cJSON_IsString(v) || sscanf(v->valuestring, "%4llu/%4llu%n", &a, &b, &used) != 2 ||
	    v->valuestring[used] != '\0' || a == 0 || b == 0 || a > 1024 || b > 1024) {
		hf_fail_key(c, "downsample_rate",
		            "downsample_rate is required: \"q/w\", the Window Q-Former's query and key window sides (1 to "
		            "1024 each, \"1/4\" say); transformers 5.24 cannot build Granite4VisionModel without it");
		return false;
	}
	*q = a;
	*w = b;
	return true;
}

/*
 * Granite 4 Vision (Granite4VisionConfig; Granite4VisionTextConfig is GraniteConfig's decoder, read as granite; CLIP's
 * class defaults for vision_config; no default that transformers 5.24 builds: downsample_rate and deepstack_layer_map
 * are required). The CLIP tower under model.vision_tower. (planner/vision.c), image_newline [decoder width], and
 * len(deepstack_layer_map) layerwise_projectors and 4 spatial_projectors, each a Window Q-Former downsampler: a
 * Blip2QFormerModel as wide as the tower (num_attention_heads hidden / 64, cross-attention to the tower; qformer_config
 * absent: 1 layer of MLP 3072 cross-attending every layer, else Blip2QFormerConfig's defaults for what it leaves out),
 * a LayerNorm, query [1, q^2, h], image_positions [1, w^2, h] and out_linear to the decoder's width with a bias. The
 * Granite decoder under model.language_model., lm_head at the top, untied by default.
 */
void mpm_read_granite4_vision(hf_ctx *c, mp_model *m)
{
	static const char *const proj_root[2] = {"model.layerwise_projectors.{i}.", "model.spatial_projectors.{i}."};
	static const uint8_t proj_idx[2] = {MP_ROOT_EXTRA, MP_ROOT_HEAD};
	char pointer[MP_POINTER_MAX];
	hf_ctx v, q;
	const cJSON *dl;
	mp_vision *t = &m->vision;
	uint64_t h, inter, L, heads, ch, image, patch, qs, ws, th, qL, qi, freq, n_proj[2] = {0, 4};
	bool text_input;

	if (!read_text_as(c, "granite", "granite4_vision_text", false, m))
		return;
	if (c->names && c->names->head_root) {
		hf_fail_key(c, "text_config", "this text_config's decoder places its head under a root of its own");
		return;
	}
	m->inv.roots[MP_ROOT_DECODER] = "model.language_model.";
	wrapper_tie(c, m, false);
	dl = cJSON_GetObjectItemCaseSensitive(c->cfg, "deepstack_layer_map");
	if (!cJSON_IsArray(dl)) {
		hf_fail_key(c, "deepstack_layer_map",
		            "deepstack_layer_map is required: a list of [vision_layer, llm_layer] pairs, one layerwise "
		            "projector each; transformers 5.24 cannot build Granite4VisionModel without it");
		return;
	}
	{
		const cJSON *e;

		cJSON_ArrayForEach(e, dl)
		{
			const cJSON *a = cJSON_GetArrayItem(e, 0), *b = cJSON_GetArrayItem(e, 1);

			if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 2 || !cJSON_IsNumber(a) || !cJSON_IsNumber(b)) {
				hf_fail_key(c, "deepstack_layer_map",
				            "each deepstack_layer_map entry is a pair [vision_layer, llm_layer] of integers");
				return;
			}
		}
		n_proj[0] = (uint64_t)cJSON_GetArraySize(dl);
	}
	if (!downsample_rate(c, &qs, &ws))
		return;
	if (!hf_sub_config(c, "vision_config", pointer, sizeof(pointer), &v))
		return;
	{
		const cJSON *mt = v.cfg ? cJSON_GetObjectItemCaseSensitive(v.cfg, "model_type") : NULL;

		if (mt && !cJSON_IsNull(mt) && !(cJSON_IsString(mt) && strcmp(mt->valuestring, "clip_vision_model") == 0))
			hf_fail_key(&v, "model_type", "vision_config model_type must be clip_vision_model (the CLIP tower)");
	}
	h = hf_get_u64(&v, KEYS("hidden_size"), 768);
	inter = hf_get_u64(&v, KEYS("intermediate_size"), 3072);
	L = hf_get_u64(&v, KEYS("num_hidden_layers"), 12);
	heads = hf_get_u64(&v, KEYS("num_attention_heads"), 12);
	ch = hf_get_u64(&v, KEYS("num_channels"), 3);
	image = hf_get_u64(&v, KEYS("image_size"), 224);
	patch = hf_get_u64(&v, KEYS("patch_size"), 32);
	if (v.st == MP_OK && (heads == 0 || h % heads != 0))
		hf_fail_key(&v, "num_attention_heads",
		            "hidden_size must be a multiple of num_attention_heads (CLIPAttention raises ValueError)");
	/* the Q-Former takes the tower's width and hidden_size / 64 heads (Granite4VisionConfig.__post_init__) */
	if (v.st == MP_OK && (h < 64 || h % (h / 64) != 0))
		hf_fail_key(&v, "hidden_size",
		            "hidden_size must be at least 64 and a multiple of hidden_size / 64 (the Window Q-Former's "
		            "heads)");
	if (v.st == MP_OK && (h > (UINT64_C(1) << 20) || L == 0 || L > MP_MAX_LAYERS || inter == 0 ||
	                      inter > (UINT64_C(1) << 24) || ch == 0 || ch > 256 || patch == 0 || patch > image ||
	                      image > (UINT64_C(1) << 16)))
		hf_fail_key(&v, h > (UINT64_C(1) << 20)               ? "hidden_size"
		                : L == 0 || L > MP_MAX_LAYERS          ? "num_hidden_layers"
		                : inter == 0 || inter > (UINT64_C(1) << 24) ? "intermediate_size"
		                : ch == 0 || ch > 256                       ? "num_channels"
		                                                            : "patch_size",
		            "the CLIP tower needs hidden_size up to 2^20, num_hidden_layers from 1 to 1024, intermediate_size "
		            "from 1 to 2^24, 1 to 256 channels and a patch_size from 1 to image_size (at most 65536)");
	c->st = v.st;
	if (c->st != MP_OK || !hf_sub_config(c, "qformer_config", pointer, sizeof(pointer), &q))
		return;
	qL = hf_get_u64(&q, KEYS("num_hidden_layers"), q.cfg ? 12 : 1);
	qi = hf_get_u64(&q, KEYS("intermediate_size"), 3072);
	freq = hf_get_u64(&q, KEYS("cross_attention_frequency"), q.cfg ? 2 : 1);
	text_input = hf_get_bool(&q, KEYS("use_qformer_text_input"), false);
	if (q.st == MP_OK && freq == 0)
		hf_fail_key(&q, "cross_attention_frequency",
		            "cross_attention_frequency must be at least 1 (layer i cross-attends when i % it is 0)");
	if (q.st == MP_OK && (qL == 0 || qL > MP_MAX_LAYERS || qi == 0 || qi > (UINT64_C(1) << 24)))
		hf_fail_key(&q, qL == 0 || qL > MP_MAX_LAYERS ? "num_hidden_layers" : "intermediate_size",
		            "the Q-Former needs num_hidden_layers from 1 to 1024 and intermediate_size from 1 to 2^24");
	c->st = q.st;
	if (c->st != MP_OK)
		return;
	th = m->hidden_size;
	/* the CLIP tower (CLIPVisionModel's vision_model, under model.vision_tower.) */
	clip_tower(t, "model.vision_tower.", "model.", h, inter, L, ch, patch, image, th);
	mp_inventory_root(&m->inv, MP_ROOT_PROJECTOR, "model.");
	vec(m, MP_ROOT_PROJECTOR, NULL, "image_newline", MP_TK_PROJECTOR, th, 1);
	for (int k = 0; k < 2; k++) {
		uint8_t r = proj_idx[k];
		uint64_t n = n_proj[k], query[3] = {1, qs * qs, h}, positions[3] = {1, ws * ws, h};

		if (n == 0)
			continue;
		mp_inventory_root(&m->inv, r, proj_root[k]);
		hf_shape(m, r, NULL, "query", MP_TK_PROJECTOR, 0, query, 3, n);
		hf_shape(m, r, NULL, "image_positions", MP_TK_PROJECTOR, 0, positions, 3, n);
		LN(m, r, "qformer", "layernorm", MP_TK_PROJECTOR, h, n);
		LN(m, r, NULL, "norm", MP_TK_PROJECTOR, h, n);
		LIN(m, r, NULL, "out_linear", MP_TK_PROJECTOR, th, h, true, n);
		qformer_encoder(m, r, qf_paths_nested, h, qi, h, qL, (qL + freq - 1) / freq, text_input, n);
	}
}

/* ----- MiniCPM-V 4.6, MiniCPM-V 4.7, MiniCPM-OCR ----------------------------------------------------------------------- */

/* A kernel (h, w) of a config: a list of two integers from 1 to 64 (window_kernel_size, merge_kernel_size), default
 * (d, d). Their product into *out; false and a 422 naming key otherwise. */
static bool kernel_area(hf_ctx *c, const char *key, uint64_t d, uint64_t *out)
{
	const cJSON *v = c->cfg ? cJSON_GetObjectItemCaseSensitive(c->cfg, key) : NULL;

	*out = d * d;
	if (v == NULL || cJSON_IsNull(v))
		return true;
	if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2 || !cJSON_IsNumber(cJSON_GetArrayItem(v, 0)) ||
	    !cJSON_IsNumber(cJSON_GetArrayItem(v, 1)) || cJSON_GetArrayItem(v, 0)->valuedouble < 1 ||
	    cJSON_GetArrayItem(v, 1)->valuedouble < 1 || cJSON_GetArrayItem(v, 0)->valuedouble > 64 ||
	    cJSON_GetArrayItem(v, 1)->valuedouble > 64) {
		hf_fail_key(c, key, "must be a list of two integers from 1 to 64 (a kernel's height and width)");
		return false;
	}
	*out = (uint64_t)cJSON_GetArrayItem(v, 0)->valuedouble * (uint64_t)cJSON_GetArrayItem(v, 1)->valuedouble;
	return true;
}

/*
 * MiniCPM-V 4.6 and 4.7, MiniCPM-OCR (MiniCPMV4_6Config and its kin: Qwen3.5's text decoder (qwen3_5_text's class
 * defaults), untied (MiniCPM-OCR: tied); MiniCPMV4_6VisionConfig: hidden 768, MLP 3072, 12 layers, 12 heads, 224 px
 * images of 16 px patches, window_kernel_size (2, 2)). The SigLIP-style tower under model.vision_tower. (no head;
 * planner/vision.c) and its vit_merger (window attention q, k, v, out_proj with biases, layer_norm1, then pre_norm over
 * the k = kh x kw window, linear_1 k x MLP and linear_2 back to the width, biased); the merger under model.merger.:
 * merger_times DownsampleMLPs over 4 x the tower's width (pre_norm, linear_1 square, linear_2 to the width, the last to
 * the decoder's), at least one whatever merger_times says.
 */
void mpm_read_minicpmv(hf_ctx *c, mp_model *m)
{
	char pointer[MP_POINTER_MAX];
	hf_ctx v;
	mp_vision *t = &m->vision;
	uint64_t h, inter, L, heads, ch, image, patch, k = 4, T, th, wh, wi;
	bool ocr = strcmp(m->model_type, "minicpm_ocr") == 0;
	const char *vm = "vit_merger", *sa = "vit_merger.self_attn";

	if (!read_text(c, "qwen3_5_text", false, m))
		return;
	m->inv.roots[MP_ROOT_DECODER] = "model.language_model.";
	wrapper_tie(c, m, ocr);
	if (!hf_sub_config(c, "vision_config", pointer, sizeof(pointer), &v))
		return;
	h = hf_get_u64(&v, KEYS("hidden_size"), 768);
	inter = hf_get_u64(&v, KEYS("intermediate_size"), 3072);
	L = hf_get_u64(&v, KEYS("num_hidden_layers"), 12);
	heads = hf_get_u64(&v, KEYS("num_attention_heads"), 12);
	ch = hf_get_u64(&v, KEYS("num_channels"), 3);
	image = hf_get_u64(&v, KEYS("image_size"), 224);
	patch = hf_get_u64(&v, KEYS("patch_size"), 16);
	if (v.st == MP_OK && heads == 0)
		hf_fail_key(&v, "num_attention_heads", "num_attention_heads must be at least 1");
	if (v.st == MP_OK && (h == 0 || h > (UINT64_C(1) << 20) || L == 0 || L > MP_MAX_LAYERS || inter == 0 ||
	                      inter > (UINT64_C(1) << 24) || ch == 0 || ch > 256 || patch == 0 || patch > image ||
	                      image > (UINT64_C(1) << 16)))
		hf_fail_key(&v, h == 0 || h > (UINT64_C(1) << 20) ? "hidden_size"
		                : L == 0 || L > MP_MAX_LAYERS      ? "num_hidden_layers"
		                : inter == 0 || inter > (UINT64_C(1) << 24) ? "intermediate_size"
		                : ch == 0 || ch > 256                       ? "num_channels"
		                                                            : "patch_size",
		            "the image tower needs hidden_size from 1 to 2^20, num_hidden_layers from 1 to 1024, "
		            "intermediate_size from 1 to 2^24, 1 to 256 channels and a patch_size from 1 to image_size "
		            "(at most 65536)");
	if (v.st == MP_OK)
		kernel_area(&v, "window_kernel_size", 2, &k);
	c->st = v.st;
	T = hf_get_u64(c, KEYS("merger_times"), 1);
	if (c->st == MP_OK && T > 64)
		hf_fail_key(c, "merger_times", "merger_times must be at most 64");
	if (c->st != MP_OK)
		return;
	T = T ? T : 1; /* MiniCPMV4_6Merger appends the last MLP whatever merger_times says */
	th = m->hidden_size;
	wh = h * k;
	wi = inter * k;
	t->tower = MP_TOWER_SIGLIP;
	t->tower_root = "model.vision_tower.";
	t->projector_root = "model.merger.";
	t->hidden = h;
	t->intermediate = inter;
	t->layers = L;
	t->channels = ch;
	t->patch = patch;
	t->positions = (image / patch) * (image / patch);
	t->norm = MP_NORM_LAYER;
	t->patch_bias = t->post_norm = t->attn_bias = t->mlp_bias = true;
	t->projector = MP_PROJECTOR_NONE;
	t->merge = 1;
	t->out_hidden = th;
	mp_inventory_root(&m->inv, MP_ROOT_TOWER, "model.vision_tower.");
	LIN(m, MP_ROOT_TOWER, sa, "q_proj", MP_TK_VISION, h, h, true, 1);
	LIN(m, MP_ROOT_TOWER, sa, "k_proj", MP_TK_VISION, h, h, true, 1);
	LIN(m, MP_ROOT_TOWER, sa, "v_proj", MP_TK_VISION, h, h, true, 1);
	LIN(m, MP_ROOT_TOWER, sa, "out_proj", MP_TK_VISION, h, h, true, 1);
	LN(m, MP_ROOT_TOWER, vm, "layer_norm1", MP_TK_VISION, h, 1);
	LN(m, MP_ROOT_TOWER, vm, "pre_norm", MP_TK_VISION, wh, 1);
	LIN(m, MP_ROOT_TOWER, vm, "linear_1", MP_TK_VISION, wi, wh, true, 1);
	LIN(m, MP_ROOT_TOWER, vm, "linear_2", MP_TK_VISION, h, wi, true, 1);
	mp_inventory_root(&m->inv, MP_ROOT_PROJECTOR, "model.merger.");
	LN(m, MP_ROOT_PROJECTOR, "mlp.{i}", "pre_norm", MP_TK_PROJECTOR, 4 * h, T);
	LIN(m, MP_ROOT_PROJECTOR, "mlp.{i}", "linear_1", MP_TK_PROJECTOR, 4 * h, 4 * h, true, T);
	LIN(m, MP_ROOT_PROJECTOR, "mlp.{i}", "linear_2", MP_TK_PROJECTOR, h, 4 * h, true, T - 1);
	LIN(m, MP_ROOT_PROJECTOR, "mlp.{i}", "linear_2", MP_TK_PROJECTOR, th, 4 * h, true, 1);
}

/* ----- Ovis2 ----------------------------------------------------------------------------------------------------------- */

/*
 * Ovis2 (Ovis2Config: Qwen2's class defaults for text_config, tied; hidden_size 1536 and vocab_size 151643 of its own;
 * Ovis2VisionConfig: hidden 1024, MLP 2816, 24 layers, 8 heads, 224 px images of 14 px patches, qkv_bias and mlp_bias
 * False, a visual vocabulary of 16384 with 5 indicator tokens, hidden_stride 1): the AIMv2-style tower under
 * model.vision_tower.transformer. (a patch convolution with a bias, (image / patch)^2 positions, RMSNorms, q/k/v/out and
 * gate/up/down projections behind their bias flags), head_linear (hidden x stride^2 -> the visual vocabulary less the
 * indicators) and head_norm (a LayerNorm); visual_embeddings_table [visual vocabulary, the wrapper's hidden_size]; the
 * decoder under model.language_model. and lm_head. Untied, transformers builds lm_head of the wrapper's hidden_size x
 * vocab_size, not the decoder's: memplan takes it only where the two agree (a 422 names the key otherwise).
 */
void mpm_read_ovis2(hf_ctx *c, mp_model *m)
{
	char pointer[MP_POINTER_MAX];
	hf_ctx v;
	uint64_t h, inter, L, heads, ch, image, patch, vv, ind, stride, top_h, top_v, pos;
	bool qkv_bias, mlp_bias;
	const char *lay = "encoder.layers.{i}", *attn = "encoder.layers.{i}.attention", *ffn = "encoder.layers.{i}.ffn";

	if (!read_text(c, "qwen2", false, m))
		return;
	m->inv.roots[MP_ROOT_DECODER] = "model.language_model.";
	wrapper_tie(c, m, true);
	top_h = hf_get_u64(c, KEYS("hidden_size"), 1536);
	top_v = hf_get_u64(c, KEYS("vocab_size"), 151643);
	if (c->st == MP_OK && !m->tie_word_embeddings && (top_h != m->hidden_size || top_v != m->vocab_size))
		hf_fail_key(c, top_h != m->hidden_size ? "hidden_size" : "vocab_size",
		            "with tie_word_embeddings false, Ovis2ForConditionalGeneration builds lm_head of the wrapper's "
		            "hidden_size x vocab_size: both must equal text_config's for the head to read the decoder");
	if (c->st != MP_OK || !hf_sub_config(c, "vision_config", pointer, sizeof(pointer), &v))
		return;
	h = hf_get_u64(&v, KEYS("hidden_size"), 1024);
	inter = hf_get_u64(&v, KEYS("intermediate_size"), 2816);
	L = hf_get_u64(&v, KEYS("num_hidden_layers"), 24);
	heads = hf_get_u64(&v, KEYS("num_attention_heads"), 8);
	ch = hf_get_u64(&v, KEYS("num_channels"), 3);
	image = hf_get_u64(&v, KEYS("image_size"), 224);
	patch = hf_get_u64(&v, KEYS("patch_size"), 14);
	qkv_bias = hf_get_bool(&v, KEYS("qkv_bias"), false);
	mlp_bias = hf_get_bool(&v, KEYS("mlp_bias"), false);
	vv = hf_get_u64(&v, KEYS("vocab_size"), 16384);
	ind = hf_get_u64(&v, KEYS("num_visual_indicator_tokens"), 5);
	stride = hf_get_u64(&v, KEYS("hidden_stride"), 1);
	if (v.st == MP_OK && (heads == 0 || h % heads != 0))
		hf_fail_key(&v, "num_attention_heads",
		            "hidden_size must be a multiple of num_attention_heads (Ovis2VisionAttention raises ValueError)");
	if (v.st == MP_OK && (vv <= ind || vv > (UINT64_C(1) << 24)))
		hf_fail_key(&v, "vocab_size",
		            "the visual vocab_size must exceed num_visual_indicator_tokens (head_linear's rows) and stay "
		            "below 2^24");
	if (v.st == MP_OK && (h == 0 || h > (UINT64_C(1) << 20) || L == 0 || L > MP_MAX_LAYERS || inter == 0 ||
	                      inter > (UINT64_C(1) << 24) || ch == 0 || ch > 256 || patch == 0 || patch > image ||
	                      image > (UINT64_C(1) << 16) || stride == 0 || stride > 64))
		hf_fail_key(&v, h == 0 || h > (UINT64_C(1) << 20) ? "hidden_size"
		                : L == 0 || L > MP_MAX_LAYERS      ? "num_hidden_layers"
		                : inter == 0 || inter > (UINT64_C(1) << 24) ? "intermediate_size"
		                : ch == 0 || ch > 256                       ? "num_channels"
		                : stride == 0 || stride > 64                ? "hidden_stride"
		                                                            : "patch_size",
		            "the image tower needs hidden_size from 1 to 2^20, num_hidden_layers from 1 to 1024, "
		            "intermediate_size from 1 to 2^24, 1 to 256 channels, hidden_stride from 1 to 64 and a patch_size "
		            "from 1 to image_size (at most 65536)");
	c->st = v.st;
	if (c->st == MP_OK && (top_h == 0 || top_h > (UINT64_C(1) << 20)))
		hf_fail_key(c, "hidden_size", "hidden_size must be from 1 to 2^20 (visual_embeddings_table's width)");
	if (c->st != MP_OK)
		return;
	pos = (image / patch) * (image / patch);
	mp_inventory_root(&m->inv, MP_ROOT_TOWER, "model.vision_tower.transformer.");
	{
		uint64_t conv[4] = {h, ch, patch, patch};

		hf_shape(m, MP_ROOT_TOWER, "embeddings", "patch_embedding.weight", MP_TK_VISION, 0, conv, 4, 1);
	}
	vec(m, MP_ROOT_TOWER, "embeddings", "patch_embedding.bias", MP_TK_VISION, h, 1);
	mat(m, MP_ROOT_TOWER, "embeddings", "position_embedding.weight", MP_TK_VISION, pos, h, 1);
	vec(m, MP_ROOT_TOWER, "embeddings", "rms_norm.weight", MP_TK_VISION, h, 1);
	LIN(m, MP_ROOT_TOWER, attn, "q_proj", MP_TK_VISION, h, h, qkv_bias, L);
	LIN(m, MP_ROOT_TOWER, attn, "k_proj", MP_TK_VISION, h, h, qkv_bias, L);
	LIN(m, MP_ROOT_TOWER, attn, "v_proj", MP_TK_VISION, h, h, qkv_bias, L);
	LIN(m, MP_ROOT_TOWER, attn, "out_proj", MP_TK_VISION, h, h, qkv_bias, L);
	LIN(m, MP_ROOT_TOWER, ffn, "gate_proj", MP_TK_VISION, inter, h, mlp_bias, L);
	LIN(m, MP_ROOT_TOWER, ffn, "up_proj", MP_TK_VISION, inter, h, mlp_bias, L);
	LIN(m, MP_ROOT_TOWER, ffn, "down_proj", MP_TK_VISION, h, inter, mlp_bias, L);
	vec(m, MP_ROOT_TOWER, lay, "rms_norm1.weight", MP_TK_VISION, h, L);
	vec(m, MP_ROOT_TOWER, lay, "rms_norm2.weight", MP_TK_VISION, h, L);
	vec(m, MP_ROOT_TOWER, NULL, "rms_norm.weight", MP_TK_VISION, h, 1);
	mp_inventory_root(&m->inv, MP_ROOT_PROJECTOR, "model.");
	mat(m, MP_ROOT_PROJECTOR, "vision_tower", "head_linear.weight", MP_TK_PROJECTOR, vv - ind, h * stride * stride, 1);
	LN(m, MP_ROOT_PROJECTOR, "vision_tower", "head_norm", MP_TK_PROJECTOR, vv - ind, 1);
	mat(m, MP_ROOT_PROJECTOR, NULL, "visual_embeddings_table.weight", MP_TK_PROJECTOR, vv, top_h, 1);
}

/* ----- MOSS transcribe-diarize ---------------------------------------------------------------------------------------- */

/*
 * MOSS transcribe-diarize (MossTranscribeDiarizeConfig: speech in, text out; tied by default; its own Qwen3 defaults
 * for text_config (1024 wide, 28 layers), so text_config is required): the Whisper-style audio encoder under
 * model.audio_tower. (MossTranscribeDiarizeAudioConfig: d_model 1024, 24 layers of 16 heads, MLP 4096, 80 mel bins,
 * 1500 positions: conv1 over the mel bins and conv2, kernel 3, with biases; the position table; per layer q, v and
 * out_proj with biases, k without, two LayerNorms, fc1 and fc2; a final LayerNorm) and the adaptor under
 * model.multi_modal_projector. (linear_1 from d_model x audio_merge_size and linear_2 to the decoder's width, biased
 * with projector_bias; a LayerNorm with its bias). The audio tower counts with the vision class, as every tower.
 */
void mpm_read_moss_transcribe_diarize(hf_ctx *c, mp_model *m)
{
	char pointer[MP_POINTER_MAX];
	hf_ctx a;
	uint64_t h, L, heads, inter, mel, pos, merge, th;
	bool pbias;
	const char *lay = "layers.{i}", *attn = "layers.{i}.self_attn";

	if (!read_text(c, "qwen3", true, m))
		return;
	m->inv.roots[MP_ROOT_DECODER] = "model.language_model.";
	wrapper_tie(c, m, true);
	if (!hf_sub_config(c, "audio_config", pointer, sizeof(pointer), &a))
		return;
	h = hf_get_u64(&a, KEYS("hidden_size", "d_model"), 1024);
	L = hf_get_u64(&a, KEYS("num_hidden_layers", "encoder_layers"), 24);
	heads = hf_get_u64(&a, KEYS("num_attention_heads", "encoder_attention_heads"), 16);
	inter = hf_get_u64(&a, KEYS("intermediate_size", "encoder_ffn_dim"), 4096);
	mel = hf_get_u64(&a, KEYS("num_mel_bins"), 80);
	pos = hf_get_u64(&a, KEYS("max_source_positions"), 1500);
	if (a.st == MP_OK && (heads == 0 || h % heads != 0))
		hf_fail_key(&a, hf_key_of(&a, KEYS("num_attention_heads", "encoder_attention_heads")),
		            "hidden_size must be a multiple of num_attention_heads (the audio attention raises ValueError)");
	if (a.st == MP_OK && (h == 0 || h > (UINT64_C(1) << 20) || L == 0 || L > MP_MAX_LAYERS || inter == 0 ||
	                      inter > (UINT64_C(1) << 24) || mel == 0 || mel > 4096 || pos == 0 || pos > (UINT64_C(1) << 24)))
		hf_fail_key(&a, h == 0 || h > (UINT64_C(1) << 20) ? "hidden_size"
		                : L == 0 || L > MP_MAX_LAYERS      ? "num_hidden_layers"
		                : inter == 0 || inter > (UINT64_C(1) << 24) ? "intermediate_size"
		                : mel == 0 || mel > 4096                    ? "num_mel_bins"
		                                                            : "max_source_positions",
		            "the audio encoder needs hidden_size from 1 to 2^20, num_hidden_layers from 1 to 1024, "
		            "intermediate_size from 1 to 2^24, 1 to 4096 mel bins and 1 to 2^24 positions");
	c->st = a.st;
	merge = hf_get_u64(c, KEYS("audio_merge_size"), 4);
	pbias = hf_get_bool(c, KEYS("projector_bias"), true);
	if (c->st == MP_OK && (merge == 0 || merge > 1024))
		hf_fail_key(c, "audio_merge_size", "audio_merge_size must be from 1 to 1024 (frames packed per token)");
	if (c->st != MP_OK)
		return;
	th = m->hidden_size;
	mp_inventory_root(&m->inv, MP_ROOT_TOWER, "model.audio_tower.");
	{
		uint64_t c1[3] = {h, mel, 3}, c2[3] = {h, h, 3};

		hf_shape(m, MP_ROOT_TOWER, NULL, "conv1.weight", MP_TK_VISION, 0, c1, 3, 1);
		hf_shape(m, MP_ROOT_TOWER, NULL, "conv2.weight", MP_TK_VISION, 0, c2, 3, 1);
	}
	vec(m, MP_ROOT_TOWER, NULL, "conv1.bias", MP_TK_VISION, h, 1);
	vec(m, MP_ROOT_TOWER, NULL, "conv2.bias", MP_TK_VISION, h, 1);
	mat(m, MP_ROOT_TOWER, NULL, "embed_positions.weight", MP_TK_VISION, pos, h, 1);
	LIN(m, MP_ROOT_TOWER, attn, "q_proj", MP_TK_VISION, h, h, true, L);
	LIN(m, MP_ROOT_TOWER, attn, "k_proj", MP_TK_VISION, h, h, false, L);
	LIN(m, MP_ROOT_TOWER, attn, "v_proj", MP_TK_VISION, h, h, true, L);
	LIN(m, MP_ROOT_TOWER, attn, "out_proj", MP_TK_VISION, h, h, true, L);
	LN(m, MP_ROOT_TOWER, lay, "self_attn_layer_norm", MP_TK_VISION, h, L);
	LIN(m, MP_ROOT_TOWER, lay, "fc1", MP_TK_VISION, inter, h, true, L);
	LIN(m, MP_ROOT_TOWER, lay, "fc2", MP_TK_VISION, h, inter, true, L);
	LN(m, MP_ROOT_TOWER, lay, "final_layer_norm", MP_TK_VISION, h, L);
	LN(m, MP_ROOT_TOWER, NULL, "layer_norm", MP_TK_VISION, h, 1);
	mp_inventory_root(&m->inv, MP_ROOT_PROJECTOR, "model.multi_modal_projector.");
	LIN(m, MP_ROOT_PROJECTOR, NULL, "linear_1", MP_TK_PROJECTOR, th, h * merge, pbias, 1);
	LIN(m, MP_ROOT_PROJECTOR, NULL, "linear_2", MP_TK_PROJECTOR, th, th, pbias, 1);
	LN(m, MP_ROOT_PROJECTOR, NULL, "norm", MP_TK_PROJECTOR, th, 1);
}

/* ----- GIT ------------------------------------------------------------------------------------------------------------- */

/* GIT's decoder (modeling_git.py GitModel: BERT's post-norm layers under git.encoder.layer.{i}: attention.self.query,
 * key, value, attention.output.dense and its LayerNorm, intermediate.dense, output.dense and its LayerNorm; the head
 * output with a bias). */
/* the Llama names with some renamed: a later designated initializer replaces the earlier one (as model/hf_names.c) */
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Winitializer-overrides"
#elif defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
#endif
static const mp_names names_git = {MP_NAMES_LLAMA_FIELDS,
                                   .root = "git.",
                                   .embed = {"embeddings.word_embeddings.weight", NULL},
                                   .positions = {NULL, NULL},
                                   .final_norm = {NULL, NULL},
                                   .lm_head = {"output.weight", "output.bias"},
                                   .layer = "encoder.layer.{i}",
                                   .attn = "encoder.layer.{i}.attention",
                                   .mlp = "encoder.layer.{i}",
                                   .q = {"self.query.weight", "self.query.bias"},
                                   .k = {"self.key.weight", "self.key.bias"},
                                   .v = {"self.value.weight", "self.value.bias"},
                                   .o = {"output.dense.weight", "output.dense.bias"},
                                   .up = {"intermediate.dense.weight", "intermediate.dense.bias"},
                                   .down = {"output.dense.weight", "output.dense.bias"},
                                   .norms = {{"attention.output.LayerNorm.weight", "attention.output.LayerNorm.bias"},
                                             {"output.LayerNorm.weight", "output.LayerNorm.bias"}}};
#if defined(__clang__)
#pragma clang diagnostic pop
#elif defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

/*
 * GIT (GitConfig: vocab 30522, hidden 768, 6 layers, 12 heads, MLP 3072, 1024 learned positions, untied, the decoder's
 * keys at the top; GitVisionConfig: CLIP's tower of 768, 12 layers, 224 px images of 16 px patches): the decoder
 * (names_git; MHA with biases everywhere, a plain GELU MLP, the embeddings' LayerNorm and no final norm; the head
 * output.weight and output.bias at the top), the CLIP tower under git.image_encoder.vision_model. (planner/vision.c),
 * visual_projection (a linear to the decoder's width with a bias, then a LayerNorm) and num_image_with_embedding
 * temporal embeddings [1, 1, tower width]. Image tokens join the sequence as a prefix: the cache is the decoder's.
 */
void mpm_read_git(hf_ctx *c, mp_model *m)
{
	uint64_t h, nimg, dims[2];

	c->names = &names_git;
	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 30522);
	m->hidden_size = hf_get_u64(c, KEYS("hidden_size"), 768);
	m->num_layers = hf_get_u64(c, KEYS("num_hidden_layers"), 6);
	m->num_heads = hf_get_u64(c, KEYS("num_attention_heads"), 12);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 3072);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings"), 1024);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), false);
	nimg = hf_get_u64(c, KEYS("num_image_with_embedding"), 0);
	m->num_kv_heads = m->num_heads;
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_PLAIN;
	m->norm_kind = MP_NORM_LAYER;
	m->norms_per_layer = 2;
	m->final_norm = false;
	m->qkv_bias = m->o_bias = m->mlp_bias = m->lm_head_bias = true;
	snprintf(m->rope_type, sizeof(m->rope_type), "none");
	if (c->st == MP_OK && (m->num_heads == 0 || m->hidden_size % m->num_heads != 0))
		hf_fail_key(c, "num_attention_heads",
		            "hidden_size must be a multiple of num_attention_heads (GitSelfAttention raises ValueError)");
	if (c->st == MP_OK && (m->max_position_embeddings == 0 || m->max_position_embeddings > (UINT64_C(1) << 24)))
		hf_fail_key(c, "max_position_embeddings", "max_position_embeddings must be from 1 to 2^24");
	if (c->st == MP_OK && nimg > 1024)
		hf_fail_key(c, "num_image_with_embedding", "num_image_with_embedding must be at most 1024");
	if (c->st != MP_OK)
		return;
	m->head_dim = m->hidden_size / m->num_heads;
	m->learned_position_embeddings = m->max_position_embeddings;
	dims[0] = m->max_position_embeddings;
	dims[1] = m->hidden_size;
	hf_shape(m, MP_ROOT_DECODER, "embeddings", "position_embeddings.weight", MP_TK_EMBEDDING, MP_TF_POSITIONS, dims, 2,
	         1);
	hf_tensor(m, MP_ROOT_DECODER, "embeddings", "LayerNorm.weight", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
	          m->hidden_size, 1);
	hf_tensor(m, MP_ROOT_DECODER, "embeddings", "LayerNorm.bias", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
	          m->hidden_size, 1);
	h = hf_clip_vision(c, KEYS("hidden_size"), &(hf_clip_shape){768, 3072, 12, 12, 224, 16}, "git.image_encoder.vision_model.",
	                   "git.", m);
	if (c->st != MP_OK)
		return;
	mp_inventory_root(&m->inv, MP_ROOT_PROJECTOR, "git.");
	LIN(m, MP_ROOT_PROJECTOR, "visual_projection.visual_projection", "0", MP_TK_PROJECTOR, m->hidden_size, h, true, 1);
	LN(m, MP_ROOT_PROJECTOR, "visual_projection.visual_projection", "1", MP_TK_PROJECTOR, m->hidden_size, 1);
	if (nimg) {
		uint64_t te[3] = {1, 1, h};

		hf_shape(m, MP_ROOT_PROJECTOR, NULL, "img_temporal_embedding.{i}", MP_TK_PROJECTOR, 0, te, 3, nimg);
	}
}

/* ----- Nemotron 3 Nano Omni --------------------------------------------------------------------------------------- */

/* x of a sub-config as a double in (lo, hi], else the 422 naming it (what: the rule, one clause). */
static double ratio_in(hf_ctx *c, const char *key, double dflt, double lo, double hi, const char *what)
{
	double r = hf_get_double(c, c->cfg, key, dflt);

	if (c->st == MP_OK && !(r > lo && r <= hi))
		hf_fail_key(c, key, what);
	return r;
}

/*
 * RadioModel (modeling_radio.py; RadioConfig: hidden 1280, 32 layers of 16 heads, mlp_ratio 4.0, GELU MLP or, with
 * use_swiglu_ffn, a biased SwiGLU, qkv_bias, 3 channels, 16 px patches, max_img_size 2048, 3 class tokens and 7
 * registers, summary_idxs [0, 1]) under vision_model.: the CPE patch generator (patch_projection from channels x patch^2
 * and, with video_temporal_patch_size T, video_patch_projection from T x that, both without bias; position_embedding
 * [1, (max_img_size / patch)^2, hidden]; cls_register_token [cls + registers, hidden]); per block norm1 and norm2
 * (LayerNorms), q, k, v (heads x head_dim, qkv_bias) and o_proj (always biased), layer_scale1 and layer_scale2
 * (lambda1 [hidden]), the MLP (fc1 and fc2 of int(hidden x mlp_ratio), biased); summary_idxs an int64 buffer. The input
 * conditioner's norm_mean and norm_std are made external by the wrapper (not in its state_dict). video: the wrapper's
 * video_temporal_patch_size, which the tower's must equal (2 when vision_config is absent, else stated). Returns the
 * tower's width (0 on error).
 */
static uint64_t radio_tower(hf_ctx *c, uint64_t video, mp_model *m)
{
	char pointer[MP_POINTER_MAX];
	hf_ctx v;
	uint64_t h, L, heads, hd, inter, ch, patch, maxi, cls, regs, n_sum, tv;
	bool qkv_bias, swiglu;
	double ratio;
	const cJSON *si;
	const char *lay = "encoder.layer.{i}", *attn = "encoder.layer.{i}.attention", *mlp = "encoder.layer.{i}.mlp";

	if (!hf_sub_config(c, "vision_config", pointer, sizeof(pointer), &v))
		return 0;
	h = hf_get_u64(&v, KEYS("hidden_size"), 1280);
	L = hf_get_u64(&v, KEYS("num_hidden_layers"), 32);
	heads = hf_get_u64(&v, KEYS("num_attention_heads"), 16);
	hd = heads ? hf_get_u64(&v, KEYS("head_dim"), h / heads) : 0;
	ratio = ratio_in(&v, "mlp_ratio", 4.0, 0.0, 1024.0, "mlp_ratio must be above 0 and at most 1024");
	ch = hf_get_u64(&v, KEYS("num_channels"), 3);
	patch = hf_get_u64(&v, KEYS("patch_size"), 16);
	maxi = hf_get_u64(&v, KEYS("max_img_size"), 2048);
	cls = hf_get_u64(&v, KEYS("num_cls_tokens"), 3);
	regs = hf_get_u64(&v, KEYS("num_registers"), 7);
	qkv_bias = hf_get_bool(&v, KEYS("qkv_bias"), true);
	swiglu = hf_get_bool(&v, KEYS("use_swiglu_ffn"), false);
	/* absent from a vision_config that is given, it is None (RadioConfig's default; the wrapper's SubConfigSpec gives
	 * 2 only to the vision_config it makes itself), which the wrapper's check refuses */
	tv = v.cfg ? hf_get_u64(&v, KEYS("video_temporal_patch_size"), 0) : 2;
	si = v.cfg ? cJSON_GetObjectItemCaseSensitive(v.cfg, "summary_idxs") : NULL;
	n_sum = cJSON_IsArray(si) ? (uint64_t)cJSON_GetArraySize(si) : 2;
	inter = (uint64_t)((double)h * ratio);
	if (v.st == MP_OK && (h == 0 || h > (UINT64_C(1) << 20) || L == 0 || L > MP_MAX_LAYERS || heads == 0 ||
	                      heads * hd == 0 || hd > (UINT64_C(1) << 16) || inter == 0 || inter > (UINT64_C(1) << 24) ||
	                      ch == 0 || ch > 64 || patch == 0 || patch > maxi || maxi > (UINT64_C(1) << 16)))
		hf_fail_key(&v, h == 0 || h > (UINT64_C(1) << 20) ? "hidden_size"
		                : L == 0 || L > MP_MAX_LAYERS      ? "num_hidden_layers"
		                : heads == 0 || heads * hd == 0 || hd > (UINT64_C(1) << 16) ? "num_attention_heads"
		                : inter == 0 || inter > (UINT64_C(1) << 24)                 ? "mlp_ratio"
		                : ch == 0 || ch > 64                                         ? "num_channels"
		                                                                             : "patch_size",
		            "the RADIO tower needs hidden_size from 1 to 2^20, 1 to 1024 layers, heads x head_dim above 0, "
		            "int(hidden_size x mlp_ratio) from 1 to 2^24, 1 to 64 channels and a patch_size from 1 to "
		            "max_img_size (at most 65536)");
	if (v.st == MP_OK && tv != video)
		hf_fail_key(&v, "video_temporal_patch_size",
		            "video_temporal_patch_size must be given and equal the wrapper's (NemotronH_Omni_Reasoning_V3_"
		            "Config.validate_architecture raises ValueError otherwise; a vision_config that leaves it out "
		            "has None)");
	c->st = v.st;
	if (c->st != MP_OK)
		return 0;
	mp_inventory_root(&m->inv, MP_ROOT_TOWER, "vision_model.");
	{
		uint64_t pos[3] = {1, (maxi / patch) * (maxi / patch), h}, tok[2] = {cls + regs, h}, idx[1] = {n_sum};

		hf_shape(m, MP_ROOT_TOWER, NULL, "embeddings.position_embedding", MP_TK_VISION, 0, pos, 3, 1);
		hf_shape(m, MP_ROOT_TOWER, NULL, "embeddings.cls_register_token", MP_TK_VISION, 0, tok, 2, 1);
		hf_shape(m, MP_ROOT_TOWER, NULL, "summary_idxs", MP_TK_VISION, MP_TF_BUFFER | MP_TF_INT64, idx, 1, 1);
	}
	mat(m, MP_ROOT_TOWER, NULL, "embeddings.patch_projection.weight", MP_TK_VISION, h, ch * patch * patch, 1);
	if (video)
		mat(m, MP_ROOT_TOWER, NULL, "embeddings.video_patch_projection.weight", MP_TK_VISION, h,
		    video * ch * patch * patch, 1);
	LN(m, MP_ROOT_TOWER, lay, "norm1", MP_TK_VISION, h, L);
	LIN(m, MP_ROOT_TOWER, attn, "q_proj", MP_TK_VISION, heads * hd, h, qkv_bias, L);
	LIN(m, MP_ROOT_TOWER, attn, "k_proj", MP_TK_VISION, heads * hd, h, qkv_bias, L);
	LIN(m, MP_ROOT_TOWER, attn, "v_proj", MP_TK_VISION, heads * hd, h, qkv_bias, L);
	LIN(m, MP_ROOT_TOWER, attn, "o_proj", MP_TK_VISION, h, heads * hd, true, L);
	vec(m, MP_ROOT_TOWER, lay, "layer_scale1.lambda1", MP_TK_VISION, h, L);
	LN(m, MP_ROOT_TOWER, lay, "norm2", MP_TK_VISION, h, L);
	if (swiglu) {
		LIN(m, MP_ROOT_TOWER, mlp, "gate_proj", MP_TK_VISION, inter, h, true, L);
		LIN(m, MP_ROOT_TOWER, mlp, "up_proj", MP_TK_VISION, inter, h, true, L);
		LIN(m, MP_ROOT_TOWER, mlp, "down_proj", MP_TK_VISION, h, inter, true, L);
	} else {
		LIN(m, MP_ROOT_TOWER, mlp, "fc1", MP_TK_VISION, inter, h, true, L);
		LIN(m, MP_ROOT_TOWER, mlp, "fc2", MP_TK_VISION, h, inter, true, L);
	}
	vec(m, MP_ROOT_TOWER, lay, "layer_scale2.lambda1", MP_TK_VISION, h, L);
	return h;
}

/* NemotronH_Omni_Reasoning_V3MultiModalProjector at root `path` (static, under root): an RMSNorm of `in` (weight
 * only), linear_1 (in -> mid) and linear_2 (mid -> out), biased with bias; ReLU^2 between them. */
static void omni_projector(mp_model *m, uint8_t root, const char *path, uint64_t in, uint64_t mid, uint64_t out,
                           bool bias)
{
	vec(m, root, path, "layer_norm.weight", MP_TK_PROJECTOR, in, 1);
	LIN(m, root, path, "linear_1", MP_TK_PROJECTOR, mid, in, bias, 1);
	LIN(m, root, path, "linear_2", MP_TK_PROJECTOR, out, mid, bias, 1);
}

/*
 * NeMo's Conv2d subsampling of a speech encoder's features (ParakeetEncoderSubsamplingConv2D, Phi-4-multimodal's
 * Phi4MultimodalAudioNemoConvSubsampling), the convolutions of the ModuleList or Sequential at path (static, "{i}"
 * its index): one Conv2d from 1 channel to chans (kernel x kernel), then n - 1 pairs of a depthwise Conv2d (the same
 * shape: [chans, 1, kernel, kernel]) and a 1x1 Conv2d [chans, chans, 1, 1], every one with a bias.
 */
static void conv_subsampling(mp_model *m, uint8_t root, const char *path, uint64_t chans, uint64_t kernel, uint64_t n)
{
	uint64_t first[4] = {chans, 1, kernel, kernel}, pw[4] = {chans, chans, 1, 1};

	hf_shape(m, root, path, "weight", MP_TK_VISION, 0, first, 4, n);
	hf_shape(m, root, path, "weight", MP_TK_VISION, 0, pw, 4, n - 1);
	vec(m, root, path, "bias", MP_TK_VISION, chans, 2 * n - 1);
}

/* int(math.log2(f)) for f >= 1 (the subsampling's stride-2 stages) */
static uint64_t log2_floor(uint64_t f)
{
	uint64_t n = 0;

	for (; f >= 2; f /= 2)
		n++;
	return n;
}

/*
 * ParakeetEncoder (modeling_parakeet.py; ParakeetEncoderConfig: hidden 1024, 24 layers of 8 heads (as many KV heads),
 * MLP 4096, conv_kernel_size 9, subsampling_factor 8 of subsampling_conv_channels 256, kernel 3 and stride 2, 80 mel
 * bins; attention_bias and convolution_bias, which the Omni config turns off and keeps on by default) under
 * audio_tower.: the subsampling (one Conv2d from 1 channel, then log2(factor) - 1 pairs of a depthwise and a 1x1
 * Conv2d, all biased, and a biased linear from channels x (mel // stride^log2(factor))); per conformer block two
 * feed-forwards (linear1, linear2), the relative-position attention (q, k, v, o with attention_bias, relative_k_proj
 * without, bias_u and bias_v [heads, head_dim]), the convolution module (pointwise_conv1 to 2 x hidden, the depthwise
 * conv of conv_kernel_size, BatchNorm1d with its running statistics and num_batches_tracked buffers,
 * pointwise_conv2), five LayerNorms. Then embed_audio, the projector from the encoder's width through
 * projection_hidden_size (both keys the wrapper reads from audio_config, required: transformers 5.24 raises
 * AttributeError without them).
 */
static void parakeet_tower(hf_ctx *c, const char *key, uint64_t text_h, mp_model *m)
{
	char pointer[MP_POINTER_MAX];
	hf_ctx a;
	uint64_t h, L, heads, hd, inter, kernel, factor, chans, mel, sk, stride, n_sub, out_len, pj;
	bool abias, cbias, pbias;
	const char *lay = "audio_tower.layers.{i}", *attn = "audio_tower.layers.{i}.self_attn",
	           *conv = "audio_tower.layers.{i}.conv", *sub = "audio_tower.subsampling.layers.{i}";

	if (!hf_sub_config(c, key, pointer, sizeof(pointer), &a) || a.cfg == NULL)
		return;
	h = hf_get_u64(&a, KEYS("hidden_size"), 1024);
	L = hf_get_u64(&a, KEYS("num_hidden_layers"), 24);
	heads = hf_get_u64(&a, KEYS("num_attention_heads"), 8);
	hd = heads ? hf_get_u64(&a, KEYS("head_dim"), h / heads) : 0;
	inter = hf_get_u64(&a, KEYS("intermediate_size"), 4096);
	kernel = hf_get_u64(&a, KEYS("conv_kernel_size"), 9);
	factor = hf_get_u64(&a, KEYS("subsampling_factor"), 8);
	chans = hf_get_u64(&a, KEYS("subsampling_conv_channels"), 256);
	mel = hf_get_u64(&a, KEYS("num_mel_bins"), 80);
	sk = hf_get_u64(&a, KEYS("subsampling_conv_kernel_size"), 3);
	stride = hf_get_u64(&a, KEYS("subsampling_conv_stride"), 2);
	abias = hf_get_bool(&a, KEYS("attention_bias"), false);
	cbias = hf_get_bool(&a, KEYS("convolution_bias"), true);
	pbias = hf_get_bool(&a, KEYS("projection_bias"), false);
	pj = hf_get_u64(&a, KEYS("projection_hidden_size"), 0);
	n_sub = log2_floor(factor);
	out_len = mel;
	for (uint64_t i = 0; i < n_sub && stride > 1 && out_len; i++)
		out_len /= stride;
	if (a.st == MP_OK && (!hf_has(&a, "projection_hidden_size") || !hf_has(&a, "projection_bias")))
		hf_fail_key(&a, hf_has(&a, "projection_hidden_size") ? "projection_bias" : "projection_hidden_size",
		            "audio_config needs projection_hidden_size and projection_bias (embed_audio's width and bias: "
		            "transformers 5.24 raises AttributeError without them)");
	if (a.st == MP_OK && (h == 0 || h > (UINT64_C(1) << 20) || L == 0 || L > MP_MAX_LAYERS || heads == 0 ||
	                      heads * hd == 0 || hd > (UINT64_C(1) << 16) || inter == 0 || inter > (UINT64_C(1) << 24) ||
	                      kernel == 0 || kernel > 1024 || factor < 2 || factor > 1024 || chans == 0 || chans > 65536 ||
	                      mel == 0 || mel > 4096 || sk == 0 || sk > 64 || stride == 0 || stride > 64 || out_len == 0 ||
	                      pj == 0 || pj > (UINT64_C(1) << 24)))
		hf_fail_key(&a, h == 0 || h > (UINT64_C(1) << 20) ? "hidden_size"
		                : L == 0 || L > MP_MAX_LAYERS      ? "num_hidden_layers"
		                : heads == 0 || heads * hd == 0 || hd > (UINT64_C(1) << 16) ? "num_attention_heads"
		                : inter == 0 || inter > (UINT64_C(1) << 24)                 ? "intermediate_size"
		                : kernel == 0 || kernel > 1024                              ? "conv_kernel_size"
		                : factor < 2 || factor > 1024                               ? "subsampling_factor"
		                : chans == 0 || chans > 65536                               ? "subsampling_conv_channels"
		                : sk == 0 || sk > 64                                        ? "subsampling_conv_kernel_size"
		                : stride == 0 || stride > 64                                ? "subsampling_conv_stride"
		                : out_len == 0                                              ? "num_mel_bins"
		                                                                            : "projection_hidden_size",
		            "the Parakeet encoder needs hidden_size from 1 to 2^20, 1 to 1024 layers, heads x head_dim above "
		            "0, intermediate_size and projection_hidden_size from 1 to 2^24, a subsampling_factor from 2 to "
		            "1024, kernels and strides from 1 to 64, and num_mel_bins of at least stride^log2(factor)");
	c->st = a.st;
	if (c->st != MP_OK)
		return;
	{
		uint64_t pc1[3] = {2 * h, h, 1}, dw[3] = {h, 1, kernel}, pc2[3] = {h, h, 1}, bu[2] = {heads, hd};

		conv_subsampling(m, MP_ROOT_EXTRA, sub, chans, sk, n_sub);
		LIN(m, MP_ROOT_EXTRA, "audio_tower.subsampling", "linear", MP_TK_VISION, h, chans * out_len, true, 1);
		LIN(m, MP_ROOT_EXTRA, lay, "feed_forward1.linear1", MP_TK_VISION, inter, h, abias, L);
		LIN(m, MP_ROOT_EXTRA, lay, "feed_forward1.linear2", MP_TK_VISION, h, inter, abias, L);
		LIN(m, MP_ROOT_EXTRA, lay, "feed_forward2.linear1", MP_TK_VISION, inter, h, abias, L);
		LIN(m, MP_ROOT_EXTRA, lay, "feed_forward2.linear2", MP_TK_VISION, h, inter, abias, L);
		hf_shape(m, MP_ROOT_EXTRA, attn, "bias_u", MP_TK_VISION, 0, bu, 2, L);
		hf_shape(m, MP_ROOT_EXTRA, attn, "bias_v", MP_TK_VISION, 0, bu, 2, L);
		LIN(m, MP_ROOT_EXTRA, attn, "q_proj", MP_TK_VISION, heads * hd, h, abias, L);
		LIN(m, MP_ROOT_EXTRA, attn, "k_proj", MP_TK_VISION, heads * hd, h, abias, L);
		LIN(m, MP_ROOT_EXTRA, attn, "v_proj", MP_TK_VISION, heads * hd, h, abias, L);
		LIN(m, MP_ROOT_EXTRA, attn, "o_proj", MP_TK_VISION, h, heads * hd, abias, L);
		LIN(m, MP_ROOT_EXTRA, attn, "relative_k_proj", MP_TK_VISION, heads * hd, h, false, L);
		hf_shape(m, MP_ROOT_EXTRA, conv, "pointwise_conv1.weight", MP_TK_VISION, 0, pc1, 3, L);
		hf_shape(m, MP_ROOT_EXTRA, conv, "depthwise_conv.weight", MP_TK_VISION, 0, dw, 3, L);
		hf_shape(m, MP_ROOT_EXTRA, conv, "pointwise_conv2.weight", MP_TK_VISION, 0, pc2, 3, L);
		if (cbias) {
			vec(m, MP_ROOT_EXTRA, conv, "pointwise_conv1.bias", MP_TK_VISION, 2 * h, L);
			vec(m, MP_ROOT_EXTRA, conv, "depthwise_conv.bias", MP_TK_VISION, h, L);
			vec(m, MP_ROOT_EXTRA, conv, "pointwise_conv2.bias", MP_TK_VISION, h, L);
		}
		LN(m, MP_ROOT_EXTRA, conv, "norm", MP_TK_VISION, h, L);
		hf_shape(m, MP_ROOT_EXTRA, conv, "norm.running_mean", MP_TK_VISION, MP_TF_BUFFER, &h, 1, L);
		hf_shape(m, MP_ROOT_EXTRA, conv, "norm.running_var", MP_TK_VISION, MP_TF_BUFFER, &h, 1, L);
		hf_shape(m, MP_ROOT_EXTRA, conv, "norm.num_batches_tracked", MP_TK_VISION, MP_TF_BUFFER | MP_TF_INT64, NULL,
		         0, L);
		LN(m, MP_ROOT_EXTRA, lay, "norm_feed_forward1", MP_TK_VISION, h, L);
		LN(m, MP_ROOT_EXTRA, lay, "norm_self_att", MP_TK_VISION, h, L);
		LN(m, MP_ROOT_EXTRA, lay, "norm_conv", MP_TK_VISION, h, L);
		LN(m, MP_ROOT_EXTRA, lay, "norm_feed_forward2", MP_TK_VISION, h, L);
		LN(m, MP_ROOT_EXTRA, lay, "norm_out", MP_TK_VISION, h, L);
	}
	omni_projector(m, MP_ROOT_EXTRA, "embed_audio", h, pj, text_h, pbias);
}

/*
 * Nemotron 3 Nano Omni (NemotronH_Omni_Reasoning_V3_Config, modeling_nemotron_h_omni.py): a Nemotron-H decoder
 * (text_config, NemotronHConfig's defaults) under language_model. (NemotronHForCausalLM whole: language_model.model.
 * and language_model.lm_head, never tied), the RADIO tower under vision_model. (radio_tower), a vision_final_layernorm
 * (a LayerNorm of vision_hidden_size) only when the decoder has MTP layers (text_config.num_nextn_predict_layers > 0),
 * multi_modal_projector (omni_projector: from vision_hidden_size x int(1 / downsample_ratio)^2, the pixel-shuffled
 * features, through projector_hidden_size 4096 to the decoder's width, no biases), and with an audio_config (the
 * published checkpoint's sound_config) the Parakeet encoder and embed_audio (parakeet_tower). The released checkpoints'
 * key spellings (llm_config, vit_hidden_size, sound_config) are read as the new ones. vision_hidden_size must be the
 * tower's width (the projector reads its features). The KV and Mamba caches are the decoder's alone.
 */
void mpm_read_nemotron_h_omni(hf_ctx *c, mp_model *m)
{
	uint64_t vh, vhs, video, phs, shuffle, mtp = 0;
	double ratio;
	const cJSON *tc;

	/* the released checkpoints' spellings, taken where the new key is absent (NemotronH_Omni_Reasoning_V3_Config's
	 * _legacy_field_names: a legacy value is taken while the new field is at its default) */
	const char *text_key = !hf_has(c, "text_config") && hf_has(c, "llm_config") ? "llm_config" : "text_config";

	tc = cJSON_GetObjectItemCaseSensitive(c->cfg, text_key);
	if (!read_text_key(c, text_key, "nemotron_h", NULL, false, m))
		return;
	if (cJSON_IsObject(tc)) {
		hf_ctx t = {tc, m->json_pointer, c->err, c->st, NULL, NULL, c->decode_type};

		mtp = hf_get_u64(&t, KEYS("num_nextn_predict_layers"), 0);
		c->st = t.st;
	}
	m->inv.roots[MP_ROOT_TOP] = "language_model.";
	m->inv.roots[MP_ROOT_DECODER] = "language_model.model.";
	mp_inventory_root(&m->inv, MP_ROOT_PROJECTOR, "multi_modal_projector.");
	mp_inventory_root(&m->inv, MP_ROOT_EXTRA, "");
	video = hf_get_u64(c, KEYS("video_temporal_patch_size"), 2);
	vhs = hf_get_u64(c, KEYS("vision_hidden_size"), 1280);
	if (vhs == 1280 && hf_has(c, "vit_hidden_size"))
		vhs = hf_get_u64(c, KEYS("vit_hidden_size"), 1280);
	phs = hf_get_u64(c, KEYS("projector_hidden_size"), 4096);
	ratio = ratio_in(c, "downsample_ratio", 0.5, 0.0, 1.0, "downsample_ratio must be above 0 and at most 1 (the pixel "
	                                                       "shuffle keeps int(1 / ratio)^2 patches per token)");
	if (c->st == MP_OK && (video < 2 || video > 64))
		hf_fail_key(c, "video_temporal_patch_size",
		            "video_temporal_patch_size must be from 2 to 64 (RadioConfig refuses less than 2)");
	if (c->st == MP_OK && (phs == 0 || phs > (UINT64_C(1) << 24)))
		hf_fail_key(c, "projector_hidden_size", "projector_hidden_size must be from 1 to 2^24");
	if (c->st != MP_OK)
		return;
	shuffle = (uint64_t)(1.0 / ratio);
	vh = radio_tower(c, video, m);
	if (c->st == MP_OK && vhs != vh)
		hf_fail_key(c, hf_has(c, "vit_hidden_size") && !hf_has(c, "vision_hidden_size") ? "vit_hidden_size"
		                                                                                : "vision_hidden_size",
		            "vision_hidden_size must be vision_config's hidden_size (the projector reads the tower's "
		            "features; transformers builds it from this key and its forward fails)");
	if (c->st != MP_OK)
		return;
	if (mtp)
		LN(m, MP_ROOT_EXTRA, NULL, "vision_final_layernorm", MP_TK_PROJECTOR, vhs, 1);
	omni_projector(m, MP_ROOT_PROJECTOR, NULL, vhs * shuffle * shuffle, phs, m->hidden_size, false);
	parakeet_tower(c, !hf_has(c, "audio_config") && hf_has(c, "sound_config") ? "sound_config" : "audio_config",
	               m->hidden_size, m);
}

/* ----- Phi-4-multimodal ------------------------------------------------------------------------------------------- */

/* Phi4MultimodalVisionConfig: hidden 1152, MLP 4304, 27 layers, 16 heads, 448 px images of 14 px patches; the
 * attention-pooling head always built */
static const siglip_spec phi4mm_vision = {"phi4_multimodal_vision", 1152, 4304, 27, 16, 448, 14, false};

/*
 * Phi4MultimodalAudioModel (modeling_phi4_multimodal.py; Phi4MultimodalAudioConfig: hidden 1024, MLP 1536, 24 blocks
 * of 16 heads, ext_pw_out_channel 1024, depthwise_separable_out_channel 1024, depthwise_multiplier 1, kernel_size 3,
 * input_size 80 mel bins, time_reduction 8, bias_max_distance 1000, bias_symmetric False, nemo_conv_channels 1024,
 * downsample_rate 1) under model.embed_tokens_extend.audio_embed.: encoder_embedding's global_mean and global_invstd
 * buffers [input_size]; the NeMo subsampling (conv_subsampling, kernel 3, log2(time_reduction) stages) and its out
 * linear from nemo_conv_channels x nemo_final_size (input_size halved, rounding up, once per stage); the relative
 * attention bias table [max_distance (x 2 unless symmetric), heads]; per conformer block feed_forward_in and
 * feed_forward_out (a LayerNorm, gate_up_proj to 2 x MLP and down_proj, biased), q, k, v, o with biases, the conv
 * module (a LayerNorm; the GLU's ext_pw_conv_1d to 2 x ext_pw_out_channel, b1 and b2 [1, ext_pw_out_channel, 1];
 * dw_sep_conv_1d's depthwise conv to hidden x multiplier and pointwise conv to depthwise_separable_out_channel;
 * ext_pw_conv_1d to ext_pw_out_channel; all biased), layer_norm_att and layer_norm. Then the four projections to the
 * decoder's width (up_proj and down_proj for speech and for vision-speech, biased; up from hidden x
 * downsample_rate).
 */
static void phi4mm_audio(hf_ctx *c, uint64_t th, mp_model *m)
{
	char pointer[MP_POINTER_MAX];
	hf_ctx a;
	uint64_t h, inter, L, heads, hd, ext, dso, mult, k, in, tr, dist, chans, rate, n, fin;
	bool sym;
	const char *enc = "encoder.encoders.{i}", *ffi = "encoder.encoders.{i}.feed_forward_in",
	           *ffo = "encoder.encoders.{i}.feed_forward_out", *attn = "encoder.encoders.{i}.self_attn",
	           *conv = "encoder.encoders.{i}.conv";

	if (!hf_sub_config(c, "audio_config", pointer, sizeof(pointer), &a))
		return;
	h = hf_get_u64(&a, KEYS("hidden_size"), 1024);
	inter = hf_get_u64(&a, KEYS("intermediate_size"), 1536);
	L = hf_get_u64(&a, KEYS("num_blocks"), 24);
	heads = hf_get_u64(&a, KEYS("num_attention_heads"), 16);
	hd = heads ? hf_get_u64(&a, KEYS("head_dim"), h / heads) : 0;
	ext = hf_get_u64(&a, KEYS("ext_pw_out_channel"), 1024);
	dso = hf_get_u64(&a, KEYS("depthwise_separable_out_channel"), 1024);
	mult = hf_get_u64(&a, KEYS("depthwise_multiplier"), 1);
	k = hf_get_u64(&a, KEYS("kernel_size"), 3);
	in = hf_get_u64(&a, KEYS("input_size"), 80);
	tr = hf_get_u64(&a, KEYS("time_reduction"), 8);
	dist = hf_get_u64(&a, KEYS("bias_max_distance"), 1000);
	sym = hf_get_bool(&a, KEYS("bias_symmetric"), false);
	chans = hf_get_u64(&a, KEYS("nemo_conv_channels"), 1024);
	rate = hf_get_u64(&a, KEYS("downsample_rate"), 1);
	if (a.st == MP_OK && (tr == 0 || tr % 2 != 0 || tr > 1024))
		hf_fail_key(&a, "time_reduction",
		            "time_reduction must be an even number from 2 to 1024 (Phi4MultimodalAudioConfig raises "
		            "ValueError otherwise)");
	if (a.st == MP_OK && (h == 0 || h > (UINT64_C(1) << 20) || L == 0 || L > MP_MAX_LAYERS || heads == 0 ||
	                      heads * hd == 0 || hd > (UINT64_C(1) << 16) || inter == 0 || inter > (UINT64_C(1) << 24) ||
	                      ext == 0 || ext > (UINT64_C(1) << 20) || dso == 0 || dso > (UINT64_C(1) << 20) || mult == 0 ||
	                      mult > 64 || k == 0 || k > 1024 || in == 0 || in > 4096 || dist == 0 ||
	                      dist > (UINT64_C(1) << 20) || chans == 0 || chans > 65536 || rate == 0 || rate > 64))
		hf_fail_key(&a, h == 0 || h > (UINT64_C(1) << 20) ? "hidden_size"
		                : L == 0 || L > MP_MAX_LAYERS      ? "num_blocks"
		                : heads == 0 || heads * hd == 0 || hd > (UINT64_C(1) << 16) ? "num_attention_heads"
		                : inter == 0 || inter > (UINT64_C(1) << 24)                 ? "intermediate_size"
		                : ext == 0 || ext > (UINT64_C(1) << 20)                     ? "ext_pw_out_channel"
		                : dso == 0 || dso > (UINT64_C(1) << 20) ? "depthwise_separable_out_channel"
		                : mult == 0 || mult > 64                ? "depthwise_multiplier"
		                : k == 0 || k > 1024                    ? "kernel_size"
		                : in == 0 || in > 4096                  ? "input_size"
		                : dist == 0 || dist > (UINT64_C(1) << 20) ? "bias_max_distance"
		                : chans == 0 || chans > 65536             ? "nemo_conv_channels"
		                                                          : "downsample_rate",
		            "the Phi-4-multimodal audio encoder needs hidden_size from 1 to 2^20, 1 to 1024 blocks, heads x "
		            "head_dim above 0, widths from 1 to 2^20 (2^24 for intermediate_size), a depthwise_multiplier and "
		            "downsample_rate from 1 to 64, a kernel_size from 1 to 1024, 1 to 4096 input features and 1 to "
		            "65536 conv channels");
	c->st = a.st;
	if (c->st != MP_OK)
		return;
	n = log2_floor(tr);
	fin = in;
	for (uint64_t i = 0; i < n; i++)
		fin = (fin + 1) / 2; /* math.floor((f - 1) / 2 + 1) */
	mp_inventory_root(&m->inv, MP_ROOT_EXTRA, "model.embed_tokens_extend.audio_embed.");
	{
		uint64_t glu[3] = {2 * ext, h, 1}, b1[3] = {1, ext, 1}, dw[3] = {h * mult, 1, k}, pw[3] = {dso, h * mult, 1},
		         epw[3] = {ext, h, 1};

		hf_shape(m, MP_ROOT_EXTRA, "encoder.encoder_embedding", "global_mean", MP_TK_VISION, MP_TF_BUFFER, &in, 1, 1);
		hf_shape(m, MP_ROOT_EXTRA, "encoder.encoder_embedding", "global_invstd", MP_TK_VISION, MP_TF_BUFFER, &in, 1,
		         1);
		conv_subsampling(m, MP_ROOT_EXTRA, "encoder.embed.conv.{i}", chans, 3, n);
		LIN(m, MP_ROOT_EXTRA, "encoder.embed", "out", MP_TK_VISION, h, chans * fin, true, 1);
		mat(m, MP_ROOT_EXTRA, "encoder.relative_attention_bias_layer", "bias_values.weight", MP_TK_VISION,
		    sym ? dist : 2 * dist, heads, 1);
		LN(m, MP_ROOT_EXTRA, ffi, "layer_norm", MP_TK_VISION, h, L);
		LIN(m, MP_ROOT_EXTRA, ffi, "gate_up_proj", MP_TK_VISION, 2 * inter, h, true, L);
		LIN(m, MP_ROOT_EXTRA, ffi, "down_proj", MP_TK_VISION, h, inter, true, L);
		LN(m, MP_ROOT_EXTRA, ffo, "layer_norm", MP_TK_VISION, h, L);
		LIN(m, MP_ROOT_EXTRA, ffo, "gate_up_proj", MP_TK_VISION, 2 * inter, h, true, L);
		LIN(m, MP_ROOT_EXTRA, ffo, "down_proj", MP_TK_VISION, h, inter, true, L);
		LIN(m, MP_ROOT_EXTRA, attn, "q_proj", MP_TK_VISION, heads * hd, h, true, L);
		LIN(m, MP_ROOT_EXTRA, attn, "k_proj", MP_TK_VISION, heads * hd, h, true, L);
		LIN(m, MP_ROOT_EXTRA, attn, "v_proj", MP_TK_VISION, heads * hd, h, true, L);
		LIN(m, MP_ROOT_EXTRA, attn, "o_proj", MP_TK_VISION, h, heads * hd, true, L);
		LN(m, MP_ROOT_EXTRA, conv, "layer_norm", MP_TK_VISION, h, L);
		hf_shape(m, MP_ROOT_EXTRA, conv, "glu.ext_pw_conv_1d.weight", MP_TK_VISION, 0, glu, 3, L);
		vec(m, MP_ROOT_EXTRA, conv, "glu.ext_pw_conv_1d.bias", MP_TK_VISION, 2 * ext, L);
		hf_shape(m, MP_ROOT_EXTRA, conv, "glu.b1", MP_TK_VISION, 0, b1, 3, L);
		hf_shape(m, MP_ROOT_EXTRA, conv, "glu.b2", MP_TK_VISION, 0, b1, 3, L);
		hf_shape(m, MP_ROOT_EXTRA, conv, "dw_sep_conv_1d.dw_conv.weight", MP_TK_VISION, 0, dw, 3, L);
		vec(m, MP_ROOT_EXTRA, conv, "dw_sep_conv_1d.dw_conv.bias", MP_TK_VISION, h * mult, L);
		hf_shape(m, MP_ROOT_EXTRA, conv, "dw_sep_conv_1d.pw_conv.weight", MP_TK_VISION, 0, pw, 3, L);
		vec(m, MP_ROOT_EXTRA, conv, "dw_sep_conv_1d.pw_conv.bias", MP_TK_VISION, dso, L);
		hf_shape(m, MP_ROOT_EXTRA, conv, "ext_pw_conv_1d.weight", MP_TK_VISION, 0, epw, 3, L);
		vec(m, MP_ROOT_EXTRA, conv, "ext_pw_conv_1d.bias", MP_TK_VISION, ext, L);
		LN(m, MP_ROOT_EXTRA, enc, "layer_norm_att", MP_TK_VISION, h, L);
		LN(m, MP_ROOT_EXTRA, enc, "layer_norm", MP_TK_VISION, h, L);
	}
	LIN(m, MP_ROOT_EXTRA, NULL, "up_proj_for_speech", MP_TK_PROJECTOR, th, h * rate, true, 1);
	LIN(m, MP_ROOT_EXTRA, NULL, "down_proj_for_speech", MP_TK_PROJECTOR, th, th, true, 1);
	LIN(m, MP_ROOT_EXTRA, NULL, "up_proj_for_vision_speech", MP_TK_PROJECTOR, th, h * rate, true, 1);
	LIN(m, MP_ROOT_EXTRA, NULL, "down_proj_for_vision_speech", MP_TK_PROJECTOR, th, th, true, 1);
}

/*
 * Phi-4-multimodal (Phi4MultimodalConfig; Phi4MultimodalForCausalLM): the Phi-3 decoder with the class's own defaults
 * at the top (vocab 200064, hidden 3072, MLP 8192, 32 layers, 32 heads, 8 KV heads, 131072 positions, untied; fused
 * qkv_proj and gate_up_proj, no biases; a sliding_window, null by default, on every layer) and
 * model.embed_tokens_extend: the image embedding (image_embed.: the SigLIP tower img_processor of
 * Phi4MultimodalVisionConfig, its pooling head always built; img_projection_up from the tower's width and
 * img_projection_down, biased; global_img_feature_extensor [1, 1, w] and sub_img_feature_extensor [1, 1, 1, w]) and
 * the audio embedding (phi4mm_audio). Both towers are always built; the KV cache is the decoder's alone.
 */
void mpm_read_phi4_multimodal(hf_ctx *c, mp_model *m)
{
	static const mpm_dense d = {.vocab_size = 200064,
	                            .hidden_size = 3072,
	                            .intermediate_size = 8192,
	                            .num_layers = 32,
	                            .num_heads = 32,
	                            .num_kv_heads = 8,
	                            .max_positions = 131072,
	                            .norms = 2};
	uint64_t vh, th;

	mpm_read_dense(c, &d, m);
	if (c->st != MP_OK)
		return;
	th = m->hidden_size;
	vh = siglip_tower_of(c, &phi4mm_vision, m, "model.embed_tokens_extend.image_embed.img_processor.",
	                     "model.embed_tokens_extend.image_embed.");
	if (c->st != MP_OK)
		return;
	mp_inventory_root(&m->inv, MP_ROOT_PROJECTOR, "model.embed_tokens_extend.image_embed.");
	LIN(m, MP_ROOT_PROJECTOR, NULL, "img_projection_up", MP_TK_PROJECTOR, th, vh, true, 1);
	LIN(m, MP_ROOT_PROJECTOR, NULL, "img_projection_down", MP_TK_PROJECTOR, th, th, true, 1);
	{
		uint64_t g[3] = {1, 1, vh}, s4[4] = {1, 1, 1, vh};

		hf_shape(m, MP_ROOT_PROJECTOR, NULL, "global_img_feature_extensor", MP_TK_PROJECTOR, 0, g, 3, 1);
		hf_shape(m, MP_ROOT_PROJECTOR, NULL, "sub_img_feature_extensor", MP_TK_PROJECTOR, 0, s4, 4, 1);
	}
	phi4mm_audio(c, th, m);
}

/* ----- Muse Glimmer, Muse Spark ----------------------------------------------------------------------------------- */

/*
 * MuseGlimmerVisionModel (MuseSparkVisionModel the same; MuseGlimmerVisionConfig: hidden 1536, 50 layers of 16 heads,
 * MLP 8960, 14 px patches of patch_temporal 2 frames, a 32 x 32 position table, merge_size 2) under
 * model.vision_tower.: patch_embedder.patch_embedding (a linear from patch_temporal x 3 x patch^2, no bias) and
 * position_embedding_table [pos_emb_height x pos_emb_width, hidden]; ln_pre; per layer norm1 and norm2 (LayerNorms),
 * q, k, v and proj (biased), mlp.fc1 and fc2 (biased); ln_post. Then the wrapper's vision_adapter (fc1 from
 * out_hidden_size to projector_hidden_size and fc2, no biases) and vision_projection (to the decoder's width, no
 * bias); the rotary tables and the perception norm hold no parameters.
 */
static void muse_vision(hf_ctx *c, mp_model *m)
{
	char pointer[MP_POINTER_MAX];
	hf_ctx v;
	uint64_t h, L, heads, inter, patch, frames, ph, pw, out, phs;
	const char *lay = "layers.{i}";

	if (!hf_sub_config(c, "vision_config", pointer, sizeof(pointer), &v))
		return;
	h = hf_get_u64(&v, KEYS("hidden_size"), 1536);
	L = hf_get_u64(&v, KEYS("num_hidden_layers"), 50);
	heads = hf_get_u64(&v, KEYS("num_attention_heads"), 16);
	inter = hf_get_u64(&v, KEYS("intermediate_size"), 8960);
	patch = hf_get_u64(&v, KEYS("patch_size"), 14);
	frames = hf_get_u64(&v, KEYS("patch_temporal"), 2);
	ph = hf_get_u64(&v, KEYS("pos_emb_height"), 32);
	pw = hf_get_u64(&v, KEYS("pos_emb_width"), 32);
	if (v.st == MP_OK && (h == 0 || h > (UINT64_C(1) << 20) || L == 0 || L > MP_MAX_LAYERS || heads == 0 ||
	                      heads > h || inter == 0 || inter > (UINT64_C(1) << 24) || patch == 0 || patch > 1024 ||
	                      frames == 0 || frames > 64 || ph == 0 || ph > 65536 || pw == 0 || pw > 65536))
		hf_fail_key(&v, h == 0 || h > (UINT64_C(1) << 20) ? "hidden_size"
		                : L == 0 || L > MP_MAX_LAYERS      ? "num_hidden_layers"
		                : heads == 0 || heads > h          ? "num_attention_heads"
		                : inter == 0 || inter > (UINT64_C(1) << 24) ? "intermediate_size"
		                : patch == 0 || patch > 1024                ? "patch_size"
		                : frames == 0 || frames > 64                ? "patch_temporal"
		                : ph == 0 || ph > 65536                     ? "pos_emb_height"
		                                                            : "pos_emb_width",
		            "the Muse vision tower needs hidden_size from 1 to 2^20, 1 to 1024 layers, 1 to hidden_size "
		            "heads, intermediate_size from 1 to 2^24, a patch_size from 1 to 1024, 1 to 64 frames a patch and "
		            "a position grid of 1 to 65536 a side");
	c->st = v.st;
	out = hf_get_u64(c, KEYS("out_hidden_size"), 6144);
	phs = hf_get_u64(c, KEYS("projector_hidden_size"), 4096);
	if (c->st == MP_OK && (out == 0 || out > (UINT64_C(1) << 24) || phs == 0 || phs > (UINT64_C(1) << 24)))
		hf_fail_key(c, out == 0 || out > (UINT64_C(1) << 24) ? "out_hidden_size" : "projector_hidden_size",
		            "out_hidden_size and projector_hidden_size must be from 1 to 2^24");
	if (c->st != MP_OK)
		return;
	mp_inventory_root(&m->inv, MP_ROOT_TOWER, "model.vision_tower.");
	mat(m, MP_ROOT_TOWER, "patch_embedder", "patch_embedding.weight", MP_TK_VISION, h, frames * 3 * patch * patch, 1);
	mat(m, MP_ROOT_TOWER, "patch_embedder", "position_embedding_table.weight", MP_TK_VISION, ph * pw, h, 1);
	LN(m, MP_ROOT_TOWER, NULL, "ln_pre", MP_TK_VISION, h, 1);
	LN(m, MP_ROOT_TOWER, lay, "norm1", MP_TK_VISION, h, L);
	LN(m, MP_ROOT_TOWER, lay, "norm2", MP_TK_VISION, h, L);
	LIN(m, MP_ROOT_TOWER, "layers.{i}.attn", "q_proj", MP_TK_VISION, h, h, true, L);
	LIN(m, MP_ROOT_TOWER, "layers.{i}.attn", "k_proj", MP_TK_VISION, h, h, true, L);
	LIN(m, MP_ROOT_TOWER, "layers.{i}.attn", "v_proj", MP_TK_VISION, h, h, true, L);
	LIN(m, MP_ROOT_TOWER, "layers.{i}.attn", "proj", MP_TK_VISION, h, h, true, L);
	LIN(m, MP_ROOT_TOWER, "layers.{i}.mlp", "fc1", MP_TK_VISION, inter, h, true, L);
	LIN(m, MP_ROOT_TOWER, "layers.{i}.mlp", "fc2", MP_TK_VISION, h, inter, true, L);
	LN(m, MP_ROOT_TOWER, NULL, "ln_post", MP_TK_VISION, h, 1);
	mp_inventory_root(&m->inv, MP_ROOT_PROJECTOR, "model.");
	mat(m, MP_ROOT_PROJECTOR, "vision_adapter", "fc1.weight", MP_TK_PROJECTOR, phs, out, 1);
	mat(m, MP_ROOT_PROJECTOR, "vision_adapter", "fc2.weight", MP_TK_PROJECTOR, phs, phs, 1);
	mat(m, MP_ROOT_PROJECTOR, NULL, "vision_projection.weight", MP_TK_PROJECTOR, m->hidden_size, phs, 1);
}

/*
 * Muse Glimmer (MuseGlimmerConfig; MuseGlimmerForConditionalGeneration): the decoder (text_config,
 * MuseGlimmerTextConfig's defaults) under model.language_model., lm_head at the top (tied only by the wrapper's
 * tie_word_embeddings, which has no field in the class: absent, untied, whatever text_config says), and the vision
 * tower with its adapter
 * (muse_vision).
 */
void mpm_read_muse_glimmer(hf_ctx *c, mp_model *m)
{
	if (!read_text(c, "muse_glimmer_text", false, m))
		return;
	m->inv.roots[MP_ROOT_DECODER] = "model.language_model.";
	/* the wrapper's key alone: text_config's tie_word_embeddings ties nothing (transformers 5.24 reads the
	 * wrapper's, which MuseGlimmerConfig has no field for: absent, untied) */
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), false);
	muse_vision(c, m);
}

/* The entries of a JSON list of numbers under key into out (at most cap), their count into *n; false (the 422 naming
 * key) when it is not such a list of integers from 1 to 2^24. */
static bool u64_list(hf_ctx *c, const char *key, uint64_t *out, size_t cap, size_t *n)
{
	const cJSON *l = c->cfg ? cJSON_GetObjectItemCaseSensitive(c->cfg, key) : NULL, *v;

	*n = 0;
	if (!cJSON_IsArray(l))
		return true;
	cJSON_ArrayForEach(v, l)
	{
		if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > (double)(UINT64_C(1) << 24) ||
		    v->valuedouble != (double)(uint64_t)v->valuedouble || *n >= cap) {
			hf_fail_key(c, key, "must be a list of at most 16 integers from 1 to 2^24");
			return false;
		}
		out[(*n)++] = (uint64_t)v->valuedouble;
	}
	return true;
}

/*
 * MuseSparkAudioModel (MuseSparkAudioConfig: a causal convolutional pyramid over the 24 kHz waveform, num_hidden_layers
 * 4 stages of patch_sizes (16, 6, 5, 4), hidden_sizes (256, 512, 1024, 2048) and depths (2, 2, 2, 2), mlp_ratio 4.0,
 * conv_kernel_size 7, out_hidden_size 8192, which must be the decoder's width) under model.audio_tower.: per stage a
 * patch_embedder (proj from the previous stage's width, 1 for the first, x its patch, biased; an RMSNorm) and depth
 * conv blocks (a depthwise causal conv with a bias, an RMSNorm, an MLP of int(width x mlp_ratio), biased); then norm,
 * proj to out_hidden_size (biased) and post_proj_norm. The stages' shapes differ, so each is listed with its own.
 */
static void muse_spark_audio(hf_ctx *c, mp_model *m)
{
	char pointer[MP_POINTER_MAX];
	hf_ctx a;
	uint64_t ps[16] = {16, 6, 5, 4}, hs[16] = {256, 512, 1024, 2048}, dp[16] = {2, 2, 2, 2}, L, k, out;
	size_t nps = 4, nhs = 4, ndp = 4, got;
	double ratio;
	const char *pe = "layers.{i}.patch_embedder", *cb = "layers.{i}.conv_blocks.{j}";

	if (!hf_sub_config(c, "audio_config", pointer, sizeof(pointer), &a))
		return;
	if (a.cfg && cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(a.cfg, "patch_sizes")) &&
	    u64_list(&a, "patch_sizes", ps, 16, &got))
		nps = got;
	if (a.cfg && cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(a.cfg, "hidden_sizes")) &&
	    u64_list(&a, "hidden_sizes", hs, 16, &got))
		nhs = got;
	if (a.cfg && cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(a.cfg, "depths")) && u64_list(&a, "depths", dp, 16, &got))
		ndp = got;
	L = hf_get_u64(&a, KEYS("num_hidden_layers"), 4);
	k = hf_get_u64(&a, KEYS("conv_kernel_size"), 7);
	out = hf_get_u64(&a, KEYS("out_hidden_size"), 8192);
	ratio = ratio_in(&a, "mlp_ratio", 4.0, 0.0, 1024.0, "mlp_ratio must be above 0 and at most 1024");
	if (a.st == MP_OK && !(nps == L && nhs == L && ndp == L && L >= 1))
		hf_fail_key(&a, "num_hidden_layers",
		            "patch_sizes, hidden_sizes and depths must have one entry per layer, num_hidden_layers of them "
		            "(MuseSparkAudioConfig.validate_architecture raises ValueError); at least one");
	if (a.st == MP_OK && (k == 0 || k > 1024))
		hf_fail_key(&a, "conv_kernel_size", "conv_kernel_size must be from 1 to 1024");
	if (a.st == MP_OK && out != m->hidden_size)
		hf_fail_key(&a, "out_hidden_size",
		            "out_hidden_size must be text_config's hidden_size (MuseSparkConfig.validate_architecture: the "
		            "audio encoder's output goes onto the text embeddings)");
	for (uint64_t i = 0; a.st == MP_OK && i < L; i++)
		if ((uint64_t)((double)hs[i] * ratio) == 0)
			hf_fail_key(&a, "mlp_ratio", "int(hidden_sizes[i] x mlp_ratio) must be at least 1");
	c->st = a.st;
	if (c->st != MP_OK)
		return;
	mp_inventory_root(&m->inv, MP_ROOT_EXTRA, "model.audio_tower.");
	for (uint64_t i = 0; i < L; i++) {
		uint64_t in = i ? hs[i - 1] : 1, h = hs[i], inter = (uint64_t)((double)h * ratio), cw[3] = {h, 1, k};

		LIN(m, MP_ROOT_EXTRA, pe, "proj", MP_TK_VISION, h, in * ps[i], true, 1);
		vec(m, MP_ROOT_EXTRA, pe, "norm.weight", MP_TK_VISION, h, 1);
		hf_shape(m, MP_ROOT_EXTRA, cb, "conv.weight", MP_TK_VISION, 0, cw, 3, dp[i]);
		vec(m, MP_ROOT_EXTRA, cb, "conv.bias", MP_TK_VISION, h, dp[i]);
		vec(m, MP_ROOT_EXTRA, cb, "norm.weight", MP_TK_VISION, h, dp[i]);
		LIN(m, MP_ROOT_EXTRA, cb, "mlp.fc1", MP_TK_VISION, inter, h, true, dp[i]);
		LIN(m, MP_ROOT_EXTRA, cb, "mlp.fc2", MP_TK_VISION, h, inter, true, dp[i]);
	}
	vec(m, MP_ROOT_EXTRA, NULL, "norm.weight", MP_TK_VISION, hs[L - 1], 1);
	LIN(m, MP_ROOT_EXTRA, NULL, "proj", MP_TK_VISION, out, hs[L - 1], true, 1);
	vec(m, MP_ROOT_EXTRA, NULL, "post_proj_norm.weight", MP_TK_VISION, out, 1);
}

/*
 * Muse Spark (MuseSparkConfig; MuseSparkForConditionalGeneration): the MoE decoder (text_config, MuseSparkTextConfig's
 * defaults) under model.language_model., lm_head at the top and never tied (the class ties nothing), Muse Glimmer's
 * vision tower and adapter (muse_vision), and the waveform audio encoder (muse_spark_audio), always built.
 */
void mpm_read_muse_spark(hf_ctx *c, mp_model *m)
{
	if (!read_text(c, "muse_spark_text", false, m))
		return;
	m->inv.roots[MP_ROOT_DECODER] = "model.language_model.";
	m->tie_word_embeddings = false;
	muse_vision(c, m);
	if (c->st == MP_OK)
		muse_spark_audio(c, m);
}

/* ----- DeepSeek-OCR's descendants: Unlimited-OCR, DeepSeek-OCR-2 ---------------------------------------------------- */

/*
 * downsample_channels of their SAM config (UnlimitedOcrSamVisionProj, DeepseekOcr2SamVisionProj: conv1
 * output_channels -> [0], conv2 [0] -> [1], strided 3x3 without bias; Unlimited-OCR's projector reads the last entry):
 * at least two integers from 1 to 2^20. Absent: dflt (both classes' default); null: dflt where the class derives it
 * (null_ok, DeepseekOcr2SamVisionConfig.__post_init__), else a 422. Sets out[0], out[1] and out[2] (the last).
 */
static void downsample_channels(hf_ctx *v, const uint64_t dflt[2], bool null_ok, uint64_t out[3])
{
	const cJSON *l = v->cfg ? cJSON_GetObjectItemCaseSensitive(v->cfg, "downsample_channels") : NULL, *e;
	size_t i = 0;

	out[0] = dflt[0];
	out[1] = out[2] = dflt[1];
	if (l == NULL || (cJSON_IsNull(l) && null_ok))
		return;
	if (!cJSON_IsArray(l) || cJSON_GetArraySize(l) < 2) {
		hf_fail_key(v, "downsample_channels",
		            "downsample_channels must list at least two channel counts (the SAM tower's two strided "
		            "convolutions)");
		return;
	}
	cJSON_ArrayForEach(e, l)
	{
		if (!cJSON_IsNumber(e) || e->valuedouble < 1 || e->valuedouble > (double)(UINT64_C(1) << 20) ||
		    e->valuedouble != (double)(uint64_t)e->valuedouble) {
			hf_fail_key(v, "downsample_channels", "downsample_channels entries must be integers from 1 to 2^20");
			return;
		}
		if (i < 2)
			out[i] = (uint64_t)e->valuedouble;
		out[2] = (uint64_t)e->valuedouble;
		i++;
	}
}

/*
 * The second encoder of DeepSeek-OCR-2's tower (DeepseekOcr2VisionEncoderConfig: Qwen2's decoder without embeddings,
 * hidden 4096, MLP 22016, 32 layers, 32 heads, kv = heads, head_dim hidden // heads unless given), under
 * model.vision_tower.vision_encoder.: q, k and v always biased, o without; a gated MLP without biases; RMSNorms
 * (input, post-attention, final); beside it the learned queries query_768_resolution [144, h] and
 * query_1024_resolution [256, h] (12 x 12 and 16 x 16 patches). Returns its width (0 on error).
 */
static uint64_t ocr2_encoder(hf_ctx *v, mp_model *m)
{
	uint64_t h, inter, L, heads, kv, hd;
	const char *attn = "vision_encoder.layers.{i}.self_attn", *mlp = "vision_encoder.layers.{i}.mlp",
	           *lay = "vision_encoder.layers.{i}";

	h = hf_get_u64(v, KEYS("hidden_size"), 4096);
	inter = hf_get_u64(v, KEYS("intermediate_size"), 22016);
	L = hf_get_u64(v, KEYS("num_hidden_layers"), 32);
	heads = hf_get_u64(v, KEYS("num_attention_heads"), 32);
	kv = hf_get_u64(v, KEYS("num_key_value_heads"), heads);
	hd = hf_get_u64(v, KEYS("head_dim"), heads ? h / heads : 0); /* DeepseekOcr2VisionAttention: getattr */
	if (v->st == MP_OK && (h == 0 || h > (UINT64_C(1) << 20) || L == 0 || L > MP_MAX_LAYERS || heads == 0 ||
	                       heads > h || kv == 0 || kv > heads || hd == 0 || hd > (UINT64_C(1) << 16) || inter == 0 ||
	                       inter > (UINT64_C(1) << 24)))
		hf_fail_key(v, h == 0 || h > (UINT64_C(1) << 20) ? "hidden_size"
		               : L == 0 || L > MP_MAX_LAYERS      ? "num_hidden_layers"
		               : heads == 0 || heads > h          ? "num_attention_heads"
		               : kv == 0 || kv > heads            ? "num_key_value_heads"
		               : hd == 0 || hd > (UINT64_C(1) << 16) ? "head_dim"
		                                                     : "intermediate_size",
		            "the vision encoder needs hidden_size from 1 to 2^20, num_hidden_layers from 1 to 1024, 1 to "
		            "hidden_size heads, 1 to num_attention_heads KV heads, head_dim from 1 to 65536 and "
		            "intermediate_size from 1 to 2^24");
	if (v->st != MP_OK)
		return 0;
	mp_inventory_root(&m->inv, MP_ROOT_TOWER, "model.vision_tower.");
	LIN(m, MP_ROOT_TOWER, attn, "q_proj", MP_TK_VISION, heads * hd, h, true, L);
	LIN(m, MP_ROOT_TOWER, attn, "k_proj", MP_TK_VISION, kv * hd, h, true, L);
	LIN(m, MP_ROOT_TOWER, attn, "v_proj", MP_TK_VISION, kv * hd, h, true, L);
	LIN(m, MP_ROOT_TOWER, attn, "o_proj", MP_TK_VISION, h, heads * hd, false, L);
	LIN(m, MP_ROOT_TOWER, mlp, "gate_proj", MP_TK_VISION, inter, h, false, L);
	LIN(m, MP_ROOT_TOWER, mlp, "up_proj", MP_TK_VISION, inter, h, false, L);
	LIN(m, MP_ROOT_TOWER, mlp, "down_proj", MP_TK_VISION, h, inter, false, L);
	vec(m, MP_ROOT_TOWER, lay, "input_layernorm.weight", MP_TK_VISION, h, L);
	vec(m, MP_ROOT_TOWER, lay, "post_attention_layernorm.weight", MP_TK_VISION, h, L);
	vec(m, MP_ROOT_TOWER, "vision_encoder", "norm.weight", MP_TK_VISION, h, 1);
	mat(m, MP_ROOT_TOWER, NULL, "query_768_resolution.weight", MP_TK_VISION, 144, h, 1);
	mat(m, MP_ROOT_TOWER, NULL, "query_1024_resolution.weight", MP_TK_VISION, 256, h, 1);
	return h;
}

/*
 * Unlimited-OCR (UnlimitedOcrConfig; modeling_unlimited_ocr.py) and DeepSeek-OCR-2 (DeepseekOcr2Config;
 * modeling_deepseek_ocr2.py), untied by default. vision_config holds two towers: sam_config, SAM's windowed ViT
 * (the GOT-OCR 2 tower above, mlp_dim derived from mlp_ratio in DeepSeek-OCR-2's) with its neck and the two strided
 * convolutions of downsample_channels ((512, 1024); DeepSeek-OCR-2 [512, 896]) under model.vision_tower.sam_encoder.;
 * and encoder_config: Unlimited-OCR's a CLIP encoder that embeds SAM's features (UnlimitedOcrVisionEncoderConfig:
 * hidden 1024, MLP 4096, 24 layers, 16 heads, 224 px images of 14 px patches: the class token, (224 / 14)^2 + 1
 * positions, pre_layrnorm, no patch convolution and no post_layernorm), DeepSeek-OCR-2's a Qwen2 decoder
 * (ocr2_encoder). The projector model.multi_modal_projector, a linear with a bias from the encoder's width (plus the
 * last downsample channel count in Unlimited-OCR, whose features are the two side by side) to the decoder's;
 * model.view_separator [hidden] (and Unlimited-OCR's model.image_newline). The decoder is text_config's
 * (mpm_read_deepseek_ocr_text) under model.language_model., lm_head at the top.
 */
void mpm_read_deepseek_ocr(hf_ctx *c, mp_model *m)
{
	static const uint64_t ds_unlimited[2] = {512, 1024}, ds_ocr2[2] = {512, 896};
	bool unlimited = strcmp(m->model_type, "unlimited_ocr") == 0;
	sam_spec sp = {"sam_config", MP_ROOT_EXTRA, "model.vision_tower.sam_encoder.", !unlimited, false, 0};
	char pointer[MP_POINTER_MAX], spointer[MP_POINTER_MAX], epointer[MP_POINTER_MAX];
	hf_ctx vc, sam, enc;
	uint64_t oc, ds[3], eh, th, conv1[4], conv2[4];

	if (!unlimited && !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(c->cfg, "text_config"))) {
		/* DeepseekOcr2TextConfig's defaults build nothing (mpm_read_deepseek_ocr_text): its keys are required */
		hf_fail_key(c, "text_config",
		            "text_config is required, with mlp_layer_types and num_experts_per_tok: DeepseekOcr2TextConfig "
		            "leaves both None, which transformers 5.24 cannot build (DeepSeek-OCR-2: the first layer "
		            "\"dense\", the others \"sparse\", 6 experts a token)");
		return;
	}
	if (!read_text(c, unlimited ? "unlimited_ocr_text" : "deepseek_ocr2_text", false, m))
		return;
	m->inv.roots[MP_ROOT_DECODER] = "model.language_model.";
	wrapper_tie(c, m, false);
	th = m->hidden_size;
	if (!hf_sub_config(c, "vision_config", pointer, sizeof(pointer), &vc))
		return;
	oc = sam_tower(&vc, m, &sp);
	c->st = vc.st;
	if (c->st != MP_OK || !hf_sub_config(&vc, "sam_config", spointer, sizeof(spointer), &sam))
		return;
	downsample_channels(&sam, unlimited ? ds_unlimited : ds_ocr2, !unlimited, ds);
	c->st = sam.st;
	if (c->st != MP_OK || !hf_sub_config(&vc, "encoder_config", epointer, sizeof(epointer), &enc))
		return;
	conv1[0] = ds[0], conv1[1] = oc, conv1[2] = conv1[3] = 3;
	conv2[0] = ds[1], conv2[1] = ds[0], conv2[2] = conv2[3] = 3;
	hf_shape(m, MP_ROOT_EXTRA, "proj", "conv1.weight", MP_TK_VISION, 0, conv1, 4, 1);
	hf_shape(m, MP_ROOT_EXTRA, "proj", "conv2.weight", MP_TK_VISION, 0, conv2, 4, 1);
	if (unlimited) {
		uint64_t inter, L, heads, image, patch;

		eh = hf_get_u64(&enc, KEYS("hidden_size"), 1024);
		inter = hf_get_u64(&enc, KEYS("intermediate_size"), 4096);
		L = hf_get_u64(&enc, KEYS("num_hidden_layers"), 24);
		heads = hf_get_u64(&enc, KEYS("num_attention_heads"), 16);
		image = hf_get_u64(&enc, KEYS("image_size"), 224);
		patch = hf_get_u64(&enc, KEYS("patch_size"), 14);
		if (enc.st == MP_OK && (heads == 0 || eh % heads != 0))
			hf_fail_key(&enc, "num_attention_heads",
			            "hidden_size must be a multiple of num_attention_heads "
			            "(UnlimitedOcrVisionEncoderConfig.validate_architecture)");
		if (enc.st == MP_OK && (eh == 0 || eh > (UINT64_C(1) << 20) || L == 0 || L > MP_MAX_LAYERS || inter == 0 ||
		                        inter > (UINT64_C(1) << 24) || patch == 0 || patch > image ||
		                        image > (UINT64_C(1) << 16)))
			hf_fail_key(&enc, eh == 0 || eh > (UINT64_C(1) << 20)     ? "hidden_size"
			                  : L == 0 || L > MP_MAX_LAYERS          ? "num_hidden_layers"
			                  : inter == 0 || inter > (UINT64_C(1) << 24) ? "intermediate_size"
			                                                              : "patch_size",
			            "the CLIP encoder needs hidden_size from 1 to 2^20, num_hidden_layers from 1 to 1024, "
			            "intermediate_size from 1 to 2^24 and a patch_size from 1 to image_size (at most 65536)");
		c->st = enc.st;
		if (c->st != MP_OK)
			return;
		clip_tower(&m->vision, "model.vision_tower.vision_encoder.", "model.", eh, inter, L, 3, patch, image, th);
		m->vision.no_patch_embedding = true;
		m->vision.post_norm = false;
		eh += ds[2];
	} else {
		eh = ocr2_encoder(&enc, m);
		c->st = enc.st;
		if (c->st != MP_OK)
			return;
	}
	mp_inventory_root(&m->inv, MP_ROOT_PROJECTOR, "model.");
	LIN(m, MP_ROOT_PROJECTOR, NULL, "multi_modal_projector", MP_TK_PROJECTOR, th, eh, true, 1);
	vec(m, MP_ROOT_PROJECTOR, NULL, "view_separator", MP_TK_PROJECTOR, th, 1);
	if (unlimited)
		vec(m, MP_ROOT_PROJECTOR, NULL, "image_newline", MP_TK_PROJECTOR, th, 1);
}
