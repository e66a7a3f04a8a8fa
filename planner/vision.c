/*
 * vision.c: the image tower and projector of multimodal wrappers, into the inventory. One description (mp_vision)
 * covers the ViTs transformers 5.24 builds for them, each under its own names: SigLIP (modeling_siglip.py, Gemma 3),
 * CLIP (modeling_clip.py, LLaVA), Pixtral (modeling_pixtral.py, Mistral 3), the Qwen-VL towers (modeling_qwen2_vl.py,
 * modeling_qwen2_5_vl.py, modeling_qwen3_vl.py, Qwen3.5) and Llama 4's (modeling_llama4.py Llama4VisionModel: a linear
 * patch embedding, class token, LayerNorms, the pixel-shuffle adapter); SigLIP 2 (modeling_siglip2.py: SigLIP's with a
 * linear patch embedding, LFM2-VL), Janus's (modeling_janus.py JanusVisionModel: SigLIP's with projection_layer and
 * q/k norms) and Video-LLaVA's two CLIP towers (twin_root). The reader (model/) sets which tower it is and which
 * modules it has. Every tensor is replicated on every tensor-parallel rank and read by no decoder step. Pure.
 */
#include <string.h>

#include "memplan.h"

typedef struct vbuild {
	mp_inventory *inv;
	uint8_t root;
	mp_tensor_kind kind;
} vbuild;

static void put(vbuild *b, const char *path, const char *leaf, uint64_t rows, uint64_t cols, uint64_t count)
{
	mp_tensor_spec s = {.root = b->root, .path = path, .leaf = leaf, .kind = b->kind, .view = MP_VIEW_LINEAR,
	                    .rows = rows, .cols = cols, .count = count};

	if (leaf)
		mp_inventory_add(b->inv, &s);
}

static void putv(vbuild *b, const char *path, const char *leaf, uint64_t values, uint64_t count)
{
	mp_tensor_spec s = {.root = b->root, .path = path, .leaf = leaf, .kind = b->kind, .view = MP_VIEW_VECTOR,
	                    .cols = values, .count = count};

	if (leaf)
		mp_inventory_add(b->inv, &s);
}

/* A linear layer out x in and its bias. */
static void lin(vbuild *b, const char *path, mp_wb n, uint64_t out, uint64_t in, bool with_bias, uint64_t count)
{
	put(b, path, n.w, out, in, count);
	if (with_bias)
		putv(b, path, n.b, out, count);
}

/* A norm of width w: LayerNorm weight and bias, RMSNorm a weight, none nothing. */
static void vnorm(vbuild *b, const char *path, mp_wb n, mp_norm_kind k, uint64_t w, uint64_t count)
{
	if (k == MP_NORM_NONE)
		return;
	putv(b, path, n.w, w, count);
	if (k == MP_NORM_LAYER)
		putv(b, path, n.b, w, count);
}

#define WB(x) ((mp_wb){x ".weight", x ".bias"})

/* The patch embedding: a convolution [hidden, channels, (temporal,) patch, patch] (+ bias), or Llama 4's linear. */
static void patch_embedding(vbuild *b, const mp_vision *v, const char *path, mp_wb n)
{
	uint64_t dims[5] = {v->hidden, v->channels, v->temporal ? v->temporal : v->patch, v->patch, v->patch};

	if (v->linear_patch) /* SigLIP 2: nn.Linear(num_channels * patch_size^2, hidden_size), always biased */
		put(b, path, n.w, v->hidden, v->channels * v->patch * v->patch, 1);
	else if (v->temporal)
		mp_inventory_add_shape(b->inv, b->root, path, n.w, b->kind, MP_VIEW_LINEAR, 0, dims, 5, 1);
	else {
		dims[2] = v->patch;
		mp_inventory_add_shape(b->inv, b->root, path, n.w, b->kind, MP_VIEW_LINEAR, 0, dims, 4, 1);
	}
	if (v->patch_bias)
		putv(b, path, n.b, v->hidden, 1);
}

