/*
 * decoder.c: the decoder's tensors as transformers builds them, into the inventory: embeddings, each layer's
 * attention (grouped-query, fused, latent, per-layer widths), recurrent mixer, dense MLP or experts and norms, the
 * final norm and the head, with the names of the model's family (mp_names). Module shapes follow transformers 5.24's
 * modeling files (modeling_llama.py and its relatives; each branch names the one it follows); the tests hold every
 * reference config's inventory name by name and shape by shape against the state_dict transformers builds
 * (tests/ref/hf/state_dicts.json). Modules a family builds by shapes no field of mp_model describes are added by
 * its reader (model/) before mp_model_build; the image towers by vision.c. Pure: no allocation.
 */
#include <string.h>

#include "memplan.h"

const mp_names mp_names_llama = {MP_NAMES_LLAMA_FIELDS};

/* The names of a layer's norms beyond those its family names (the architecture object allows up to 8). */
static const mp_wb extra_norms[MP_NAMES_MAX_NORMS] = {
    {"norm_0.weight", "norm_0.bias"}, {"norm_1.weight", "norm_1.bias"}, {"norm_2.weight", "norm_2.bias"},
    {"norm_3.weight", "norm_3.bias"}, {"norm_4.weight", "norm_4.bias"}, {"norm_5.weight", "norm_5.bias"},
    {"norm_6.weight", "norm_6.bias"}, {"norm_7.weight", "norm_7.bias"}};

typedef struct builder {
	mp_inventory *inv;
	const mp_model *m;
	const mp_names *n;
	bool overflow;
} builder;

/* x * y, or a mark on the builder (mp_model_build reports it naming the model's largest dimension). */
static uint64_t mul(builder *b, uint64_t x, uint64_t y)
{
	uint64_t p;

	if (!mp_mul_u64(x, y, &p)) {
		b->overflow = true;
		return 0;
	}
	return p;
}

static uint64_t add(builder *b, uint64_t x, uint64_t y)
{
	uint64_t s;

	if (!mp_add_u64(x, y, &s)) {
		b->overflow = true;
		return 0;
	}
	return s;
}

/* One matrix, rows (out) x cols (in), `count` of it. */
static void mat(builder *b, const char *path, const char *leaf, mp_tensor_kind kind, uint64_t rows, uint64_t cols,
                uint64_t count, mp_tp_split split, mp_step_product step)
{
	mp_tensor_spec s = {.root = 1, .path = path, .leaf = leaf, .kind = kind, .split = split, .step = step,
	                    .view = b->n->conv1d ? MP_VIEW_T : MP_VIEW_LINEAR, .rows = rows, .cols = cols, .count = count};

	if (leaf == NULL)
		return;
	mp_inventory_add(b->inv, &s);
}

/* One vector of `values`, `count` of it. */
static void vec(builder *b, const char *path, const char *leaf, mp_tensor_kind kind, uint64_t values, uint64_t count,
                mp_tp_split split)
{
	mp_tensor_spec s = {.root = 1, .path = path, .leaf = leaf, .kind = kind, .split = split, .view = MP_VIEW_VECTOR,
	                    .cols = values, .count = count};

	if (leaf == NULL)
		return;
	mp_inventory_add(b->inv, &s);
}

/* A linear layer out x in with an optional bias; the bias follows the output split (a row-parallel layer's bias is
 * replicated: vLLM RowParallelLinear adds it once after the reduction). */
static void linear(builder *b, const char *path, mp_wb names, mp_tensor_kind kind, uint64_t out, uint64_t in, bool bias,
                   uint64_t count, mp_tp_split split, mp_step_product step)
{
	mat(b, path, names.w, kind, out, in, count, split, step);
	if (bias)
		vec(b, path, names.b, kind, out, count, split == MP_SPLIT_COLS ? MP_SPLIT_NONE : split);
}

/* A KV-head-split linear (k or v): rows kv x d. */
static void kv_linear(builder *b, const char *path, mp_wb names, uint64_t kv, uint64_t d, uint64_t in, bool bias,
                      uint64_t count)
{
	mp_tensor_spec s = {.root = 1, .path = path, .leaf = names.w, .kind = MP_TK_ATTENTION, .split = MP_SPLIT_KV_ROWS,
	                    .step = MP_STEP_QKV, .view = b->n->conv1d ? MP_VIEW_T : MP_VIEW_LINEAR,
	                    .rows = mul(b, kv, d), .cols = in, .count = count, .kv_heads = kv};

	if (names.w == NULL)
		return;
	mp_inventory_add(b->inv, &s);
	if (bias && names.b) {
		s.leaf = names.b;
		s.view = MP_VIEW_VECTOR;
		s.cols = s.rows;
		s.step = MP_STEP_NONE;
		mp_inventory_add(b->inv, &s);
	}
}

/* A norm of `width`: RMSNorm a weight, LayerNorm a weight and a bias, MP_NORM_NONE nothing. */
static void norm(builder *b, const char *path, mp_wb names, mp_norm_kind kind, mp_tensor_kind tk, uint64_t width,
                 uint64_t count, mp_tp_split split)
{
	if (kind == MP_NORM_NONE)
		return;
	vec(b, path, names.w, tk, width, count, split);
	if (kind == MP_NORM_LAYER)
		vec(b, path, names.b, tk, width, count, split);
}

/* ----- attention ------------------------------------------------------------------------------------------ */

/*
 * Grouped-query attention, every layer alike (modeling_llama.py LlamaAttention): q (heads x d, twice that with the
 * gated attention of Qwen3-Next), k and v (kv x d), o; biases; q/k norms per head (qwen3), over the whole
 * projections (olmo2) or as LayerNorms (phi); gpt-oss's sinks. A fused qkv (phi3 qkv_proj, falcon query_key_value,
 * GPT-2 c_attn) holds the same rows in one tensor.
 */
