/*
 * hf_gemma.c: the Gemma decoders whose layers differ from one another: Gemma 4 (gemma4, gemma4_text) and Gemma 3n
 * (gemma3n, gemma3n_text). Their attention differs per layer (Gemma 4's full-attention layers have heads of their own
 * width, per_layer_config; both share the KV cache of earlier layers in their last num_kv_shared_layers layers), and
 * they add modules no other decoder has (per-layer token embeddings, Gemma 4's MoE block beside the MLP, Gemma 3n's
 * AltUp and LAuReL), described by their shapes in mp_model.extra. Defaults are transformers 5.24's
 * configuration_gemma4.py and configuration_gemma3n.py; the modules are modeling_gemma4.py's and modeling_gemma3n.py's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hf_internal.h"


/*
 * layer_types of a Gemma decoder: the list (each "sliding_attention" or "full_attention"), or, absent or null, the
 * class's pattern: layer i slides unless (i + 1) % pattern == 0 (Gemma4TextConfig: 6, "5:1"; Gemma3nTextConfig: 5).
 * Gemma 4 forces its last layer to full attention (Gemma4TextConfig.__post_init__). Sets MP_LAYER_WINDOW per layer and
 * sliding_window_layers.
 */
static void gemma_layer_types(hf_ctx *c, mp_model *m, uint64_t pattern, bool last_full)
{
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types"), *v;
	uint64_t n = 0;

	for (uint64_t i = 0; i < m->num_layers; i++)
		m->layer_flags[i] = MP_LAYER_ATTENTION | MP_LAYER_FFN | ((i + 1) % pattern ? MP_LAYER_WINDOW : 0);
	if (lt != NULL && !cJSON_IsNull(lt)) {
		if (!cJSON_IsArray(lt) || (uint64_t)cJSON_GetArraySize(lt) != m->num_layers) {
			hf_fail_key(c, "layer_types",
			            "layer_types must be a list of \"sliding_attention\" or \"full_attention\", one entry per "
			            "layer (num_hidden_layers)");
			return;
		}
		cJSON_ArrayForEach(v, lt)
		{
			if (!cJSON_IsString(v) || (strcmp(v->valuestring, "sliding_attention") != 0 &&
			                           strcmp(v->valuestring, "full_attention") != 0)) {
				hf_fail_key(c, "layer_types",
				            "layer_types entries must be \"sliding_attention\" or \"full_attention\"");
				return;
			}
			m->layer_flags[n] = MP_LAYER_ATTENTION | MP_LAYER_FFN |
			                    (v->valuestring[0] == 's' ? MP_LAYER_WINDOW : 0);
			n++;
		}
	}
	if (last_full && m->num_layers)
		m->layer_flags[m->num_layers - 1] &= (uint8_t)~MP_LAYER_WINDOW;
	m->sliding_window_layers = 0;
	for (uint64_t i = 0; i < m->num_layers; i++)
		m->sliding_window_layers += (m->layer_flags[i] & MP_LAYER_WINDOW) != 0;
	if (m->sliding_window_layers == 0)
		m->sliding_window = 0;
}

/*
 * num_kv_shared_layers: the last n layers reuse the K and V of the last earlier layer of their kind (Gemma4TextConfig.
 * kv_sharing_modes; Gemma3nTextAttention: first_kv_shared_layer_idx = layers - n, each shared layer reads the last
 * non-shared layer of its layer type). Every kind of layer among the shared ones needs a producer before them;
 * transformers refuses the config otherwise ("The set of layer types producing a cache is different..."), so does
 * memplan (422 naming the key). Sets MP_LAYER_KV_SHARED and no_kv_layers.
 */
static void gemma_kv_shared(hf_ctx *c, mp_model *m, uint64_t shared)
{
	uint64_t first;
	bool kinds_before[2] = {false, false}, kinds_all[2] = {false, false};

	if (c->st != MP_OK)
		return;
	if (shared >= m->num_layers && shared > 0) {
		hf_fail_key(c, "num_kv_shared_layers",
		            "num_kv_shared_layers must be less than num_hidden_layers: some layers must keep the KV cache "
		            "the others reuse");
		return;
	}
	first = m->num_layers - shared;
	for (uint64_t i = 0; i < m->num_layers; i++) {
		int kind = (m->layer_flags[i] & MP_LAYER_WINDOW) ? 1 : 0;

		kinds_all[kind] = true;
		if (i < first)
			kinds_before[kind] = true;
	}
	if (shared && (kinds_all[0] != kinds_before[0] || kinds_all[1] != kinds_before[1])) {
		hf_fail_key(c, "num_kv_shared_layers",
		            "every kind of layer (sliding_attention, full_attention) among the last num_kv_shared_layers "
		            "layers needs a layer of its kind before them whose KV cache it reuses");
		return;
	}
	for (uint64_t i = first; i < m->num_layers; i++)
		m->layer_flags[i] |= MP_LAYER_KV_SHARED;
	m->no_kv_layers = shared;
}

/* The per-layer token embeddings (PLE) of Gemma 4 and Gemma 3n (Gemma4TextModel, Gemma3nTextModel): a table of
 * vocab_size_per_layer_input x (layers x ple), its projection from the hidden state (hidden -> layers x ple) and the
 * projection's RMSNorm (ple); per layer the input gate (hidden -> ple), the projection back (ple -> hidden) and
 * post_per_layer_input_norm (hidden, counted with the layer's norms). */
static void gemma_ple(hf_ctx *c, mp_model *m, uint64_t vocab_pl, uint64_t ple)
{
	uint64_t width = hf_mul(c, m->num_layers, ple, "hidden_size_per_layer_input"), h = m->hidden_size, L = m->num_layers;
	const uint8_t R = MP_ROOT_DECODER;

	if (ple == 0 || c->st != MP_OK)
		return;
	hf_tensor(m, R, NULL, "embed_tokens_per_layer.weight", MP_TK_EMBEDDING, MP_SPLIT_NONE, MP_STEP_NONE, false,
	          vocab_pl, width, 1);
	hf_tensor(m, R, NULL, "per_layer_model_projection.weight", MP_TK_MLP, MP_SPLIT_NONE, MP_STEP_EXTRA, false, width,
	          h, 1);
	hf_tensor(m, R, NULL, "per_layer_projection_norm.weight", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, ple, 1);
	hf_tensor(m, R, "layers.{i}", "per_layer_input_gate.weight", MP_TK_MLP, MP_SPLIT_NONE, MP_STEP_EXTRA, false, ple,
	          h, L);
	hf_tensor(m, R, "layers.{i}", "per_layer_projection.weight", MP_TK_MLP, MP_SPLIT_NONE, MP_STEP_EXTRA, false, h,
	          ple, L);
	m->norms_per_layer++; /* post_per_layer_input_norm (the names' fifth norm) */
}

/* A dense gated MLP of width f in `count` layers (Gemma4TextMLP, Gemma3nTextMLP): gate_proj and up_proj (hidden ->
 * f), down_proj (f -> hidden). */
static void gemma_mlp(mp_model *m, uint64_t f, uint64_t count)
{
	mp_tensor_spec s = {.root = MP_ROOT_DECODER, .path = "layers.{i}.mlp", .kind = MP_TK_MLP, .view = MP_VIEW_LINEAR,
	                    .split = MP_SPLIT_ROWS, .step = MP_STEP_MLP_GATE_UP, .rows = f, .cols = m->hidden_size,
	                    .count = count};

	s.leaf = "gate_proj.weight";
	mp_inventory_add(&m->inv, &s);
	s.leaf = "up_proj.weight";
	mp_inventory_add(&m->inv, &s);
	s.leaf = "down_proj.weight", s.rows = m->hidden_size, s.cols = f, s.split = MP_SPLIT_COLS, s.step = MP_STEP_MLP_DOWN;
	mp_inventory_add(&m->inv, &s);
}

static bool int_list(hf_ctx *c, const char *key, size_t n, const uint64_t *dflt, uint64_t *out);

/* The layer index of a per_layer_config key: "05" or "5" (Gemma4TextConfig serialises them zero-padded). */
static bool layer_index(const char *s, uint64_t layers, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (s[0] < '0' || s[0] > '9')
		return false;
	v = strtoull(s, &end, 10);
	if (*end != '\0' || v >= layers)
		return false;
	*out = v;
	return true;
}

