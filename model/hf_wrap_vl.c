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
#include "mpm_types.h"

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

/* tie_word_embeddings of a wrapper whose __post_init__ ties when its text_config does (FastVlmConfig, HunYuanVLConfig):
 * the wrapper's key (default dflt) or the decoder's, m->tie_word_embeddings holding the decoder's on entry. */
static void tie_either(hf_ctx *c, mp_model *m, bool dflt)
{
	bool text_tie = m->tie_word_embeddings;

	hf_wrap_tie(c, m, dflt);
	m->tie_word_embeddings = m->tie_word_embeddings || text_tie;
}

/*
 * A timm tower listed by its generated table (n rows of table, under model.vision_tower.) and the two-layer projector
 * under model.multi_modal_projector. of FastVLM and Perception LM: linear_1 from in_width (the tower's output width,
 * elements) to the decoder's width m->hidden_size and linear_2 square, with biases when bias. The table is static:
 * m's inventory points at it, nothing is allocated.
 */
static void timm_tower_projector(mp_model *m, const mp_tensor *table, size_t n, uint64_t in_width, bool bias)
{
	const uint64_t out = m->hidden_size;
	const uint8_t P = MP_ROOT_PROJECTOR;

	mp_inventory_root(&m->inv, MP_ROOT_TOWER, "model.vision_tower.");
	m->inv.ext = table;
	m->inv.n_ext = n;
	mp_inventory_root(&m->inv, P, "model.multi_modal_projector.");
	put(m, P, NULL, "linear_1.weight", MP_TK_PROJECTOR, out, in_width, 1);
	put(m, P, NULL, "linear_1.bias", MP_TK_PROJECTOR, 0, out, bias);
	put(m, P, NULL, "linear_2.weight", MP_TK_PROJECTOR, out, out, 1);
	put(m, P, NULL, "linear_2.bias", MP_TK_PROJECTOR, 0, out, bias);
}

/*
 * FastVLM (FastVlmConfig: Qwen2 with its own defaults when text_config is absent (its SubConfigSpec's init_kwargs:
 * vocab 152128, hidden 3584, MLP 18944, 28 layers, 28 heads, kv 4), untied unless either config ties
 * (__post_init__); vision_config timm_wrapper fastvit_mci3 with model_args {"inference_mode": true} and hidden_size 3072
 * when absent). The tower under model.vision_tower. is timm's fastvit_mci3 as one static table (hf_fast_vlm_timm.c,
 * 122,714,208 parameters and its BatchNorms' running statistics); the projector under model.multi_modal_projector.
 * (FastVlmMultiModalProjector): linear_1 from vision_config's hidden_size to the decoder's width and linear_2 square,
 * biased with multimodal_projector_bias (default true). Default: projector 3,584 x 3,072 + 3,584 x 3,584 + 2 x 3,584 =
 * 23,862,272; 7,762,651,744 in all.
 * Errors (422, naming the key): another timm architecture or other model_args (their shapes are timm's code, which
 * memplan does not model), a vision_config without hidden_size (the projector's input; transformers raises
 * AttributeError), vision_feature_select_strategy other than "full" or vision_feature_layer other than -1
 * (FastVlmConfig.validate_architecture).
 */
void mpm_read_fast_vlm(hf_ctx *c, mp_model *m)
{
	const cJSON *tc = cJSON_GetObjectItemCaseSensitive(c->cfg, "text_config"), *vc, *arch, *args, *fl, *fs;
	char pointer[MP_POINTER_MAX];
	hf_ctx v;
	uint64_t vh = 3072;
	bool bias;

	if (!cJSON_IsObject(tc) && (tc == NULL || cJSON_IsNull(tc))) {
		/* the SubConfigSpec's init_kwargs over Qwen2Config's defaults (FastVLM-7B's decoder; the qwen2 row's
		 * modules, window rule and 32768 positions) */
		static const mpm_dense d = {.vocab_size = 152128,
		                            .hidden_size = 3584,
		                            .intermediate_size = 18944,
		                            .num_layers = 28,
		                            .num_heads = 28,
		                            .num_kv_heads = 4,
		                            .max_positions = 32768,
		                            .window_rule = MPM_WINDOW_FROM_LAYER,
		                            .window_pattern = 28,
		                            .norms = 2,
		                            .modules = MPM_QKV_BIAS_ALWAYS | MPM_MLP_BIAS_KEY};
		hf_ctx t = {NULL, c->pointer, c->err, c->st, NULL, NULL, c->decode_type};

		mpm_read_dense(&t, &d, m);
		c->st = t.st;
	} else if (!hf_wrap_read_text(c, "qwen2", false, m)) {
		return;
	}
	m->inv.roots[MP_ROOT_DECODER] = "model.language_model.";
	tie_either(c, m, false);
	bias = hf_get_bool(c, KEYS("multimodal_projector_bias"), true);
	fs = cJSON_GetObjectItemCaseSensitive(c->cfg, "vision_feature_select_strategy");
	fl = cJSON_GetObjectItemCaseSensitive(c->cfg, "vision_feature_layer");
	if (c->st == MP_OK && fs && !cJSON_IsNull(fs) && !(cJSON_IsString(fs) && strcmp(fs->valuestring, "full") == 0))
		hf_fail_key(c, "vision_feature_select_strategy",
		            "FastVLM takes vision_feature_select_strategy \"full\" only (FastVlmConfig.validate_architecture)");
	if (c->st == MP_OK && fl && !cJSON_IsNull(fl) && !(cJSON_IsNumber(fl) && fl->valuedouble == -1))
		hf_fail_key(c, "vision_feature_layer",
		            "FastVLM takes vision_feature_layer -1 only (FastVlmConfig.validate_architecture)");
	if (c->st != MP_OK || !hf_sub_config(c, "vision_config", pointer, sizeof(pointer), &v))
		return;
	vc = v.cfg;
	if (vc) {
		arch = cJSON_GetObjectItemCaseSensitive(vc, "architecture");
		args = cJSON_GetObjectItemCaseSensitive(vc, "model_args");
		if (!(cJSON_IsString(arch) && strcmp(arch->valuestring, "fastvit_mci3") == 0))
			hf_fail_key(&v, "architecture",
			            "the timm tower must be fastvit_mci3 (FastViTHD, the one memplan lists: another "
			            "architecture's shapes are timm's code; TimmWrapperConfig's own default is resnet50)");
		else if (!(cJSON_IsObject(args) && cJSON_GetArraySize(args) == 1 &&
		           cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(args, "inference_mode"))))
			hf_fail_key(&v, "model_args",
			            "model_args must be {\"inference_mode\": true}, as FastVLM's checkpoints (other arguments "
			            "reshape the timm tower, which memplan does not model)");
		else if (!hf_has(&v, "hidden_size"))
			hf_fail_key(&v, "hidden_size",
			            "vision_config needs hidden_size, the projector's input width (3072 for fastvit_mci3; "
			            "TimmWrapperConfig has no default)");
		vh = hf_get_u64(&v, KEYS("hidden_size"), 3072);
		if (v.st == MP_OK && (vh == 0 || vh > (UINT64_C(1) << 24)))
			hf_fail_key(&v, "hidden_size", "hidden_size must be from 1 to 2^24");
	}
	c->st = v.st;
	if (c->st != MP_OK)
		return;
	timm_tower_projector(m, mpm_fast_vlm_timm, mpm_fast_vlm_timm_count, vh, bias);
}