static void attention_gqa(builder *b, uint64_t L)
{
	const mp_model *m = b->m;
	const mp_names *n = b->n;
	uint64_t h = m->attn_input_size ? m->attn_input_size : m->hidden_size, d = m->head_dim;
	uint64_t q = mul(b, m->num_heads, d), kv = mul(b, m->num_kv_heads, d);

	if (n->qkv.w) {
		mp_tensor_spec s = {.root = 1, .path = n->attn, .leaf = n->qkv.w, .kind = MP_TK_ATTENTION,
		                    .split = MP_SPLIT_QKV_ROWS, .step = MP_STEP_QKV,
		                    .view = n->conv1d ? MP_VIEW_T : MP_VIEW_LINEAR, .rows = add(b, q, mul(b, 2, kv)),
		                    .cols = h, .count = L, .heads = m->num_heads, .kv_heads = m->num_kv_heads};

		mp_inventory_add(b->inv, &s);
		if (m->qkv_bias && n->qkv.b) {
			s.leaf = n->qkv.b;
			s.view = MP_VIEW_VECTOR;
			s.cols = s.rows;
			s.step = MP_STEP_NONE;
			mp_inventory_add(b->inv, &s);
		}
	} else {
		linear(b, n->attn, n->q, MP_TK_ATTENTION, mul(b, q, m->attn_output_gate ? 2 : 1), h, m->qkv_bias, L,
		       MP_SPLIT_ROWS, MP_STEP_QKV);
		kv_linear(b, n->attn, n->k, m->num_kv_heads, d, h, m->qkv_bias, L);
		kv_linear(b, n->attn, n->v, m->num_kv_heads, d, h, m->qkv_bias, L);
	}
	linear(b, n->attn, n->o, MP_TK_ATTENTION, m->hidden_size, q, m->o_bias, L, MP_SPLIT_COLS, MP_STEP_O);
	if (m->qk_norm_full && m->qk_norm_heads) {
		/* Cohere's use_qk_norm: CohereLayerNorm((heads, head_dim)), weights of [heads, d] and [kv, d] */
		mat(b, n->attn, n->q_norm.w, MP_TK_ATTENTION, m->num_heads, d, L, MP_SPLIT_ROWS, MP_STEP_NONE);
		if (m->qk_norm_heads_bias) /* Chameleon's ChameleonLayerNorm((heads, head_dim)): a bias of that shape too */
			mat(b, n->attn, n->q_norm.b, MP_TK_ATTENTION, m->num_heads, d, L, MP_SPLIT_ROWS, MP_STEP_NONE);
		{
			mp_tensor_spec s = {.root = 1, .path = n->attn, .leaf = n->k_norm.w, .kind = MP_TK_ATTENTION,
			                    .split = MP_SPLIT_KV_ROWS, .view = MP_VIEW_LINEAR, .rows = m->num_kv_heads,
			                    .cols = d, .count = L, .kv_heads = m->num_kv_heads};

			if (n->k_norm.w)
				mp_inventory_add(b->inv, &s);
			s.leaf = n->k_norm.b;
			if (m->qk_norm_heads_bias && s.leaf)
				mp_inventory_add(b->inv, &s);
		}
	} else if (m->qk_norm_full) {
		/* one weight per value of the whole q and k projections (OLMo-2), split with them */
		vec(b, n->attn, n->q_norm.w, MP_TK_ATTENTION, q, L, MP_SPLIT_ROWS);
		{
			mp_tensor_spec s = {.root = 1, .path = n->attn, .leaf = n->k_norm.w, .kind = MP_TK_ATTENTION,
			                    .split = MP_SPLIT_KV_ROWS, .view = MP_VIEW_VECTOR, .cols = kv, .count = L,
			                    .kv_heads = m->num_kv_heads};

			if (n->k_norm.w)
				mp_inventory_add(b->inv, &s);
		}
	} else if (m->qk_norm_layer) {
		/* Phi's qk_layernorm: LayerNorm(head_dim) of q and of k */
		norm(b, n->attn, n->q_norm, MP_NORM_LAYER, MP_TK_ATTENTION, d, L, MP_SPLIT_NONE);
		norm(b, n->attn, n->k_norm, MP_NORM_LAYER, MP_TK_ATTENTION, d, L, MP_SPLIT_NONE);
	} else if (m->qk_norm) {
		vec(b, n->attn, n->q_norm.w, MP_TK_ATTENTION, d, L, MP_SPLIT_NONE);
		vec(b, n->attn, n->k_norm.w, MP_TK_ATTENTION, d, L, MP_SPLIT_NONE);
	}
	if (m->attention_sinks) /* gpt-oss: a sink logit per head, split with the heads */
		vec(b, n->attn, n->sinks, MP_TK_ATTENTION, m->num_heads, L, MP_SPLIT_ROWS);
}

/*
 * Multi-head latent attention (DeepSeek-V2/V3, arXiv 2405.04434 sec. 2.1; modeling_deepseek_v3.py): q_a (h ->
 * q_lora) + q_a_layernorm + q_b (q_lora -> heads x (nope + rope)), or q_proj without a query LoRA; kv_a_proj_with_mqa
 * (h -> kv_lora + rope) + kv_a_layernorm + kv_b (kv_lora -> heads x (nope + v)); o (heads x v -> h). The latents are
 * replicated on every rank; q_b, kv_b split by heads. DeepSeek-V3.2's indexer (modeling_deepseek_v32.py
 * DeepseekV32Indexer): wq_b (q_lora -> heads x dim), wk (h -> dim), k_norm (a LayerNorm of dim), weights_proj (h ->
 * heads), replicated (vLLM), on the layers that run their own. Worked example (DeepseekV32Config: 64 heads of 128,
 * q_lora 1536, hidden 7168): 12,582,912 + 917,504 + 256 + 458,752 = 13,959,424 indexer parameters per layer.
 */
