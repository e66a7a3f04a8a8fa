/*
 * hf_classic.c: the decoders of the GPT-3 era that users still paste: OPT, BLOOM, GPT-Neo, CodeGen and MPT. Each is a
 * GPT-2-like stack of LayerNorms, plain (up, down) MLPs and multi-head attention, with its own names
 * (model/hf_names.c) and a module or two no field of mp_model describes, which the reader adds itself. Every default
 * is the transformers 5.24 configuration class's (configuration_<type>.py), every module shape its modeling file's;
 * tests/ref/hf/groundtruth.json and state_dicts.json hold what transformers builds from them.
 */
#include <stdio.h>
#include <string.h>

#include "hf_internal.h"

static void offset_positions(hf_ctx *c, mp_model *m);

/* The trunk these types share: multi-head attention (kv = heads), a plain MLP, LayerNorms, a final norm. */
static void classic_trunk(mp_model *m)
{
	m->num_kv_heads = m->num_heads;
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_PLAIN;
	m->norm_kind = MP_NORM_LAYER;
	m->norms_per_layer = 2;
	m->final_norm = true;
}

/* head_dim = hidden / heads, which must divide (every one of these attention modules reshapes hidden into heads). */
static void classic_head_dim(hf_ctx *c, mp_model *m, const char *heads_key)
{
	if (m->num_heads == 0)
		return; /* validation names the key */
	if (m->hidden_size % m->num_heads != 0) {
		char msg[160];

		snprintf(msg, sizeof(msg), "the width (%llu) must be divisible by %s (%llu)",
		         (unsigned long long)m->hidden_size, heads_key, (unsigned long long)m->num_heads);
		hf_fail_key(c, heads_key, msg);
		return;
	}
	m->head_dim = m->hidden_size / m->num_heads;
}

/*
 * OPTConfig (modeling_opt.py): vocab 50272, hidden 768, ffn_dim 3072, 12 layers, 12 heads, 2048 positions, tied;
 * enable_bias (True) on q, k, v, out_proj, fc1 and fc2; layer_norm_elementwise_affine (True) gives the LayerNorms
 * weight and bias (none without); the final_layer_norm only with do_layer_norm_before (True) and not
 * _remove_final_layer_norm. The learned position table has max_position_embeddings + 2 rows
 * (OPTLearnedPositionalEmbedding's offset of 2); a position past max_position_embeddings is refused. With
 * word_embed_proj_dim narrower than hidden (OPT-350m: 512), the embeddings, the head and project_in / project_out
 * (no biases) are that width.
 */
void mpm_read_opt(hf_ctx *c, mp_model *m)
{
	uint64_t proj, h;
	bool affine;

	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 50272);
	m->hidden_size = h = hf_get_u64(c, KEYS("hidden_size"), 768);
	m->intermediate_size = hf_get_u64(c, KEYS("ffn_dim"), 3072);
	m->num_layers = hf_get_u64(c, KEYS("num_hidden_layers"), 12);
	m->num_heads = hf_get_u64(c, KEYS("num_attention_heads"), 12);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings"), 2048);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), true);
	classic_trunk(m);
	classic_head_dim(c, m, "num_attention_heads");
	m->qkv_bias = m->o_bias = m->mlp_bias = hf_get_bool(c, KEYS("enable_bias"), true);
	affine = hf_get_bool(c, KEYS("layer_norm_elementwise_affine"), true);
	m->norm_kind = affine ? MP_NORM_LAYER : MP_NORM_NONE;
	m->final_norm = hf_get_bool(c, KEYS("do_layer_norm_before"), true) &&
	                !hf_get_bool(c, KEYS("_remove_final_layer_norm"), false);
	snprintf(m->rope_type, sizeof(m->rope_type), "none");
	offset_positions(c, m);
	proj = hf_get_u64(c, KEYS("word_embed_proj_dim"), h);
	if (proj == 0) {
		hf_fail_key(c, "word_embed_proj_dim", "word_embed_proj_dim must be at least 1");
		return;
	}
	if (proj != h) {
		/* the embeddings and the head are proj wide; project_in widens the embeddings, project_out narrows the
		 * last hidden state (OPTDecoder): two per-token matrices of the decoder, counted with its MLPs */
		hf_tensor(m, MP_ROOT_DECODER, NULL, "embed_tokens.weight", MP_TK_EMBEDDING, MP_SPLIT_ROWS,
		          m->tie_word_embeddings ? MP_STEP_LM_HEAD : MP_STEP_NONE, false, m->vocab_size, proj, 1);
		hf_tensor(m, MP_ROOT_DECODER, NULL, "project_in.weight", MP_TK_MLP, MP_SPLIT_NONE, MP_STEP_EXTRA,
		          false, h, proj, 1);
		hf_tensor(m, MP_ROOT_DECODER, NULL, "project_out.weight", MP_TK_MLP, MP_SPLIT_NONE, MP_STEP_EXTRA,
		          false, proj, h, 1);
		if (!m->tie_word_embeddings)
			hf_tensor(m, MP_ROOT_TOP, NULL, "lm_head.weight", MP_TK_LM_HEAD, MP_SPLIT_ROWS, MP_STEP_LM_HEAD, false,
			          m->vocab_size, proj, 1);
		c->names = &mpm_names_opt_proj;
	}
}

