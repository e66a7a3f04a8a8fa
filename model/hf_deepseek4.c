/*
 * hf_deepseek4.c: DeepSeek-V4 (deepseek_v4). Its layers keep a stack of hc_mult residual streams mixed by
 * manifold-constrained hyper-connections, attend with shared-KV MQA (one key of head_dim per token, read as K and V)
 * over a sliding window, and add, per layer type, a compressor of the older tokens: compressed sparse attention (CSA,
 * overlapping windows of compress_rates' 4 tokens, with a lightning indexer choosing index_topk entries) or heavily
 * compressed attention (HCA, windows of 128); the output projection is grouped (o_groups x o_lora_rank); every layer's
 * feed-forward block is a MoE with one shared expert, its first layers routed by a token-id hash. Defaults are
 * transformers 5.24's configuration_deepseek_v4.py (DeepseekV4Config, "deepseek-ai/DeepSeek-V4-Flash-Base"); the
 * modules are modeling_deepseek_v4.py's, described by their shapes in mp_model.extra (no field of mp_model models
 * them); the cache is planner/kv.c compressed_kv_bytes (transformers' layout: no engine's is in the references).
 */
#include <stdio.h>
#include <string.h>

#include "hf_internal.h"


/*
 * compress_rates ({"compressed_sparse_attention": 4, "heavily_compressed_attention": 128}, each key optional; the
 * legacy top-level compress_rate_csa / compress_rate_hca win, as DeepseekV4Config.__post_init__ folds them in). A rate
 * must be at least 1.
 */
static void compress_rates(hf_ctx *c, mp_model *m)
{
	const cJSON *cr = cJSON_GetObjectItemCaseSensitive(c->cfg, "compress_rates");
	static const char *const names[2] = {"compressed_sparse_attention", "heavily_compressed_attention"};
	uint64_t *to[2] = {&m->csa_compress_rate, &m->hca_compress_rate};

	m->csa_compress_rate = 4;
	m->hca_compress_rate = 128;
	if (cr != NULL && !cJSON_IsNull(cr) && !cJSON_IsObject(cr)) {
		hf_fail_key(c, "compress_rates",
		            "compress_rates must be an object: {\"compressed_sparse_attention\": 4, "
		            "\"heavily_compressed_attention\": 128}");
		return;
	}
	for (int i = 0; i < 2; i++) {
		const cJSON *v = cJSON_IsObject(cr) ? cJSON_GetObjectItemCaseSensitive(cr, names[i]) : NULL;

		if (v == NULL || cJSON_IsNull(v))
			continue;
		if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 1048576 ||
		    v->valuedouble != (double)(uint64_t)v->valuedouble) {
			char field[MP_POINTER_MAX];

			snprintf(field, sizeof(field), "%s/compress_rates/%s", c->pointer, names[i]);
			c->st = mp_fail(c->err, MP_EINVAL, field, "compress_rates.%s must be an integer from 1 to 1048576",
			                names[i]);
			return;
		}
		*to[i] = (uint64_t)v->valuedouble;
	}
	if (hf_has(c, "compress_rate_csa"))
		m->csa_compress_rate = hf_get_u64(c, KEYS("compress_rate_csa"), m->csa_compress_rate);
	if (hf_has(c, "compress_rate_hca"))
		m->hca_compress_rate = hf_get_u64(c, KEYS("compress_rate_hca"), m->hca_compress_rate);
	if (c->st == MP_OK && (m->csa_compress_rate == 0 || m->csa_compress_rate > 1048576))
		hf_fail_key(c, "compress_rate_csa", "a compress rate must be an integer from 1 to 1048576");
	else if (c->st == MP_OK && (m->hca_compress_rate == 0 || m->hca_compress_rate > 1048576))
		hf_fail_key(c, "compress_rate_hca", "a compress rate must be an integer from 1 to 1048576");
}

