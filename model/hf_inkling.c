/*
 * hf_inkling.c: Thinking Machines' Inkling decoders (transformers 5.24): Inkling (configuration_inkling.py,
 * modeling_inkling.py, InklingForCausalLM) and Inkling 2 (configuration_inkling2.py, modeling_inkling2.py,
 * Inkling2ForCausalLM). Both are mixture-of-experts decoders whose layers are sliding-window or full attention with
 * head counts and widths of their own (the swa_* keys), a relative position bias instead of RoPE, and four short
 * convolutions per layer (over the k and v projections and over the attention's and the MLP's outputs) whose windows
 * are cached beside the KV cache (mp_ssm MP_SSM_KV_CONV). Inkling 2 adds block attention residuals (a learned query
 * mixing the earlier blocks' states before each attention, MLP and the final norm), gated output projections,
 * per-token sink logits and, in the full-attention layers, convolutions with taps projected from the input; Inkling 2
 * Loop (modeling_inkling2_loop.py) runs a range of its layers several times, each later pass with a cache of its own.
 * The wrappers' towers are here too: Inkling 2's ViT with its merger (mpm_inkling2_tower), Inkling's hierarchical-MLP
 * image tower and audio embedding (mpm_inkling_towers), read through model/hf_wrap.c's rows. Every default is the
 * configuration class's, every shape its module's; tests/ref/hf holds what transformers builds.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hf_internal.h"
#include "mpm_types.h"

#define L MP_NAMES_LAYERS

/* Inkling's names: attention, the router and the shared experts are the reader's (their shapes differ per kind of
 * layer or from nn.Linear's); the routed experts, the dense MLP, the norms and the head are the Llama family's. */
const mp_names mpm_names_inkling = {
    .root = "model.", .embed = {"embed_tokens.weight", NULL}, .final_norm = {"norm.weight", NULL},
    .lm_head = {"lm_head.weight", NULL}, .layer = L, .attn = L ".self_attn", .mlp = L ".mlp", .moe = L ".mlp",
    .gate = {"gate_proj.weight", NULL}, .up = {"up_proj.weight", NULL}, .down = {"down_proj.weight", NULL},
    .norms = {{"input_layernorm.weight", NULL}, {"post_attention_layernorm.weight", NULL}},
    .router_correction = "gate.e_score_correction_bias",
    .experts_gate_up = {"experts.gate_up_proj", NULL}, .experts_down = {"experts.down_proj", NULL}};

/* Inkling 2's names: as Inkling's, the router the Llama family's (gate.weight of the routed experts alone), no dense
 * MLP, the layers' norms and the head the reader's (the input norms differ per kind; a looped model's cache has more
 * layers than its weights; lm_head has unpadded_vocab_size rows). */
const mp_names mpm_names_inkling2 = {
    .root = "model.", .embed = {"embed_tokens.weight", NULL}, .final_norm = {"norm.weight", NULL},
    .layer = L, .attn = L ".self_attn", .mlp = L ".mlp", .moe = L ".mlp", .router = {"gate.weight", NULL},
    .router_correction = "gate.e_score_correction_bias",
    .experts_gate_up = {"experts.gate_up_proj", NULL}, .experts_down = {"experts.down_proj", NULL}};

/* One tensor of the reader's: rows x cols (copies of them in an EXPERTS view), kv_heads for a KV-head split, conv: a
 * depthwise Conv1d's [rows, 1, cols]. */
static void own(mp_model *m, const char *path, const char *leaf, mp_tensor_kind kind, mp_tp_split split,
                mp_step_product step, mp_tensor_view view, uint64_t copies, uint64_t rows, uint64_t cols,
                uint64_t count, uint64_t kv_heads, bool conv)
{
	mp_tensor_spec s = {.root = MP_ROOT_DECODER, .path = path, .leaf = leaf, .kind = kind, .split = split,
	                    .step = step, .view = view, .copies = copies, .rows = rows, .cols = cols, .count = count,
	                    .kv_heads = kv_heads, .conv = conv};

	mp_inventory_add(&m->inv, &s);
}

/* A vector-class tensor of an explicit shape (a learned scale of [heads, head_dim], a query of [3, hidden]). */
static void own_shape(mp_model *m, const char *path, const char *leaf, mp_tensor_kind kind, uint64_t rows,
                      uint64_t cols, uint64_t count)
{
	uint64_t dims[2] = {rows, cols};

	if (rows == 1)
		mp_inventory_add_shape(&m->inv, MP_ROOT_DECODER, path, leaf, kind, MP_VIEW_VECTOR, 0, dims + 1, 1, count);
	else
		mp_inventory_add_shape(&m->inv, MP_ROOT_DECODER, path, leaf, kind, MP_VIEW_VECTOR, 0, dims, 2, count);
}

/* A vector of the image tower (MP_ROOT_TOWER). */
static void own_tower_vector(mp_model *m, const char *path, const char *leaf, uint64_t values, uint64_t count)
{
	hf_tensor(m, MP_ROOT_TOWER, path, leaf, MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, values, count);
}

/* The widths of one kind of attention layer (InklingAttention, Inkling2SlidingAttention / Inkling2FullAttention:
 * is_sliding picks the swa_* keys). */
typedef struct inkling_attn {
	uint64_t heads, kv, head_dim, extent; /* extent: the relative bias's distances (the window, or rel_extent) */
	uint64_t layers;
} inkling_attn;

/* A family's defaults (its configuration class's). */
typedef struct inkling_defaults {
	uint64_t vocab, hidden, layers, max_pos;
	inkling_attn full, sliding;	/* heads, kv, head_dim, extent (sliding: sliding_window_size) */
	uint64_t experts, top_k, moe_width;
	bool local_layer_ids;		/* the config reads local_layer_ids (InklingTextConfig; Inkling 2's does not) */
} inkling_defaults;

/* What the trunk reader leaves for the family's tensors. */
typedef struct inkling_trunk {
	inkling_attn full, sliding;
	uint64_t d_rel, conv;
} inkling_trunk;

/* layer_types ("hybrid" full attention, "hybrid_sliding" the window), else (Inkling) local_layer_ids (the sliding
 * layers' indices), else every layer but each sixth ((i + 1) % 6 == 0) slides (the configurations' __post_init__).
 * Sets MP_LAYER_WINDOW on the sliding layers and MP_LAYER_GLOBAL on the full ones. */