/* SigLIP and CLIP (modeling_siglip.py SiglipVisionTransformer, modeling_clip.py CLIPVisionTransformer). */
static void siglip_clip(vbuild *b, const mp_vision *v)
{
	uint64_t h = v->hidden, i = v->intermediate, L = v->layers;
	const char *layer = "encoder.layers.{i}", *attn = "encoder.layers.{i}.self_attn", *mlp = "encoder.layers.{i}.mlp";

	if (!v->no_patch_embedding)
		patch_embedding(b, v, "embeddings", WB("patch_embedding"));
	if (v->class_embedding)
		putv(b, "embeddings", "class_embedding", h, 1);
	if (v->positions) /* none in VideoLLaMA 3's tower (rotary positions) */
		put(b, "embeddings", "position_embedding.weight", v->positions, h, 1);
	if (v->pre_norm)
		vnorm(b, NULL, WB("pre_layrnorm"), v->norm, h, 1);
	vnorm(b, layer, WB("layer_norm1"), v->norm, h, L);
	vnorm(b, layer, WB("layer_norm2"), v->norm, h, L);
	lin(b, attn, WB("q_proj"), h, h, v->attn_bias, L);
	lin(b, attn, WB("k_proj"), h, h, v->attn_bias, L);
	lin(b, attn, WB("v_proj"), h, h, v->attn_bias, L);
	if (v->projection_layer) /* Janus: the output projection is projection_layer, always biased */
		lin(b, attn, WB("projection_layer"), h, h, true, L);
	else
		lin(b, attn, WB("out_proj"), h, h, v->attn_bias, L);
	if (v->qk_layernorm) { /* Janus's use_qk_norm: LayerNorm(hidden) of q and of k */
		vnorm(b, attn, WB("q_norm"), MP_NORM_LAYER, h, L);
		vnorm(b, attn, WB("k_norm"), MP_NORM_LAYER, h, L);
	}
	lin(b, mlp, WB("fc1"), i, h, v->mlp_bias, L);
	lin(b, mlp, WB("fc2"), h, i, v->mlp_bias, L);
	if (v->post_norm)
		vnorm(b, NULL, WB("post_layernorm"), v->norm, h, 1);
	if (v->map_head) { /* SigLIP's attention-pooling head (vision_use_head) */
		uint64_t probe[3] = {1, 1, h};

		mp_inventory_add_shape(b->inv, b->root, "head", "probe", b->kind, MP_VIEW_VECTOR, 0, probe, 3, 1);
		put(b, "head.attention", "in_proj_weight", 3 * h, h, 1);
		putv(b, "head.attention", "in_proj_bias", 3 * h, 1);
		lin(b, "head.attention", WB("out_proj"), h, h, true, 1);
		vnorm(b, "head", WB("layernorm"), MP_NORM_LAYER, h, 1);
		lin(b, "head.mlp", WB("fc1"), i, h, true, 1);
		lin(b, "head.mlp", WB("fc2"), h, i, true, 1);
	}
}

/* Pixtral (modeling_pixtral.py PixtralVisionModel: RMSNorm, a gated MLP, no biases, rotary positions). */
static void pixtral(vbuild *b, const mp_vision *v)
{
	uint64_t h = v->hidden, i = v->intermediate, L = v->layers;
	const char *layer = "transformer.layers.{i}", *attn = "transformer.layers.{i}.attention",
	           *ffn = "transformer.layers.{i}.feed_forward";

	patch_embedding(b, v, NULL, WB("patch_conv"));
	if (v->pre_norm)
		vnorm(b, NULL, WB("ln_pre"), v->norm, h, 1);
	vnorm(b, layer, WB("attention_norm"), v->norm, h, L);
	vnorm(b, layer, WB("ffn_norm"), v->norm, h, L);
	lin(b, attn, WB("q_proj"), h, h, v->attn_bias, L);
	lin(b, attn, WB("k_proj"), h, h, v->attn_bias, L);
	lin(b, attn, WB("v_proj"), h, h, v->attn_bias, L);
	lin(b, attn, WB("o_proj"), h, h, v->attn_bias, L);
	lin(b, ffn, WB("gate_proj"), i, h, v->mlp_bias, L);
	lin(b, ffn, WB("up_proj"), i, h, v->mlp_bias, L);
	lin(b, ffn, WB("down_proj"), h, i, v->mlp_bias, L);
}

/* The Qwen-VL towers: a 3-D patch convolution, fused qkv, fc1/fc2 (Qwen2-VL), gate/up/down (Qwen2.5-VL) or
 * linear_fc1/linear_fc2 (Qwen3-VL, Qwen3.5), learned positions (Qwen3-VL), the merger over merge^2 patches and
 * Qwen3-VL's DeepStack mergers. */
