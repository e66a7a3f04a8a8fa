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

/* The context of a sub-config (vision_config, qformer_config) of c: absent or null gives its class defaults (cfg
 * NULL); anything but an object is a 422 naming it. pointer (len bytes) holds its JSON pointer. */
static bool sub_config(hf_ctx *c, const char *key, hf_ctx *out, char *pointer, size_t len)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->cfg, key);

	if (v && !cJSON_IsNull(v) && !cJSON_IsObject(v)) {
		hf_fail_key(c, key, "must be an object (a sub-config of the wrapper) or absent");
		return false;
	}
	snprintf(pointer, len, "%s/%s", c->pointer, key);
	*out = (hf_ctx){cJSON_IsObject(v) ? v : NULL, pointer, c->err, c->st, NULL, NULL, c->decode_type};
	return c->st == MP_OK;
}

/*
 * The decoder of text_config into m (its model_type, else dflt; an absent text_config: dflt's class defaults, or a
 * 422 when `required` because the wrapper's own defaults for it differ from that class's). Sets c->names, c->text,
 * m->json_pointer and m->model_type back to the wrapper's. False (c->st set) when the decoder is not one memplan reads.
 */
static bool read_text(hf_ctx *c, const char *dflt, bool required, mp_model *m)
{
	const cJSON *tc = cJSON_GetObjectItemCaseSensitive(c->cfg, "text_config"), *tt;
	char pointer[MP_POINTER_MAX], wrapper[sizeof(m->model_type)];
	hf_ctx t;

	snprintf(wrapper, sizeof(wrapper), "%s", m->model_type);
	if (tc && !cJSON_IsNull(tc) && !cJSON_IsObject(tc)) {
		hf_fail_key(c, "text_config", "text_config must be an object (the decoder's config)");
		return false;
	}
	if (!cJSON_IsObject(tc) && required) {
		char msg[200];

		snprintf(msg, sizeof(msg), "text_config is required: %s's defaults for its decoder are not %s's class "
		                           "defaults, which memplan would take",
		         wrapper, dflt);
		hf_fail_key(c, "text_config", msg);
		return false;
	}
	snprintf(pointer, sizeof(pointer), "%s%s", c->pointer, cJSON_IsObject(tc) ? "/text_config" : "");
	t = (hf_ctx){cJSON_IsObject(tc) ? tc : NULL, pointer, c->err, c->st, NULL, NULL, c->decode_type};
	tt = t.cfg ? cJSON_GetObjectItemCaseSensitive(t.cfg, "model_type") : NULL;
	if (!t.decode_type(&t, cJSON_IsString(tt) ? tt->valuestring : dflt, true, m) && t.st == MP_OK) {
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

	if (!sub_config(c, "vision_config", &v, pointer, sizeof(pointer)))
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

	if (!sub_config(c, "qformer_config", &q, pointer, sizeof(pointer)))
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
	LIN(m, MP_ROOT_EXTRA, "encoder.layer.{i}.attention.attention", "query", MP_TK_PROJECTOR, h, h, true, L);
	LIN(m, MP_ROOT_EXTRA, "encoder.layer.{i}.attention.attention", "key", MP_TK_PROJECTOR, h, h, true, L);
	LIN(m, MP_ROOT_EXTRA, "encoder.layer.{i}.attention.attention", "value", MP_TK_PROJECTOR, h, h, true, L);
	LIN(m, MP_ROOT_EXTRA, "encoder.layer.{i}.attention.output", "dense", MP_TK_PROJECTOR, h, h, true, L);
	LN(m, MP_ROOT_EXTRA, "encoder.layer.{i}.attention.output", "LayerNorm", MP_TK_PROJECTOR, h, L);
	LIN(m, MP_ROOT_EXTRA, "encoder.layer.{i}.crossattention.attention", "query", MP_TK_PROJECTOR, h, h, true, cross);
	LIN(m, MP_ROOT_EXTRA, "encoder.layer.{i}.crossattention.attention", "key", MP_TK_PROJECTOR, h, vision_h, true,
	    cross);
	LIN(m, MP_ROOT_EXTRA, "encoder.layer.{i}.crossattention.attention", "value", MP_TK_PROJECTOR, h, vision_h, true,
	    cross);
	LIN(m, MP_ROOT_EXTRA, "encoder.layer.{i}.crossattention.output", "dense", MP_TK_PROJECTOR, h, h, true, cross);
	LN(m, MP_ROOT_EXTRA, "encoder.layer.{i}.crossattention.output", "LayerNorm", MP_TK_PROJECTOR, h, cross);
	if (text_input) {
		LIN(m, MP_ROOT_EXTRA, "encoder.layer.{i}.intermediate", "dense", MP_TK_PROJECTOR, inter, h, true, L);
		LIN(m, MP_ROOT_EXTRA, "encoder.layer.{i}.output", "dense", MP_TK_PROJECTOR, h, inter, true, L);
		LN(m, MP_ROOT_EXTRA, "encoder.layer.{i}.output", "LayerNorm", MP_TK_PROJECTOR, h, L);
	}
	LIN(m, MP_ROOT_EXTRA, "encoder.layer.{i}.intermediate_query", "dense", MP_TK_PROJECTOR, inter, h, true, L);
	LIN(m, MP_ROOT_EXTRA, "encoder.layer.{i}.output_query", "dense", MP_TK_PROJECTOR, h, inter, true, L);
	LN(m, MP_ROOT_EXTRA, "encoder.layer.{i}.output_query", "LayerNorm", MP_TK_PROJECTOR, h, L);
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

	if (!sub_config(c, sp->key, &v, pointer, sizeof(pointer)))
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


/*
 * SiglipVisionModel (SiglipVisionConfig: hidden 768, MLP 3072, 12 layers, 12 heads, 224 px images of 16 px patches,
 * vision_use_head True) as planner/vision.c's SigLIP tower under tower_root, with no projector of its kind (the
 * wrapper lists its own). Returns the tower's width (0 on error).
 */
static uint64_t siglip_tower(hf_ctx *c, mp_model *m, const char *tower_root, const char *projector_root)
{
	char pointer[MP_POINTER_MAX];
	hf_ctx v;
	const cJSON *mt;
	mp_vision *t = &m->vision;
	uint64_t h, inter, L, heads, ch, image, patch;

	if (!sub_config(c, "vision_config", &v, pointer, sizeof(pointer)))
		return 0;
	mt = v.cfg ? cJSON_GetObjectItemCaseSensitive(v.cfg, "model_type") : NULL;
	if (mt && !cJSON_IsNull(mt) && !(cJSON_IsString(mt) && strcmp(mt->valuestring, "siglip_vision_model") == 0))
		hf_fail_key(&v, "model_type", "vision_config model_type must be siglip_vision_model (the SigLIP tower)");
	h = hf_get_u64(&v, KEYS("hidden_size"), 768);
	inter = hf_get_u64(&v, KEYS("intermediate_size"), 3072);
	L = hf_get_u64(&v, KEYS("num_hidden_layers"), 12);
	heads = hf_get_u64(&v, KEYS("num_attention_heads"), 12);
	ch = hf_get_u64(&v, KEYS("num_channels"), 3);
	image = hf_get_u64(&v, KEYS("image_size"), 224);
	patch = hf_get_u64(&v, KEYS("patch_size"), 16);
	t->map_head = hf_get_bool(&v, KEYS("vision_use_head"), true);
	if (v.st == MP_OK && (heads == 0 || h % heads != 0))
		hf_fail_key(&v, "num_attention_heads",
		            "hidden_size must be a multiple of num_attention_heads (SiglipAttention raises ValueError)");
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
	if (!sub_config(c, "vision_config", &v, pointer, sizeof(pointer)))
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
