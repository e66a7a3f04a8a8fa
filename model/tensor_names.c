/*
 * tensor_names.c: the name table (tensor_names.h) and the tensor-by-tensor match of a checkpoint's tensors against
 * the model's inventory. The GGUF column is llama.cpp's (gguf-py/gguf/constants.py TENSOR_NAMES at 0c1e5709); the
 * transformers column is the state_dict name tensor_mapping.py maps onto it (TensorNameMap.mappings_cfg and
 * block_mappings_cfg, the llama-family entry of each); the inventory column is planner/weights.c mp_model_tensors'
 * row names, where every layer's norms are one row ("layernorm"). Must not know file formats.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "tensor_names.h"

/* key (the inventory entries a file tensor counts towards), GGUF name, transformers name */
static const mpm_name_row rows[] = {
	{ "embed_tokens", "token_embd.weight", "model.embed_tokens.weight" },
	{ "embed_positions", "position_embd.weight", "model.embed_positions.weight" },
	{ "norm", "output_norm.weight", "model.norm.weight" },
	{ "norm.bias", "output_norm.bias", "model.norm.bias" },
	{ "lm_head", "output.weight", "lm_head.weight" },
	{ "lm_head.bias", "output.bias", "lm_head.bias" },
	{ "rope_freqs", "rope_freqs.weight", NULL },
	{ "layernorm", "blk.{i}.attn_norm.weight", "model.layers.{i}.input_layernorm.weight" },
	{ "layernorm.bias", "blk.{i}.attn_norm.bias", "model.layers.{i}.input_layernorm.bias" },
	{ "layernorm", "blk.{i}.ffn_norm.weight", "model.layers.{i}.post_attention_layernorm.weight" },
	{ "layernorm.bias", "blk.{i}.ffn_norm.bias", "model.layers.{i}.post_attention_layernorm.bias" },
	{ "layernorm", "blk.{i}.post_attention_norm.weight", "model.layers.{i}.pre_feedforward_layernorm.weight" },
	{ "layernorm", "blk.{i}.post_ffw_norm.weight", "model.layers.{i}.post_feedforward_layernorm.weight" },
	{ "attn.qkv", "blk.{i}.attn_q.weight", "model.layers.{i}.self_attn.q_proj.weight" },
	{ "attn.qkv", "blk.{i}.attn_k.weight", "model.layers.{i}.self_attn.k_proj.weight" },
	{ "attn.qkv", "blk.{i}.attn_v.weight", "model.layers.{i}.self_attn.v_proj.weight" },
	{ "o_proj", "blk.{i}.attn_output.weight", "model.layers.{i}.self_attn.o_proj.weight" },
	{ "attn.qkv.bias", "blk.{i}.attn_q.bias", "model.layers.{i}.self_attn.q_proj.bias" },
	{ "attn.qkv.bias", "blk.{i}.attn_k.bias", "model.layers.{i}.self_attn.k_proj.bias" },
	{ "attn.qkv.bias", "blk.{i}.attn_v.bias", "model.layers.{i}.self_attn.v_proj.bias" },
	{ "o_proj.bias", "blk.{i}.attn_output.bias", "model.layers.{i}.self_attn.o_proj.bias" },
	{ "attn.qkv", "blk.{i}.attn_qkv.weight", "model.layers.{i}.self_attn.qkv_proj.weight" },
	{ "attn.qkv.bias", "blk.{i}.attn_qkv.bias", "model.layers.{i}.self_attn.qkv_proj.bias" },
	{ "q_norm", "blk.{i}.attn_q_norm.weight", "model.layers.{i}.self_attn.q_norm.weight" },
	{ "k_norm", "blk.{i}.attn_k_norm.weight", "model.layers.{i}.self_attn.k_norm.weight" },
	{ "sinks", "blk.{i}.attn_sinks.weight", "model.layers.{i}.self_attn.sinks" },
	{ "mlp.gate_up", "blk.{i}.ffn_gate.weight", "model.layers.{i}.mlp.gate_proj.weight" },
	{ "mlp.gate_up", "blk.{i}.ffn_up.weight", "model.layers.{i}.mlp.up_proj.weight" },
	{ "mlp.down_proj", "blk.{i}.ffn_down.weight", "model.layers.{i}.mlp.down_proj.weight" },
	{ "mlp.gate_up.bias", "blk.{i}.ffn_gate.bias", "model.layers.{i}.mlp.gate_proj.bias" },
	{ "mlp.gate_up.bias", "blk.{i}.ffn_up.bias", "model.layers.{i}.mlp.up_proj.bias" },
	{ "mlp.down_proj.bias", "blk.{i}.ffn_down.bias", "model.layers.{i}.mlp.down_proj.bias" },
	{ "mlp.gate_up", NULL, "model.layers.{i}.mlp.gate_up_proj.weight" },
	{ "router", "blk.{i}.ffn_gate_inp.weight", "model.layers.{i}.mlp.gate.weight" },
	{ "experts.gate_up", "blk.{i}.ffn_gate_exps.weight", "model.layers.{i}.mlp.experts.{e}.gate_proj.weight" },
	{ "experts.gate_up", "blk.{i}.ffn_up_exps.weight", "model.layers.{i}.mlp.experts.{e}.up_proj.weight" },
	{ "experts.down_proj", "blk.{i}.ffn_down_exps.weight", "model.layers.{i}.mlp.experts.{e}.down_proj.weight" },
	{ "experts.gate_up", NULL, "model.layers.{i}.mlp.experts.gate_up_proj" },
	{ "experts.down_proj", NULL, "model.layers.{i}.mlp.experts.down_proj" },
	{ "shared_expert.gate_up", "blk.{i}.ffn_gate_shexp.weight", "model.layers.{i}.mlp.shared_expert.gate_proj.weight" },
	{ "shared_expert.gate_up", "blk.{i}.ffn_up_shexp.weight", "model.layers.{i}.mlp.shared_expert.up_proj.weight" },
	{ "shared_expert.down_proj", "blk.{i}.ffn_down_shexp.weight", "model.layers.{i}.mlp.shared_expert.down_proj.weight" },
	{ "shared_expert_gate", "blk.{i}.ffn_gate_inp_shexp.weight", "model.layers.{i}.mlp.shared_expert_gate.weight" },
	/* transformers' other spellings of the same rows (tensor_mapping.py lists them beside the llama names) */
	{ "router", NULL, "model.layers.{i}.block_sparse_moe.gate.weight" },
	{ "experts.gate_up", NULL, "model.layers.{i}.block_sparse_moe.experts.{e}.w1.weight" },
	{ "experts.gate_up", NULL, "model.layers.{i}.block_sparse_moe.experts.{e}.w3.weight" },
	{ "experts.down_proj", NULL, "model.layers.{i}.block_sparse_moe.experts.{e}.w2.weight" },
	/* GPT-2 (GPT2LMHeadModel's state_dict under "transformer.", stripped) */
	{ "embed_tokens", NULL, "wte.weight" },
	{ "embed_positions", NULL, "wpe.weight" },
	{ "norm", NULL, "ln_f.weight" },
	{ "norm.bias", NULL, "ln_f.bias" },
	{ "layernorm", NULL, "h.{i}.ln_1.weight" },
	{ "layernorm.bias", NULL, "h.{i}.ln_1.bias" },
	{ "layernorm", NULL, "h.{i}.ln_2.weight" },
	{ "layernorm.bias", NULL, "h.{i}.ln_2.bias" },
	{ "attn.qkv", NULL, "h.{i}.attn.c_attn.weight" },
	{ "attn.qkv.bias", NULL, "h.{i}.attn.c_attn.bias" },
	{ "o_proj", NULL, "h.{i}.attn.c_proj.weight" },
	{ "o_proj.bias", NULL, "h.{i}.attn.c_proj.bias" },
	{ "mlp.gate_up", NULL, "h.{i}.mlp.c_fc.weight" },
	{ "mlp.gate_up.bias", NULL, "h.{i}.mlp.c_fc.bias" },
	{ "mlp.down_proj", NULL, "h.{i}.mlp.c_proj.weight" },
	{ "mlp.down_proj.bias", NULL, "h.{i}.mlp.c_proj.bias" },
};