/*
 * HunyuanOCR (HunYuanVLConfig: hunyuan_vl_text's row for the decoder under model.language_model., read from text_config
 * or, when there is none, from the config's own keys (its __post_init__ folds a flat checkpoint's text keys into
 * text_config); tied when either config ties, both default true. HunYuanVLVisionConfig: hidden 1152, MLP 4304, 27
 * layers, 16 heads (attention_heads its other spelling), 3 channels, 16 px patches, spatial_merge_size 2,
 * max_image_size 2048). The tower under model.vision_tower.: embeddings.patch_embedding a biased Conv2d, a learned
 * position table of (max_image_size // patch)^2 + 1 rows; per layer LayerNorms layer_norm1 and layer_norm2, q, k, v and
 * o_proj of heads x (h // heads) rows with biases, mlp fc1 and fc2 with biases; patch_merger: proj_conv a Conv2d(h,
 * 2h, merge) and proj_out a Conv2d(2h, 4h, 1) with biases, mlp Linear(4h, the decoder's width) with a bias,
 * image_newline [4h], image_begin, image_end, image_sep [decoder width], RMSNorms before_rms [h] and after_rms [decoder
 * width]. The decoder's attention_head_dim and org_vocab_size are head_dim's and vocab_size's other spellings
 * (HunYuanVLTextConfig.attribute_map).
 * Default: tower 27 x 15,239,504 + 1,152 x 3 x 16 x 16 + 1,152 + 16,385 x 1,152 = 431,228,016, merger 2,304 x 1,152 x
 * 4 + 2,304 + 4,608 x 2,304 + 4,608 + 4,096 x 4,608 + 4,096 + 4,608 + 3 x 4,096 + 1,152 + 4,096 = 40,141,184; with
 * head_dim 128 (transformers 5.24 needs it: HunYuanVLDenseV1Attention's getattr finds the class default None),
 * 8,139,351,536 in all. Errors (422, naming the key): no head_dim (or attention_head_dim; no text_config at all names
 * text_config), an mrope_section that does not sum to head_dim / 2, vision heads of 0 or past the width, a size of 0
 * or past the bounds below.
 */
/* HunYuanVLTextConfig._validate_mrope_section: rope_parameters' mrope_section (xdrope_section, its legacy spelling),
 * when given, is a list of integers summing to head_dim / 2 (rounded down); a 422 naming rope_parameters otherwise, as
 * transformers raises "Illegal mrope partition". */
static void hunyuan_mrope_check(hf_ctx *t, uint64_t head_dim)
{
	const cJSON *rp = cJSON_GetObjectItemCaseSensitive(t->cfg, "rope_parameters"), *sec, *e;
	uint64_t sum = 0;

	if (!cJSON_IsObject(rp))
		rp = cJSON_GetObjectItemCaseSensitive(t->cfg, "rope_scaling");
	if (!cJSON_IsObject(rp))
		return;
	sec = cJSON_GetObjectItemCaseSensitive(rp, "mrope_section");
	if (sec == NULL || cJSON_IsNull(sec))
		sec = cJSON_GetObjectItemCaseSensitive(rp, "xdrope_section");
	if (sec == NULL || cJSON_IsNull(sec))
		return;
	if (cJSON_IsArray(sec) && cJSON_GetArraySize(sec) <= 64) {
		cJSON_ArrayForEach(e, sec)
		{
			if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble > 65536 ||
			    e->valuedouble != (double)(uint64_t)e->valuedouble) {
				sum = UINT64_MAX;
				break;
			}
			sum += (uint64_t)e->valuedouble;
		}
		if (sum == head_dim / 2)
			return;
	}
	hf_fail_key(t, cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(t->cfg, "rope_parameters")) ? "rope_parameters"
	                                                                                            : "rope_scaling",
	            "mrope_section must be a list of integers summing to head_dim / 2 (HunYuanVLTextConfig: Illegal mrope "
	            "partition)");
}