/*
 * Gemma 4's per-layer attention widths. per_layer_config (PreTrainedConfig's heterogeneous layers, transformers 5.24
 * integrations/heterogeneity): {"<layer>": {"head_dim": d, "num_key_value_heads": kv}, ...}, the overrides of the
 * global values for those layers. Absent, Gemma4TextConfig builds it: every full-attention layer gets head_dim
 * global_head_dim (512 when absent) and, with attention_k_eq_v, num_key_value_heads num_global_key_value_heads when
 * that is given. The layers whose widths differ from the global ones are MP_LAYER_GLOBAL; they must all have the same
 * widths (two kinds of attention are modelled), and overrides other than these two keys are refused.
 */
static void gemma4_widths(hf_ctx *c, mp_model *m, bool k_eq_v)
{
	const cJSON *plc = cJSON_GetObjectItemCaseSensitive(c->cfg, "per_layer_config"), *e, *v;
	char pointer[128];
	uint64_t gd = 0, gkv = 0;
	bool any = false;

	if (c->st != MP_OK)
		return;
	if (plc == NULL || cJSON_IsNull(plc)) {
		gd = hf_get_u64(c, KEYS("global_head_dim"), 512);
		gkv = k_eq_v && hf_has(c, "num_global_key_value_heads")
		          ? hf_get_u64(c, KEYS("num_global_key_value_heads"), m->num_kv_heads)
		          : m->num_kv_heads;
		for (uint64_t i = 0; i < m->num_layers; i++)
			if (!(m->layer_flags[i] & MP_LAYER_WINDOW) && (gd != m->head_dim || gkv != m->num_kv_heads)) {
				m->layer_flags[i] |= MP_LAYER_GLOBAL;
				any = true;
			}
		goto done;
	}
	if (!cJSON_IsObject(plc)) {
		hf_fail_key(c, "per_layer_config",
		            "per_layer_config must be an object of layer index -> {\"head_dim\", \"num_key_value_heads\"}");
		return;
	}
	cJSON_ArrayForEach(e, plc)
	{
		uint64_t i, d = m->head_dim, kv = m->num_kv_heads;
		hf_ctx sub;

		snprintf(pointer, sizeof(pointer), "%s/per_layer_config/%.20s", c->pointer, e->string);
		sub = (hf_ctx){e, pointer, c->err, c->st, NULL, NULL, c->decode_type};
		if (!layer_index(e->string, m->num_layers, &i) || !cJSON_IsObject(e)) {
			hf_fail_key(c, "per_layer_config",
			            "per_layer_config keys must be layer indices below num_hidden_layers, each an object of "
			            "overrides");
			return;
		}
		cJSON_ArrayForEach(v, e)
		{
			if (strcmp(v->string, "head_dim") != 0 && strcmp(v->string, "num_key_value_heads") != 0) {
				char msg[200];

				snprintf(msg, sizeof(msg),
				         "a per-layer %.40s is not modelled: memplan reads head_dim and num_key_value_heads "
				         "per layer",
				         v->string);
				hf_fail_key(&sub, v->string, msg);
				c->st = sub.st;
				return;
			}
		}
		d = hf_get_u64(&sub, KEYS("head_dim"), d);
		kv = hf_get_u64(&sub, KEYS("num_key_value_heads"), kv);
		c->st = sub.st;
		if (c->st != MP_OK)
			return;
		if (d == m->head_dim && kv == m->num_kv_heads)
			continue; /* an override equal to the global value is none (transformers drops it) */
		if (any && (d != gd || kv != gkv)) {
			hf_fail_key(c, "per_layer_config",
			            "per_layer_config gives more than one set of widths different from the global "
			            "head_dim and num_key_value_heads; memplan models two kinds of attention layer");
			return;
		}
		gd = d;
		gkv = kv;
		any = true;
		m->layer_flags[i] |= MP_LAYER_GLOBAL;
	}
done:
	m->global_head_dim = any ? gd : 0;
	m->global_kv_heads = any ? gkv : 0;
	m->global_k_eq_v = k_eq_v;
	if (k_eq_v && !any) {
		/* attention_k_eq_v applies to the full-attention layers: give them the global widths explicitly */
		for (uint64_t i = 0; i < m->num_layers; i++)
			if (!(m->layer_flags[i] & MP_LAYER_WINDOW))
				m->layer_flags[i] |= MP_LAYER_GLOBAL;
		m->global_head_dim = m->head_dim;
		m->global_kv_heads = m->num_kv_heads;
	} else if (k_eq_v) {
		/* k_eq_v is the full-attention layers' (use_alternative_attention = attention_k_eq_v and not sliding):
		 * a full layer without an override has the global widths but still no v_proj */
		for (uint64_t i = 0; i < m->num_layers; i++)
			if (!(m->layer_flags[i] & MP_LAYER_WINDOW) && !(m->layer_flags[i] & MP_LAYER_GLOBAL) &&
			    (gd != m->head_dim || gkv != m->num_kv_heads)) {
				hf_fail_key(c, "per_layer_config",
				            "with attention_k_eq_v every full-attention layer must have the same widths");
				return;
			}
	}
	for (uint64_t i = 0; i < m->num_layers; i++)
		if ((m->layer_flags[i] & MP_LAYER_GLOBAL) && (m->layer_flags[i] & MP_LAYER_WINDOW) && k_eq_v) {
			hf_fail_key(c, "per_layer_config",
			            "with attention_k_eq_v, a sliding-window layer with its own widths is not modelled");
			return;
		}
}

/*
 * Gemma4TextConfig (transformers 5.24, configuration_gemma4.py): vocab 262144, hidden 2304, intermediate 9216, 30
 * layers, 8 heads, 4 KV heads of head_dim 256, 131072 positions, tied, attention_bias False, sliding_window 512 on 5
 * layers of 6 (the last always full), the full layers' heads of global_head_dim 512 (per_layer_config), per-layer
 * token embeddings of 256 per layer over 262144 tokens, attention_k_eq_v False, num_kv_shared_layers 0, no MoE block,
 * use_double_wide_mlp False. Modules (modeling_gemma4.py): Gemma4TextAttention (q_norm, k_norm, v_norm without a
 * weight), Gemma4TextMLP (gated; twice as wide in the KV-shared layers with use_double_wide_mlp), four norms per layer
 * (+ post_per_layer_input_norm with PLE, + three with the MoE block), the MoE block beside the MLP in every layer
 * (Gemma4TextRouter: proj hidden -> experts, scale of hidden, per_expert_scale of experts; Gemma4TextExperts: gate_up
 * and down of moe_intermediate_size), layer_scalar a buffer. use_bidirectional_attention "all" narrows the window to
 * window / 2 + 1 (the config class's conversion). Worked example (the defaults): 5,077,177,856 parameters.
 */
/* The defaults where Gemma 4's text configuration classes differ, and whether the class has per-layer embeddings and
 * the MoE block at all (Gemma4UnifiedTextConfig removes their keys: its model builds neither). */
typedef struct gemma4_class {
	uint64_t sliding_window, max_positions;
	bool ple_and_moe;
} gemma4_class;

static void gemma4_text(hf_ctx *c, mp_model *m, const gemma4_class *k);

void mpm_read_gemma4_text(hf_ctx *c, mp_model *m)
{
	static const gemma4_class k = {512, 131072, true};

	gemma4_text(c, m, &k);
}

/*
 * Gemma4UnifiedTextConfig (transformers 5.24, configuration_gemma4_unified.py: a Gemma4TextConfig): Gemma4TextConfig's
 * defaults but sliding_window 1024 and 262144 positions, and no per-layer embeddings and no MoE block
 * (vocab_size_per_layer_input, hidden_size_per_layer_input, enable_moe_block, num_experts, top_k_experts and
 * moe_intermediate_size are removed from the class; Gemma4UnifiedTextModel builds neither, whatever a config says).
 * The layers are Gemma 4's (Gemma4UnifiedTextDecoderLayer: Gemma4TextAttention, Gemma4TextMLP, four norms,
 * layer_scalar). Worked example (the defaults): 3,010,758,400 parameters, tests/ref/hf gemma4_unified_text-default.
 */
