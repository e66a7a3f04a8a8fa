/*
 * hf_config.c: Hugging Face config.json -> mp_model through the type table (model/mpm_types.c: hf_decode_type,
 * mpm_from_hf), and the generic "architecture" object -> mp_model.
 * Each supported model_type has a row of defaults copied from its transformers configuration class
 * (transformers/models/<type>/configuration_<type>.py, v5) and a function that maps its keys; the module
 * structure each type builds (which projections carry biases, how many norms a layer has) follows
 * modeling_<type>.py. A key that is absent or null takes the default; a key of the wrong type is an error
 * naming the key. This file does no arithmetic beyond what the config itself derives (head_dim, window layers).
 */
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "fields.h"
#include "hf_internal.h"
#include "model.h"
#include "mpm_types.h"


/* The supported model_type values, from the one table (model/mpm_types.c), sorted, comma-separated. Built once. */
static char supported[4096];
static pthread_once_t supported_once = PTHREAD_ONCE_INIT;

static const char *supported_list(void);

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void build_supported(void)
{
	const char *names[256] = {0};
	size_t n = 0, used = 0;

	for (size_t i = 0; i < mpm_types_count && n < sizeof(names) / sizeof(names[0]); i++)
		names[n++] = mpm_types[i].name;
	qsort(names, n, sizeof(names[0]), cmp_str);
	for (size_t i = 0; i < n; i++) {
		int w = snprintf(supported + used, sizeof(supported) - used, "%s%s", i ? ", " : "", names[i]);

		if (w < 0 || (size_t)w >= sizeof(supported) - used)
			break;
		used += (size_t)w;
	}
}

/* Edit distance of a and b (at most 40 characters of each are compared). */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a) < 40 ? strlen(a) : 40, lb = strlen(b) < 40 ? strlen(b) : 40, row[41];

	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

/* The three supported types nearest to `name` by edit distance (ties: alphabetical), comma-separated. */
static void nearest_types(const char *name, char *buf, size_t len)
{
	const char *best[3] = {NULL, NULL, NULL};
	size_t bd[3] = {SIZE_MAX, SIZE_MAX, SIZE_MAX};
	char all[sizeof(supported)];
	char *p = all;

	snprintf(all, sizeof(all), "%s", supported_list());
	while (p && *p) {
		char *end = strstr(p, ", ");
		size_t d;

		if (end)
			*end = '\0';
		d = distance(name, p);
		/* only a near spelling counts (a third of the name's letters, at least 2), or one name the other's
		 * start ("llama4_vision" and "llama4"): "bert" is close to no decoder memplan reads */
		if (d > (strlen(name) / 3 > 2 ? strlen(name) / 3 : 2) &&
		    !(strlen(p) >= 4 && (strncmp(name, p, strlen(p)) == 0 || strncmp(p, name, strlen(name)) == 0))) {
			p = end ? end + 2 : NULL;
			continue;
		}
		for (int k = 0; k < 3; k++)
			if (d < bd[k]) {
				for (int j = 2; j > k; j--) {
					bd[j] = bd[j - 1];
					best[j] = best[j - 1];
				}
				bd[k] = d;
				best[k] = p;
				break;
			}
		p = end ? end + 2 : NULL;
	}
	snprintf(buf, len, "%s%s%s%s%s", best[0] ? best[0] : "", best[1] ? ", " : "", best[1] ? best[1] : "",
	         best[2] ? ", " : "", best[2] ? best[2] : "");
}

const char *mpm_supported_types(void)
{
	pthread_once(&supported_once, build_supported);
	return supported;
}

static const char *supported_list(void)
{
	return mpm_supported_types();
}

bool hf_decode_type(hf_ctx *c, const char *type, bool text_only, mp_model *m)
{
	const mpm_type *t = mpm_type_find(type);

	if (t == NULL || (text_only && t->wrapper)) {
		m->model_type[0] = '\0';
		return false;
	}
	hf_decode_row(c, t, m);
	return true;
}

