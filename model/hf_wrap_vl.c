/*
 * hf_wrap_vl.c: vision-language wrappers whose towers planner/vision.c has no kind for, each listed here under
 * transformers 5.24's names: LFM3-VL (modeling_lfm3_vl.py: a tower of gated depthwise-convolution and GQA attention
 * layers, Lfm3VlMultiModalProjector, the LFM3 decoder). The decoder is read through its text_config's row; the KV cache
 * is the decoder's alone (the towers run once per image and keep nothing per token).
 */
#include <stdio.h>
#include <string.h>

#include "hf_internal.h"
#include "model.h"

/* A matrix rows x cols (or, rows 0, a vector of cols) of kind k under root, count of it. */
static void put(mp_model *m, uint8_t root, const char *path, const char *leaf, mp_tensor_kind k, uint64_t rows,
                uint64_t cols, uint64_t count)
{
	if (count)
		hf_tensor(m, root, path, leaf, k, MP_SPLIT_NONE, MP_STEP_NONE, rows == 0, rows ? rows : 1, cols, count);
}

/*
 * layer_types of LFM3-VL's tower into *attention (how many layers are attention layers: Lfm3VlVisionLayer builds
 * self_attn where the entry is not "conv", a Lfm3VlVisionShortConv where it is). Absent: Lfm3VlVisionConfig's
 * __post_init__, "conv" at layers 0, 1 and every odd layer, "full_attention" at the other even ones (6 of the default
 * 14). A list must have one entry per layer (PreTrainedConfig's layer_types validation) of "conv", "full_attention"
 * or "attention" (its legacy spelling); anything else is a 422 naming layer_types.
 */
static void lfm3_vl_layers(hf_ctx *v, uint64_t L, uint64_t *attention)
{
	const cJSON *lt = v->cfg ? cJSON_GetObjectItemCaseSensitive(v->cfg, "layer_types") : NULL, *e;
	uint64_t n = 0, i = 0;

	if (lt == NULL || cJSON_IsNull(lt)) {
		for (i = 2; i < L; i += 2)
			n++;
		*attention = n;
		return;
	}
	if (!cJSON_IsArray(lt) || (uint64_t)cJSON_GetArraySize(lt) != L) {
		hf_fail_key(v, "layer_types", "layer_types must be a list of one entry per layer (num_hidden_layers)");
		return;
	}
	cJSON_ArrayForEach(e, lt)
	{
		if (!cJSON_IsString(e) || (strcmp(e->valuestring, "conv") != 0 &&
		                           strcmp(e->valuestring, "full_attention") != 0 &&
		                           strcmp(e->valuestring, "attention") != 0)) {
			hf_fail_key(v, "layer_types",
			            "each layer_types entry must be \"conv\" (a gated depthwise convolution) or "
			            "\"full_attention\" (Lfm3VlVisionLayer)");
			return;
		}
		n += strcmp(e->valuestring, "conv") != 0;
	}
	*attention = n;
}

/*
 * LFM3-VL (Lfm3VlConfig: the LFM3 decoder's class defaults for text_config, tied by the wrapper's
 * tie_word_embeddings, default true; projector_hidden_size 4096, projector_bias true. Lfm3VlVisionConfig: hidden 1024,
 * MLP 2560, 14 layers, 16 heads, 8 KV heads, 3 channels, 16 px patches x 2 frames, spatial_merge_size 2,
 * conv_kernel_size 3). The tower under model.vision_tower.: patch_embed a Linear(channels x temporal x patch^2, h)
 * without a bias, embedding_norm; per layer operator_norm and ffn_norm (RMSNorms of h), the SwiGLU feed_forward w1, w3
 * (inter x h) and w2 (h x inter), and either self_attn (q_proj heads x d, k_proj and v_proj kv x d rows, out_proj h x
 * heads x d, q_norm and k_norm of d = h // heads; no biases) or conv (in_proj 3h x h, spatial_conv a depthwise Conv2d
 * [h, 1, k, k], out_proj h x h). Its axial RoPE keeps no persistent buffer. The projector under
 * model.multi_modal_projector.: layer_norm a LayerNorm of h, linear_1 (h x merge^2 -> projector_hidden_size) and
 * linear_2 (-> the decoder's width), biased with projector_bias.
 * Default: tower 14 x (2 x 1024 + 3 x 2560 x 1024) + 8 conv layers x (4 x 1024^2 + 9 x 1024) + 6 attention layers x
 * (2 x 1024^2 + 2 x 512 x 1024 + 2 x 64) + 1536 x 1024 + 1024 = 164,206,336; projector 2 x 1024 + 4096 x 4096 + 4096 +
 * 2048 x 4096 + 2048 = 25,174,016. Errors: a 422 naming the key of a head count that does not divide (KV heads must
 * divide heads: repeat_kv), a size of 0 or past the bounds below, a bad layer_types.
 */