/*
 * layer_types: each "sliding_attention", "compressed_sparse_attention" or "heavily_compressed_attention", one per layer;
 * else the legacy compress_ratios (0, 4 or 128 per layer); else DeepseekV4Config's schedule: 2 HCA layers, then CSA and
 * HCA alternating (CSA on odd offsets). Sets MP_LAYER_CSA / MP_LAYER_HCA (every layer slides and has attention and
 * its MoE block).
 */
static void layer_types(hf_ctx *c, mp_model *m)
{
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types"), *v;
	const cJSON *ratios = cJSON_GetObjectItemCaseSensitive(c->cfg, "compress_ratios");
	uint64_t i = 0;

	m->layer_pattern = true;
	for (i = 0; i < m->num_layers && i < MP_MAX_LAYERS; i++) {
		bool csa = i >= 2 && (i - 2) % 2 == 1;

		m->layer_flags[i] = MP_LAYER_ATTENTION | MP_LAYER_FFN | MP_LAYER_WINDOW | (csa ? MP_LAYER_CSA : MP_LAYER_HCA);
	}
	if (lt != NULL && !cJSON_IsNull(lt)) {
		if (!cJSON_IsArray(lt) || (uint64_t)cJSON_GetArraySize(lt) != m->num_layers) {
			hf_fail_key(c, "layer_types",
			            "layer_types must be a list of \"sliding_attention\", \"compressed_sparse_attention\" or "
			            "\"heavily_compressed_attention\", one entry per layer (num_hidden_layers)");
			return;
		}
		i = 0;
		cJSON_ArrayForEach(v, lt)
		{
			unsigned kind;

			if (cJSON_IsString(v) && strcmp(v->valuestring, "sliding_attention") == 0)
				kind = 0;
			else if (cJSON_IsString(v) && strcmp(v->valuestring, "compressed_sparse_attention") == 0)
				kind = MP_LAYER_CSA;
			else if (cJSON_IsString(v) && strcmp(v->valuestring, "heavily_compressed_attention") == 0)
				kind = MP_LAYER_HCA;
			else {
				hf_fail_key(c, "layer_types",
				            "layer_types entries must be \"sliding_attention\", \"compressed_sparse_attention\" "
				            "or \"heavily_compressed_attention\"");
				return;
			}
			m->layer_flags[i++] = (uint8_t)(MP_LAYER_ATTENTION | MP_LAYER_FFN | MP_LAYER_WINDOW | kind);
		}
	} else if (ratios != NULL && !cJSON_IsNull(ratios)) {
		if (!cJSON_IsArray(ratios) || (uint64_t)cJSON_GetArraySize(ratios) < m->num_layers) {
			hf_fail_key(c, "compress_ratios",
			            "compress_ratios must be a list of 0, 4 or 128 with an entry for every layer "
			            "(num_hidden_layers)");
			return;
		}
		i = 0;
		cJSON_ArrayForEach(v, ratios)
		{
			unsigned kind;

			if (i >= m->num_layers)
				break; /* DeepseekV4Config keeps the first num_hidden_layers entries */
			if (cJSON_IsNumber(v) && v->valuedouble == 0)
				kind = 0;
			else if (cJSON_IsNumber(v) && v->valuedouble == 4)
				kind = MP_LAYER_CSA;
			else if (cJSON_IsNumber(v) && v->valuedouble == 128)
				kind = MP_LAYER_HCA;
			else {
				hf_fail_key(c, "compress_ratios",
				            "compress_ratios entries must be 0 (sliding), 4 (CSA) or 128 (HCA)");
				return;
			}
			m->layer_flags[i++] = (uint8_t)(MP_LAYER_ATTENTION | MP_LAYER_FFN | MP_LAYER_WINDOW | kind);
		}
	}
}

/* How many layers carry `flag`. */
static uint64_t layers_with(const mp_model *m, unsigned flag)
{
	uint64_t n = 0;

	for (uint64_t i = 0; i < m->num_layers && i < MP_MAX_LAYERS; i++)
		n += (m->layer_flags[i] & flag) != 0;
	return n;
}