void hf_decode_row(hf_ctx *c, const mpm_type *t, mp_model *m)
{
	snprintf(m->model_type, sizeof(m->model_type), "%s", t->name);
	if (t->names)
		c->names = t->names;
	if (t->dense)
		mpm_read_dense(c, t->dense, m);
	else
		t->read(c, m);
}

/*
 * A mixture-of-experts type needs its experts (mpm_type.experts_key): without them its FFN width moved to the
 * experts would leave the dense width 0, and validation would blame intermediate_size. Names the type's own key.
 */
static mp_status check_experts(const mpm_type *t, const mp_model *m, const char *pointer, mp_error *err)
{
	char field[64];

	if (t == NULL || t->experts_key == NULL || m->num_experts != 0)
		return MP_OK;
	snprintf(field, sizeof(field), "/%s", t->experts_key);
	return mp_fail_at(err, MP_EINVAL, pointer, field,
			  "%s must be at least 1: model_type %s routes each token to experts (a dense model has another "
			  "model_type)",
			  t->experts_key, t->name);
}

/*
 * What every config's own values must be, whatever its type: the dtype a torch dtype's name (transformers takes it by
 * getattr(torch, name): "float13" is its AttributeError), and max_position_embeddings, when stated, at least 1 (0 would
 * leave the plan with no context to hold a sequence to; cases.md BI-05). obj is the config or its text_config.
 */
static mp_status check_config_values(const cJSON *obj, const char *pointer, mp_error *err)
{
	static const char *const torch_dtypes[] = {
		"float32", "float", "float64", "double", "float16", "half", "bfloat16", "uint8", "int8", "int16", "short",
		"int32", "int", "int64", "long", "bool", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
		"float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "uint16", "uint32", "uint64", "complex64",
		"complex128", "auto", NULL};
	static const char *const keys[] = {"dtype", "torch_dtype"};
	const cJSON *pos = cJSON_GetObjectItemCaseSensitive(obj, "max_position_embeddings");

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, keys[i]);
		const char *name;
		size_t k;

		if (v == NULL || cJSON_IsNull(v))
			continue;
		if (!cJSON_IsString(v))
			return mp_fail_at(err, MP_EINVAL, pointer, keys[i] == keys[0] ? "/dtype" : "/torch_dtype",
					  "%s must be a torch dtype's name (\"bfloat16\", \"float16\", \"float32\", ...)",
					  keys[i]);
		name = strncmp(v->valuestring, "torch.", 6) == 0 ? v->valuestring + 6 : v->valuestring;
		for (k = 0; torch_dtypes[k] && strcmp(torch_dtypes[k], name) != 0; k++)
			;
		if (torch_dtypes[k] == NULL)
			return mp_fail_at(err, MP_EINVAL, pointer, keys[i] == keys[0] ? "/dtype" : "/torch_dtype",
					  "%s '%.40s' is not a torch dtype (\"bfloat16\", \"float16\", \"float32\", ...): "
					  "transformers takes it by getattr(torch, name)",
					  keys[i], v->valuestring);
	}
	if (cJSON_IsNumber(pos) && pos->valuedouble == 0)
		return mp_fail_at(err, MP_EINVAL, pointer, "/max_position_embeddings",
				  "max_position_embeddings must be at least 1 (the model's context, in tokens), or left out "
				  "for the type's default");
	return MP_OK;
}

mp_status mpm_from_hf(const cJSON *cfg, const char *pointer, mp_model *m, mp_error *err)
{
	return mpm_from_hf_row(cfg, pointer, NULL, m, err);
}