static void attention_mla(builder *b, uint64_t L)
{
	const mp_model *m = b->m;
	const mp_names *n = b->n;
	uint64_t h = m->hidden_size, qk = add(b, m->qk_nope_head_dim, m->qk_rope_head_dim);
	uint64_t qh = mul(b, m->num_heads, qk), kvh = mul(b, m->num_heads, add(b, m->qk_nope_head_dim, m->v_head_dim));
	uint64_t vo = mul(b, m->num_heads, m->v_head_dim);

	if (m->q_lora_rank > 0) {
		linear(b, n->attn, n->q_a, MP_TK_ATTENTION, m->q_lora_rank, h, m->qkv_bias, L, MP_SPLIT_NONE, MP_STEP_Q_A);
		vec(b, n->attn, n->q_a_norm.w, MP_TK_ATTENTION, m->q_lora_rank, L, MP_SPLIT_NONE);
		linear(b, n->attn, n->q_b, MP_TK_ATTENTION, qh, m->q_lora_rank, false, L, MP_SPLIT_ROWS, MP_STEP_Q_B);
	} else {
		linear(b, n->attn, n->q, MP_TK_ATTENTION, qh, h, false, L, MP_SPLIT_ROWS, MP_STEP_Q);
	}
	linear(b, n->attn, n->kv_a, MP_TK_ATTENTION, add(b, m->kv_lora_rank, m->qk_rope_head_dim), h, m->qkv_bias, L,
	       MP_SPLIT_NONE, MP_STEP_KV_A);
	vec(b, n->attn, n->kv_a_norm.w, MP_TK_ATTENTION, m->kv_lora_rank, L, MP_SPLIT_NONE);
	linear(b, n->attn, n->kv_b, MP_TK_ATTENTION, kvh, m->kv_lora_rank, false, L, MP_SPLIT_ROWS, MP_STEP_KV_B);
	linear(b, n->attn, n->o, MP_TK_ATTENTION, h, vo, m->o_bias, L, MP_SPLIT_COLS, MP_STEP_O);
	if (m->indexer_head_dim) {
		uint64_t IL = mp_model_indexer_layers(m);

		mat(b, n->attn, n->ix_wq_b.w, MP_TK_ATTENTION, mul(b, m->indexer_heads, m->indexer_head_dim),
		    m->q_lora_rank, IL, MP_SPLIT_NONE, MP_STEP_INDEXER_Q);
		mat(b, n->attn, n->ix_wk.w, MP_TK_ATTENTION, m->indexer_head_dim, h, IL, MP_SPLIT_NONE, MP_STEP_INDEXER_K);
		norm(b, n->attn, n->ix_k_norm, MP_NORM_LAYER, MP_TK_ATTENTION, m->indexer_head_dim, IL, MP_SPLIT_NONE);
		mat(b, n->attn, n->ix_weights.w, MP_TK_ATTENTION, m->indexer_heads, h, IL, MP_SPLIT_NONE, MP_STEP_INDEXER_K);
	}
}

/*
 * Attention that differs per layer (m->attn_per_layer; Gemma 4's Gemma4TextAttention and Gemma 3n's
 * Gemma3nTextAttention, transformers 5.24): q_proj (hidden -> heads x d), o_proj (heads x d -> hidden) and q_norm (d)
 * in every layer; k_proj and v_proj (hidden -> kv x d) and k_norm (d) only in a layer with a cache of its own (not
 * MP_LAYER_KV_SHARED); no v_proj in a global layer of attention_k_eq_v; v_norm has no weight. d and kv are
 * global_head_dim and global_kv_heads in an MP_LAYER_GLOBAL layer; v_proj's heads and o_proj's input are of v_head_dim
 * in every layer when it is set (MiMo-V2-Flash, modeling_mimo_v2_flash.py MiMoV2FlashAttention: q and k of head_dim
 * 192, v of 128). One row per kind of layer, counted over the layers that hold it. Worked example (Gemma4TextConfig defaults: hidden 2304, 8 heads, kv 4 of 256 on sliding layers, kv 4
 * of 512 on the full ones): 14,156,288 per sliding layer, 28,312,576 per full layer.
 */
static void attention_per_layer(builder *b)
{
	const mp_model *m = b->m;
	const mp_names *n = b->n;

	for (int g = 0; g < 2; g++) {
		uint64_t all = 0, own = 0, d = g ? m->global_head_dim : m->head_dim;
		uint64_t kv = g ? m->global_kv_heads : m->num_kv_heads, q = mul(b, m->num_heads, d);
		uint64_t vd = m->v_head_dim ? m->v_head_dim : d, vo = mul(b, m->num_heads, vd);

		for (uint64_t i = 0; i < m->num_layers && i < MP_MAX_LAYERS; i++) {
			unsigned f = m->layer_flags[i];

			if (!(f & MP_LAYER_ATTENTION) || ((f & MP_LAYER_GLOBAL) != 0) != (g == 1))
				continue;
			all++;
			own += !(f & MP_LAYER_KV_SHARED);
		}
		linear(b, n->attn, n->q, MP_TK_ATTENTION, q, m->hidden_size, m->qkv_bias, all, MP_SPLIT_ROWS, MP_STEP_QKV);
		kv_linear(b, n->attn, n->k, kv, d, m->hidden_size, m->qkv_bias, own);
		if (!(g && m->global_k_eq_v))
			kv_linear(b, n->attn, n->v, kv, vd, m->hidden_size, m->qkv_bias, own);
		linear(b, n->attn, n->o, MP_TK_ATTENTION, m->hidden_size, vo, m->o_bias, all, MP_SPLIT_COLS, MP_STEP_O);
		if (m->qk_norm) {
			vec(b, n->attn, n->q_norm.w, MP_TK_ATTENTION, d, all, MP_SPLIT_NONE);
			vec(b, n->attn, n->k_norm.w, MP_TK_ATTENTION, d, own, MP_SPLIT_NONE);
		}
	}
}

/* ----- recurrent mixers ----------------------------------------------------------------------------------- */

