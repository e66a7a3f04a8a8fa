/*
 * hf_recurrent.c: decoders whose recurrence memplan's other kinds do not describe (RWKV's WKV sums, RecurrentGemma's
 * RG-LRU), read as MP_SSM_LISTED: the reader lists the mixer's tensors and states what each layer keeps per sequence.
 * No serving engine memplan knows runs these types, so the state is transformers 5.24's as its modeling file keeps it
 * (tests/ref/hf/README.md, "Conventions"). Every default is the configuration class's (configuration_<type>.py),
 * every module shape its modeling file's; tests/ref/hf holds what transformers builds and caches.
 */
#include <stdio.h>
#include <string.h>

#include "hf_internal.h"

/* A family is the Llama names with some renamed (as model/hf_names.c) */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Winitializer-overrides"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Woverride-init"
#endif

/* RWKV (modeling_rwkv.py): rwkv.embeddings, blocks.{i}.ln1 and ln2 (LayerNorms), rwkv.ln_out, the head `head`; the
 * time mix and channel mix are the reader's. */
const mp_names mpm_names_rwkv = {MP_NAMES_LLAMA_FIELDS,
                                 .root = "rwkv.",
                                 .embed = {"embeddings.weight", NULL},
                                 .final_norm = {"ln_out.weight", "ln_out.bias"},
                                 .lm_head = {"head.weight", NULL},
                                 .layer = "blocks.{i}",
                                 .norms = {{"ln1.weight", "ln1.bias"}, {"ln2.weight", "ln2.bias"}}};

/* RecurrentGemma (modeling_recurrent_gemma.py): temporal_pre_norm and channel_pre_norm, the attention layers' q, k, v
 * and o under temporal_block, mlp_block, final_norm; the recurrent blocks are the reader's. */
const mp_names mpm_names_recurrent_gemma = {MP_NAMES_LLAMA_FIELDS,
                                            .final_norm = {"final_norm.weight", NULL},
                                            .attn = MP_NAMES_LAYERS ".temporal_block",
                                            .mlp = MP_NAMES_LAYERS ".mlp_block",
                                            .norms = {{"temporal_pre_norm.weight", NULL},
                                                      {"channel_pre_norm.weight", NULL}}};

/* A [1, 1, n] parameter (RWKV's time_mix_* vectors) of `count` layers under path. */
static void row3(mp_model *m, const char *path, const char *leaf, uint64_t n, uint64_t count)
{
	uint64_t dims[3] = {1, 1, n};

	hf_shape(m, MP_ROOT_DECODER, path, leaf, MP_TK_RECURRENT, 0, dims, 3, count);
}

/*
 * RwkvConfig (RWKV-4; RwkvForCausalLM): vocab 50277, hidden 4096, 32 layers, attention_hidden_size = hidden,
 * intermediate_size = 4 x hidden, context_length 1024 (a single forward's; in RNN mode any length), untied. Each
 * block: ln1, the time mix (time_decay and time_first of attention_hidden_size, time_mix_key, _value, _receptance
 * [1, 1, hidden], key, value and receptance hidden -> attention, output back), ln2, the channel mix (time_mix_key and
 * _receptance, key hidden -> intermediate, receptance hidden -> hidden, value intermediate -> hidden); block 0 adds
 * pre_ln. The state (RwkvModel.forward with use_cache): five [batch, hidden, layers] tensors, the two token shifts in
 * the model's dtype and the WKV numerator, denominator and running maximum in fp32, so 2 x hidden model-dtype and
 * 3 x hidden fp32 values per layer per sequence (transformers' layout: no engine memplan knows serves RWKV).
 * transformers keeps the WKV sums hidden_size wide, so a narrower or wider attention_hidden_size cannot run with a
 * cache there: refused.
 */
