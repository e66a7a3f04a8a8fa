/*
 * vision.c: the image tower and projector of multimodal wrappers, as tensors. One description (mp_vision) covers
 * the ViTs transformers builds for them: SigLIP (modeling_siglip.py, Gemma 3), CLIP (modeling_clip.py, LLaVA), Llama
 * 4's (modeling_llama4.py Llama4VisionModel: a linear patch embedding, class token, LayerNorms, the pixel-shuffle
 * adapter), Pixtral (modeling_pixtral.py, Mistral 3) and the Qwen-VL towers (modeling_qwen2_vl.py,
 * modeling_qwen2_5_vl.py, modeling_qwen3_vl.py); the reader (model/) sets which modules a tower has. The parameter
 * count and the weights both come from this one list, so they cannot disagree. Pure arithmetic: sizes are checked where
 * they are summed.
 */
#include <string.h>

#include "memplan.h"

typedef struct vbuild {
	mp_tensor *out;
	size_t cap, n;
} vbuild;

static void put(vbuild *b, const char *name, uint64_t rows, uint64_t cols, uint64_t count, bool vector)
{
	mp_tensor *t;

	if (rows == 0 || cols == 0 || count == 0)
		return;
	if (b->n < b->cap) {
		t = &b->out[b->n];
		memset(t, 0, sizeof(*t));
		t->name = name;
		t->cls = MP_TC_VISION;
		t->rows = rows;
		t->cols = cols;
		t->count = count;
		t->split = MP_SPLIT_NONE;
		t->vector = vector;
	}
	b->n++;
}

/* A linear layer out x in and its bias. */
static void lin(vbuild *b, const char *name, const char *bias, uint64_t out, uint64_t in, bool with_bias,
                uint64_t count)
{
	put(b, name, out, in, count, false);
	if (with_bias)
		put(b, bias, 1, out, count, true);
}

/* A norm of width w: LayerNorm weight and bias, RMSNorm a weight, none nothing. */
static void vnorm(vbuild *b, const char *name, const char *bias, mp_norm_kind k, uint64_t w, uint64_t count)
{
	if (k == MP_NORM_NONE)
		return;
	put(b, name, 1, w, count, true);
	if (k == MP_NORM_LAYER)
		put(b, bias, 1, w, count, true);
}

/*
 * The tensors, module by module:
 *   patch embedding: a convolution hidden x patch_values (+ bias: SigLIP, Qwen3-VL); CLIP's class embedding;
 *   the learned position table (SigLIP (image/patch)^2 rows, CLIP one more for the class token, Qwen3-VL
 *   num_position_embeddings; Pixtral and Qwen2/2.5-VL rotate instead); CLIP pre_layrnorm, Pixtral ln_pre;
 *   each block: two norms, q, k, v, o (Qwen-VL fuse q, k, v: the same parameters), fc1 + fc2 or gate + up + down;
 *   post_layernorm; SigLIP's attention-pooling head (probe, in_proj 3h x h, out_proj, layernorm, MLP).
 *   Projectors: Gemma 3 soft-embedding norm (tower width) + mm_input_projection (tower x decoder width);
 *   LLaVA/Mistral 3 [RMSNorm, patch merger (h x h merge^2)], linear_1 (decoder x h x feature_layers), linear_2;
 *   the Qwen merger: a norm (tower width), fc1 (h merge^2 square), fc2 (decoder x h merge^2), and Qwen3-VL's
 *   DeepStack mergers (their norm over h merge^2).
 * Worked example (tests/test_models.c, the SigLIP of Gemma3Config's defaults: width 768, 12 layers, MLP 3072,
 * 224 px / 16 px patches, head, decoder 2304): 94,654,464 parameters, transformers' count.
 */
