/*
 * hf_moe.c: the mixture-of-experts decoders added for issue 14 (second half). The DeepSeek family (MLA attention,
 * routed and shared experts, leading dense layers, and V3.2's sparse-attention indexer) are rows of one table;
 * the GQA decoders with experts (GLM-4.5, OLMoE, Granite-MoE, Phi-3.5-MoE, ERNIE-4.5-MoE, MiniMax-M2) share the
 * trunk reader and set their own MoE keys. Every default is the transformers 5.24 configuration class's
 * (configuration_<type>.py), every module shape its modeling file's; tests/ref/hf/groundtruth.json holds what
 * transformers builds from them. Multi-token-prediction layers a checkpoint ships (num_nextn_predict_layers) are
 * not built by transformers and not counted (tests/ref/hf/README.md).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hf_internal.h"

/* head_dim: explicit, else hidden_size // num_attention_heads (floor division, as these modeling files take it:
 * GLM-4.5's 4096 / 96 gives 42). */
static void head_dim_floor(hf_ctx *c, mp_model *m)
{
	/* head_dim given, else hidden_size // heads as their classes floor it. Only GLM-4.5's model (and GLM-4.5V's
	 * decoder, the same attention) runs with a head_dim that does not divide (its default: 4096 / 96, a rotary half
	 * of 21 rounded up by its RoPE); the others' forward fails then (an odd head_dim for full RoPE, q_norm of
	 * hidden_size against heads x head_dim), so theirs must divide (hf_derive_head_dim) */
	if (strcmp(m->model_type, "glm4_moe") == 0 || strcmp(m->model_type, "glm4v_moe_text") == 0) {
		m->head_dim = hf_get_u64(c, KEYS("head_dim"), 0);
		if (m->head_dim == 0 && m->num_heads)
			m->head_dim = m->hidden_size / m->num_heads;
		return;
	}
	hf_derive_head_dim(c, m, "num_attention_heads");
}

/* Marks layer i as keeping a dense MLP (mp_model.dense_layer_mask). */
static void dense_layer(mp_model *m, uint64_t i)
{
	if (i < MP_MAX_LAYERS)
		m->dense_layer_mask[i / 8] |= (uint8_t)(1u << (i % 8));
}

/*
 * mlp_layer_types (transformers 5: DeepSeek-V3.2, GLM-4.7-Flash): one "dense" or "sparse" per layer. Absent: the
 * leading first_k_dense_replace layers are dense (m->first_dense_layers, already set). Returns whether it was given.
 */
static bool mlp_layer_types(hf_ctx *c, mp_model *m)
{
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(c->cfg, "mlp_layer_types"), *v;
	uint64_t i = 0;

	if (l == NULL || cJSON_IsNull(l))
		return false;
	if (!cJSON_IsArray(l) || (uint64_t)cJSON_GetArraySize(l) != m->num_layers) {
		hf_fail_key(c, "mlp_layer_types",
		            "mlp_layer_types must list \"dense\" or \"sparse\" for each of the "
		            "num_hidden_layers layers");
		return true;
	}
	cJSON_ArrayForEach(v, l)
	{
		if (!cJSON_IsString(v) ||
		    (strcmp(v->valuestring, "dense") != 0 && strcmp(v->valuestring, "sparse") != 0)) {
			hf_fail_key(c, "mlp_layer_types", "mlp_layer_types entries must be \"dense\" or \"sparse\"");
			return true;
		}
		if (v->valuestring[0] == 'd')
			dense_layer(m, i);
		i++;
	}
	m->first_dense_layers = 0;
	return true;
}

/*
 * GLM-5's indexer_types: "full" (the layer runs its indexer) or "shared" (it reuses the previous full layer's
 * top-k: no indexer weights, no cached keys). Absent: index_topk_pattern ("F"/"S" per layer), else layer i is full
 * when max(i - index_skip_topk_offset + 1, 0) % index_topk_freq == 0 (freq 1, offset 2 by default: all full), as
 * GlmMoeDsaConfig.__post_init__ derives it.
 */
static void indexer_types(hf_ctx *c, mp_model *m)
{
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(c->cfg, "indexer_types"), *v;
	const cJSON *pat = cJSON_GetObjectItemCaseSensitive(c->cfg, "index_topk_pattern");
	uint64_t full = 0, n = 0;

	if (cJSON_IsArray(l)) {
		cJSON_ArrayForEach(v, l)
		{
			if (!cJSON_IsString(v) ||
			    (strcmp(v->valuestring, "full") != 0 && strcmp(v->valuestring, "shared") != 0)) {
				hf_fail_key(c, "indexer_types", "indexer_types entries must be \"full\" or \"shared\"");
				return;
			}
			full += v->valuestring[0] == 'f';
			n++;
		}
	} else if (cJSON_IsString(pat)) {
		for (const char *p = pat->valuestring; *p; p++, n++) {
			if (*p != 'F' && *p != 'S') {
				hf_fail_key(c, "index_topk_pattern",
				            "index_topk_pattern must be a string of F (full) and S (shared)");
				return;
			}
			full += *p == 'F';
		}
	} else {
		uint64_t freq = hf_get_u64(c, KEYS("index_topk_freq"), 1),
		         off = hf_get_u64(c, KEYS("index_skip_topk_offset"), 2);

		freq = freq ? freq : 1;
		for (n = 0; n < m->num_layers; n++)
			full += ((n + 1 > off ? n + 1 - off : 0) % freq) == 0;
	}
	if (n != m->num_layers) {
		hf_fail_key(c, cJSON_IsArray(l) ? "indexer_types" : "index_topk_pattern",
		            "the indexer pattern must have one entry per layer (num_hidden_layers)");
		return;
	}
	m->indexer_layers = full;
	if (full == 0)
		m->indexer_head_dim = 0; /* no layer keeps an indexer */
}

/* ----- the DeepSeek family: MLA + routed and shared experts ---------------------------------------------------- */

typedef struct mla_row {
	const char *name;
	uint64_t vocab, hidden, inter, moe_inter, layers, heads, q_lora, kv_lora, nope, rope, v;
	uint64_t experts, topk, shared, first_dense, max_pos;
	bool correction_buffer;          /* the router's e_score_correction_bias is a registered buffer */
	uint64_t index_heads, index_dim; /* DeepSeek sparse attention's indexer (V3.2); 0 = none */
	bool tie;                        /* tie_word_embeddings' default */
} mla_row;

static const mla_row mla_types[] = {
    /* DeepseekV3Config: vocab 129280, hidden 7168, FFN 18432 (dense layers), 61 layers, 128 heads, q_lora_rank
     * 1536, kv_lora_rank 512, qk_nope 128, qk_rope 64, v 128; 256 routed experts of 2048, top-8, one shared,
     * first_k_dense_replace 3, 4096 positions. e_score_correction_bias is a buffer of DeepseekV3TopkRouter. */
    {"deepseek_v3", 129280, 7168, 18432, 2048, 61, 128, 1536, 512, 128, 64, 128, 256, 8, 1, 3, 4096, true, 0, 0, false},
    /* DeepseekV2Config: vocab 102400, hidden 4096, FFN 11008, 32 layers, 32 heads, q_lora_rank 1536; 64 routed
     * experts of 1407, two shared, first_k_dense_replace 0, 2048 positions; num_experts_per_tok None (no top-k:
     * refused below); DeepseekV2TopkRouter has no correction bias. */
    {"deepseek_v2", 102400, 4096, 11008, 1407, 32, 32, 1536, 512, 128, 64, 128, 64, 0, 2, 0, 2048, false, 0, 0, false},
    /* DeepseekV32Config: V3's shapes, 163840 positions, and the lightning indexer of DeepSeek sparse attention
     * (index_n_heads 64 of index_head_dim 128; modeling_deepseek_v32.py DeepseekV32Indexer). */
    {"deepseek_v32", 129280, 7168, 18432, 2048, 61, 128, 1536, 512, 128, 64, 128, 256, 8, 1, 3, 163840, true, 64, 128, false},
    /* Glm4MoeLiteConfig (GLM-4.7-Flash): vocab 154880, hidden 2048, FFN 10240, 47 layers, 20 heads, q_lora_rank
     * 768, qk_nope 192, qk_rope 64, v 256; 64 routed experts of 1536, top-4, one shared, layer 0 dense
     * (mlp_layer_types), 202752 positions. */
    {"glm4_moe_lite", 154880, 2048, 10240, 1536, 47, 20, 768, 512, 192, 64, 256, 64, 4, 1, 1, 202752, true, 0, 0, false},
    /* GlmMoeDsaConfig (GLM-5): vocab 154880, hidden 6144, FFN 12288, 78 layers, 64 heads, q_lora_rank 2048,
     * qk_nope 192, qk_rope 64, v 256; 256 routed experts of 2048, top-8, one shared, first_k_dense_replace 3,
     * 202752 positions; DeepSeek sparse attention's indexer (32 heads of 128) on the "full" layers of
     * indexer_types ("shared" layers reuse the previous selection; modeling_glm_moe_dsa.py). */
    {"glm_moe_dsa", 154880, 6144, 12288, 2048, 78, 64, 2048, 512, 192, 64, 256, 256, 8, 1, 3, 202752, true, 32, 128, false},
    /* SarvamMLAConfig (built as DeepseekV3ForCausalLM): vocab 262144, hidden 4096, FFN 16384, 32 layers, 64 heads,
     * q_lora_rank None (q_proj), kv_lora_rank 512, qk_nope 128, qk_rope 64, v 128; 128 routed experts of 2048,
     * top-8, one shared, first_k_dense_replace 1, 4096 positions; the correction bias a buffer. */
    {"sarvam_mla", 262144, 4096, 16384, 2048, 32, 64, 0, 512, 128, 64, 128, 128, 8, 1, 1, 4096, true, 0, 0, false},
    /* MiniCPM3Config: vocab 73448, hidden 2560, FFN 6400, 62 layers, 40 heads, q_lora_rank 768, kv_lora_rank 256,
     * qk_nope 64, qk_rope 32, v 64, 32768 positions, tied, dense (no experts); mlp_bias (mpm_read_minicpm3). */
    {"minicpm3", 73448, 2560, 6400, 0, 62, 40, 768, 256, 64, 32, 64, 0, 0, 0, 0, 32768, false, 0, 0, true},
    /* YoutuConfig: vocab 128256, hidden 2048, FFN 6144, 32 layers, 16 heads, q_lora_rank 1536, kv_lora_rank 512,
     * qk_nope 128, qk_rope 64, v 128, 131072 positions, tied, dense. */
    {"youtu", 128256, 2048, 6144, 0, 32, 16, 1536, 512, 128, 64, 128, 0, 0, 0, 0, 131072, false, 0, 0, true},
    /* Mistral4Config (Mistral4ForCausalLM): vocab 131072, hidden 4096, FFN 12288, 36 layers, 32 heads, q_lora_rank
     * 1024, kv_lora_rank 256, qk_nope 64, qk_rope 64, v 128; 128 routed experts (n_routed_experts, attribute_map
     * num_local_experts) of 2048, top-4, one shared, first_k_dense_replace 0, 1048576 positions (YaRN from 8192),
     * untied; its router holds no correction bias (modeling_mistral4.py Mistral4TopkRouter). */
    {"mistral4", 131072, 4096, 12288, 2048, 36, 32, 1024, 256, 64, 64, 128, 128, 4, 1, 0, 1048576, false, 0, 0, false},
    /* AXK1Config (A.X K1): vocab 163840, hidden 7168, FFN 18432, 61 layers, 64 heads, q_lora_rank 1536, kv_lora_rank
     * 512, qk_nope 128, qk_rope 64, v 128; 192 routed experts of 2048, top-8, one shared, layer 0 dense
     * (mlp_layer_types), 32768 positions, untied; the correction bias a buffer (mpm_read_axk1 adds its norms). */
    {"axk1", 163840, 7168, 18432, 2048, 61, 64, 1536, 512, 128, 64, 128, 192, 8, 1, 1, 32768, true, 0, 0, false},
    /* AXK2Config (A.X K2): vocab 163840, hidden 2048, FFN 5120, 48 layers, 32 heads, q_lora_rank 384, kv_lora_rank
     * 128, qk_nope 64, qk_rope 32, v 64; 128 routed experts of 512, top-8, one shared, layer 0 dense, 131072
     * positions, untied; DeepSeek sparse attention's indexer (16 heads of 128) in every layer (mpm_read_axk2 lists
     * its query-and-gate projection and gated norms). */
    {"axk2", 163840, 2048, 5120, 512, 48, 32, 384, 128, 64, 32, 64, 128, 8, 1, 1, 131072, true, 16, 128, false},
    /* HYV4Config (Hunyuan V4): vocab 120832, hidden 2816, FFN 6912, 34 layers, 32 heads, q_lora_rank 1536,
     * kv_lora_rank 512, qk_nope 192, qk_rope 64, v 256; 256 routed experts of 768, top-8, one shared, layer 0 dense
     * (mlp_layer_types), 262144 positions, untied; the indexer (16 heads of 128) on the "full" layers of indexer_types
     * (mpm_read_hy_v4 adds its gates, sinks and hyper-connections). */
    {"hy_v4", 120832, 2816, 6912, 768, 34, 32, 1536, 512, 192, 64, 256, 256, 8, 1, 1, 262144, true, 16, 128, false},
    /* HYV4VLTextConfig (Hunyuan V4 VL's decoder, read inside hy_v4_vl): Hunyuan V4's modules with vocab 120832,
     * hidden 6144, FFN 18432, 78 layers, 64 heads, q_lora_rank 2048, kv_lora_rank 512, qk_nope 192, qk_rope 64, v 256,
     * 256 experts of 2048, top-8, one shared, the indexer 32 heads of 128, multimodal RoPE (mrope_section). */
    {"hy_v4_vl_text", 120832, 6144, 18432, 2048, 78, 64, 2048, 512, 192, 64, 256, 256, 8, 1, 1, 262144, true, 32, 128,
     false},
    /* MistralLarge4TextConfig (Mistral Large 4's decoder, read inside mistral_large4): vocab 204800, hidden 6144, FFN
     * 24576, 72 layers, 64 heads, q_proj without a query LoRA, kv_lora_rank 512, qk_nope 64, qk_rope 64, v 128; 128
     * routed experts of 6144, top-4, one shared, layer 0 dense, 1048576 positions, untied; the indexer (32 heads of
     * 128) on the "full" layers of indexer_types (mpm_read_mistral_large4_text lists what differs per layer). */
    {"mistral_large4_text", 204800, 6144, 24576, 6144, 72, 64, 0, 512, 64, 64, 128, 128, 4, 1, 1, 1048576, false, 32,
     128, false},
    /* Dots3NoteTextConfig (dots.llm3 Note preview, read by mpm_read_dots3_note_text): vocab 152064, hidden 5120, FFN
     * 13824, 46 layers, 128 heads, q_lora_rank 1024, kv_lora_rank 512, qk_nope 128, qk_rope 64, v 128 (the
     * indexed_attention layers'); 256 routed experts of 1536, top-8, one shared, layer 0 dense, 524288 positions,
     * untied; the correction bias a buffer; the indexer (64 heads of 128) on the indexed_attention layers. */
    {"dots3_note_text", 152064, 5120, 13824, 1536, 46, 128, 1024, 512, 128, 64, 128, 256, 8, 1, 1, 524288, true, 64,
     128, false},
    /* Glm5NextTextConfig (GLM-5.3-Flash's decoder, read by mpm_read_glm5_next_text): vocab 154880, hidden 4096, FFN
     * 12288, 45 layers, 64 heads, q_lora_rank 1536, kv_lora_rank 512, qk_nope 256, qk_rope 0, v 256; 288 routed experts
     * of 2048, top-8, one shared, 1048576 positions, untied; the indexer (32 heads of 128). */
    {"glm5_next_text", 154880, 4096, 12288, 2048, 45, 64, 1536, 512, 256, 0, 256, 288, 8, 1, 3, 1048576, true, 32, 128,
     false},
};

/*
 * The MLA decoders (modeling_deepseek_v3.py and the files modular_*.py derives from it): q_a (h -> q_lora) +
 * q_a_norm + q_b, or q_proj when q_lora_rank is null; kv_a_with_mqa (h -> kv_lora + rope) + kv_a_norm + kv_b
 * (kv_lora -> heads x (nope + v)); o (heads x v -> h). Experts fused per layer (gate_up_proj, down_proj: the same
 * parameters as separate projections); shared experts as one MLP of n_shared x moe_intermediate_size.
 */