mp_status mpm_from_hf_row(const cJSON *cfg, const char *pointer, const mpm_type *row, mp_model *m, mp_error *err)
{
	hf_ctx c = {cfg, pointer, err, MP_OK, NULL, NULL, hf_decode_type};
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(cfg, "model_type");
	char field[MP_POINTER_MAX];

	memset(m, 0, sizeof(*m));
	mp_inventory_init(&m->inv, NULL);
	snprintf(m->json_pointer, sizeof(m->json_pointer), "%s", pointer);
	snprintf(field, sizeof(field), "%s/model_type", pointer);
	if (!cJSON_IsObject(cfg))
		return mp_fail(err, MP_EINVAL, pointer, "hf_config must be a JSON object (a config.json)");
	if (!cJSON_IsString(type)) {
		/* the list of every type no longer fits one message (mp_error.message): name how many and some */
		size_t n = 1;

		for (const char *p = mpm_supported_types(); *p; p++)
			n += *p == ',';
		return mp_fail(err, MP_EINVAL, field,
			               "model_type is required: the config.json's \"model_type\", one of %zu types memplan "
			               "reads (llama, mistral, qwen3, qwen3_moe, gemma3, deepseek_v3, gpt_oss, llama4, qwen3_next, "
			               "mamba2, ...; README.md lists them all)",
			               n);
	}
	if (row ? (hf_decode_row(&c, row, m), true) : hf_decode_type(&c, type->valuestring, false, m)) {
		if (c.st == MP_OK)
			c.st = check_experts(row ? row : mpm_type_find(m->model_type), m, pointer, err);
		if (c.st == MP_OK)
			c.st = check_config_values(cfg, pointer, err);
		if (c.st == MP_OK && c.text && c.text != cfg) {
			char tp[MP_POINTER_MAX];

			snprintf(tp, sizeof(tp), "%s/text_config", pointer);
			c.st = check_config_values(c.text, tp, err);
		}
		if (c.st == MP_OK) {
			mpm_training_extras(c.text ? c.text : cfg, m);
			mpm_config_facts_of(cfg, c.text, m);
			c.st = mp_model_build(m, c.names, err);
		}
		return c.st;
	}
	{
		char near[160];
		bool wrapper = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(cfg, "text_config"));
		const mpm_refusal *r = mpm_refusal_find(type->valuestring);
		char close[200];

		if (r)
			return mp_fail(err, MP_EUNSUPPORTED, field,
			               r->kind == MPM_REFUSE_ENCODER
			                   ? "model_type '%s' is not planned: it is an encoder (bidirectional self-attention, "
			                     "pretrained as a masked language model) that transformers' %s runs as a decoder "
			                     "only when fine-tuned so, and memplan plans decoder-only text generation; describe "
			                     "a decoder with model.architecture (openapi.yaml, schema ModelArchitecture)%s"
			               : r->kind == MPM_REFUSE_SEQ2SEQ
			                   ? "model_type '%s' is not planned: transformers' %s is the decoder half of an "
			                     "encoder-decoder model, attending to an encoder's states in every layer "
			                     "(cross-attention), and memplan plans decoder-only text generation; describe a "
			                     "decoder with model.architecture (openapi.yaml, schema ModelArchitecture)%s"
			               : r->kind == MPM_REFUSE_ENCDEC
			                   ? "model_type '%s' is not planned: transformers' %s is an encoder-decoder model, "
			                     "its decoder attending to the encoder's states in every layer (cross-attention), "
			                     "and memplan plans decoder-only text generation; describe a decoder with "
			                     "model.architecture (openapi.yaml, schema ModelArchitecture)%s"
			                   : "model_type '%s' is not planned (%s): %s",
			               r->name, r->model_class, r->why ? r->why : "");

		nearest_types(type->valuestring, near, sizeof(near));
		if (near[0])
			snprintf(close, sizeof(close), "nearest supported: %s", near);
		else
			snprintf(close, sizeof(close), "no supported type is spelt like it (README.md lists the types memplan "
				 "reads)");
		return mp_fail(err, MP_EUNSUPPORTED, field,
		               "model_type '%.40s' is not supported; %s;%s or describe the model "
		               "with model.architecture (openapi.yaml, schema ModelArchitecture)",
		               type->valuestring, close,
		               wrapper ? " a multimodal wrapper's decoder is its text_config, which can be posted as "
		                         "hf_config alone (without the vision tower);"
		                       : "");
	}
}