size_t mp_vision_tensors(const mp_model *m, mp_tensor *out, size_t cap)
{
	const mp_vision *v = &m->vision;
	vbuild b = {out, cap, 0};
	uint64_t h = v->hidden, i = v->intermediate, L = v->layers,
	         hm = v->hidden * (v->merge ? v->merge * v->merge : 1);

	if (h == 0)
		return 0;
	lin(&b, "vision.patch_embedding", "vision.patch_embedding.bias", h, v->patch_values, v->patch_bias, 1);
	if (v->class_embedding)
		put(&b, "vision.class_embedding", 1, h, 1, true);
	put(&b, "vision.position_embedding", v->positions, h, 1, false);
	if (v->pre_norm)
		vnorm(&b, "vision.pre_norm", "vision.pre_norm.bias", v->norm, h, 1);
	vnorm(&b, "vision.layers.norms", "vision.layers.norms.bias", v->norm, h, 2 * L);
	if (v->fused_qkv)
		lin(&b, "vision.layers.qkv", "vision.layers.qkv.bias", 3 * h, h, v->attn_bias, L);
	else
		lin(&b, "vision.layers.q_k_v", "vision.layers.q_k_v.bias", h, h, v->attn_bias, 3 * L);
	lin(&b, "vision.layers.o_proj", "vision.layers.o_proj.bias", h, h, v->attn_bias, L);
	lin(&b, "vision.layers.mlp_in", "vision.layers.mlp_in.bias", i, h, v->mlp_bias, v->gated_mlp ? 2 * L : L);
	lin(&b, "vision.layers.mlp_out", "vision.layers.mlp_out.bias", h, i, v->mlp_bias, L);
	if (v->post_norm)
		vnorm(&b, "vision.post_norm", "vision.post_norm.bias", v->norm, h, 1);
	if (v->map_head) {
		put(&b, "vision.head.probe", 1, h, 1, true);
		lin(&b, "vision.head.in_proj", "vision.head.in_proj.bias", 3 * h, h, true, 1);
		lin(&b, "vision.head.out_proj", "vision.head.out_proj.bias", h, h, true, 1);
		vnorm(&b, "vision.head.layernorm", "vision.head.layernorm.bias", MP_NORM_LAYER, h, 1);
		lin(&b, "vision.head.fc1", "vision.head.fc1.bias", i, h, true, 1);
		lin(&b, "vision.head.fc2", "vision.head.fc2.bias", h, i, true, 1);
	}
	switch (v->projector) {
	case MP_PROJECTOR_GEMMA3:
		vnorm(&b, "projector.soft_emb_norm", NULL, MP_NORM_RMS, h, 1);
		put(&b, "projector.input_projection", v->out_hidden, h, 1, false);
		break;
	case MP_PROJECTOR_MLP2:
		vnorm(&b, "projector.norm", "projector.norm.bias", v->projector_norm, h, 1);
		if (v->merge > 1)
			put(&b, "projector.patch_merger", h, hm, 1, false);
		lin(&b, "projector.linear_1", "projector.linear_1.bias", v->out_hidden,
		    h * (v->feature_layers ? v->feature_layers : 1), v->projector_bias, 1);
		lin(&b, "projector.linear_2", "projector.linear_2.bias", v->out_hidden, v->out_hidden,
		    v->projector_bias, 1);
		break;
	case MP_PROJECTOR_QWEN_MERGER:
		vnorm(&b, "merger.norm", "merger.norm.bias", v->projector_norm, h, 1);
		lin(&b, "merger.fc1", "merger.fc1.bias", hm, hm, true, 1 + v->deepstack);
		lin(&b, "merger.fc2", "merger.fc2.bias", v->out_hidden, hm, true, 1 + v->deepstack);
		vnorm(&b, "deepstack_merger.norm", "deepstack_merger.norm.bias", MP_NORM_LAYER, hm, v->deepstack);
		break;
	case MP_PROJECTOR_LLAMA4:
		/* modeling_llama4.py Llama4VisionPixelShuffleMLP (fc1 intermediate -> projector_input_dim, fc2
		 * projector_output_dim square, no biases) and Llama4MultiModalProjector (linear_1, no bias) */
		put(&b, "vision.adapter.fc1", v->adapter_in, i, 1, false);
		put(&b, "vision.adapter.fc2", v->adapter_out, v->adapter_out, 1, false);
		put(&b, "projector.linear_1", v->out_hidden, v->feature_dim, 1, false);
		break;
	case MP_PROJECTOR_NONE:
		break;
	}
	return b.n;
}
