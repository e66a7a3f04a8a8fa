/*
 * hf_inkling.c: Thinking Machines' Inkling decoder (transformers 5.24 configuration_inkling.py, modeling_inkling.py,
 * InklingForCausalLM): a mixture-of-experts decoder whose layers are sliding-window or full attention with their own
 * head counts and widths, a relative position bias instead of RoPE, and four short convolutions per layer (over the k
 * and v projections and over the attention's and the MLP's outputs) whose windows are cached beside the KV cache.
 * Every default is InklingTextConfig's, every shape InklingDecoderLayer's; tests/ref/hf holds what transformers builds.
 */
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

/* The widths of one kind of attention layer (InklingAttention: is_sliding picks the swa_* keys). */
typedef struct inkling_attn {
	uint64_t heads, kv, head_dim, extent; /* extent: rel_logits_proj's distances (the window, or rel_extent) */
	uint64_t layers;
} inkling_attn;

/* One kind's attention tensors: q, k, v, r (relative states), o; k_sconv and v_sconv over k and v; q_norm and k_norm
 * of head_dim; rel_logits_proj.proj [d_rel, extent]. */
static void attention_kind(hf_ctx *c, mp_model *m, const inkling_attn *a, uint64_t d_rel, uint64_t conv)
{
	const char *p = L ".self_attn";
	uint64_t q = hf_mul(c, a->heads, a->head_dim, "head_dim"), kv = hf_mul(c, a->kv, a->head_dim, "head_dim");
	uint64_t r = hf_mul(c, a->heads, d_rel, "d_rel"), h = m->hidden_size, n = a->layers;

	if (n == 0 || c->st != MP_OK)
		return;
	own(m, p, "q_proj.weight", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_QKV, MP_VIEW_LINEAR, 0, q, h, n, 0, false);
	own(m, p, "k_proj.weight", MP_TK_ATTENTION, MP_SPLIT_KV_ROWS, MP_STEP_QKV, MP_VIEW_LINEAR, 0, kv, h, n, a->kv,
	    false);
	own(m, p, "v_proj.weight", MP_TK_ATTENTION, MP_SPLIT_KV_ROWS, MP_STEP_QKV, MP_VIEW_LINEAR, 0, kv, h, n, a->kv,
	    false);
	own(m, p, "r_proj.weight", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_QKV, MP_VIEW_LINEAR, 0, r, h, n, 0, false);
	own(m, p, "o_proj.weight", MP_TK_ATTENTION, MP_SPLIT_COLS, MP_STEP_O, MP_VIEW_LINEAR, 0, h, q, n, 0, false);
	own(m, p, "k_sconv.conv1d.weight", MP_TK_RECURRENT, MP_SPLIT_KV_ROWS, MP_STEP_NONE, MP_VIEW_LINEAR, 0, kv, conv,
	    n, a->kv, true);
	own(m, p, "v_sconv.conv1d.weight", MP_TK_RECURRENT, MP_SPLIT_KV_ROWS, MP_STEP_NONE, MP_VIEW_LINEAR, 0, kv, conv,
	    n, a->kv, true);
	own(m, p, "q_norm.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, MP_VIEW_VECTOR, 0, 1, a->head_dim, n, 0,
	    false);
	own(m, p, "k_norm.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, MP_VIEW_VECTOR, 0, 1, a->head_dim, n, 0,
	    false);
	own(m, p, "rel_logits_proj.proj", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, MP_VIEW_LINEAR, 0, d_rel,
	    a->extent, n, 0, false);
}

/* layer_types ("hybrid" full attention, "hybrid_sliding" the window), else local_layer_ids (the sliding layers'
 * indices), else every layer but each sixth ((i + 1) % 6 == 0) slides (InklingTextConfig.__post_init__). Sets
 * MP_LAYER_WINDOW on the sliding layers and MP_LAYER_GLOBAL on the full ones. */