/* ----- the generic architecture object ------------------------------------------------------------------ */

typedef struct arch_body {
	mp_model m;
	int ffn, norm, attn;
	bool rope;
	bool learned_positions;
} arch_body;

static const char *const ffn_names[] = {"gated", "plain", NULL};
static const char *const norm_names[] = {"rms", "layer", NULL};
static const char *const attn_names[] = {"gqa", "mla", NULL};

#define AU64(n, f, lo, hi)                                                                                             \
	{                                                                                                              \
		.name = n, .type = MPM_F_U64, .offset = offsetof(arch_body, m.f), .min = lo, .max = hi                 \
	}
#define ABOOL(n, f)                                                                                                    \
	{                                                                                                              \
		.name = n, .type = MPM_F_BOOL, .offset = offsetof(arch_body, m.f)                                      \
	}
#define BIG (UINT64_C(1) << 40)

static const mpm_field arch_fields[] = {
    {.name = "hidden_size",
     .type = MPM_F_U64,
     .required = true,
     .offset = offsetof(arch_body, m.hidden_size),
     .min = 1,
     .max = BIG},
    {.name = "num_hidden_layers",
     .type = MPM_F_U64,
     .required = true,
     .offset = offsetof(arch_body, m.num_layers),
     .min = 1,
     .max = MP_MAX_LAYERS},
    {.name = "num_attention_heads",
     .type = MPM_F_U64,
     .required = true,
     .offset = offsetof(arch_body, m.num_heads),
     .min = 1,
     .max = BIG},
    {.name = "vocab_size",
     .type = MPM_F_U64,
     .required = true,
     .offset = offsetof(arch_body, m.vocab_size),
     .min = 1,
     .max = BIG},
    AU64("num_key_value_heads", num_kv_heads, 1, BIG), /* absent = MHA; 0 is refused (case BI-03) */
    AU64("head_dim", head_dim, 0, BIG),
    AU64("intermediate_size", intermediate_size, 1, BIG),
    {.name = "ffn_kind", .type = MPM_F_ENUM, .offset = offsetof(arch_body, ffn), .names = ffn_names},
    {.name = "norm_kind", .type = MPM_F_ENUM, .offset = offsetof(arch_body, norm), .names = norm_names},
    {.name = "attention_kind", .type = MPM_F_ENUM, .offset = offsetof(arch_body, attn), .names = attn_names},
    AU64("norms_per_layer", norms_per_layer, 0, 8),
    ABOOL("final_norm", final_norm),
    ABOOL("tie_word_embeddings", tie_word_embeddings),
    ABOOL("qkv_bias", qkv_bias),
    ABOOL("o_bias", o_bias),
    ABOOL("mlp_bias", mlp_bias),
    ABOOL("lm_head_bias", lm_head_bias),
    ABOOL("qk_norm", qk_norm),
    ABOOL("parallel_block", parallel_block),
    AU64("max_position_embeddings", max_position_embeddings, 1, BIG),
    {.name = "learned_position_embeddings", .type = MPM_F_BOOL, .offset = offsetof(arch_body, learned_positions)},
    {.name = "rope", .type = MPM_F_BOOL, .offset = offsetof(arch_body, rope)},
    AU64("sliding_window", sliding_window, 0, BIG),
    AU64("sliding_window_layers", sliding_window_layers, 0, MP_MAX_LAYERS),
    AU64("num_experts", num_experts, 0, BIG),
    AU64("num_experts_per_tok", num_experts_per_tok, 0, BIG),
    AU64("moe_intermediate_size", moe_intermediate_size, 0, BIG),
    AU64("shared_expert_intermediate_size", shared_expert_intermediate_size, 0, BIG),
    AU64("first_dense_layers", first_dense_layers, 0, MP_MAX_LAYERS),
    AU64("q_lora_rank", q_lora_rank, 0, BIG),
    AU64("kv_lora_rank", kv_lora_rank, 0, BIG),
    AU64("qk_nope_head_dim", qk_nope_head_dim, 0, BIG),
    AU64("qk_rope_head_dim", qk_rope_head_dim, 0, BIG),
    AU64("v_head_dim", v_head_dim, 0, BIG),
};