/*
 * mlp_layer_types: "hash_moe" or "moe", one per layer (else the first num_hash_layers, legacy, default 3, are hash_moe).
 * Both build the same parameters (a router weight of n_routed_experts x hidden, the experts, the shared expert); the
 * hash router keeps a tid2eid buffer (vocab x top-k int64) where the top-k router keeps e_score_correction_bias: sets
 * hash_router_layers.
 */
static void mlp_layer_types(hf_ctx *c, mp_model *m)
{
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "mlp_layer_types"), *v;
	uint64_t hash = hf_get_u64(c, KEYS("num_hash_layers"), 3);

	m->hash_router_layers = hash < m->num_layers ? hash : m->num_layers;
	if (lt == NULL || cJSON_IsNull(lt))
		return;
	m->hash_router_layers = 0;
	if (!cJSON_IsArray(lt) || (uint64_t)cJSON_GetArraySize(lt) != m->num_layers) {
		hf_fail_key(c, "mlp_layer_types",
		            "mlp_layer_types must be a list of \"hash_moe\" or \"moe\", one entry per layer "
		            "(num_hidden_layers)");
		return;
	}
	cJSON_ArrayForEach(v, lt)
	{
		if (!cJSON_IsString(v) || (strcmp(v->valuestring, "hash_moe") != 0 && strcmp(v->valuestring, "moe") != 0)) {
			hf_fail_key(c, "mlp_layer_types", "mlp_layer_types entries must be \"hash_moe\" or \"moe\"");
			return;
		}
		m->hash_router_layers += v->valuestring[0] == 'h';
	}
}

/*
 * DeepSeek-V4's own modules (modeling_deepseek_v4.py, transformers 5.24), under model.layers.{i} unless said:
 *   self_attn: q_a_proj (h -> q_lora) + q_a_norm, q_b_proj (q_lora -> heads x head_dim), kv_proj (h -> head_dim: one key
 *     that is also the value) + kv_norm, the grouped output o_a_proj (o_groups x o_lora from heads x head_dim /
 *     o_groups) and o_b_proj (o_groups x o_lora -> h), one sink per head;
 *   self_attn.compressor on the compressed layers: kv_proj and gate_proj (h -> head_dim, HCA; 2 x head_dim, CSA: the
 *     Ca and Cb series), position_bias (rate x their width), kv_norm (head_dim); the CSA layers' indexer likewise at
 *     index_head_dim, with q_b_proj (q_lora -> index heads x index_head_dim) and scorer.weights_proj (h -> index heads);
 *   the hyper-connections attn_hc and ffn_hc (fn (2 + hc) hc x hc h, base (2 + hc) hc, scale 3) and model.hc_head
 *     (hc_fn hc x hc h, hc_base hc, hc_scale 1), kept in fp32 as norms are.
 * The heads split over tensor-parallel ranks as MLA's do (q_b, the output groups); the latents, compressors, indexer
 * and hyper-connections are replicated. The compressors' and indexer's projections run for every token (the step's
 * extra products).
 */