void mpm_read_rwkv(hf_ctx *c, mp_model *m)
{
	uint64_t h, a, f;
	const char *att = "blocks.{i}.attention", *ffn = "blocks.{i}.feed_forward";

	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 50277);
	m->hidden_size = h = hf_get_u64(c, KEYS("hidden_size"), 4096);
	m->num_layers = hf_get_u64(c, KEYS("num_hidden_layers"), 32);
	a = hf_get_u64(c, KEYS("attention_hidden_size"), h);
	f = hf_get_u64(c, KEYS("intermediate_size"), hf_mul(c, 4, h, "hidden_size"));
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), false);
	/* context_length (max_position_embeddings' spelling) bounds one parallel forward only: no limit is planned */
	(void)hf_get_u64(c, KEYS("context_length", "max_position_embeddings"), 1024);
	if (c->st == MP_OK && a != h)
		hf_fail_key(c, "attention_hidden_size",
		            "attention_hidden_size must equal hidden_size: RwkvModel keeps its WKV state hidden_size wide, so "
		            "transformers 5.24 cannot run any other width with a cache");
	if (c->st != MP_OK)
		return;
	m->layer_pattern = true;
	for (uint64_t i = 0; i < m->num_layers && i < MP_MAX_LAYERS; i++)
		m->layer_flags[i] = MP_LAYER_SSM | MP_LAYER_FFN;
	m->ssm.kind = MP_SSM_LISTED;
	m->ssm.d_inner = h;
	m->ssm.listed_model_values = hf_mul(c, 2, h, "hidden_size");
	m->ssm.listed_fp32_values = hf_mul(c, 3, h, "hidden_size");
	m->num_heads = m->num_kv_heads = m->head_dim = 0;
	m->ffn_kind = MP_FFN_PLAIN;
	m->intermediate_size = f;
	m->own_mlp = true;
	m->norm_kind = MP_NORM_LAYER;
	m->norms_per_layer = 2;
	m->final_norm = true;
	snprintf(m->rope_type, sizeof(m->rope_type), "none");
	hf_tensor(m, MP_ROOT_DECODER, "blocks.0", "pre_ln.weight", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, 1);
	hf_tensor(m, MP_ROOT_DECODER, "blocks.0", "pre_ln.bias", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, 1);
	hf_tensor(m, MP_ROOT_DECODER, att, "time_decay", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1, a,
	          m->num_layers);
	hf_tensor(m, MP_ROOT_DECODER, att, "time_first", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1, a,
	          m->num_layers);
	row3(m, att, "time_mix_key", h, m->num_layers);
	row3(m, att, "time_mix_value", h, m->num_layers);
	row3(m, att, "time_mix_receptance", h, m->num_layers);
	hf_tensor(m, MP_ROOT_DECODER, att, "key.weight", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_MIXER_IN, false, a, h,
	          m->num_layers);
	hf_tensor(m, MP_ROOT_DECODER, att, "value.weight", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_MIXER_IN, false, a, h,
	          m->num_layers);
	hf_tensor(m, MP_ROOT_DECODER, att, "receptance.weight", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_MIXER_IN, false,
	          a, h, m->num_layers);
	hf_tensor(m, MP_ROOT_DECODER, att, "output.weight", MP_TK_RECURRENT, MP_SPLIT_COLS, MP_STEP_MIXER_OUT, false, h,
	          a, m->num_layers);
	row3(m, ffn, "time_mix_key", h, m->num_layers);
	row3(m, ffn, "time_mix_receptance", h, m->num_layers);
	hf_tensor(m, MP_ROOT_DECODER, ffn, "key.weight", MP_TK_MLP, MP_SPLIT_ROWS, MP_STEP_MLP_UP, false, f, h,
	          m->num_layers);
	hf_tensor(m, MP_ROOT_DECODER, ffn, "receptance.weight", MP_TK_MLP, MP_SPLIT_NONE, MP_STEP_MLP_UP, false, h, h,
	          m->num_layers);
	hf_tensor(m, MP_ROOT_DECODER, ffn, "value.weight", MP_TK_MLP, MP_SPLIT_COLS, MP_STEP_MLP_DOWN, false, h, f,
	          m->num_layers);
}

/*
 * RecurrentGemmaConfig (RecurrentGemma-2B; RecurrentGemmaForCausalLM): vocab 256000, hidden 2560, 26 layers whose
 * temporal blocks cycle through block_types (recurrent, recurrent, attention), 10 heads of hidden // heads (the class
 * derives head_dim so; a head_dim key overrides it), num_key_value_heads = heads, lru_width = hidden, conv1d_width 4,
 * tied; every layer an MLP of intermediate_size // 2 (7680 // 2) with biases behind channel_pre_norm. Attention
 * layers: q, k and v (bias with attention_bias), o always biased, RoPE on half of each head, sliding over
 * attention_window_size (2048) tokens (the class's layer_types are all sliding_attention). Recurrent layers: linear_y
 * and linear_x hidden -> lru_width, a depthwise conv_1d of conv1d_width, the RG-LRU (recurrent_param of lru_width,
 * input and recurrent gates as [heads, lru / heads, lru / heads] block-diagonal weights with [heads, lru / heads]
 * biases), linear_out back, all biased. The state each recurrent layer keeps per sequence
 * (RecurrentGemmaRecurrentBlock): conv1d_state of lru_width x (conv1d_width - 1) in the model's dtype and the RG-LRU's
 * recurrent_states of lru_width in fp32.
 */