static void layer_kinds(hf_ctx *c, mp_model *m, bool local_ids)
{
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types");
	const cJSON *ids = cJSON_GetObjectItemCaseSensitive(c->cfg, "local_layer_ids"), *v;
	const unsigned every = MP_LAYER_ATTENTION | MP_LAYER_FFN | MP_LAYER_SSM;
	uint64_t i = 0;

	for (i = 0; i < m->num_layers; i++)
		m->layer_flags[i] = every | ((i + 1) % 6 ? MP_LAYER_WINDOW : MP_LAYER_GLOBAL);
	if (lt && !cJSON_IsNull(lt)) {
		if (!cJSON_IsArray(lt) || (uint64_t)cJSON_GetArraySize(lt) != m->num_layers) {
			hf_fail_key(c, "layer_types",
			            "layer_types must list \"hybrid\" or \"hybrid_sliding\" for each of the num_hidden_layers "
			            "layers");
			return;
		}
		i = 0;
		cJSON_ArrayForEach(v, lt)
		{
			bool s = cJSON_IsString(v) && strcmp(v->valuestring, "hybrid_sliding") == 0;

			if (!s && !(cJSON_IsString(v) && strcmp(v->valuestring, "hybrid") == 0)) {
				hf_fail_key(c, "layer_types", "layer_types entries must be \"hybrid\" or \"hybrid_sliding\"");
				return;
			}
			m->layer_flags[i++] = every | (s ? MP_LAYER_WINDOW : MP_LAYER_GLOBAL);
		}
		return;
	}
	if (!local_ids || ids == NULL || cJSON_IsNull(ids))
		return;
	if (!cJSON_IsArray(ids)) {
		hf_fail_key(c, "local_layer_ids", "local_layer_ids must be a list of layer indices");
		return;
	}
	for (i = 0; i < m->num_layers; i++)
		m->layer_flags[i] = every | MP_LAYER_GLOBAL;
	cJSON_ArrayForEach(v, ids)
	{
		/* an index beyond the layers names no layer (the config's set comprehension ignores it) */
		if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble != floor(v->valuedouble)) {
			hf_fail_key(c, "local_layer_ids", "local_layer_ids entries must be layer indices (whole numbers >= 0)");
			return;
		}
		if (v->valuedouble < (double)m->num_layers)
			m->layer_flags[(uint64_t)v->valuedouble] = every | MP_LAYER_WINDOW;
	}
}

/* 422 naming kv_key unless its count (at least 1, at most heads) divides heads_key's (repeat_kv by heads // kv fails
 * otherwise). */
static void heads_divide(hf_ctx *c, uint64_t heads, uint64_t kv, const char *heads_key, const char *kv_key)
{
	char msg[160];

	if (c->st != MP_OK || (kv && kv <= heads && heads % kv == 0))
		return;
	snprintf(msg, sizeof(msg), "%s must divide %s (and be at least 1): the attention repeats each KV head over "
	         "%s / %s query heads", kv_key, heads_key, heads_key, kv_key);
	hf_fail_key(c, kv_key, msg);
}

/* One kind's widths from its keys (prefix "" or "swa_"), defaults d. */
static inkling_attn attn_keys(hf_ctx *c, const inkling_attn *d, bool sliding)
{
	inkling_attn a = *d;

	a.heads = hf_get_u64(c, sliding ? KEYS("swa_num_attention_heads") : KEYS("num_attention_heads"), d->heads);
	a.kv = hf_get_u64(c, sliding ? KEYS("swa_num_key_value_heads") : KEYS("num_key_value_heads"), d->kv);
	a.head_dim = hf_get_u64(c, sliding ? KEYS("swa_head_dim") : KEYS("head_dim"), d->head_dim);
	a.extent = hf_get_u64(c, sliding ? KEYS("sliding_window_size", "sliding_window") : KEYS("rel_extent"),
	                      d->extent);
	a.layers = 0;
	return a;
}

/*
 * The trunk both families share: vocabulary, hidden size, layers and their kinds, each kind's heads, KV heads,
 * head_dim and bias extent (checked as the attention needs them), d_rel, the conv kernel, the experts; the KV cache
 * per layer (mp_model.attn_per_layer: the sliding layers are the model's own widths, the full ones its MP_LAYER_GLOBAL
 * kind) and the conv windows (MP_SSM_KV_CONV). The embedding's norm, RMSNorm pre-norm blocks, lm_head never tied
 * (_tied_weights_keys = {} whatever tie_word_embeddings says). False when the config is refused (the error set).
 */
static bool read_trunk(hf_ctx *c, const inkling_defaults *d, mp_model *m, inkling_trunk *t)
{
	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), d->vocab);
	m->hidden_size = hf_get_u64(c, KEYS("hidden_size"), d->hidden);
	m->num_layers = hf_get_u64(c, KEYS("num_hidden_layers"), d->layers);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings", "model_max_length"), d->max_pos);
	t->full = attn_keys(c, &d->full, false);
	t->sliding = attn_keys(c, &d->sliding, true);
	t->d_rel = hf_get_u64(c, KEYS("d_rel"), 16);
	t->conv = hf_get_u64(c, KEYS("conv_kernel_size", "sconv_kernel_size"), 4);
	m->num_experts = hf_get_u64(c, KEYS("n_routed_experts", "num_local_experts"), d->experts);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), d->top_k);
	if (c->st != MP_OK)
		return false;
	if (m->num_layers == 0 || m->num_layers > MP_MAX_LAYERS) {
		hf_fail_key(c, "num_hidden_layers", "num_hidden_layers must be between 1 and 1024");
		return false;
	}
	if (t->conv == 0) {
		hf_fail_key(c, hf_key_of(c, KEYS("conv_kernel_size", "sconv_kernel_size")),
		            "conv_kernel_size must be at least 1");
		return false;
	}
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_GATED;
	m->norm_kind = MP_NORM_RMS;
	m->final_norm = true;
	m->tie_word_embeddings = false;
	m->layer_pattern = true;
	m->attn_per_layer = true;
	layer_kinds(c, m, d->local_layer_ids);
	if (c->st != MP_OK)
		return false;
	for (uint64_t i = 0; i < m->num_layers; i++)
		t->sliding.layers += (m->layer_flags[i] & MP_LAYER_WINDOW) != 0;
	t->full.layers = m->num_layers - t->sliding.layers;
	m->num_heads = t->sliding.layers ? t->sliding.heads : t->full.heads;
	m->num_kv_heads = t->sliding.layers ? t->sliding.kv : t->full.kv;
	m->head_dim = t->sliding.layers ? t->sliding.head_dim : t->full.head_dim;
	m->global_heads = t->full.heads;
	m->global_kv_heads = t->full.kv;
	m->global_head_dim = t->full.head_dim;
	m->sliding_window = t->sliding.layers ? t->sliding.extent : 0;
	m->sliding_window_layers = t->sliding.layers;
	if (t->sliding.layers) {
		heads_divide(c, t->sliding.heads, t->sliding.kv, "swa_num_attention_heads", "swa_num_key_value_heads");
		if (t->sliding.head_dim == 0)
			hf_fail_key(c, "swa_head_dim", "swa_head_dim must be at least 1");
		if (t->sliding.extent == 0)
			hf_fail_key(c, hf_key_of(c, KEYS("sliding_window_size", "sliding_window")),
			            "sliding_window_size must be at least 1: it is the sliding layers' window and the extent "
			            "of their relative bias");
	}
	if (t->full.layers) {
		heads_divide(c, t->full.heads, t->full.kv, "num_attention_heads", "num_key_value_heads");
		if (t->full.head_dim == 0)
			hf_fail_key(c, "head_dim", "head_dim must be at least 1");
		if (t->full.extent == 0)
			hf_fail_key(c, "rel_extent", "rel_extent must be at least 1");
	}
	if (c->st != MP_OK)
		return false;
	m->ssm.kind = MP_SSM_KV_CONV;
	m->ssm.conv_kernel = t->conv;
	m->ssm.d_inner = m->hidden_size;
	m->ssm.mixer_listed = true;
	m->router_correction_buffer = true;
	own(m, "embed_tokens", "embed_norm.weight", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, MP_VIEW_VECTOR, 0, 1,
	    m->hidden_size, 1, 0, false);
	return true;
}