/*
 * BloomConfig (modeling_bloom.py): vocab 250880, hidden 64 (n_embed), 2 layers (n_layer), 8 heads (n_head), tied;
 * ALiBi (no position table, no RoPE, no context limit of its own); the fused query_key_value and dense with biases,
 * dense_h_to_4h and dense_4h_to_h of 4 x hidden with biases, LayerNorms, and word_embeddings_layernorm after the
 * embeddings.
 */
void mpm_read_bloom(hf_ctx *c, mp_model *m)
{
	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 250880);
	m->hidden_size = hf_get_u64(c, KEYS("hidden_size", "n_embed"), 64);
	m->num_layers = hf_get_u64(c, KEYS("n_layer", "num_hidden_layers"), 2);
	m->num_heads = hf_get_u64(c, KEYS("n_head", "num_attention_heads"), 8);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), true);
	m->intermediate_size = hf_mul(c, 4, m->hidden_size, "hidden_size");
	classic_trunk(m);
	classic_head_dim(c, m, "n_head");
	m->qkv_bias = m->o_bias = m->mlp_bias = true;
	snprintf(m->rope_type, sizeof(m->rope_type), "none");
	hf_tensor(m, MP_ROOT_DECODER, NULL, "word_embeddings_layernorm.weight", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE,
	          true, 1, m->hidden_size, 1);
	hf_tensor(m, MP_ROOT_DECODER, NULL, "word_embeddings_layernorm.bias", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE,
	          true, 1, m->hidden_size, 1);
}

/* GPT-Neo's attention_types ([[["global", "local"], 12]]: kinds repeated n times) must expand to one per layer, as
 * GPTNeoConfig.validate_architecture requires. */
static void gpt_neo_attention_types(hf_ctx *c, mp_model *m)
{
	const cJSON *at = cJSON_GetObjectItemCaseSensitive(c->cfg, "attention_types"), *item;
	uint64_t layers = 0;

	if (at == NULL || cJSON_IsNull(at)) {
		layers = 24; /* the default [[["global", "local"], 12]] */
	} else if (!cJSON_IsArray(at)) {
		hf_fail_key(c, "attention_types", "attention_types must be a list of [[kinds...], repeats]");
		return;
	}
	cJSON_ArrayForEach(item, at)
	{
		const cJSON *kinds = cJSON_GetArrayItem(item, 0), *n = cJSON_GetArrayItem(item, 1), *k;

		if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != 2 || !cJSON_IsArray(kinds) || !cJSON_IsNumber(n) ||
		    n->valuedouble < 0 || n->valuedouble > MP_MAX_LAYERS) {
			hf_fail_key(c, "attention_types", "attention_types must be a list of [[kinds...], repeats]");
			return;
		}
		cJSON_ArrayForEach(k, kinds)
		{
			if (!cJSON_IsString(k) || (strcmp(k->valuestring, "global") != 0 && strcmp(k->valuestring, "local") != 0)) {
				hf_fail_key(c, "attention_types", "attention_types' kinds must be \"global\" or \"local\"");
				return;
			}
		}
		layers += (uint64_t)cJSON_GetArraySize(kinds) * (uint64_t)n->valuedouble;
	}
	if (layers != m->num_layers)
		hf_fail_key(c, "attention_types",
		            "attention_types must expand to one kind per layer (num_layers), as GPTNeoConfig requires");
}

