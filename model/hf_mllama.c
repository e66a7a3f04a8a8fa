/*
 * hf_mllama.c: Llama 3.2 Vision (model_type mllama, MllamaForConditionalGeneration in transformers 5.24,
 * modeling_mllama.py). The decoder (text_config, MllamaTextConfig) is Llama's with cross-attention layers in place of
 * some self-attention layers (cross_attention_layers): such a layer attends to the image's projected tiles through
 * cross_attn (q, k, v, o, per-head q/k norms) and tanh gates, with its own MLP. The image tower (vision_config,
 * MllamaVisionConfig) is a tiled ViT of a local and a gated global transformer, listed here with its own names;
 * the projector is one linear layer from vision_output_dim.
 *
 * A text-only request runs no cross-attention layer (MllamaTextModel skips a cross-attention layer without
 * cross_attention_states and an empty cache of it, and vLLM's MllamaForConditionalGeneration skips them alike): those
 * layers hold weights, no cache and no step work; the image tiles' keys and values they cache with an image are not
 * counted (the row's `simplified` says so in every answer). IDEFICS (model_type idefics, IdeficsForVisionText2Text,
 * modeling_idefics.py) is a Llama decoder with gated cross-attention layers beside its own, below.
 */
#include <stdio.h>
#include <string.h>

#include "hf_internal.h"
#include "mpm_types.h"

#define TEXT_L "layers.{i}"

/* One matrix of the reader's own, rows x cols, `count` of it, under root and path, read by no step product. */
static void own_mat(mp_model *m, uint8_t root, const char *path, const char *leaf, mp_tensor_kind kind,
                    mp_tp_split split, uint64_t rows, uint64_t cols, uint64_t count, uint64_t kv_heads)
{
	mp_tensor_spec s = {.root = root, .path = path, .leaf = leaf, .kind = kind, .split = split,
	                    .view = MP_VIEW_LINEAR, .rows = rows, .cols = cols, .count = count, .kv_heads = kv_heads};

	mp_inventory_add(&m->inv, &s);
}

static void own_vec(mp_model *m, uint8_t root, const char *path, const char *leaf, mp_tensor_kind kind, uint64_t n,
                    uint64_t count)
{
	hf_tensor(m, root, path, leaf, kind, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, n, count);
}

/*
 * MllamaTextConfig: vocab 128256 (embed_tokens holds 8 rows more), hidden 4096, 40 layers, 32 heads, kv 8, FFN 14336,
 * 131072 positions, head_dim hidden // heads, cross_attention_layers [3, 8, ..., 38]; the head is always a tensor of
 * its own (MllamaForConditionalGeneration ties nothing).
 */