static void qwen_vl(vbuild *b, const mp_vision *v)
{
	uint64_t h = v->hidden, i = v->intermediate, L = v->layers, hm = v->hidden * v->merge * v->merge;
	bool q3 = v->tower == MP_TOWER_QWEN3_VL;
	const char *blk = "blocks.{i}", *attn = "blocks.{i}.attn", *mlp = "blocks.{i}.mlp";

	patch_embedding(b, v, "patch_embed", WB("proj"));
	put(b, NULL, "pos_embed.weight", v->positions, h, 1);
	vnorm(b, blk, WB("norm1"), v->norm, h, L);
	vnorm(b, blk, WB("norm2"), v->norm, h, L);
	if (v->split_qkv) {
		lin(b, attn, WB("q"), h, h, v->attn_bias, L);
		lin(b, attn, WB("k"), h, h, v->attn_bias, L);
		lin(b, attn, WB("v"), h, h, v->attn_bias, L);
	} else {
		lin(b, attn, WB("qkv"), v->qkv_rows ? v->qkv_rows : 3 * h, h, v->attn_bias, L);
	}
	lin(b, attn, WB("proj"), h, h, v->attn_bias, L);
	if (v->gated_mlp) {
		lin(b, mlp, WB("gate_proj"), i, h, v->mlp_bias, L);
		lin(b, mlp, WB("up_proj"), i, h, v->mlp_bias, L);
		lin(b, mlp, WB("down_proj"), h, i, v->mlp_bias, L);
	} else if (q3) {
		lin(b, mlp, WB("linear_fc1"), i, h, v->mlp_bias, L);
		lin(b, mlp, WB("linear_fc2"), h, i, v->mlp_bias, L);
	} else {
		lin(b, mlp, WB("fc1"), i, h, v->mlp_bias, L);
		lin(b, mlp, WB("fc2"), h, i, v->mlp_bias, L);
	}
	b->kind = MP_TK_PROJECTOR;
	if (q3 && v->omni_merger) { /* modeling_qwen3_omni_moe.py Qwen3OmniMoeVisionPatchMerger */
		vnorm(b, "merger", WB("ln_q"), MP_NORM_LAYER, h, 1);
		lin(b, "merger", WB("mlp.0"), hm, hm, true, 1);
		lin(b, "merger", WB("mlp.2"), v->out_hidden, hm, true, 1);
		vnorm(b, "merger_list.{i}", WB("ln_q"), MP_NORM_LAYER, hm, v->deepstack);
		lin(b, "merger_list.{i}", WB("mlp.0"), hm, hm, true, v->deepstack);
		lin(b, "merger_list.{i}", WB("mlp.2"), v->out_hidden, hm, true, v->deepstack);
	} else if (q3) {
		vnorm(b, "merger", WB("norm"), v->projector_norm, h, 1);
		lin(b, "merger", WB("linear_fc1"), hm, hm, true, 1);
		lin(b, "merger", WB("linear_fc2"), v->out_hidden, hm, true, 1);
		vnorm(b, "deepstack_merger_list.{i}", WB("norm"), MP_NORM_LAYER, hm, v->deepstack);
		lin(b, "deepstack_merger_list.{i}", WB("linear_fc1"), hm, hm, true, v->deepstack);
		lin(b, "deepstack_merger_list.{i}", WB("linear_fc2"), v->out_hidden, hm, true, v->deepstack);
	} else {
		vnorm(b, "merger", WB("ln_q"), v->projector_norm, h, 1);
		lin(b, "merger", WB("mlp.0"), hm, hm, true, 1);
		lin(b, "merger", WB("mlp.2"), v->out_hidden, hm, true, 1);
	}
}