/* A depthwise short convolution's [channels, 1, kernel] weight, its channels split like the KV heads when kv_heads. */
static void short_conv(mp_model *m, const char *path, const char *leaf, uint64_t channels, uint64_t kernel,
                       uint64_t count, uint64_t kv_heads)
{
	own(m, path, leaf, MP_TK_RECURRENT, kv_heads ? MP_SPLIT_KV_ROWS : MP_SPLIT_NONE, MP_STEP_NONE, MP_VIEW_LINEAR, 0,
	    channels, kernel, count, kv_heads, true);
}

/* One Inkling kind's attention tensors: q, k, v, r (relative states), o; k_sconv and v_sconv over k and v; q_norm
 * and k_norm of head_dim; rel_logits_proj.proj [d_rel, extent]. */
static void inkling_attention(hf_ctx *c, mp_model *m, const inkling_attn *a, const inkling_trunk *t)
{
	const char *p = L ".self_attn";
	uint64_t q = hf_mul(c, a->heads, a->head_dim, "head_dim"), kv = hf_mul(c, a->kv, a->head_dim, "head_dim");
	uint64_t r = hf_mul(c, a->heads, t->d_rel, "d_rel"), h = m->hidden_size, n = a->layers;

	if (n == 0 || c->st != MP_OK)
		return;
	own(m, p, "q_proj.weight", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_QKV, MP_VIEW_LINEAR, 0, q, h, n, 0, false);
	own(m, p, "k_proj.weight", MP_TK_ATTENTION, MP_SPLIT_KV_ROWS, MP_STEP_QKV, MP_VIEW_LINEAR, 0, kv, h, n, a->kv,
	    false);
	own(m, p, "v_proj.weight", MP_TK_ATTENTION, MP_SPLIT_KV_ROWS, MP_STEP_QKV, MP_VIEW_LINEAR, 0, kv, h, n, a->kv,
	    false);
	own(m, p, "r_proj.weight", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_QKV, MP_VIEW_LINEAR, 0, r, h, n, 0, false);
	own(m, p, "o_proj.weight", MP_TK_ATTENTION, MP_SPLIT_COLS, MP_STEP_O, MP_VIEW_LINEAR, 0, h, q, n, 0, false);
	short_conv(m, p, "k_sconv.conv1d.weight", kv, t->conv, n, a->kv);
	short_conv(m, p, "v_sconv.conv1d.weight", kv, t->conv, n, a->kv);
	own_shape(m, p, "q_norm.weight", MP_TK_ATTENTION, 1, a->head_dim, n);
	own_shape(m, p, "k_norm.weight", MP_TK_ATTENTION, 1, a->head_dim, n);
	own(m, p, "rel_logits_proj.proj", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, MP_VIEW_LINEAR, 0, t->d_rel,
	    a->extent, n, 0, false);
}

/* mlp_layer_types ("dense" or "sparse" per layer), else the first dense_mlp_idx layers dense (default 0: every layer
 * sparse). */
static void mlp_kinds(hf_ctx *c, mp_model *m)
{
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(c->cfg, "mlp_layer_types"), *v;
	uint64_t i = 0, first;

	if (l && !cJSON_IsNull(l)) {
		if (!cJSON_IsArray(l) || (uint64_t)cJSON_GetArraySize(l) != m->num_layers) {
			hf_fail_key(c, "mlp_layer_types",
			            "mlp_layer_types must list \"dense\" or \"sparse\" for each of the num_hidden_layers layers");
			return;
		}
		cJSON_ArrayForEach(v, l)
		{
			if (!cJSON_IsString(v) ||
			    (strcmp(v->valuestring, "dense") != 0 && strcmp(v->valuestring, "sparse") != 0)) {
				hf_fail_key(c, "mlp_layer_types", "mlp_layer_types entries must be \"dense\" or \"sparse\"");
				return;
			}
			if (v->valuestring[0] == 'd')
				m->dense_layer_mask[i / 8] |= (uint8_t)(1u << (i % 8));
			i++;
		}
		return;
	}
	first = hf_get_u64(c, KEYS("dense_mlp_idx"), 0);
	for (i = 0; i < first && i < m->num_layers; i++)
		m->dense_layer_mask[i / 8] |= (uint8_t)(1u << (i % 8));
}

/*
 * InklingTextConfig (thinkingmachines/Inkling): vocab 201024, hidden 6144, 66 layers; full-attention layers
 * ("hybrid") of num_attention_heads 64, num_key_value_heads 8, head_dim 128, the relative bias over rel_extent 1024;
 * sliding layers ("hybrid_sliding", all but every sixth, or local_layer_ids) of swa_num_attention_heads 64,
 * swa_num_key_value_heads 16, swa_head_dim 128 over sliding_window_size 512 (the bias over the window); d_rel 16
 * relative values per head; conv_kernel_size 4; the "sparse" layers (all by default) 256 routed experts
 * (n_routed_experts) of moe_intermediate_size 3072, top-6, and n_shared_experts 2 of the same width scored by the
 * router beside them (its weight has 258 rows), a global_scale and the e_score_correction_bias buffer; a "dense" layer
 * an MLP of intermediate_size 24576 with a global_scale (dense_intermediate_size, when given, is the dense width and
 * intermediate_size the experts'); the embedding RMS-normed; lm_head never tied. No RoPE. The cache: per layer its K
 * and V, and the windows of its four short convolutions (k and v projections, attention and MLP outputs) in fp32.
 * Worked example (the defaults): 975,340,270,146 parameters (tests/ref/hf/groundtruth.json inkling_text-default).
 */