static void decode_mla(hf_ctx *c, const mla_row *d, mp_model *m)
{
	uint64_t shared, hd;

	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), d->vocab);
	m->hidden_size = hf_get_u64(c, KEYS("hidden_size"), d->hidden);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), d->inter);
	m->num_layers = hf_get_u64(c, KEYS("num_hidden_layers"), d->layers);
	m->num_heads = hf_get_u64(c, KEYS("num_attention_heads"), d->heads);
	m->num_kv_heads = hf_get_u64(c, KEYS("num_key_value_heads"), m->num_heads);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings"), d->max_pos);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), d->tie);
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->attn_kind = MP_ATTN_MLA;
	if (strcmp(d->name, "deepseek_v2") == 0) {
		/* DeepseekV2Config.validate_architecture; DeepseekV2MLP (the dense layers' and the shared experts') takes
		 * mlp_bias, the routed experts never (DeepSeek-V3.2's and GLM-5's mlp_bias is read by no module) */
		hf_heads_divide_hidden(c, m, "num_attention_heads");
		m->mlp_bias = hf_get_bool(c, KEYS("mlp_bias"), false);
		m->routed_bias = MP_BIAS_OFF;
	}
	/* q_lora_rank null means q is projected directly: get_u64 treats null as absent, so look first */
	m->q_lora_rank = hf_is_null(c, "q_lora_rank") ? 0 : hf_get_u64(c, KEYS("q_lora_rank"), d->q_lora);
	m->kv_lora_rank = hf_get_u64(c, KEYS("kv_lora_rank"), d->kv_lora);
	m->qk_nope_head_dim = hf_get_u64(c, KEYS("qk_nope_head_dim"), d->nope);
	/* Glm4MoeLiteConfig's attribute_map spells qk_rope_head_dim head_dim (the others' head_dim is derived from it) */
	m->qk_rope_head_dim = strcmp(d->name, "glm4_moe_lite") == 0
	                          ? hf_get_u64(c, KEYS("qk_rope_head_dim", "head_dim"), d->rope)
	                          : hf_get_u64(c, KEYS("qk_rope_head_dim"), d->rope);
	m->v_head_dim = hf_get_u64(c, KEYS("v_head_dim"), d->v);
	m->head_dim = m->qk_nope_head_dim + m->qk_rope_head_dim;
	/* YoutuConfig keeps head_dim beside qk_rope_head_dim (its __post_init__ sets it so) and its rotary embedding
	 * takes head_dim: a config that gives another fails the forward */
	if (strcmp(d->name, "youtu") == 0 && c->st == MP_OK && hf_has(c, "head_dim") &&
	    hf_get_u64(c, KEYS("head_dim"), 0) != m->qk_rope_head_dim)
		hf_fail_key(c, "head_dim",
		            "head_dim must equal qk_rope_head_dim (Youtu's rotary embedding is head_dim wide; its default is "
		            "qk_rope_head_dim)");
	/* the attribute_map's spelling: num_experts (DeepSeek-V2), num_local_experts (the others) */
	m->num_experts = strcmp(d->name, "deepseek_v2") == 0
	                     ? hf_get_u64(c, KEYS("n_routed_experts", "num_experts"), d->experts)
	                     : hf_get_u64(c, KEYS("n_routed_experts", "num_local_experts"), d->experts);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), d->topk);
	if (m->num_experts_per_tok == 0 && c->st == MP_OK && m->num_experts > 0) {
		char msg[240];

		snprintf(msg, sizeof(msg),
		         "num_experts_per_tok is required: %s's default is None, with which no expert can be routed "
		         "(transformers itself fails); give the checkpoint's top-k (DeepSeek-V2 and V2-Lite: 6)",
		         d->name);
		hf_fail_key(c, "num_experts_per_tok", msg);
	}
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), d->moe_inter);
	shared = hf_get_u64(c, KEYS("n_shared_experts"), d->shared);
	m->num_shared_experts = shared;
	m->shared_expert_intermediate_size = hf_mul(c, shared, m->moe_intermediate_size, "moe_intermediate_size");
	/* DeepseekV2Moe builds its shared experts whenever n_shared_experts is not None: with 0, of width 0, and its
	 * down_proj keeps mlp_bias's bias */
	m->shared_down_bias_only = strcmp(d->name, "deepseek_v2") == 0 && shared == 0 && hf_has(c, "n_shared_experts");
	m->first_dense_layers = hf_get_u64(c, KEYS("first_k_dense_replace"), d->first_dense);
	if (m->first_dense_layers > m->num_layers)
		m->first_dense_layers = m->num_layers;
	if (!mlp_layer_types(c, m) && strcmp(d->name, "glm4_moe_lite") == 0)
		m->first_dense_layers = m->num_layers ? 1 : 0; /* Glm4MoeLiteConfig: mlp_layer_types' default */
	m->router_correction_buffer = d->correction_buffer;
	if (strcmp(d->name, "dots3_note_text") != 0 && strcmp(d->name, "glm5_next_text") != 0) /* their readers' own */
	{
		/* layer_types (DeepSeek-V3.2, GLM-5: "indexed_attention" in every layer, the legacy spelling
		 * "deepseek_sparse_attention"): one entry per layer, as their configuration classes check */
		const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types"), *v;

		if (cJSON_IsArray(lt) && (uint64_t)cJSON_GetArraySize(lt) != m->num_layers)
			hf_fail_key(c, "layer_types", "layer_types must have one entry per layer (num_hidden_layers)");
		if (!cJSON_IsArray(lt))
			lt = NULL;
		cJSON_ArrayForEach(v, lt)
		{
			const char *want = d->index_dim ? "indexed_attention" : "full_attention";

			if (c->st == MP_OK &&
			    (!cJSON_IsString(v) || (strcmp(v->valuestring, want) != 0 &&
			                            !(d->index_dim && strcmp(v->valuestring, "deepseek_sparse_attention") == 0)))) {
				char msg[160];

				snprintf(msg, sizeof(msg), "layer_types entries must be \"%s\" for %s (other kinds are not modelled)",
				         want, d->name);
				hf_fail_key(c, "layer_types", msg);
			}
		}
	}
	if (d->index_dim) {
		m->indexer_heads = hf_get_u64(c, KEYS("index_n_heads"), d->index_heads);
		m->indexer_head_dim = hf_get_u64(c, KEYS("index_head_dim"), d->index_dim);
		m->indexer_topk = hf_get_u64(c, KEYS("index_topk"), 2048);
		indexer_types(c, m);
	}
	m->ffn_kind = MP_FFN_GATED;
	m->norm_kind = MP_NORM_RMS;
	m->norms_per_layer = 2;
	m->final_norm = true;
	hd = m->head_dim;
	m->head_dim = m->qk_rope_head_dim; /* RoPE rotates only the rope part */
	hf_decode_rope(c, m, 1.0);
	m->head_dim = hd;
}

/* The MLA rows' one decoder: hf_decode_type set m->model_type to the type being read, which names its row. */
void mpm_read_mla(hf_ctx *c, mp_model *m)
{
	for (size_t i = 0; i < sizeof(mla_types) / sizeof(mla_types[0]); i++)
		if (strcmp(m->model_type, mla_types[i].name) == 0) {
			decode_mla(c, &mla_types[i], m);
			return;
		}
	hf_fail_key(c, "model_type", "no MLA row for this model_type"); /* unreachable: the table below */
}

/* A per-layer list of integers under key of at least n entries (exactly n when exact), each below limit (0: any);
 * false (and a 422 naming key with msg) otherwise. */
static bool layer_ints(hf_ctx *c, const char *key, uint64_t n, bool exact, uint64_t limit, const char *msg,
                       uint64_t *out)
{
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(c->cfg, key), *v;
	uint64_t i = 0;

	if (!cJSON_IsArray(l) || (uint64_t)cJSON_GetArraySize(l) < n ||
	    (exact && (uint64_t)cJSON_GetArraySize(l) != n)) {
		hf_fail_key(c, key, msg);
		return false;
	}
	cJSON_ArrayForEach(v, l)
	{
		if (i == n)
			break;
		if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble != (double)(uint64_t)v->valuedouble ||
		    (limit && v->valuedouble >= (double)limit)) {
			hf_fail_key(c, key, msg);
			return false;
		}
		out[i++] = (uint64_t)v->valuedouble;
	}
	return true;
}

/*
 * MistralLarge4TextConfig (modeling_mistral_large4.py MistralLarge4TextAttention, MistralLarge4TextIndexer): the MLA
 * row above with, per layer, RoPE or none (no_rope_layers: 1 RoPE, 0 NoPE; by default every
 * no_rope_layer_interval-th (4) layer is NoPE) and its own latent or an earlier layer's (kv_source_layers: a layer
 * whose entry is its own index caches its latent; one pointing at an earlier layer of the same kind reuses that cache
 * and has no kv_a_proj_with_mqa or kv_a_layernorm). kv_a_proj_with_mqa is hidden -> kv_lora_rank + qk_rope_head_dim
 * (NoPE: kv_lora_rank; attention_bias adds its bias), kv_b_proj kv_lora_rank -> heads x (qk_nope + v) (NoPE: heads x
 * (qk_nope + qk_rope + v)); every layer has q_proj (hidden -> heads x (qk_nope + qk_rope)), o_proj and a
 * softmax_scaling (scale and bias per head). The indexer of each "full" layer of indexer_types: wq_b from the hidden
 * states (after q_input_norm, a LayerNorm of hidden with bias), wk, k_norm, weights_proj and its own
 * softmax_scaling; the rotary embedding's learned alpha (qk_rope_head_dim / 2 values). The experts' count is
 * num_experts, else num_local_experts, else n_routed_experts (the config's order of precedence). Cache (transformers
 * 5.24's DynamicIndexedLayer): per layer with a latent of its own kv_lora_rank + qk_rope_head_dim values a token
 * (NoPE: kv_lora_rank), and per layer with an indexer (KV-sharing ones too) index_head_dim. Worked example
 * (tests/ref/hf, mistral_large4-default): 1,051,822,421,536 parameters.
 */
void mpm_read_mistral_large4_text(hf_ctx *c, mp_model *m)
{
	uint64_t rope[MP_MAX_LAYERS], src[MP_MAX_LAYERS], every, n, r_own = 0, n_own = 0, r_all = 0, n_all = 0, il, h;
	const char *a = "layers.{i}.self_attn";

	mpm_read_mla(c, m);
	if (c->st != MP_OK)
		return;
	m->num_experts = hf_get_u64(c, KEYS("num_experts", "num_local_experts", "n_routed_experts"), 128);
	m->q_lora_rank = 0; /* MistralLarge4TextConfig has no query LoRA (a q_lora_rank key builds nothing) */
	m->final_logit_softcapping = hf_get_double(c, c->cfg, "final_logit_softcapping", 30.0) > 0;
	n = m->num_layers;
	h = m->hidden_size;
	if (n == 0 || n > MP_MAX_LAYERS)
		return;
	if (hf_has(c, "no_rope_layers")) {
		if (!layer_ints(c, "no_rope_layers", n, false, 0,
		                "no_rope_layers must give at least one entry per layer (1: RoPE, 0: NoPE)", rope))
			return;
	} else {
		every = hf_get_u64(c, KEYS("no_rope_layer_interval"), 4);
		if (c->st == MP_OK && every == 0) {
			hf_fail_key(c, "no_rope_layer_interval", "no_rope_layer_interval must be at least 1");
			return;
		}
		for (uint64_t i = 0; i < n; i++)
			rope[i] = (i + 1) % every != 0;
	}
	if (hf_has(c, "kv_source_layers")) {
		if (!layer_ints(c, "kv_source_layers", n, true, n,
		                "kv_source_layers must give one layer index per layer (num_hidden_layers)", src))
			return;
	} else {
		for (uint64_t i = 0; i < n; i++)
			src[i] = i;
	}
	for (uint64_t i = 0; i < n; i++) {
		bool shared = src[i] != i;

		if (src[i] > i || src[src[i]] != src[i] || (shared && (rope[i] != 0) != (rope[src[i]] != 0))) {
			hf_fail_key(c, "kv_source_layers",
			            "each layer must share the latent KV of an earlier layer that owns its cache and has the same "
			            "RoPE kind (no_rope_layers), or its own (MistralLarge4TextConfig)");
			return;
		}
		r_all += rope[i] != 0;
		n_all += rope[i] == 0;
		r_own += !shared && rope[i] != 0;
		n_own += !shared && rope[i] == 0;
	}
	m->no_kv_layers = n - r_own - n_own;
	m->mla_nope_layers = n_own;
	{
		uint64_t kv = m->kv_lora_rank, rk = m->qk_rope_head_dim, hs = m->num_heads;
		uint64_t kvb = hf_mul(c, hs, m->qk_nope_head_dim + m->v_head_dim, "num_attention_heads");
		uint64_t kvb_nope = hf_mul(c, hs, m->qk_nope_head_dim + rk + m->v_head_dim, "num_attention_heads");

		hf_tensor(m, MP_ROOT_DECODER, a, "kv_a_proj_with_mqa.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_KV_A,
		          false, kv + rk, h, r_own);
		hf_tensor(m, MP_ROOT_DECODER, a, "kv_a_proj_with_mqa.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_KV_A,
		          false, kv, h, n_own);
		if (m->qkv_bias) {
			hf_tensor(m, MP_ROOT_DECODER, a, "kv_a_proj_with_mqa.bias", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE,
			          true, 1, kv + rk, r_own);
			hf_tensor(m, MP_ROOT_DECODER, a, "kv_a_proj_with_mqa.bias", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE,
			          true, 1, kv, n_own);
		}
		hf_tensor(m, MP_ROOT_DECODER, a, "kv_a_layernorm.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
		          kv, r_own + n_own);
		hf_tensor(m, MP_ROOT_DECODER, a, "kv_b_proj.weight", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_KV_B, false, kvb,
		          kv, r_all);
		hf_tensor(m, MP_ROOT_DECODER, a, "kv_b_proj.weight", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_KV_B, false,
		          kvb_nope, kv, n_all);
		hf_tensor(m, MP_ROOT_DECODER, a, "softmax_scaling.scale", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1,
		          hs, n);
		hf_tensor(m, MP_ROOT_DECODER, a, "softmax_scaling.bias", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1,
		          hs, n);
		hf_tensor(m, MP_ROOT_DECODER, NULL, "rotary_emb.alpha", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
		          (rk + 1) / 2, 1);
	}
	il = m->indexer_head_dim ? mp_model_indexer_layers(m) : 0;
	if (il) {
		uint64_t ih = m->indexer_heads;

		hf_tensor(m, MP_ROOT_DECODER, a, "indexer.wq_b.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_INDEXER_Q,
		          false, hf_mul(c, ih, m->indexer_head_dim, "index_n_heads"), h, il);
		hf_tensor(m, MP_ROOT_DECODER, a, "indexer.q_input_norm.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE,
		          true, 1, h, il);
		hf_tensor(m, MP_ROOT_DECODER, a, "indexer.q_input_norm.bias", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE,
		          true, 1, h, il);
		hf_tensor(m, MP_ROOT_DECODER, a, "indexer.softmax_scaling.scale", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE,
		          true, 1, ih, il);
		hf_tensor(m, MP_ROOT_DECODER, a, "indexer.softmax_scaling.bias", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE,
		          true, 1, ih, il);
	}
}

/* The attention widths of one kind of dots.llm3 layer (Dots3NoteTextConfig's per_layer_config view). */
typedef struct dots3_attn {
	uint64_t heads, kv_heads, q_lora, kv_lora, nope, rope, v, head_dim;
} dots3_attn;

/* The widths of a layer: base, with the members of the override object o (NULL: none) in their place; false and a
 * 422 naming key when one is not a whole number from 1 to 2^20 (qk_rope_head_dim: from 0). */