/* Llama 4 (modeling_llama4.py Llama4VisionModel, Llama4VisionPixelShuffleMLP and Llama4MultiModalProjector). */
static void llama4(vbuild *b, const mp_vision *v)
{
	uint64_t h = v->hidden, i = v->intermediate, L = v->layers;
	const char *layer = "model.layers.{i}", *attn = "model.layers.{i}.self_attn", *mlp = "model.layers.{i}.mlp";

	put(b, "patch_embedding", "linear.weight", h, v->channels * v->patch * v->patch, 1);
	putv(b, NULL, "class_embedding", h, 1);
	put(b, NULL, "positional_embedding_vlm", v->positions, h, 1);
	vnorm(b, NULL, WB("layernorm_pre"), v->norm, h, 1);
	vnorm(b, NULL, WB("layernorm_post"), v->norm, h, 1);
	vnorm(b, layer, WB("input_layernorm"), v->norm, h, L);
	vnorm(b, layer, WB("post_attention_layernorm"), v->norm, h, L);
	lin(b, attn, WB("q_proj"), h, h, v->attn_bias, L);
	lin(b, attn, WB("k_proj"), h, h, v->attn_bias, L);
	lin(b, attn, WB("v_proj"), h, h, v->attn_bias, L);
	lin(b, attn, WB("o_proj"), h, h, v->attn_bias, L);
	lin(b, mlp, WB("fc1"), i, h, v->mlp_bias, L);
	lin(b, mlp, WB("fc2"), h, i, v->mlp_bias, L);
	/* the pixel-shuffle adapter (fc1 intermediate -> projector_input_dim, fc2 projector_output_dim square) */
	put(b, "vision_adapter.mlp", "fc1.weight", v->adapter_in, i, 1);
	put(b, "vision_adapter.mlp", "fc2.weight", v->adapter_out, v->adapter_out, 1);
}

/*
 * The projectors of the towers above that sit under a root of their own: Gemma 3's soft-embedding RMSNorm of the
 * tower width and mm_input_projection_weight (stored in x out); LLaVA's and Mistral 3's [RMSNorm, patch merger (h x h
 * merge^2)], linear_1 (decoder x h x feature_layers), linear_2; Llama 4's linear_1 (no bias).
 */
static void projector(vbuild *b, const mp_vision *v)
{
	uint64_t h = v->hidden;

	b->kind = MP_TK_PROJECTOR;
	b->root = MP_ROOT_PROJECTOR;
	switch (v->projector) {
	case MP_PROJECTOR_GEMMA3: {
		mp_tensor_spec s = {.root = b->root, .leaf = "mm_input_projection_weight", .kind = b->kind,
		                    .view = MP_VIEW_T, .rows = v->out_hidden, .cols = h, .count = 1};

		vnorm(b, NULL, WB("mm_soft_emb_norm"), MP_NORM_RMS, h, 1);
		mp_inventory_add(b->inv, &s);
		break;
	}
	case MP_PROJECTOR_MLP2:
		vnorm(b, NULL, WB("norm"), v->projector_norm, h, 1);
		if (v->patch_merger)
			put(b, "patch_merger", "merging_layer.weight", h, h * v->merge * v->merge, 1);
		lin(b, NULL, WB("linear_1"), v->out_hidden, h * (v->feature_layers ? v->feature_layers : 1),
		    v->projector_bias, 1);
		lin(b, NULL, WB("linear_2"), v->out_hidden, v->out_hidden, v->projector_bias, 1);
		break;
	case MP_PROJECTOR_LLAMA4:
		put(b, NULL, "linear_1.weight", v->out_hidden, v->feature_dim, 1);
		break;
	default:
		break;
	}
}

void mp_vision_build(mp_model *m)
{
	const mp_vision *v = &m->vision;
	vbuild b = {&m->inv, MP_ROOT_TOWER, MP_TK_VISION};

	if (v->hidden == 0)
		return;
	mp_inventory_root(&m->inv, MP_ROOT_TOWER, v->tower_root ? v->tower_root : "model.vision_tower.");
	mp_inventory_root(&m->inv, MP_ROOT_PROJECTOR, v->projector_root ? v->projector_root : "model.multi_modal_projector.");
	switch (v->tower) {
	case MP_TOWER_PIXTRAL:
		pixtral(&b, v);
		break;
	case MP_TOWER_QWEN2_VL:
	case MP_TOWER_QWEN2_5_VL:
	case MP_TOWER_QWEN3_VL:
		qwen_vl(&b, v);
		return; /* its merger sits under the tower's root */
	case MP_TOWER_LLAMA4:
		llama4(&b, v);
		break;
	default:
		siglip_clip(&b, v);
		if (v->twin_root) { /* Video-LLaVA: its image tower, the same CLIPVisionModel again */
			mp_inventory_root(&m->inv, MP_ROOT_EXTRA, v->twin_root);
			b.root = MP_ROOT_EXTRA;
			siglip_clip(&b, v);
			b.root = MP_ROOT_TOWER;
		}
		break;
	}
	projector(&b, v);
}