mp_status mpm_from_architecture(const cJSON *arch, const char *pointer, mp_model *out, mp_error *err)
{
	arch_body b;
	mp_status st;
	char field[MP_POINTER_MAX];

	memset(&b, 0, sizeof(b));
	b.m.norms_per_layer = 2;
	b.m.final_norm = true;
	b.rope = true;
	b.m.max_position_embeddings = UINT64_C(1) << 24;
	st = mpm_decode_fields(arch, pointer, arch_fields, sizeof(arch_fields) / sizeof(arch_fields[0]), &b, err);
	if (st != MP_OK)
		return st;
	*out = b.m;
	mp_inventory_init(&out->inv, NULL);
	snprintf(out->model_type, sizeof(out->model_type), "custom");
	snprintf(out->json_pointer, sizeof(out->json_pointer), "%s", pointer);
	out->ffn_kind = (mp_ffn_kind)b.ffn;
	out->norm_kind = (mp_norm_kind)b.norm;
	out->attn_kind = (mp_attn_kind)b.attn;
	if (cJSON_GetObjectItemCaseSensitive(arch, "num_key_value_heads") == NULL)
		out->num_kv_heads = out->num_heads;	/* absent: multi-head attention */
	if (out->head_dim == 0) {
		if (out->attn_kind == MP_ATTN_MLA) {
			out->head_dim = out->qk_nope_head_dim + out->qk_rope_head_dim;
		} else if (out->hidden_size % out->num_heads != 0) {
			snprintf(field, sizeof(field), "%s/num_attention_heads", pointer);
			return mp_fail(err, MP_EINVAL, field,
			               "hidden_size (%llu) is not divisible by num_attention_heads (%llu); give "
			               "head_dim explicitly",
			               (unsigned long long)out->hidden_size, (unsigned long long)out->num_heads);
		} else {
			out->head_dim = out->hidden_size / out->num_heads;
		}
	}
	if (out->sliding_window_layers > out->num_layers) {
		/* the planner's check names layer_types (the hf_config key); here the key is sliding_window_layers */
		snprintf(field, sizeof(field), "%s/sliding_window_layers", pointer);
		return mp_fail(err, MP_EINVAL, field,
		               "sliding_window_layers (%llu) must not exceed num_hidden_layers (%llu)",
		               (unsigned long long)out->sliding_window_layers, (unsigned long long)out->num_layers);
	}
	if (out->num_experts > 0 && out->moe_intermediate_size == 0)
		out->moe_intermediate_size = out->intermediate_size;
	out->num_shared_experts = out->shared_expert_intermediate_size > 0;
	if (b.learned_positions) {
		out->learned_position_embeddings = out->max_position_embeddings;
		b.rope = false;
	}
	if (b.rope) {
		out->rotary_dim = out->attn_kind == MP_ATTN_MLA ? out->qk_rope_head_dim : out->head_dim;
		out->rotary_buffer_sets = 1;
		snprintf(out->rope_type, sizeof(out->rope_type), "default");
	} else {
		snprintf(out->rope_type, sizeof(out->rope_type), "none");
	}
	return mp_model_build(out, NULL, err);
}

mp_status mpm_from_hf_text(const char *json, const char *pointer, mp_model *m, mp_error *err)
{
	cJSON *cfg = cJSON_Parse(json);
	mp_status st;

	if (cfg == NULL)
		return mp_fail(err, MP_EPARSE, pointer, "config is not valid JSON");
	st = mpm_from_hf(cfg, pointer, m, err);
	cJSON_Delete(cfg);
	return st;
}