void mpm_read_recurrent_gemma(hf_ctx *c, mp_model *m)
{
	const cJSON *bt = cJSON_GetObjectItemCaseSensitive(c->cfg, "block_types"), *v;
	static const char *const dflt_types[] = {"recurrent", "recurrent", "attention"};
	const char *types[64];
	uint64_t ntypes = 0, h, lru, w, heads, rec = 0, bw;
	const char *tb = "layers.{i}.temporal_block", *lr = "layers.{i}.temporal_block.rg_lru";

	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 256000);
	m->hidden_size = h = hf_get_u64(c, KEYS("hidden_size"), 2560);
	m->num_layers = hf_get_u64(c, KEYS("num_hidden_layers"), 26);
	m->num_heads = heads = hf_get_u64(c, KEYS("num_attention_heads"), 10);
	m->num_kv_heads = hf_get_u64(c, KEYS("num_key_value_heads"), heads);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 3 * 2560) / 2;
	lru = hf_get_u64(c, KEYS("lru_width"), h);
	w = hf_get_u64(c, KEYS("conv1d_width"), 4);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), true);
	m->qkv_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->o_bias = true;
	m->mlp_bias = true;
	/* attention_window_size, or its attribute_map spelling sliding_window */
	m->sliding_window = hf_window(c,
	                              cJSON_GetObjectItemCaseSensitive(c->cfg, "attention_window_size") == NULL &&
	                                      cJSON_GetObjectItemCaseSensitive(c->cfg, "sliding_window") != NULL
	                                  ? "sliding_window"
	                                  : "attention_window_size",
	                              2048);
	if (bt == NULL || cJSON_IsNull(bt)) {
		for (ntypes = 0; ntypes < 3; ntypes++)
			types[ntypes] = dflt_types[ntypes];
	} else if (!cJSON_IsArray(bt) || cJSON_GetArraySize(bt) == 0 || cJSON_GetArraySize(bt) > 64) {
		hf_fail_key(c, "block_types", "block_types must be a list of 1 to 64 \"recurrent\" or \"attention\"");
	} else {
		cJSON_ArrayForEach(v, bt)
		{
			if (!cJSON_IsString(v) ||
			    (strcmp(v->valuestring, "recurrent") != 0 && strcmp(v->valuestring, "attention") != 0)) {
				hf_fail_key(c, "block_types", "block_types entries must be \"recurrent\" or \"attention\"");
				break;
			}
			types[ntypes++] = v->valuestring;
		}
	}
	/* the key named for a width the heads do not divide: lru_width when the config gives it, else the heads (the
	 * RG-LRU is hidden_size wide then) */
	if (c->st == MP_OK && (heads == 0 || h < heads || lru % heads != 0 || w == 0))
		hf_fail_key(c,
		            heads == 0 || h < heads ? "num_attention_heads"
		            : w == 0                ? "conv1d_width"
		            : hf_has(c, "lru_width") ? "lru_width"
		                                     : "num_attention_heads",
		            "num_attention_heads must be from 1 to hidden_size and divide lru_width (the RG-LRU's gate "
		            "blocks), and conv1d_width must be at least 1");
	if (c->st == MP_OK && m->num_kv_heads > heads)
		hf_fail_key(c, "num_key_value_heads",
		            "num_key_value_heads must not exceed num_attention_heads (RecurrentGemmaConfig refuses it)");
	if (c->st != MP_OK)
		return;
	/* RecurrentGemmaConfig.__post_init__ sets head_dim = hidden_size // heads, and an explicit head_dim key is set
	 * after it (PreTrainedConfig keeps the extra keys): the key wins */
	m->head_dim = hf_get_u64(c, KEYS("head_dim"), h / heads);
	m->layer_pattern = true;
	for (uint64_t i = 0; i < m->num_layers && i < MP_MAX_LAYERS; i++) {
		bool attn = strcmp(types[i % ntypes], "attention") == 0;

		m->layer_flags[i] = MP_LAYER_FFN | (attn ? MP_LAYER_ATTENTION : MP_LAYER_SSM);
		rec += !attn;
	}
	if (m->sliding_window)
		m->sliding_window_layers = m->num_layers - rec;
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_GATED;
	m->norm_kind = MP_NORM_RMS;
	m->norms_per_layer = 2;
	m->final_norm = true;
	m->ssm.kind = MP_SSM_LISTED;
	m->ssm.d_inner = lru;
	m->ssm.conv_kernel = w;
	m->ssm.listed_model_values = hf_mul(c, lru, w - 1, "conv1d_width");
	m->ssm.listed_fp32_values = lru;
	hf_decode_rope(c, m, 0.5);
	bw = lru / heads;
	hf_tensor(m, MP_ROOT_DECODER, tb, "linear_y.weight", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_MIXER_IN, false, lru,
	          h, rec);
	hf_tensor(m, MP_ROOT_DECODER, tb, "linear_y.bias", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1, lru, rec);
	hf_tensor(m, MP_ROOT_DECODER, tb, "linear_x.weight", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_MIXER_IN, false, lru,
	          h, rec);
	hf_tensor(m, MP_ROOT_DECODER, tb, "linear_x.bias", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1, lru, rec);
	hf_tensor(m, MP_ROOT_DECODER, tb, "linear_out.weight", MP_TK_RECURRENT, MP_SPLIT_COLS, MP_STEP_MIXER_OUT, false,
	          h, lru, rec);
	hf_tensor(m, MP_ROOT_DECODER, tb, "linear_out.bias", MP_TK_RECURRENT, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, rec);
	{
		uint64_t conv[3] = {lru, 1, w}, gate[3] = {heads, bw, bw}, gb[2] = {heads, bw};

		hf_shape(m, MP_ROOT_DECODER, tb, "conv_1d.weight", MP_TK_RECURRENT, 0, conv, 3, rec);
		hf_tensor(m, MP_ROOT_DECODER, tb, "conv_1d.bias", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1, lru,
		          rec);
		hf_tensor(m, MP_ROOT_DECODER, lr, "recurrent_param", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1,
		          lru, rec);
		hf_shape(m, MP_ROOT_DECODER, lr, "input_gate_weight", MP_TK_RECURRENT, 0, gate, 3, rec);
		hf_shape(m, MP_ROOT_DECODER, lr, "input_gate_bias", MP_TK_RECURRENT, 0, gb, 2, rec);
		hf_shape(m, MP_ROOT_DECODER, lr, "recurrent_gate_weight", MP_TK_RECURRENT, 0, gate, 3, rec);
		hf_shape(m, MP_ROOT_DECODER, lr, "recurrent_gate_bias", MP_TK_RECURRENT, 0, gb, 2, rec);
	}
}

/* One HRM stack's layers (HrmTextDecoderLayer): self_attn q, k, v, gate (hidden -> heads x head_dim) and o, the
 * gated MLP; `count` layers under `stack`, each run `uses` times per token over the cycles. */