static bool dots3_widths(hf_ctx *c, const cJSON *o, const char *key, const dots3_attn *base, dots3_attn *out)
{
	static const char *const names[] = {"num_attention_heads", "num_key_value_heads", "q_lora_rank", "kv_lora_rank",
	                                    "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "head_dim"};
	uint64_t *f = &out->heads;
	const cJSON *v;

	*out = *base;
	cJSON_ArrayForEach(v, o)
	{
		size_t k = 0;

		while (k < 8 && strcmp(v->string, names[k]) != 0)
			k++;
		if (k == 8 || !cJSON_IsNumber(v) || v->valuedouble < (k == 5 ? 0 : 1) || v->valuedouble > (double)(1u << 20) ||
		    v->valuedouble != (double)(uint64_t)v->valuedouble) {
			hf_fail_key(c, key, "per-layer attention overrides must be whole numbers (num_attention_heads, "
			                    "num_key_value_heads, q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, "
			                    "v_head_dim, head_dim), from 1 to 2^20");
			return false;
		}
		f[k] = (uint64_t)v->valuedouble;
	}
	return true;
}

/* One kind's attention tensors (count layers of widths a) into m's inventory. */
static void dots3_attention(hf_ctx *c, mp_model *m, const dots3_attn *a, uint64_t count)
{
	const char *p = "layers.{i}.self_attn";
	uint64_t h = m->hidden_size, qk = a->nope + a->rope;

	hf_tensor(m, MP_ROOT_DECODER, p, "q_a_proj.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_Q_A, false, a->q_lora, h,
	          count);
	hf_tensor(m, MP_ROOT_DECODER, p, "q_a_layernorm.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
	          a->q_lora, count);
	hf_tensor(m, MP_ROOT_DECODER, p, "q_b_proj.weight", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_Q_B, false,
	          hf_mul(c, a->heads, qk, "num_attention_heads"), a->q_lora, count);
	hf_tensor(m, MP_ROOT_DECODER, p, "kv_a_proj_with_mqa.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_KV_A, false,
	          a->kv_lora + a->rope, h, count);
	hf_tensor(m, MP_ROOT_DECODER, p, "kv_a_layernorm.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
	          a->kv_lora, count);
	hf_tensor(m, MP_ROOT_DECODER, p, "kv_b_proj.weight", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_KV_B, false,
	          hf_mul(c, a->heads, a->nope + a->v, "num_attention_heads"), a->kv_lora, count);
	hf_tensor(m, MP_ROOT_DECODER, p, "o_proj.weight", MP_TK_ATTENTION, MP_SPLIT_COLS, MP_STEP_O, false, h,
	          hf_mul(c, a->heads, a->v, "num_attention_heads"), count);
	if (m->qkv_bias) {
		hf_tensor(m, MP_ROOT_DECODER, p, "q_a_proj.bias", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
		          a->q_lora, count);
		hf_tensor(m, MP_ROOT_DECODER, p, "kv_a_proj_with_mqa.bias", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, true,
		          1, a->kv_lora + a->rope, count);
		hf_tensor(m, MP_ROOT_DECODER, p, "o_proj.bias", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, count);
	}
	hf_tensor(m, MP_ROOT_DECODER, p, "k_rope_only_layernorm.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, true,
	          1, a->rope, count);
	hf_tensor(m, MP_ROOT_DECODER, p, "g_proj.weight", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_QKV, false, a->heads, h,
	          count);
}

/*
 * Dots3NoteTextConfig (modeling_dots3_note.py Dots3NoteTextAttention, Dots3NoteTextIndexer, Dots3NoteTextMoE): the
 * MLA row above for the layers of every kind, each with its own widths. layer_types (absent: layers 0, 1 and every
 * i % 4 == 1 "indexed_attention", or "full_attention" with use_dsa false; the others "sliding_attention", or none
 * with use_sliding_window false; use_dsa swaps the two full kinds of a given list unless per_layer_config is given).
 * The sliding layers' widths: per_layer_config's overrides of the global ones when the config gives it, else the
 * swa_* keys (64 heads, q_lora 1024, kv_lora 1024, qk_nope 192, v 128, head_dim 256, qk_rope head_dim - qk_nope).
 * Every layer: q_a_proj, q_a_layernorm, q_b_proj (heads x (nope + rope)), kv_a_proj_with_mqa (kv_lora + rope),
 * kv_a_layernorm, kv_b_proj (heads x (nope + v)), o_proj (attention_bias on q_a, kv_a and o), k_rope_only_layernorm
 * (rope), g_proj (hidden -> heads); an indexed_attention layer DeepSeek-V3.2's indexer. The window: sliding_window,
 * null or absent 512 (sliding_window_size). The MoE layers: mlp_layer_types, else first_k_dense_replace (1) and
 * moe_layer_freq (1, or a list of flags); shared_experts of n_shared_experts x shared_experts_intermediate_size
 * (moe_shared_expert_intermediate_size) 1536. Cache (transformers 5.24): a full layer's latent kv_lora + rope, a
 * sliding layer's its own kind's over the window, and the indexer's keys in fp32 on every indexed layer.
 * Worked example (tests/ref/hf, dots3_note_text-default): 279,551,718,016 parameters, as transformers counts.
 */
void mpm_read_dots3_note_text(hf_ctx *c, mp_model *m)
{
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types"), *plc, *v, *ovr[MP_MAX_LAYERS];
	uint8_t kind[MP_MAX_LAYERS]; /* 0 indexed, 1 full, 2 sliding */
	dots3_attn g, swa, per[3], one;
	bool seen[3] = {false, false, false}, dsa, use_dsa_key, sliding_on;
	uint64_t n, count[3] = {0, 0, 0}, first, shared;

	mpm_read_mla(c, m);
	if (c->st != MP_OK)
		return;
	n = m->num_layers;
	if (n == 0 || n > MP_MAX_LAYERS)
		return;
	plc = cJSON_GetObjectItemCaseSensitive(c->cfg, "per_layer_config");
	if (plc && !cJSON_IsNull(plc) && !cJSON_IsObject(plc)) {
		hf_fail_key(c, "per_layer_config", "per_layer_config must be an object of layer index -> overrides");
		return;
	}
	if (!cJSON_IsObject(plc))
		plc = NULL;
	/* use_dsa: absent, true unless per_layer_config is given (then the list is taken as it is) */
	use_dsa_key = hf_has(c, "use_dsa");
	dsa = hf_get_bool(c, KEYS("use_dsa"), true);
	sliding_on = hf_get_bool(c, KEYS("use_sliding_window"), true);
	if (hf_is_null(c, "q_lora_rank")) {
		hf_fail_key(c, "q_lora_rank", "Dots 3 Note requires q_lora_rank for its MLA queries (Dots3NoteTextConfig)");
		return;
	}
	if (cJSON_IsArray(lt)) {
		uint64_t i = 0;

		if ((uint64_t)cJSON_GetArraySize(lt) != n) {
			hf_fail_key(c, "layer_types", "layer_types must have one entry per layer (num_hidden_layers)");
			return;
		}
		cJSON_ArrayForEach(v, lt)
		{
			const char *s = cJSON_IsString(v) ? v->valuestring : "";

			kind[i] = strcmp(s, "indexed_attention") == 0 ? 0
			          : strcmp(s, "full_attention") == 0  ? 1
			          : strcmp(s, "sliding_attention") == 0 ? 2
			                                               : 3;
			if (kind[i] == 3) {
				hf_fail_key(c, "layer_types", "layer_types entries must be \"indexed_attention\", \"full_attention\" "
				                              "or \"sliding_attention\"");
				return;
			}
			if ((use_dsa_key || plc == NULL) && kind[i] < 2)
				kind[i] = dsa ? 0 : 1;
			i++;
		}
	} else {
		for (uint64_t i = 0; i < n; i++)
			kind[i] = !sliding_on || i < 2 || i % 4 == 1 ? (dsa ? 0 : 1) : 2;
	}
	g = (dots3_attn){m->num_heads, m->num_kv_heads, m->q_lora_rank, m->kv_lora_rank, m->qk_nope_head_dim,
	                 m->qk_rope_head_dim, m->v_head_dim, hf_get_u64(c, KEYS("head_dim"), 256)};
	swa.heads = hf_get_u64(c, KEYS("swa_num_attention_heads"), 64);
	swa.kv_heads = hf_get_u64(c, KEYS("swa_num_key_value_heads"), 64);
	swa.q_lora = hf_get_u64(c, KEYS("swa_q_lora_rank"), 1024);
	swa.kv_lora = hf_get_u64(c, KEYS("swa_kv_lora_rank"), 1024);
	swa.head_dim = hf_get_u64(c, KEYS("swa_head_dim"), 256);
	swa.nope = hf_get_u64(c, KEYS("swa_qk_nope_head_dim"), 192);
	swa.v = hf_get_u64(c, KEYS("swa_v_head_dim"), 128);
	swa.rope = hf_has(c, "swa_qk_rope_head_dim") ? hf_get_u64(c, KEYS("swa_qk_rope_head_dim"), 64)
	                                               : (swa.head_dim > swa.nope ? swa.head_dim - swa.nope : 0);
	if (c->st != MP_OK)
		return;
	memset(ovr, 0, sizeof(ovr));
	cJSON_ArrayForEach(v, plc)
	{
		/* keys are layer indices, "2" or zero-padded "02" as to_dict writes them */
		char *end;
		unsigned long long i = strtoull(v->string, &end, 10);

		if (v->string[0] < '0' || v->string[0] > '9' || *end || i >= n || !cJSON_IsObject(v)) {
			hf_fail_key(c, "per_layer_config", "per_layer_config keys must be layer indices below num_hidden_layers, "
			                                   "each an object of overrides");
			return;
		}
		ovr[i] = v;
	}
	for (uint64_t i = 0; i < n; i++) {
		if (plc) {
			if (!dots3_widths(c, ovr[i], "per_layer_config", &g, &one))
				return;
		} else {
			one = kind[i] == 2 ? swa : g;
		}
		if (seen[kind[i]] && memcmp(&one, &per[kind[i]], sizeof(one)) != 0) {
			hf_fail_key(c, "per_layer_config", "every layer of a kind (layer_types) must have the same attention "
			                                   "widths (Dots3NoteTextConfig reads them per kind)");
			return;
		}
		per[kind[i]] = one;
		seen[kind[i]] = true;
		count[kind[i]]++;
	}
	for (int k = 0; k < 3; k++) {
		if (!seen[k])
			continue;
		if (per[k].kv_heads != per[k].heads) {
			hf_fail_key(c, k == 2 && !plc ? "swa_num_key_value_heads" : "num_key_value_heads",
			            "num_key_value_heads must match num_attention_heads (Dots3NoteTextConfig)");
			return;
		}
		if (k == 0 && per[k].rope > m->indexer_head_dim) {
			hf_fail_key(c, "qk_rope_head_dim", "qk_rope_head_dim must not exceed index_head_dim");
			return;
		}
		if (k == 2 && per[k].head_dim != per[k].nope + per[k].rope) {
			hf_fail_key(c, plc ? "per_layer_config" : "swa_head_dim",
			            "the sliding layers' head_dim must equal qk_nope_head_dim + qk_rope_head_dim");
			return;
		}
		dots3_attention(c, m, &per[k], count[k]);
	}
	/* the model's widths: the full layers' (the sliding ones' when every layer slides) */
	one = seen[0] ? per[0] : seen[1] ? per[1] : per[2];
	m->num_heads = m->num_kv_heads = one.heads;
	m->q_lora_rank = one.q_lora;
	m->kv_lora_rank = one.kv_lora;
	m->qk_nope_head_dim = one.nope;
	m->qk_rope_head_dim = one.rope;
	m->v_head_dim = one.v;
	m->head_dim = one.nope + one.rope;
	m->indexer_layers = count[0];
	if (count[0] == 0)
		m->indexer_head_dim = 0;
	m->indexer_keys_fp32 = true;
	if (count[2]) {
		m->sliding_window = hf_is_null(c, "sliding_window") || !hf_has(c, "sliding_window")
		                        ? hf_get_u64(c, KEYS("sliding_window_size"), 512)
		                        : hf_get_u64(c, KEYS("sliding_window"), 512);
		m->sliding_window_layers = count[2];
		m->mla_window_latent = per[2].kv_lora + per[2].rope;
	}
	m->rotary_buffer_sets = (uint32_t)(seen[0] + seen[1] + seen[2]);
	/* the MoE layers: mlp_layer_types, else first_k_dense_replace and moe_layer_freq */
	if (!hf_has(c, "mlp_layer_types") && hf_has(c, "moe_layer_freq")) {
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(c->cfg, "moe_layer_freq");
		uint64_t every = cJSON_IsNumber(f) ? hf_get_u64(c, KEYS("moe_layer_freq"), 1) : 0;

		first = m->first_dense_layers;
		if (cJSON_IsArray(f) ? (uint64_t)cJSON_GetArraySize(f) < n : every == 0) {
			hf_fail_key(c, "moe_layer_freq", "moe_layer_freq must be a positive number or a flag per layer");
			return;
		}
		m->first_dense_layers = 0;
		for (uint64_t i = 0; i < n; i++) {
			bool moe = i >= first && (cJSON_IsArray(f) ? cJSON_IsTrue(cJSON_GetArrayItem(f, (int)i)) ||
			                                                 (cJSON_IsNumber(cJSON_GetArrayItem(f, (int)i)) &&
			                                                  cJSON_GetArrayItem(f, (int)i)->valuedouble != 0)
			                                           : i % every == 0);

			if (!moe)
				m->dense_layer_mask[i / 8] |= (uint8_t)(1u << (i % 8));
		}
	}
	shared = m->num_shared_experts;
	if (c->st == MP_OK && shared == 0) {
		hf_fail_key(c, "n_shared_experts", "Dots 3 Note requires at least one shared expert");
		return;
	}
	m->shared_expert_intermediate_size =
	    hf_mul(c, shared,
	           hf_get_u64(c, KEYS("moe_shared_expert_intermediate_size", "shared_experts_intermediate_size"), 1536),
	           "shared_experts_intermediate_size");
}

/* The manifold-constrained hyper-connection of GLM-5.3-Flash's blocks (modeling_glm5_next.py
 * Glm5NextTextHyperConnection, the attention's attn_hc and the MLP's ffn_hc): fn [(2 + hc) x hc, hc x hidden], base
 * [(2 + hc) x hc] and scale [3] per layer. */
static void glm5_hyper_connection(hf_ctx *c, mp_model *m, const char *path, uint64_t hc)
{
	uint64_t rows = hf_mul(c, 2 + hc, hc, "hc_mult"), w = hf_mul(c, hc, m->hidden_size, "hc_mult");

	hf_tensor(m, MP_ROOT_DECODER, path, "fn", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_EXTRA, false, rows, w,
	          m->num_layers);
	hf_tensor(m, MP_ROOT_DECODER, path, "base", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, rows,
	          m->num_layers);
	hf_tensor(m, MP_ROOT_DECODER, path, "scale", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, 3, m->num_layers);
}

/*
 * Glm5NextTextConfig (GLM-5.3-Flash; modeling_glm5_next.py Glm5NextTextModel): the MLA row above (no RoPE in the MLA
 * layers: qk_rope_head_dim must be 0) on the "indexed_attention" layers of layer_types ("full_attention" read as
 * indexed; absent: every i % 4 == 3), Kimi delta attention on the "linear_attention" ones (linear_num_heads 64 of
 * linear_head_dim 128, linear_conv_kernel_dim 4; linear_attn_config's num_heads, head_dim and short_conv_kernel_size
 * when given): q, k and v projections, one depthwise conv1d over the three, the forget gate (dt_bias, A_log,
 * f_a_proj, f_b_proj), b_proj, the output gate (g_a_proj, g_b_proj), o_norm and o_proj, all without biases. The
 * indexer on the indexed layers whose indexer_types entry is "full" adds index_kpool_compress_ape [index_kpool,
 * index_head_dim] and index_kpool_compress_gate [index_head_dim, hidden], and caches per token its key, its gate
 * scores and a valid-token flag (2 x index_head_dim + 1 values). Every layer has the two hyper-connections
 * (glm5_hyper_connection, hc_mult 4 streams); the MoE layers of mlp_layer_types (absent: all but the first 3).
 */
void mpm_read_glm5_next_text(hf_ctx *c, mp_model *m)
{
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types"), *it, *v;
	const cJSON *lac = cJSON_GetObjectItemCaseSensitive(c->cfg, "linear_attn_config");
	uint64_t n, heads, hd, conv, hc, pool, lin = 0, attn = 0, full = 0, qkv, i = 0;
	bool indexed[MP_MAX_LAYERS];

	mpm_read_mla(c, m);
	if (c->st != MP_OK)
		return;
	n = m->num_layers;
	if (n == 0 || n > MP_MAX_LAYERS)
		return;
	if (m->qk_rope_head_dim != 0) {
		hf_fail_key(c, "qk_rope_head_dim", "Glm5NextTextConfig expects NoPE in the DSA attention layers: "
		                                   "qk_rope_head_dim must be 0");
		return;
	}
	if (hf_is_null(c, "q_lora_rank") || m->num_kv_heads != m->num_heads) {
		hf_fail_key(c, hf_is_null(c, "q_lora_rank") ? "q_lora_rank" : "num_key_value_heads",
		            "Glm5NextTextConfig needs q_lora_rank, and num_key_value_heads equal to num_attention_heads");
		return;
	}
	heads = hf_get_u64(c, KEYS("linear_num_heads"), 64);
	hd = hf_get_u64(c, KEYS("linear_head_dim"), 128);
	conv = hf_get_u64(c, KEYS("linear_conv_kernel_dim"), 4);
	if (cJSON_IsObject(lac)) {
		hf_ctx l = {lac, c->pointer, c->err, c->st, NULL, NULL, c->decode_type};

		heads = hf_get_u64(&l, KEYS("num_heads"), heads);
		hd = hf_get_u64(&l, KEYS("head_dim"), hd);
		conv = hf_get_u64(&l, KEYS("short_conv_kernel_size"), conv);
		c->st = l.st;
	}
	hc = hf_get_u64(c, KEYS("hc_mult"), 4);
	pool = hf_get_u64(c, KEYS("index_kpool"), 16);
	if (c->st != MP_OK)
		return;
	if (pool == 0 || m->indexer_topk % pool != 0) {
		hf_fail_key(c, pool == 0 ? "index_kpool" : "index_topk", "index_kpool must be positive and divide index_topk");
		return;
	}
	if (cJSON_IsArray(lt)) {
		if ((uint64_t)cJSON_GetArraySize(lt) != n) {
			hf_fail_key(c, "layer_types", "layer_types must have one entry per layer (num_hidden_layers)");
			return;
		}
		cJSON_ArrayForEach(v, lt)
		{
			const char *s = cJSON_IsString(v) ? v->valuestring : "";

			if (strcmp(s, "linear_attention") != 0 && strcmp(s, "indexed_attention") != 0 &&
			    strcmp(s, "full_attention") != 0) {
				hf_fail_key(c, "layer_types", "layer_types entries must be \"linear_attention\" or "
				                              "\"indexed_attention\" (\"full_attention\" is read as indexed)");
				return;
			}
			indexed[i++] = s[0] != 'l';
		}
	} else {
		for (i = 0; i < n; i++)
			indexed[i] = i % 4 == 3;
	}
	/* the indexer's own layers: the indexed layers whose indexer_types entry (or pattern) is "full" */
	it = cJSON_GetObjectItemCaseSensitive(c->cfg, "indexer_types");
	m->layer_pattern = true;
	for (i = 0; i < n; i++) {
		bool own = true;

		if (cJSON_IsArray(it)) {
			const cJSON *e = cJSON_GetArrayItem(it, (int)i);

			own = !(cJSON_IsString(e) && strcmp(e->valuestring, "shared") == 0);
		} else if (hf_has(c, "index_topk_pattern")) {
			const cJSON *p = cJSON_GetObjectItemCaseSensitive(c->cfg, "index_topk_pattern");

			own = !(cJSON_IsString(p) && i < strlen(p->valuestring) && p->valuestring[i] == 'S');
		} else {
			uint64_t freq = hf_get_u64(c, KEYS("index_topk_freq"), 1), off = hf_get_u64(c, KEYS("index_skip_topk_offset"), 2);

			freq = freq ? freq : 1;
			own = ((i + 1 > off ? i + 1 - off : 0) % freq) == 0;
		}
		m->layer_flags[i] = MP_LAYER_FFN | (indexed[i] ? MP_LAYER_ATTENTION : MP_LAYER_SSM);
		attn += indexed[i];
		lin += !indexed[i];
		full += indexed[i] && own;
	}
	m->indexer_layers = full;
	if (full == 0)
		m->indexer_head_dim = 0;
	m->indexer_cache_values = 2 * m->indexer_head_dim + (m->indexer_head_dim > 0);
	if (full) {
		hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.self_attn", "indexer.index_kpool_compress_ape", MP_TK_ATTENTION,
		          MP_SPLIT_NONE, MP_STEP_NONE, false, pool, m->indexer_head_dim, full);
		hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.self_attn", "indexer.index_kpool_compress_gate", MP_TK_ATTENTION,
		          MP_SPLIT_NONE, MP_STEP_INDEXER_K, false, m->indexer_head_dim, m->hidden_size, full);
	}
	m->ssm.kind = MP_SSM_KDA;
	m->ssm.n_heads = heads;
	m->ssm.head_dim = hd;
	m->ssm.d_state = hd;
	m->ssm.conv_kernel = conv;
	m->ssm.d_inner = qkv = hf_mul(c, heads, hd, "linear_num_heads");
	m->ssm.mixer_listed = true;
	if (lin) {
		const char *p = "layers.{i}.self_attn", *g = "layers.{i}.self_attn.forget_gate";
		uint64_t cw[3] = {3 * qkv, 1, conv}, h = m->hidden_size;

		hf_tensor(m, MP_ROOT_DECODER, p, "q_proj.weight", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_MIXER_IN, false, qkv,
		          h, lin);
		hf_tensor(m, MP_ROOT_DECODER, p, "k_proj.weight", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_MIXER_IN, false, qkv,
		          h, lin);
		hf_tensor(m, MP_ROOT_DECODER, p, "v_proj.weight", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_MIXER_IN, false, qkv,
		          h, lin);
		hf_shape(m, MP_ROOT_DECODER, p, "conv1d.weight", MP_TK_RECURRENT, 0, cw, 3, lin);
		hf_tensor(m, MP_ROOT_DECODER, g, "dt_bias", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1, qkv, lin);
		hf_tensor(m, MP_ROOT_DECODER, g, "A_log", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1, heads, lin);
		hf_tensor(m, MP_ROOT_DECODER, g, "f_a_proj.weight", MP_TK_RECURRENT, MP_SPLIT_NONE, MP_STEP_MIXER_IN, false, hd,
		          h, lin);
		hf_tensor(m, MP_ROOT_DECODER, g, "f_b_proj.weight", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_MIXER_GATES, false,
		          qkv, hd, lin);
		hf_tensor(m, MP_ROOT_DECODER, p, "b_proj.weight", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_MIXER_IN, false, heads,
		          h, lin);
		hf_tensor(m, MP_ROOT_DECODER, p, "g_a_proj.weight", MP_TK_RECURRENT, MP_SPLIT_NONE, MP_STEP_MIXER_IN, false, hd,
		          h, lin);
		hf_tensor(m, MP_ROOT_DECODER, p, "g_b_proj.weight", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_MIXER_GATES, false,
		          qkv, hd, lin);
		hf_tensor(m, MP_ROOT_DECODER, p, "o_norm.weight", MP_TK_RECURRENT, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, hd, lin);
		hf_tensor(m, MP_ROOT_DECODER, p, "o_proj.weight", MP_TK_RECURRENT, MP_SPLIT_COLS, MP_STEP_MIXER_OUT, false, h,
		          qkv, lin);
	}
	m->mla_nope_layers = attn; /* no RoPE key in any latent */
	m->hc_mult = hc;
	glm5_hyper_connection(c, m, "layers.{i}.attn_hc", hc);
	glm5_hyper_connection(c, m, "layers.{i}.ffn_hc", hc);
}