/* Phi-3 fuses gate and up into one ffn_up (convert_hf_to_gguf.py Phi3MiniModel keeps gate_up_proj whole). */
static const mpm_name_row phi3_rows[] = {
	{ "mlp.gate_up", "blk.{i}.ffn_up.weight", "model.layers.{i}.mlp.gate_up_proj.weight" },
};

/* name with the first layer number after "blk." / "layers." / "h." as {i} and an expert number as {e}. */
static bool template_of(const char *name, char *out, size_t len)
{
	size_t o = 0;
	bool layer_done = false;
	const char *p = name;

	if (strncmp(p, "transformer.", 12) == 0)
		p += 12;
	while (*p && o + 4 < len) {
		const char *tag = NULL;
		size_t tl = 0;
		bool at_start = p == name || p[-1] == '.';
		if (!layer_done && at_start &&
		    (strncmp(p, "blk.", 4) == 0 || strncmp(p, "layers.", 7) == 0 || strncmp(p, "h.", 2) == 0)) {
			tl = p[0] == 'b' ? 4 : p[0] == 'l' ? 7 : 2;
			if (isdigit((unsigned char)p[tl]))
				tag = "{i}";
		} else if (strncmp(p, "experts.", 8) == 0 && isdigit((unsigned char)p[8])) {
			tl = 8;
			tag = "{e}";
		}
		if (tag) {
			if (o + tl + 4 >= len)
				return false;
			memcpy(out + o, p, tl);
			o += tl;
			memcpy(out + o, tag, 3);
			o += 3;
			p += tl;
			while (isdigit((unsigned char)*p))
				p++;
			if (tag[1] == 'i')
				layer_done = true;
			continue;
		}
		out[o++] = *p++;
	}
	if (*p)
		return false;
	out[o] = '\0';
	return true;
}