/*
 * GPTNeoConfig (modeling_gpt_neo.py): vocab 50257, 2048 positions (a learned table), hidden 2048, 24 layers
 * (num_layers), 16 heads (num_heads), intermediate_size None (4 x hidden), tied; q, k and v without biases,
 * out_proj, c_fc and c_proj with them, LayerNorms ln_1, ln_2, ln_f. The local layers (attention_types) see
 * window_size tokens through their mask only: transformers' DynamicCache keeps every token of every layer, and so
 * does memplan (no engine memplan knows serves GPT-Neo with a sliding-window cache).
 */
void mpm_read_gpt_neo(hf_ctx *c, mp_model *m)
{
	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 50257);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings"), 2048);
	m->learned_position_embeddings = m->max_position_embeddings;
	m->hidden_size = hf_get_u64(c, KEYS("hidden_size"), 2048);
	m->num_layers = hf_get_u64(c, KEYS("num_layers", "num_hidden_layers"), 24);
	m->num_heads = hf_get_u64(c, KEYS("num_heads", "num_attention_heads"), 16);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), hf_mul(c, 4, m->hidden_size, "hidden_size"));
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), true);
	classic_trunk(m);
	classic_head_dim(c, m, "num_heads");
	m->o_bias = m->mlp_bias = true;
	gpt_neo_attention_types(c, m);
	snprintf(m->rope_type, sizeof(m->rope_type), "none");
}

/*
 * CodeGenConfig (modeling_codegen.py): vocab 50400, n_positions 2048, n_embd 4096, n_layer 28, n_head 16,
 * rotary_dim 64 (null: the whole head), n_inner None (4 x n_embd), untied; GPT-J's block (one ln_1, attention and
 * MLP in parallel) with one fused qkv_proj and out_proj without biases, fc_in and fc_out with them, lm_head with a
 * bias.
 */
void mpm_read_codegen(hf_ctx *c, mp_model *m)
{
	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 50400);
	m->max_position_embeddings = hf_get_u64(c, KEYS("n_positions", "max_position_embeddings"), 2048);
	m->hidden_size = hf_get_u64(c, KEYS("n_embd", "hidden_size"), 4096);
	m->num_layers = hf_get_u64(c, KEYS("n_layer", "num_hidden_layers"), 28);
	m->num_heads = hf_get_u64(c, KEYS("n_head", "num_attention_heads"), 16);
	m->intermediate_size = hf_get_u64(c, KEYS("n_inner"), hf_mul(c, 4, m->hidden_size, "n_embd"));
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), false);
	classic_trunk(m);
	classic_head_dim(c, m, "n_head");
	m->mlp_bias = m->lm_head_bias = true;
	m->norms_per_layer = 1;
	m->parallel_block = true;
	m->rotary_dim = hf_is_null(c, "rotary_dim") ? m->head_dim : hf_get_u64(c, KEYS("rotary_dim"), 64);
	if (m->rotary_dim > m->head_dim)
		m->rotary_dim = m->head_dim;
	m->rotary_buffer_sets = 1;
	snprintf(m->rope_type, sizeof(m->rope_type), "default");
}

/*
 * MptConfig (modeling_mpt.py): d_model 2048, n_heads 16, n_layers 24, max_seq_len 2048, vocab 50368, tied; ALiBi;
 * Wqkv (3 x d_model) and out_proj, up_proj (4 x d_model) and down_proj, all without biases, LayerNorms whose bias is
 * None (norm_1, norm_2, norm_f: one weight each). transformers 5.24 builds exactly that whatever no_bias,
 * expansion_ratio and attn_config.attn_type say, so a config that asks for biases, another MLP ratio or multi-query
 * attention describes a model transformers cannot load: refused, naming the key.
 */