static void hrm_stack(mp_model *m, const char *attn, const char *mlp, bool abias, bool mbias, uint64_t count,
                      uint64_t uses)
{
	uint64_t h = m->hidden_size, q = m->num_heads * m->head_dim, f = m->intermediate_size;
	mp_tensor_spec s = {.root = MP_ROOT_DECODER, .path = attn, .kind = MP_TK_ATTENTION, .view = MP_VIEW_LINEAR,
	                    .count = count, .uses = uses, .rows = q, .cols = h, .split = MP_SPLIT_ROWS,
	                    .step = MP_STEP_QKV};
	static const char *const leaf_w[4] = {"q_proj.weight", "k_proj.weight", "v_proj.weight", "gate_proj.weight"};
	static const char *const leaf_b[4] = {"q_proj.bias", "k_proj.bias", "v_proj.bias", "gate_proj.bias"};

	for (int i = 0; i < 4; i++) {
		s.leaf = leaf_w[i];
		s.step = i == 3 ? MP_STEP_EXTRA : MP_STEP_QKV;
		s.split = i == 1 || i == 2 ? MP_SPLIT_KV_ROWS : MP_SPLIT_ROWS;
		s.kv_heads = i == 1 || i == 2 ? m->num_kv_heads : 0;
		mp_inventory_add(&m->inv, &s);
		if (abias)
			hf_tensor(m, MP_ROOT_DECODER, attn, leaf_b[i], MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1,
			          q, count);
	}
	s.leaf = "o_proj.weight", s.rows = h, s.cols = q, s.split = MP_SPLIT_COLS, s.step = MP_STEP_O, s.kv_heads = 0;
	mp_inventory_add(&m->inv, &s);
	if (abias)
		hf_tensor(m, MP_ROOT_DECODER, attn, "o_proj.bias", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h,
		          count);
	s.path = mlp, s.kind = MP_TK_MLP, s.rows = f, s.cols = h, s.split = MP_SPLIT_ROWS, s.step = MP_STEP_MLP_GATE_UP;
	s.leaf = "gate_proj.weight";
	mp_inventory_add(&m->inv, &s);
	s.leaf = "up_proj.weight";
	mp_inventory_add(&m->inv, &s);
	s.leaf = "down_proj.weight", s.rows = h, s.cols = f, s.split = MP_SPLIT_COLS, s.step = MP_STEP_MLP_DOWN;
	mp_inventory_add(&m->inv, &s);
	if (mbias) {
		hf_tensor(m, MP_ROOT_DECODER, mlp, "gate_proj.bias", MP_TK_MLP, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1, f, count);
		hf_tensor(m, MP_ROOT_DECODER, mlp, "up_proj.bias", MP_TK_MLP, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1, f, count);
		hf_tensor(m, MP_ROOT_DECODER, mlp, "down_proj.bias", MP_TK_MLP, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, count);
	}
}

/*
 * HrmTextConfig (HRM-Text, configuration_hrm_text.py): vocab 151808, hidden 1536, FFN 4096, 12 heads of head_dim 128
 * (MHA: no KV-head key), 2048 positions, untied, attention_bias and mlp_bias False; two stacks (L_module, H_module) of
 * num_layers_per_stack layers each (absent: num_hidden_layers, 16), run H_cycles (2) times, each time the L stack
 * L_cycles (3) times and then the H stack once (HrmTextModel.forward). Every run of a layer keeps its own KV cache
 * slot, so the cache has num_layers_per_stack x H_cycles x (L_cycles + 1) layers (128 by default: the config class
 * sets num_hidden_layers to it when num_layers_per_stack is absent; a saved config states both, and memplan refuses
 * them when they disagree). Layers (HrmTextDecoderLayer): q, k, v, o and a sigmoid gate_proj (hidden -> heads x
 * head_dim); the gated MLP; RMSNorms without weights; z_L_init (hidden) the L stack's initial state. The stacks'
 * weights are counted once (shared_block_params) and run per cycle. Worked example (the defaults): 1,447,822,848
 * parameters, 128 cache layers.
 */
void mpm_read_hrm_text(hf_ctx *c, mp_model *m)
{
	uint64_t stack, H, L, slots, given;
	bool abias, mbias;

	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 151808);
	m->hidden_size = hf_get_u64(c, KEYS("hidden_size"), 1536);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 4096);
	m->num_heads = hf_get_u64(c, KEYS("num_attention_heads"), 12);
	m->num_kv_heads = m->num_heads;
	m->head_dim = hf_get_u64(c, KEYS("head_dim"), 128);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings"), 2048);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), false);
	abias = hf_get_bool(c, KEYS("attention_bias"), false);
	mbias = hf_get_bool(c, KEYS("mlp_bias"), false);
	H = hf_get_u64(c, KEYS("H_cycles"), 2);
	L = hf_get_u64(c, KEYS("L_cycles"), 3);
	given = hf_get_u64(c, KEYS("num_hidden_layers"), 16);
	stack = hf_get_u64(c, KEYS("num_layers_per_stack"), given);
	if (c->st != MP_OK)
		return;
	if (m->num_heads == 0 || m->hidden_size % m->num_heads) {
		/* HrmTextConfig.validate_architecture */
		hf_fail_key(c, "num_attention_heads", "hidden_size must be a multiple of num_attention_heads");
		return;
	}
	if (stack == 0 || H == 0 || L > 1024 || H > 1024 || stack > MP_MAX_LAYERS ||
	    stack * H * (L + 1) > MP_MAX_LAYERS) {
		hf_fail_key(c, "num_layers_per_stack", "num_layers_per_stack x H_cycles x (L_cycles + 1) (the cache's layers) "
		                                       "must be between 1 and 1024");
		return;
	}
	slots = stack * H * (L + 1);
	if (hf_has(c, "num_layers_per_stack") && hf_has(c, "num_hidden_layers") && given != slots) {
		hf_fail_key(c, "num_hidden_layers", "with num_layers_per_stack, num_hidden_layers must be num_layers_per_stack "
		                                    "x H_cycles x (L_cycles + 1), the cache's layers");
		return;
	}
	m->num_layers = slots;
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_GATED;
	m->norm_kind = MP_NORM_NONE;
	m->norms_per_layer = 2;
	m->final_norm = false;
	m->shared_block_params = true;
	hrm_stack(m, "L_module.layers.{i}.self_attn", "L_module.layers.{i}.mlp", abias, mbias, stack, stack * H * L);
	hrm_stack(m, "H_module.layers.{i}.self_attn", "H_module.layers.{i}.mlp", abias, mbias, stack, stack * H);
	hf_tensor(m, MP_ROOT_DECODER, NULL, "z_L_init", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, m->hidden_size, 1);
	hf_decode_rope(c, m, 1.0);
}