static const mpm_name_row *lookup(const mpm_name_row *t, size_t n, mpm_naming naming, const char *tmpl)
{
	for (size_t i = 0; i < n; i++) {
		const char *s = naming == MPM_NAMING_GGUF ? t[i].gguf : t[i].hf;
		if (s != NULL && strcmp(s, tmpl) == 0)
			return &t[i];
	}
	return NULL;
}

static const mpm_name_row *row_for(mpm_naming naming, const char *name, const char *model_type)
{
	char tmpl[160];
	const mpm_name_row *r;

	if (!template_of(name, tmpl, sizeof(tmpl)))
		return NULL;
	if (model_type != NULL && strcmp(model_type, "phi3") == 0 &&
	    (r = lookup(phi3_rows, sizeof(phi3_rows) / sizeof(phi3_rows[0]), naming, tmpl)) != NULL)
		return r;
	return lookup(rows, sizeof(rows) / sizeof(rows[0]), naming, tmpl);
}

const mpm_name_row *mpm_tensor_name_row(mpm_naming naming, const char *name)
{
	return row_for(naming, name, NULL);
}

/* The key of inventory entry t of m (its state_dict name looked up in the transformers column); NULL when the table
 * has no row for it. name gets the rendered template. */
static const char *inventory_key(const mp_model *m, const mp_tensor *t, char *name, size_t len)
{
	const mpm_name_row *r;

	mp_tensor_name(&m->inv, t, name, len);
	r = row_for(MPM_NAMING_HF, name, m->model_type);
	return r ? r->inventory : NULL;
}

/* The format class of the first inventory entry under key; -1 when none is. */
static int inventory_class(const mp_model *m, const char *key)
{
	char name[256];

	for (size_t i = 0; key != NULL && i < mp_inventory_size(&m->inv); i++) {
		const mp_tensor *t = mp_inventory_at(&m->inv, i);
		const char *k;

		if (t->flags & (MP_TF_BUFFER | MP_TF_UNCOUNTED))
			continue;
		k = inventory_key(m, t, name, sizeof(name));
		if (k != NULL && strcmp(k, key) == 0)
			return (int)mp_tensor_kind_class((mp_tensor_kind)t->kind);
	}
	return -1;
}

/* The row a quantisation tensor's weight falls under: "...q_proj.scales" -> the row of "...q_proj.weight". */
static const mpm_name_row *aux_row(mpm_naming naming, const char *name, const char *model_type)
{
	char base[300];
	const char *dot = strrchr(name, '.');
	int n;

	if (dot == NULL)
		return NULL;
	n = snprintf(base, sizeof(base), "%.*s.weight", (int)(dot - name), name);
	if (n < 0 || (size_t)n >= sizeof(base))
		return NULL;
	return row_for(naming, base, model_type);
}

static void add_class_bytes(mpm_match *out, int cls, uint64_t bytes)
{
	if (cls >= 0 && cls < MP_TC_COUNT)
		out->class_bytes[cls] += bytes;
	else
		out->other_bytes += bytes;
}

/* Values of the inventory's tensors under key (all their copies and layers). */
static bool inventory_values(const mp_model *m, const char *key, uint64_t *out)
{
	char name[256];
	uint64_t sum = 0;

	for (size_t i = 0; i < mp_inventory_size(&m->inv); i++) {
		const mp_tensor *t = mp_inventory_at(&m->inv, i);
		const char *k;
		uint64_t v;

		if (t->flags & (MP_TF_BUFFER | MP_TF_UNCOUNTED))
			continue;
		k = inventory_key(m, t, name, sizeof(name));
		if (k == NULL || strcmp(k, key) != 0)
			continue;
		if (!mp_tensor_values(t, &v) || !mp_mul_u64(v, t->count, &v) || !mp_add_u64(sum, v, &sum))
			return false;
	}
	*out = sum;
	return true;
}