static void mllama_text(hf_ctx *c, mp_model *m)
{
	const cJSON *cl = cJSON_GetObjectItemCaseSensitive(c->cfg, "cross_attention_layers"), *v;
	static const uint64_t default_cross[] = {3, 8, 13, 18, 23, 28, 33, 38};
	uint64_t h, q, kv, f, cross = 0;

	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 128256);
	m->hidden_size = h = hf_get_u64(c, KEYS("hidden_size"), 4096);
	m->num_layers = hf_get_u64(c, KEYS("num_hidden_layers"), 40);
	m->num_heads = hf_get_u64(c, KEYS("num_attention_heads"), 32);
	m->num_kv_heads = hf_get_u64(c, KEYS("num_key_value_heads"), 8);
	m->intermediate_size = f = hf_get_u64(c, KEYS("intermediate_size"), 14336);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings"), 131072);
	m->tie_word_embeddings = false;
	m->head_dim = m->num_heads ? h / m->num_heads : 0;
	if (c->st == MP_OK && m->head_dim % 2)
		hf_fail_key(c, "num_attention_heads",
		            "hidden_size // num_attention_heads (MllamaTextSelfAttention's head_dim) must be even: its rotary "
		            "embedding rotates head_dim / 2 pairs, and the forward fails on an odd width");
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_GATED;
	m->norm_kind = MP_NORM_RMS;
	m->norms_per_layer = 2;
	m->final_norm = true;
	if (c->st != MP_OK || m->num_layers == 0 || m->num_layers > MP_MAX_LAYERS)
		return; /* validation names the key */
	m->layer_pattern = true;
	for (uint64_t i = 0; i < m->num_layers; i++)
		m->layer_flags[i] = MP_LAYER_ATTENTION | MP_LAYER_FFN;
	if (cl == NULL || cJSON_IsNull(cl)) {
		for (size_t i = 0; i < sizeof(default_cross) / sizeof(default_cross[0]); i++)
			if (default_cross[i] < m->num_layers)
				m->layer_flags[default_cross[i]] = 0;
	} else if (!cJSON_IsArray(cl)) {
		hf_fail_key(c, "cross_attention_layers", "cross_attention_layers must be a list of layer indices");
		return;
	} else {
		cJSON_ArrayForEach(v, cl)
		{
			if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble != (double)(uint64_t)v->valuedouble) {
				hf_fail_key(c, "cross_attention_layers",
				            "cross_attention_layers entries must be layer indices (whole numbers from 0)");
				return;
			}
			/* MllamaTextModel builds layer i as a cross-attention layer when i is listed, for i below
			 * num_hidden_layers: an index beyond the layers is ignored */
			if (v->valuedouble < (double)m->num_layers)
				m->layer_flags[(uint64_t)v->valuedouble] = 0;
		}
	}
	for (uint64_t i = 0; i < m->num_layers; i++)
		cross += m->layer_flags[i] == 0;
	hf_decode_rope(c, m, 1.0);
	/* embed_tokens: vocab + 8 rows (the image token and its reserved neighbours) */
	hf_tensor(m, MP_ROOT_DECODER, NULL, "embed_tokens.weight", MP_TK_EMBEDDING, MP_SPLIT_ROWS, MP_STEP_NONE, false,
	          m->vocab_size + 8, h, 1);
	if (cross == 0)
		return;
	/* the cross-attention layers (MllamaCrossAttentionDecoderLayer): cross_attn, its gates, their MLP; their
	 * input_layernorm and post_attention_layernorm are every layer's */
	q = m->num_heads * m->head_dim;
	kv = m->num_kv_heads * m->head_dim;
	own_mat(m, MP_ROOT_DECODER, TEXT_L ".cross_attn", "q_proj.weight", MP_TK_ATTENTION, MP_SPLIT_ROWS, q, h, cross, 0);
	own_mat(m, MP_ROOT_DECODER, TEXT_L ".cross_attn", "k_proj.weight", MP_TK_ATTENTION, MP_SPLIT_KV_ROWS, kv, h,
	        cross, m->num_kv_heads);
	own_mat(m, MP_ROOT_DECODER, TEXT_L ".cross_attn", "v_proj.weight", MP_TK_ATTENTION, MP_SPLIT_KV_ROWS, kv, h,
	        cross, m->num_kv_heads);
	own_mat(m, MP_ROOT_DECODER, TEXT_L ".cross_attn", "o_proj.weight", MP_TK_ATTENTION, MP_SPLIT_COLS, h, q, cross, 0);
	own_vec(m, MP_ROOT_DECODER, TEXT_L ".cross_attn", "q_norm.weight", MP_TK_ATTENTION, m->head_dim, cross);
	own_vec(m, MP_ROOT_DECODER, TEXT_L ".cross_attn", "k_norm.weight", MP_TK_ATTENTION, m->head_dim, cross);
	own_vec(m, MP_ROOT_DECODER, TEXT_L, "cross_attn_attn_gate", MP_TK_ATTENTION, 1, cross);
	own_vec(m, MP_ROOT_DECODER, TEXT_L, "cross_attn_mlp_gate", MP_TK_MLP, 1, cross);
	own_mat(m, MP_ROOT_DECODER, TEXT_L ".mlp", "gate_proj.weight", MP_TK_MLP, MP_SPLIT_ROWS, f, h, cross, 0);
	own_mat(m, MP_ROOT_DECODER, TEXT_L ".mlp", "up_proj.weight", MP_TK_MLP, MP_SPLIT_ROWS, f, h, cross, 0);
	own_mat(m, MP_ROOT_DECODER, TEXT_L ".mlp", "down_proj.weight", MP_TK_MLP, MP_SPLIT_COLS, h, f, cross, 0);
}