void mpm_read_mpt(hf_ctx *c, mp_model *m)
{
	const cJSON *ac = cJSON_GetObjectItemCaseSensitive(c->cfg, "attn_config");

	m->hidden_size = hf_get_u64(c, KEYS("d_model", "hidden_size"), 2048);
	m->num_heads = hf_get_u64(c, KEYS("n_heads", "num_attention_heads"), 16);
	m->num_layers = hf_get_u64(c, KEYS("n_layers", "num_hidden_layers"), 24);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_seq_len"), 2048);
	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 50368);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), true);
	m->intermediate_size = hf_mul(c, 4, m->hidden_size, "d_model");
	classic_trunk(m);
	classic_head_dim(c, m, "n_heads");
	snprintf(m->rope_type, sizeof(m->rope_type), "none");
	if (!hf_get_bool(c, KEYS("no_bias"), true))
		hf_fail_key(c, "no_bias",
		            "no_bias false is not a model transformers 5.24 builds: MptAttention, MptMLP and the LayerNorms "
		            "never carry biases (modeling_mpt.py)");
	if (hf_get_u64(c, KEYS("expansion_ratio"), 4) != 4)
		hf_fail_key(c, "expansion_ratio",
		            "expansion_ratio must be 4: transformers 5.24's MptMLP is 4 x d_model whatever the config says");
	if (ac && !cJSON_IsNull(ac) && !cJSON_IsObject(ac))
		hf_fail_key(c, "attn_config", "attn_config must be an object");
	else if (cJSON_IsObject(ac)) {
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(ac, "attn_type");
		char pointer[96];
		hf_ctx sub;

		snprintf(pointer, sizeof(pointer), "%s/attn_config", c->pointer);
		sub = (hf_ctx){ac, pointer, c->err, c->st, NULL, NULL, c->decode_type};
		if (t && !cJSON_IsNull(t) && (!cJSON_IsString(t) || strcmp(t->valuestring, "multihead_attention") != 0))
			hf_fail_key(&sub, "attn_type",
			            "attn_type must be \"multihead_attention\": transformers 5.24's MptAttention projects "
			            "3 x d_model (no multi-query attention)");
		c->st = sub.st;
	}
}

/* A learned position table of max_position_embeddings + 2 rows (OPT's and BioGPT's offset of 2), listed by the
 * reader; the context is max_position_embeddings. */
static void offset_positions(hf_ctx *c, mp_model *m)
{
	uint64_t dims[2] = {m->max_position_embeddings + 2, m->hidden_size};

	if (m->max_position_embeddings > (UINT64_C(1) << 32)) {
		hf_fail_key(c, "max_position_embeddings", "max_position_embeddings must be at most 2^32");
		return;
	}
	hf_shape(m, MP_ROOT_DECODER, NULL, "embed_positions.weight", MP_TK_EMBEDDING, MP_TF_POSITIONS, dims, 2, 1);
	m->learned_position_embeddings = m->max_position_embeddings;
}

/*
 * XGLMConfig (modeling_xglm.py): vocab 256008, 2048 positions (sinusoidal: no parameters), d_model 1024, ffn_dim
 * 4096, num_layers 24, attention_heads 16, tied; OPT's pre-norm block (q, k, v, out_proj, fc1 and fc2 with biases,
 * self_attn_layer_norm and final_layer_norm) and the decoder's layer_norm.
 */
void mpm_read_xglm(hf_ctx *c, mp_model *m)
{
	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 256008);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings"), 2048);
	m->hidden_size = hf_get_u64(c, KEYS("d_model", "hidden_size"), 1024);
	m->intermediate_size = hf_get_u64(c, KEYS("ffn_dim"), 4096);
	m->num_layers = hf_get_u64(c, KEYS("num_layers", "num_hidden_layers"), 24);
	m->num_heads = hf_get_u64(c, KEYS("attention_heads", "num_attention_heads"), 16);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), true);
	classic_trunk(m);
	classic_head_dim(c, m, "attention_heads");
	m->qkv_bias = m->o_bias = m->mlp_bias = true;
	snprintf(m->rope_type, sizeof(m->rope_type), "none");
}

/*
 * BioGptConfig (modeling_biogpt.py): vocab 42384, hidden 1024, 24 layers, 16 heads, FFN 4096, 1024 positions (a
 * learned table of 1026 rows), tied (output_projection); OPT's pre-norm block with biases everywhere, the
 * decoder's layer_norm.
 */
void mpm_read_biogpt(hf_ctx *c, mp_model *m)
{
	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 42384);
	m->hidden_size = hf_get_u64(c, KEYS("hidden_size"), 1024);
	m->num_layers = hf_get_u64(c, KEYS("num_hidden_layers"), 24);
	m->num_heads = hf_get_u64(c, KEYS("num_attention_heads"), 16);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 4096);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings"), 1024);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), true);
	classic_trunk(m);
	classic_head_dim(c, m, "num_attention_heads");
	m->qkv_bias = m->o_bias = m->mlp_bias = true;
	snprintf(m->rope_type, sizeof(m->rope_type), "none");
	offset_positions(c, m);
}