void mpm_read_lfm3_vl(hf_ctx *c, mp_model *m)
{
	char pointer[MP_POINTER_MAX];
	hf_ctx v;
	uint64_t h, inter, L, heads, kv, ch, patch, tp, merge, k, d, n_attn = 0, ph, out;
	bool bias;
	const uint8_t T = MP_ROOT_TOWER, P = MP_ROOT_PROJECTOR;
	const char *lay = "layers.{i}", *attn = "layers.{i}.self_attn", *conv = "layers.{i}.conv",
	           *ffn = "layers.{i}.feed_forward";

	if (!hf_wrap_read_text(c, "lfm3", false, m))
		return;
	m->inv.roots[MP_ROOT_DECODER] = "model.language_model.";
	hf_wrap_tie(c, m, true);
	if (c->st != MP_OK || !hf_sub_config(c, "vision_config", pointer, sizeof(pointer), &v))
		return;
	h = hf_get_u64(&v, KEYS("hidden_size"), 1024);
	inter = hf_get_u64(&v, KEYS("intermediate_size"), 2560);
	L = hf_get_u64(&v, KEYS("num_hidden_layers"), 14);
	heads = hf_get_u64(&v, KEYS("num_attention_heads"), 16);
	kv = hf_get_u64(&v, KEYS("num_key_value_heads"), 8);
	ch = hf_get_u64(&v, KEYS("in_channels"), 3);
	patch = hf_get_u64(&v, KEYS("patch_size"), 16);
	tp = hf_get_u64(&v, KEYS("temporal_patch_size"), 2);
	merge = hf_get_u64(&v, KEYS("spatial_merge_size"), 2);
	k = hf_get_u64(&v, KEYS("conv_kernel_size"), 3);
	if (v.st == MP_OK && (h == 0 || h > (UINT64_C(1) << 20) || inter == 0 || inter > (UINT64_C(1) << 24) || L == 0 ||
	                      L > MP_MAX_LAYERS || ch == 0 || ch > 256 || patch == 0 || patch > 1024 || tp == 0 ||
	                      tp > 64 || merge == 0 || merge > 64 || k == 0 || k > 64))
		hf_fail_key(&v, h == 0 || h > (UINT64_C(1) << 20)           ? "hidden_size"
		                : inter == 0 || inter > (UINT64_C(1) << 24) ? "intermediate_size"
		                : L == 0 || L > MP_MAX_LAYERS                ? "num_hidden_layers"
		                : ch == 0 || ch > 256                        ? "in_channels"
		                : patch == 0 || patch > 1024                 ? "patch_size"
		                : tp == 0 || tp > 64                         ? "temporal_patch_size"
		                : merge == 0 || merge > 64                   ? "spatial_merge_size"
		                                                             : "conv_kernel_size",
		            "the image tower needs hidden_size from 1 to 2^20, intermediate_size from 1 to 2^24, 1 to 1024 "
		            "layers, in_channels from 1 to 256, patch_size from 1 to 1024, temporal_patch_size, "
		            "spatial_merge_size and conv_kernel_size from 1 to 64");
	if (v.st == MP_OK && (heads == 0 || heads > h))
		hf_fail_key(&v, "num_attention_heads", "num_attention_heads must be from 1 to the tower's hidden_size");
	if (v.st == MP_OK && (kv == 0 || heads % kv != 0))
		hf_fail_key(&v, "num_key_value_heads",
		            "num_key_value_heads must be at least 1 and divide num_attention_heads (Lfm3VlVisionAttention's "
		            "num_key_value_groups)");
	if (v.st == MP_OK)
		lfm3_vl_layers(&v, L, &n_attn);
	c->st = v.st;
	ph = hf_get_u64(c, KEYS("projector_hidden_size"), 4096);
	bias = hf_get_bool(c, KEYS("projector_bias"), true);
	if (c->st == MP_OK && (ph == 0 || ph > (UINT64_C(1) << 24)))
		hf_fail_key(c, "projector_hidden_size", "projector_hidden_size must be from 1 to 2^24");
	if (c->st != MP_OK)
		return;
	d = h / heads;
	out = m->hidden_size;
	mp_inventory_root(&m->inv, T, "model.vision_tower.");
	put(m, T, NULL, "patch_embed.weight", MP_TK_VISION, h, ch * tp * patch * patch, 1);
	put(m, T, NULL, "embedding_norm.weight", MP_TK_VISION, 0, h, 1);
	put(m, T, lay, "operator_norm.weight", MP_TK_VISION, 0, h, L);
	put(m, T, lay, "ffn_norm.weight", MP_TK_VISION, 0, h, L);
	put(m, T, ffn, "w1.weight", MP_TK_VISION, inter, h, L);
	put(m, T, ffn, "w3.weight", MP_TK_VISION, inter, h, L);
	put(m, T, ffn, "w2.weight", MP_TK_VISION, h, inter, L);
	put(m, T, attn, "q_proj.weight", MP_TK_VISION, heads * d, h, n_attn);
	put(m, T, attn, "k_proj.weight", MP_TK_VISION, kv * d, h, n_attn);
	put(m, T, attn, "v_proj.weight", MP_TK_VISION, kv * d, h, n_attn);
	put(m, T, attn, "out_proj.weight", MP_TK_VISION, h, heads * d, n_attn);
	put(m, T, attn, "q_norm.weight", MP_TK_VISION, 0, d, n_attn);
	put(m, T, attn, "k_norm.weight", MP_TK_VISION, 0, d, n_attn);
	put(m, T, conv, "in_proj.weight", MP_TK_VISION, 3 * h, h, L - n_attn);
	put(m, T, conv, "out_proj.weight", MP_TK_VISION, h, h, L - n_attn);
	if (L > n_attn) {
		uint64_t dw[4] = {h, 1, k, k};

		hf_shape(m, T, conv, "spatial_conv.weight", MP_TK_VISION, 0, dw, 4, L - n_attn);
	}
	mp_inventory_root(&m->inv, P, "model.multi_modal_projector.");
	put(m, P, NULL, "layer_norm.weight", MP_TK_PROJECTOR, 0, h, 1);
	put(m, P, NULL, "layer_norm.bias", MP_TK_PROJECTOR, 0, h, 1);
	put(m, P, NULL, "linear_1.weight", MP_TK_PROJECTOR, ph, h * merge * merge, 1);
	put(m, P, NULL, "linear_1.bias", MP_TK_PROJECTOR, 0, ph, bias);
	put(m, P, NULL, "linear_2.weight", MP_TK_PROJECTOR, out, ph, 1);
	put(m, P, NULL, "linear_2.bias", MP_TK_PROJECTOR, 0, out, bias);
}