static void layer_kinds(hf_ctx *c, mp_model *m)
{
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types");
	const cJSON *ids = cJSON_GetObjectItemCaseSensitive(c->cfg, "local_layer_ids"), *v;
	uint64_t i = 0;

	for (i = 0; i < m->num_layers; i++)
		m->layer_flags[i] = MP_LAYER_ATTENTION | MP_LAYER_FFN | MP_LAYER_SSM |
		                    ((i + 1) % 6 ? MP_LAYER_WINDOW : MP_LAYER_GLOBAL);
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
			m->layer_flags[i++] = MP_LAYER_ATTENTION | MP_LAYER_FFN | MP_LAYER_SSM |
			                      (s ? MP_LAYER_WINDOW : MP_LAYER_GLOBAL);
		}
		return;
	}
	if (ids == NULL || cJSON_IsNull(ids))
		return;
	if (!cJSON_IsArray(ids)) {
		hf_fail_key(c, "local_layer_ids", "local_layer_ids must be a list of layer indices");
		return;
	}
	for (i = 0; i < m->num_layers; i++)
		m->layer_flags[i] = MP_LAYER_ATTENTION | MP_LAYER_FFN | MP_LAYER_SSM | MP_LAYER_GLOBAL;
	cJSON_ArrayForEach(v, ids)
	{
		/* an index beyond the layers names no layer (the config's set comprehension ignores it) */
		if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble != (double)(uint64_t)v->valuedouble) {
			hf_fail_key(c, "local_layer_ids", "local_layer_ids entries must be layer indices (whole numbers >= 0)");
			return;
		}
		if (v->valuedouble < (double)m->num_layers)
			m->layer_flags[(uint64_t)v->valuedouble] =
			    MP_LAYER_ATTENTION | MP_LAYER_FFN | MP_LAYER_SSM | MP_LAYER_WINDOW;
	}
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

/* 422 naming kv_key unless its count (at least 1, at most heads) divides heads_key's (repeat_kv by heads // kv fails
 * otherwise). */
static void heads_divide(hf_ctx *c, uint64_t heads, uint64_t kv, const char *heads_key, const char *kv_key)
{
	char msg[160];

	if (c->st != MP_OK || (kv && kv <= heads && heads % kv == 0))
		return;
	snprintf(msg, sizeof(msg), "%s must divide %s (and be at least 1): InklingAttention repeats each KV head over "
	         "%s / %s query heads", kv_key, heads_key, heads_key, kv_key);
	hf_fail_key(c, kv_key, msg);
}

/*
 * InklingTextConfig (thinkingmachines/Inkling): vocab 201024, hidden 6144, 66 layers; full-attention layers
 * ("hybrid") of num_attention_heads 64, num_key_value_heads 8, head_dim 128, the relative bias over rel_extent 1024;
 * sliding layers ("hybrid_sliding", all but every sixth) of swa_num_attention_heads 64, swa_num_key_value_heads 16,
 * swa_head_dim 128 over sliding_window_size 512 (the bias over the window); d_rel 16 relative values per head;
 * conv_kernel_size 4; the "sparse" layers (all by default) 256 routed experts (n_routed_experts) of
 * moe_intermediate_size 3072, top-6, and n_shared_experts 2 of the same width scored by the router beside them
 * (its weight has 258 rows), a global_scale and the e_score_correction_bias buffer; a "dense" layer an MLP of
 * intermediate_size 24576 with a global_scale (dense_intermediate_size, when given, is the dense width and
 * intermediate_size the experts'); the embedding RMS-normed; lm_head never tied. No RoPE. The cache: per layer its K
 * and V, and the windows of its four short convolutions (k and v projections, attention and MLP outputs) in fp32.
 * Worked example (the defaults): 975,340,270,146 parameters (tests/ref/hf/groundtruth.json inkling_text-default).
 */