void mpm_read_hunyuan_vl(hf_ctx *c, mp_model *m)
{
	const cJSON *tc = cJSON_GetObjectItemCaseSensitive(c->cfg, "text_config");
	char pointer[MP_POINTER_MAX];
	hf_ctx v;
	uint64_t h, inter, L, heads, ch, patch, merge, image, edge, d, out;
	const uint8_t T = MP_ROOT_TOWER;
	const char *lay = "layers.{i}", *attn = "layers.{i}.self_attn", *mlp = "layers.{i}.mlp", *pm = "patch_merger";

	if (cJSON_IsObject(tc) || (tc && !cJSON_IsNull(tc))) {
		if (!hf_wrap_read_text(c, "hunyuan_vl_text", false, m))
			return;
	} else { /* flat: the decoder's keys at the top */
		hf_ctx t = {c->cfg, c->pointer, c->err, c->st, NULL, NULL, c->decode_type};
		char wrapper[sizeof(m->model_type)];

		snprintf(wrapper, sizeof(wrapper), "%s", m->model_type);
		t.decode_type(&t, "hunyuan_vl_text", true, m);
		/* tie_word_embeddings at the top is the wrapper's field, not folded: the decoder keeps its default, true */
		m->tie_word_embeddings = true;
		c->st = t.st;
		c->names = t.names;
		c->text = c->cfg;
		snprintf(m->model_type, sizeof(m->model_type), "%s", wrapper);
		if (c->st != MP_OK)
			return;
	}
	{
		hf_ctx t = {c->text ? c->text : NULL, m->json_pointer, c->err, c->st, NULL, NULL, c->decode_type};

		if (t.cfg == NULL || (!hf_has(&t, "head_dim") && !hf_has(&t, "attention_head_dim"))) {
			t.pointer = t.cfg ? m->json_pointer : c->pointer;
			hf_fail_key(&t, t.cfg ? "head_dim" : "text_config",
			            "head_dim is required: transformers 5.24 cannot build HunYuanVLTextConfig's default head_dim "
			            "None (HunYuanVLDenseV1Attention: head_dim ** -0.5); tencent/HunyuanOCR states 128");
		}
		if (t.cfg && !hf_has(&t, "head_dim") && hf_has(&t, "attention_head_dim"))
			m->head_dim = hf_get_u64(&t, KEYS("attention_head_dim"), m->head_dim);
		if (t.cfg && !hf_has(&t, "vocab_size") && hf_has(&t, "org_vocab_size"))
			m->vocab_size = hf_get_u64(&t, KEYS("org_vocab_size"), m->vocab_size);
		if (t.st == MP_OK && (m->head_dim == 0 || m->head_dim > (UINT64_C(1) << 16) || m->vocab_size == 0 ||
		                      m->vocab_size > (UINT64_C(1) << 32)))
			hf_fail_key(&t, m->head_dim == 0 || m->head_dim > (UINT64_C(1) << 16) ? "attention_head_dim"
			                                                                     : "org_vocab_size",
			            "attention_head_dim must be from 1 to 65536 and org_vocab_size from 1 to 2^32");
		if (t.st == MP_OK && t.cfg)
			hunyuan_mrope_check(&t, m->head_dim);
		c->st = t.st;
	}
	m->inv.roots[MP_ROOT_DECODER] = "model.language_model.";
	tie_either(c, m, true);
	if (c->st != MP_OK || !hf_sub_config(c, "vision_config", pointer, sizeof(pointer), &v))
		return;
	h = hf_get_u64(&v, KEYS("hidden_size"), 1152);
	inter = hf_get_u64(&v, KEYS("intermediate_size"), 4304);
	L = hf_get_u64(&v, KEYS("num_hidden_layers"), 27);
	heads = hf_get_u64(&v, KEYS("num_attention_heads", "attention_heads"), 16);
	ch = hf_get_u64(&v, KEYS("num_channels"), 3);
	patch = hf_get_u64(&v, KEYS("patch_size"), 16);
	merge = hf_get_u64(&v, KEYS("spatial_merge_size"), 2);
	image = hf_get_u64(&v, KEYS("max_image_size"), 2048);
	if (v.st == MP_OK && (h == 0 || h > (UINT64_C(1) << 20) || inter == 0 || inter > (UINT64_C(1) << 24) || L == 0 ||
	                      L > MP_MAX_LAYERS || ch == 0 || ch > 256 || patch == 0 || patch > 1024 || merge == 0 ||
	                      merge > 64 || image > (UINT64_C(1) << 20)))
		hf_fail_key(&v, h == 0 || h > (UINT64_C(1) << 20)           ? "hidden_size"
		                : inter == 0 || inter > (UINT64_C(1) << 24) ? "intermediate_size"
		                : L == 0 || L > MP_MAX_LAYERS                ? "num_hidden_layers"
		                : ch == 0 || ch > 256                        ? "num_channels"
		                : patch == 0 || patch > 1024                 ? "patch_size"
		                : merge == 0 || merge > 64                   ? "spatial_merge_size"
		                                                             : "max_image_size",
		            "the image tower needs hidden_size from 1 to 2^20, intermediate_size from 1 to 2^24, 1 to 1024 "
		            "layers, 1 to 256 channels, patch_size from 1 to 1024, spatial_merge_size from 1 to 64 and "
		            "max_image_size up to 2^20");
	if (v.st == MP_OK && (heads == 0 || heads > h))
		hf_fail_key(&v, hf_key_of(&v, KEYS("num_attention_heads", "attention_heads")),
		            "num_attention_heads must be from 1 to the tower's hidden_size");
	c->st = v.st;
	if (c->st != MP_OK)
		return;
	d = h / heads;
	edge = image / patch;
	out = m->hidden_size;
	mp_inventory_root(&m->inv, T, "model.vision_tower.");
	{
		uint64_t conv[4] = {h, ch, patch, patch}, pc[4] = {2 * h, h, merge, merge}, po[4] = {4 * h, 2 * h, 1, 1};

		hf_shape(m, T, "embeddings", "patch_embedding.weight", MP_TK_VISION, 0, conv, 4, 1);
		hf_shape(m, T, pm, "proj_conv.weight", MP_TK_PROJECTOR, 0, pc, 4, 1);
		hf_shape(m, T, pm, "proj_out.weight", MP_TK_PROJECTOR, 0, po, 4, 1);
	}
	put(m, T, "embeddings", "patch_embedding.bias", MP_TK_VISION, 0, h, 1);
	put(m, T, "embeddings", "position_embedding.weight", MP_TK_VISION, edge * edge + 1, h, 1);
	layer_norm(m, T, lay, "layer_norm1.weight", "layer_norm1.bias", MP_TK_VISION, h, L);
	layer_norm(m, T, lay, "layer_norm2.weight", "layer_norm2.bias", MP_TK_VISION, h, L);
	put(m, T, attn, "q_proj.weight", MP_TK_VISION, heads * d, h, L);
	put(m, T, attn, "q_proj.bias", MP_TK_VISION, 0, heads * d, L);
	put(m, T, attn, "k_proj.weight", MP_TK_VISION, heads * d, h, L);
	put(m, T, attn, "k_proj.bias", MP_TK_VISION, 0, heads * d, L);
	put(m, T, attn, "v_proj.weight", MP_TK_VISION, heads * d, h, L);
	put(m, T, attn, "v_proj.bias", MP_TK_VISION, 0, heads * d, L);
	put(m, T, attn, "o_proj.weight", MP_TK_VISION, h, heads * d, L);
	put(m, T, attn, "o_proj.bias", MP_TK_VISION, 0, h, L);
	put(m, T, mlp, "fc1.weight", MP_TK_VISION, inter, h, L);
	put(m, T, mlp, "fc1.bias", MP_TK_VISION, 0, inter, L);
	put(m, T, mlp, "fc2.weight", MP_TK_VISION, h, inter, L);
	put(m, T, mlp, "fc2.bias", MP_TK_VISION, 0, h, L);
	put(m, T, pm, "proj_conv.bias", MP_TK_PROJECTOR, 0, 2 * h, 1);
	put(m, T, pm, "proj_out.bias", MP_TK_PROJECTOR, 0, 4 * h, 1);
	put(m, T, pm, "mlp.weight", MP_TK_PROJECTOR, out, 4 * h, 1);
	put(m, T, pm, "mlp.bias", MP_TK_PROJECTOR, 0, out, 1);
	put(m, T, pm, "image_newline", MP_TK_PROJECTOR, 0, 4 * h, 1);
	put(m, T, pm, "image_begin", MP_TK_PROJECTOR, 0, out, 1);
	put(m, T, pm, "image_end", MP_TK_PROJECTOR, 0, out, 1);
	put(m, T, pm, "image_sep", MP_TK_PROJECTOR, 0, out, 1);
	put(m, T, pm, "before_rms.weight", MP_TK_PROJECTOR, 0, h, 1);
	put(m, T, pm, "after_rms.weight", MP_TK_PROJECTOR, 0, out, 1);
}

/* Molmo2's decoder: Llama's names with the embedding the reader's (vocab_size + additional_vocab_size rows); the
 * designated initializer overrides MP_NAMES_LLAMA_FIELDS' .embed on purpose. */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Winitializer-overrides"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Woverride-init"
#endif
const mp_names mpm_names_molmo2 = {MP_NAMES_LLAMA_FIELDS, .embed = {NULL, NULL}};