/* ----- GQA decoders with experts ------------------------------------------------------------------------------- */

typedef struct trunk {
	uint64_t vocab, hidden, layers, heads, kv, max_pos;
	bool tie;
} trunk;

/* The trunk every GQA decoder here shares: embeddings, layers, heads, positions, RMSNorm pre-norm blocks. */
static void decode_trunk(hf_ctx *c, const trunk *t, mp_model *m)
{
	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), t->vocab);
	m->hidden_size = hf_get_u64(c, KEYS("hidden_size"), t->hidden);
	m->num_layers = hf_get_u64(c, KEYS("num_hidden_layers"), t->layers);
	m->num_heads = hf_get_u64(c, KEYS("num_attention_heads"), t->heads);
	m->num_kv_heads = hf_get_u64(c, KEYS("num_key_value_heads"), t->kv ? t->kv : m->num_heads);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings"), t->max_pos);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), t->tie);
	head_dim_floor(c, m);
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_GATED;
	m->norm_kind = MP_NORM_RMS;
	m->norms_per_layer = 2;
	m->final_norm = true;
}

/* Experts whose width is intermediate_size (Mixtral-style configs: OLMoE, Granite-MoE, Phi-3.5-MoE, MiniMax-M2):
 * no dense MLP, no shared expert. experts_keys: the count's key and the other spellings its configuration class
 * reads (attribute_map). */
static void experts_at_intermediate(hf_ctx *c, mp_model *m, const char *const *experts_keys, uint64_t experts,
                                    uint64_t topk, uint64_t inter)
{
	m->num_experts = hf_get_u64(c, experts_keys, experts);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), topk);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), inter);
	m->intermediate_size = 0;
}

/*
 * Glm4MoeConfig (GLM-4.5, GLM-4.5-Air, GLM-4.6): vocab 151552, hidden 4096, FFN 10944 (dense layers), 46 layers,
 * 96 heads, kv 8, head_dim hidden // heads, 131072 positions; attention_bias on q, k, v (o never); use_qk_norm adds
 * per-head q_norm and k_norm; half of each head rotates; 128 routed experts of 1408, top-8, one shared,
 * first_k_dense_replace 1; the router's e_score_correction_bias is a buffer (modeling_glm4_moe.py).
 */
void mpm_read_glm4_moe(hf_ctx *c, mp_model *m)
{
	static const trunk t = {151552, 4096, 46, 96, 8, 131072, false};
	uint64_t shared;

	decode_trunk(c, &t, m);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 10944);
	m->qkv_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->qk_norm = hf_get_bool(c, KEYS("use_qk_norm"), false);
	m->num_experts = hf_get_u64(c, KEYS("n_routed_experts", "num_local_experts"), 128);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 8);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), 1408);
	shared = hf_get_u64(c, KEYS("n_shared_experts"), 1);
	m->num_shared_experts = shared;
	m->shared_expert_intermediate_size = hf_mul(c, shared, m->moe_intermediate_size, "moe_intermediate_size");
	m->first_dense_layers = hf_get_u64(c, KEYS("first_k_dense_replace"), 1);
	if (m->first_dense_layers > m->num_layers)
		m->first_dense_layers = m->num_layers;
	m->router_correction_buffer = true;
	hf_decode_rope(c, m, 0.5);
}

/*
 * OlmoeConfig: vocab 50304, hidden 2048, 16 layers, 16 heads, 4096 positions, untied; q_norm and k_norm over the
 * whole q and k projections (OlmoeAttention); 64 experts of intermediate_size 2048, top-8, a router without bias
 * (modeling_olmoe.py).
 */
void mpm_read_olmoe(hf_ctx *c, mp_model *m)
{
	static const trunk t = {50304, 2048, 16, 16, 0, 4096, false};

	decode_trunk(c, &t, m);
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->qk_norm_full = true;
	experts_at_intermediate(c, m, KEYS("num_experts", "num_local_experts"), 64, 8, 2048);
	hf_decode_rope(c, m, 1.0);
}

/*
 * GraniteMoeConfig: LlamaConfig's trunk (vocab 32000, hidden 4096, 32 layers, 32 heads, 2048 positions, untied),
 * attention_bias on q, k, v and o; 8 experts (num_local_experts) of intermediate_size 11008, top-2, a router
 * without bias; the multipliers hold no parameters (modeling_granitemoe.py).
 */
void mpm_read_granitemoe(hf_ctx *c, mp_model *m)
{
	static const trunk t = {32000, 4096, 32, 32, 0, 2048, false};

	decode_trunk(c, &t, m);
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	experts_at_intermediate(c, m, KEYS("num_local_experts"), 8, 2, 11008);
	hf_decode_rope(c, m, 1.0);
}

/*
 * PhimoeConfig (Phi-3.5-MoE): vocab 32064, hidden 4096, 32 layers, 32 heads, kv 8, 131072 positions, untied;
 * LayerNorms with weight and bias (input, post-attention, final); attention_bias on q, k, v and o; 16 experts of
 * 6400, top-2; lm_head_bias; sliding_window None (modeling_phimoe.py).
 */
void mpm_read_phimoe(hf_ctx *c, mp_model *m)
{
	static const trunk t = {32064, 4096, 32, 32, 8, 131072, false};

	decode_trunk(c, &t, m);
	m->norm_kind = MP_NORM_LAYER;
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->lm_head_bias = hf_get_bool(c, KEYS("lm_head_bias"), false);
	experts_at_intermediate(c, m, KEYS("num_local_experts"), 16, 2, 6400);
	m->sliding_window = hf_window(c, "sliding_window", 0);
	hf_decode_rope(c, m, 1.0);
}

/*
 * Ernie4_5_MoeConfig (ERNIE-4.5-21B-A3B): vocab 103424, hidden 2560, FFN 12288 (dense layers), 28 layers, 20 heads,
 * kv 4, head_dim hidden // heads (128), 131072 positions, tied; use_bias on q, k, v, o, the dense and shared MLPs
 * and lm_head; 64 experts
 * (moe_num_experts) of 1536, top-6 (moe_k), moe_num_shared_experts 2 (one MLP of 2 x 1536); layer i is MoE when
 * (i + 1) % moe_layer_interval == 0 and moe_layer_start_index <= i <= moe_layer_end_index (-1, the default: the
 * last layer), else dense; the
 * router's e_score_correction_bias is a parameter (modeling_ernie4_5_moe.py).
 */
void mpm_read_ernie4_5_moe(hf_ctx *c, mp_model *m)
{
	static const trunk t = {103424, 2560, 28, 20, 4, 131072, true};
	uint64_t shared, start, end, every;

	decode_trunk(c, &t, m);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 12288);
	/* use_bias: q, k, v, o, the dense and shared MLPs and lm_head (Ernie4_5_MoeMLP, Ernie4_5_MoeForCausalLM); the
	 * routed experts never have biases */
	m->qkv_bias = m->o_bias = m->mlp_bias = m->lm_head_bias = hf_get_bool(c, KEYS("use_bias"), false);
	m->routed_bias = MP_BIAS_OFF;
	m->num_experts = hf_get_u64(c, KEYS("moe_num_experts", "num_experts"), 64);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("moe_k", "num_experts_per_tok"), 6);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), 1536);
	shared = hf_get_u64(c, KEYS("moe_num_shared_experts"), 2);
	m->num_shared_experts = shared;
	m->shared_expert_intermediate_size = hf_mul(c, shared, m->moe_intermediate_size, "moe_intermediate_size");
	m->router_bias = true;
	start = hf_get_u64(c, KEYS("moe_layer_start_index"), 1);
	{
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(c->cfg, "moe_layer_end_index");

		end = cJSON_IsNumber(e) && e->valuedouble == -1
		          ? m->num_layers - 1
		          : hf_get_u64(c, KEYS("moe_layer_end_index"), m->num_layers - 1);
	}
	every = hf_get_u64(c, KEYS("moe_layer_interval"), 1);
	if (every == 0)
		hf_fail_key(c, "moe_layer_interval", "moe_layer_interval must be at least 1");
	for (uint64_t i = 0; every && i < m->num_layers && i < MP_MAX_LAYERS; i++)
		if ((i + 1) % every != 0 || i < start || i > end)
			dense_layer(m, i);
	hf_decode_rope(c, m, 1.0);
}

/*
 * Ernie4_5_VLMoeTextConfig (the decoder of ERNIE-4.5-VL-28B-A3B; modeling_ernie4_5_vl_moe.py): ERNIE 4.5 MoE's
 * attention and trunk (vocab 103424, hidden 2560, FFN 12288 for the dense layers, 28 layers, 20 heads, kv 4, head_dim
 * hidden // heads, 131072 positions, tied, use_bias on q, k, v, o and the dense and shared MLPs; lm_head without a
 * bias), mlp_layer_types (default: layer 0 dense, the rest sparse), and in every sparse layer two groups of
 * moe_num_experts (64) experts, top moe_k (6): text_moe of moe_intermediate_size[0] (1536), which text tokens run, and
 * vision_moe of moe_intermediate_size[1] (512), which only image and video tokens run (Ernie4_5_VLMoeMoeBlock: each
 * token goes to its modality's group), each with its router and its [1, E] e_score_correction_bias; the shared
 * experts (moe_num_shared_experts x moe_intermediate_size[0]) run for every token. The vision group is listed here,
 * flagged MP_TF_OTHER_MODALITY: in the weights, never in a text token's active parameters or step. Worked example
 * (the defaults): the vision group is 27 x (64 x 2560 + 64 + 64 x 1024 x 2560 + 64 x 2560 x 512) = 6,799,197,888
 * parameters of the model's 29,399,294,336. Errors: a 422 on moe_intermediate_size unless it lists two positive
 * widths (text, vision) below 2^24, on moe_num_experts of 0, on rope_parameters (or rope_scaling) of a rope_type
 * other than default.
 */
void mpm_read_ernie4_5_vl_moe_text(hf_ctx *c, mp_model *m)
{
	static const trunk t = {103424, 2560, 28, 20, 4, 131072, true};
	const cJSON *mi = cJSON_GetObjectItemCaseSensitive(c->cfg, "moe_intermediate_size");
	uint64_t width[2] = {1536, 512}, shared, E, moe = 0, h;

	decode_trunk(c, &t, m);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 12288);
	m->qkv_bias = m->o_bias = m->mlp_bias = hf_get_bool(c, KEYS("use_bias"), false);
	m->lm_head_bias = false; /* Ernie4_5_VLMoeForConditionalGeneration.lm_head: bias=False */
	m->routed_bias = MP_BIAS_OFF;
	if (mi && !cJSON_IsNull(mi)) {
		bool ok = cJSON_IsArray(mi) && cJSON_GetArraySize(mi) == 2;

		for (int i = 0; ok && i < 2; i++) {
			const cJSON *v = cJSON_GetArrayItem(mi, i);

			ok = cJSON_IsNumber(v) && v->valuedouble >= 1 && v->valuedouble < (double)(1u << 24) &&
			     v->valuedouble == (double)(uint64_t)v->valuedouble;
			if (ok)
				width[i] = (uint64_t)v->valuedouble;
		}
		if (!ok) {
			hf_fail_key(c, "moe_intermediate_size",
			            "moe_intermediate_size must list two positive expert widths below 2^24: the text experts' "
			            "and the vision experts' ([1536, 512] for ERNIE-4.5-VL-28B-A3B)");
			return;
		}
	}
	m->num_experts = E = hf_get_u64(c, KEYS("moe_num_experts", "num_experts"), 64);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("moe_k", "num_experts_per_tok"), 6);
	m->moe_intermediate_size = width[0];
	shared = hf_get_u64(c, KEYS("moe_num_shared_experts"), 2);
	m->num_shared_experts = shared;
	m->shared_expert_intermediate_size = hf_mul(c, shared, width[0], "moe_num_shared_experts");
	m->router_bias = true;
	m->first_dense_layers = m->num_layers ? 1 : 0; /* __post_init__: ["dense"] + ["sparse"] * (layers - 1) */
	mlp_layer_types(c, m);
	hf_decode_rope(c, m, 1.0);
	if (c->st == MP_OK && strcmp(m->rope_type, "default") != 0)
		hf_fail_key(c, hf_key_of(c, KEYS("rope_parameters", "rope_scaling")),
		            "ERNIE-4.5-VL takes the default rope_type only (Ernie4_5_VLMoeTextRotaryEmbedding raises on any "
		            "other)");
	if (c->st == MP_OK && E == 0)
		hf_fail_key(c, hf_key_of(c, KEYS("moe_num_experts", "num_experts")),
		            "moe_num_experts must be at least 1: every sparse layer routes each token to its modality's experts");
	if (c->st != MP_OK || m->num_layers > MP_MAX_LAYERS)
		return;
	for (uint64_t i = 0; i < m->num_layers; i++)
		moe += mp_model_is_moe_layer(m, i);
	h = m->hidden_size;
	{
		mp_tensor_spec s = {.root = MP_ROOT_DECODER, .path = MP_NAMES_LAYERS ".mlp.vision_moe", .kind = MP_TK_EXPERT,
		                    .split = MP_SPLIT_ROWS, .step = MP_STEP_NONE, .view = MP_VIEW_EXPERTS,
		                    .rows = hf_mul(c, 2, width[1], "moe_intermediate_size"), .cols = h, .copies = E,
		                    .count = moe, .parts = 2, .flags = MP_TF_OTHER_MODALITY | MP_TF_EP};
		mp_tensor_spec r = {.root = MP_ROOT_DECODER, .path = MP_NAMES_LAYERS ".mlp.vision_moe", .kind = MP_TK_EXPERT,
		                    .split = MP_SPLIT_NONE, .step = MP_STEP_NONE, .view = MP_VIEW_LINEAR, .rows = E, .cols = h,
		                    .count = moe, .flags = MP_TF_OTHER_MODALITY | MP_TF_ROUTER};

		s.leaf = "experts.gate_up_proj";
		mp_inventory_add(&m->inv, &s);
		s.leaf = "experts.down_proj";
		s.rows = h;
		s.cols = width[1];
		s.split = MP_SPLIT_COLS;
		s.parts = 1;
		mp_inventory_add(&m->inv, &s);
		r.leaf = "gate.weight";
		mp_inventory_add(&m->inv, &r);
		r.leaf = "gate.moe_statics.e_score_correction_bias";
		r.view = MP_VIEW_EXPERTS_VECTOR;
		r.copies = 1;
		r.rows = 0;
		r.cols = E;
		r.flags = MP_TF_OTHER_MODALITY;
		mp_inventory_add(&m->inv, &r);
	}
}

/*
 * MiniMaxM2Config: vocab 200064, hidden 3072, 62 layers, 48 heads, kv 8, head_dim 128, 196608 positions, untied;
 * q_norm and k_norm over the whole q and k projections (MiniMaxM2Attention); 256 experts (num_local_experts) of
 * intermediate_size 1536, top-8; the e_score_correction_bias of each MoE block is a buffer (modeling_minimax_m2.py).
 */
void mpm_read_minimax_m2(hf_ctx *c, mp_model *m)
{
	static const trunk t = {200064, 3072, 62, 48, 8, 196608, false};

	decode_trunk(c, &t, m);
	if (!hf_has(c, "head_dim"))
		m->head_dim = 128;
	m->qk_norm_full = true;
	experts_at_intermediate(c, m, KEYS("num_local_experts", "num_experts"), 256, 8, 1536);
	m->router_correction_buffer = true;
	hf_decode_rope(c, m, 1.0);
}