void mpm_read_inkling_text(hf_ctx *c, mp_model *m)
{
	static const inkling_defaults d = {201024, 6144, 66, 131072, {64, 8, 128, 1024, 0}, {64, 16, 128, 512, 0},
	                                   256, 6, 3072, true};
	inkling_trunk t;
	uint64_t h, E, S, f, dense = 0, moe;
	bool dense_width = hf_has(c, "dense_intermediate_size");

	if (!read_trunk(c, &d, m, &t))
		return;
	h = m->hidden_size;
	m->intermediate_size = hf_get_u64(c, KEYS("dense_intermediate_size", "intermediate_size"), 24576);
	f = m->moe_intermediate_size = dense_width ? hf_get_u64(c, KEYS("intermediate_size"), 24576)
	                                           : hf_get_u64(c, KEYS("moe_intermediate_size"), d.moe_width);
	E = m->num_experts;
	S = m->num_shared_experts = hf_get_u64(c, KEYS("n_shared_experts"), 2);
	if (c->st == MP_OK && S == 0)
		hf_fail_key(c, "n_shared_experts",
		            "n_shared_experts must be at least 1: InklingTopkRouter takes the routed scores as all but the "
		            "last n_shared_experts ([:-0] keeps none)");
	mlp_kinds(c, m);
	if (c->st != MP_OK)
		return;
	m->norms_per_layer = 2;
	for (uint64_t i = 0; i < m->num_layers; i++)
		dense += (m->dense_layer_mask[i / 8] >> (i % 8)) & 1u;
	inkling_attention(c, m, &t.sliding, &t);
	inkling_attention(c, m, &t.full, &t);
	short_conv(m, L ".attn_sconv", "conv1d.weight", h, t.conv, m->num_layers, 0);
	short_conv(m, L ".mlp_sconv", "conv1d.weight", h, t.conv, m->num_layers, 0);
	if (dense)
		own_shape(m, L ".mlp", "global_scale", MP_TK_MLP, 1, 1, dense);
	moe = m->num_layers - dense;
	if (moe) {
		/* InklingTopkRouter scores the routed and the shared experts (E + S rows); InklingSharedExperts keeps its
		 * S experts as [S, f, h] gate and up and [S, h, f] down parameters */
		own(m, L ".mlp", "gate.weight", MP_TK_EXPERT, MP_SPLIT_NONE, MP_STEP_ROUTER, MP_VIEW_LINEAR, 0,
		    E + S, h, moe, 0, false);
		own_shape(m, L ".mlp", "gate.global_scale", MP_TK_EXPERT, 1, 1, moe);
		own(m, L ".mlp", "shared_experts.gate_proj", MP_TK_SHARED_EXPERT, MP_SPLIT_ROWS, MP_STEP_SHARED_GATE_UP,
		    MP_VIEW_EXPERTS, S, f, h, moe, 0, false);
		own(m, L ".mlp", "shared_experts.up_proj", MP_TK_SHARED_EXPERT, MP_SPLIT_ROWS, MP_STEP_SHARED_GATE_UP,
		    MP_VIEW_EXPERTS, S, f, h, moe, 0, false);
		own(m, L ".mlp", "shared_experts.down_proj", MP_TK_SHARED_EXPERT, MP_SPLIT_COLS, MP_STEP_SHARED_DOWN,
		    MP_VIEW_EXPERTS, S, h, f, moe, 0, false);
		m->shared_expert_intermediate_size = hf_mul(c, S, f, "n_shared_experts");
	}
}

/* One Inkling 2 kind's attention (Inkling2SlidingAttention / Inkling2FullAttention): q_proj.linear and its scale
 * [heads, head_dim] (Inkling2ScaledL2Clip), k_proj and v_proj linear with their convolution (sliding: a Conv1d;
 * full: Inkling2DynamicShortConvolution's static_weight [kernel, kv x head_dim] and weight_proj hidden -> kv x
 * kernel), the gated o_proj (gate_proj hidden -> heads x head_dim, linear back), sink_proj (a logit per head), the
 * relative bias (linear hidden -> heads x d_rel, its scale [heads, d_rel], proj [d_rel, extent]); the layer's input
 * norms (sliding: input_layernorm; full: q_, k_ and v_input_layernorm) and, from layer 1 on, attention_input's query
 * (1 x hidden sliding, 3 x hidden full: one each for q, k and v). */
static void inkling2_attention(hf_ctx *c, mp_model *m, const inkling_attn *a, const inkling_trunk *t, bool full,
                               bool layer0)
{
	const char *p = L ".self_attn";
	uint64_t q = hf_mul(c, a->heads, a->head_dim, "head_dim"), kv = hf_mul(c, a->kv, a->head_dim, "head_dim");
	uint64_t r = hf_mul(c, a->heads, t->d_rel, "d_rel"), h = m->hidden_size, n = a->layers;

	if (n == 0 || c->st != MP_OK)
		return;
	own(m, p, "q_proj.linear.weight", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_QKV, MP_VIEW_LINEAR, 0, q, h, n, 0,
	    false);
	own_shape(m, p, "q_proj.norm.scale", MP_TK_ATTENTION, a->heads, a->head_dim, n);
	own(m, p, "k_proj.linear.weight", MP_TK_ATTENTION, MP_SPLIT_KV_ROWS, MP_STEP_QKV, MP_VIEW_LINEAR, 0, kv, h, n,
	    a->kv, false);
	own(m, p, "v_proj.linear.weight", MP_TK_ATTENTION, MP_SPLIT_KV_ROWS, MP_STEP_QKV, MP_VIEW_LINEAR, 0, kv, h, n,
	    a->kv, false);
	if (full) {
		uint64_t taps = hf_mul(c, a->kv, t->conv, "conv_kernel_size");

		own_shape(m, p, "k_proj.sconv.static_weight", MP_TK_RECURRENT, t->conv, kv, n);
		own(m, p, "k_proj.sconv.weight_proj.weight", MP_TK_RECURRENT, MP_SPLIT_KV_ROWS, MP_STEP_QKV, MP_VIEW_LINEAR,
		    0, taps, h, n, a->kv, false);
		own_shape(m, p, "v_proj.sconv.static_weight", MP_TK_RECURRENT, t->conv, kv, n);
		own(m, p, "v_proj.sconv.weight_proj.weight", MP_TK_RECURRENT, MP_SPLIT_KV_ROWS, MP_STEP_QKV, MP_VIEW_LINEAR,
		    0, taps, h, n, a->kv, false);
	} else {
		short_conv(m, p, "k_proj.sconv.conv1d.weight", kv, t->conv, n, a->kv);
		short_conv(m, p, "v_proj.sconv.conv1d.weight", kv, t->conv, n, a->kv);
	}
	own(m, p, "o_proj.gate_proj.weight", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_QKV, MP_VIEW_LINEAR, 0, q, h, n, 0,
	    false);
	own(m, p, "o_proj.linear.weight", MP_TK_ATTENTION, MP_SPLIT_COLS, MP_STEP_O, MP_VIEW_LINEAR, 0, h, q, n, 0, false);
	own(m, p, "sink_proj.weight", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_QKV, MP_VIEW_LINEAR, 0, a->heads, h, n, 0,
	    false);
	own(m, p, "relative_position_bias.linear.weight", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_QKV, MP_VIEW_LINEAR, 0,
	    r, h, n, 0, false);
	own_shape(m, p, "relative_position_bias.norm.scale", MP_TK_ATTENTION, a->heads, t->d_rel, n);
	own(m, p, "relative_position_bias.proj", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, MP_VIEW_LINEAR, 0,
	    t->d_rel, a->extent, n, 0, false);
	if (full) {
		own_shape(m, L, "q_input_layernorm.weight", MP_TK_NORM, 1, h, n);
		own_shape(m, L, "k_input_layernorm.weight", MP_TK_NORM, 1, h, n);
		own_shape(m, L, "v_input_layernorm.weight", MP_TK_NORM, 1, h, n);
	} else {
		own_shape(m, L, "input_layernorm.weight", MP_TK_NORM, 1, h, n);
	}
	if (n > (layer0 ? 1u : 0u))
		own_shape(m, L ".attention_input", "query", MP_TK_NORM, full ? 3 : 1, h, n - layer0);
}