/*
 * Molmo2TextConfig (the decoder of Molmo2; modeling_molmo2.py Molmo2TextModel): vocab 151936, hidden 4096, MLP 12288,
 * 36 layers, 32 heads, kv 8, head_dim 128, 36864 positions; attention_bias (its other spelling qkv_bias) on q, k and v,
 * o_proj never biased; q_norm and k_norm per head (qk_norm_type "qwen3") or over the whole projections ("olmo");
 * embed_tokens of vocab_size + additional_vocab_size (128) rows, lm_head of vocab_size; norm_after moves the two norms
 * to the sublayers' outputs (no tensor changes) and rope_scaling_layers picks each layer's rotary module (buffers
 * only). Errors: a 422 naming qk_norm_type other than those two or additional_vocab_size past 2^24 (transformers
 * refuses a negative one).
 */
void mpm_read_molmo2_text(hf_ctx *c, mp_model *m)
{
	static const mpm_dense d = {.vocab_size = 151936,
	                            .hidden_size = 4096,
	                            .intermediate_size = 12288,
	                            .num_layers = 36,
	                            .num_heads = 32,
	                            .num_kv_heads = 8,
	                            .head_dim = 128,
	                            .max_positions = 36864,
	                            .norms = 2,
	                            .modules = MPM_ATTENTION_BIAS | MPM_QK_NORM};
	const cJSON *qn;
	uint64_t extra;

	mpm_read_dense(c, &d, m);
	if (!hf_has(c, "attention_bias") && hf_has(c, "qkv_bias"))
		m->qkv_bias = hf_get_bool(c, KEYS("qkv_bias"), false);
	m->o_bias = false;
	qn = c->cfg ? cJSON_GetObjectItemCaseSensitive(c->cfg, "qk_norm_type") : NULL;
	if (c->st == MP_OK && qn && !cJSON_IsNull(qn)) {
		if (cJSON_IsString(qn) && strcmp(qn->valuestring, "olmo") == 0) {
			m->qk_norm = false;
			m->qk_norm_full = true;
		} else if (!(cJSON_IsString(qn) && strcmp(qn->valuestring, "qwen3") == 0)) {
			hf_fail_key(c, "qk_norm_type",
			            "qk_norm_type must be \"qwen3\" (per-head q_norm and k_norm) or \"olmo\" (over the whole "
			            "projections), as Molmo2TextConfig validates");
		}
	}
	extra = hf_get_u64(c, KEYS("additional_vocab_size"), 128);
	if (c->st == MP_OK && extra > (UINT64_C(1) << 24))
		hf_fail_key(c, "additional_vocab_size", "additional_vocab_size must be from 0 to 2^24");
	if (c->st != MP_OK)
		return;
	m->tie_word_embeddings = false; /* Molmo2ForConditionalGeneration ties nothing (no _tied_weights_keys) */
	hf_tensor(m, MP_ROOT_DECODER, NULL, "embed_tokens.weight", MP_TK_EMBEDDING, MP_SPLIT_ROWS, MP_STEP_NONE, false,
	          m->vocab_size + extra, m->hidden_size, 1);
}

/* Molmo2's attention of the tower and of the adapter's pooling (Molmo2VisionAttention) under root and path: q of heads
 * x d rows, k and v of kv x d, from `in` values, o back to `out`, every projection biased with bias; count of it. */
static void molmo2_attention(mp_model *m, uint8_t root, const char *path, mp_tensor_kind k, uint64_t in, uint64_t out,
                             const uint64_t hkd[3], bool bias, uint64_t count)
{
	uint64_t q = hkd[0] * hkd[2], kv = hkd[1] * hkd[2];

	put(m, root, path, "q_proj.weight", k, q, in, count);
	put(m, root, path, "k_proj.weight", k, kv, in, count);
	put(m, root, path, "v_proj.weight", k, kv, in, count);
	put(m, root, path, "o_proj.weight", k, out, q, count);
	put(m, root, path, "q_proj.bias", k, 0, q, bias ? count : 0);
	put(m, root, path, "k_proj.bias", k, 0, kv, bias ? count : 0);
	put(m, root, path, "v_proj.bias", k, 0, kv, bias ? count : 0);
	put(m, root, path, "o_proj.bias", k, 0, out, bias ? count : 0);
}

/* The heads of a Molmo2 attention config v (num_attention_heads, num_key_value_heads, head_dim; defaults 16, 16, 72): a
 * 422 naming the key when a count is 0 or the KV heads do not divide the heads (num_key_value_groups). */
static void molmo2_heads(hf_ctx *v, uint64_t hkd[3])
{
	hkd[0] = hf_get_u64(v, KEYS("num_attention_heads"), 16);
	hkd[1] = hf_get_u64(v, KEYS("num_key_value_heads"), 16);
	hkd[2] = hf_get_u64(v, KEYS("head_dim"), 72);
	if (v->st == MP_OK && (hkd[0] == 0 || hkd[0] > 4096 || hkd[2] == 0 || hkd[2] > 65536))
		hf_fail_key(v, hkd[0] == 0 || hkd[0] > 4096 ? "num_attention_heads" : "head_dim",
		            "num_attention_heads must be from 1 to 4096 and head_dim from 1 to 65536");
	if (v->st == MP_OK && (hkd[1] == 0 || hkd[0] % hkd[1] != 0))
		hf_fail_key(v, "num_key_value_heads",
		            "num_key_value_heads must be at least 1 and divide num_attention_heads (num_key_value_groups)");
}

/*
 * Molmo2 (Molmo2Config: molmo2_text's row for the decoder under model.language_model., never tied). Molmo2VisionConfig
 * (hidden 1152, MLP 4304, 25 layers, 16 heads, 16 KV heads, head_dim 72, image_size [378, 378], 14 px patches, 3
 * channels, num_position_embeddings (378 / 14)^2 = 729, attention_bias true; its checkpoints' spellings
 * image_default_input_size, image_patch_size, image_num_pos) under model.vision_tower.: positional_embedding, a biased
 * patch_embedding Linear(patch^2 x channels, h), per layer LayerNorms layer_norm1 and layer_norm2, Molmo2's attention
 * and the biased fc1/fc2 MLP. Molmo2AdapterConfig (vision_feature_layer [24, 18] (vit_layers), hidden 1152, 16 heads,
 * 16 KV heads, head_dim 72, attention_bias true, MLP 18944, text_hidden_size 3584, mlp_bias false) under
 * model.multi_modal_projector.: image_pooling_2d, an attention from hidden x len(vision_feature_layer) to hidden, and
 * image_projector, gate_proj and up_proj (intermediate x hidden, biased with mlp_bias) and down_proj (text_hidden_size
 * x intermediate, no bias). A checkpoint's vit_config (vision_config's old name) keeps the layers up to the deepest
 * one vision_feature_layer reads (Molmo2Config.__post_init__).
 * Default: tower 729 x 1,152 + 1,152 x 588 + 1,152 + 25 x 15,239,504 = 382,505,936; adapter 3 x (1,152 x 2,304 +
 * 1,152) + 1,152^2 + 1,152 + 2 x 18,944 x 1,152 + 3,584 x 18,944 = 120,836,608 (the adapter's text_hidden_size 3,584,
 * not the decoder's 4,096, as the class builds it); 8,694,602,192 in all.
 * Errors (422, naming the key): a vision_feature_layer that indexes no tower layer (validate_architecture), head
 * counts as molmo2_heads, a size of 0 or past the bounds below.
 */