mp_status mpm_match_tensors(const mpm_named_tensor *t, size_t n, mpm_naming naming, const mp_model *m,
			    mp_weight_layout layout, mpm_match *out, mp_error *err)
{
	(void)layout;
	memset(out, 0, sizeof(*out));
	if (!m->inv.built)
		return mp_fail(err, MP_EINTERNAL, mp_model_pointer(m), "the model's tensors were not built (mp_model_build)");
	for (size_t i = 0; i < n; i++) {
		const mpm_name_row *r;
		mpm_match_row *mr = NULL;

		out->file_bytes += t[i].bytes;
		if (t[i].aux) {
			r = aux_row(naming, t[i].name, m->model_type);
			out->aux_bytes += t[i].bytes;
			add_class_bytes(out, r ? inventory_class(m, r->inventory) : -1, t[i].bytes);
			continue;
		}
		r = row_for(naming, t[i].name, m->model_type);
		if (r != NULL && r->inventory == NULL) { /* a layout's own table (GGUF rope_freqs): no parameters */
			out->aux_bytes += t[i].bytes;
			out->other_bytes += t[i].bytes;
			continue;
		}
		if (r == NULL) {
			out->other_bytes += t[i].bytes;
			if (out->unmapped < MPM_MATCH_MAX_UNMAPPED)
				snprintf(out->unmapped_names[out->unmapped], sizeof(out->unmapped_names[0]), "%s",
					 t[i].name);
			out->unmapped++;
			continue;
		}
		for (size_t k = 0; k < out->n; k++)
			if (strcmp(out->row[k].inventory, r->inventory) == 0)
				mr = &out->row[k];
		if (mr == NULL) {
			if (out->n == MPM_MATCH_MAX_ROWS)
				return mp_fail(err, MP_EINTERNAL, "", "more than %d rows of tensors", MPM_MATCH_MAX_ROWS);
			mr = &out->row[out->n++];
			snprintf(mr->inventory, sizeof(mr->inventory), "%s", r->inventory);
			snprintf(mr->file_name, sizeof(mr->file_name), "%s",
				 naming == MPM_NAMING_GGUF ? r->gguf : r->hf);
			snprintf(mr->hf_name, sizeof(mr->hf_name), "%s", r->hf ? r->hf : "");
			if (!inventory_values(m, r->inventory, &mr->expected_values))
				return mp_fail(err, MP_EOVERFLOW, "", "the inventory's values overflow");
			mr->cls = inventory_class(m, r->inventory);
		}
		add_class_bytes(out, mr->cls, t[i].bytes);
		mr->file_tensors++;
		mr->file_values += t[i].values;
		mr->file_bytes += t[i].bytes;
	}
	out->ok = out->unmapped == 0;
	for (size_t k = 0; k < out->n; k++) {
		out->row[k].ok = out->row[k].file_values == out->row[k].expected_values;
		if (!out->row[k].ok) {
			out->mismatched++;
			out->ok = false;
		}
	}
	/* inventory tensors that no file row covers (buffers the runtime makes are not in a checkpoint) */
	for (size_t i = 0; i < mp_inventory_size(&m->inv); i++) {
		const mp_tensor *t = mp_inventory_at(&m->inv, i);
		char name[256];
		const char *k;
		bool covered = false;

		if (t->flags & (MP_TF_BUFFER | MP_TF_UNCOUNTED))
			continue;
		k = inventory_key(m, t, name, sizeof(name));
		for (size_t j = 0; j < out->n && k != NULL && !covered; j++)
			covered = strcmp(out->row[j].inventory, k) == 0;
		if (!covered) {
			if (out->missing < MPM_MATCH_MAX_UNMAPPED)
				snprintf(out->missing_names[out->missing], sizeof(out->missing_names[0]), "%s", name);
			out->missing++;
			out->ok = false;
		}
	}
	return MP_OK;
}

void mpm_match_describe(const mpm_match *mt, char *buf, size_t len)
{
	size_t o = 0;

	if (len == 0)
		return;
	buf[0] = '\0';
	for (size_t k = 0; k < mt->n && o < len; k++) {
		const mpm_match_row *r = &mt->row[k];
		if (r->ok)
			continue;
		o += (size_t)snprintf(buf + o, len - o, "%s%s: %llu tensors, %llu values; the inventory's %s: %llu values",
				      o ? "; " : "", r->file_name, (unsigned long long)r->file_tensors,
				      (unsigned long long)r->file_values, r->inventory,
				      (unsigned long long)r->expected_values);
	}
	for (size_t k = 0; k < mt->unmapped && k < MPM_MATCH_MAX_UNMAPPED && o < len; k++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s: not a tensor of the model's inventory", o ? "; " : "",
				      mt->unmapped_names[k]);
	for (size_t k = 0; k < mt->missing && k < MPM_MATCH_MAX_UNMAPPED && o < len; k++)
		o += (size_t)snprintf(buf + o, len - o, "%sthe inventory's %s: not in the file", o ? "; " : "",
				      mt->missing_names[k]);
}
