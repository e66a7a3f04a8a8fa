/*
 * hf_keys.c: the key readers every model type's decoder shares (hf_internal.h): a key under any of its spellings,
 * typed (a wrong type is an error naming the key), null or absent taking the type's default; the shapes a config
 * derives (head_dim, RoPE and its scaling, sliding windows, layer_types schedules). No model type is named here.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "hf_internal.h"
#include "model.h"

/* Finds the first of the NULL-terminated alias keys that is present and not null. */
const cJSON *hf_find(const hf_ctx *c, const char *const *keys, const char **which)
{
	for (; *keys; keys++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->cfg, *keys);

		if (v && !cJSON_IsNull(v)) {
			*which = *keys;
			return v;
		}
	}
	return NULL;
}

bool hf_has(const hf_ctx *c, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->cfg, key);

	return v && !cJSON_IsNull(v);
}

bool hf_is_null(const hf_ctx *c, const char *key)
{
	return cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(c->cfg, key));
}

uint64_t hf_window(hf_ctx *c, const char *key, uint64_t dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->cfg, key);

	if (v == NULL)
		return dflt;
	if (cJSON_IsNull(v) || cJSON_IsFalse(v))
		return 0;
	return hf_get_u64(c, (const char *const[]){key, NULL}, dflt);
}

/* Whether a key's type is still worth checking: no problem yet, or a list that collects every one (a config with
 * four mistyped keys is one 422 naming the four, not four round trips). */
static bool still_checking(const hf_ctx *c)
{
	return c->st == MP_OK || (c->err && c->err->all);
}

/* A mistyped key: the first problem stays the answer's, each is kept in the list. */
static void type_problem(hf_ctx *c, const char *field, const char *key, const char *must)
{
	mp_error first;

	if (c->st == MP_OK) {
		c->st = mp_error_keep(c->err, mp_fail(c->err, MP_EINVAL, field, "%s must be %s", key, must));
		return;
	}
	first = *c->err;
	mp_error_keep(c->err, mp_fail(c->err, MP_EINVAL, field, "%s must be %s", key, must));
	memcpy(c->err->field, first.field, sizeof(first.field));
	memcpy(c->err->message, first.message, sizeof(first.message));
}

/* Reads a non-negative integer under any of the alias keys, or dflt when absent. */
uint64_t hf_get_u64(hf_ctx *c, const char *const *keys, uint64_t dflt)
{
	const char *key = keys[0];
	const cJSON *v = hf_find(c, keys, &key);
	char field[MP_POINTER_MAX];

	if (v == NULL || !still_checking(c))
		return dflt;
	snprintf(field, sizeof(field), "%s/%s", c->pointer, key);
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble != floor(v->valuedouble) ||
	    v->valuedouble > 9007199254740992.0) {
		type_problem(c, field, key, "a non-negative integer");
		return dflt;
	}
	return c->st == MP_OK ? (uint64_t)v->valuedouble : dflt;
}

double hf_get_double(hf_ctx *c, const cJSON *obj, const char *key, double dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (v == NULL || cJSON_IsNull(v) || !still_checking(c))
		return dflt;
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0) {
		char field[MP_POINTER_MAX];

		snprintf(field, sizeof(field), "%s/%s", c->pointer, key);
		type_problem(c, field, key, "a non-negative number");
		return dflt;
	}
	return c->st == MP_OK ? v->valuedouble : dflt;
}

bool hf_get_bool(hf_ctx *c, const char *const *keys, bool dflt)
{
	const char *key = keys[0];
	const cJSON *v = hf_find(c, keys, &key);
	char field[MP_POINTER_MAX];

	if (v == NULL || !still_checking(c))
		return dflt;
	if (!cJSON_IsBool(v)) {
		snprintf(field, sizeof(field), "%s/%s", c->pointer, key);
		type_problem(c, field, key, "true or false");
		return dflt;
	}
	return c->st == MP_OK ? cJSON_IsTrue(v) : dflt;
}