void mpm_read_molmo2(hf_ctx *c, mp_model *m)
{
	const cJSON *vfl, *e, *is;
	const char *spelt = NULL;
	char pointer[MP_POINTER_MAX], apointer[MP_POINTER_MAX];
	hf_ctx v, a;
	uint64_t h, inter, L, hkd[3], ahkd[3], ch, patch, npos, ih = 378, iw = 378, ah, ainter, atext, n = 2;
	bool bias, abias, mbias, legacy;
	int64_t deepest = -1;
	const uint8_t T = MP_ROOT_TOWER;
	const char *lay = "layers.{i}", *attn = "layers.{i}.self_attn", *mlp = "layers.{i}.mlp";

	if (!hf_wrap_read_text(c, "molmo2_text", false, m))
		return;
	m->inv.roots[MP_ROOT_DECODER] = "model.language_model.";
	m->tie_word_embeddings = false;
	legacy = !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(c->cfg, "vision_config")) &&
	         cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(c->cfg, "vit_config"));
	if (c->st != MP_OK || !hf_sub_config(c, legacy ? "vit_config" : "vision_config", pointer, sizeof(pointer), &v) ||
	    !hf_sub_config(c, "adapter_config", apointer, sizeof(apointer), &a))
		return;
	h = hf_get_u64(&v, KEYS("hidden_size"), 1152);
	inter = hf_get_u64(&v, KEYS("intermediate_size"), 4304);
	L = hf_get_u64(&v, KEYS("num_hidden_layers"), 25);
	molmo2_heads(&v, hkd);
	ch = hf_get_u64(&v, KEYS("num_channels"), 3);
	patch = hf_get_u64(&v, KEYS("patch_size", "image_patch_size"), 14);
	bias = hf_get_bool(&v, KEYS("attention_bias"), true);
	is = v.cfg ? hf_find(&v, KEYS("image_size", "image_default_input_size"), &spelt) : NULL;
	if (v.st == MP_OK && is) {
		if (cJSON_IsArray(is) && cJSON_GetArraySize(is) == 2 && cJSON_IsNumber(cJSON_GetArrayItem(is, 0)) &&
		    cJSON_IsNumber(cJSON_GetArrayItem(is, 1)) && cJSON_GetArrayItem(is, 0)->valuedouble >= 1 &&
		    cJSON_GetArrayItem(is, 1)->valuedouble >= 1 && cJSON_GetArrayItem(is, 0)->valuedouble <= 65536 &&
		    cJSON_GetArrayItem(is, 1)->valuedouble <= 65536) {
			ih = (uint64_t)cJSON_GetArrayItem(is, 0)->valuedouble;
			iw = (uint64_t)cJSON_GetArrayItem(is, 1)->valuedouble;
		} else {
			hf_fail_key(&v, hf_key_of(&v, KEYS("image_size", "image_default_input_size")),
			            "image_size must be a list [height, width] of pixels from 1 to 65536");
		}
	}
	if (v.st == MP_OK && (h == 0 || h > (UINT64_C(1) << 20) || inter == 0 || inter > (UINT64_C(1) << 24) || L == 0 ||
	                      L > MP_MAX_LAYERS || ch == 0 || ch > 256 || patch == 0 || patch > 1024))
		hf_fail_key(&v, h == 0 || h > (UINT64_C(1) << 20)           ? "hidden_size"
		                : inter == 0 || inter > (UINT64_C(1) << 24) ? "intermediate_size"
		                : L == 0 || L > MP_MAX_LAYERS                ? "num_hidden_layers"
		                : ch == 0 || ch > 256                        ? "num_channels"
		                                                             : hf_key_of(&v, KEYS("patch_size", "image_patch_size")),
		            "the image tower needs hidden_size from 1 to 2^20, intermediate_size from 1 to 2^24, 1 to 1024 "
		            "layers, 1 to 256 channels and patch_size from 1 to 1024");
	npos = hf_get_u64(&v, KEYS("num_position_embeddings", "image_num_pos"),
	                  patch ? (ih / patch) * (iw / patch) : 0);
	if (v.st == MP_OK && npos > (UINT64_C(1) << 24))
		hf_fail_key(&v, hf_key_of(&v, KEYS("num_position_embeddings", "image_num_pos")),
		            "num_position_embeddings must be at most 2^24");
	c->st = v.st;
	if (c->st != MP_OK)
		return;
	a.st = c->st;
	ah = hf_get_u64(&a, KEYS("hidden_size"), 1152);
	molmo2_heads(&a, ahkd);
	abias = hf_get_bool(&a, KEYS("attention_bias"), true);
	mbias = hf_get_bool(&a, KEYS("mlp_bias"), false);
	ainter = hf_get_u64(&a, KEYS("intermediate_size"), 18944);
	atext = hf_get_u64(&a, KEYS("text_hidden_size"), 3584);
	vfl = a.cfg ? hf_find(&a, KEYS("vision_feature_layer", "vit_layers"), &spelt) : NULL;
	if (a.st == MP_OK && vfl) {
		if (!cJSON_IsArray(vfl) || cJSON_GetArraySize(vfl) == 0 || cJSON_GetArraySize(vfl) > 1024)
			hf_fail_key(&a, hf_key_of(&a, KEYS("vision_feature_layer", "vit_layers")),
			            "vision_feature_layer must be a list of 1 to 1024 tower layer indices");
		else
			n = (uint64_t)cJSON_GetArraySize(vfl);
	}
	if (a.st == MP_OK) {
		cJSON *dflt = vfl ? NULL : cJSON_Parse("[24, 18]");
		const cJSON *list = vfl ? vfl : dflt;

		cJSON_ArrayForEach(e, list)
		{
			double x = e->valuedouble;

			if (!cJSON_IsNumber(e) || x != (double)(int64_t)x || x < -(double)L || x >= (double)L) {
				hf_fail_key(&a, hf_key_of(&a, KEYS("vision_feature_layer", "vit_layers")),
				            "every vision_feature_layer entry must index a tower layer: from -num_hidden_layers "
				            "to num_hidden_layers - 1 (Molmo2Config.validate_architecture)");
				break;
			}
			{
				int64_t i = (int64_t)x % (int64_t)L;

				if (i < 0)
					i += (int64_t)L;
				if (i > deepest)
					deepest = i;
			}
		}
		cJSON_Delete(dflt);
	}
	if (a.st == MP_OK && (ah == 0 || ah > (UINT64_C(1) << 20) || ainter == 0 || ainter > (UINT64_C(1) << 24) ||
	                      atext == 0 || atext > (UINT64_C(1) << 20)))
		hf_fail_key(&a, ah == 0 || ah > (UINT64_C(1) << 20)           ? "hidden_size"
		                : ainter == 0 || ainter > (UINT64_C(1) << 24) ? "intermediate_size"
		                                                              : "text_hidden_size",
		            "the adapter needs hidden_size and text_hidden_size from 1 to 2^20 and intermediate_size from 1 "
		            "to 2^24");
	c->st = a.st;
	if (c->st != MP_OK)
		return;
	if (legacy) /* Molmo2Config.__post_init__: the layers past the deepest read one are not built */
		L = (uint64_t)deepest + 1;
	mp_inventory_root(&m->inv, T, "model.vision_tower.");
	put(m, T, NULL, "positional_embedding", MP_TK_VISION, npos, h, 1);
	put(m, T, NULL, "patch_embedding.weight", MP_TK_VISION, h, patch * patch * ch, 1);
	put(m, T, NULL, "patch_embedding.bias", MP_TK_VISION, 0, h, 1);
	layer_norm(m, T, lay, "layer_norm1.weight", "layer_norm1.bias", MP_TK_VISION, h, L);
	layer_norm(m, T, lay, "layer_norm2.weight", "layer_norm2.bias", MP_TK_VISION, h, L);
	molmo2_attention(m, T, attn, MP_TK_VISION, h, h, hkd, bias, L);
	put(m, T, mlp, "fc1.weight", MP_TK_VISION, inter, h, L);
	put(m, T, mlp, "fc1.bias", MP_TK_VISION, 0, inter, L);
	put(m, T, mlp, "fc2.weight", MP_TK_VISION, h, inter, L);
	put(m, T, mlp, "fc2.bias", MP_TK_VISION, 0, h, L);
	mp_inventory_root(&m->inv, MP_ROOT_PROJECTOR, "model.multi_modal_projector.");
	{
		const uint8_t P = MP_ROOT_PROJECTOR;
		const char *proj = "image_projector";

		molmo2_attention(m, P, "image_pooling_2d", MP_TK_PROJECTOR, ah * n, ah, ahkd, abias, 1);
		put(m, P, proj, "gate_proj.weight", MP_TK_PROJECTOR, ainter, ah, 1);
		put(m, P, proj, "up_proj.weight", MP_TK_PROJECTOR, ainter, ah, 1);
		put(m, P, proj, "gate_proj.bias", MP_TK_PROJECTOR, 0, ainter, mbias);
		put(m, P, proj, "up_proj.bias", MP_TK_PROJECTOR, 0, ainter, mbias);
		put(m, P, proj, "down_proj.weight", MP_TK_PROJECTOR, atext, ainter, 1);
	}
}