/*
 * The state-space mixers, as transformers builds them; channels split over tensor-parallel ranks as vLLM's
 * MambaMixer / MambaMixer2 split them:
 *   Mamba (modeling_mamba.py MambaMixer): in_proj h -> 2 d_inner, conv1d [d_inner, 1, K] (+ bias), x_proj d_inner ->
 *     dt_rank + 2 N, dt_proj dt_rank -> d_inner with bias, A_log [d_inner, N], D [d_inner], out_proj d_inner -> h;
 *     in_proj and out_proj with biases when use_bias; Jamba (modeling_jamba.py JambaMambaMixer) adds RMSNorm weights
 *     on dt (dt_rank), B and C (N each).
 *   Mamba-2 (modeling_mamba2.py Mamba2Mixer): in_proj h -> 2 d_inner + 2 G N + H, conv1d over d_inner + 2 G N
 *     channels, dt_bias, A_log and D of H each, the gated norm's d_inner weight, out_proj d_inner -> h.
 * Worked example: mamba-130m (h 768, d_inner 1536, N 16, K 4, dt_rank 48) -> 2,359,296 + 7,680 + 122,880 + 75,264 +
 * 24,576 + 1,536 + 1,179,648 = 3,770,880 per layer.
 */
static void mamba(builder *b, const char *p, uint64_t S)
{
	const mp_model *m = b->m;
	const mp_ssm *s = &m->ssm;
	uint64_t h = m->hidden_size, conv = s->d_inner;
	mp_tensor_spec cs = {.root = 1, .path = p, .leaf = "conv1d.weight", .kind = MP_TK_RECURRENT,
	                     .split = MP_SPLIT_ROWS, .view = MP_VIEW_LINEAR, .conv = true, .count = S};

	if (s->kind == MP_SSM_MAMBA2)
		conv = add(b, s->d_inner, mul(b, mul(b, 2, s->n_groups), s->d_state));
	linear(b, p, (mp_wb){"in_proj.weight", "in_proj.bias"}, MP_TK_RECURRENT,
	       s->kind == MP_SSM_MAMBA1 ? mul(b, 2, s->d_inner) : add(b, add(b, s->d_inner, conv), s->n_heads), h,
	       s->proj_bias, S, MP_SPLIT_ROWS, MP_STEP_MIXER_IN);
	cs.rows = conv;
	cs.cols = s->conv_kernel;
	mp_inventory_add(b->inv, &cs);
	if (s->conv_bias)
		vec(b, p, "conv1d.bias", MP_TK_RECURRENT, conv, S, MP_SPLIT_ROWS);
	if (s->kind == MP_SSM_MAMBA1) {
		mat(b, p, "x_proj.weight", MP_TK_RECURRENT, add(b, s->dt_rank, mul(b, 2, s->d_state)), s->d_inner, S,
		    MP_SPLIT_COLS, MP_STEP_MIXER_X_DT);
		linear(b, p, (mp_wb){"dt_proj.weight", "dt_proj.bias"}, MP_TK_RECURRENT, s->d_inner, s->dt_rank, true, S,
		       MP_SPLIT_ROWS, MP_STEP_MIXER_X_DT);
		mat(b, p, "A_log", MP_TK_RECURRENT, s->d_inner, s->d_state, S, MP_SPLIT_ROWS, MP_STEP_NONE);
		vec(b, p, "D", MP_TK_RECURRENT, s->d_inner, S, MP_SPLIT_ROWS);
		if (s->dt_bc_norms) {
			vec(b, p, "dt_layernorm.weight", MP_TK_RECURRENT, s->dt_rank, S, MP_SPLIT_NONE);
			vec(b, p, "b_layernorm.weight", MP_TK_RECURRENT, s->d_state, S, MP_SPLIT_NONE);
			vec(b, p, "c_layernorm.weight", MP_TK_RECURRENT, s->d_state, S, MP_SPLIT_NONE);
		}
	} else {
		vec(b, p, "dt_bias", MP_TK_RECURRENT, s->n_heads, S, MP_SPLIT_ROWS);
		vec(b, p, "A_log", MP_TK_RECURRENT, s->n_heads, S, MP_SPLIT_ROWS);
		vec(b, p, "D", MP_TK_RECURRENT, s->n_heads, S, MP_SPLIT_ROWS);
		if (s->gated_norm)
			vec(b, p, "norm.weight", MP_TK_RECURRENT, s->d_inner, S, MP_SPLIT_ROWS);
	}
	linear(b, p, (mp_wb){"out_proj.weight", "out_proj.bias"}, MP_TK_RECURRENT, h, s->d_inner,
	       s->out_bias == MP_BIAS_AS_MLP ? s->proj_bias : s->out_bias == MP_BIAS_ON, S,
	       MP_SPLIT_COLS, MP_STEP_MIXER_OUT);
}

/*
 * The linear-attention mixers (heads split over tensor-parallel ranks, as vLLM's GatedDeltaNet, KimiDeltaAttention,
 * MiniMaxText01LinearAttention and ShortConv shard them):
 *   gated delta net (modeling_qwen3_next.py Qwen3NextGatedDeltaNet): in_proj_qkvz h -> 2 Kd + 2 Vd, in_proj_ba h ->
 *     2 Hv (Qwen3.5, modeling_qwen3_5.py, keeps them apart: in_proj_qkv 2 Kd + Vd, in_proj_z Vd, in_proj_b and in_proj_a
 *     Hv each), conv1d over 2 Kd + Vd channels, dt_bias and A_log of Hv, the gated norm of the value head, out_proj
 *     Vd -> h (Kd = key heads x key head dim, Vd = value heads x value head dim);
 *   KDA (modeling_kimi_linear.py KimiDeltaAttention): q, k, v h -> H d, conv1d over 3 H d, forget_gate (A_log
 *     [1, 1, H, 1], dt_bias H d, f_a_proj h -> r, f_b_proj r -> H d), g_a_proj and g_b_proj likewise, b_proj h -> H,
 *     o_norm d, o_proj H d -> h;
 *   lightning (modeling_minimax.py MiniMaxLightningAttention): qkv_proj h -> 3 H d, output_gate h -> H d, norm H d,
 *     out_proj H d -> h, and its decay tables (buffers computed at load: listed, not counted);
 *   short conv (modeling_lfm2.py Lfm2ShortConv): in_proj h -> 3 h, conv [h, 1, K], out_proj h -> h (+ biases with
 *     conv_bias).
 * Worked example (Qwen3NextConfig: h 2048, 16 key heads of 128, 32 value heads of 128, K 4): 25,165,824 + 131,072 +
 * 32,768 + 64 + 128 + 8,388,608 = 33,718,464 per layer.
 */