/*
 * Dots1Config (dots.llm1): vocab 152064, hidden 4608, FFN 10944 (dense layers), 62 layers, 32 heads, kv 32,
 * head_dim hidden // heads, 2048 positions, untied; per-head q_norm and k_norm; routed experts (n_routed_experts,
 * default None) of moe_intermediate_size 1408, n_shared_experts as one MLP, first_k_dense_replace 0; the router's
 * e_score_correction_bias is a buffer; sliding_window 4096 on the layers from max_window_layers (62) on
 * (modeling_dots1.py, configuration_dots1.py).
 */
void mpm_read_dots1(hf_ctx *c, mp_model *m)
{
	static const trunk t = {152064, 4608, 62, 32, 32, 2048, false};
	uint64_t shared, from;

	decode_trunk(c, &t, m);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 10944);
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->qk_norm = true;
	m->num_experts = hf_get_u64(c, KEYS("n_routed_experts", "num_local_experts"), 0);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 0);
	if (c->st == MP_OK && (m->num_experts == 0 || m->num_experts_per_tok == 0))
		hf_fail_key(c, m->num_experts == 0 ? "n_routed_experts" : "num_experts_per_tok",
		            "n_routed_experts and num_experts_per_tok are required: Dots1Config's defaults are None "
		            "(dots.llm1: 128 experts, top-6)");
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), 1408);
	shared = hf_get_u64(c, KEYS("n_shared_experts"), 0);
	m->num_shared_experts = shared;
	m->shared_expert_intermediate_size = hf_mul(c, shared, m->moe_intermediate_size, "moe_intermediate_size");
	m->first_dense_layers = hf_get_u64(c, KEYS("first_k_dense_replace"), 0);
	if (m->first_dense_layers > m->num_layers)
		m->first_dense_layers = m->num_layers;
	m->router_correction_buffer = true;
	m->sliding_window = hf_window(c, "sliding_window", 4096);
	from = hf_get_u64(c, KEYS("max_window_layers"), 62);
	m->sliding_window_layers = from < m->num_layers ? m->num_layers - from : 0;
	if (m->sliding_window_layers == 0)
		m->sliding_window = 0;
	hf_decode_layer_types(c, m);
	hf_decode_rope(c, m, 1.0);
}

/*
 * Qwen3VLMoeTextConfig (the decoder of Qwen3-VL-30B-A3B and 235B-A22B): vocab 151936, hidden 2048, FFN 5632, 24
 * layers, 16 heads, kv 16, head_dim hidden // heads, 128000 positions, tied (as a text config); Qwen3's per-head q/k
 * norms; 60 experts (num_experts) of 1408, top-4, every decoder_sparse_step-th layer, mlp_only_layers dense; no
 * shared expert (modeling_qwen3_vl_moe.py).
 */
/*
 * The Qwen3-MoE decoders of the multimodal wrappers (Qwen3-VL-MoE's, Qwen3-Omni's Thinker's): the trunk t, a dense MLP
 * of intermediate_size inter (in mlp_only_layers), q/k norms, attention_bias on q, k, v and o, experts (num_experts,
 * or num_local_experts) of moe_inter with top-k topk every decoder_sparse_step-th layer. Their __post_init__ sets
 * sliding_window None, but a sliding_window key (not a field) set after it makes transformers 5.24's DynamicCache slide
 * in every layer (no layer_types): the cache follows it.
 */
static void qwen3_moe_text(hf_ctx *c, const trunk *t, uint64_t inter, uint64_t experts, uint64_t topk,
                           uint64_t moe_inter, mp_model *m)
{
	decode_trunk(c, t, m);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), inter);
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->qk_norm = true;
	m->num_experts = hf_get_u64(c, KEYS("num_experts", "num_local_experts"), experts);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), topk);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), moe_inter);
	m->moe_layer_step = hf_get_u64(c, KEYS("decoder_sparse_step"), 1);
	hf_decode_mlp_only_layers(c, m);
	m->sliding_window = hf_window(c, "sliding_window", 0);
	hf_decode_rope(c, m, 1.0);
}

void mpm_read_qwen3_vl_moe_text(hf_ctx *c, mp_model *m)
{
	static const trunk t = {151936, 2048, 24, 16, 16, 128000, true};

	qwen3_moe_text(c, &t, 5632, 60, 4, 1408, m);
}

/*
 * Llama4TextConfig (Llama-4-Scout and -Maverick's decoder): vocab 202048, hidden 5120, 48 layers, 40 heads, kv 8,
 * head_dim 128, 131072 positions, untied; use_qk_norm is an L2 norm without weights; MoE layers (moe_layers, else
 * every interleave_moe_layer_step-th) hold 16 experts (num_local_experts) of intermediate_size 8192, top-1, a router
 * without bias and one shared expert of intermediate_size; the other layers a dense MLP of intermediate_size_mlp
 * 16384. Layers with RoPE (no_rope_layers 1; else every no_rope_layer_interval-th layer (4) is NoPE) attend in chunks
 * of attention_chunk_size (8192) tokens, the NoPE layers to everything (layer_types chunked_attention /
 * full_attention). A chunked layer holds at most one chunk of keys and values: planned as a window of the chunk
 * (vLLM's ChunkedLocalAttentionSpec) (modeling_llama4.py).
 */
void mpm_read_llama4_text(hf_ctx *c, mp_model *m)
{
	static const trunk t = {202048, 5120, 48, 40, 8, 131072, false};
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types");
	const cJSON *nr = cJSON_GetObjectItemCaseSensitive(c->cfg, "no_rope_layers");
	const cJSON *ml = cJSON_GetObjectItemCaseSensitive(c->cfg, "moe_layers"), *v;
	uint64_t interval, step, chunked = 0, i = 0;

	decode_trunk(c, &t, m);
	if (!hf_has(c, "head_dim"))
		m->head_dim = 128;
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size_mlp"), 16384);
	m->num_experts = hf_get_u64(c, KEYS("num_local_experts"), 16);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 1);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 8192);
	m->num_shared_experts = 1;
	m->shared_expert_intermediate_size = m->moe_intermediate_size;
	step = hf_get_u64(c, KEYS("interleave_moe_layer_step"), 1);
	if (c->st != MP_OK)
		return;
	if (cJSON_IsArray(ml)) {
		for (i = 0; i < m->num_layers && i < MP_MAX_LAYERS; i++)
			dense_layer(m, i);
		cJSON_ArrayForEach(v, ml)
		{
			if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble >= (double)m->num_layers ||
			    v->valuedouble >= MP_MAX_LAYERS) {
				hf_fail_key(c, "moe_layers",
				            "moe_layers entries must be layer indices below num_hidden_layers");
				return;
			}
			m->dense_layer_mask[(uint64_t)v->valuedouble / 8] &=
			    (uint8_t) ~(1u << ((uint64_t)v->valuedouble % 8));
		}
	} else if (step == 0) {
		hf_fail_key(c, "interleave_moe_layer_step", "interleave_moe_layer_step must be at least 1");
		return;
	} else {
		m->moe_layer_step = step;
	}
	m->sliding_window = hf_window(c, "attention_chunk_size", 8192);
	interval = hf_get_u64(c, KEYS("no_rope_layer_interval"), 4);
	if (cJSON_IsArray(lt)) {
		if ((uint64_t)cJSON_GetArraySize(lt) != m->num_layers) {
			hf_fail_key(c, "layer_types", "layer_types must have one entry per layer (num_hidden_layers)");
			return;
		}
		cJSON_ArrayForEach(v, lt)
		{
			if (!cJSON_IsString(v) || (strcmp(v->valuestring, "chunked_attention") != 0 &&
			                           strcmp(v->valuestring, "full_attention") != 0)) {
				hf_fail_key(c, "layer_types",
				            "layer_types entries must be \"chunked_attention\" or "
				            "\"full_attention\"");
				return;
			}
			chunked += v->valuestring[0] == 'c';
		}
	} else if (cJSON_IsArray(nr) && cJSON_GetArraySize(nr) > 0) {
		if ((uint64_t)cJSON_GetArraySize(nr) != m->num_layers) {
			hf_fail_key(c, "no_rope_layers",
			            "no_rope_layers must have one 0 or 1 per layer (num_hidden_layers)");
			return;
		}
		cJSON_ArrayForEach(v, nr) chunked += cJSON_IsNumber(v) && v->valuedouble != 0;
	} else if (interval == 0) {
		hf_fail_key(c, "no_rope_layer_interval", "no_rope_layer_interval must be at least 1");
		return;
	} else {
		chunked = m->num_layers - m->num_layers / interval;
	}
	m->sliding_window_layers = m->sliding_window ? chunked : 0;
	if (m->sliding_window_layers == 0)
		m->sliding_window = 0;
	m->window_chunked = m->sliding_window != 0;
	hf_decode_rope(c, m, 1.0);
}

/* A key that is an integer or a list of one integer per layer (Hunyuan's moe_topk): the value, or the list's common
 * value; a list whose entries differ is refused (a per-layer top-k is not modelled). */
static uint64_t int_or_same_list(hf_ctx *c, const char *key, uint64_t dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->cfg, key), *e;
	uint64_t out = 0;
	bool first = true;

	if (!cJSON_IsArray(v))
		return hf_get_u64(c, (const char *const[]){key, NULL}, dflt);
	cJSON_ArrayForEach(e, v)
	{
		if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble != floor(e->valuedouble) ||
		    (!first && (uint64_t)e->valuedouble != out)) {
			char msg[160];

			snprintf(msg, sizeof(msg), "%s must be an integer, or a list with the same integer for every layer "
			                           "(a per-layer value is not modelled)", key);
			hf_fail_key(c, key, msg);
			return dflt;
		}
		out = (uint64_t)e->valuedouble;
		first = false;
	}
	return first ? dflt : out;
}

/*
 * HunYuanMoEV1Config (Hunyuan-A13B): vocab 290943, hidden 4096, 32 layers, 32 heads, kv = heads, 2048 positions,
 * untied; attention_bias on q, k, v and o; query_layernorm and key_layernorm (per head) in every layer; every layer's
 * MoE: num_experts (1) experts of intermediate_size, top moe_topk (an integer or one per layer), a router without
 * bias, and one shared MLP of intermediate_size (modeling_hunyuan_v1_moe.py builds exactly one whatever
 * num_shared_expert says; it reads no moe_intermediate_size). transformers 5.24 builds it only with head_dim given;
 * absent, memplan derives hidden_size / heads as vLLM does.
 */
void mpm_read_hunyuan_v1_moe(hf_ctx *c, mp_model *m)
{
	static const trunk t = {290943, 4096, 32, 32, 0, 2048, false};

	decode_trunk(c, &t, m);
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->qk_norm = true;
	m->num_experts = hf_get_u64(c, KEYS("num_experts", "num_local_experts"), 1);
	m->num_experts_per_tok = hf_has(c, "moe_topk") || !hf_has(c, "num_experts_per_tok")
	                             ? int_or_same_list(c, "moe_topk", 1)
	                             : int_or_same_list(c, "num_experts_per_tok", 1); /* the attribute_map's spelling */
	m->moe_intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 11008);
	m->num_shared_experts = 1;
	m->shared_expert_intermediate_size = m->moe_intermediate_size;
	m->intermediate_size = 0;
	hf_decode_rope(c, m, 1.0);
}

/*
 * LongcatFlashConfig (LongCat-Flash): vocab 131072, hidden 6144, num_layers 28 decoder layers of two blocks each
 * (num_hidden_layers is 2 x num_layers): each block an MLA attention (64 heads, q_lora_rank 1536, kv_lora_rank 512,
 * qk_nope 128, qk_rope 64, v 128) and a dense MLP of ffn_hidden_size 12288; each layer one shortcut MoE beside them:
 * 512 routed experts (n_routed_experts) of expert_ffn_hidden_size 2048, top-12 (moe_topk), and zero_expert_num 256
 * zero-computation experts that the router scores (its classifier and e_score_correction_bias have 768 rows) but that
 * hold no weights (modeling_longcat_flash.py). Planned as 2 x num_layers layers, the MoE on every second one.
 * transformers 5.24 allocates gate_up_proj for the zero experts too (LongcatFlashExperts.total_experts): memplan
 * follows the checkpoint (and vLLM), tests/ref/hf/README.md gives the difference.
 */
void mpm_read_longcat_flash(hf_ctx *c, mp_model *m)
{
	uint64_t hd, layers;

	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 131072);
	m->hidden_size = hf_get_u64(c, KEYS("hidden_size"), 6144);
	layers = hf_get_u64(c, KEYS("num_layers"), 28);
	if (hf_has(c, "num_hidden_layers") && !hf_has(c, "num_layers"))
		layers = hf_get_u64(c, KEYS("num_hidden_layers"), 56) / 2;
	m->num_layers = hf_mul(c, 2, layers, "num_layers");
	m->num_heads = hf_get_u64(c, KEYS("num_attention_heads"), 64);
	m->num_kv_heads = hf_get_u64(c, KEYS("num_key_value_heads"), m->num_heads);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings"), 131072);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), false);
	/* LongcatFlashMLA: attention_bias on q_a_proj, kv_a_proj_with_mqa and o_proj */
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->attn_kind = MP_ATTN_MLA;
	m->q_lora_rank = hf_is_null(c, "q_lora_rank") ? 0 : hf_get_u64(c, KEYS("q_lora_rank"), 1536);
	m->kv_lora_rank = hf_get_u64(c, KEYS("kv_lora_rank"), 512);
	m->qk_nope_head_dim = hf_get_u64(c, KEYS("qk_nope_head_dim"), 128);
	m->qk_rope_head_dim = hf_get_u64(c, KEYS("qk_rope_head_dim"), 64);
	m->v_head_dim = hf_get_u64(c, KEYS("v_head_dim"), 128);
	m->head_dim = m->qk_nope_head_dim + m->qk_rope_head_dim;
	/* LongcatFlashConfig keeps head_dim (64) beside qk_rope_head_dim, and its rotary embedding takes head_dim: the
	 * two must agree, or the forward fails */
	if (c->st == MP_OK && hf_get_u64(c, KEYS("head_dim"), 64) != m->qk_rope_head_dim)
		hf_fail_key(c, "head_dim",
		            "head_dim must equal qk_rope_head_dim (LongCat-Flash's rotary embedding is head_dim wide; its "
		            "default is 64)");
	m->intermediate_size = hf_get_u64(c, KEYS("ffn_hidden_size", "intermediate_size"), 12288);
	m->num_experts = hf_get_u64(c, KEYS("n_routed_experts", "num_local_experts"), 512);
	m->zero_experts = hf_get_u64(c, KEYS("zero_expert_num"), 256);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("moe_topk", "num_experts_per_tok"), 12);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("expert_ffn_hidden_size", "moe_intermediate_size"), 2048);
	m->router_bias = hf_get_bool(c, KEYS("router_bias"), false);
	m->router_correction_buffer = true;
	m->moe_beside_dense = true;
	m->moe_layer_step = 2;
	m->ffn_kind = MP_FFN_GATED;
	m->norm_kind = MP_NORM_RMS;
	m->norms_per_layer = 2;
	m->final_norm = true;
	hd = m->head_dim;
	m->head_dim = m->qk_rope_head_dim;
	hf_decode_rope(c, m, 1.0);
	m->head_dim = hd;
}


/* ----- the types added with the enumeration of transformers 5.24 ----------------------------------------------- */

/* MiniCPM3: an MLA row (mla_types) whose MLP reads mlp_bias (MiniCPM3MLP) and whose v_head_dim, when absent or
 * null, is hidden_size // num_attention_heads (MiniCPM3Config.__post_init__; 2560 // 40 = 64 by default). */
void mpm_read_minicpm3(hf_ctx *c, mp_model *m)
{
	mpm_read_mla(c, m);
	m->mlp_bias = hf_get_bool(c, KEYS("mlp_bias"), false);
	if (c->st == MP_OK && m->num_heads && !hf_has(c, "v_head_dim"))
		m->v_head_dim = m->hidden_size / m->num_heads;
	hf_heads_divide_hidden(c, m, "num_attention_heads"); /* MiniCPM3Config.validate_architecture */
}

/*
 * SarvamMoEConfig (built as Glm4MoeForCausalLM, modeling_glm4_moe.py): vocab 262144, hidden 4096, FFN 8192 (dense
 * layers), 19 layers, 64 heads, kv 4, head_dim 64, 131072 positions, untied; attention_bias on q, k, v (o never);
 * use_qk_norm (True): per-head q_norm and k_norm; 128 routed experts of 1024, top-6, one shared,
 * first_k_dense_replace 1; the router's e_score_correction_bias a buffer; every head rotates.
 */
void mpm_read_sarvam_moe(hf_ctx *c, mp_model *m)
{
	static const trunk t = {262144, 4096, 19, 64, 4, 131072, false};
	uint64_t shared;

	decode_trunk(c, &t, m);
	if (!hf_has(c, "head_dim"))
		m->head_dim = 64;
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 8192);
	m->qkv_bias = hf_get_bool(c, KEYS("attention_bias", "use_qkv_bias"), false); /* attribute_map */
	m->qk_norm = hf_get_bool(c, KEYS("use_qk_norm"), true);
	/* SarvamMoeConfig's attribute_map: num_local_experts and sarvam-30b's num_experts, num_shared_experts */
	m->num_experts = hf_get_u64(c, KEYS("n_routed_experts", "num_local_experts", "num_experts"), 128);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 6);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), 1024);
	shared = hf_get_u64(c, KEYS("n_shared_experts", "num_shared_experts"), 1);
	m->num_shared_experts = shared;
	m->shared_expert_intermediate_size = hf_mul(c, shared, m->moe_intermediate_size, "moe_intermediate_size");
	m->first_dense_layers = hf_get_u64(c, KEYS("first_k_dense_replace"), 1);
	if (m->first_dense_layers > m->num_layers)
		m->first_dense_layers = m->num_layers;
	m->router_correction_buffer = true;
	hf_decode_rope(c, m, 1.0);
}