/* Inkling 2's decoder (Inkling2TextModel) after the trunk: each kind's attention, the residual queries before each
 * MLP (mlp_input) and the final norm (final_input), the two output convolutions per layer, the routed experts (the
 * Llama family's names: mp_model_build adds them), lm_head of unpadded_vocab_size rows. */
static void inkling2_decoder(hf_ctx *c, mp_model *m, const inkling_trunk *t, uint64_t moe_width)
{
	uint64_t h = m->hidden_size, head, block;
	bool layer0_sliding = (m->layer_flags[0] & MP_LAYER_WINDOW) != 0;

	/* intermediate_size is an alias of moe_intermediate_size (Inkling2TextConfig.attribute_map) */
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size", "intermediate_size"), moe_width);
	m->intermediate_size = m->moe_intermediate_size;
	head = hf_get_u64(c, KEYS("unpadded_vocab_size"), 200058);
	block = hf_get_u64(c, KEYS("n_layers_per_attn_res_block"), 6);
	if (c->st != MP_OK)
		return;
	if (block == 0) {
		hf_fail_key(c, "n_layers_per_attn_res_block",
		            "n_layers_per_attn_res_block must be at least 1: each layer's index is taken modulo it");
		return;
	}
	if (head == 0) {
		hf_fail_key(c, "unpadded_vocab_size", "unpadded_vocab_size (lm_head's rows) must be at least 1");
		return;
	}
	m->norms_per_layer = 0;
	own_shape(m, L, "post_attention_layernorm.weight", MP_TK_NORM, 1, h, m->num_layers);
	inkling2_attention(c, m, &t->sliding, t, false, layer0_sliding);
	inkling2_attention(c, m, &t->full, t, true, !layer0_sliding);
	own_shape(m, L ".mlp_input", "query", MP_TK_NORM, 1, h, m->num_layers);
	own_shape(m, NULL, "final_input.query", MP_TK_NORM, 1, h, 1);
	short_conv(m, L ".post_attention_convolution", "conv1d.weight", h, t->conv, m->num_layers, 0);
	short_conv(m, L ".post_mlp_convolution", "conv1d.weight", h, t->conv, m->num_layers, 0);
	{
		mp_tensor_spec s = {.root = MP_ROOT_TOP, .leaf = "lm_head.weight", .kind = MP_TK_LM_HEAD,
		                    .split = MP_SPLIT_ROWS, .step = MP_STEP_LM_HEAD, .view = MP_VIEW_LINEAR, .rows = head,
		                    .cols = h, .count = 1};

		mp_inventory_add(&m->inv, &s);
	}
}

/*
 * Inkling2TextConfig (thinkingmachines/Inkling-2-Small-MXFP8): vocab 201024 (lm_head: unpadded_vocab_size 200058
 * rows), hidden 4608, 48 layers, 1048576 positions; full-attention layers ("hybrid", every sixth) of 48 heads, 8 KV
 * heads, head_dim 128, the bias over rel_extent 1024; sliding layers of swa_num_attention_heads 48,
 * swa_num_key_value_heads 8, swa_head_dim 128 over sliding_window_size 1024; d_rel 16; conv_kernel_size 4; every
 * layer 384 routed experts (n_routed_experts) of moe_intermediate_size 2304, top-8, no shared expert, the router's
 * e_score_correction_bias a buffer. No RoPE. The cache as Inkling's. Worked example (the defaults): 593,718,478,848
 * parameters (tests/ref/hf/groundtruth.json inkling2_text-default).
 */
void mpm_read_inkling2_text(hf_ctx *c, mp_model *m)
{
	static const inkling_defaults d = {201024, 4608, 48, 1048576, {48, 8, 128, 1024, 0}, {48, 8, 128, 1024, 0},
	                                   384, 8, 2304, false};
	inkling_trunk t;

	if (read_trunk(c, &d, m, &t))
		inkling2_decoder(c, m, &t, d.moe_width);
}

/* A loop key: loop_config's spelling (core_start, core_end, num_passes, gate_rank: the checkpoints'), else the
 * flat key, else dflt (Inkling2LoopTextConfig.__post_init__: loop_config wins). */
static uint64_t loop_key(hf_ctx *c, hf_ctx *loop, const char *flat, const char *nested, uint64_t dflt)
{
	uint64_t v = hf_get_u64(c, (const char *const[]){flat, NULL}, dflt);

	if (loop->cfg) {
		loop->st = c->st;
		v = hf_get_u64(loop, (const char *const[]){nested, NULL}, v);
		c->st = loop->st;
	}
	return v;
}

/*
 * Inkling2LoopTextConfig (thinkingmachines/Inkling-2-Mini; modeling_inkling2_loop.py Inkling2LoopForCausalLM): Inkling
 * 2's decoder (vocab 201024, lm_head of 200058 rows, hidden 2304, 24 layers, 24 heads and 8 KV heads of 128 in both
 * kinds, window 1024, 128 experts of 1152, top-8), whose layers loop_layer_index_start (6) to loop_layer_index_end
 * (18, exclusive) run loop_num_passes (3) times per token: from the second pass on each looped layer mixes messages
 * from the previous pass into its q, k, v and MLP inputs (four message gates: down_proj 2 x hidden -> loop_gate_rank
 * 64, forget_gate_proj and message_gate_proj back to hidden) retrieved by model.message_input's queries [end -
 * start, 4, hidden]. Each pass after the first keeps its own copies of the looped layers' cache layers (K, V and the
 * conv windows), appended after the model's layers (Inkling2LoopTextModel.forward): the cache has num_hidden_layers +
 * (passes - 1) x (looped layers) layers, memplan's layers (weights counted once). loop_config, when given, overrides
 * the four keys. Worked example (the defaults): 26,068,156,416 parameters, 48 cache layers (24 + 2 x 12).
 */