/* A LayerNorm (weight and bias of n) named leaf_w, leaf_b under root and path, count of it. */
static void layer_norm(mp_model *m, uint8_t root, const char *path, const char *leaf_w, const char *leaf_b,
                       mp_tensor_kind k, uint64_t n, uint64_t count)
{
	put(m, root, path, leaf_w, k, 0, n, count);
	put(m, root, path, leaf_b, k, 0, n, count);
}

/* One of Granite-Docling's connector paths (GraniteDoclingConnectorPath) of pixel-shuffle factor sf under path (the
 * projector root): projection out x h sf^2 without a bias; per DeepStack tap a merger (layer_norm of h sf^2, linear_1 to
 * out and linear_2 out x out, biased). */
static void docling_path(mp_model *m, const char *path, const char *mergers, uint64_t h, uint64_t sf, uint64_t out,
                         uint64_t taps)
{
	const uint8_t P = MP_ROOT_PROJECTOR;
	uint64_t in = h * sf * sf;

	put(m, P, path, "projection.weight", MP_TK_PROJECTOR, out, in, 1);
	layer_norm(m, P, mergers, "layer_norm.weight", "layer_norm.bias", MP_TK_PROJECTOR, in, taps);
	put(m, P, mergers, "linear_1.weight", MP_TK_PROJECTOR, out, in, taps);
	put(m, P, mergers, "linear_1.bias", MP_TK_PROJECTOR, 0, out, taps);
	put(m, P, mergers, "linear_2.weight", MP_TK_PROJECTOR, out, out, taps);
	put(m, P, mergers, "linear_2.bias", MP_TK_PROJECTOR, 0, out, taps);
}