/*
 * MellumConfig (modeling_mellum.py): vocab 98304, hidden 2304, FFN 7168 (the "dense" layers of mlp_layer_types),
 * 28 layers, 32 heads, kv 4, head_dim 128, 131072 positions, untied; attention_bias on q, k, v and o; per-head q_norm
 * and k_norm; 64 experts (num_local_experts, or num_experts) of moe_intermediate_size 896, top-8, a router without
 * bias, on the "sparse" layers (all by default); sliding_window 1024 on the "sliding_attention" layers of
 * layer_types (none by default).
 */
void mpm_read_mellum(hf_ctx *c, mp_model *m)
{
	static const trunk t = {98304, 2304, 28, 32, 4, 131072, false};

	decode_trunk(c, &t, m);
	if (!hf_has(c, "head_dim"))
		m->head_dim = 128;
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 7168);
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->qk_norm = true;
	m->num_experts = hf_get_u64(c, KEYS("num_local_experts", "num_experts"), 64);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 8);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), 896);
	mlp_layer_types(c, m);
	m->sliding_window = hf_window(c, "sliding_window", 1024);
	m->sliding_window_layers = 0;
	if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types")))
		m->sliding_window = 0; /* MellumConfig: every layer full_attention unless layer_types says */
	hf_decode_layer_types(c, m);
	hf_decode_rope(c, m, 1.0);
}

/*
 * SolarOpenConfig (modeling_solar_open.py): vocab 196608, hidden 4096, 48 layers, 64 heads, kv 8, head_dim 128,
 * 131072 positions, untied; attention_bias on q, k and v (o never); every layer's MoE: 128 routed experts
 * (n_routed_experts, or num_local_experts) of 1280, top-8, n_shared_experts (1) as one MLP, the router's
 * e_score_correction_bias a buffer.
 */
void mpm_read_solar_open(hf_ctx *c, mp_model *m)
{
	static const trunk t = {196608, 4096, 48, 64, 8, 131072, false};
	uint64_t shared;

	decode_trunk(c, &t, m);
	if (!hf_has(c, "head_dim"))
		m->head_dim = 128;
	m->intermediate_size = 0;
	m->qkv_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->num_experts = hf_get_u64(c, KEYS("n_routed_experts", "num_local_experts"), 128);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 8);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), 1280);
	shared = hf_get_u64(c, KEYS("n_shared_experts"), 1);
	m->num_shared_experts = shared;
	m->shared_expert_intermediate_size = hf_mul(c, shared, m->moe_intermediate_size, "moe_intermediate_size");
	m->router_correction_buffer = true;
	hf_decode_rope(c, m, 1.0);
}

/*
 * FlexOlmoConfig (modeling_flex_olmo.py): vocab 100352, hidden 4096, 32 layers, 32 heads, kv = heads, 4096
 * positions, untied; attention_bias on q, k, v and o; q_norm and k_norm over the whole projections (OLMo-2's);
 * post_attention_layernorm and post_feedforward_layernorm only; 7 experts (num_experts, or num_local_experts) of
 * intermediate_size 11008, top-5, a router without bias.
 */
void mpm_read_flex_olmo(hf_ctx *c, mp_model *m)
{
	static const trunk t = {100352, 4096, 32, 32, 0, 4096, false};

	decode_trunk(c, &t, m);
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->qk_norm_full = true;
	m->num_experts = hf_get_u64(c, KEYS("num_experts", "num_local_experts"), 7);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 5);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 11008);
	m->intermediate_size = 0;
	hf_decode_rope(c, m, 1.0);
}

/*
 * GraniteMoeSharedConfig (modeling_granitemoeshared.py): GraniteMoE's (mpm_read_granitemoe) with a shared_mlp of
 * shared_intermediate_size (0: none) in every layer, input_linear holding gate and up. GraniteMoeSWAConfig
 * (modeling_granitemoe_swa.py): the same, with a sink logit per head in every layer and sliding_window 128 on three
 * layers of four (layer i full when i % 4 == 0, or layer_types).
 */
void mpm_read_granitemoeshared(hf_ctx *c, mp_model *m)
{
	mpm_read_granitemoe(c, m);
	m->shared_expert_intermediate_size = hf_get_u64(c, KEYS("shared_intermediate_size"), 0);
	m->num_shared_experts = m->shared_expert_intermediate_size > 0;
}

void mpm_read_granitemoe_swa(hf_ctx *c, mp_model *m)
{
	mpm_read_granitemoeshared(c, m);
	m->attention_sinks = true;
	m->sliding_window = hf_window(c, "sliding_window", 128);
	if (m->sliding_window)
		m->sliding_window_layers = m->num_layers - (m->num_layers + 3) / 4;
	hf_decode_layer_types(c, m);
}

/*
 * Cohere2MoeConfig (modeling_cohere2_moe.py): vocab 256000, hidden 8192, 40 layers, 64 heads, kv = heads, head_dim
 * 128, 8192 positions, tied; Cohere's parallel block behind one weight-only norm (input_layernorm, model.norm);
 * attention_bias on q, k, v and o; the "sparse" layers of mlp_layer_types (all by default) hold 8 experts
 * (num_experts) of intermediate_size 22528, top-2, a router without bias, and num_shared_experts (0) shared experts
 * as one MLP of intermediate_size x num_shared_experts; the "dense" layers (mlp_layer_types, else the first
 * first_k_dense_replace, 0) an MLP of prefix_dense_intermediate_size, intermediate_size when null; sliding_window 4096
 * on three layers of four (layer i full when (i + 1) % sliding_window_pattern == 0, counted after the dense prefix,
 * whose layers follow prefix_dense_sliding_window_pattern, 1: full; or layer_types).
 */
void mpm_read_cohere2_moe(hf_ctx *c, mp_model *m)
{
	static const trunk t = {256000, 8192, 40, 64, 0, 8192, true};
	uint64_t shared, every, prefix_every, fkd;

	decode_trunk(c, &t, m);
	if (!hf_has(c, "head_dim"))
		m->head_dim = 128;
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->norms_per_layer = 1;
	m->parallel_block = true;
	m->num_experts = hf_get_u64(c, KEYS("num_experts", "num_local_experts"), 8);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 2);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 22528);
	shared = hf_get_u64(c, KEYS("num_shared_experts"), 0);
	m->num_shared_experts = shared;
	m->shared_expert_intermediate_size = hf_mul(c, shared, m->moe_intermediate_size, "intermediate_size");
	/* Cohere2MoeMLP(config, prefix_dense_intermediate_size): None takes intermediate_size */
	m->intermediate_size = hf_get_u64(c, KEYS("prefix_dense_intermediate_size"), m->moe_intermediate_size);
	fkd = hf_get_u64(c, KEYS("first_k_dense_replace"), 0);
	if (fkd > m->num_layers)
		fkd = m->num_layers;
	m->first_dense_layers = fkd; /* mlp_layer_types' default: the first first_k_dense_replace layers dense */
	mlp_layer_types(c, m);
	m->sliding_window = hf_window(c, "sliding_window", 4096);
	every = hf_get_u64(c, KEYS("sliding_window_pattern"), 4);
	prefix_every = hf_get_u64(c, KEYS("prefix_dense_sliding_window_pattern"), 1);
	if (c->st == MP_OK && (every == 0 || prefix_every == 0)) {
		hf_fail_key(c, every == 0 ? "sliding_window_pattern" : "prefix_dense_sliding_window_pattern",
		            "the sliding-window patterns must be at least 1 (layer_types' derivation divides by them)");
		return;
	}
	/* layer_types' default: the first_k_dense_replace prefix layers slide unless (i + 1) % prefix pattern == 0, the
	 * others unless (i + 1 - first_k_dense_replace) % sliding_window_pattern == 0 */
	if (m->sliding_window && every && prefix_every) {
		uint64_t n = 0;

		for (uint64_t i = 0; i < m->num_layers; i++)
			n += i < fkd ? (i + 1) % prefix_every != 0 : (i - fkd + 1) % every != 0;
		m->sliding_window_layers = n;
	}
	hf_decode_layer_types(c, m);
	hf_decode_rope(c, m, 1.0);
}

/* A key of a sub-config object (DBRX's attn_config, ffn_config), its errors named under it. */
static uint64_t sub_u64(hf_ctx *c, const char *obj, const char *key, uint64_t dflt)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(c->cfg, obj);
	char pointer[96];
	hf_ctx sub;
	uint64_t v;

	if (o && !cJSON_IsNull(o) && !cJSON_IsObject(o)) {
		char msg[80];

		snprintf(msg, sizeof(msg), "%s must be an object", obj);
		hf_fail_key(c, obj, msg);
		return dflt;
	}
	if (!cJSON_IsObject(o))
		return dflt;
	snprintf(pointer, sizeof(pointer), "%s/%s", c->pointer, obj);
	sub = (hf_ctx){o, pointer, c->err, c->st, NULL, NULL, c->decode_type};
	v = hf_get_u64(&sub, (const char *const[]){key, NULL}, dflt);
	c->st = sub.st;
	return v;
}

/*
 * DbrxConfig (modeling_dbrx.py): d_model 2048, n_heads 16, n_layers 24, max_seq_len 2048, vocab 32000, untied (tied
 * is refused, as DbrxConfig refuses it); attn_config.kv_n_heads (1) KV heads in one fused Wqkv, out_proj, no biases;
 * LayerNorms without bias (norm_attn_norm.norm_1 and norm_2, norm_f); every layer's MoE: ffn_config.moe_num_experts
 * (4) experts of ffn_hidden_size (3584), top moe_top_k (1), a router without bias, the experts stacked along one
 * dimension (w1 and v1 [E x f, h], w2 [E x f, h] stored in x out).
 */
void mpm_read_dbrx(hf_ctx *c, mp_model *m)
{
	uint64_t h, f, E, L;

	m->hidden_size = h = hf_get_u64(c, KEYS("d_model", "hidden_size"), 2048);
	m->num_heads = hf_get_u64(c, KEYS("n_heads", "num_attention_heads"), 16);
	m->num_layers = L = hf_get_u64(c, KEYS("n_layers", "num_hidden_layers"), 24);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_seq_len", "max_position_embeddings"), 2048);
	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 32000);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), false);
	if (m->tie_word_embeddings)
		hf_fail_key(c, "tie_word_embeddings", "tie_word_embeddings must be false: DbrxConfig refuses tied embeddings");
	m->num_kv_heads = sub_u64(c, "attn_config", "kv_n_heads", 1);
	hf_derive_head_dim(c, m, "n_heads");
	m->num_experts = E = sub_u64(c, "ffn_config", "moe_num_experts", 4);
	m->num_experts_per_tok = sub_u64(c, "ffn_config", "moe_top_k", 1);
	m->moe_intermediate_size = f = sub_u64(c, "ffn_config", "ffn_hidden_size", 3584);
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_GATED;
	m->norm_kind = MP_NORM_LAYER; /* nn.LayerNorm(bias=False): the names hold no bias leaf */
	m->norms_per_layer = 2;
	m->final_norm = true;
	hf_decode_rope(c, m, 1.0);
	if (c->st != MP_OK || E == 0)
		return;
	{
		mp_tensor_spec s = {.root = MP_ROOT_DECODER, .path = "blocks.{i}.ffn.experts.mlp", .kind = MP_TK_EXPERT,
		                    .split = MP_SPLIT_ROWS, .step = MP_STEP_EXPERT_GATE_UP, .view = MP_VIEW_EXPERTS_FLAT,
		                    .rows = f, .cols = h, .copies = E, .count = L, .flags = MP_TF_ROUTED | MP_TF_EP};

		s.leaf = "w1";
		mp_inventory_add(&m->inv, &s);
		s.leaf = "v1";
		mp_inventory_add(&m->inv, &s);
		s.leaf = "w2";
		s.view = MP_VIEW_EXPERTS_FLAT_T;
		s.rows = h;
		s.cols = f;
		s.split = MP_SPLIT_COLS;
		s.step = MP_STEP_EXPERT_DOWN;
		mp_inventory_add(&m->inv, &s);
	}
}

/*
 * Glm4vMoeTextConfig (the decoder of GLM-4.5V; modeling_glm4v_moe.py): GLM-4.5's (mpm_read_glm4_moe) with its own
 * defaults: vocab 151424, hidden 4096, FFN 10944 (the dense layers), 46 layers, 96 heads, kv 8, head_dim hidden //
 * heads, 65536 positions, untied; attention_bias (True) on q, k and v; half of each head rotates; 128 routed experts
 * of 1408, top-8, one shared, first_k_dense_replace 1; the correction bias a buffer; no q/k norms.
 */
void mpm_read_glm4v_moe_text(hf_ctx *c, mp_model *m)
{
	static const trunk t = {151424, 4096, 46, 96, 8, 65536, false};
	uint64_t shared;

	decode_trunk(c, &t, m);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 10944);
	m->qkv_bias = hf_get_bool(c, KEYS("attention_bias"), true);
	m->num_experts = hf_get_u64(c, KEYS("n_routed_experts", "num_local_experts"), 128); /* attribute_map */
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 8);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), 1408);
	shared = hf_get_u64(c, KEYS("n_shared_experts"), 1);
	m->num_shared_experts = shared;
	m->shared_expert_intermediate_size = hf_mul(c, shared, m->moe_intermediate_size, "moe_intermediate_size");
	m->first_dense_layers = hf_get_u64(c, KEYS("first_k_dense_replace"), 1);
	if (m->first_dense_layers > m->num_layers)
		m->first_dense_layers = m->num_layers;
	m->router_correction_buffer = true;
	hf_decode_rope(c, m, 0.5);
}

/*
 * JetMoeConfig (modeling_jetmoe.py): vocab 32000, hidden 2048, 12 layers, num_key_value_heads 16 of kv_channels 128,
 * 4096 positions, tied; a mixture of attention heads: kv_proj (h -> 2 x kv x d) is shared, the queries and outputs
 * come from num_local_experts (8) attention experts (input_linear [E, kv x d, h], output_linear [E, h, kv x d], a
 * router, a bias of h), top num_experts_per_tok (2), so num_attention_heads is kv x top-k; the MLP: the same number
 * of experts of intermediate_size (5632, gated: input_linear [E, 2f, h], output_linear [E, h, f]), its router and a
 * bias. The KV cache holds the kv heads once.
 */
void mpm_read_jetmoe(hf_ctx *c, mp_model *m)
{
	static const trunk t = {32000, 2048, 12, 0, 16, 4096, true};
	uint64_t kvd, E, L;

	decode_trunk(c, &t, m);
	m->head_dim = hf_get_u64(c, KEYS("kv_channels", "head_dim"), 128);
	m->num_experts = E = hf_get_u64(c, KEYS("num_local_experts"), 8);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 2);
	m->num_heads = hf_mul(c, m->num_kv_heads, m->num_experts_per_tok, "num_experts_per_tok");
	m->moe_intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 5632);
	m->intermediate_size = 0;
	if (c->st != MP_OK || E == 0)
		return;
	if (m->num_experts_per_tok > E) {
		hf_fail_key(c, "num_experts_per_tok",
		            "num_experts_per_tok must be at most num_local_experts (JetMoeConfig.validate_architecture)");
		return;
	}
	L = m->num_layers;
	kvd = hf_mul(c, m->num_kv_heads, m->head_dim, "kv_channels");
	{
		mp_tensor_spec kv = {.root = MP_ROOT_DECODER, .path = MP_NAMES_LAYERS ".self_attention", .leaf = "kv_proj.weight",
		                     .kind = MP_TK_ATTENTION, .split = MP_SPLIT_KV_ROWS, .step = MP_STEP_QKV,
		                     .view = MP_VIEW_LINEAR, .rows = 2 * kvd, .cols = m->hidden_size, .count = L,
		                     .kv_heads = m->num_kv_heads};
		mp_tensor_spec ex = {.root = MP_ROOT_DECODER, .path = MP_NAMES_LAYERS ".self_attention.experts",
		                     .kind = MP_TK_ATTENTION, .split = MP_SPLIT_ROWS, .step = MP_STEP_EXTRA,
		                     .view = MP_VIEW_EXPERTS, .rows = kvd, .cols = m->hidden_size, .copies = E, .count = L,
		                     .flags = MP_TF_ROUTED | MP_TF_EP};

		mp_inventory_add(&m->inv, &kv);
		ex.leaf = "input_linear.weight";
		mp_inventory_add(&m->inv, &ex);
		ex.leaf = "output_linear.weight";
		ex.rows = m->hidden_size;
		ex.cols = kvd;
		ex.split = MP_SPLIT_COLS;
		mp_inventory_add(&m->inv, &ex);
	}
	hf_tensor(m, MP_ROOT_DECODER, MP_NAMES_LAYERS ".self_attention.experts", "router.layer.weight", MP_TK_ATTENTION,
	          MP_SPLIT_NONE, MP_STEP_EXTRA, false, E, m->hidden_size, L);
	hf_tensor(m, MP_ROOT_DECODER, MP_NAMES_LAYERS ".self_attention.experts", "bias", MP_TK_ATTENTION, MP_SPLIT_NONE,
	          MP_STEP_NONE, true, 1, m->hidden_size, L);
	hf_tensor(m, MP_ROOT_DECODER, MP_NAMES_LAYERS ".mlp", "bias", MP_TK_EXPERT, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
	          m->hidden_size, L);
	hf_decode_rope(c, m, 1.0);
}

/*
 * ExaoneMoeConfig (K-EXAONE; modeling_exaone_moe.py): vocab 102400, hidden 4096, FFN 16384 (the "dense" layers of
 * mlp_layer_types, the first first_k_dense_replace (1) by default), 32 layers, 32 heads, kv 32, head_dim hidden //
 * heads, 2048 positions, untied; no biases; per-head q_norm and k_norm; the "sparse" layers: 64 experts
 * (num_experts) of moe_intermediate_size 1024, top-8, num_shared_experts (1) as one MLP, the router's
 * e_score_correction_bias a buffer; sliding_window 4096 on three layers of four (layer i full when (i + 1) %
 * sliding_window_pattern == 0, or layer_types).
 */