/* x rounded up to a multiple of m as xLSTM's configuration does it in floating point (round_up_to_next_multiple_of:
 * int(((x + m - 1) // m) * m), x a float: hidden_size x a factor). */
static uint64_t xlstm_round_up(double x, uint64_t m)
{
	double k = (x + (double)m - 1) / (double)m;

	return m ? (uint64_t)(k < 0 ? 0 : (double)(uint64_t)k) * m : (uint64_t)x;
}

/* xLSTM (modeling_xlstm.py, the native blocks): backbone.embeddings, blocks.{i}.norm_mlstm and norm_ffn (biases with
 * use_bias), the gated FFN proj_up_gate, proj_up, proj_down, backbone.out_norm; the mLSTM layer is the reader's. */
const mp_names mpm_names_xlstm = {MP_NAMES_LLAMA_FIELDS,
                                  .root = "backbone.",
                                  .embed = {"embeddings.weight", NULL},
                                  .final_norm = {"out_norm.weight", NULL},
                                  .layer = "blocks.{i}",
                                  .mlp = "blocks.{i}.ffn",
                                  .gate = {"proj_up_gate.weight", "proj_up_gate.bias"},
                                  .up = {"proj_up.weight", "proj_up.bias"},
                                  .down = {"proj_down.weight", "proj_down.bias"},
                                  .norms = {{"norm_mlstm.weight", "norm_mlstm.bias"}, {"norm_ffn.weight", "norm_ffn.bias"}}};
/*
 * xLSTMConfig (xLSTM-7B, configuration_xlstm.py): vocab 50304, hidden_size (embedding_dim) 4096, num_hidden_layers
 * (num_blocks) 32, 8 heads, untied, use_bias False, weight_mode "single"; each block: norm_mlstm, the mLSTM layer
 * (xLSTMLayer: q and k hidden -> int(hidden x qk_dim_factor 0.5), v and ogate_preact hidden -> int(hidden x
 * v_dim_factor 1.0), igate_preact and fgate_preact hidden -> heads with biases always; multihead_norm of heads x
 * (v_dim // heads); out_proj back), norm_ffn, the gated FFN of round_up(hidden x ffn_proj_factor 2.667,
 * ffn_round_up_to_multiple_of 64); out_norm; an lm_head of its own (the class ties nothing, whatever
 * tie_word_embeddings says). weight_mode "fused" is refused: transformers 5.24 cannot build it. The state
 * (xLSTMCache, in the model's dtype, no serving engine memplan knows): per layer and sequence the matrix memory C
 * (heads x qk_head_dim x v_head_dim), n (heads x qk_head_dim) and m (heads), where the head widths are the config's
 * qk_dim and v_dim (hidden x factor rounded up to 64) over the heads; the layer's widths must equal them (its forward
 * copies its state into the cache), so a factor that leaves a width off a multiple of 64 is refused.
 * Worked example (the defaults): 6,865,424,896 parameters; 8 x (256 x 512 + 256 + 1) values per layer and sequence.
 */