uint64_t hf_mul(hf_ctx *c, uint64_t a, uint64_t b, const char *key)
{
	uint64_t out;

	if (mp_mul_u64(a, b, &out) && out <= (UINT64_C(1) << 53))
		return out;
	hf_fail_key(c, key, "a width derived from this key overflows (it must stay below 2^53)");
	return 0;
}

void hf_fail_key(hf_ctx *c, const char *key, const char *msg)
{
	char field[MP_POINTER_MAX];

	if (c->st != MP_OK)
		return;
	snprintf(field, sizeof(field), "%s/%s", c->pointer, key);
	c->st = mp_fail(c->err, MP_EINVAL, field, "%s", msg);
}

bool hf_sub_config(hf_ctx *top, const char *key, char *pointer, size_t cap, hf_ctx *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(top->cfg, key);
	char msg[96];

	snprintf(pointer, cap, "%s/%s", top->pointer, key);
	*out = (hf_ctx){cJSON_IsObject(v) ? v : NULL, pointer, top->err, top->st, NULL, NULL, top->decode_type};
	if (v && !cJSON_IsNull(v) && !cJSON_IsObject(v)) {
		snprintf(msg, sizeof(msg), "%s must be an object (a sub-config of the wrapper) or null", key);
		hf_fail_key(top, key, msg);
		return false;
	}
	return top->st == MP_OK;
}

const char *hf_key_of(const hf_ctx *c, const char *const *keys)
{
	const char *which = keys[0];

	hf_find(c, keys, &which);
	return which;
}

void hf_heads_divide_hidden(hf_ctx *c, const mp_model *m, const char *heads_key)
{
	char msg[200];

	if (c->st != MP_OK || m->num_heads == 0 || m->hidden_size % m->num_heads == 0)
		return;
	snprintf(msg, sizeof(msg),
	         "hidden_size (%llu) must be a multiple of %s (%llu) for this model type, whatever head_dim says "
	         "(its configuration class's validate_architecture)",
	         (unsigned long long)m->hidden_size, heads_key, (unsigned long long)m->num_heads);
	hf_fail_key(c, heads_key, msg);
}

/* head_dim: an explicit value wins (it need not equal hidden / heads, gemma's does not); otherwise
 * hidden_size / num_attention_heads, which must then divide exactly. */
void hf_derive_head_dim(hf_ctx *c, mp_model *m, const char *heads_key)
{
	m->head_dim = hf_get_u64(c, KEYS("head_dim"), 0);
	if (m->head_dim != 0 || c->st != MP_OK || m->num_heads == 0)
		return;
	if (m->hidden_size % m->num_heads != 0) {
		char msg[200];

		snprintf(msg, sizeof(msg), "hidden_size (%llu) is not divisible by %s (%llu); give head_dim explicitly",
		         (unsigned long long)m->hidden_size, heads_key, (unsigned long long)m->num_heads);
		hf_fail_key(c, heads_key, msg);
		return;
	}
	m->head_dim = m->hidden_size / m->num_heads;
}

/*
 * RoPE: rope_parameters (transformers v5) or rope_scaling + rope_theta (older files). A scaling other than
 * "default" declares that contexts beyond max_position_embeddings are intended: the scaled limit is
 * original_max_position_embeddings (or max_position_embeddings) x factor, and never below
 * max_position_embeddings (llama3-type configs already state the extended length there).
 * partial_rotary_factor (phi3, gpt_neox's rotary_pct) sets how much of each head rotates.
 */