/*
 * CTRLConfig (modeling_ctrl.py): vocab 246534, n_positions 256 (sinusoidal encodings computed for that many
 * positions: no parameters, and no longer sequence), n_embd 1280, dff 8192, n_layer 48, n_head 16, tied (the head
 * keeps a bias of its own); Wq, Wk, Wv and dense with biases, ffn.0 and ffn.2 with biases, layernorm1 and layernorm2
 * before the blocks, the final layernorm.
 */
void mpm_read_ctrl(hf_ctx *c, mp_model *m)
{
	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 246534);
	m->max_position_embeddings = hf_get_u64(c, KEYS("n_positions", "max_position_embeddings"), 256);
	m->hidden_size = hf_get_u64(c, KEYS("n_embd", "hidden_size"), 1280);
	m->intermediate_size = hf_get_u64(c, KEYS("dff"), 8192);
	m->num_layers = hf_get_u64(c, KEYS("n_layer", "num_hidden_layers"), 48);
	m->num_heads = hf_get_u64(c, KEYS("n_head", "num_attention_heads"), 16);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), true);
	classic_trunk(m);
	classic_head_dim(c, m, "n_head");
	m->qkv_bias = m->o_bias = m->mlp_bias = m->lm_head_bias = true;
	snprintf(m->rope_type, sizeof(m->rope_type), "none");
}

/*
 * OpenAIGPTConfig (GPT-1, modeling_openai.py): vocab 40478, n_positions 512 (a learned table), n_embd 768, n_layer
 * 12, n_head 12, tied; GPT-2's Conv1D modules with biases, but the LayerNorms after the blocks (ln_1 after the
 * attention, ln_2 after the MLP) and no final norm.
 */
void mpm_read_openai_gpt(hf_ctx *c, mp_model *m)
{
	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 40478);
	m->max_position_embeddings = hf_get_u64(c, KEYS("n_positions", "max_position_embeddings"), 512);
	m->learned_position_embeddings = m->max_position_embeddings;
	m->hidden_size = hf_get_u64(c, KEYS("n_embd", "hidden_size"), 768);
	m->num_layers = hf_get_u64(c, KEYS("n_layer", "num_hidden_layers"), 12);
	m->num_heads = hf_get_u64(c, KEYS("n_head", "num_attention_heads"), 12);
	m->intermediate_size = hf_mul(c, 4, m->hidden_size, "n_embd");
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), true);
	classic_trunk(m);
	classic_head_dim(c, m, "n_head");
	m->qkv_bias = m->o_bias = m->mlp_bias = true;
	m->final_norm = false;
	snprintf(m->rope_type, sizeof(m->rope_type), "none");
}

/*
 * GPTNeoXJapaneseConfig (modeling_gpt_neox_japanese.py): vocab 32000, hidden 2560, 32 layers, 32 heads, MLP
 * hidden x intermediate_multiple_size (4), 2048 positions, tied (embed_out); query_key_value, dense and the MLP
 * without biases, the last layer's attention alone keeps a dense_bias; LayerNorms.
 */
void mpm_read_gpt_neox_japanese(hf_ctx *c, mp_model *m)
{
	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 32000);
	m->hidden_size = hf_get_u64(c, KEYS("hidden_size"), 2560);
	m->num_layers = hf_get_u64(c, KEYS("num_hidden_layers"), 32);
	m->num_heads = hf_get_u64(c, KEYS("num_attention_heads"), 32);
	m->intermediate_size =
	    hf_mul(c, m->hidden_size, hf_get_u64(c, KEYS("intermediate_multiple_size"), 4), "intermediate_multiple_size");
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings"), 2048);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), true);
	classic_trunk(m);
	classic_head_dim(c, m, "num_attention_heads");
	hf_decode_rope(c, m, 1.0);
	if (m->num_layers)
		hf_tensor(m, MP_ROOT_DECODER, MP_NAMES_LAYERS ".attention", "dense_bias", MP_TK_ATTENTION, MP_SPLIT_NONE,
		          MP_STEP_NONE, true, 1, m->hidden_size, 1);
}