void mpm_read_xlstm(hf_ctx *c, mp_model *m)
{
	uint64_t h, e, layers, blocks, H, qk, v, qkr, vr, f, hd;
	double qf, vf, ff;
	bool bias, fused;
	const cJSON *wm = cJSON_GetObjectItemCaseSensitive(c->cfg, "weight_mode");
	const char *p = "blocks.{i}.mlstm_layer";
	const uint8_t D = MP_ROOT_DECODER;

	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 50304);
	/* xLSTMConfig's hidden_size and num_hidden_layers default to 4096 and 32 (not None): embedding_dim and
	 * num_blocks default to them, never the other way */
	h = hf_get_u64(c, KEYS("hidden_size"), 4096);
	e = hf_get_u64(c, KEYS("embedding_dim"), h);
	layers = hf_get_u64(c, KEYS("num_hidden_layers"), 32);
	blocks = hf_get_u64(c, KEYS("num_blocks"), layers);
	H = hf_get_u64(c, KEYS("num_heads"), 8);
	/* xLSTMForCausalLM declares no tied weights: its lm_head is its own whatever tie_word_embeddings says */
	(void)hf_get_bool(c, KEYS("tie_word_embeddings"), false);
	m->tie_word_embeddings = false;
	bias = hf_get_bool(c, KEYS("use_bias"), false);
	qf = hf_get_double(c, c->cfg, "qk_dim_factor", 0.5);
	vf = hf_get_double(c, c->cfg, "v_dim_factor", 1.0);
	ff = hf_get_double(c, c->cfg, "ffn_proj_factor", 2.667);
	f = hf_get_u64(c, KEYS("ffn_round_up_to_multiple_of"), 64);
	if (c->st != MP_OK)
		return;
	if (wm && !cJSON_IsNull(wm) &&
	    !(cJSON_IsString(wm) && (strcmp(wm->valuestring, "single") == 0 || strcmp(wm->valuestring, "fused") == 0))) {
		hf_fail_key(c, "weight_mode", "weight_mode must be \"single\" or \"fused\"");
		return;
	}
	fused = cJSON_IsString(wm) && strcmp(wm->valuestring, "fused") == 0;
	if (fused) {
		/* xLSTMPreTrainedModel._init_weights slices ifgate_preact's bias by num_heads against a 2 x heads bias */
		hf_fail_key(c, "weight_mode", "weight_mode \"fused\" is not built by transformers 5.24 (xLSTMPreTrainedModel."
		                              "_init_weights fails on ifgate_preact's bias); \"single\" is");
		return;
	}
	if (e != h || blocks != layers) {
		/* xLSTMModel builds num_blocks blocks of embedding_dim, its cache num_hidden_layers states of hidden_size */
		hf_fail_key(c, e != h ? "embedding_dim" : "num_blocks",
		            "embedding_dim must equal hidden_size and num_blocks num_hidden_layers (xLSTMModel builds the "
		            "blocks from one and the cache from the other; both default to hidden_size 4096 and 32 layers)");
		return;
	}
	if (h == 0 || h >= (UINT64_C(1) << 32) || layers == 0 || layers > MP_MAX_LAYERS || H == 0 || H > 4096 || qf <= 0 ||
	    vf <= 0 || ff <= 0 || qf > 64 || vf > 64 || ff > 64 || f == 0 || f > 65536) {
		hf_fail_key(c, "hidden_size", "hidden_size must be below 2^32, num_hidden_layers between 1 and 1024, num_heads "
		                              "between 1 and 4096, the factors in (0, 64]");
		return;
	}
	qk = (uint64_t)((double)h * qf);
	v = (uint64_t)((double)h * vf);
	qkr = xlstm_round_up((double)h * qf, 64);
	vr = xlstm_round_up((double)h * vf, 64);
	if (qk % H || v % H) {
		/* the layer splits q, k and v into num_heads heads */
		hf_fail_key(c, "num_heads", "num_heads must divide hidden_size x qk_dim_factor and hidden_size x v_dim_factor");
		return;
	}
	if (qk != qkr || v != vr) {
		hf_fail_key(c, qk != qkr ? "qk_dim_factor" : "v_dim_factor",
		            "hidden_size x qk_dim_factor and hidden_size x v_dim_factor must be multiples of 64: xLSTMLayer's "
		            "widths are them unrounded, xLSTMCache's them rounded up to 64, and the forward fails otherwise");
		return;
	}
	m->hidden_size = h;
	m->num_layers = layers;
	m->intermediate_size = xlstm_round_up((double)h * ff, f);
	m->mlp_bias = bias;
	m->num_heads = m->num_kv_heads = m->head_dim = 0;
	m->ffn_kind = MP_FFN_GATED;
	m->norm_kind = bias ? MP_NORM_LAYER : MP_NORM_RMS; /* xLSTMRMSNorm: a weight, and a bias with use_bias */
	m->norms_per_layer = 2;
	m->final_norm = true;
	m->layer_pattern = true;
	for (uint64_t i = 0; i < layers; i++)
		m->layer_flags[i] = MP_LAYER_SSM | MP_LAYER_FFN;
	m->ssm.kind = MP_SSM_LISTED;
	m->ssm.d_inner = v;
	m->ssm.listed_model_values = H * ((qkr / H) * (vr / H) + qkr / H + 1);
	m->ssm.listed_fp32_values = 0;
	m->attn_kind = MP_ATTN_GQA;
	snprintf(m->rope_type, sizeof(m->rope_type), "none");
	{
		static const char *const w[4] = {"q.weight", "k.weight", "v.weight", "ogate_preact.weight"};
		static const char *const b[4] = {"q.bias", "k.bias", "v.bias", "ogate_preact.bias"};
		static const char *const g[2] = {"igate_preact.weight", "fgate_preact.weight"};
		static const char *const gb[2] = {"igate_preact.bias", "fgate_preact.bias"};

		for (int i = 0; i < 4; i++) {
			uint64_t rows = i < 2 ? qk : v;

			hf_tensor(m, D, p, w[i], MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_MIXER_IN, false, rows, h, layers);
			if (bias)
				hf_tensor(m, D, p, b[i], MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1, rows, layers);
		}
		for (int i = 0; i < 2; i++) {
			hf_tensor(m, D, p, g[i], MP_TK_RECURRENT, MP_SPLIT_NONE, MP_STEP_MIXER_IN, false, H, h, layers);
			hf_tensor(m, D, p, gb[i], MP_TK_RECURRENT, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, H, layers);
		}
	}
	hd = v / H;
	hf_tensor(m, D, p, "multihead_norm.weight", MP_TK_RECURRENT, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, H * hd, layers);
	if (bias)
		hf_tensor(m, D, p, "multihead_norm.bias", MP_TK_RECURRENT, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, H * hd,
		          layers);
	hf_tensor(m, D, p, "out_proj.weight", MP_TK_RECURRENT, MP_SPLIT_COLS, MP_STEP_MIXER_OUT, false, h, v, layers);
	if (bias)
		hf_tensor(m, D, p, "out_proj.bias", MP_TK_RECURRENT, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, layers);
	c->names = &mpm_names_xlstm;
}