/*
 * Granite-Docling (GraniteDoclingConfig: its Granite decoder, granite_docling_text's row, under model.text_model.; tied
 * by default; density_router_hidden_size null. GraniteDoclingVisionConfig: Idefics3's SigLIP tower without a head,
 * hidden 768, MLP 3072, 12 layers, 12 heads, 512 px tiles of 16 px patches, out_hidden_size 1024, scale_factor 4,
 * deepstack_visual_indexes [3, 7, 10], use_fine_route true). The tower is planner/vision.c's SigLIP under
 * model.vision_model. ((image / patch)^2 learned positions); the connector under model.vision_model.connector.: ln_in (a
 * LayerNorm of h), the coarse path of scale_factor and, with use_fine_route, the fine one of scale_factor // 2 (each:
 * docling_path, one DeepStack merger per entry of deepstack_visual_indexes), ln_mid, mlp_fc2 out x out without a bias,
 * ln_out. The density router (with density_router_hidden_size r) under model.density_router.: att Linear(h, 1), norm a
 * LayerNorm of h, fc1 Linear(h, r), fc2 Linear(r, 1), biased. The fixed 2-D sine-cosine positions are a buffer no
 * checkpoint holds.
 * Default: tower 86,433,024 (SigLIP-B/16 over 1,024 positions, no head: 12 layers of 7,087,872, the patch convolution
 * 590,592, positions 786,432, post_layernorm 1,536); connector 2 x 768 + coarse (1,024 x 12,288 + 3 x (2 x 12,288 +
 * 12,288 x 1,024 + 1,024 + 1,024^2 + 1,024)) + fine (1,024 x 3,072 + 3 x (2 x 3,072 + 3,072 x 1,024 + 1,024 + 1,024^2 +
 * 1,024)) + 2 x 2 x 1,024 + 1,024^2 = 70,364,672.
 * Errors (422, naming the key): out_hidden_size other than the decoder's hidden_size (validate_architecture) or not a
 * multiple of 4 (the sine-cosine table), heads that do not divide the tower's width, scale_factor below 2 with the fine
 * route (its factor // 2 divides the grid), a density router without the fine route, a size of 0 or past the bounds.
 */