void mpm_read_gemma4_unified_text(hf_ctx *c, mp_model *m)
{
	static const gemma4_class k = {1024, 262144, false};

	gemma4_text(c, m, &k);
}

static void gemma4_text(hf_ctx *c, mp_model *m, const gemma4_class *k)
{
	const cJSON *bidi = cJSON_GetObjectItemCaseSensitive(c->cfg, "use_bidirectional_attention");
	uint64_t ple = 0, vocab_pl = 0, shared;
	bool k_eq_v, moe = false;

	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 262144);
	m->hidden_size = hf_get_u64(c, KEYS("hidden_size"), 2304);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 9216);
	m->num_layers = hf_get_u64(c, KEYS("num_hidden_layers"), 30);
	m->num_heads = hf_get_u64(c, KEYS("num_attention_heads"), 8);
	m->num_kv_heads = hf_get_u64(c, KEYS("num_key_value_heads"), 4);
	m->head_dim = hf_get_u64(c, KEYS("head_dim"), 256);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings"), k->max_positions);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), true);
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->sliding_window = hf_window(c, "sliding_window", k->sliding_window);
	if (bidi && !cJSON_IsNull(bidi) &&
	    (!cJSON_IsString(bidi) || (strcmp(bidi->valuestring, "all") != 0 && strcmp(bidi->valuestring, "vision") != 0)))
		hf_fail_key(c, "use_bidirectional_attention", "use_bidirectional_attention must be \"all\", \"vision\" or null");
	else if (cJSON_IsString(bidi) && strcmp(bidi->valuestring, "all") == 0 && m->sliding_window)
		m->sliding_window = m->sliding_window / 2 + 1;
	if (k->ple_and_moe) {
		ple = hf_get_u64(c, KEYS("hidden_size_per_layer_input"), 256);
		vocab_pl = hf_get_u64(c, KEYS("vocab_size_per_layer_input"), 262144);
		moe = hf_get_bool(c, KEYS("enable_moe_block"), false);
	}
	k_eq_v = hf_get_bool(c, KEYS("attention_k_eq_v"), false);
	shared = hf_get_u64(c, KEYS("num_kv_shared_layers"), 0);
	m->final_logit_softcapping = hf_has(c, "final_logit_softcapping");
	if (c->st != MP_OK)
		return;
	if (m->num_layers == 0 || m->num_layers > MP_MAX_LAYERS) {
		hf_fail_key(c, "num_hidden_layers", "num_hidden_layers must be between 1 and 1024");
		return;
	}
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_GATED;
	m->norm_kind = MP_NORM_RMS;
	m->final_norm = true;
	m->qk_norm = true;
	m->norms_per_layer = 4;
	m->layer_pattern = true;
	m->attn_per_layer = true;
	gemma_layer_types(c, m, 6, true);
	gemma4_widths(c, m, k_eq_v);
	gemma_kv_shared(c, m, shared);
	gemma_ple(c, m, vocab_pl, ple);
	/* Gemma4TextMLP: intermediate_size x 2 in the KV-shared layers with use_double_wide_mlp */
	if (c->st == MP_OK) {
		uint64_t wide = hf_get_bool(c, KEYS("use_double_wide_mlp"), false) ? shared : 0;

		m->own_mlp = true;
		gemma_mlp(m, m->intermediate_size, m->num_layers - wide);
		gemma_mlp(m, hf_mul(c, 2, m->intermediate_size, "intermediate_size"), wide);
	}
	if (moe && c->st == MP_OK) {
		static const char *const need[] = {"num_experts", "top_k_experts", "moe_intermediate_size"};

		for (size_t i = 0; i < 3; i++)
			if (!hf_has(c, need[i])) {
				hf_fail_key(c, need[i], "enable_moe_block needs num_experts, top_k_experts and "
				                         "moe_intermediate_size (Gemma4TextConfig's defaults are null)");
				return;
			}
		m->num_experts = hf_get_u64(c, KEYS("num_experts"), 0);
		m->num_experts_per_tok = hf_get_u64(c, KEYS("top_k_experts"), 0);
		m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), 0);
		m->moe_beside_dense = true;
		m->norms_per_layer += 3;
		hf_tensor(m, MP_ROOT_DECODER, "layers.{i}", "router.scale", MP_TK_EXPERT, MP_SPLIT_NONE, MP_STEP_NONE, true,
		          1, m->hidden_size, m->num_layers);
		hf_tensor(m, MP_ROOT_DECODER, "layers.{i}", "router.per_expert_scale", MP_TK_EXPERT, MP_SPLIT_NONE,
		          MP_STEP_NONE, true, 1, m->num_experts, m->num_layers);
	}
	{
		/* layer_scalar: a buffer of one value per layer */
		const uint64_t one[1] = {1};

		hf_shape(m, MP_ROOT_DECODER, "layers.{i}", "layer_scalar", MP_TK_NORM, MP_TF_BUFFER, one, 1, m->num_layers);
	}
	c->names = &mpm_names_gemma4[(ple ? 1 : 0) + (moe ? 2 : 0)];
	hf_decode_rope(c, m, 1.0);
	/* "proportional" RoPE is the full layers' partial rotation (partial_rotary_factor), not a context scaling;
	 * transformers' two rotary modules (sliding, full) each keep inv_freq pairs */
	if (strcmp(m->rope_type, "proportional") == 0) {
		m->rope_scaling = false;
		m->rope_scaled_max_position = 0;
	}
	m->rotary_dim = m->head_dim;
	m->rotary_buffer_sets = 2;
}

/*
 * Gemma4VisionConfig's tower (Gemma4VisionModel, modeling_gemma4.py), when vision_config is not null: the patch
 * embedder (input_proj 3 x patch^2 -> hidden, position_embedding_table 2 x position_embedding_size x hidden), per
 * layer q (heads x head_dim), k and v (kv heads x head_dim) and o without biases (Gemma4ClippableLinear), q_norm and
 * k_norm of head_dim (v_norm has no weight), a gated MLP of intermediate_size and four norms; the pooler and the
 * standardize scales hold no parameters (buffers). Its embedder projects hidden into the decoder's width (the norm
 * before it has no weight). Worked example (the class defaults: 768 wide, 16 layers, 12 heads of 64, MLP 3072, patch
 * 16, 10240 positions): 15,728,640 + 589,824 + 16 x 9,440,384 = 167,364,608, + 1,769,472 for the embedder into 2304.
 */