static void linear_mixer(builder *b, uint64_t S)
{
	const mp_model *m = b->m;
	const mp_ssm *s = &m->ssm;
	uint64_t h = m->hidden_size, kd = mul(b, s->n_groups, s->d_state), vd = mul(b, s->n_heads, s->head_dim);
	mp_tensor_spec cs = {.root = 1, .kind = MP_TK_RECURRENT, .split = MP_SPLIT_ROWS, .view = MP_VIEW_LINEAR,
	                     .conv = true, .count = S, .cols = s->conv_kernel};
	const char *p = b->n->mixer, *a = b->n->attn;

	switch (s->kind) {
	case MP_SSM_GATED_DELTANET:
		if (b->n->gdn_split) {
			mat(b, p, "in_proj_qkv.weight", MP_TK_RECURRENT, add(b, mul(b, 2, kd), vd), h, S, MP_SPLIT_ROWS,
			    MP_STEP_MIXER_IN);
			mat(b, p, "in_proj_z.weight", MP_TK_RECURRENT, vd, h, S, MP_SPLIT_ROWS, MP_STEP_MIXER_IN);
			mat(b, p, "in_proj_b.weight", MP_TK_RECURRENT, s->n_heads, h, S, MP_SPLIT_ROWS, MP_STEP_MIXER_IN);
			mat(b, p, "in_proj_a.weight", MP_TK_RECURRENT, s->n_heads, h, S, MP_SPLIT_ROWS, MP_STEP_MIXER_IN);
		} else {
			mat(b, p, "in_proj_qkvz.weight", MP_TK_RECURRENT, add(b, mul(b, 2, kd), mul(b, 2, vd)), h, S,
			    MP_SPLIT_ROWS, MP_STEP_MIXER_IN);
			mat(b, p, "in_proj_ba.weight", MP_TK_RECURRENT, mul(b, 2, s->n_heads), h, S, MP_SPLIT_ROWS,
			    MP_STEP_MIXER_IN);
		}
		cs.path = p;
		cs.leaf = "conv1d.weight";
		cs.rows = add(b, mul(b, 2, kd), vd);
		mp_inventory_add(b->inv, &cs);
		vec(b, p, "dt_bias", MP_TK_RECURRENT, s->n_heads, S, MP_SPLIT_ROWS);
		vec(b, p, "A_log", MP_TK_RECURRENT, s->n_heads, S, MP_SPLIT_ROWS);
		vec(b, p, "norm.weight", MP_TK_RECURRENT, s->head_dim, S, MP_SPLIT_NONE);
		mat(b, p, "out_proj.weight", MP_TK_RECURRENT, h, vd, S, MP_SPLIT_COLS, MP_STEP_MIXER_OUT);
		return;
	case MP_SSM_KDA: {
		static const uint64_t a_log_dims[4] = {1, 1, 0, 1};
		uint64_t dims[4];

		mat(b, a, "q_proj.weight", MP_TK_RECURRENT, vd, h, S, MP_SPLIT_ROWS, MP_STEP_MIXER_IN);
		mat(b, a, "k_proj.weight", MP_TK_RECURRENT, vd, h, S, MP_SPLIT_ROWS, MP_STEP_MIXER_IN);
		mat(b, a, "v_proj.weight", MP_TK_RECURRENT, vd, h, S, MP_SPLIT_ROWS, MP_STEP_MIXER_IN);
		cs.path = a;
		cs.leaf = "conv1d.weight";
		cs.rows = mul(b, 3, vd);
		mp_inventory_add(b->inv, &cs);
		memcpy(dims, a_log_dims, sizeof(dims));
		dims[2] = s->n_heads;
		mp_inventory_add_shape(b->inv, 1, a, "forget_gate.A_log", MP_TK_RECURRENT, MP_VIEW_VECTOR, 0, dims, 4, S);
		vec(b, a, "forget_gate.dt_bias", MP_TK_RECURRENT, vd, S, MP_SPLIT_ROWS);
		mat(b, a, "forget_gate.f_a_proj.weight", MP_TK_RECURRENT, s->d_state, h, S, MP_SPLIT_NONE, MP_STEP_MIXER_IN);
		mat(b, a, "forget_gate.f_b_proj.weight", MP_TK_RECURRENT, vd, s->d_state, S, MP_SPLIT_ROWS,
		    MP_STEP_MIXER_GATES);
		mat(b, a, "g_a_proj.weight", MP_TK_RECURRENT, s->d_state, h, S, MP_SPLIT_NONE, MP_STEP_MIXER_IN);
		mat(b, a, "g_b_proj.weight", MP_TK_RECURRENT, vd, s->d_state, S, MP_SPLIT_ROWS, MP_STEP_MIXER_GATES);
		mat(b, a, "b_proj.weight", MP_TK_RECURRENT, s->n_heads, h, S, MP_SPLIT_ROWS, MP_STEP_MIXER_IN);
		vec(b, a, "o_norm.weight", MP_TK_RECURRENT, s->head_dim, S, MP_SPLIT_NONE);
		mat(b, a, "o_proj.weight", MP_TK_RECURRENT, h, vd, S, MP_SPLIT_COLS, MP_STEP_MIXER_OUT);
		return;
	}
	case MP_SSM_LIGHTNING:
		mat(b, a, "qkv_proj.weight", MP_TK_RECURRENT, mul(b, 3, vd), h, S, MP_SPLIT_ROWS, MP_STEP_MIXER_IN);
		mat(b, a, "output_gate.weight", MP_TK_RECURRENT, vd, h, S, MP_SPLIT_ROWS, MP_STEP_MIXER_IN);
		vec(b, a, "norm.weight", MP_TK_RECURRENT, vd, S, MP_SPLIT_ROWS);
		mat(b, a, "out_proj.weight", MP_TK_RECURRENT, h, vd, S, MP_SPLIT_COLS, MP_STEP_MIXER_OUT);
		return;
	case MP_SSM_SHORT_CONV:
		linear(b, p, (mp_wb){"in_proj.weight", "in_proj.bias"}, MP_TK_RECURRENT, mul(b, 3, h), h, s->conv_bias, S,
		       MP_SPLIT_ROWS, MP_STEP_MIXER_IN);
		cs.path = p;
		cs.leaf = "conv.weight";
		cs.rows = h;
		mp_inventory_add(b->inv, &cs);
		if (s->conv_bias)
			vec(b, p, "conv.bias", MP_TK_RECURRENT, h, S, MP_SPLIT_ROWS);
		linear(b, p, (mp_wb){"out_proj.weight", "out_proj.bias"}, MP_TK_RECURRENT, h, h, s->conv_bias, S,
		       MP_SPLIT_COLS, MP_STEP_MIXER_OUT);
		return;
	default:
		return;
	}
}