/*
 * DoryConfig (Dory, configuration_dory.py): vocab 131072, hidden 2560, FFN 7168, 36 layers (8 input, 20 recurrent, 8
 * output: n_recurrent_layers null = the rest), 16 heads, kv 4, head_dim 256, 8192 positions, untied, attention_bias
 * and mlp_bias False, sliding_window 1024; layer_types absent: layer i full when (i + 1) % 4 == 0, else sliding. A
 * released config.json lists an attention block and an "mlp" block per layer and doubles the counts: the class halves
 * them (layer_types[::2], num_hidden_layers, n_input_layers, n_recurrent_layers and n_output_layers // 2), so does
 * memplan. The recurrent layers run n_recurrent_loops (2) times per token (DoryModel.forward); with
 * recurrent_kv_cache_mode "per_loop" each loop keeps its own copy of their cache (the cache has n_input +
 * n_recurrent x loops + n_output layers), with "last_loop" only the last loop writes one. Layers (DoryDecoderLayer,
 * nGPT on the unit sphere): q, k, v, o (attention_bias) and a sigmoid gate_proj (hidden -> heads x head_dim), sqk and
 * s_gate (heads x head_dim); the gated MLP (mlp_bias) with suv_gate and suv_up (FFN); lambda_1 and lambda_2
 * (hidden); L2 norms without parameters; lm_head with a logit_scale per token (vocab). The layers' weights are
 * counted once (shared_block_params) and run per loop. Worked example (the defaults): 3,975,229,440 parameters, 56
 * cache layers (8 + 20 x 2 + 8).
 */