static void v4_tensors(mp_model *m, uint64_t ql, uint64_t og, uint64_t ol, uint64_t idx_heads, uint64_t idx_dim,
                       uint64_t hc, uint64_t csa, uint64_t hca)
{
	const char *at = "layers.{i}.self_attn", *cp = "layers.{i}.self_attn.compressor",
	           *ix = "layers.{i}.self_attn.compressor.indexer";
	uint64_t h = m->hidden_size, hd = m->head_dim, heads = m->num_heads, L = m->num_layers, comp = csa + hca;
	const uint8_t R = MP_ROOT_DECODER;

	hf_tensor(m, R, at, "q_a_proj.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_Q_A, false, ql, h, L);
	hf_tensor(m, R, at, "q_a_norm.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, ql, L);
	hf_tensor(m, R, at, "q_b_proj.weight", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_Q_B, false, heads * hd, ql, L);
	hf_tensor(m, R, at, "kv_proj.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_KV_A, false, hd, h, L);
	hf_tensor(m, R, at, "kv_norm.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, hd, L);
	{
		mp_tensor_spec o = {.root = R, .path = at, .leaf = "o_a_proj.weight", .kind = MP_TK_ATTENTION,
		                    .split = MP_SPLIT_ROWS, .step = MP_STEP_O, .view = MP_VIEW_LINEAR, .flags = MP_TF_OWN_INPUT,
		                    .rows = og * ol, .cols = heads * hd / og, .count = L};

		mp_inventory_add(&m->inv, &o);
		o.leaf = "o_b_proj.weight", o.split = MP_SPLIT_COLS, o.rows = h, o.cols = og * ol;
		mp_inventory_add(&m->inv, &o);
	}
	hf_tensor(m, R, at, "sinks", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1, heads, L);
	/* the compressors: HCA at head_dim, CSA at 2 x head_dim */
	for (int csa_pass = 0; csa_pass < 2; csa_pass++) {
		uint64_t n = csa_pass ? csa : hca, w = csa_pass ? 2 * hd : hd;
		uint64_t rate = csa_pass ? m->csa_compress_rate : m->hca_compress_rate;

		hf_tensor(m, R, cp, "kv_proj.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_EXTRA, false, w, h, n);
		hf_tensor(m, R, cp, "gate_proj.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_EXTRA, false, w, h, n);
		hf_tensor(m, R, cp, "position_bias", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, false, rate, w, n);
	}
	hf_tensor(m, R, cp, "kv_norm.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, hd, comp);
	/* the CSA layers' lightning indexer */
	hf_tensor(m, R, ix, "kv_proj.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_EXTRA, false, 2 * idx_dim, h, csa);
	hf_tensor(m, R, ix, "gate_proj.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_EXTRA, false, 2 * idx_dim, h, csa);
	hf_tensor(m, R, ix, "position_bias", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, false, m->csa_compress_rate,
	          2 * idx_dim, csa);
	hf_tensor(m, R, ix, "kv_norm.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, idx_dim, csa);
	hf_tensor(m, R, ix, "q_b_proj.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_EXTRA, false, idx_heads * idx_dim,
	          ql, csa);
	hf_tensor(m, R, ix, "scorer.weights_proj.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_EXTRA, false, idx_heads,
	          h, csa);
	/* the hyper-connections */
	for (int ffn = 0; ffn < 2; ffn++) {
		const char *p = ffn ? "layers.{i}.ffn_hc" : "layers.{i}.attn_hc";

		hf_tensor(m, R, p, "fn", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, false, (2 + hc) * hc, hc * h, L);
		hf_tensor(m, R, p, "base", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, (2 + hc) * hc, L);
		hf_tensor(m, R, p, "scale", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, 3, L);
	}
	hf_tensor(m, R, "hc_head", "hc_fn", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, false, hc, hc * h, 1);
	hf_tensor(m, R, "hc_head", "hc_base", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, hc, 1);
	hf_tensor(m, R, "hc_head", "hc_scale", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, 1, 1);
}

/*
 * DeepseekV4Config (transformers 5.24; DeepSeek-V4-Flash): vocab 129280, hidden 4096, 43 layers, 64 heads of
 * head_dim 512 over one KV head (num_key_value_heads must be 1: kv_proj projects to one head), q_lora_rank 1024,
 * o_groups 8 x o_lora_rank 1024, sliding_window 128, hc_mult 4, 256 routed experts of moe_intermediate_size 2048, top 6,
 * one shared expert of moe_intermediate_size, indexer 64 heads of 128, untied, 1,048,576 positions. Per layer
 * (modeling_deepseek_v4.py): DeepseekV4Attention (q_a_proj, q_a_norm, q_b_proj, kv_proj, kv_norm, o_a_proj grouped:
 * o_groups x o_lora_rank rows of heads x head_dim / o_groups, o_b_proj, sinks), its compressor (HCA: kv_proj and
 * gate_proj of head_dim, position_bias rate x head_dim, kv_norm; CSA: the same at 2 x head_dim, kv_norm of head_dim,
 * and the indexer: kv_proj and gate_proj of 2 x index_head_dim, position_bias, kv_norm, q_b_proj of index_n_heads x
 * index_head_dim from q_lora_rank, weights_proj of index_n_heads), two RMSNorms, attn_hc and ffn_hc (fn of
 * (2 + hc) x hc rows of hc x hidden, base, 3 scales), the MoE block; then the model's hc_head (hc x hc x hidden, hc,
 * 1) and norm. Worked example (the class defaults, tests/ref/hf/groundtruth.json deepseek_v4-default): 284,325,869,015
 * parameters. The MTP layers (num_nextn_predict_layers) are not built by transformers and not counted.
 */
void mpm_read_deepseek_v4(hf_ctx *c, mp_model *m)
{
	uint64_t h, L, heads, hd, ql, og, ol, hc, idx_heads, idx_dim, csa, hca;

	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 129280);
	m->hidden_size = h = hf_get_u64(c, KEYS("hidden_size"), 4096);
	m->num_layers = L = hf_get_u64(c, KEYS("num_hidden_layers"), 43);
	m->num_heads = heads = hf_get_u64(c, KEYS("num_attention_heads"), 64);
	m->num_kv_heads = hf_get_u64(c, KEYS("num_key_value_heads"), 1);
	m->head_dim = hd = hf_get_u64(c, KEYS("head_dim"), 512);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings"), 1048576);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), false);
	m->sliding_window = hf_get_u64(c, KEYS("sliding_window"), 128);
	ql = hf_get_u64(c, KEYS("q_lora_rank"), 1024);
	og = hf_get_u64(c, KEYS("o_groups"), 8);
	ol = hf_get_u64(c, KEYS("o_lora_rank"), 1024);
	hc = hf_get_u64(c, KEYS("hc_mult"), 4);
	idx_heads = hf_get_u64(c, KEYS("index_n_heads"), 64);
	idx_dim = hf_get_u64(c, KEYS("index_head_dim"), 128);
	m->num_experts = hf_get_u64(c, KEYS("n_routed_experts", "num_local_experts"), 256);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 6);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), 2048);
	m->num_shared_experts = hf_get_u64(c, KEYS("n_shared_experts"), 1);
	m->shared_expert_intermediate_size = m->moe_intermediate_size; /* DeepseekV4MLP reads intermediate_size, an alias */
	m->intermediate_size = 0;
	m->first_dense_layers = 0;
	m->router_correction_buffer = true;
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_GATED;
	m->norm_kind = MP_NORM_RMS;
	m->norms_per_layer = 2;
	m->final_norm = true;
	m->q_lora_rank = ql;
	m->attention_sinks = false; /* the sinks are listed with the attention below */
	m->shared_block_params = true;
	m->compressed_kv = true;
	m->csa_indexer_head_dim = idx_dim;
	m->hc_mult = hc;
	if (c->st != MP_OK)
		return;
	if (hf_is_null(c, "sliding_window") || m->sliding_window == 0) {
		/* DeepseekV4Config types it int (a strict dataclass): every layer's keys are a window */
		hf_fail_key(c, "sliding_window",
		            "sliding_window must be a positive integer: every DeepSeek-V4 layer keeps its keys over a window "
		            "(the default is 128)");
		return;
	}
	if (m->num_experts == 0) {
		hf_fail_key(c, "n_routed_experts",
		            "n_routed_experts must be at least 1: every DeepSeek-V4 layer's feed-forward block is a MoE");
		return;
	}
	if (m->num_kv_heads != 1) {
		hf_fail_key(c, "num_key_value_heads",
		            "num_key_value_heads must be 1: DeepSeek-V4's attention is shared-KV MQA (kv_proj projects to "
		            "one head of head_dim, read as K and V)");
		return;
	}
	if (m->num_shared_experts != 1) {
		hf_fail_key(c, "n_shared_experts",
		            "n_shared_experts must be 1: transformers 5.24 builds one shared expert of moe_intermediate_size "
		            "whatever the value (DeepseekV4SparseMoeBlock)");
		return;
	}
	if (hf_get_bool(c, KEYS("mlp_bias"), false)) {
		hf_fail_key(c, "mlp_bias", "mlp_bias true (biases on the shared expert only) is not modelled; the checkpoints "
		                           "set it false");
		return;
	}
	if (L == 0 || L > MP_MAX_LAYERS || h == 0 || heads == 0 || hd == 0 || ql == 0 || og == 0 || ol == 0 || hc == 0 ||
	    idx_heads == 0 || idx_dim == 0 || h >= (UINT64_C(1) << 32) || hd >= (UINT64_C(1) << 32) ||
	    heads >= (UINT64_C(1) << 20) || hc >= (UINT64_C(1) << 10) || ql >= (UINT64_C(1) << 32) ||
	    ol >= (UINT64_C(1) << 32) || idx_heads >= (UINT64_C(1) << 20) || idx_dim >= (UINT64_C(1) << 32)) {
		const char *key = L == 0 || L > MP_MAX_LAYERS ? "num_hidden_layers"
		                  : h == 0 || h >= (UINT64_C(1) << 32) ? "hidden_size"
		                  : heads == 0 || heads >= (UINT64_C(1) << 20) ? "num_attention_heads"
		                  : hd == 0 || hd >= (UINT64_C(1) << 32) ? "head_dim"
		                  : ql == 0 || ql >= (UINT64_C(1) << 32) ? "q_lora_rank"
		                  : og == 0 ? "o_groups"
		                  : ol == 0 || ol >= (UINT64_C(1) << 32) ? "o_lora_rank"
		                  : hc == 0 || hc >= (UINT64_C(1) << 10) ? "hc_mult"
		                  : idx_heads == 0 || idx_heads >= (UINT64_C(1) << 20) ? "index_n_heads"
		                                                                       : "index_head_dim";

		char field[MP_POINTER_MAX];

		snprintf(field, sizeof(field), "%s/%s", c->pointer, key);
		c->st = mp_fail(c->err, MP_EINVAL, field,
		                "%s must be at least 1 (num_hidden_layers at most 1024; hidden_size, head_dim, q_lora_rank, "
		                "o_lora_rank and index_head_dim below 2^32, num_attention_heads and index_n_heads below 2^20, "
		                "hc_mult below 1024)",
		                key);
		return;
	}
	if ((heads * hd) % og != 0) {
		hf_fail_key(c, "o_groups",
		            "o_groups must divide num_attention_heads x head_dim (the grouped output projection splits the "
		            "heads into o_groups groups)");
		return;
	}
	(void)hf_mul(c, og, ol, "o_groups");
	compress_rates(c, m);
	layer_types(c, m);
	mlp_layer_types(c, m);
	if (c->st != MP_OK)
		return;
	csa = layers_with(m, MP_LAYER_CSA);
	hca = layers_with(m, MP_LAYER_HCA);
	/* partial RoPE on the trailing qk_rope_head_dim of each head (partial_rotary_factor, default 64 / 512) */
	{
		double f = hf_get_double(c, c->cfg, "partial_rotary_factor", 0);
		uint64_t rope = hf_has(c, "qk_rope_head_dim") ? hf_get_u64(c, KEYS("qk_rope_head_dim"), 64) : 0;

		m->rotary_dim = f > 0 ? (uint64_t)((double)hd * f) : rope ? rope : hd / 8;
		if (m->rotary_dim > hd)
			m->rotary_dim = hd;
		snprintf(m->rope_type, sizeof(m->rope_type), "default");
		m->rotary_buffer_sets = 2; /* the "main" and "compress" RoPE (DeepseekV4RotaryEmbedding) */
	}

	v4_tensors(m, ql, og, ol, idx_heads, idx_dim, hc, csa, hca);
}