/* Kosmos-2's and Kosmos-2.5's decoder (modeling_kosmos2.py Kosmos2TextTransformer): OPT's names with the MLP under
 * ffn, the final norm layer_norm, sinusoidal positions (no table). */
const mp_names mpm_names_kosmos2 = {MP_NAMES_LLAMA_FIELDS,
                                    .positions = {NULL, NULL},
                                    .final_norm = {"layer_norm.weight", "layer_norm.bias"},
                                    .mlp = "layers.{i}.ffn",
                                    .o = {"out_proj.weight", "out_proj.bias"},
                                    .up = {"fc1.weight", "fc1.bias"},
                                    .down = {"fc2.weight", "fc2.bias"},
                                    .norms = {{"self_attn_layer_norm.weight", "self_attn_layer_norm.bias"},
                                              {"final_layer_norm.weight", "final_layer_norm.bias"}}};

/*
 * The Kosmos decoder of text_config (Kosmos2TextConfig: vocab 65037, embed_dim 2048, 24 layers, ffn_dim 8192, 32
 * heads, 2048 positions; Kosmos2_5TextConfig: vocab 108481, 1536, 24, 6144, 16, 4096; hidden_size, num_hidden_layers
 * and num_attention_heads their other spellings): pre-LayerNorm blocks of q, k, v and out_proj, fc1 and fc2, all
 * biased, with ffn.ffn_layernorm (a LayerNorm of ffn_dim) and, in Kosmos-2, self_attn.inner_attn_ln (of the width);
 * Kosmos-2.5's segment_emb [2, width]. The decoder sits under text_model.model., its head text_model.lm_head. Errors:
 * a 422 naming add_cross_attention true (an encoder_attn over image states memplan does not model) or heads that do not
 * divide the width.
 */
static void kosmos_text(hf_ctx *c, bool v25, mp_model *m)
{
	const cJSON *tc = cJSON_GetObjectItemCaseSensitive(c->cfg, "text_config");
	char pointer[MP_POINTER_MAX];
	hf_ctx t;

	if (tc && !cJSON_IsNull(tc) && !cJSON_IsObject(tc)) {
		hf_fail_key(c, "text_config", "text_config must be an object (the decoder's config)");
		return;
	}
	snprintf(pointer, sizeof(pointer), "%s%s", c->pointer, cJSON_IsObject(tc) ? "/text_config" : "");
	t = (hf_ctx){cJSON_IsObject(tc) ? tc : NULL, pointer, c->err, c->st, NULL, NULL, c->decode_type};
	m->vocab_size = hf_get_u64(&t, KEYS("vocab_size"), v25 ? 108481 : 65037);
	m->max_position_embeddings = hf_get_u64(&t, KEYS("max_position_embeddings"), v25 ? 4096 : 2048);
	m->hidden_size = hf_get_u64(&t, KEYS("embed_dim", "hidden_size"), v25 ? 1536 : 2048);
	m->intermediate_size = hf_get_u64(&t, KEYS("ffn_dim"), v25 ? 6144 : 8192);
	m->num_layers = hf_get_u64(&t, KEYS("layers", "num_hidden_layers"), 24);
	m->num_heads = hf_get_u64(&t, KEYS("attention_heads", "num_attention_heads"), v25 ? 16 : 32);
	m->num_kv_heads = m->num_heads;
	m->tie_word_embeddings = hf_get_bool(&t, KEYS("tie_word_embeddings"), true);
	if (t.st == MP_OK && hf_get_bool(&t, KEYS("add_cross_attention"), false))
		hf_fail_key(&t, "add_cross_attention",
		            "add_cross_attention true builds an encoder_attn in every layer (cross-attention to encoder "
		            "states), which memplan does not model");
	if (t.st == MP_OK && (m->num_heads == 0 || m->hidden_size % m->num_heads != 0))
		hf_fail_key(&t, hf_key_of(&t, KEYS("attention_heads", "num_attention_heads")),
		            "embed_dim must be a multiple of attention_heads (KosmosTextAttention raises ValueError)");
	c->st = t.st;
	c->text = t.cfg;
	c->names = &mpm_names_kosmos2;
	snprintf(m->json_pointer, sizeof(m->json_pointer), "%.63s", pointer);
	if (c->st != MP_OK)
		return;
	m->head_dim = m->hidden_size / m->num_heads;
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_PLAIN;
	m->norm_kind = MP_NORM_LAYER;
	m->norms_per_layer = 2;
	m->final_norm = true;
	m->qkv_bias = m->o_bias = m->mlp_bias = true;
	snprintf(m->rope_type, sizeof(m->rope_type), "none");
	m->inv.roots[MP_ROOT_TOP] = "text_model.";
	m->inv.roots[MP_ROOT_DECODER] = "text_model.model.";
	layer_norm(m, MP_ROOT_DECODER, "layers.{i}.ffn", "ffn_layernorm.weight", "ffn_layernorm.bias", MP_TK_NORM,
	           m->intermediate_size, m->num_layers);
	if (v25)
		put(m, MP_ROOT_DECODER, NULL, "segment_emb.weight", MP_TK_EMBEDDING, 2, m->hidden_size, 1);
	else
		layer_norm(m, MP_ROOT_DECODER, "layers.{i}.self_attn", "inner_attn_ln.weight", "inner_attn_ln.bias",
		           MP_TK_NORM, m->hidden_size, m->num_layers);
}