void mpm_read_inkling2_loop_text(hf_ctx *c, mp_model *m)
{
	static const inkling_defaults d = {201024, 2304, 24, 1048576, {24, 8, 128, 1024, 0}, {24, 8, 128, 1024, 0},
	                                   128, 8, 1152, false};
	inkling_trunk t;
	char pointer[MP_POINTER_MAX];
	hf_ctx loop;
	uint64_t start, end, passes, rank, block, n, looped, cache_layers, h;
	static const char *const gates[4] = {L ".q_message_gate", L ".k_message_gate", L ".v_message_gate",
	                                     L ".mlp_message_gate"};

	if (!hf_sub_config(c, "loop_config", pointer, sizeof(pointer), &loop) || !read_trunk(c, &d, m, &t))
		return;
	start = loop_key(c, &loop, "loop_layer_index_start", "core_start", 6);
	end = loop_key(c, &loop, "loop_layer_index_end", "core_end", 18);
	passes = loop_key(c, &loop, "loop_num_passes", "num_passes", 3);
	rank = loop_key(c, &loop, "loop_gate_rank", "gate_rank", 64);
	block = hf_get_u64(c, KEYS("n_layers_per_attn_res_block"), 6);
	if (c->st != MP_OK)
		return;
	/* Inkling2LoopTextConfig.validate_architecture's rules, then the shapes' */
	if (passes == 0 || passes > MP_MAX_LAYERS) {
		hf_fail_key(c, "loop_num_passes", "loop_num_passes must be between 1 and 1024");
		return;
	}
	if (start == 0 || (block && start % block)) {
		hf_fail_key(c, "loop_layer_index_start",
		            "loop_layer_index_start must be above 0 and a multiple of n_layers_per_attn_res_block");
		return;
	}
	if (block && end % block) {
		hf_fail_key(c, "loop_layer_index_end",
		            "loop_layer_index_end must be a multiple of n_layers_per_attn_res_block");
		return;
	}
	if (end < start) {
		hf_fail_key(c, "loop_layer_index_end",
		            "loop_layer_index_end must be at least loop_layer_index_start: message_input's queries are "
		            "[end - start, 4, hidden_size]");
		return;
	}
	inkling2_decoder(c, m, &t, d.moe_width);
	if (c->st != MP_OK)
		return;
	h = m->hidden_size;
	n = m->num_layers;
	/* the looped layers the model has (a range beyond its layers loops none of them) */
	looped = start < n ? (end < n ? end : n) - start : 0;
	if (looped && rank == 0) {
		hf_fail_key(c, "loop_gate_rank", "loop_gate_rank must be at least 1");
		return;
	}
	for (unsigned g = 0; g < 4; g++) {
		own(m, gates[g], "down_proj.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_EXTRA, MP_VIEW_LINEAR, 0,
		    rank, hf_mul(c, 2, h, "hidden_size"), looped, 0, false);
		own(m, gates[g], "forget_gate_proj.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_EXTRA, MP_VIEW_LINEAR,
		    0, h, rank, looped, 0, false);
		own(m, gates[g], "message_gate_proj.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_EXTRA, MP_VIEW_LINEAR,
		    0, h, rank, looped, 0, false);
	}
	{
		uint64_t dims[3] = {end - start, 4, h};

		mp_inventory_add_shape(&m->inv, MP_ROOT_DECODER, NULL, "message_input.query", MP_TK_NORM, MP_VIEW_VECTOR, 0,
		                       dims, 3, 1);
	}
	/* the later passes' cache layers: copies of the looped layers' (attention and conv windows, no weights: no
	 * MP_LAYER_FFN, so that mp_model_build counts the experts once) */
	cache_layers = n + (passes - 1) * looped;
	if (cache_layers > MP_MAX_LAYERS) {
		hf_fail_key(c, "loop_num_passes",
		            "the cache's layers (num_hidden_layers + (loop_num_passes - 1) x the looped layers) must be at "
		            "most 1024");
		return;
	}
	for (uint64_t i = n; i < cache_layers; i++) {
		m->layer_flags[i] = m->layer_flags[start + (i - n) % looped] & (uint8_t)~MP_LAYER_FFN;
		m->sliding_window_layers += (m->layer_flags[i] & MP_LAYER_WINDOW) != 0;
	}
	m->num_layers = cache_layers;
}

/*
 * Inkling 2's image tower (modeling_inkling2.py Inkling2VisionModel; Inkling2VisionConfig: hidden_size 1024,
 * intermediate_size hidden x mlp_ratio 4, 23 layers, 16 heads, 3 channels, 20 px patches (native_patch_size), a
 * posemb_grid_size 32 x 32 learned position grid, spatial_merge_size 2, projection_hidden_dim 4096, projector_bias
 * false) under model.vision_tower: embeddings patch_embedding (a Linear of channels x patch^2, no bias),
 * position_embedding [grid^2, hidden], class_embedding and cls_position_embedding [hidden]; pre_layernorm (a
 * LayerNorm); per layer layernorm_before and layernorm_after (LayerNorms), self_attn q, k, v and out_proj (hidden x
 * hidden with biases), mlp fc1 and fc2 (biased), layer-scale lambda_1 and lambda_2 [hidden]; the merger linear_1
 * (merge^2 x hidden -> projection_hidden_dim) and linear_2 (-> text_hidden_size), biased with projector_bias. Its
 * axial rotary tables are non-persistent buffers (listed, not counted). text_hidden_size must be the decoder's width
 * (Inkling2Config.validate_architecture); dflt_text is its default when vision_config is absent (the wrapper's
 * SubConfigSpec: 4608, Inkling 2 Loop's 2304), else Inkling2VisionConfig's 4608. Default: 327,693,312 parameters
 * (tests/ref/hf/groundtruth.json inkling2-default). Errors: a 422 naming the key of a size out of the bounds below.
 */