void mpm_read_dory(hf_ctx *c, mp_model *m)
{
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types"), *v, *mode;
	uint64_t L, in, out, rec, loops, h, q, kvw, f, step = 1, n = 0, sliding = 0, cache_layers, window;
	bool released = false, last_only = false, full[MP_MAX_LAYERS] = {false};
	const uint8_t D = MP_ROOT_DECODER;

	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 131072);
	m->hidden_size = h = hf_get_u64(c, KEYS("hidden_size"), 2560);
	m->intermediate_size = f = hf_get_u64(c, KEYS("intermediate_size"), 7168);
	L = hf_get_u64(c, KEYS("num_hidden_layers"), 36);
	m->num_heads = hf_get_u64(c, KEYS("num_attention_heads"), 16);
	m->num_kv_heads = hf_get_u64(c, KEYS("num_key_value_heads"), 4);
	m->head_dim = hf_get_u64(c, KEYS("head_dim"), 256);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings"), 8192);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), false);
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->mlp_bias = hf_get_bool(c, KEYS("mlp_bias"), false);
	window = hf_window(c, "sliding_window", 1024);
	in = hf_get_u64(c, KEYS("n_input_layers"), 8);
	out = hf_get_u64(c, KEYS("n_output_layers"), 8);
	loops = hf_get_u64(c, KEYS("n_recurrent_loops"), 2);
	mode = cJSON_GetObjectItemCaseSensitive(c->cfg, "recurrent_kv_cache_mode");
	if (c->st != MP_OK)
		return;
	if (mode && !cJSON_IsNull(mode) &&
	    !(cJSON_IsString(mode) &&
	      (strcmp(mode->valuestring, "per_loop") == 0 || strcmp(mode->valuestring, "last_loop") == 0))) {
		hf_fail_key(c, "recurrent_kv_cache_mode", "recurrent_kv_cache_mode must be \"per_loop\" or \"last_loop\"");
		return;
	}
	last_only = cJSON_IsString(mode) && strcmp(mode->valuestring, "last_loop") == 0;
	if (cJSON_IsArray(lt)) {
		cJSON_ArrayForEach(v, lt)
			if (cJSON_IsString(v) && strcmp(v->valuestring, "mlp") == 0)
				released = true;
	} else if (lt && !cJSON_IsNull(lt)) {
		hf_fail_key(c, "layer_types", "layer_types must be a list");
		return;
	}
	if (released) { /* DoryConfig.__post_init__: each (attention, mlp) pair is one layer */
		step = 2;
		L /= 2, in /= 2, out /= 2;
	}
	rec = !hf_has(c, "n_recurrent_layers") ? L - (in + out <= L ? in + out : L)
	                                           : hf_get_u64(c, KEYS("n_recurrent_layers"), 0) / step;
	if (c->st != MP_OK)
		return;
	if (in + rec + out != L || L == 0 || L > MP_MAX_LAYERS) {
		hf_fail_key(c, "n_recurrent_layers", "n_input_layers + n_recurrent_layers + n_output_layers must equal "
		                                     "num_hidden_layers (at most 1024)");
		return;
	}
	if (loops == 0 || loops > 1024) {
		hf_fail_key(c, "n_recurrent_loops", "n_recurrent_loops must be between 1 and 1024");
		return;
	}
	if (cJSON_IsArray(lt)) {
		uint64_t k = 0;

		cJSON_ArrayForEach(v, lt)
		{
			bool fa = cJSON_IsString(v) && strcmp(v->valuestring, "full_attention") == 0;
			bool sl = cJSON_IsString(v) && strcmp(v->valuestring, "sliding_attention") == 0;

			if (k++ % step)
				continue;
			if ((!fa && !sl) || n >= L) {
				hf_fail_key(c, "layer_types", "layer_types must list \"sliding_attention\" or \"full_attention\" for "
				                              "each layer (a released config: each followed by \"mlp\")");
				return;
			}
			full[n++] = fa;
		}
		if (n != L) {
			hf_fail_key(c, "layer_types", "layer_types must have one entry per layer (num_hidden_layers)");
			return;
		}
	} else {
		for (uint64_t i = 0; i < L; i++)
			full[i] = (i + 1) % 4 == 0;
	}
	cache_layers = in + out + rec * (last_only ? 1 : loops);
	if (cache_layers > MP_MAX_LAYERS) {
		hf_fail_key(c, "n_recurrent_loops", "the cache's layers (n_input + n_recurrent x loops + n_output) must be at "
		                                    "most 1024");
		return;
	}
	for (uint64_t i = 0; i < L; i++)
		sliding += !full[i] * (in <= i && i < in + rec ? (last_only ? 1 : loops) : 1);
	if (sliding && window == 0) {
		hf_fail_key(c, "sliding_window", "sliding_window must be a positive number of tokens when some layers slide");
		return;
	}
	m->num_layers = cache_layers;
	m->sliding_window = sliding ? window : 0;
	m->sliding_window_layers = sliding;
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_GATED;
	m->norm_kind = MP_NORM_NONE;
	m->norms_per_layer = 4;
	m->final_norm = false;
	m->shared_block_params = true;
	q = m->num_heads * m->head_dim, kvw = m->num_kv_heads * m->head_dim;
	{
		const char *at = "layers.{i}.self_attn", *mlp = "layers.{i}.mlp";
		uint64_t uses = in + out + rec * loops;
		mp_tensor_spec s = {.root = D, .path = at, .kind = MP_TK_ATTENTION, .view = MP_VIEW_LINEAR, .count = L,
		                    .uses = uses, .rows = q, .cols = h, .split = MP_SPLIT_ROWS, .step = MP_STEP_QKV};
		bool ab = m->qkv_bias, mb = m->mlp_bias;

		s.leaf = "q_proj.weight";
		mp_inventory_add(&m->inv, &s);
		s.leaf = "k_proj.weight", s.rows = kvw, s.split = MP_SPLIT_KV_ROWS, s.kv_heads = m->num_kv_heads;
		mp_inventory_add(&m->inv, &s);
		s.leaf = "v_proj.weight";
		mp_inventory_add(&m->inv, &s);
		s.leaf = "o_proj.weight", s.rows = h, s.cols = q, s.split = MP_SPLIT_COLS, s.step = MP_STEP_O, s.kv_heads = 0;
		mp_inventory_add(&m->inv, &s);
		s.leaf = "gate_proj.weight", s.rows = q, s.cols = h, s.split = MP_SPLIT_ROWS, s.step = MP_STEP_EXTRA;
		mp_inventory_add(&m->inv, &s);
		if (ab) {
			hf_tensor(m, D, at, "q_proj.bias", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1, q, L);
			hf_tensor(m, D, at, "k_proj.bias", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1, kvw, L);
			hf_tensor(m, D, at, "v_proj.bias", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1, kvw, L);
			hf_tensor(m, D, at, "o_proj.bias", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
		}
		hf_tensor(m, D, at, "sqk", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, q, L);
		hf_tensor(m, D, at, "s_gate", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, q, L);
		s.path = mlp, s.kind = MP_TK_MLP, s.rows = f, s.cols = h, s.split = MP_SPLIT_ROWS, s.step = MP_STEP_MLP_GATE_UP;
		s.leaf = "gate_proj.weight";
		mp_inventory_add(&m->inv, &s);
		s.leaf = "up_proj.weight";
		mp_inventory_add(&m->inv, &s);
		s.leaf = "down_proj.weight", s.rows = h, s.cols = f, s.split = MP_SPLIT_COLS, s.step = MP_STEP_MLP_DOWN;
		mp_inventory_add(&m->inv, &s);
		if (mb) {
			hf_tensor(m, D, mlp, "gate_proj.bias", MP_TK_MLP, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1, f, L);
			hf_tensor(m, D, mlp, "up_proj.bias", MP_TK_MLP, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1, f, L);
			hf_tensor(m, D, mlp, "down_proj.bias", MP_TK_MLP, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
		}
		hf_tensor(m, D, mlp, "suv_gate", MP_TK_MLP, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1, f, L);
		hf_tensor(m, D, mlp, "suv_up", MP_TK_MLP, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1, f, L);
		hf_tensor(m, D, "layers.{i}", "lambda_1", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
		hf_tensor(m, D, "layers.{i}", "lambda_2", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
		hf_tensor(m, MP_ROOT_TOP, "lm_head", "logit_scale", MP_TK_LM_HEAD, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1,
		          m->vocab_size, 1);
	}
	hf_decode_rope(c, m, 1.0);
	m->rotary_buffer_sets = 2;
}