void mpm_read_exaone_moe(hf_ctx *c, mp_model *m)
{
	static const trunk t = {102400, 4096, 32, 32, 0, 2048, false};
	uint64_t shared, every;

	decode_trunk(c, &t, m);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 16384);
	m->qk_norm = true;
	m->num_experts = hf_get_u64(c, KEYS("num_experts", "num_local_experts"), 64);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 8);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), 1024);
	shared = hf_get_u64(c, KEYS("num_shared_experts"), 1);
	m->num_shared_experts = shared;
	m->shared_expert_intermediate_size = hf_mul(c, shared, m->moe_intermediate_size, "moe_intermediate_size");
	m->first_dense_layers = hf_get_u64(c, KEYS("first_k_dense_replace"), 1);
	if (m->first_dense_layers > m->num_layers)
		m->first_dense_layers = m->num_layers;
	mlp_layer_types(c, m);
	m->router_correction_buffer = true;
	m->sliding_window = hf_window(c, "sliding_window", 4096);
	if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types"))) {
		/* ExaoneMoeConfig.__post_init__: layer i slides when (i + 1) % sliding_window_pattern != 0, the pattern set
		 * to 0 by a null window (a division by zero there: transformers cannot build it) */
		every = hf_get_u64(c, KEYS("sliding_window_pattern"), 4);
		if (c->st == MP_OK && (m->sliding_window == 0 || every == 0)) {
			hf_fail_key(c, m->sliding_window == 0 ? "sliding_window" : "sliding_window_pattern",
			            "without layer_types, ExaoneMoeConfig derives the sliding layers by dividing by "
			            "sliding_window_pattern, which a null sliding_window sets to 0: give layer_types, or a window "
			            "and a pattern of at least 1");
			return;
		}
		m->sliding_window_layers = m->num_layers - m->num_layers / every;
		if (m->sliding_window_layers == 0)
			m->sliding_window = 0; /* a pattern of 1: every layer full_attention */
	}
	hf_decode_layer_types(c, m);
	hf_decode_rope(c, m, 1.0);
}

/*
 * HYV3Config (Hunyuan 3; modeling_hy_v3.py): vocab 120832, hidden 4096, FFN 13312 (the "dense" layers of
 * mlp_layer_types: the first by default), 80 layers, 64 heads, kv 8, head_dim 128, 131072 positions, untied;
 * attention_bias on q, k, v and o, mlp_bias on the MLPs (dense and shared); per-head q_norm and k_norm; the "sparse"
 * layers: 192 experts (num_experts, or num_local_experts) of moe_intermediate_size 1536, top-8, num_shared_experts
 * (1) as one MLP, the block's e_score_correction_bias a buffer.
 */
void mpm_read_hy_v3(hf_ctx *c, mp_model *m)
{
	static const trunk t = {120832, 4096, 80, 64, 8, 131072, false};
	uint64_t shared;

	decode_trunk(c, &t, m);
	if (!hf_has(c, "head_dim"))
		m->head_dim = 128;
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 13312);
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->mlp_bias = hf_get_bool(c, KEYS("mlp_bias"), false);
	m->qk_norm = true;
	m->num_experts = hf_get_u64(c, KEYS("num_experts", "num_local_experts"), 192);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 8);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), 1536);
	shared = hf_get_u64(c, KEYS("num_shared_experts"), 1);
	/* HYV3MoE builds shared_experts as HYV3MLP(intermediate_size = moe_intermediate_size x num_shared_experts), and
	 * HYV3MLP takes `intermediate_size or config.intermediate_size`: with no shared expert the block is the dense
	 * MLP's width, never absent. The routed experts carry no bias whatever mlp_bias says (HYV3Experts). */
	m->shared_expert_intermediate_size = hf_mul(c, shared, m->moe_intermediate_size, "moe_intermediate_size");
	if (m->shared_expert_intermediate_size == 0)
		m->shared_expert_intermediate_size = m->intermediate_size;
	m->num_shared_experts = shared ? shared : 1;
	m->routed_bias = MP_BIAS_OFF;
	m->first_dense_layers = m->num_layers ? 1 : 0;
	mlp_layer_types(c, m);
	m->router_correction_buffer = true;
	hf_decode_rope(c, m, 1.0);
}

/*
 * MiMoV2FlashConfig (XiaomiMiMo/MiMo-V2-Flash; configuration_mimo_v2_flash.py, modeling_mimo_v2_flash.py): vocab
 * 152576, hidden 4096, FFN 16384 (the "dense" layers of mlp_layer_types: the first by default), 48 layers, 64 heads,
 * q and k of head_dim 192, v of v_head_dim 128, 131072 positions, untied; attention_bias on q, k and v (o never);
 * layer_types full at layer 0 and every sixth (i + 1) % 6 == 0, the others sliding over sliding_window 129
 * (sliding_window_size, when given, is the window less one: sliding_window = sliding_window_size + 1). A sliding
 * layer has twice num_key_value_heads (4) KV heads and a learned sink logit per head (MiMoV2FlashAttention: is_swa);
 * a full layer num_key_value_heads and no sinks. The "sparse" layers: n_routed_experts (num_local_experts) 256 of
 * moe_intermediate_size 2048, top-8, no shared expert, the router's e_score_correction_bias a buffer. RoPE rotates
 * partial_rotary_factor (0.334) of each head, one rotary module per kind of layer present. Worked example (the
 * defaults): 308,778,768,832 parameters (tests/ref/hf/groundtruth.json mimo_v2_flash-default).
 */
void mpm_read_mimo_v2_flash(hf_ctx *c, mp_model *m)
{
	static const trunk t = {152576, 4096, 48, 64, 4, 131072, false};
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types");
	uint64_t sliding = 0, kinds;

	decode_trunk(c, &t, m);
	if (!hf_has(c, "head_dim"))
		m->head_dim = 192;
	m->v_head_dim = hf_get_u64(c, KEYS("v_head_dim"), 128);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 16384);
	m->qkv_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->num_experts = hf_get_u64(c, KEYS("n_routed_experts", "num_local_experts"), 256);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 8);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), 2048);
	m->router_correction_buffer = true;
	if (hf_has(c, "sliding_window_size"))
		m->sliding_window = hf_get_u64(c, KEYS("sliding_window_size"), 128) + 1;
	else
		m->sliding_window = hf_window(c, "sliding_window", 129);
	if (c->st != MP_OK)
		return;
	if (m->num_layers == 0 || m->num_layers > MP_MAX_LAYERS) {
		hf_fail_key(c, "num_hidden_layers", "num_hidden_layers must be between 1 and 1024");
		return;
	}
	if (m->v_head_dim == 0) {
		hf_fail_key(c, "v_head_dim", "v_head_dim must be at least 1");
		return;
	}
	m->first_dense_layers = 1;
	mlp_layer_types(c, m);
	m->layer_pattern = true;
	m->attn_per_layer = true;
	if (lt && !cJSON_IsNull(lt)) {
		const cJSON *v;
		uint64_t i = 0;

		hf_decode_layer_types(c, m);
		if (c->st != MP_OK)
			return;
		cJSON_ArrayForEach(v, lt)
		{
			bool s = v->valuestring[0] == 's';

			m->layer_flags[i++] = MP_LAYER_ATTENTION | MP_LAYER_FFN | (s ? MP_LAYER_WINDOW | MP_LAYER_GLOBAL : 0);
			sliding += s;
		}
	} else {
		for (uint64_t i = 0; i < m->num_layers; i++) {
			bool s = !(i == 0 || (i + 1) % 6 == 0);

			m->layer_flags[i] = MP_LAYER_ATTENTION | MP_LAYER_FFN | (s ? MP_LAYER_WINDOW | MP_LAYER_GLOBAL : 0);
			sliding += s;
		}
		if (sliding && m->sliding_window == 0) {
			hf_fail_key(c, "sliding_window",
			            "the layers layer_types makes slide (all but layer 0 and every sixth) need a window: "
			            "transformers 5.24 cannot build their cache with sliding_window null");
			return;
		}
		m->sliding_window_layers = sliding;
	}
	if (sliding == 0)
		m->sliding_window = 0;
	/* the sliding layers' widths: the second kind of attention layer (MP_LAYER_GLOBAL), twice the KV heads */
	m->global_head_dim = m->head_dim;
	m->global_kv_heads = hf_mul(c, 2, m->num_kv_heads, "num_key_value_heads");
	/* heads not a multiple of num_key_value_heads is mp_model_validate's 422 on that key; a multiple of it but not of
	 * twice it fails in the sliding layers (repeat_kv by heads // (2 x kv)): named on the heads */
	if (sliding && m->num_kv_heads && m->num_heads % m->num_kv_heads == 0 && m->global_kv_heads &&
	    (m->global_kv_heads > m->num_heads || m->num_heads % m->global_kv_heads)) {
		hf_fail_key(c, "num_attention_heads",
		            "num_attention_heads must be a multiple of twice num_key_value_heads: the sliding-window layers "
		            "have 2 x num_key_value_heads KV heads (MiMoV2FlashAttention)");
		return;
	}
	if (sliding)
		hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.self_attn", "sinks", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_NONE,
		          true, 1, m->num_heads, sliding);
	hf_decode_rope(c, m, 0.334); /* compute_default_rope_parameters: partial_rotary_factor 0.334 when unstated */
	kinds = (sliding > 0) + (sliding < m->num_layers);
	m->rotary_buffer_sets = (uint32_t)kinds;
}

/* MiniMax-M3's names (modeling_minimax_m3_vl.py): the dense MLP's and the shared expert's gate and up in one
 * gate_up_proj (MiniMaxM3VLDenseMLP); the routed experts fused, the router's correction bias under gate. */
const mp_names mpm_names_minimax_m3 = {MP_NAMES_LLAMA_FIELDS, .gate_up = {"gate_up_proj.weight", NULL},
                                       .sh_gate_up = {"shared_experts.gate_up_proj.weight", NULL}};

/* An integer key of MiniMax-M3's legacy sparse_attention_config (the published checkpoint's spelling), the flat key
 * winning when the legacy one is absent. */
static uint64_t m3_index_key(hf_ctx *c, const cJSON *sparse, const char *legacy, const char *flat, uint64_t dflt)
{
	uint64_t v = hf_get_u64(c, (const char *const[]){flat, NULL}, dflt);

	if (sparse && cJSON_GetObjectItemCaseSensitive(sparse, legacy)) {
		char pointer[MP_POINTER_MAX];
		hf_ctx sub;

		snprintf(pointer, sizeof(pointer), "%s/sparse_attention_config", c->pointer);
		sub = (hf_ctx){sparse, pointer, c->err, c->st, NULL, NULL, c->decode_type};
		v = hf_get_u64(&sub, (const char *const[]){legacy, NULL}, v);
		c->st = sub.st;
	}
	return v;
}

/* A per-layer list of flags or kinds (sparse_attention_freq, moe_layer_freq: numbers or booleans, true = the second
 * kind) under `pointer_key`: *count gets the layers flagged, bit i of mask layer i. False on a bad list (the error set). */
static bool m3_flag_list(hf_ctx *c, const cJSON *l, const char *key, uint64_t layers, uint8_t *mask, uint64_t *count)
{
	const cJSON *v;
	uint64_t i = 0;

	*count = 0;
	if (!cJSON_IsArray(l) || (uint64_t)cJSON_GetArraySize(l) != layers) {
		hf_fail_key(c, key, "must list one flag (0/1 or false/true) for each of the num_hidden_layers layers");
		return false;
	}
	cJSON_ArrayForEach(v, l)
	{
		bool on;

		if (cJSON_IsBool(v))
			on = cJSON_IsTrue(v);
		else if (cJSON_IsNumber(v))
			on = v->valuedouble != 0;
		else {
			hf_fail_key(c, key, "entries must be 0/1 or false/true");
			return false;
		}
		if (on) {
			mask[i / 8] |= (uint8_t)(1u << (i % 8));
			(*count)++;
		}
		i++;
	}
	return true;
}

/*
 * MiniMaxM3VLTextConfig (MiniMaxAI/MiniMax-M3's decoder; configuration_minimax_m3_vl.py, modeling_minimax_m3_vl.py):
 * vocab 200064, hidden 6144, 60 layers, 64 heads, kv 4 of head_dim 128, 524288 positions, untied; no attention bias;
 * per-head q_norm and k_norm; the layers of mlp_layer_types (all "sparse" by default; the legacy moe_layer_freq: 1 =
 * sparse) hold num_local_experts (num_experts) 128 routed experts of intermediate_size 3072, top-4, a shared expert
 * of shared_intermediate_size 3072 (gate and up fused) and the router's e_score_correction_bias (a buffer); the
 * "dense" ones a dense MLP of dense_intermediate_size 12288, gate and up fused. layer_types (all "full_attention" by
 * default; the legacy sparse_attention_config.sparse_attention_freq: 1 = sparse): a "minimax_m3_sparse" layer adds a
 * lightning indexer (MiniMaxM3VLIndexer: q_proj hidden -> index_n_heads x index_head_dim, k_proj hidden ->
 * index_head_dim, q_norm and k_norm of index_head_dim) and caches its key, index_head_dim per token
 * (MiniMaxM3VLSparseCacheLayer.idx_keys). Worked example (the defaults): 447,186,441,216 parameters.
 */
void mpm_read_minimax_m3_vl_text(hf_ctx *c, mp_model *m)
{
	static const trunk t = {200064, 6144, 60, 64, 4, 524288, false};
	const cJSON *sparse = cJSON_GetObjectItemCaseSensitive(c->cfg, "sparse_attention_config");
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types");
	const cJSON *mlt = cJSON_GetObjectItemCaseSensitive(c->cfg, "mlp_layer_types");
	uint8_t sparse_mask[MP_MAX_LAYERS / 8] = {0};
	uint64_t sparse_layers = 0, idx_heads, idx_dim;

	if (sparse && !cJSON_IsNull(sparse) && !cJSON_IsObject(sparse)) {
		hf_fail_key(c, "sparse_attention_config", "sparse_attention_config must be an object or null");
		return;
	}
	if (cJSON_IsNull(sparse))
		sparse = NULL;
	decode_trunk(c, &t, m);
	if (!hf_has(c, "head_dim"))
		m->head_dim = 128;
	m->qk_norm = true;
	m->intermediate_size = hf_get_u64(c, KEYS("dense_intermediate_size"), 12288);
	m->num_experts = hf_get_u64(c, KEYS("num_local_experts", "num_experts"), 128);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 4);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 3072);
	m->shared_expert_intermediate_size = hf_get_u64(c, KEYS("shared_intermediate_size"), 3072);
	m->num_shared_experts = m->shared_expert_intermediate_size > 0;
	m->router_correction_buffer = true;
	idx_heads = m3_index_key(c, sparse, "sparse_num_index_heads", "index_n_heads", 4);
	idx_dim = m3_index_key(c, sparse, "sparse_index_dim", "index_head_dim", 128);
	if (c->st != MP_OK)
		return;
	if (m->num_layers == 0 || m->num_layers > MP_MAX_LAYERS) {
		hf_fail_key(c, "num_hidden_layers", "num_hidden_layers must be between 1 and 1024");
		return;
	}
	/* the MLP of each layer: mlp_layer_types, else moe_layer_freq, else every layer sparse */
	m->first_dense_layers = 0;
	if ((mlt == NULL || cJSON_IsNull(mlt)) && hf_has(c, "moe_layer_freq")) {
		uint8_t moe_mask[MP_MAX_LAYERS / 8] = {0};
		uint64_t n;

		if (!m3_flag_list(c, cJSON_GetObjectItemCaseSensitive(c->cfg, "moe_layer_freq"), "moe_layer_freq",
		                  m->num_layers, moe_mask, &n))
			return;
		for (uint64_t i = 0; i < m->num_layers; i++)
			if (!(moe_mask[i / 8] & (1u << (i % 8))))
				dense_layer(m, i);
	} else {
		mlp_layer_types(c, m);
	}
	/* the attention of each layer: layer_types, else sparse_attention_config's sparse_attention_freq, else full */
	if (lt && !cJSON_IsNull(lt)) {
		const cJSON *v;
		uint64_t i = 0;

		if (!cJSON_IsArray(lt) || (uint64_t)cJSON_GetArraySize(lt) != m->num_layers) {
			hf_fail_key(c, "layer_types",
			            "layer_types must list \"full_attention\" or \"minimax_m3_sparse\" for each of the "
			            "num_hidden_layers layers");
			return;
		}
		cJSON_ArrayForEach(v, lt)
		{
			if (!cJSON_IsString(v) || (strcmp(v->valuestring, "full_attention") != 0 &&
			                           strcmp(v->valuestring, "minimax_m3_sparse") != 0)) {
				hf_fail_key(c, "layer_types",
				            "layer_types entries must be \"full_attention\" or \"minimax_m3_sparse\" (MiniMax-M3 "
				            "has no sliding window)");
				return;
			}
			if (v->valuestring[0] == 'm') {
				sparse_mask[i / 8] |= (uint8_t)(1u << (i % 8));
				sparse_layers++;
			}
			i++;
		}
	} else if (sparse && cJSON_GetObjectItemCaseSensitive(sparse, "sparse_attention_freq")) {
		char pointer[MP_POINTER_MAX];
		hf_ctx sub;

		snprintf(pointer, sizeof(pointer), "%s/sparse_attention_config", c->pointer);
		sub = (hf_ctx){sparse, pointer, c->err, c->st, NULL, NULL, c->decode_type};
		if (!m3_flag_list(&sub, cJSON_GetObjectItemCaseSensitive(sparse, "sparse_attention_freq"),
		                  "sparse_attention_freq", m->num_layers, sparse_mask, &sparse_layers)) {
			c->st = sub.st;
			return;
		}
	}
	if (c->st != MP_OK)
		return;
	if (sparse_layers) {
		const char *a = "layers.{i}.self_attn.indexer";

		if (idx_heads == 0 || idx_dim == 0) {
			hf_fail_key(c, idx_heads == 0 ? "index_n_heads" : "index_head_dim",
			            "the minimax_m3_sparse layers' indexer needs index_n_heads and index_head_dim of at least 1");
			return;
		}
		/* MiniMaxM3VLIndexer.build_block_mask repeats each indexer head's selection num_attention_heads //
		 * index_n_heads times over the query heads: another count fails the attention (sdpa, eager) */
		if (m->num_heads % idx_heads != 0) {
			hf_fail_key(c, "num_attention_heads",
			            "num_attention_heads must be a multiple of index_n_heads when layers are minimax_m3_sparse: "
			            "the indexer's block mask is repeated heads // index_n_heads times over the query heads");
			return;
		}
		m->indexer_heads = idx_heads;
		m->indexer_head_dim = idx_dim;
		m->indexer_layers = sparse_layers;
		hf_tensor(m, MP_ROOT_DECODER, a, "q_proj.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_EXTRA, false,
		          hf_mul(c, idx_heads, idx_dim, "index_head_dim"), m->hidden_size, sparse_layers);
		hf_tensor(m, MP_ROOT_DECODER, a, "k_proj.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_EXTRA, false,
		          idx_dim, m->hidden_size, sparse_layers);
		hf_tensor(m, MP_ROOT_DECODER, a, "q_norm.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
		          idx_dim, sparse_layers);
		hf_tensor(m, MP_ROOT_DECODER, a, "k_norm.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
		          idx_dim, sparse_layers);
	}
	hf_decode_rope(c, m, 1.0);
}