/* A side of the image (image_size, patch_size): an integer, or a list of two equal ones. */
static uint64_t square_side(hf_ctx *c, const char *key, uint64_t dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->cfg, key);

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
 * MllamaVisionConfig: hidden 1280, 32 local and 8 global layers, 16 heads, MLP 5120, 3 channels, 448 px images of 14
 * px patches ((448 / 14)^2 + 1 = 1025 positions with the class token), 4 tiles, 8 supported aspect ratios (9 rows of
 * the tile embeddings), vision_output_dim 7680 (the projector's input). MllamaVisionModel: a patch convolution without
 * bias, the class embedding, gated position and tile embeddings, LayerNorms before and after, blocks of attention
 * without biases and fc1 / fc2 with them; the global blocks add gate_attn and gate_ffn.
 */
static void mllama_vision(hf_ctx *top, mp_model *m)
{
	const cJSON *vc = cJSON_GetObjectItemCaseSensitive(top->cfg, "vision_config"), *ar;
	char pointer[96];
	hf_ctx c;
	uint64_t h, L, G, heads, inter, ch, image, patch, tiles, ratios = 8, out, positions, d;
	const char *lay = "transformer.layers.{i}", *glob = "global_transformer.layers.{i}";

	if (vc && !cJSON_IsNull(vc) && !cJSON_IsObject(vc)) {
		hf_fail_key(top, "vision_config", "vision_config must be an object (the image tower's config)");
		return;
	}
	snprintf(pointer, sizeof(pointer), "%s/vision_config", top->pointer);
	c = (hf_ctx){cJSON_IsObject(vc) ? vc : NULL, pointer, top->err, top->st, NULL, NULL, top->decode_type};
	h = hf_get_u64(&c, KEYS("hidden_size"), 1280);
	L = hf_get_u64(&c, KEYS("num_hidden_layers"), 32);
	G = hf_get_u64(&c, KEYS("num_global_layers"), 8);
	heads = hf_get_u64(&c, KEYS("attention_heads"), 16);
	inter = hf_get_u64(&c, KEYS("intermediate_size"), 5120);
	ch = hf_get_u64(&c, KEYS("num_channels"), 3);
	image = square_side(&c, "image_size", 448);
	patch = square_side(&c, "patch_size", 14);
	tiles = hf_get_u64(&c, KEYS("max_num_tiles"), 4);
	out = hf_get_u64(&c, KEYS("vision_output_dim"), 7680);
	ar = c.cfg ? cJSON_GetObjectItemCaseSensitive(c.cfg, "supported_aspect_ratios") : NULL;
	if (ar && !cJSON_IsNull(ar)) {
		if (!cJSON_IsArray(ar) || cJSON_GetArraySize(ar) < 1)
			hf_fail_key(&c, "supported_aspect_ratios", "supported_aspect_ratios must be a list of [w, h] tile counts");
		else
			ratios = (uint64_t)cJSON_GetArraySize(ar);
	}
	if (c.st == MP_OK && (h == 0 || heads == 0 || patch == 0 || image < patch || tiles == 0 || L == 0))
		hf_fail_key(&c,
		            h == 0       ? "hidden_size"
		            : heads == 0 ? "attention_heads"
		            : patch == 0 || image < patch ? "patch_size"
		            : tiles == 0 ? "max_num_tiles"
		                         : "num_hidden_layers",
		            "the image tower needs a width, heads, a patch no larger than the image, tiles and layers");
	if (c.st == MP_OK && (h > (UINT64_C(1) << 20) || ch > 256 || image > (UINT64_C(1) << 16) || tiles > 64 ||
	                      L > MP_MAX_LAYERS || G > MP_MAX_LAYERS || inter > (UINT64_C(1) << 24) ||
	                      out > (UINT64_C(1) << 24)))
		hf_fail_key(&c, "hidden_size",
		            "the image tower's widths must stay below 2^20 (hidden_size) and 2^24 (intermediate_size, "
		            "vision_output_dim), image_size 65536, num_channels 256, max_num_tiles 64, layers 1024");
	top->st = c.st;
	if (c.st != MP_OK)
		return;
	positions = (image / patch) * (image / patch) + 1;
	d = h / heads * heads; /* q, k, v and o: heads x (hidden // heads) */
	mp_inventory_root(&m->inv, MP_ROOT_TOWER, "model.vision_model.");
	mp_inventory_root(&m->inv, MP_ROOT_PROJECTOR, "model.multi_modal_projector.");
	{
		uint64_t conv[4] = {h, ch, patch, patch}, one[1] = {1}, pos[2] = {positions, h};

		hf_shape(m, MP_ROOT_TOWER, NULL, "patch_embedding.weight", MP_TK_VISION, 0, conv, 4, 1);
		own_vec(m, MP_ROOT_TOWER, NULL, "class_embedding", MP_TK_VISION, h, 1);
		hf_shape(m, MP_ROOT_TOWER, "gated_positional_embedding", "gate", MP_TK_VISION, 0, one, 1, 1);
		hf_shape(m, MP_ROOT_TOWER, "gated_positional_embedding", "embedding", MP_TK_VISION, 0, pos, 2, 1);
		own_mat(m, MP_ROOT_TOWER, "gated_positional_embedding", "tile_embedding.weight", MP_TK_VISION, MP_SPLIT_NONE,
		        ratios + 1, tiles * positions * h, 1, 0);
		hf_shape(m, MP_ROOT_TOWER, "pre_tile_positional_embedding", "gate", MP_TK_VISION, 0, one, 1, 1);
		own_mat(m, MP_ROOT_TOWER, "pre_tile_positional_embedding", "embedding.weight", MP_TK_VISION, MP_SPLIT_NONE,
		        ratios + 1, tiles * h, 1, 0);
		hf_shape(m, MP_ROOT_TOWER, "post_tile_positional_embedding", "gate", MP_TK_VISION, 0, one, 1, 1);
		own_mat(m, MP_ROOT_TOWER, "post_tile_positional_embedding", "embedding.weight", MP_TK_VISION, MP_SPLIT_NONE,
		        ratios + 1, tiles * h, 1, 0);
	}
	own_vec(m, MP_ROOT_TOWER, NULL, "layernorm_pre.weight", MP_TK_VISION, h, 1);
	own_vec(m, MP_ROOT_TOWER, NULL, "layernorm_pre.bias", MP_TK_VISION, h, 1);
	own_vec(m, MP_ROOT_TOWER, NULL, "layernorm_post.weight", MP_TK_VISION, h, 1);
	own_vec(m, MP_ROOT_TOWER, NULL, "layernorm_post.bias", MP_TK_VISION, h, 1);
	for (int g = 0; g < 2; g++) {
		/* the paths are static strings (mp_tensor keeps them): the local blocks', then the global ones' */
		const char *p = g ? glob : lay;
		uint64_t n = g ? G : L;

		if (n == 0)
			continue;
		own_mat(m, MP_ROOT_TOWER, g ? "global_transformer.layers.{i}.self_attn" : "transformer.layers.{i}.self_attn",
		        "q_proj.weight", MP_TK_VISION, MP_SPLIT_NONE, d, h, n, 0);
		own_mat(m, MP_ROOT_TOWER, g ? "global_transformer.layers.{i}.self_attn" : "transformer.layers.{i}.self_attn",
		        "k_proj.weight", MP_TK_VISION, MP_SPLIT_NONE, d, h, n, 0);
		own_mat(m, MP_ROOT_TOWER, g ? "global_transformer.layers.{i}.self_attn" : "transformer.layers.{i}.self_attn",
		        "v_proj.weight", MP_TK_VISION, MP_SPLIT_NONE, d, h, n, 0);
		own_mat(m, MP_ROOT_TOWER, g ? "global_transformer.layers.{i}.self_attn" : "transformer.layers.{i}.self_attn",
		        "o_proj.weight", MP_TK_VISION, MP_SPLIT_NONE, h, d, n, 0);
		own_mat(m, MP_ROOT_TOWER, g ? "global_transformer.layers.{i}.mlp" : "transformer.layers.{i}.mlp",
		        "fc1.weight", MP_TK_VISION, MP_SPLIT_NONE, inter, h, n, 0);
		own_vec(m, MP_ROOT_TOWER, g ? "global_transformer.layers.{i}.mlp" : "transformer.layers.{i}.mlp", "fc1.bias",
		        MP_TK_VISION, inter, n);
		own_mat(m, MP_ROOT_TOWER, g ? "global_transformer.layers.{i}.mlp" : "transformer.layers.{i}.mlp",
		        "fc2.weight", MP_TK_VISION, MP_SPLIT_NONE, h, inter, n, 0);
		own_vec(m, MP_ROOT_TOWER, g ? "global_transformer.layers.{i}.mlp" : "transformer.layers.{i}.mlp", "fc2.bias",
		        MP_TK_VISION, h, n);
		own_vec(m, MP_ROOT_TOWER, p, "input_layernorm.weight", MP_TK_VISION, h, n);
		own_vec(m, MP_ROOT_TOWER, p, "input_layernorm.bias", MP_TK_VISION, h, n);
		own_vec(m, MP_ROOT_TOWER, p, "post_attention_layernorm.weight", MP_TK_VISION, h, n);
		own_vec(m, MP_ROOT_TOWER, p, "post_attention_layernorm.bias", MP_TK_VISION, h, n);
		if (g) {
			uint64_t one[1] = {1};

			hf_shape(m, MP_ROOT_TOWER, glob, "gate_attn", MP_TK_VISION, 0, one, 1, n);
			hf_shape(m, MP_ROOT_TOWER, glob, "gate_ffn", MP_TK_VISION, 0, one, 1, n);
		}
	}
	/* the projector: vision_output_dim -> the decoder's width, with a bias */
	own_mat(m, MP_ROOT_PROJECTOR, NULL, "weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, m->hidden_size, out, 1, 0);
	own_vec(m, MP_ROOT_PROJECTOR, NULL, "bias", MP_TK_PROJECTOR, m->hidden_size, 1);
}

/* MllamaConfig: text_config (MllamaTextConfig) and vision_config (MllamaVisionConfig), each at its class defaults
 * when absent. The decoder's keys are named under /text_config. */
void mpm_read_mllama(hf_ctx *c, mp_model *m)
{
	const cJSON *tc = cJSON_GetObjectItemCaseSensitive(c->cfg, "text_config");
	char pointer[96];
	hf_ctx t;

	if (tc && !cJSON_IsNull(tc) && !cJSON_IsObject(tc)) {
		hf_fail_key(c, "text_config", "text_config must be an object (the decoder's config)");
		return;
	}
	snprintf(pointer, sizeof(pointer), "%s/text_config", c->pointer);
	t = (hf_ctx){cJSON_IsObject(tc) ? tc : NULL, pointer, c->err, c->st, NULL, NULL, c->decode_type};
	m->inv.roots[MP_ROOT_DECODER] = "model.language_model.";
	mllama_text(&t, m);
	c->st = t.st;
	if (c->st != MP_OK)
		return;
	snprintf(m->json_pointer, sizeof(m->json_pointer), "%.63s", pointer);
	c->text = t.cfg;
	mllama_vision(c, m);
}

/* ----- IDEFICS (modeling_idefics.py, perceiver.py, vision.py) ------------------------------------------------------- */

/* One matrix of the decoder's own, read per token as one more product (MP_STEP_EXTRA), `count` of it. */
static void step_mat(mp_model *m, const char *path, const char *leaf, mp_tensor_kind kind, uint64_t rows,
                     uint64_t cols, uint64_t count)
{
	hf_tensor(m, MP_ROOT_DECODER, path, leaf, kind, MP_SPLIT_NONE, MP_STEP_EXTRA, false, rows, cols, count);
}

/*
 * The Perceiver resampler (use_resampler; IdeficsPerceiverConfig: 64 latents, depth 6, 16 heads of 96,
 * qk_layer_norms_perceiver) under model.perceiver_resampler.: latents [n, E]; per block (blocks.{i}.0) the context
 * and latents LayerNorms of E, LayerNorms of head_dim on q and k with qk_layer_norms_perceiver, q, k, v E -> heads x
 * head_dim and output_proj back, without biases; (blocks.{i}.1) a LayerNorm and fc E -> 4 E, c_proj back; a final
 * LayerNorm. E is the tower's width.
 */
static void idefics_perceiver(hf_ctx *top, mp_model *m, uint64_t E)
{
	char pointer[MP_POINTER_MAX];
	hf_ctx p;
	uint64_t n, depth, heads, hd, q;
	bool qk;
	const char *at = "perceiver_resampler.blocks.{i}.0", *ml = "perceiver_resampler.blocks.{i}.1";

	if (!hf_sub_config(top, "perceiver_config", pointer, sizeof(pointer), &p))
		return;
	n = hf_get_u64(&p, KEYS("resampler_n_latents"), 64);
	depth = hf_get_u64(&p, KEYS("resampler_depth"), 6);
	heads = hf_get_u64(&p, KEYS("resampler_n_heads"), 16);
	hd = hf_get_u64(&p, KEYS("resampler_head_dim"), 96);
	qk = hf_get_bool(&p, KEYS("qk_layer_norms_perceiver"), false);
	if (p.st == MP_OK && (n == 0 || n > (UINT64_C(1) << 20) || depth == 0 || depth > 64 || heads == 0 ||
	                      heads > 1024 || hd == 0 || hd > 4096))
		hf_fail_key(&p, n == 0 || n > (UINT64_C(1) << 20) ? "resampler_n_latents"
		               : depth == 0 || depth > 64          ? "resampler_depth"
		               : heads == 0 || heads > 1024        ? "resampler_n_heads"
		                                                   : "resampler_head_dim",
		            "the Perceiver resampler needs 1 to 2^20 latents, a depth from 1 to 64, 1 to 1024 heads and a "
		            "head_dim from 1 to 4096");
	top->st = p.st;
	if (top->st != MP_OK)
		return;
	q = heads * hd;
	own_mat(m, MP_ROOT_DECODER, "perceiver_resampler", "latents", MP_TK_PROJECTOR, MP_SPLIT_NONE, n, E, 1, 0);
	own_vec(m, MP_ROOT_DECODER, at, "context_layer_norm.weight", MP_TK_PROJECTOR, E, depth);
	own_vec(m, MP_ROOT_DECODER, at, "context_layer_norm.bias", MP_TK_PROJECTOR, E, depth);
	own_vec(m, MP_ROOT_DECODER, at, "latents_layer_norm.weight", MP_TK_PROJECTOR, E, depth);
	own_vec(m, MP_ROOT_DECODER, at, "latents_layer_norm.bias", MP_TK_PROJECTOR, E, depth);
	if (qk) {
		own_vec(m, MP_ROOT_DECODER, at, "q_layer_norm.weight", MP_TK_PROJECTOR, hd, depth);
		own_vec(m, MP_ROOT_DECODER, at, "q_layer_norm.bias", MP_TK_PROJECTOR, hd, depth);
		own_vec(m, MP_ROOT_DECODER, at, "k_layer_norm.weight", MP_TK_PROJECTOR, hd, depth);
		own_vec(m, MP_ROOT_DECODER, at, "k_layer_norm.bias", MP_TK_PROJECTOR, hd, depth);
	}
	own_mat(m, MP_ROOT_DECODER, at, "q_proj.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, q, E, depth, 0);
	own_mat(m, MP_ROOT_DECODER, at, "k_proj.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, q, E, depth, 0);
	own_mat(m, MP_ROOT_DECODER, at, "v_proj.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, q, E, depth, 0);
	own_mat(m, MP_ROOT_DECODER, at, "output_proj.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, E, q, depth, 0);
	own_vec(m, MP_ROOT_DECODER, ml, "ln.weight", MP_TK_PROJECTOR, E, depth);
	own_vec(m, MP_ROOT_DECODER, ml, "ln.bias", MP_TK_PROJECTOR, E, depth);
	own_mat(m, MP_ROOT_DECODER, ml, "fc.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, 4 * E, E, depth, 0);
	own_mat(m, MP_ROOT_DECODER, ml, "c_proj.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, E, 4 * E, depth, 0);
	own_vec(m, MP_ROOT_DECODER, "perceiver_resampler", "layer_norm.weight", MP_TK_PROJECTOR, E, 1);
	own_vec(m, MP_ROOT_DECODER, "perceiver_resampler", "layer_norm.bias", MP_TK_PROJECTOR, E, 1);
}

/*
 * IDEFICS (IdeficsConfig, IdeficsForVisionText2Text; untied by default): a Llama decoder under model. (vocab 32000,
 * hidden 4096, FFN 11008, 32 layers, 32 heads, 2048 positions; IdeficsAttention's keys and values have as many heads
 * as the queries, of hidden_size // heads, which must divide: num_key_value_heads and head_dim are not read) with
 * additional_vocab_size rows more in embed_tokens.additional_embedding and lm_head.additional_fc (tied with the rest);
 * before every cross_layer_interval-th layer a gated cross-attention layer (num_hidden_layers // interval of them,
 * gated_cross_attn_layers.{i}): tanh gates alpha_cross_attn and alpha_dense ([1] for alpha_type "float", [1, 1, h] for
 * "vector"), cross_attn q h -> h, k and v from the tower's width, o, RMSNorms of head_dim on q and k with
 * qk_layer_norms, a gated MLP of intermediate_size and two RMSNorms; the CLIP-style tower under model.vision_model.
 * (IdeficsVisionConfig: embed_dim 768, MLP 5120, 32 layers, 16 heads, 224 px images of 14 px patches, a patch
 * convolution without bias); with use_resampler the Perceiver above. The cross-attention layers run with every token
 * (IdeficsModel has no text-only forward) and keep no cache (their image keys and values are recomputed); the KV
 * cache is the self-attention layers'.
 */
void mpm_read_idefics(hf_ctx *c, mp_model *m)
{
	static const mpm_dense d = {.vocab_size = 32000,
	                            .hidden_size = 4096,
	                            .intermediate_size = 11008,
	                            .num_layers = 32,
	                            .num_heads = 32,
	                            .max_positions = 2048,
	                            .norms = 2};
	const cJSON *ty, *in;
	uint64_t h, f, add, interval, X, E, hd;
	bool vector, qk;

	mpm_read_dense(c, &d, m);
	if (c->st == MP_OK && (m->num_heads == 0 || m->hidden_size % m->num_heads != 0))
		hf_fail_key(c, "num_attention_heads",
		            "hidden_size must be a multiple of num_attention_heads (IdeficsAttention raises ValueError)");
	if (c->st != MP_OK)
		return;
	h = m->hidden_size;
	f = m->intermediate_size;
	m->num_kv_heads = m->num_heads;
	m->head_dim = hd = h / m->num_heads;
	add = hf_get_u64(c, KEYS("additional_vocab_size"), 0);
	interval = hf_get_u64(c, KEYS("cross_layer_interval"), 1);
	qk = hf_get_bool(c, KEYS("qk_layer_norms"), false);
	ty = cJSON_GetObjectItemCaseSensitive(c->cfg, "alpha_type");
	in = cJSON_GetObjectItemCaseSensitive(c->cfg, "alpha_initializer");
	vector = cJSON_IsString(ty) && strcmp(ty->valuestring, "vector") == 0;
	if (c->st == MP_OK && ty && !cJSON_IsNull(ty) && !vector &&
	    !(cJSON_IsString(ty) && strcmp(ty->valuestring, "float") == 0))
		hf_fail_key(c, "alpha_type", "alpha_type must be \"float\" or \"vector\" (IdeficsGatedCrossAttentionLayer "
		                             "raises ValueError otherwise)");
	if (c->st == MP_OK && in && !cJSON_IsNull(in) &&
	    !(cJSON_IsString(in) && (strcmp(in->valuestring, "zeros") == 0 || strcmp(in->valuestring, "ones") == 0 ||
	                             strcmp(in->valuestring, "normal") == 0 || strcmp(in->valuestring, "gaussian") == 0 ||
	                             strcmp(in->valuestring, "random") == 0)))
		hf_fail_key(c, "alpha_initializer",
		            "alpha_initializer must be \"zeros\", \"ones\", \"normal\", \"gaussian\" or \"random\" "
		            "(IdeficsGatedCrossAttentionLayer raises NotImplementedError otherwise)");
	if (c->st == MP_OK && (interval == 0 || add > (UINT64_C(1) << 24)))
		hf_fail_key(c, interval == 0 ? "cross_layer_interval" : "additional_vocab_size",
		            "cross_layer_interval must be at least 1 (the layers are divided by it) and "
		            "additional_vocab_size at most 2^24");
	/* IdeficsVisionConfig: embed_dim (attribute_map: hidden_size) 768, MLP 5120, 32 layers, 16 heads, 224 / 14 */
	E = hf_clip_vision(c, KEYS("embed_dim", "hidden_size"), &(hf_clip_shape){768, 5120, 32, 16, 224, 14},
	                   "model.vision_model.", "model.", m);
	if (c->st != MP_OK)
		return;
	if (add) {
		own_mat(m, MP_ROOT_DECODER, "embed_tokens", "additional_embedding.weight", MP_TK_EMBEDDING, MP_SPLIT_NONE,
		        add, h, 1, 0);
		if (!m->tie_word_embeddings)
			hf_tensor(m, MP_ROOT_TOP, "lm_head", "additional_fc.weight", MP_TK_LM_HEAD, MP_SPLIT_ROWS,
			          MP_STEP_LM_HEAD, false, add, h, 1);
	}
	X = m->num_layers / interval;
	{
		const char *g = "gated_cross_attn_layers.{i}", *a = "gated_cross_attn_layers.{i}.cross_attn",
		           *ml = "gated_cross_attn_layers.{i}.mlp";
		uint64_t alpha[3] = {1, 1, vector ? h : 1};

		hf_shape(m, MP_ROOT_DECODER, g, "alpha_cross_attn", MP_TK_ATTENTION, 0, vector ? alpha : alpha + 2,
		         vector ? 3 : 1, X);
		hf_shape(m, MP_ROOT_DECODER, g, "alpha_dense", MP_TK_MLP, 0, vector ? alpha : alpha + 2, vector ? 3 : 1, X);
		step_mat(m, a, "q_proj.weight", MP_TK_ATTENTION, h, h, X);
		own_mat(m, MP_ROOT_DECODER, a, "k_proj.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, h, E, X, 0);
		own_mat(m, MP_ROOT_DECODER, a, "v_proj.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, h, E, X, 0);
		step_mat(m, a, "o_proj.weight", MP_TK_ATTENTION, h, h, X);
		if (qk) {
			own_vec(m, MP_ROOT_DECODER, a, "q_layer_norm.weight", MP_TK_ATTENTION, hd, X);
			own_vec(m, MP_ROOT_DECODER, a, "k_layer_norm.weight", MP_TK_ATTENTION, hd, X);
		}
		step_mat(m, ml, "gate_proj.weight", MP_TK_MLP, f, h, X);
		step_mat(m, ml, "up_proj.weight", MP_TK_MLP, f, h, X);
		step_mat(m, ml, "down_proj.weight", MP_TK_MLP, h, f, X);
		own_vec(m, MP_ROOT_DECODER, g, "input_layernorm.weight", MP_TK_NORM, h, X);
		own_vec(m, MP_ROOT_DECODER, g, "post_attention_layernorm.weight", MP_TK_NORM, h, X);
	}
	if (hf_get_bool(c, KEYS("use_resampler"), false))
		idefics_perceiver(c, m, E);
}