void hf_decode_rope(hf_ctx *c, mp_model *m, double partial_default)
{
	const cJSON *rp = cJSON_GetObjectItemCaseSensitive(c->cfg, "rope_parameters");
	const cJSON *rs = cJSON_GetObjectItemCaseSensitive(c->cfg, "rope_scaling");
	const cJSON *scaling = NULL, *type;
	char sub_pointer[MP_POINTER_MAX] = "";	/* JSON pointer of the scaling object: its keys are reported under it */
	double partial = partial_default, factor, scaled;
	uint64_t orig;

	snprintf(m->rope_type, sizeof(m->rope_type), "default");
	if (cJSON_IsObject(rp)) {
		/* gemma3 nests one rope_parameters object per layer type */
		const cJSON *full = cJSON_GetObjectItemCaseSensitive(rp, "full_attention");

		scaling = cJSON_IsObject(full) ? full : rp;
		snprintf(sub_pointer, sizeof(sub_pointer), "%s/rope_parameters%s", c->pointer,
		         cJSON_IsObject(full) ? "/full_attention" : "");
	} else if (cJSON_IsObject(rs)) {
		scaling = rs;
		snprintf(sub_pointer, sizeof(sub_pointer), "%s/rope_scaling", c->pointer);
	} else if (rs && !cJSON_IsNull(rs)) {
		hf_fail_key(c, "rope_scaling", "rope_scaling must be an object or null");
		return;
	}
	if (hf_has(c, "partial_rotary_factor"))
		partial = hf_get_double(c, c->cfg, "partial_rotary_factor", partial);
	else if (hf_has(c, "rotary_pct"))
		partial = hf_get_double(c, c->cfg, "rotary_pct", partial);
	if (scaling && cJSON_GetObjectItemCaseSensitive(scaling, "partial_rotary_factor")) {
		hf_ctx sub = {scaling, sub_pointer, c->err, c->st, NULL, NULL, c->decode_type};

		partial = hf_get_double(&sub, scaling, "partial_rotary_factor", partial);
		if (sub.st == MP_OK && (partial <= 0 || partial > 1))
			hf_fail_key(&sub, "partial_rotary_factor", "partial_rotary_factor must be in (0, 1]");
		c->st = sub.st;
		if (c->st != MP_OK)
			return;
	}
	if (partial <= 0 || partial > 1) {
		hf_fail_key(c, "partial_rotary_factor", "partial_rotary_factor must be in (0, 1]");
		return;
	}
	m->rotary_dim = (uint64_t)((double)m->head_dim * partial);
	m->rotary_buffer_sets = 1;
	if (scaling == NULL)
		return;
	type = cJSON_GetObjectItemCaseSensitive(scaling, "rope_type");
	if (!cJSON_IsString(type))
		type = cJSON_GetObjectItemCaseSensitive(scaling, "type");
	if (cJSON_IsString(type))
		snprintf(m->rope_type, sizeof(m->rope_type), "%s", type->valuestring);
	if (strcmp(m->rope_type, "default") == 0)
		return;
	{
		/* transformers 5.24 modeling_rope_utils.ROPE_INIT_FUNCTIONS, with the types its models name themselves
		 * (Qwen2-VL's mrope, the axial 2D RoPE of vision towers) and phi3's legacy "su": another is its KeyError */
		static const char *const known[] = {"linear", "dynamic", "yarn", "longrope", "llama3", "proportional",
						    "mrope", "axial", "su", NULL};
		size_t k;

		for (k = 0; known[k] && strcmp(known[k], m->rope_type) != 0; k++)
			;
		if (known[k] == NULL) {
			hf_ctx sub = {scaling, sub_pointer, c->err, c->st, NULL, NULL, c->decode_type};

			hf_fail_key(&sub, cJSON_GetObjectItemCaseSensitive(scaling, "rope_type") ? "rope_type" : "type",
				    "rope_type must be default, linear, dynamic, yarn, longrope, llama3 or proportional "
				    "(transformers' RoPE types; mrope and axial where the model names them): another is "
				    "transformers' KeyError building the model");
			c->st = sub.st;
			return;
		}
	}
	m->rope_scaling = true;
	{
		hf_ctx sub = {scaling, sub_pointer, c->err, c->st, NULL, NULL, c->decode_type};
		uint64_t top = hf_get_u64(c, KEYS("original_max_position_embeddings"), m->max_position_embeddings);

		sub.st = c->st;
		factor = hf_get_double(&sub, scaling, "factor", 1.0);
		/* a scaling stretches the context: a factor below 1 (or 0) is no scaling the config could mean */
		if (sub.st == MP_OK && factor < 1)
			hf_fail_key(&sub, "factor", "factor must be a finite number >= 1 (how many times the RoPE scaling "
			                         "stretches the original context)");
		orig = hf_get_u64(&sub, KEYS("original_max_position_embeddings"), top);
		c->st = sub.st;
		if (c->st != MP_OK)
			return;
		/* checked in double before any conversion: the ceiling keeps the product exact and far above
		 * MP_MAX_SEQUENCE_LENGTH, so the allowed context is monotonic in factor */
		scaled = (double)orig * factor;
		if (scaled > (double)MPM_MAX_ROPE_SCALED_POSITIONS) {
			char msg[200];

			snprintf(msg, sizeof(msg),
			         "factor x original_max_position_embeddings (%.6g) exceeds %llu positions, the most a RoPE "
			         "scaling may declare",
			         scaled, (unsigned long long)MPM_MAX_ROPE_SCALED_POSITIONS);
			hf_fail_key(&sub, "factor", msg);
			c->st = sub.st;
			return;
		}
	}
	m->rope_scaled_max_position = (uint64_t)scaled;
	if (m->rope_scaled_max_position < m->max_position_embeddings)
		m->rope_scaled_max_position = m->max_position_embeddings;
}