/* ----- feed-forward ----------------------------------------------------------------------------------------- */

/* A dense MLP of width f, `count` of it: gate + up + down (or a fused gate_up), up + down when plain; biases with
 * mlp_bias; Apertus' xIELU scalars and BitNet's sub-norm. */
static void mlp(builder *b, uint64_t f, uint64_t count)
{
	const mp_model *m = b->m;
	const mp_names *n = b->n;
	uint64_t h = m->hidden_size;

	if (count == 0 || f == 0)
		return;
	if (m->ffn_kind == MP_FFN_GATED && n->gate_up.w) {
		mp_tensor_spec s = {.root = 1, .path = n->mlp, .leaf = n->gate_up.w, .kind = MP_TK_MLP,
		                    .split = MP_SPLIT_ROWS, .step = MP_STEP_MLP_GATE_UP,
		                    .view = n->conv1d ? MP_VIEW_T : MP_VIEW_LINEAR, .rows = mul(b, 2, f), .cols = h,
		                    .count = count, .parts = 2};

		mp_inventory_add(b->inv, &s);
		if (m->mlp_bias)
			vec(b, n->mlp, n->gate_up.b, MP_TK_MLP, mul(b, 2, f), count, MP_SPLIT_ROWS);
	} else if (m->ffn_kind == MP_FFN_GATED) {
		linear(b, n->mlp, n->gate, MP_TK_MLP, f, h, m->mlp_bias, count, MP_SPLIT_ROWS, MP_STEP_MLP_GATE_UP);
		linear(b, n->mlp, n->up, MP_TK_MLP, f, h, m->mlp_bias, count, MP_SPLIT_ROWS, MP_STEP_MLP_GATE_UP);
	} else {
		linear(b, n->mlp, n->up, MP_TK_MLP, f, h, m->mlp_bias, count, MP_SPLIT_ROWS, MP_STEP_MLP_UP);
	}
	linear(b, n->mlp, n->down, MP_TK_MLP, h, f, m->mlp_bias, count, MP_SPLIT_COLS, MP_STEP_MLP_DOWN);
	if (m->activation_params) { /* Apertus' xIELU: alpha_p and alpha_n, one value each; beta and eps constants */
		mp_tensor_spec k = {.root = 1, .path = n->mlp, .kind = MP_TK_MLP, .view = MP_VIEW_VECTOR, .cols = 1,
		                    .count = count, .scalar = true, .flags = MP_TF_BUFFER | MP_TF_UNCOUNTED};

		vec(b, n->mlp, n->act_alpha_p, MP_TK_MLP, 1, count, MP_SPLIT_NONE);
		vec(b, n->mlp, n->act_alpha_n, MP_TK_MLP, 1, count, MP_SPLIT_NONE);
		for (k.leaf = n->act_beta; k.leaf; k.leaf = k.leaf == n->act_beta ? n->act_eps : NULL)
			mp_inventory_add(b->inv, &k);
	}
	if (m->ffn_sub_norm)
		vec(b, n->mlp, n->ffn_sub_norm, MP_TK_MLP, m->ffn_sub_norm, count, MP_SPLIT_ROWS);
}

/*
 * The mixture-of-experts block of `moe` layers (modeling_mixtral.py, modeling_deepseek_v3.py, modeling_qwen2_moe.py):
 * the router (hidden -> experts, with the zero-computation experts of LongCat-Flash), its bias or its correction
 * buffer, the routed experts fused as transformers 5 holds them ([E, 2f, h] gate_up and [E, h, f] down; a checkpoint
 * keeps gate and up apart), the shared experts, Qwen's shared-expert gate, DeepSeek-V4's hash-routed layers' tid2eid.
 */