void mpm_read_inkling_text(hf_ctx *c, mp_model *m)
{
	inkling_attn sw, full;
	uint64_t h, conv, d_rel, E, S, f, dense = 0, moe;
	bool dense_width = hf_has(c, "dense_intermediate_size");

	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 201024);
	h = m->hidden_size = hf_get_u64(c, KEYS("hidden_size"), 6144);
	m->num_layers = hf_get_u64(c, KEYS("num_hidden_layers"), 66);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings", "model_max_length"), 131072);
	full = (inkling_attn){hf_get_u64(c, KEYS("num_attention_heads"), 64),
	                      hf_get_u64(c, KEYS("num_key_value_heads"), 8), hf_get_u64(c, KEYS("head_dim"), 128),
	                      hf_get_u64(c, KEYS("rel_extent"), 1024), 0};
	sw = (inkling_attn){hf_get_u64(c, KEYS("swa_num_attention_heads"), 64),
	                    hf_get_u64(c, KEYS("swa_num_key_value_heads"), 16), hf_get_u64(c, KEYS("swa_head_dim"), 128),
	                    hf_get_u64(c, KEYS("sliding_window_size", "sliding_window"), 512), 0};
	d_rel = hf_get_u64(c, KEYS("d_rel"), 16);
	conv = hf_get_u64(c, KEYS("conv_kernel_size", "sconv_kernel_size"), 4);
	m->intermediate_size = hf_get_u64(c, KEYS("dense_intermediate_size", "intermediate_size"), 24576);
	f = m->moe_intermediate_size = dense_width ? hf_get_u64(c, KEYS("intermediate_size"), 24576)
	                                           : hf_get_u64(c, KEYS("moe_intermediate_size"), 3072);
	E = m->num_experts = hf_get_u64(c, KEYS("n_routed_experts", "num_local_experts"), 256);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 6);
	S = m->num_shared_experts = hf_get_u64(c, KEYS("n_shared_experts"), 2);
	if (c->st != MP_OK)
		return;
	if (m->num_layers == 0 || m->num_layers > MP_MAX_LAYERS) {
		hf_fail_key(c, "num_hidden_layers", "num_hidden_layers must be between 1 and 1024");
		return;
	}
	if (S == 0) {
		hf_fail_key(c, "n_shared_experts",
		            "n_shared_experts must be at least 1: InklingTopkRouter takes the routed scores as all but the "
		            "last n_shared_experts ([:-0] keeps none)");
		return;
	}
	if (conv == 0) {
		hf_fail_key(c, hf_key_of(c, KEYS("conv_kernel_size", "sconv_kernel_size")),
		            "conv_kernel_size must be at least 1");
		return;
	}
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_GATED;
	m->norm_kind = MP_NORM_RMS;
	m->norms_per_layer = 2;
	m->final_norm = true;
	m->tie_word_embeddings = false; /* InklingForCausalLM: _tied_weights_keys = {} whatever tie_word_embeddings says */
	m->layer_pattern = true;
	m->attn_per_layer = true;
	layer_kinds(c, m);
	mlp_kinds(c, m);
	if (c->st != MP_OK)
		return;
	for (uint64_t i = 0; i < m->num_layers; i++) {
		sw.layers += (m->layer_flags[i] & MP_LAYER_WINDOW) != 0;
		dense += (m->dense_layer_mask[i / 8] >> (i % 8)) & 1u;
	}
	full.layers = m->num_layers - sw.layers;
	/* the sliding layers are the model's own widths, the full ones its "global" kind (mp_model.attn_per_layer) */
	m->num_heads = sw.layers ? sw.heads : full.heads;
	m->num_kv_heads = sw.layers ? sw.kv : full.kv;
	m->head_dim = sw.layers ? sw.head_dim : full.head_dim;
	m->global_heads = full.heads;
	m->global_kv_heads = full.kv;
	m->global_head_dim = full.head_dim;
	m->sliding_window = sw.layers ? sw.extent : 0;
	m->sliding_window_layers = sw.layers;
	if (sw.layers) {
		heads_divide(c, sw.heads, sw.kv, "swa_num_attention_heads", "swa_num_key_value_heads");
		if (sw.head_dim == 0)
			hf_fail_key(c, "swa_head_dim", "swa_head_dim must be at least 1");
		if (sw.extent == 0)
			hf_fail_key(c, hf_key_of(c, KEYS("sliding_window_size", "sliding_window")),
			            "sliding_window_size must be at least 1: it is the sliding layers' window and the extent "
			            "of their relative bias");
	}
	if (full.layers) {
		heads_divide(c, full.heads, full.kv, "num_attention_heads", "num_key_value_heads");
		if (full.head_dim == 0)
			hf_fail_key(c, "head_dim", "head_dim must be at least 1");
		if (full.extent == 0)
			hf_fail_key(c, "rel_extent", "rel_extent must be at least 1");
	}
	if (c->st != MP_OK)
		return;
	/* the short convolutions' windows: the cache's state beside K and V (mp_ssm MP_SSM_KV_CONV) */
	m->ssm.kind = MP_SSM_KV_CONV;
	m->ssm.conv_kernel = conv;
	m->ssm.d_inner = h;
	m->ssm.mixer_listed = true;
	attention_kind(c, m, &sw, d_rel, conv);
	attention_kind(c, m, &full, d_rel, conv);
	own(m, L ".attn_sconv", "conv1d.weight", MP_TK_RECURRENT, MP_SPLIT_NONE, MP_STEP_NONE, MP_VIEW_LINEAR, 0, h, conv,
	    m->num_layers, 0, true);
	own(m, L ".mlp_sconv", "conv1d.weight", MP_TK_RECURRENT, MP_SPLIT_NONE, MP_STEP_NONE, MP_VIEW_LINEAR, 0, h, conv,
	    m->num_layers, 0, true);
	own(m, "embed_tokens", "embed_norm.weight", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, MP_VIEW_VECTOR, 0, 1, h, 1,
	    0, false);
	if (dense)
		own(m, L ".mlp", "global_scale", MP_TK_MLP, MP_SPLIT_NONE, MP_STEP_NONE, MP_VIEW_VECTOR, 0, 1, 1, dense, 0,
		    false);
	moe = m->num_layers - dense;
	if (moe) {
		/* InklingTopkRouter scores the routed and the shared experts (E + S rows); InklingSharedExperts keeps its
		 * S experts as [S, f, h] gate and up and [S, h, f] down parameters */
		own(m, L ".mlp", "gate.weight", MP_TK_EXPERT, MP_SPLIT_NONE, MP_STEP_ROUTER, MP_VIEW_LINEAR, 0,
		    E + S, h, moe, 0, false);
		own(m, L ".mlp", "gate.global_scale", MP_TK_EXPERT, MP_SPLIT_NONE, MP_STEP_NONE, MP_VIEW_VECTOR, 0, 1, 1,
		    moe, 0, false);
		own(m, L ".mlp", "shared_experts.gate_proj", MP_TK_SHARED_EXPERT, MP_SPLIT_ROWS, MP_STEP_SHARED_GATE_UP,
		    MP_VIEW_EXPERTS, S, f, h, moe, 0, false);
		own(m, L ".mlp", "shared_experts.up_proj", MP_TK_SHARED_EXPERT, MP_SPLIT_ROWS, MP_STEP_SHARED_GATE_UP,
		    MP_VIEW_EXPERTS, S, f, h, moe, 0, false);
		own(m, L ".mlp", "shared_experts.down_proj", MP_TK_SHARED_EXPERT, MP_SPLIT_COLS, MP_STEP_SHARED_DOWN,
		    MP_VIEW_EXPERTS, S, h, f, moe, 0, false);
		m->shared_expert_intermediate_size = hf_mul(c, S, f, "n_shared_experts");
	}
	m->router_correction_buffer = true;
}