/*
 * AXK2Config (modeling_axk2.py of transformers 5.24): DeepSeek-V3.2's MLA and indexer (the "axk2" MLA row) with
 * q_gate_proj (2 x q_lora_rank -> heads x (qk_nope + qk_rope + v): the query and an output gate from the query LoRA,
 * in place of q_b_proj; q_lora_rank must be positive, AXK2Config.validate_architecture), and gated RMSNorms
 * (AXK2GatedRMSNorm: an RMSNorm weight, then a gate MLP fc1 hidden -> gated_norm_rank (16), fc2 back) as
 * input_layernorm in every layer and as post_attention_layernorm in the "sparse" layers (the "dense" ones a plain
 * RMSNorm). mlp_layer_types, else first_k_dense_replace (1) and moe_layer_freq (1): layer i sparse when i >=
 * first_k_dense_replace and i % moe_layer_freq == 0. The cache is MLA's latent (k_pass, k_rot) and the indexer's key
 * per token. Worked example (the defaults): 20,314,494,976 parameters.
 */
void mpm_read_axk2(hf_ctx *c, mp_model *m)
{
	const cJSON *mlt = cJSON_GetObjectItemCaseSensitive(c->cfg, "mlp_layer_types");
	uint64_t rank, freq, moe = 0, L, q;

	if (hf_is_null(c, "q_lora_rank") || (hf_has(c, "q_lora_rank") && hf_get_u64(c, KEYS("q_lora_rank"), 1) == 0)) {
		hf_fail_key(c, "q_lora_rank",
		            "q_lora_rank must be positive: A.X K2's indexer and output gate read the query LoRA bottleneck "
		            "(AXK2Config refuses another)");
		return;
	}
	mpm_read_mla(c, m);
	rank = hf_get_u64(c, KEYS("gated_norm_rank"), 16);
	freq = hf_get_u64(c, KEYS("moe_layer_freq"), 1);
	if (c->st != MP_OK)
		return;
	if (m->num_layers == 0 || m->num_layers > MP_MAX_LAYERS) {
		hf_fail_key(c, "num_hidden_layers", "num_hidden_layers must be between 1 and 1024");
		return;
	}
	if (freq == 0) {
		hf_fail_key(c, "moe_layer_freq", "moe_layer_freq must be at least 1");
		return;
	}
	if ((mlt == NULL || cJSON_IsNull(mlt)) && freq > 1)
		for (uint64_t i = 0; i < m->num_layers; i++)
			if (i % freq != 0)
				dense_layer(m, i);
	L = m->num_layers;
	for (uint64_t i = 0; i < L; i++)
		moe += mp_model_is_moe_layer(m, i);
	q = hf_mul(c, m->num_heads, m->qk_nope_head_dim + m->qk_rope_head_dim + m->v_head_dim, "num_attention_heads");
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.self_attn", "q_gate_proj.weight", MP_TK_ATTENTION, MP_SPLIT_ROWS,
	          MP_STEP_Q_B, false, q, hf_mul(c, 2, m->q_lora_rank, "q_lora_rank"), L);
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.input_layernorm.mlp", "fc1.weight", MP_TK_NORM, MP_SPLIT_NONE,
	          MP_STEP_EXTRA, false, rank, m->hidden_size, L);
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.input_layernorm.mlp", "fc2.weight", MP_TK_NORM, MP_SPLIT_NONE,
	          MP_STEP_EXTRA, false, m->hidden_size, rank, L);
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.post_attention_layernorm", "norm.weight", MP_TK_NORM, MP_SPLIT_NONE,
	          MP_STEP_NONE, true, 1, m->hidden_size, moe);
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.post_attention_layernorm.mlp", "fc1.weight", MP_TK_NORM, MP_SPLIT_NONE,
	          MP_STEP_EXTRA, false, rank, m->hidden_size, moe);
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.post_attention_layernorm.mlp", "fc2.weight", MP_TK_NORM, MP_SPLIT_NONE,
	          MP_STEP_EXTRA, false, m->hidden_size, rank, moe);
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}", "post_attention_layernorm.weight", MP_TK_NORM, MP_SPLIT_NONE,
	          MP_STEP_NONE, true, 1, m->hidden_size, L - moe);
	m->norms_per_layer = 1;
}

/*
 * HYV4Config (Hunyuan V4; configuration_hy_v4.py, modeling_hy_v4.py of transformers 5.24): the "hy_v4" MLA row
 * (num_key_value_heads is always num_attention_heads; layer_types "indexed_attention"; mlp_layer_types' default the
 * first layer dense) with, per layer, HYV4Attention's output gate_proj (hidden -> heads x v_head_dim) and a sink logit
 * per head (fp32), and two manifold hyper-connections (attn_hc, ffn_hc: HYV4HyperConnection's fn [2 x hc_mult,
 * hc_mult x hidden], base [2 x hc_mult], scale [2], fp32), and the model's hc_head (HYV4HyperHead: hc_fn [hc_mult,
 * hc_mult x hidden], hc_base [hc_mult], hc_scale [1]). The indexer runs on the "full" layers of indexer_types, by
 * default layer 0 and every fourth from layer 1 ((i - 1) % 4 == 0), the "shared" ones reuse the previous selection
 * (no weights, no cached keys). The cache is MLA's latent (k_pass, k_rot) and the indexer's key. Worked example
 * (the defaults): 58,278,193,133 parameters.
 */
void mpm_read_hy_v4(hf_ctx *c, mp_model *m)
{
	uint64_t L, N, h, full = 0, gate;

	mpm_read_mla(c, m);
	m->num_kv_heads = m->num_heads; /* HYV4Config.__post_init__ */
	if (strcmp(m->model_type, "hy_v4_vl_text") == 0 && c->st == MP_OK) {
		/* HYV4VLTextConfig.validate_architecture: mrope_section (default [12, 10, 10]) has three entries summing to
		 * qk_rope_head_dim // 2 */
		const cJSON *rp = cJSON_GetObjectItemCaseSensitive(c->cfg, "rope_parameters");
		const cJSON *ms = cJSON_IsObject(rp) ? cJSON_GetObjectItemCaseSensitive(rp, "mrope_section") : NULL, *v;
		uint64_t sum = 0, n = 0;

		if (ms == NULL || cJSON_IsNull(ms)) {
			sum = 32;
			n = 3;
		} else if (cJSON_IsArray(ms)) {
			cJSON_ArrayForEach(v, ms)
			{
				sum += cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 65536 ? (uint64_t)v->valuedouble
				                                                                          : 65536;
				n++;
			}
		}
		if (n != 3 || sum != m->qk_rope_head_dim / 2) {
			hf_fail_key(c, "rope_parameters",
			            "rope_parameters.mrope_section (default [12, 10, 10]) must have three entries summing to "
			            "qk_rope_head_dim // 2 (HYV4VLTextConfig refuses another)");
			return;
		}
	}
	N = hf_get_u64(c, KEYS("hc_mult"), 4);
	if (c->st != MP_OK)
		return;
	if (m->num_layers == 0 || m->num_layers > MP_MAX_LAYERS) {
		hf_fail_key(c, "num_hidden_layers", "num_hidden_layers must be between 1 and 1024");
		return;
	}
	if (N == 0) {
		hf_fail_key(c, "hc_mult", "hc_mult (the hyper-connections' residual streams) must be at least 1");
		return;
	}
	L = m->num_layers;
	h = m->hidden_size;
	if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(c->cfg, "indexer_types"))) {
		for (uint64_t i = 0; i < L; i++)
			full += i == 0 || (i - 1) % 4 == 0;
		m->indexer_layers = full;
		m->indexer_head_dim = hf_get_u64(c, KEYS("index_head_dim"), 128);
	}
	m->hc_mult = N;
	gate = hf_mul(c, m->num_heads, m->v_head_dim, "v_head_dim");
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.self_attn", "gate_proj.weight", MP_TK_ATTENTION, MP_SPLIT_ROWS,
	          MP_STEP_EXTRA, false, gate, h, L);
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.self_attn", "sinks", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_NONE, true,
	          1, m->num_heads, L);
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.attn_hc", "fn", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_EXTRA, false, 2 * N,
	          hf_mul(c, N, h, "hidden_size"), L);
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.attn_hc", "base", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, 2 * N,
	          L);
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.attn_hc", "scale", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, 2,
	          L);
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.ffn_hc", "fn", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_EXTRA, false, 2 * N,
	          hf_mul(c, N, h, "hidden_size"), L);
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.ffn_hc", "base", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, 2 * N,
	          L);
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.ffn_hc", "scale", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, 2,
	          L);
	hf_tensor(m, MP_ROOT_DECODER, "hc_head", "hc_fn", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_EXTRA, false, N,
	          hf_mul(c, N, h, "hidden_size"), 1);
	hf_tensor(m, MP_ROOT_DECODER, "hc_head", "hc_base", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, N, 1);
	hf_tensor(m, MP_ROOT_DECODER, "hc_head", "hc_scale", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, 1, 1);
}

/*
 * Qwen3OmniMoeTextConfig (the decoder of Qwen3OmniMoeThinkerForConditionalGeneration; configuration_qwen3_omni_moe.py):
 * vocab 3584, hidden 2048, 28 layers, 28 heads (head_dim hidden // heads = 73 unless a head_dim is given), kv 4,
 * 32768 positions; Qwen3-MoE's modules: q/k norms of head_dim, attention_bias off, 128 experts (num_experts) of
 * moe_intermediate_size 768, top 8, every decoder_sparse_step-th layer (1) not in mlp_only_layers, dense layers of
 * intermediate_size 18944. Qwen3OmniMoeThinkerTextAttention masks no window, but transformers 5.24's DynamicCache
 * built from a config with a sliding_window slides in every layer (no layer_types): the cache follows it, as Qwen3-VL-MoE's.
 * The default's head_dim 73 (2048 // 28) is refused (decode_trunk): transformers builds it but its rotary embedding
 * (74 wide) cannot run it.
 */
void mpm_read_qwen3_omni_moe_text(hf_ctx *c, mp_model *m)
{
	static const trunk t = {3584, 2048, 28, 28, 4, 32768, false};

	qwen3_moe_text(c, &t, 18944, 128, 8, 768, m);
}

/*
 * The decoders of DeepSeek-OCR's descendants, read as their wrappers' text_config: UnlimitedOcrTextConfig
 * (modeling_unlimited_ocr.py; baidu/Unlimited-OCR) and DeepseekOcr2TextConfig (modeling_deepseek_ocr2.py;
 * deepseek-ai/DeepSeek-OCR-2). DeepSeek-V2's MoE behind Llama's attention (no MLA): q, k, v and o of head_dim
 * hidden_size // num_attention_heads, which their __post_init__ sets whatever head_dim says (validate_architecture
 * refuses heads that do not divide), attention_bias on all four; the "dense" layers of mlp_layer_types a gated MLP of
 * intermediate_size, the "sparse" ones n_routed_experts (num_experts) fused experts of moe_intermediate_size without
 * bias, a router without bias ([E, h], fp32) and n_shared_experts shared experts as one MLP of moe_intermediate_size
 * x n_shared_experts, built even at 0 (its down_proj then keeps mlp_bias's bias); mlp_bias on the dense MLP and the
 * shared experts. Defaults:
 *   unlimited_ocr_text: vocab 129280, hidden 1280, MLP 6848, 12 layers, 10 heads, kv 10, 32768 positions, untied;
 *     64 experts of 896, top-6, 2 shared; mlp_layer_types absent: the first first_k_dense_replace (1) dense; every
 *     layer "reference_sliding_attention" over sliding_window (128; null is refused, its validate_architecture).
 *   deepseek_ocr2_text: vocab 102400, hidden 4096, MLP 11008, 32 layers, 32 heads, kv = heads, 2048 positions,
 *     untied; 64 experts of 1407, 2 shared; mlp_layer_types and num_experts_per_tok have no default transformers can
 *     build (None: its decoder layer indexes the one, its router routes none with the other): both are required.
 * Unlimited-OCR's reference sliding-window layers (UnlimitedOcrDynamicReferenceSlidingWindowLayer) keep every prefill
 * token and the last sliding_window decoded ones: memplan holds every token (exact for a prompt, an upper bound once
 * more than sliding_window tokens are generated; the type's row says so in its answers).
 */
void mpm_read_deepseek_ocr_text(hf_ctx *c, mp_model *m)
{
	bool unlimited = strcmp(m->model_type, "unlimited_ocr_text") == 0;
	static const trunk tu = {129280, 1280, 12, 10, 10, 32768, false}, t2 = {102400, 4096, 32, 32, 0, 2048, false};
	uint64_t shared, moe = 0;

	decode_trunk(c, unlimited ? &tu : &t2, m);
	hf_heads_divide_hidden(c, m, "num_attention_heads");
	if (c->st == MP_OK && m->num_heads)
		m->head_dim = m->hidden_size / m->num_heads; /* __post_init__: head_dim is always hidden // heads */
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), unlimited ? 6848 : 11008);
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->mlp_bias = hf_get_bool(c, KEYS("mlp_bias"), false);
	m->routed_bias = MP_BIAS_OFF;
	m->num_experts = hf_get_u64(c, KEYS("n_routed_experts", "num_experts"), 64); /* attribute_map */
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), unlimited ? 6 : 0);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), unlimited ? 896 : 1407);
	shared = hf_get_u64(c, KEYS("n_shared_experts"), 2);
	m->num_shared_experts = shared;
	m->shared_expert_intermediate_size = hf_mul(c, shared, m->moe_intermediate_size, "moe_intermediate_size");
	m->shared_down_bias_only = shared == 0;
	/* UnlimitedOcrTextConfig.__post_init__ pops first_k_dense_replace (1) to derive mlp_layer_types */
	m->first_dense_layers = unlimited ? hf_get_u64(c, KEYS("first_k_dense_replace"), 1) : 0;
	if (m->first_dense_layers > m->num_layers)
		m->first_dense_layers = m->num_layers;
	if (!mlp_layer_types(c, m) && !unlimited)
		hf_fail_key(c, "mlp_layer_types",
		            "mlp_layer_types is required: DeepseekOcr2TextConfig's default is None, which transformers 5.24 "
		            "cannot build (DeepseekOcr2TextDecoderLayer indexes it); list \"dense\" or \"sparse\" per layer "
		            "(DeepSeek-OCR-2: the first layer dense)");
	for (uint64_t i = 0; i < m->num_layers && i < MP_MAX_LAYERS; i++)
		moe += mp_model_is_moe_layer(m, i);
	if (moe == 0)
		m->num_experts = m->num_experts_per_tok = 0; /* every layer dense: no router, no experts */
	else if (c->st == MP_OK && m->num_experts == 0)
		hf_fail_key(c, hf_key_of(c, KEYS("n_routed_experts", "num_experts")),
		            "the \"sparse\" layers need at least one routed expert (n_routed_experts)");
	else if (c->st == MP_OK && m->num_experts_per_tok == 0)
		hf_fail_key(c, "num_experts_per_tok",
		            "num_experts_per_tok is required: DeepseekOcr2TextConfig's default is None, with which no expert "
		            "can be routed (transformers itself fails); give the checkpoint's top-k (DeepSeek-OCR-2: 6)");
	if (unlimited) {
		const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types"), *v;

		if (c->st == MP_OK && hf_is_null(c, "sliding_window"))
			hf_fail_key(c, "sliding_window",
			            "sliding_window cannot be null for Unlimited-OCR (UnlimitedOcrTextConfig."
			            "validate_architecture); its reference sliding-window layers need one");
		hf_get_u64(c, KEYS("sliding_window"), 128);
		if (lt && !cJSON_IsNull(lt) &&
		    (!cJSON_IsArray(lt) || (uint64_t)cJSON_GetArraySize(lt) != m->num_layers))
			hf_fail_key(c, "layer_types", "layer_types must have one entry per layer (num_hidden_layers)");
		if (!cJSON_IsArray(lt))
			lt = NULL;
		cJSON_ArrayForEach(v, lt)
		{
			if (c->st == MP_OK && (!cJSON_IsString(v) || (strcmp(v->valuestring, "full_attention") != 0 &&
			                                              strcmp(v->valuestring, "reference_sliding_attention") != 0)))
				hf_fail_key(c, "layer_types", "layer_types entries must be \"reference_sliding_attention\" or "
				                              "\"full_attention\"");
		}
	}
	hf_decode_rope(c, m, 1.0);
}