void mpm_read_granite_docling(hf_ctx *c, mp_model *m)
{
	char pointer[MP_POINTER_MAX];
	hf_ctx v;
	const cJSON *ds;
	mp_vision *t = &m->vision;
	uint64_t h, inter, L, heads, ch, image, patch, out, sf, taps = 3, r;
	bool fine;
	const uint8_t P = MP_ROOT_PROJECTOR, X = MP_ROOT_EXTRA;

	if (!hf_wrap_read_text(c, "granite_docling_text", false, m))
		return;
	m->inv.roots[MP_ROOT_DECODER] = "model.text_model.";
	hf_wrap_tie(c, m, true);
	if (c->st != MP_OK || !hf_sub_config(c, "vision_config", pointer, sizeof(pointer), &v))
		return;
	h = hf_get_u64(&v, KEYS("hidden_size"), 768);
	inter = hf_get_u64(&v, KEYS("intermediate_size"), 3072);
	L = hf_get_u64(&v, KEYS("num_hidden_layers"), 12);
	heads = hf_get_u64(&v, KEYS("num_attention_heads"), 12);
	ch = hf_get_u64(&v, KEYS("num_channels"), 3);
	image = hf_get_u64(&v, KEYS("image_size"), 512);
	patch = hf_get_u64(&v, KEYS("patch_size"), 16);
	out = hf_get_u64(&v, KEYS("out_hidden_size"), 1024);
	sf = hf_get_u64(&v, KEYS("scale_factor"), 4);
	fine = hf_get_bool(&v, KEYS("use_fine_route"), true);
	ds = v.cfg ? cJSON_GetObjectItemCaseSensitive(v.cfg, "deepstack_visual_indexes") : NULL;
	if (v.st == MP_OK && ds && !cJSON_IsNull(ds)) {
		if (!cJSON_IsArray(ds) || cJSON_GetArraySize(ds) > 1024)
			hf_fail_key(&v, "deepstack_visual_indexes",
			            "deepstack_visual_indexes must be a list of at most 1024 layer indices (one DeepStack "
			            "merger each)");
		else
			taps = (uint64_t)cJSON_GetArraySize(ds);
	}
	if (v.st == MP_OK && (h == 0 || h > (UINT64_C(1) << 20) || L == 0 || L > MP_MAX_LAYERS || inter == 0 ||
	                      inter > (UINT64_C(1) << 24) || ch == 0 || ch > 256 || patch == 0 || patch > image ||
	                      image > (UINT64_C(1) << 16) || sf == 0 || sf > 64))
		hf_fail_key(&v, h == 0 || h > (UINT64_C(1) << 20)           ? "hidden_size"
		                : L == 0 || L > MP_MAX_LAYERS                ? "num_hidden_layers"
		                : inter == 0 || inter > (UINT64_C(1) << 24) ? "intermediate_size"
		                : ch == 0 || ch > 256                        ? "num_channels"
		                : sf == 0 || sf > 64                         ? "scale_factor"
		                                                             : "patch_size",
		            "the image tower needs hidden_size from 1 to 2^20, num_hidden_layers from 1 to 1024, "
		            "intermediate_size from 1 to 2^24, 1 to 256 channels, scale_factor from 1 to 64 and a patch_size "
		            "from 1 to image_size (at most 65536)");
	if (v.st == MP_OK && (heads == 0 || h % heads != 0))
		hf_fail_key(&v, "num_attention_heads",
		            "hidden_size must be a multiple of num_attention_heads (Idefics3VisionAttention raises "
		            "ValueError)");
	if (v.st == MP_OK && (out != m->hidden_size || out % 4 != 0))
		hf_fail_key(&v, "out_hidden_size",
		            out != m->hidden_size ? "out_hidden_size must equal text_config's hidden_size "
		                                    "(GraniteDoclingConfig.validate_architecture)"
		                                  : "out_hidden_size must be a multiple of 4 (the connector's 2-D sine-cosine "
		                                    "positions)");
	if (v.st == MP_OK && fine && sf < 2)
		hf_fail_key(&v, "scale_factor",
		            "with use_fine_route, scale_factor must be at least 2 (the fine path's factor is scale_factor "
		            "// 2, which divides the token grid)");
	c->st = v.st;
	r = hf_get_u64(c, KEYS("density_router_hidden_size"), 0);
	if (c->st == MP_OK && hf_has(c, "density_router_hidden_size") &&
	    !cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(c->cfg, "density_router_hidden_size")) &&
	    (r == 0 || r > (UINT64_C(1) << 24) || !fine))
		hf_fail_key(c, "density_router_hidden_size",
		            fine ? "density_router_hidden_size must be null or from 1 to 2^24"
		                 : "the density router selects the fine connector path: it needs vision_config's "
		                   "use_fine_route true (GraniteDoclingConfig.validate_architecture)");
	if (c->st != MP_OK)
		return;
	t->tower = MP_TOWER_SIGLIP;
	t->tower_root = "model.vision_model.";
	t->projector_root = "model.vision_model.connector.";
	t->hidden = h;
	t->intermediate = inter;
	t->layers = L;
	t->channels = ch;
	t->patch = patch;
	t->positions = (image / patch) * (image / patch);
	t->norm = MP_NORM_LAYER;
	t->patch_bias = t->post_norm = t->attn_bias = t->mlp_bias = true;
	t->map_head = false;
	t->projector = MP_PROJECTOR_NONE;
	t->merge = 1;
	t->out_hidden = out;
	mp_inventory_root(&m->inv, P, "model.vision_model.connector.");
	layer_norm(m, P, NULL, "ln_in.weight", "ln_in.bias", MP_TK_PROJECTOR, h, 1);
	docling_path(m, "coarse", "coarse.deepstack_mergers.{i}", h, sf, out, taps);
	if (fine)
		docling_path(m, "fine", "fine.deepstack_mergers.{i}", h, sf / 2, out, taps);
	layer_norm(m, P, NULL, "ln_mid.weight", "ln_mid.bias", MP_TK_PROJECTOR, out, 1);
	put(m, P, NULL, "mlp_fc2.weight", MP_TK_PROJECTOR, out, out, 1);
	layer_norm(m, P, NULL, "ln_out.weight", "ln_out.bias", MP_TK_PROJECTOR, out, 1);
	if (r) {
		mp_inventory_root(&m->inv, X, "model.density_router.");
		put(m, X, NULL, "att.weight", MP_TK_PROJECTOR, 1, h, 1);
		put(m, X, NULL, "att.bias", MP_TK_PROJECTOR, 0, 1, 1);
		layer_norm(m, X, NULL, "norm.weight", "norm.bias", MP_TK_PROJECTOR, h, 1);
		put(m, X, NULL, "fc1.weight", MP_TK_PROJECTOR, r, h, 1);
		put(m, X, NULL, "fc1.bias", MP_TK_PROJECTOR, 0, r, 1);
		put(m, X, NULL, "fc2.weight", MP_TK_PROJECTOR, 1, r, 1);
		put(m, X, NULL, "fc2.bias", MP_TK_PROJECTOR, 0, 1, 1);
	}
}