static void gemma4_vision(hf_ctx *top, mp_model *m, uint64_t text_hidden)
{
	char pointer[MP_POINTER_MAX];
	hf_ctx c;
	uint64_t h, layers, heads, kv, hd, inter, patch, pos;

	if (!hf_has(top, "vision_config") || !hf_sub_config(top, "vision_config", pointer, sizeof(pointer), &c))
		return;
	h = hf_get_u64(&c, KEYS("hidden_size"), 768);
	layers = hf_get_u64(&c, KEYS("num_hidden_layers"), 16);
	heads = hf_get_u64(&c, KEYS("num_attention_heads"), 12);
	kv = hf_get_u64(&c, KEYS("num_key_value_heads"), 12);
	hd = hf_get_u64(&c, KEYS("head_dim"), 64);
	inter = hf_get_u64(&c, KEYS("intermediate_size"), 3072);
	patch = hf_get_u64(&c, KEYS("patch_size"), 16);
	pos = hf_get_u64(&c, KEYS("position_embedding_size"), 10240);
	if (c.st == MP_OK && hf_get_bool(&c, KEYS("attention_bias"), false))
		hf_fail_key(&c, "attention_bias", "Gemma 4's vision tower has no biases (Gemma4ClippableLinear)");
	if (c.st == MP_OK && (h > (UINT64_C(1) << 24) || layers > 1024 || heads > 4096 || kv > 4096 || hd > 65536 ||
	                      inter > (UINT64_C(1) << 24) || patch > 1024 || pos > (UINT64_C(1) << 24)))
		hf_fail_key(&c, "hidden_size", "the vision tower's sizes are out of range");
	if (c.st == MP_OK) {
		const uint8_t T = MP_ROOT_TOWER, P = MP_ROOT_PROJECTOR;
		const char *at = "encoder.layers.{i}.self_attn", *mlp = "encoder.layers.{i}.mlp", *ly = "encoder.layers.{i}";
		const uint64_t table[3] = {2, pos, h};
		static const char *const norms[4] = {"input_layernorm.weight", "post_attention_layernorm.weight",
		                                     "pre_feedforward_layernorm.weight", "post_feedforward_layernorm.weight"};

		mp_inventory_root(&m->inv, T, "model.vision_tower.");
		mp_inventory_root(&m->inv, P, "model.");
		hf_shape(m, T, "patch_embedder", "position_embedding_table", MP_TK_VISION, 0, table, 3, 1);
		hf_tensor(m, T, "patch_embedder", "input_proj.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, h,
		          3 * patch * patch, 1);
		hf_tensor(m, T, at, "q_proj.linear.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, heads * hd, h,
		          layers);
		hf_tensor(m, T, at, "k_proj.linear.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, kv * hd, h,
		          layers);
		hf_tensor(m, T, at, "v_proj.linear.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, kv * hd, h,
		          layers);
		hf_tensor(m, T, at, "o_proj.linear.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, h, heads * hd,
		          layers);
		hf_tensor(m, T, at, "q_norm.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, hd, layers);
		hf_tensor(m, T, at, "k_norm.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, hd, layers);
		hf_tensor(m, T, mlp, "gate_proj.linear.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, inter, h,
		          layers);
		hf_tensor(m, T, mlp, "up_proj.linear.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, inter, h,
		          layers);
		hf_tensor(m, T, mlp, "down_proj.linear.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, h, inter,
		          layers);
		for (int i = 0; i < 4; i++)
			hf_tensor(m, T, ly, norms[i], MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, layers);
		hf_tensor(m, P, "embed_vision", "embedding_projection.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE,
		          false, text_hidden, h, 1);
	}
	top->st = c.st;
}

/*
 * Gemma4AudioConfig's conformer (Gemma4AudioModel), when audio_config is not null: the subsampling projection (two
 * 3 x 3 Conv2d of subsampling_conv_channels without bias, each with a LayerNorm weight of its channels;
 * input_proj_linear from (channels[0] / 4) x channels[1], as the class computes it, to hidden); per layer q, k, v,
 * post and relative_k_proj (hidden x hidden), per_dim_scale (hidden / heads), two feed-forward halves (hidden -> 4
 * hidden -> hidden, two norms each), the light conv (linear_start hidden -> 2 hidden, a depthwise conv of
 * conv_kernel_size, linear_end, two norms) and three norms; output_proj hidden -> output_proj_dims with a bias. Its
 * embedder projects output_proj_dims into the decoder's width. Worked example (the class defaults: 1024 wide, 12
 * layers, 8 heads, kernel 5, channels 128 and 32, 1536 out): 12 x 25,180,288 + 1,086,752 + 1,574,400 = 304,824,608,
 * + 3,538,944 for the embedder into 2304.
 */
/* The tensors of Gemma4AudioModel (the clipped linears' input and output bounds are scalar buffers, four per linear). */
static void gemma4_audio_tensors(mp_model *m, uint64_t h, uint64_t layers, uint64_t heads, uint64_t k, uint64_t out,
                                 const uint64_t chan[2], uint64_t text_hidden)
{
	static const char *const linears[10][2] = {
	    {"layers.{i}.feed_forward1.ffw_layer_1", "up"},  {"layers.{i}.feed_forward1.ffw_layer_2", "down"},
	    {"layers.{i}.feed_forward2.ffw_layer_1", "up"},  {"layers.{i}.feed_forward2.ffw_layer_2", "down"},
	    {"layers.{i}.lconv1d.linear_start", "start"},    {"layers.{i}.lconv1d.linear_end", "square"},
	    {"layers.{i}.self_attn.q_proj", "square"},       {"layers.{i}.self_attn.k_proj", "square"},
	    {"layers.{i}.self_attn.v_proj", "square"},       {"layers.{i}.self_attn.post", "square"}};
	static const char *const bounds[4] = {"input_max", "input_min", "output_max", "output_min"};
	static const char *const norms[] = {
	    "layers.{i}.feed_forward1.pre_layer_norm.weight", "layers.{i}.feed_forward1.post_layer_norm.weight",
	    "layers.{i}.feed_forward2.pre_layer_norm.weight", "layers.{i}.feed_forward2.post_layer_norm.weight",
	    "layers.{i}.lconv1d.pre_layer_norm.weight",       "layers.{i}.lconv1d.conv_norm.weight",
	    "layers.{i}.norm_pre_attn.weight",                "layers.{i}.norm_post_attn.weight",
	    "layers.{i}.norm_out.weight"};
	const uint8_t A = MP_ROOT_EXTRA, P = MP_ROOT_PROJECTOR;
	const uint64_t conv[3] = {h, 1, k}, c0[4] = {chan[0], 1, 3, 3}, c1[4] = {chan[1], chan[0], 3, 3}, none[1] = {0};

	mp_inventory_root(&m->inv, A, "model.audio_tower.");
	mp_inventory_root(&m->inv, P, "model.");
	for (int i = 0; i < 10; i++) {
		const char *kind = linears[i][1];
		uint64_t rows = strcmp(kind, "up") == 0 ? 4 * h : strcmp(kind, "start") == 0 ? 2 * h : h;
		uint64_t cols = strcmp(kind, "down") == 0 ? 4 * h : h;

		hf_tensor(m, A, linears[i][0], "linear.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, rows, cols,
		          layers);
		for (int b = 0; b < 4; b++)
			hf_shape(m, A, linears[i][0], bounds[b], MP_TK_VISION, MP_TF_BUFFER, none, 0, layers);
	}
	hf_tensor(m, A, "layers.{i}.self_attn", "relative_k_proj.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false,
	          h, h, layers);
	hf_tensor(m, A, "layers.{i}.self_attn", "per_dim_scale", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
	          h / heads, layers);
	hf_shape(m, A, "layers.{i}.lconv1d", "depthwise_conv1d.weight", MP_TK_VISION, 0, conv, 3, layers);
	for (size_t i = 0; i < sizeof(norms) / sizeof(norms[0]); i++)
		hf_tensor(m, A, NULL, norms[i], MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, layers);
	hf_shape(m, A, "subsample_conv_projection.layer0", "conv.weight", MP_TK_VISION, 0, c0, 4, 1);
	hf_tensor(m, A, "subsample_conv_projection.layer0", "norm.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true,
	          1, chan[0], 1);
	hf_shape(m, A, "subsample_conv_projection.layer1", "conv.weight", MP_TK_VISION, 0, c1, 4, 1);
	hf_tensor(m, A, "subsample_conv_projection.layer1", "norm.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true,
	          1, chan[1], 1);
	hf_tensor(m, A, "subsample_conv_projection", "input_proj_linear.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE,
	          false, h, chan[0] / 4 * chan[1], 1);
	hf_tensor(m, A, NULL, "output_proj.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, out, h, 1);
	hf_tensor(m, A, NULL, "output_proj.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, out, 1);
	hf_tensor(m, P, "embed_audio", "embedding_projection.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false,
	          text_hidden, out, 1);
}

static void gemma4_audio(hf_ctx *top, mp_model *m, uint64_t text_hidden)
{
	static const uint64_t chan_d[2] = {128, 32};
	char pointer[MP_POINTER_MAX];
	hf_ctx c;
	uint64_t h, layers, heads, k, out, chan[2];

	if (!hf_has(top, "audio_config") || !hf_sub_config(top, "audio_config", pointer, sizeof(pointer), &c))
		return;
	h = hf_get_u64(&c, KEYS("hidden_size"), 1024);
	layers = hf_get_u64(&c, KEYS("num_hidden_layers"), 12);
	heads = hf_get_u64(&c, KEYS("num_attention_heads"), 8);
	k = hf_get_u64(&c, KEYS("conv_kernel_size"), 5);
	out = hf_get_u64(&c, KEYS("output_proj_dims"), 1536);
	if (c.st == MP_OK && (h == 0 || heads == 0 || h % heads != 0 || h > (UINT64_C(1) << 24)))
		hf_fail_key(&c, "num_attention_heads", "num_attention_heads must divide hidden_size (below 2^24) into heads");
	if (c.st == MP_OK && (layers > 1024 || k > 1024 || out > (UINT64_C(1) << 24)))
		hf_fail_key(&c, "num_hidden_layers", "the audio tower's sizes are out of range");
	if (c.st == MP_OK && int_list(&c, "subsampling_conv_channels", 2, chan_d, chan))
		gemma4_audio_tensors(m, h, layers, heads, k, out, chan, text_hidden);
	top->st = c.st;
}

/*
 * Gemma4Config: text_config (Gemma4TextConfig; absent = its defaults), tie_word_embeddings True (the wrapper's),
 * vision_config and audio_config optional (null by default: no tower), each counted in `vision` when given.
 * Worked example (both towers at their class defaults beside the default decoder): 477,497,632 tower parameters.
 */
/*
 * The wrapper both Gemma 4 and Gemma 3n are: text_config (absent or null: its class's defaults; else an object
 * whose model_type, when given, is text_type) read by decode_text under "/text_config", then the towers (towers,
 * reading the wrapper's config at the decoder's width), model_type set to wrapper_type, the wrapper's
 * tie_word_embeddings (True by default). Errors name the key, as every reader's.
 */
static void decode_gemma_wrapper(hf_ctx *c, mp_model *m, const char *wrapper_type, const char *text_type,
				 void (*decode_text)(hf_ctx *, mp_model *), void (*towers)(hf_ctx *, mp_model *))
{
	const cJSON *tc = cJSON_GetObjectItemCaseSensitive(c->cfg, "text_config"), *tt;
	char pointer[MP_POINTER_MAX], msg[96];
	hf_ctx t;

	if (tc && !cJSON_IsNull(tc) && !cJSON_IsObject(tc)) {
		hf_fail_key(c, "text_config", "text_config must be an object (the decoder's config)");
		return;
	}
	snprintf(pointer, sizeof(pointer), "%s%s", c->pointer, cJSON_IsObject(tc) ? "/text_config" : "");
	/* t.cfg NULL (no text_config): every decoder key takes its class default */
	t = (hf_ctx){cJSON_IsObject(tc) ? tc : NULL, pointer, c->err, c->st, NULL, NULL, c->decode_type};
	tt = t.cfg ? cJSON_GetObjectItemCaseSensitive(t.cfg, "model_type") : NULL;
	if (tt && !(cJSON_IsString(tt) && strcmp(tt->valuestring, text_type) == 0)) {
		snprintf(msg, sizeof(msg), "a %s config's text_config is a %s decoder", wrapper_type, text_type);
		hf_fail_key(&t, "model_type", msg);
		c->st = t.st;
		return;
	}
	decode_text(&t, m);
	c->st = t.st;
	c->names = t.names;
	if (c->st != MP_OK)
		return;
	m->inv.roots[MP_ROOT_DECODER] = "model.language_model."; /* Gemma4Model, Gemma3nModel */
	towers(c, m);
	if (c->st != MP_OK)
		return;
	snprintf(m->model_type, sizeof(m->model_type), "%s", wrapper_type);
	snprintf(m->json_pointer, sizeof(m->json_pointer), "%.63s", pointer);
	c->text = t.cfg;
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), true);
}

static void gemma4_towers(hf_ctx *c, mp_model *m)
{
	gemma4_vision(c, m, m->hidden_size);
	gemma4_audio(c, m, m->hidden_size);
}

void mpm_read_gemma4(hf_ctx *c, mp_model *m)
{
	decode_gemma_wrapper(c, m, "gemma4", "gemma4_text", mpm_read_gemma4_text, gemma4_towers);
}

/*
 * Gemma 4 unified's encoder-free embedders (modeling_gemma4_unified.py Gemma4UnifiedModel), each only when its config
 * is not null (both are by default). vision_config (Gemma4UnifiedVisionConfig: patch_size 16, pooling_kernel_size 3,
 * mm_embed_dim 3840, mm_posemb_size 1120, output_proj_dims 3840): Gemma4UnifiedVisionEmbedder's patch_ln1 (a
 * LayerNorm of the merged patch, (patch_size x pooling_kernel_size)^2 x 3 pixels), patch_dense (patch -> mm_embed_dim,
 * with a bias), patch_ln2, pos_embedding (mm_posemb_size x 2 x mm_embed_dim), pos_norm (LayerNorms with weight and
 * bias), then multimodal_embedder.embedding_projection (output_proj_dims -> the decoder's width; its RMSNorm has no
 * weight). audio_config (Gemma4UnifiedAudioConfig: audio_embed_dim 640): embed_audio.embedding_projection
 * (audio_embed_dim -> the decoder's width). Worked example: mm_embed_dim 48, patch 4, pooling 2, posemb 10,
 * output_proj_dims 3840 and audio 20 into a decoder of 64: 192 x 2 + 48 x 192 + 48 + 4 x 48 + 10 x 2 x 48 + 64 x 3840
 * + 64 x 20 = 257,968 values (transformers 5.24 builds the same).
 */
static void gemma4_unified_towers(hf_ctx *top, mp_model *m)
{
	char pointer[MP_POINTER_MAX];
	hf_ctx c;
	const uint8_t T = MP_ROOT_TOWER, P = MP_ROOT_PROJECTOR;

	mp_inventory_root(&m->inv, P, "model.");
	if (hf_has(top, "vision_config") && hf_sub_config(top, "vision_config", pointer, sizeof(pointer), &c)) {
		uint64_t patch = hf_get_u64(&c, KEYS("patch_size"), 16), pool = hf_get_u64(&c, KEYS("pooling_kernel_size"), 3);
		uint64_t mm = hf_get_u64(&c, KEYS("mm_embed_dim"), 3840), pos = hf_get_u64(&c, KEYS("mm_posemb_size"), 1120);
		uint64_t out = hf_get_u64(&c, KEYS("output_proj_dims"), 3840), pix;

		if (c.st == MP_OK && (patch == 0 || patch > 1024 || pool == 0 || pool > 64 || mm == 0 ||
		                      mm > (UINT64_C(1) << 24) || pos > (UINT64_C(1) << 24) || out == 0 ||
		                      out > (UINT64_C(1) << 24)))
			hf_fail_key(&c, "mm_embed_dim", "the vision embedder's sizes are out of range (patch_size at most 1024, "
			                                "pooling_kernel_size at most 64, widths at most 2^24)");
		if (c.st == MP_OK) {
			const uint64_t table[3] = {pos, 2, mm};

			pix = patch * pool * patch * pool * 3;
			mp_inventory_root(&m->inv, T, "model.embed_vision.");
			hf_shape(m, T, NULL, "pos_embedding", MP_TK_VISION, 0, table, 3, 1);
			hf_tensor(m, T, NULL, "patch_ln1.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, pix, 1);
			hf_tensor(m, T, NULL, "patch_ln1.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, pix, 1);
			hf_tensor(m, T, NULL, "patch_dense.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, mm, pix,
			          1);
			hf_tensor(m, T, NULL, "patch_dense.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, mm, 1);
			hf_tensor(m, T, NULL, "patch_ln2.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, mm, 1);
			hf_tensor(m, T, NULL, "patch_ln2.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, mm, 1);
			hf_tensor(m, T, NULL, "pos_norm.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, mm, 1);
			hf_tensor(m, T, NULL, "pos_norm.bias", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, mm, 1);
			hf_tensor(m, P, "embed_vision.multimodal_embedder", "embedding_projection.weight", MP_TK_PROJECTOR,
			          MP_SPLIT_NONE, MP_STEP_NONE, false, m->hidden_size, out, 1);
		}
		top->st = c.st;
	}
	if (top->st == MP_OK && hf_has(top, "audio_config") &&
	    hf_sub_config(top, "audio_config", pointer, sizeof(pointer), &c)) {
		uint64_t a = hf_get_u64(&c, KEYS("audio_embed_dim", "hidden_size", "output_proj_dims"), 640);

		if (c.st == MP_OK && (a == 0 || a > (UINT64_C(1) << 24)))
			hf_fail_key(&c, "audio_embed_dim", "audio_embed_dim must be between 1 and 2^24");
		if (c.st == MP_OK)
			hf_tensor(m, P, "embed_audio", "embedding_projection.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE,
			          MP_STEP_NONE, false, m->hidden_size, a, 1);
		top->st = c.st;
	}
}

/* Gemma4UnifiedConfig (a Gemma4Config: text_config a gemma4_unified_text, vision_config and audio_config null by
 * default, tied): Gemma4UnifiedForConditionalGeneration, the decoder under model.language_model. */
void mpm_read_gemma4_unified(hf_ctx *c, mp_model *m)
{
	decode_gemma_wrapper(c, m, "gemma4_unified", "gemma4_unified_text", mpm_read_gemma4_unified_text,
	                     gemma4_unified_towers);
}


/* ----- Gemma 3n ------------------------------------------------------------------------------------------------ */

/* The MLPs of a Gemma 3n decoder: intermediate_size one width for every layer, or a list of one per layer (checked by
 * the caller), as gemma_mlp rows of each distinct width. */
static void gemma3n_mlps(mp_model *m, const cJSON *is)
{
	m->own_mlp = true;
	if (!cJSON_IsArray(is)) {
		gemma_mlp(m, m->intermediate_size, m->num_layers);
		return;
	}
	for (int i = 0; i < cJSON_GetArraySize(is); i++) {
		uint64_t w = (uint64_t)cJSON_GetArrayItem(is, i)->valuedouble, n = 0;
		bool seen = false;

		for (int j = 0; j < cJSON_GetArraySize(is) && !seen; j++) {
			uint64_t o = (uint64_t)cJSON_GetArrayItem(is, j)->valuedouble;

			if (j < i && o == w)
				seen = true;
			n += o == w;
		}
		if (!seen)
			gemma_mlp(m, w, n);
	}
}

/*
 * Gemma3nTextConfig (transformers 5.24, configuration_gemma3n.py): vocab 262400, hidden 2048, intermediate_size 16384
 * (one for all layers, or a list of one per layer), 35 layers, 8 heads, 2 KV heads of head_dim 256, 32768 positions,
 * tied, sliding_window 512 on 4 layers of 5 (layer i full when (i + 1) % 5 == 0), num_kv_shared_layers 15, per-layer
 * embeddings of 256 over 262144 tokens, altup_num_inputs 4, laurel_rank 64, final_logit_softcapping 30; activation
 * sparsity has no parameters. Modules (modeling_gemma3n.py): Gemma3nTextAttention as Gemma 4's (q_norm, k_norm; no
 * k/v projections or k_norm in the KV-shared layers), a gated MLP, four norms; AltUp per layer (Gemma3nTextAltUp:
 * correct_output_scale of hidden, correction_coefs n x n, prediction_coefs n^2 x n, modality_router n x hidden,
 * router_norm of hidden) and the model's altup_projections and altup_unembed_projections (n - 1 of hidden x hidden
 * each); LAuReL per layer (Gemma3nTextLaurelBlock: linear_left rank x hidden, linear_right hidden x rank,
 * post_laurel_norm). Worked example (the defaults): 3,949,030,128 decoder + 2,886,205,440 embedding parameters.
 */
void mpm_read_gemma3n_text(hf_ctx *c, mp_model *m)
{
	const cJSON *is = cJSON_GetObjectItemCaseSensitive(c->cfg, "intermediate_size"), *v;
	uint64_t ple, vocab_pl, shared, n_alt, rank;

	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 262400);
	m->hidden_size = hf_get_u64(c, KEYS("hidden_size"), 2048);
	m->num_layers = hf_get_u64(c, KEYS("num_hidden_layers"), 35);
	m->num_heads = hf_get_u64(c, KEYS("num_attention_heads"), 8);
	m->num_kv_heads = hf_get_u64(c, KEYS("num_key_value_heads"), 2);
	m->head_dim = hf_get_u64(c, KEYS("head_dim"), 256);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings"), 32768);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), true);
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	hf_heads_divide_hidden(c, m, "num_attention_heads"); /* Gemma3nTextConfig.validate_architecture */
	m->sliding_window = hf_window(c, "sliding_window", 512);
	ple = hf_get_u64(c, KEYS("hidden_size_per_layer_input"), 256);
	vocab_pl = hf_get_u64(c, KEYS("vocab_size_per_layer_input"), 262144);
	shared = hf_get_u64(c, KEYS("num_kv_shared_layers"), 15);
	n_alt = hf_get_u64(c, KEYS("altup_num_inputs"), 4);
	rank = hf_get_u64(c, KEYS("laurel_rank"), 64);
	m->final_logit_softcapping = !hf_is_null(c, "final_logit_softcapping");
	if (c->st != MP_OK)
		return;
	if (m->num_layers == 0 || m->num_layers > MP_MAX_LAYERS) {
		hf_fail_key(c, "num_hidden_layers", "num_hidden_layers must be between 1 and 1024");
		return;
	}
	{
		/* activation_sparsity_pattern holds no parameters, but transformers refuses a list of another length */
		const cJSON *asp = cJSON_GetObjectItemCaseSensitive(c->cfg, "activation_sparsity_pattern");

		if (asp && !cJSON_IsNull(asp) && !cJSON_IsNumber(asp) &&
		    !(cJSON_IsArray(asp) && (uint64_t)cJSON_GetArraySize(asp) == m->num_layers)) {
			hf_fail_key(c, "activation_sparsity_pattern",
			            "activation_sparsity_pattern must be a number or a list of one value per layer "
			            "(num_hidden_layers)");
			return;
		}
	}
	if (n_alt == 0 || n_alt > 64) {
		hf_fail_key(c, "altup_num_inputs", "altup_num_inputs must be between 1 and 64");
		return;
	}
	/* intermediate_size: one width, or one per layer (Gemma3nTextConfig.__post_init__): the narrowest is the model's
	 * MLP width for activations and the step; the MLPs are listed per width (gemma3n_mlps) */
	if (cJSON_IsArray(is)) {
		uint64_t min = UINT64_MAX;

		if ((uint64_t)cJSON_GetArraySize(is) != m->num_layers) {
			hf_fail_key(c, "intermediate_size",
			            "intermediate_size must be one width or a list of one width per layer (num_hidden_layers)");
			return;
		}
		cJSON_ArrayForEach(v, is)
		{
			if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble != floor(v->valuedouble) ||
			    v->valuedouble > 9007199254740992.0) {
				hf_fail_key(c, "intermediate_size", "intermediate_size entries must be positive integers");
				return;
			}
			if ((uint64_t)v->valuedouble < min)
				min = (uint64_t)v->valuedouble;
		}
		m->intermediate_size = min;
	} else {
		m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 16384);
	}
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_GATED;
	m->norm_kind = MP_NORM_RMS;
	m->final_norm = true;
	m->qk_norm = true;
	m->norms_per_layer = 4 + 2; /* + AltUp's router_norm and LAuReL's post_laurel_norm */
	m->layer_pattern = true;
	m->attn_per_layer = true;
	gemma_layer_types(c, m, 5, false);
	gemma_kv_shared(c, m, shared);
	gemma_ple(c, m, vocab_pl, ple);
	if (c->st != MP_OK)
		return;
	gemma3n_mlps(m, is);
	{
		/* AltUp per layer (correct_output_scale, correction_coefs, prediction_coefs, modality_router; its
		 * router_norm is the layer's sixth norm), the model's altup_projections and altup_unembed_projections; LAuReL
		 * per layer (linear_left, linear_right; post_laurel_norm the seventh) */
		const uint8_t R = MP_ROOT_DECODER;
		const char *alt = "layers.{i}.altup", *lau = "layers.{i}.laurel";
		uint64_t h = m->hidden_size, L = m->num_layers;

		hf_tensor(m, R, alt, "correct_output_scale", MP_TK_MLP, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
		hf_tensor(m, R, alt, "correction_coefs.weight", MP_TK_MLP, MP_SPLIT_NONE, MP_STEP_EXTRA, false, n_alt, n_alt,
		          L);
		hf_tensor(m, R, alt, "prediction_coefs.weight", MP_TK_MLP, MP_SPLIT_NONE, MP_STEP_EXTRA, false,
		          n_alt * n_alt, n_alt, L);
		hf_tensor(m, R, alt, "modality_router.weight", MP_TK_MLP, MP_SPLIT_NONE, MP_STEP_EXTRA, false, n_alt, h, L);
		hf_tensor(m, R, NULL, "altup_projections.{j}.weight", MP_TK_MLP, MP_SPLIT_NONE, MP_STEP_EXTRA, false, h, h,
		          n_alt - 1);
		hf_tensor(m, R, NULL, "altup_unembed_projections.{j}.weight", MP_TK_MLP, MP_SPLIT_NONE, MP_STEP_EXTRA, false,
		          h, h, n_alt - 1);
		hf_tensor(m, R, lau, "linear_left.weight", MP_TK_MLP, MP_SPLIT_NONE, MP_STEP_EXTRA, false, rank, h, L);
		hf_tensor(m, R, lau, "linear_right.weight", MP_TK_MLP, MP_SPLIT_NONE, MP_STEP_EXTRA, false, h, rank, L);
	}
	c->names = &mpm_names_gemma3n[ple ? 1 : 0];
	hf_decode_rope(c, m, 1.0);
	m->rotary_dim = m->head_dim;
	m->rotary_buffer_sets = 2;
}

/* A list of `n` positive integers under `key` of c (absent: dflt), into out. False (and the error) otherwise. */
static bool int_list(hf_ctx *c, const char *key, size_t n, const uint64_t *dflt, uint64_t *out)
{
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(c->cfg, key), *v;
	size_t i = 0;

	if (l == NULL || cJSON_IsNull(l)) {
		memcpy(out, dflt, n * sizeof(*out));
		return true;
	}
	if (!cJSON_IsArray(l) || (size_t)cJSON_GetArraySize(l) != n) {
		char msg[120];

		snprintf(msg, sizeof(msg), "%s must be a list of %zu positive integers", key, n);
		hf_fail_key(c, key, msg);
		return false;
	}
	cJSON_ArrayForEach(v, l)
	{
		if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 65536 ||
		    v->valuedouble != floor(v->valuedouble)) {
			char msg[120];

			snprintf(msg, sizeof(msg), "%s must be a list of %zu integers between 1 and 65536", key, n);
			hf_fail_key(c, key, msg);
			return false;
		}
		out[i++] = (uint64_t)v->valuedouble;
	}
	return true;
}

/* A pair of lists ([[kh, kw], [kh, kw]]: sscp_conv_kernel_size, sscp_conv_stride_size) into out[4]. */
static bool pair_list(hf_ctx *c, const char *key, const uint64_t dflt[4], uint64_t out[4])
{
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(c->cfg, key);

	if (l == NULL || cJSON_IsNull(l)) {
		memcpy(out, dflt, 4 * sizeof(*out));
		return true;
	}
	if (!cJSON_IsArray(l) || cJSON_GetArraySize(l) != 2) {
		hf_fail_key(c, key, "must be a list of two [height, width] pairs of integers between 1 and 64");
		return false;
	}
	for (int i = 0; i < 2; i++) {
		const cJSON *p = cJSON_GetArrayItem(l, i), *a = cJSON_GetArrayItem(p, 0), *b = cJSON_GetArrayItem(p, 1);

		if (!cJSON_IsArray(p) || cJSON_GetArraySize(p) != 2 || !cJSON_IsNumber(a) || !cJSON_IsNumber(b) ||
		    a->valuedouble < 1 || b->valuedouble < 1 || a->valuedouble > 64 || b->valuedouble > 64 ||
		    a->valuedouble != floor(a->valuedouble) || b->valuedouble != floor(b->valuedouble)) {
			hf_fail_key(c, key, "must be a list of two [height, width] pairs of integers between 1 and 64");
			return false;
		}
		out[2 * i] = (uint64_t)a->valuedouble;
		out[2 * i + 1] = (uint64_t)b->valuedouble;
	}
	return true;
}

/*
 * Gemma3nAudioConfig's conformer (Gemma3nAudioEncoder, modeling_gemma3n.py), counted by its shapes: the subsampling
 * projection (two Conv2d of sscp_conv_channel_size channels, kernels sscp_conv_kernel_size, no bias, each with a norm
 * of its channels; input_proj_linear from channels x the frequencies left after both convolutions, (f + 2 - kw) / sw
 * + 1 each, to hidden); per conformer layer: attention q, k, v, the relative position projection and post (hidden x
 * hidden each), per_dim_scale (hidden / heads), pre and post norms; two feed-forward halves (hidden -> 4 hidden ->
 * hidden, two norms each); the light conv (linear_start hidden -> 2 hidden, a depthwise conv of conf_conv_kernel_size,
 * linear_end, two norms) and the layer's norm. Worked example (the defaults: hidden 1536, 12 layers, 8 heads, kernel 5,
 * 128 features, channels 128 and 32): 12 x 56,644,800 + 1,611,040 = 681,348,640.
 */
/* Gemma3nMultimodalEmbedder under model.<path>: embedding vocab x h, hard and soft norms of h, the projection h -> the
 * decoder's width. */
static void gemma3n_embedder(mp_model *m, const char *path, uint64_t vocab, uint64_t h, uint64_t text_hidden)
{
	const uint8_t P = MP_ROOT_PROJECTOR;

	mp_inventory_root(&m->inv, P, "model.");
	hf_tensor(m, P, path, "embedding.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false, vocab, h, 1);
	hf_tensor(m, P, path, "hard_embedding_norm.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, 1);
	hf_tensor(m, P, path, "soft_embedding_norm.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, 1);
	hf_tensor(m, P, path, "embedding_projection.weight", MP_TK_PROJECTOR, MP_SPLIT_NONE, MP_STEP_NONE, false,
	          text_hidden, h, 1);
}

/* The tensors of Gemma3nAudioEncoder and its embedder (proj_in: the input projection's width). */
static void gemma3n_audio_tensors(mp_model *m, uint64_t h, uint64_t layers, uint64_t heads, uint64_t k, uint64_t vocab,
                                  const uint64_t chan[2], const uint64_t kern[4], uint64_t proj_in, uint64_t text_hidden)
{
	static const char *const square[] = {"attention.attn.q_proj.weight", "attention.attn.k_proj.weight",
	                                     "attention.attn.v_proj.weight",
	                                     "attention.attn.relative_position_embedding.pos_proj.weight",
	                                     "attention.post.weight", "lconv1d.linear_end.weight"};
	static const char *const norms[] = {"attention.pre_attn_norm.weight",  "attention.post_norm.weight",
	                                    "ffw_layer_start.pre_layer_norm.weight",
	                                    "ffw_layer_start.post_layer_norm.weight",
	                                    "ffw_layer_end.pre_layer_norm.weight", "ffw_layer_end.post_layer_norm.weight",
	                                    "lconv1d.pre_layer_norm.weight",      "lconv1d.conv_norm.weight",
	                                    "norm.weight"};
	const uint8_t A = MP_ROOT_EXTRA;
	const char *L = "conformer.{i}";
	const uint64_t conv[3] = {h, 1, k}, c0[4] = {chan[0], 1, kern[0], kern[1]}, c1[4] = {chan[1], chan[0], kern[2], kern[3]};

	mp_inventory_root(&m->inv, A, "model.audio_tower.");
	for (size_t i = 0; i < sizeof(square) / sizeof(square[0]); i++)
		hf_tensor(m, A, L, square[i], MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, h, h, layers);
	for (int half = 0; half < 2; half++) {
		const char *p = half ? "conformer.{i}.ffw_layer_end" : "conformer.{i}.ffw_layer_start";

		hf_tensor(m, A, p, "ffw_layer_1.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, 4 * h, h, layers);
		hf_tensor(m, A, p, "ffw_layer_2.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, h, 4 * h, layers);
	}
	hf_tensor(m, A, L, "lconv1d.linear_start.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, false, 2 * h, h,
	          layers);
	hf_shape(m, A, L, "lconv1d.depthwise_conv1d.weight", MP_TK_VISION, 0, conv, 3, layers);
	hf_tensor(m, A, L, "attention.attn.per_dim_scale", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h / heads,
	          layers);
	for (size_t i = 0; i < sizeof(norms) / sizeof(norms[0]); i++)
		hf_tensor(m, A, L, norms[i], MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, layers);
	hf_shape(m, A, "subsample_conv_projection.conv_0", "conv.weight", MP_TK_VISION, 0, c0, 4, 1);
	hf_tensor(m, A, "subsample_conv_projection.conv_0", "norm.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true,
	          1, chan[0], 1);
	hf_shape(m, A, "subsample_conv_projection.conv_1", "conv.weight", MP_TK_VISION, 0, c1, 4, 1);
	hf_tensor(m, A, "subsample_conv_projection.conv_1", "norm.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE, true,
	          1, chan[1], 1);
	hf_tensor(m, A, "subsample_conv_projection", "input_proj_linear.weight", MP_TK_VISION, MP_SPLIT_NONE, MP_STEP_NONE,
	          false, h, proj_in, 1);
	gemma3n_embedder(m, "embed_audio", vocab, h, text_hidden);
}

static void gemma3n_audio(hf_ctx *top, mp_model *m, uint64_t text_hidden)
{
	static const uint64_t chan_d[2] = {128, 32}, kern_d[4] = {3, 3, 3, 3}, stride_d[4] = {2, 2, 2, 2};
	const cJSON *ac = cJSON_GetObjectItemCaseSensitive(top->cfg, "audio_config");
	char pointer[MP_POINTER_MAX];
	hf_ctx c;
	uint64_t h, layers, heads, k, feat, vocab, chan[2], kern[4], stride[4], f;

	snprintf(pointer, sizeof(pointer), "%s/audio_config", top->pointer);
	c = (hf_ctx){cJSON_IsObject(ac) ? ac : NULL, pointer, top->err, top->st, NULL, NULL, top->decode_type};
	if (ac && !cJSON_IsNull(ac) && !cJSON_IsObject(ac)) {
		hf_fail_key(top, "audio_config", "audio_config must be an object");
		return;
	}
	h = hf_get_u64(&c, KEYS("hidden_size"), 1536);
	layers = hf_get_u64(&c, KEYS("conf_num_hidden_layers"), 12);
	heads = hf_get_u64(&c, KEYS("conf_num_attention_heads"), 8);
	k = hf_get_u64(&c, KEYS("conf_conv_kernel_size"), 5);
	feat = hf_get_u64(&c, KEYS("input_feat_size"), 128);
	vocab = hf_get_u64(&c, KEYS("vocab_size"), 128);
	if (c.st == MP_OK && (h == 0 || heads == 0 || h % heads != 0 || h > (UINT64_C(1) << 24)))
		hf_fail_key(&c, "conf_num_attention_heads",
		            "conf_num_attention_heads must divide hidden_size (below 2^24) into heads");
	if (c.st == MP_OK && (layers > 1024 || k > 1024 || feat > (UINT64_C(1) << 24) || vocab > (UINT64_C(1) << 32)))
		hf_fail_key(&c, "conf_num_hidden_layers", "the audio tower's sizes are out of range");
	if (c.st == MP_OK && int_list(&c, "sscp_conv_channel_size", 2, chan_d, chan) &&
	    pair_list(&c, "sscp_conv_kernel_size", kern_d, kern) && pair_list(&c, "sscp_conv_stride_size", stride_d, stride)) {
		f = feat;
		for (int i = 0; i < 2; i++)
			f = f + 2 < kern[2 * i + 1] ? 0 : (f + 2 - kern[2 * i + 1]) / stride[2 * i + 1] + 1;
		gemma3n_audio_tensors(m, h, layers, heads, k, vocab, chan, kern, chan[1] * f, text_hidden);
	}
	top->st = c.st;
}

/*
 * Gemma3nVisionConfig: a timm model named by `architecture` (default mobilenetv5_300m_enc) whose shapes are timm's
 * code, not the config's: its parameter count is timm's, measured with timm 1.0.31 (timm.create_model(name) and
 * sum(p.numel()); tests/ref/hf/README.md), per name; an architecture not in the table, or model_args that reshape it,
 * is refused naming the key. The embedder (Gemma3nMultimodalEmbedder) is counted from hidden_size and vocab_size.
 */
static void gemma3n_vision(hf_ctx *top, mp_model *m, uint64_t text_hidden)
{
	static const struct {
		const char *name;
		uint64_t params;
	} timm_models[] = {{"mobilenetv5_300m_enc", UINT64_C(294126912)}};
	_Static_assert(sizeof(timm_models) / sizeof(timm_models[0]) == 1, "one timm table (mpm_gemma3n_timm)");
	const cJSON *vc = cJSON_GetObjectItemCaseSensitive(top->cfg, "vision_config"), *arch;
	char pointer[MP_POINTER_MAX];
	hf_ctx c;
	uint64_t h, vocab, params = 0;
	const char *name = "mobilenetv5_300m_enc";

	snprintf(pointer, sizeof(pointer), "%s/vision_config", top->pointer);
	c = (hf_ctx){cJSON_IsObject(vc) ? vc : NULL, pointer, top->err, top->st, NULL, NULL, top->decode_type};
	if (vc && !cJSON_IsNull(vc) && !cJSON_IsObject(vc)) {
		hf_fail_key(top, "vision_config", "vision_config must be an object");
		return;
	}
	arch = c.cfg ? cJSON_GetObjectItemCaseSensitive(c.cfg, "architecture") : NULL;
	if (arch && !cJSON_IsNull(arch)) {
		if (!cJSON_IsString(arch))
			hf_fail_key(&c, "architecture", "architecture must be a timm model name");
		else
			name = arch->valuestring;
	}
	if (c.st == MP_OK && c.cfg && hf_has(&c, "model_args"))
		hf_fail_key(&c, "model_args", "model_args that reshape the timm tower are not modelled; memplan counts the "
		                              "named architecture as timm builds it");
	for (size_t i = 0; i < sizeof(timm_models) / sizeof(timm_models[0]); i++)
		if (strcmp(name, timm_models[i].name) == 0)
			params = timm_models[i].params;
	if (c.st == MP_OK && params == 0)
		hf_fail_key(&c, "architecture", "the timm architecture is not one memplan counts (mobilenetv5_300m_enc)");
	h = hf_get_u64(&c, KEYS("hidden_size"), 2048);
	vocab = hf_get_u64(&c, KEYS("vocab_size"), 128);
	if (c.st == MP_OK && (h > (UINT64_C(1) << 24) || vocab > (UINT64_C(1) << 32)))
		hf_fail_key(&c, "hidden_size", "the vision tower's sizes are out of range");
	if (c.st == MP_OK) {
		/* the timm tower: one table for every Gemma 3n model (its shapes are timm's) */
		mp_inventory_root(&m->inv, MP_ROOT_TOWER, "model.vision_tower.");
		m->inv.ext = mpm_gemma3n_timm;
		m->inv.n_ext = mpm_gemma3n_timm_count;
		gemma3n_embedder(m, "embed_vision", vocab, h, text_hidden);
	}
	top->st = c.st;
}

/*
 * Gemma3nConfig: text_config (Gemma3nTextConfig), vision_config (Gemma3nVisionConfig) and audio_config
 * (Gemma3nAudioConfig), each its class's defaults when absent or null: Gemma3nModel always builds both towers and
 * their embedders. tie_word_embeddings True (the wrapper's). Worked example (the defaults): 7,818,517,072 parameters,
 * 983,281,504 of them the towers and embedders (parameters_by_component.vision).
 */
static void gemma3n_towers(hf_ctx *c, mp_model *m)
{
	gemma3n_audio(c, m, m->hidden_size);
	gemma3n_vision(c, m, m->hidden_size);
}

void mpm_read_gemma3n(hf_ctx *c, mp_model *m)
{
	decode_gemma_wrapper(c, m, "gemma3n", "gemma3n_text", mpm_read_gemma3n_text, gemma3n_towers);
}