/* Kosmos2ImageToTextProjection (Kosmos2_5's the same) under image_to_text_projection.: latent_query [q, width], dense
 * from the tower's vh to the width and x_attn's q, k, v and out_proj (width^2), all biased. */
static void kosmos_projection(hf_ctx *c, mp_model *m, uint64_t vh, uint64_t dflt_queries)
{
	const uint8_t P = MP_ROOT_PROJECTOR;
	uint64_t h = m->hidden_size, q = hf_get_u64(c, KEYS("latent_query_num"), dflt_queries);
	const char *x = "x_attn";

	if (c->st == MP_OK && (q == 0 || q > (UINT64_C(1) << 20)))
		hf_fail_key(c, "latent_query_num", "latent_query_num must be from 1 to 2^20");
	if (c->st != MP_OK)
		return;
	mp_inventory_root(&m->inv, P, "image_to_text_projection.");
	put(m, P, NULL, "latent_query", MP_TK_PROJECTOR, q, h, 1);
	put(m, P, NULL, "dense.weight", MP_TK_PROJECTOR, h, vh, 1);
	put(m, P, NULL, "dense.bias", MP_TK_PROJECTOR, 0, h, 1);
	put(m, P, x, "q_proj.weight", MP_TK_PROJECTOR, h, h, 1);
	put(m, P, x, "q_proj.bias", MP_TK_PROJECTOR, 0, h, 1);
	put(m, P, x, "k_proj.weight", MP_TK_PROJECTOR, h, h, 1);
	put(m, P, x, "k_proj.bias", MP_TK_PROJECTOR, 0, h, 1);
	put(m, P, x, "v_proj.weight", MP_TK_PROJECTOR, h, h, 1);
	put(m, P, x, "v_proj.bias", MP_TK_PROJECTOR, 0, h, 1);
	put(m, P, x, "out_proj.weight", MP_TK_PROJECTOR, h, h, 1);
	put(m, P, x, "out_proj.bias", MP_TK_PROJECTOR, 0, h, 1);
}

/*
 * Kosmos-2 (Kosmos2Config: latent_query_num 64, tied when it or text_config ties, both default true; Kosmos2VisionConfig: CLIP, hidden 1024, MLP 4096, 24
 * layers, 16 heads, 224 px images of 14 px patches): the decoder (kosmos_text), planner/vision.c's CLIP tower under
 * vision_model.model. (class embedding, pre_layrnorm and post_layernorm, no projection), the projection
 * (kosmos_projection). Default: decoder 1,342,289,920 (tied), tower 303,179,776, projection 64 x 2,048 + 2,048 x 1,024
 * + 2,048 + 4 x (2,048^2 + 2,048) = 19,015,680: 1,664,485,376.
 * Errors (422, naming the key): tower heads that do not divide its width, a size of 0 or past the bounds below.
 */
void mpm_read_kosmos2(hf_ctx *c, mp_model *m)
{
	char pointer[MP_POINTER_MAX];
	hf_ctx v;
	uint64_t h;

	kosmos_text(c, false, m);
	tie_either(c, m, true); /* text_model.lm_head ties when either config says so (both default true) */
	if (c->st != MP_OK || !hf_sub_config(c, "vision_config", pointer, sizeof(pointer), &v))
		return;
	h = mpm_clip_vision(c, &v, &(const mpm_clip_defaults){1024, 4096, 24, 16, 3, 224, 14}, false,
	                    "Kosmos2VisionAttention", &m->vision, "vision_model.model.", "image_to_text_projection.",
	                    m->hidden_size);
	if (c->st != MP_OK)
		return;
	kosmos_projection(c, m, h, 64);
}

/*
 * Kosmos-2.5 (Kosmos2_5Config: latent_query_num 2048; text_model, a Kosmos2_5TextForCausalLM, ties its lm_head by
 * text_config's tie_word_embeddings alone, default true: the wrapper's key ties nothing). The decoder (kosmos_text, with
 * segment_emb); Kosmos2_5VisionConfig's Pix2Struct-style tower (hidden 1536, patch_embed_hidden_size 768, MLP 3968, 18
 * layers, 24 heads of head_dim 64, max_num_patches 4096) under vision_model.: embeddings.patch_projection (a biased
 * Linear from the flattened patch), row_embedder and column_embedder [max_num_patches, h]; per layer
 * pre_attention_layer_norm and pre_mlp_layer_norm (RMSNorms of h), attention query, key, value (heads x head_dim rows)
 * and output without biases, the gated mlp wi_0, wi_1 and wo; layernorm. The projection as Kosmos-2's
 * (kosmos_projection). Default: tower 768 x 1,536 + 1,536 + 2 x 4,096 x 1,536 + 18 x (4 x 1,536^2 + 3 x 3,968 x
 * 1,536 + 2 x 1,536) + 1,536 = 512,812,032, the projection 14,949,888; 1,374,646,272 in all. Errors (422, naming the key): a size of 0 or past
 * the bounds below.
 */