/* layer_types (v5): a list of "sliding_attention" / "full_attention"; counts the sliding layers. */
void hf_decode_layer_types(hf_ctx *c, mp_model *m)
{
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types"), *v;
	uint64_t n = 0, sliding = 0;

	if (lt == NULL || cJSON_IsNull(lt))
		return;
	if (!cJSON_IsArray(lt)) {
		hf_fail_key(c, "layer_types", "layer_types must be a list of \"sliding_attention\" or \"full_attention\"");
		return;
	}
	cJSON_ArrayForEach(v, lt)
	{
		if (!cJSON_IsString(v) || (strcmp(v->valuestring, "sliding_attention") != 0 &&
		                           strcmp(v->valuestring, "full_attention") != 0)) {
			hf_fail_key(c, "layer_types",
			         "layer_types entries must be \"sliding_attention\" or "
			         "\"full_attention\"");
			return;
		}
		sliding += v->valuestring[0] == 's';
		n++;
	}
	if (n != m->num_layers) {
		hf_fail_key(c, "layer_types", "layer_types must have one entry per layer (num_hidden_layers)");
		return;
	}
	if (sliding && m->sliding_window == 0) {
		hf_fail_key(c, "layer_types",
		            "layer_types has sliding_attention layers, but the config has no window (sliding_window null, "
		            "or use_sliding_window false): transformers 5.24 cannot build their cache");
		return;
	}
	if (sliding == 0)
		m->sliding_window = 0;
	m->sliding_window_layers = sliding;
}

/* mlp_only_layers (qwen2_moe, qwen3_moe): indices of layers that keep a dense MLP. */
void hf_decode_mlp_only_layers(hf_ctx *c, mp_model *m)
{
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(c->cfg, "mlp_only_layers"), *v;

	if (l == NULL || cJSON_IsNull(l))
		return;
	if (!cJSON_IsArray(l)) {
		hf_fail_key(c, "mlp_only_layers", "mlp_only_layers must be a list of layer indices");
		return;
	}
	cJSON_ArrayForEach(v, l)
	{
		if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble >= (double)m->num_layers ||
		    v->valuedouble != floor(v->valuedouble) || v->valuedouble >= MP_MAX_LAYERS) {
			hf_fail_key(c, "mlp_only_layers",
			         "mlp_only_layers entries must be layer indices below "
			         "num_hidden_layers");
			return;
		}
		m->dense_layer_mask[(int)v->valuedouble / 8] |= (uint8_t)(1u << ((int)v->valuedouble % 8));
	}
}