static void experts(builder *b, uint64_t moe)
{
	const mp_model *m = b->m;
	const mp_names *n = b->n;
	uint64_t h = m->hidden_size, f = m->moe_intermediate_size, E = m->num_experts, routes = add(b, E, m->zero_experts);
	uint64_t eh = m->moe_latent_size ? m->moe_latent_size : h; /* the routed experts' input and output width */
	bool gated = m->ffn_kind == MP_FFN_GATED;
	bool rb = m->routed_bias == MP_BIAS_AS_MLP ? m->mlp_bias : m->routed_bias == MP_BIAS_ON;
	bool sb = m->shared_bias == MP_BIAS_AS_MLP ? m->mlp_bias : m->shared_bias == MP_BIAS_ON;
	mp_tensor_spec s = {.root = 1, .path = n->moe, .kind = MP_TK_EXPERT, .count = moe, .copies = E,
	                    .flags = MP_TF_ROUTED | MP_TF_EP};

	if (moe == 0)
		return;
	/* the routed experts */
	s.view = n->experts_t ? MP_VIEW_EXPERTS_T : MP_VIEW_EXPERTS;
	s.leaf = gated ? n->experts_gate_up.w : n->experts_up.w;
	s.rows = gated ? mul(b, 2, f) : f;
	s.cols = eh;
	s.split = MP_SPLIT_ROWS;
	s.step = gated ? MP_STEP_EXPERT_GATE_UP : MP_STEP_EXPERT_UP;
	s.parts = gated ? 2 : 1;
	if (s.leaf)
		mp_inventory_add(b->inv, &s);
	if (rb) {
		mp_tensor_spec bs = s;

		bs.leaf = gated ? n->experts_gate_up.b : n->experts_up.b;
		bs.view = MP_VIEW_EXPERTS_VECTOR; /* [E, 2f]: a bias per expert (gate's and up's) */
		bs.cols = s.rows;
		bs.step = MP_STEP_NONE;
		bs.split = MP_SPLIT_ROWS;
		bs.flags = MP_TF_ROUTED | MP_TF_EP;
		if (bs.leaf)
			mp_inventory_add(b->inv, &bs);
	}
	s.leaf = n->experts_down.w;
	s.rows = eh;
	s.cols = f;
	s.split = MP_SPLIT_COLS;
	s.step = MP_STEP_EXPERT_DOWN;
	s.parts = 1;
	if (s.leaf)
		mp_inventory_add(b->inv, &s);
	if (rb) {
		mp_tensor_spec bs = s;

		bs.leaf = n->experts_down.b;
		bs.view = MP_VIEW_EXPERTS_VECTOR; /* [E, h] */
		bs.cols = eh;
		bs.step = MP_STEP_NONE;
		bs.split = MP_SPLIT_NONE;
		bs.flags = MP_TF_ROUTED | MP_TF_EP;
		if (bs.leaf)
			mp_inventory_add(b->inv, &bs);
	}
	/* the router */
	{
		mp_tensor_spec r = {.root = 1, .path = n->moe, .leaf = n->router.w, .kind = MP_TK_EXPERT,
		                    .split = MP_SPLIT_NONE, .step = MP_STEP_ROUTER, .view = MP_VIEW_LINEAR, .rows = routes,
		                    .cols = h, .count = moe, .flags = MP_TF_ROUTER};

		if (r.leaf)
			mp_inventory_add(b->inv, &r);
	}
	if (m->router_bias && n->router_bias_row) {
		mp_tensor_spec r = {.root = 1, .path = n->moe, .leaf = n->router.b, .kind = MP_TK_EXPERT,
		                    .view = MP_VIEW_EXPERTS_VECTOR, .copies = 1, .cols = routes, .count = moe};

		if (r.leaf)
			mp_inventory_add(b->inv, &r);
	} else if (m->router_bias) {
		vec(b, n->moe, n->router.b, MP_TK_EXPERT, routes, moe, MP_SPLIT_NONE);
	}
	/* the shared experts: every token runs them */
	if (m->shared_expert_intermediate_size) {
		uint64_t sh = m->shared_expert_intermediate_size;
		const char *sp = n->shared ? n->shared : n->moe;

		if (gated && n->sh_gate_up.w) {
			mp_tensor_spec g = {.root = 1, .path = sp, .leaf = n->sh_gate_up.w, .kind = MP_TK_SHARED_EXPERT,
			                    .split = MP_SPLIT_ROWS, .step = MP_STEP_SHARED_GATE_UP, .view = MP_VIEW_LINEAR,
			                    .rows = mul(b, 2, sh), .cols = h, .count = moe, .parts = 2};

			mp_inventory_add(b->inv, &g);
		} else if (gated) {
			linear(b, sp, n->sh_gate, MP_TK_SHARED_EXPERT, sh, h, sb, moe, MP_SPLIT_ROWS,
			       MP_STEP_SHARED_GATE_UP);
			linear(b, sp, n->sh_up, MP_TK_SHARED_EXPERT, sh, h, sb, moe, MP_SPLIT_ROWS,
			       MP_STEP_SHARED_GATE_UP);
		} else {
			linear(b, sp, n->sh_up, MP_TK_SHARED_EXPERT, sh, h, sb, moe, MP_SPLIT_ROWS,
			       MP_STEP_SHARED_UP);
		}
		linear(b, sp, n->sh_down, MP_TK_SHARED_EXPERT, h, sh, sb, moe, MP_SPLIT_COLS,
		       MP_STEP_SHARED_DOWN);
	}
	if (m->shared_down_bias_only && sb && m->shared_expert_intermediate_size == 0)
		vec(b, n->shared ? n->shared : n->moe, n->sh_down.b, MP_TK_SHARED_EXPERT, h, moe, MP_SPLIT_NONE);
	if (m->shared_expert_gate)
		mat(b, n->moe, n->sh_expert_gate, MP_TK_SHARED_EXPERT, 1, h, moe, MP_SPLIT_NONE, MP_STEP_NONE);
	if (m->router_correction_buffer) {
		mp_tensor_spec c = {.root = 1, .path = n->moe, .leaf = n->router_correction, .kind = MP_TK_EXPERT,
		                    .view = MP_VIEW_VECTOR, .cols = routes, .flags = MP_TF_BUFFER,
		                    .count = moe > m->hash_router_layers ? moe - m->hash_router_layers : 0};

		if (c.leaf)
			mp_inventory_add(b->inv, &c);
	}
	if (m->hash_router_layers && m->num_experts_per_tok) {
		/* DeepSeek-V4's hash-routed layers: tid2eid, vocab x top-k int64, in place of the correction bias
		 * (modeling_deepseek_v4.py DeepseekV4HashRouter, a persistent buffer) */
		mp_tensor_spec t = {.root = 1, .path = n->moe, .leaf = "gate.tid2eid", .kind = MP_TK_EXPERT,
		                    .view = MP_VIEW_LINEAR, .rows = m->vocab_size, .cols = m->num_experts_per_tok,
		                    .flags = MP_TF_BUFFER | MP_TF_INT64, .count = m->hash_router_layers};

		mp_inventory_add(b->inv, &t);
	}
}

/* ----- the whole decoder ------------------------------------------------------------------------------------ */

/* Layers that hold a recurrent mixer and attention both (Zamba2's hybrid layers). */
static uint64_t layers_with_both(const mp_model *m)
{
	uint64_t n = 0;

	for (uint64_t i = 0; m->layer_pattern && i < m->num_layers && i < MP_MAX_LAYERS; i++)
		n += (m->layer_flags[i] & (MP_LAYER_SSM | MP_LAYER_ATTENTION)) == (MP_LAYER_SSM | MP_LAYER_ATTENTION);
	return n;
}