void mpm_read_kosmos2_5(hf_ctx *c, mp_model *m)
{
	char pointer[MP_POINTER_MAX];
	hf_ctx v;
	uint64_t h, peh, inter, hd, L, heads, maxp;
	const uint8_t T = MP_ROOT_TOWER;
	const char *lay = "encoder.layer.{i}", *attn = "encoder.layer.{i}.attention", *mlp = "encoder.layer.{i}.mlp";

	kosmos_text(c, true, m); /* tied by text_config's tie_word_embeddings alone */
	if (c->st != MP_OK || !hf_sub_config(c, "vision_config", pointer, sizeof(pointer), &v))
		return;
	h = hf_get_u64(&v, KEYS("hidden_size"), 1536);
	peh = hf_get_u64(&v, KEYS("patch_embed_hidden_size"), 768);
	inter = hf_get_u64(&v, KEYS("intermediate_size"), 3968);
	hd = hf_get_u64(&v, KEYS("head_dim"), 64);
	L = hf_get_u64(&v, KEYS("num_hidden_layers"), 18);
	heads = hf_get_u64(&v, KEYS("num_attention_heads"), 24);
	maxp = hf_get_u64(&v, KEYS("max_num_patches"), 4096);
	if (v.st == MP_OK && (h == 0 || h > (UINT64_C(1) << 20) || peh == 0 || peh > (UINT64_C(1) << 20) || inter == 0 ||
	                      inter > (UINT64_C(1) << 24) || hd == 0 || hd > 65536 || L == 0 || L > MP_MAX_LAYERS ||
	                      heads == 0 || heads > 4096 || maxp == 0 || maxp > (UINT64_C(1) << 24)))
		hf_fail_key(&v, h == 0 || h > (UINT64_C(1) << 20)             ? "hidden_size"
		                : peh == 0 || peh > (UINT64_C(1) << 20)       ? "patch_embed_hidden_size"
		                : inter == 0 || inter > (UINT64_C(1) << 24)   ? "intermediate_size"
		                : hd == 0 || hd > 65536                        ? "head_dim"
		                : L == 0 || L > MP_MAX_LAYERS                  ? "num_hidden_layers"
		                : heads == 0 || heads > 4096                   ? "num_attention_heads"
		                                                               : "max_num_patches",
		            "the image tower needs hidden_size and patch_embed_hidden_size from 1 to 2^20, intermediate_size "
		            "from 1 to 2^24, head_dim from 1 to 65536, 1 to 1024 layers, 1 to 4096 heads and max_num_patches "
		            "from 1 to 2^24");
	c->st = v.st;
	if (c->st != MP_OK)
		return;
	mp_inventory_root(&m->inv, T, "vision_model.");
	put(m, T, "embeddings", "patch_projection.weight", MP_TK_VISION, h, peh, 1);
	put(m, T, "embeddings", "patch_projection.bias", MP_TK_VISION, 0, h, 1);
	put(m, T, "embeddings", "row_embedder.weight", MP_TK_VISION, maxp, h, 1);
	put(m, T, "embeddings", "column_embedder.weight", MP_TK_VISION, maxp, h, 1);
	put(m, T, attn, "query.weight", MP_TK_VISION, heads * hd, h, L);
	put(m, T, attn, "key.weight", MP_TK_VISION, heads * hd, h, L);
	put(m, T, attn, "value.weight", MP_TK_VISION, heads * hd, h, L);
	put(m, T, attn, "output.weight", MP_TK_VISION, h, heads * hd, L);
	put(m, T, mlp, "wi_0.weight", MP_TK_VISION, inter, h, L);
	put(m, T, mlp, "wi_1.weight", MP_TK_VISION, inter, h, L);
	put(m, T, mlp, "wo.weight", MP_TK_VISION, h, inter, L);
	put(m, T, lay, "pre_attention_layer_norm.weight", MP_TK_VISION, 0, h, L);
	put(m, T, lay, "pre_mlp_layer_norm.weight", MP_TK_VISION, 0, h, L);
	put(m, T, NULL, "layernorm.weight", MP_TK_VISION, 0, h, 1);
	kosmos_projection(c, m, h, 2048);
}

/*
 * Perception LM (PerceptionLMConfig: text_config llama, LlamaConfig's defaults when absent; tied when the wrapper's
 * tie_word_embeddings says so, else as text_config's (__post_init__), default untied; vision_config a timm_wrapper).
 * The tower under model.vision_tower. is timm 1.0.31's vit_pe_core_large_patch14_336 (eva.py: PE-Core L/14 at 336 px,
 * 24 blocks 1,024 wide, a CLS token, attention pooling) as one static table (hf_perception_lm_timm.c, 316,102,656
 * parameters); the projector under model.multi_modal_projector. (PerceptionLMMultiModalProjector): linear_1 from
 * model_args["embed_dim"] to the decoder's width and linear_2 square, both biased, a GELU between; the pooling
 * (projector_pooling_ratio > 1, adaptive average pooling) and the CLS token dropped (vision_use_cls_token) hold no
 * parameters. Example (tools/groundtruth/configs/perception-lm-pe-core-large-variant.json, Llama's 4,096-wide
 * default decoder): projector 4,096 x 1,024 + 4,096 x 4,096 + 2 x 4,096 = 20,979,712; 7,075,497,984 in all.
 * Errors (422, naming the key): a vision_config without model_args {"embed_dim": 1024} (the default's timm_wrapper has
 * none and transformers 5.24 raises TypeError reading model_args["embed_dim"]; other model_args reshape the timm
 * tower), another timm architecture (its shapes are timm's code, which memplan does not model),
 * projector_pooling_ratio not a whole number, vision_use_cls_token not a boolean.
 */
void mpm_read_perception_lm(hf_ctx *c, mp_model *m)
{
	const cJSON *vc, *arch, *args, *w;
	char pointer[MP_POINTER_MAX];
	hf_ctx v;

	if (!hf_wrap_read_text(c, "llama", false, m))
		return;
	m->inv.roots[MP_ROOT_DECODER] = "model.language_model.";
	hf_wrap_tie(c, m, false);
	(void)hf_get_u64(c, KEYS("projector_pooling_ratio"), 1);
	(void)hf_get_bool(c, KEYS("vision_use_cls_token"), true);
	if (c->st != MP_OK || !hf_sub_config(c, "vision_config", pointer, sizeof(pointer), &v))
		return;
	vc = v.cfg;
	arch = vc ? cJSON_GetObjectItemCaseSensitive(vc, "architecture") : NULL;
	args = vc ? cJSON_GetObjectItemCaseSensitive(vc, "model_args") : NULL;
	w = cJSON_IsObject(args) ? cJSON_GetObjectItemCaseSensitive(args, "embed_dim") : NULL;
	if (!(cJSON_IsObject(args) && cJSON_GetArraySize(args) == 1 && cJSON_IsNumber(w) && w->valuedouble == 1024))
		hf_fail_key(&v, "model_args",
		            "vision_config needs model_args {\"embed_dim\": 1024}, vit_pe_core_large_patch14_336's width (the "
		            "projector's input: transformers reads model_args[\"embed_dim\"] and TimmWrapperConfig has no "
		            "default; other arguments reshape the timm tower, which memplan does not model)");
	else if (!(cJSON_IsString(arch) && strcmp(arch->valuestring, "vit_pe_core_large_patch14_336") == 0))
		hf_fail_key(&v, "architecture",
		            "the timm tower must be vit_pe_core_large_patch14_336 (PE-Core L/14, the one memplan lists: "
		            "another architecture's shapes are timm's code; TimmWrapperConfig's own default is resnet50)");
	c->st = v.st;
	if (c->st != MP_OK)
		return;
	timm_tower_projector(m, mpm_perception_lm_timm, mpm_perception_lm_timm_count, 1024, true);
}