void mpm_inkling2_tower(hf_ctx *top, mp_model *m, uint64_t dflt_text)
{
	char pointer[96];
	hf_ctx c;
	uint64_t h, inter, depth, heads, ch, patch, grid, merge, proj, text;
	bool pbias;
	double ratio;
	const uint8_t T = MP_ROOT_TOWER;
	const char *e = "embeddings", *lay = "layers.{i}", *at = "layers.{i}.self_attn", *mlp = "layers.{i}.mlp";
	static const char *const qkvo[4][2] = {{"q_proj.weight", "q_proj.bias"}, {"k_proj.weight", "k_proj.bias"},
	                                      {"v_proj.weight", "v_proj.bias"}, {"out_proj.weight", "out_proj.bias"}};

	if (!hf_sub_config(top, "vision_config", pointer, sizeof(pointer), &c))
		return;
	h = hf_get_u64(&c, KEYS("hidden_size"), 1024);
	ratio = hf_get_double(&c, c.cfg, "mlp_ratio", 4.0);
	/* Inkling2VisionConfig: int(hidden_size x mlp_ratio) when intermediate_size is absent (a product past 2^64 is
	 * taken as UINT64_MAX, out of the bounds below) */
	inter = (double)h * ratio < 1.8e19 ? (uint64_t)((double)h * ratio) : UINT64_MAX;
	inter = hf_get_u64(&c, KEYS("intermediate_size"), inter);
	depth = hf_get_u64(&c, KEYS("num_hidden_layers"), 23);
	heads = hf_get_u64(&c, KEYS("num_attention_heads"), 16);
	ch = hf_get_u64(&c, KEYS("num_channels"), 3);
	patch = hf_get_u64(&c, KEYS("patch_size", "native_patch_size"), 20);
	grid = hf_get_u64(&c, KEYS("posemb_grid_size"), 32);
	merge = hf_get_u64(&c, KEYS("spatial_merge_size", "adapter_merge_size"), 2);
	proj = hf_get_u64(&c, KEYS("projection_hidden_dim"), 4096);
	pbias = hf_get_bool(&c, KEYS("projector_bias"), false);
	text = hf_get_u64(&c, KEYS("text_hidden_size"), c.cfg ? 4608 : dflt_text);
	if (c.st == MP_OK && (h == 0 || h > (UINT64_C(1) << 20) || heads == 0 || h % heads || inter == 0 ||
	                      inter > (UINT64_C(1) << 24) || depth == 0 || depth > MP_MAX_LAYERS || ch == 0 || ch > 256 ||
	                      patch == 0 || patch > 1024 || grid == 0 || grid > 65536 || merge == 0 || merge > 64 ||
	                      proj == 0 || proj > (UINT64_C(1) << 24)))
		hf_fail_key(&c, heads == 0 || (h && h % heads) ? "num_attention_heads" : "hidden_size",
		            "the image tower needs a width from 1 to 2^20 that num_attention_heads divides, intermediate_size "
		            "and projection_hidden_dim from 1 to 2^24, 1 to 1024 layers, num_channels from 1 to 256, "
		            "patch_size from 1 to 1024, posemb_grid_size from 1 to 65536, spatial_merge_size from 1 to 64");
	if (c.st == MP_OK && text != m->hidden_size)
		hf_fail_key(&c, "text_hidden_size",
		            "text_hidden_size must equal text_config's hidden_size (Inkling2Config.validate_architecture): "
		            "the merger projects to the decoder's width");
	top->st = c.st;
	if (top->st != MP_OK)
		return;
	mp_inventory_root(&m->inv, T, "model.vision_tower.");
	hf_tensor(m, T, e, "patch_embedding.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, h,
	          ch * patch * patch, 1);
	hf_tensor(m, T, e, "position_embedding.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, grid * grid, h,
	          1);
	own_tower_vector(m, e, "class_embedding", h, 1);
	own_tower_vector(m, e, "cls_position_embedding", h, 1);
	own_tower_vector(m, "pre_layernorm", "weight", h, 1);
	own_tower_vector(m, "pre_layernorm", "bias", h, 1);
	for (unsigned k = 0; k < 4; k++) {
		hf_tensor(m, T, at, qkvo[k][0], MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, h, h, depth);
		own_tower_vector(m, at, qkvo[k][1], h, depth);
	}
	own_tower_vector(m, lay, "layernorm_before.weight", h, depth);
	own_tower_vector(m, lay, "layernorm_before.bias", h, depth);
	own_tower_vector(m, lay, "layernorm_after.weight", h, depth);
	own_tower_vector(m, lay, "layernorm_after.bias", h, depth);
	own_tower_vector(m, lay, "lambda_1", h, depth);
	own_tower_vector(m, lay, "lambda_2", h, depth);
	hf_tensor(m, T, mlp, "fc1.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, inter, h, depth);
	own_tower_vector(m, mlp, "fc1.bias", inter, depth);
	hf_tensor(m, T, mlp, "fc2.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, h, inter, depth);
	own_tower_vector(m, mlp, "fc2.bias", h, depth);
	hf_tensor(m, T, "merger", "linear_1.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false, proj,
	          merge * merge * h, 1);
	hf_tensor(m, T, "merger", "linear_2.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false, text, proj, 1);
	if (pbias) {
		hf_tensor(m, T, "merger", "linear_1.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, proj, 1);
		hf_tensor(m, T, "merger", "linear_2.bias", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, text, 1);
	}
}

/* ----- Inkling's towers ------------------------------------------------------------------------------------------ */

#define INKLING_MAX_SCALES 24 /* 1 + the prime factors of patch_size (<= 1024: 10) and temporal_patch_size (<= 64: 6) */

/* n's prime factors, largest first (plan_out_scales reverses prime_factors' ascending list), into f; their count. */
static unsigned prime_factors_desc(uint64_t n, uint64_t *f)
{
	unsigned k = 0;

	for (uint64_t p = 2; p * p <= n; p++)
		while (n % p == 0) {
			f[k++] = p;
			n /= p;
		}
	if (n > 1)
		f[k++] = n;
	for (unsigned i = 0; i < k / 2; i++) {
		uint64_t t = f[i];

		f[i] = f[k - 1 - i];
		f[k - 1 - i] = t;
	}
	return k;
}

/*
 * The columns of rows x cols costs |ideal[r] - size[j]| (both increasing) that give the smallest total over distinct
 * columns, row by row, into pick (scipy's linear_sum_assignment, which plan_out_scales calls when the tower has fewer
 * layers than scales; rows <= cols <= INKLING_MAX_SCALES). With both sequences sorted and a cost convex in their
 * difference an optimal assignment never crosses (r1 < r2 takes j1 < j2), so f[r][j], the least cost of rows r.. on
 * columns j.., is a dynamic program over rows x cols.
 */
static void assign_rows(const double *ideal, const double *size, unsigned rows, unsigned cols, unsigned *pick)
{
	double f[INKLING_MAX_SCALES + 2][INKLING_MAX_SCALES + 2];

	for (unsigned j = 0; j <= cols; j++)
		f[rows][j] = 0;
	for (unsigned r = rows; r-- > 0;) {
		f[r][cols] = 1e300;
		for (unsigned j = cols; j-- > 0;) {
			double take = cols - j >= rows - r ? fabs(ideal[r] - size[j]) + f[r + 1][j + 1] : 1e300;

			f[r][j] = take <= f[r][j + 1] ? take : f[r][j + 1];
		}
	}
	for (unsigned r = 0, j = 0; r < rows; r++, j++) {
		while (j + 1 < cols && f[r][j] != fabs(ideal[r] - size[j]) + f[r + 1][j + 1])
			j++;
		pick[r] = j;
	}
}

/* One scale of the tower (plan_out_scales' rows): frames, height, width, channels. */
typedef struct hmlp_scale {
	uint64_t t, h, w, c;
} hmlp_scale;

/*
 * plan_out_scales (modeling_inkling.py) for a tower of `layers` layers over patch x patch x temporal patches of
 * `channels`: the scales [1, 1, 1, channels], then per prime factor of the patch side (largest first) the side so far
 * squared in channels rounded up to 64 (ceil(side^2 channels / 64) x 64), then per factor of the temporal size t so
 * far the full side with ceil(side^2 channels t) x 64 channels; each of the layers + 1 points of a log-spaced line
 * from 1 to the patch's values takes the scale nearest in frames x side^2 (one each when there are fewer layers than
 * scales: linear_sum_assignment), the first and last forced to the first and last scale. Into out (layers + 1 of them).
 * Worked example (InklingVisionConfig: 40 px, 2 frames, 3 channels, 24 layers): scales 3, 128, 320, 1216, 4800 and
 * 614,400 channels, the layers' widths as tests/ref/hf/state_dicts.json inkling_mm_model-default lists them.
 */
static void plan_out_scales(uint64_t patch, uint64_t tp, uint64_t layers, uint64_t channels, hmlp_scale *out)
{
	hmlp_scale sc[INKLING_MAX_SCALES];
	uint64_t fp[16], ft[16], side = 1, t = 1;
	unsigned np = prime_factors_desc(patch, fp), nt = prime_factors_desc(tp, ft), S = 0;
	double size[INKLING_MAX_SCALES], ideal[INKLING_MAX_SCALES], top = log((double)(patch * patch * tp * channels));
	unsigned pick[INKLING_MAX_SCALES];

	sc[S++] = (hmlp_scale){1, 1, 1, channels};
	for (unsigned i = 0; i < np; i++) {
		side *= fp[i];
		sc[S++] = (hmlp_scale){1, side, side, (side * side * channels + 63) / 64 * 64};
	}
	for (unsigned i = 0; i < nt; i++) {
		t *= ft[i];
		sc[S++] = (hmlp_scale){t, side, side, side * side * channels * t * 64};
	}
	for (unsigned j = 0; j < S; j++)
		size[j] = log((double)(sc[j].t * sc[j].h * sc[j].w));
	if (layers >= S) {
		for (uint64_t r = 0; r <= layers; r++) {
			double x = top * (double)r / (double)layers;
			unsigned best = 0;

			for (unsigned j = 1; j < S; j++)
				if (fabs(x - size[j]) < fabs(x - size[best]))
					best = j;
			out[r] = sc[best];
		}
	} else {
		for (uint64_t r = 0; r <= layers; r++)
			ideal[r] = top * (double)r / (double)layers;
		assign_rows(ideal, size, (unsigned)layers + 1, S, pick);
		for (uint64_t r = 0; r <= layers; r++)
			out[r] = sc[pick[r]];
	}
	out[0] = sc[0];
	out[layers] = sc[S - 1];
}

/* One shape of the tower's layers, counted: the projection's in x out and its norm (all but the last layer). */
typedef struct hmlp_shape {
	uint64_t in, out, count;
	bool norm;
} hmlp_shape;

/*
 * Inkling's towers (modeling_inkling.py): InklingVisionModel under model.vision_tower (InklingVisionConfig:
 * patch_size 40, temporal_patch_size 2, num_channels 3, num_hidden_layers 24; hidden_size and num_attention_heads
 * build nothing), a hierarchical MLP: per layer encoder_layers.{i}.projection (in: the previous scale's channels times
 * the frames and sides it folds in; out: the next scale's channels, the last layer's the decoder's width) and, but on
 * the last, layer_norm (an RMSNorm of out); final_norm of the decoder's width. InklingAudioModel under
 * model.audio_tower (InklingAudioConfig: n_mel_bins 80, mel_vocab_size 256): embed_audio_tokens.embed_audio_tokens
 * (n_mel_bins x mel_vocab_size rows of the decoder's width) and norm. Both towers project to text_config's
 * hidden_size (InklingConfig.__post_init__ sets their text_hidden_size). Default: 764,851,419,056 tower
 * parameters, audio included (tests/ref/hf/groundtruth.json inkling_mm_model-default). Errors: a 422 naming the key of a size out of
 * the bounds below, MP_EUNSUPPORTED past the inventory's room.
 */
void mpm_inkling_towers(hf_ctx *top, mp_model *m)
{
	char vp[96], ap[96];
	hf_ctx v, a;
	uint64_t patch, tp, ch, layers, mel, bins, th = m->hidden_size;
	hmlp_scale sc[MP_MAX_LAYERS + 1];
	hmlp_shape sh[64];
	unsigned n = 0;
	const uint8_t T = MP_ROOT_TOWER, A = MP_ROOT_EXTRA;

	if (!hf_sub_config(top, "vision_config", vp, sizeof(vp), &v) ||
	    !hf_sub_config(top, "audio_config", ap, sizeof(ap), &a))
		return;
	patch = hf_get_u64(&v, KEYS("patch_size"), 40);
	tp = hf_get_u64(&v, KEYS("temporal_patch_size"), 2);
	ch = hf_get_u64(&v, KEYS("num_channels"), 3);
	layers = hf_get_u64(&v, KEYS("num_hidden_layers", "n_layers"), 24);
	/* a patch side or frame count of 1 has no prime factors: plan_out_scales' cumprod of an empty list fails in
	 * transformers 5.24 (IndexError for patch_size 1, TypeError for temporal_patch_size 1) */
	if (v.st == MP_OK && (patch < 2 || patch > 1024 || tp < 2 || tp > 64 || ch == 0 || ch > 256 || layers == 0 ||
	                      layers > MP_MAX_LAYERS))
		hf_fail_key(&v, patch < 2 || patch > 1024 ? "patch_size" : tp < 2 || tp > 64 ? "temporal_patch_size"
		                : ch == 0 || ch > 256 ? "num_channels" : "num_hidden_layers",
		            "the image tower needs patch_size from 2 to 1024 and temporal_patch_size from 2 to 64 (a side of "
		            "1 has no prime factors: InklingVisionModel's plan_out_scales fails on it), num_channels from 1 "
		            "to 256 and 1 to 1024 layers");
	top->st = v.st;
	a.st = top->st;
	bins = hf_get_u64(&a, KEYS("n_mel_bins", "num_codebooks"), 80);
	mel = hf_get_u64(&a, KEYS("mel_vocab_size", "codebook_size"), 256);
	if (a.st == MP_OK && (bins == 0 || bins > 65536 || mel == 0 || mel > 65536))
		hf_fail_key(&a, bins == 0 || bins > 65536 ? "n_mel_bins" : "mel_vocab_size",
		            "n_mel_bins and mel_vocab_size must be from 1 to 65536");
	top->st = a.st;
	if (top->st != MP_OK)
		return;
	plan_out_scales(patch, tp, layers, ch, sc);
	for (uint64_t i = 0; i < layers; i++) {
		const hmlp_scale *s0 = &sc[i], *s1 = &sc[i + 1];
		uint64_t mult = (s1->t / s0->t) * (s1->h / s0->h) * (s1->w / s0->w);
		hmlp_shape x = {hf_mul(top, s0->c, mult, "patch_size"), i + 1 == layers ? th : s1->c, 1, i + 1 < layers};
		unsigned k = 0;

		while (k < n && !(sh[k].in == x.in && sh[k].out == x.out && sh[k].norm == x.norm))
			k++;
		if (k < n) {
			sh[k].count++;
		} else if (n == sizeof(sh) / sizeof(sh[0])) {
			hf_fail_key(top, "vision_config", "the image tower's layers have more distinct widths than memplan lists "
			                                  "(64)");
			return;
		} else {
			sh[n++] = x;
		}
	}
	mp_inventory_root(&m->inv, T, "model.vision_tower.");
	for (unsigned k = 0; k < n; k++) {
		/* layers of one shape but different norm flags share the projection's name: counted per entry */
		hf_tensor(m, T, "encoder_layers.{i}", "projection.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false,
		          sh[k].out, sh[k].in, sh[k].count);
		if (sh[k].norm)
			hf_tensor(m, T, "encoder_layers.{i}", "layer_norm.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE,
			          true, 1, sh[k].out, sh[k].count);
	}
	hf_tensor(m, T, NULL, "final_norm.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, th, 1);
	mp_inventory_root(&m->inv, A, "model.audio_tower.");
	hf_tensor(m, A, "embed_audio_tokens", "embed_audio_tokens.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE,
	          false, hf_mul(top, bins, mel, "n_mel_bins"), th, 1);
	hf_tensor(m, A, NULL, "norm.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, th, 1);
}