static uint64_t moe_layer_count(const mp_model *m)
{
	uint64_t n = 0;

	for (uint64_t i = 0; i < m->num_layers; i++)
		n += mp_model_is_moe_layer(m, i);
	return n;
}

mp_status mp_model_build(mp_model *m, const mp_names *names, mp_error *err)
{
	builder b = {&m->inv, m, names ? names : m->inv.names ? m->inv.names : &mp_names_llama, false};
	const mp_names *n = b.n;
	uint64_t h = m->hidden_size, L = mp_model_attention_layers(m), moe, ffn = mp_model_ffn_layers(m);
	mp_status st;

	st = mp_model_validate(m, err);
	if (st != MP_OK)
		return st;
	if (m->inv.roots[0] == NULL)
		mp_inventory_init(&m->inv, n->root);
	else if (m->inv.roots[1] == NULL || m->inv.roots[1][0] == '\0')
		m->inv.roots[1] = n->root;
	/* built before (a caller changed a field): keep the reader's own tensors, build the rest again */
	if (m->inv.built)
		m->inv.n = m->inv.n_own;
	else
		m->inv.n_own = m->inv.n;
	m->inv.built = m->inv.full = m->inv.too_wide = false;
	m->inv.names = n;
	moe = moe_layer_count(m);

	/* embeddings (nn.Embedding vocab x hidden; VocabParallelEmbedding splits the vocabulary); a tied model's head
	 * reads the same table */
	{
		mp_tensor_spec e = {.root = 1, .leaf = n->embed.w, .kind = MP_TK_EMBEDDING, .split = MP_SPLIT_ROWS,
		                    .step = m->tie_word_embeddings ? MP_STEP_LM_HEAD : MP_STEP_NONE, .view = MP_VIEW_LINEAR,
		                    .rows = m->vocab_size, .cols = h, .count = 1};
		mp_tensor_spec p = {.root = 1, .leaf = n->positions.w, .kind = MP_TK_EMBEDDING, .view = MP_VIEW_LINEAR,
		                    .rows = m->learned_position_embeddings, .cols = h, .count = 1,
		                    .flags = MP_TF_POSITIONS};

		if (e.leaf)
			mp_inventory_add(&m->inv, &e);
		if (p.leaf)
			mp_inventory_add(&m->inv, &p);
	}

	/* attention (a model whose attention and MLP weights are shared blocks lists them itself) */
	if (!m->shared_block_params) {
		if (m->attn_kind == MP_ATTN_MLA)
			attention_mla(&b, L);
		else if (m->attn_per_layer)
			attention_per_layer(&b);
		else if (L)
			attention_gqa(&b, L);
	}
	/* recurrent mixers (a family may name those of the layers that also attend apart) */
	if (m->ssm.kind >= MP_SSM_GATED_DELTANET && !m->ssm.mixer_listed) {
		linear_mixer(&b, mp_model_ssm_layers(m));
	} else if (m->ssm.kind != MP_SSM_NONE && m->ssm.kind < MP_SSM_GATED_DELTANET && !m->ssm.mixer_listed) {
		uint64_t both = n->hybrid_mixer ? layers_with_both(m) : 0;

		mamba(&b, n->mixer, mp_model_ssm_layers(m) - both);
		if (both)
			mamba(&b, n->hybrid_mixer, both);
	}
	/* dense MLPs, then the experts */
	if (!m->shared_block_params && !m->own_mlp)
		mlp(&b, m->intermediate_size, m->moe_beside_dense ? ffn : (ffn > moe ? ffn - moe : 0));
	experts(&b, moe);
	/* the layers' norms */
	if (m->norms_per_layer > MP_NAMES_MAX_NORMS)
		return mp_fail_at(err, MP_EINVAL, mp_model_pointer(m), "/norms_per_layer",
		                  "norms_per_layer must be at most %d", MP_NAMES_MAX_NORMS);
	{
		uint64_t both = n->hybrid_layer ? layers_with_both(m) : 0;

		for (uint64_t i = 0; i < m->norms_per_layer; i++) {
			mp_wb nw = n->norms[i].w ? n->norms[i] : extra_norms[i];

			norm(&b, n->layer, nw, m->norm_kind, MP_TK_NORM, h, m->num_layers - both, MP_SPLIT_NONE);
			if (both)
				norm(&b, n->hybrid_layer, nw, m->norm_kind, MP_TK_NORM, h, both, MP_SPLIT_NONE);
		}
	}
	if (m->final_norm)
		norm(&b, NULL, n->final_norm, m->norm_kind, MP_TK_NORM, h, 1, MP_SPLIT_NONE);
	/* the head */
	if (!m->tie_word_embeddings || m->lm_head_bias) {
		uint8_t root = 0;

		if (n->head_root)
			root = mp_inventory_root(&m->inv, 2, n->head_root);
		if (!m->tie_word_embeddings && n->lm_head.w) { /* no leaf: the reader lists a head of its own width */
			mp_tensor_spec s = {.root = root, .leaf = n->lm_head.w, .kind = MP_TK_LM_HEAD, .split = MP_SPLIT_ROWS,
			                    .step = MP_STEP_LM_HEAD, .view = MP_VIEW_LINEAR, .rows = m->vocab_size, .cols = h,
			                    .count = 1};

			mp_inventory_add(&m->inv, &s);
		}
		if (m->lm_head_bias) {
			mp_tensor_spec s = {.root = root, .leaf = n->lm_head.b, .kind = MP_TK_LM_HEAD, .split = MP_SPLIT_ROWS,
			                    .view = MP_VIEW_VECTOR, .cols = m->vocab_size, .count = 1};

			mp_inventory_add(&m->inv, &s);
		}
	}
	/* a multimodal wrapper's image tower and projector */
	mp_vision_build(m);
	if (b.overflow)
		return mp_model_overflow(m, "the parameter count", err);
	st = mp_inventory_finish(&m->inv, mp_model_pointer(m), err);
	if (st == MP_EOVERFLOW)
		return mp_model_overflow(m, "the parameter count", err);
	return st;
}
