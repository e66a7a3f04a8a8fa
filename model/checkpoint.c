/*
 * checkpoint.c: a GGUF file or a safetensors checkpoint, from its headers, as the planner's model and the file's own
 * tensors (checkpoint.h). Reads with gguf.c and safetensors.c, maps with gguf_model.c and the config readers, matches
 * with tensor_names.c, and reads the storage format back from the tensors. No files, no HTTP.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "checkpoint.h"
#include "gguf.h"
#include "gguf_llamacpp.h"
#include "model.h"
#include "safetensors.h"

const char *mpm_ckpt_format_name(mpm_ckpt_format f)
{
	return f == MPM_CKPT_GGUF ? "gguf" : f == MPM_CKPT_SAFETENSORS ? "safetensors" : "none";
}

void mpm_checkpoint_free(mpm_checkpoint *c)
{
	if (c == NULL)
		return;
	free(c->llama);
	free(c->llama_tensors);
	memset(c, 0, sizeof(*c));
}

mp_status mpm_checkpoint_copy(mpm_checkpoint *dst, const mpm_checkpoint *src, mp_error *err)
{
	*dst = *src;
	dst->llama = NULL;
	dst->llama_tensors = NULL;
	if (src->llama) {
		dst->llama = malloc(sizeof(*dst->llama));
		if (dst->llama == NULL)
			goto nomem;
		*dst->llama = *src->llama;
	}
	if (src->llama_tensors && src->n_llama_tensors) {
		dst->llama_tensors = malloc(src->n_llama_tensors * sizeof(*dst->llama_tensors));
		if (dst->llama_tensors == NULL)
			goto nomem;
		memcpy(dst->llama_tensors, src->llama_tensors, src->n_llama_tensors * sizeof(*dst->llama_tensors));
	}
	return MP_OK;
nomem:
	mpm_checkpoint_free(dst);
	return mp_fail(err, MP_ENOMEM, "", "out of memory copying a checkpoint");
}

/* One more tensor of a storage type into the table (kept sorted by bytes at the end). */
static void count_type(mpm_checkpoint *c, const char *name, uint64_t bytes)
{
	size_t i;

	for (i = 0; i < c->ntypes; i++)
		if (strcmp(c->types[i].name, name) == 0)
			break;
	if (i == c->ntypes) {
		if (c->ntypes == MPM_CKPT_MAX_TYPES) {
			c->types_left_out++;
			return;
		}
		snprintf(c->types[c->ntypes].name, sizeof(c->types[0].name), "%s", name);
		c->ntypes++;
	}
	c->types[i].tensors++;
	c->types[i].bytes += bytes;
}

static int cmp_type(const void *a, const void *b)
{
	const mpm_ckpt_type *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* ----- GGUF ------------------------------------------------------------------------------------------------- */

/* The planner's name for the ggml type holding most of the matrices' values (llama.cpp's general.file_type "mostly
 * Q4_0" sense: GPT-2's f32 token embedding outweighs its q4_0 layers in bytes, not in values); a type it has no name
 * for takes the nearest of the planner's GGUF and float formats by bits per value (IQ4_XS 4.25 -> q4_K 4.5). */
static void gguf_format(const mpm_gguf *g, mpm_checkpoint *c)
{
	static const mp_dtype named[] = { MP_DTYPE_Q8_0, MP_DTYPE_Q6_K, MP_DTYPE_Q5_K, MP_DTYPE_Q4_K, MP_DTYPE_Q4_0,
					  MP_DTYPE_FP16, MP_DTYPE_BF16, MP_DTYPE_FP32 };
	uint64_t by_type[MP_GGML_TYPE_COUNT] = { 0 };
	uint32_t best = MP_GGML_F32;
	mp_ggml_traits tr;
	double bits, gap = 1e9;

	for (size_t i = 0; i < g->n_tensors; i++)
		if (g->tensors[i].n_dims >= 2 && g->tensors[i].type < MP_GGML_TYPE_COUNT)
			by_type[g->tensors[i].type] += g->tensors[i].ne[0] * g->tensors[i].ne[1] * g->tensors[i].ne[2] *
						       g->tensors[i].ne[3];
	for (uint32_t t = 0; t < MP_GGML_TYPE_COUNT; t++)
		if (by_type[t] > by_type[best])
			best = t;
	c->weight_dtype = mp_ggml_to_dtype(best);
	c->weight_dtype_exact = c->weight_dtype != MP_DTYPE_INVALID;
	if (c->weight_dtype_exact)
		return;
	tr = mp_ggml_traits_of(best);
	bits = tr.block_values ? 8.0 * tr.block_bytes / tr.block_values : 16;
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		mp_dtype_layout l = mp_dtype_layout_of(named[i]);
		double b = l.block_values ? 8.0 * l.block_bytes / l.block_values : 16, d = b > bits ? b - bits : bits - b;

		if (d < gap) {
			gap = d;
			c->weight_dtype = named[i];
		}
	}
}

/* The tensors of g under the name table, for the match. */
static mp_status gguf_match(const mpm_gguf *g, const mp_model *m, mpm_checkpoint *c, mp_error *err)
{
	mpm_named_tensor *nt = calloc(g->n_tensors ? g->n_tensors : 1, sizeof(*nt));
	mp_status st;

	if (nt == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory matching the file's tensors");
	for (size_t i = 0; i < g->n_tensors; i++) {
		uint64_t v = 1;

		for (int d = 0; d < 4; d++)
			v *= g->tensors[i].ne[d]; /* within 63 bits: mpm_gguf_read checked the element counts */
		nt[i].name = g->tensors[i].name;
		nt[i].values = v;
		nt[i].bytes = g->tensors[i].bytes;
	}
	st = mpm_match_tensors(nt, g->n_tensors, MPM_NAMING_GGUF, m, MP_LAYOUT_GGUF, &c->match, err);
	free(nt);
	return st;
}

mp_status mpm_checkpoint_gguf(const uint8_t *const *bufs, const size_t *lens, size_t nfiles, const char *pointer,
			      mp_model *m, mpm_checkpoint *out, mp_error *err)
{
	mpm_gguf *g = NULL;
	char ptr[128];
	size_t first = 0;
	mp_status st = MP_OK;

	memset(out, 0, sizeof(*out));
	if (nfiles == 0 || nfiles > MPM_GGUF_MAX_SPLITS)
		return mp_fail(err, MP_EINVAL, pointer, "a GGUF model is 1 to %d files (got %zu)", MPM_GGUF_MAX_SPLITS,
			       nfiles);
	g = calloc(nfiles, sizeof(*g));
	if (g == NULL)
		return mp_fail(err, MP_ENOMEM, pointer, "out of memory reading GGUF headers");
	for (size_t i = 0; i < nfiles && st == MP_OK; i++) {
		bool truncated = false;

		if (nfiles > 1)
			snprintf(ptr, sizeof(ptr), "%s/%zu", pointer, i);
		else
			snprintf(ptr, sizeof(ptr), "%s", pointer);
		st = mpm_gguf_read(bufs[i], lens[i], 0, ptr, &g[i], &truncated, err);
		if (st == MP_EINVAL && truncated && err) {
			char why[sizeof(err->message)];

			snprintf(why, sizeof(why), "%s", err->message);
			mp_fail(err, MP_EINVAL, ptr,
				"%.300s: the bytes given end inside the header: give the file's first bytes up to the end of "
				"its tensor infos (with its tokenizer a header is a few MB; 32 MiB hold any, and the bytes "
				"past the header are ignored)",
				why);
		}
		out->header_bytes += g[i].data_offset;
	}
	if (st == MP_OK && (g[0].split_count > 1 || nfiles > 1)) {
		/* a split model: every file, each split.no once; the first (split.no 0) holds the metadata */
		for (size_t i = 0; i < nfiles && st == MP_OK; i++) {
			snprintf(ptr, sizeof(ptr), "%s/%zu", pointer, i);
			if (g[i].split_count != nfiles)
				st = mp_fail(err, MP_EINVAL, nfiles > 1 ? ptr : pointer,
					     "this file is %s of a model split in %u files (split.count), and %zu were given: "
					     "give every file's header, in a list",
					     g[i].split_count ? "part" : "not a part", g[i].split_count, nfiles);
			else if (g[i].split_no == 0)
				first = i;
		}
		if (st == MP_OK && g[first].split_no != 0)
			st = mp_fail(err, MP_EINVAL, pointer, "no file of the split model is its first (split.no 0)");
		for (size_t i = 0; i < nfiles && st == MP_OK; i++) {
			if (i == first)
				continue;
			snprintf(ptr, sizeof(ptr), "%s/%zu", pointer, i);
			st = mpm_gguf_merge(&g[first], &g[i], ptr, err);
		}
		if (st == MP_OK && g[first].splits_read != g[first].split_count)
			st = mp_fail(err, MP_EINVAL, pointer, "%u of the split model's %u files were read",
				     g[first].splits_read, g[first].split_count);
	}
	if (st == MP_OK)
		st = mpm_gguf_to_model(&g[first], pointer, m, err);
	if (st == MP_OK)
		st = gguf_match(&g[first], m, out, err);
	if (st == MP_OK) {
		const mpm_gguf *f = &g[first];
		const mpm_gguf_kv *name = mpm_gguf_find(f, "general.name");

		out->format = MPM_CKPT_GGUF;
		out->gguf_version = f->version;
		out->files = (uint32_t)nfiles;
		out->tensors = f->n_tensors;
		out->tensor_bytes = f->tensor_bytes;
		snprintf(out->architecture, sizeof(out->architecture), "%s", f->architecture);
		if (name && name->str)
			snprintf(out->name, sizeof(out->name), "%s", name->str);
		for (size_t i = 0; i < f->n_tensors; i++) {
			mp_ggml_traits tr = mp_ggml_traits_of(f->tensors[i].type);

			count_type(out, tr.name ? tr.name : "?", f->tensors[i].bytes);
		}
		qsort(out->types, out->ntypes, sizeof(out->types[0]), cmp_type);
		gguf_format(f, out);
		memcpy(out->class_bytes, out->match.class_bytes, sizeof(out->class_bytes));
		out->other_bytes = out->match.other_bytes;
		out->llama = calloc(1, sizeof(*out->llama));
		if (out->llama == NULL)
			st = mp_fail(err, MP_ENOMEM, pointer, "out of memory");
		else
			st = mpm_gguf_llamacpp(f, pointer, out->llama, &out->llama_tensors, &out->n_llama_tensors, err);
	}
	for (size_t i = 0; i < nfiles; i++)
		mpm_gguf_free(&g[i]);
	free(g);
	if (st != MP_OK)
		mpm_checkpoint_free(out);
	return st;
}

/* ----- safetensors ------------------------------------------------------------------------------------------ */

/* The format of the matrices from the tensors: the quantisation their state shows, else the float dtype of most
 * of the weights' bytes. */
static void st_format(const mpm_st *st, mpm_checkpoint *c)
{
	uint64_t by[MPM_ST_DTYPE_COUNT] = { 0 };
	uint32_t best = MPM_ST_BF16;
	bool g_idx = false;

	c->weight_dtype_exact = true;
	for (size_t i = 0; i < st->n_tensors; i++) {
		const mpm_st_tensor *t = &st->tensors[i];
		size_t n = strlen(t->name);

		if (n > 6 && strcmp(t->name + n - 6, ".g_idx") == 0)
			g_idx = true;
		if (!t->aux && t->n_dims >= 2 && t->dtype < MPM_ST_DTYPE_COUNT)
			by[t->dtype] += t->bytes;
	}
	for (uint32_t d = 0; d < MPM_ST_DTYPE_COUNT; d++)
		if (by[d] > by[best])
			best = d;
	if (strncmp(st->quant_method, "gptq", 4) == 0 || strcmp(st->quant_method, "compressed-tensors") == 0) {
		c->weight_dtype = MP_DTYPE_INT4;
		c->int4_scheme = g_idx || strcmp(st->quant_method, "gptq") == 0 ? MP_INT4_GPTQ : MP_INT4_AWQ;
		/* the group: a qweight's input features over its scales' rows (GPTQ qweight [in/8, out], AWQ [in, out/8];
		 * scales [in/g, out] in both) */
		for (size_t i = 0; i < st->n_tensors && c->int4_group_size == 0; i++) {
			const mpm_st_tensor *q = &st->tensors[i];
			size_t n = strlen(q->name);

			if (n < 8 || strcmp(q->name + n - 8, ".qweight") != 0 || q->n_dims != 2)
				continue;
			for (size_t j = 0; j < st->n_tensors; j++) {
				const mpm_st_tensor *s = &st->tensors[j];

				if (strlen(s->name) == n - 1 && strncmp(s->name, q->name, n - 8) == 0 &&
				    strcmp(s->name + n - 8, ".scales") == 0 && s->n_dims == 2 && s->shape[0] > 0) {
					uint64_t in = c->int4_scheme == MP_INT4_GPTQ ? q->shape[0] * 8 : q->shape[0];

					c->int4_group_size = in / s->shape[0];
					break;
				}
			}
		}
		c->weight_dtype_exact = strcmp(st->quant_method, "compressed-tensors") != 0;
	} else if (strcmp(st->quant_method, "bitsandbytes") == 0) {
		c->weight_dtype = best == MPM_ST_I8 ? MP_DTYPE_INT8 : MP_DTYPE_NF4;
	} else {
		switch (best) {
		case MPM_ST_F8_E4M3:
			c->weight_dtype = MP_DTYPE_FP8_E4M3;
			break;
		case MPM_ST_F8_E5M2:
			c->weight_dtype = MP_DTYPE_FP8_E5M2;
			break;
		case MPM_ST_F16:
			c->weight_dtype = MP_DTYPE_FP16;
			break;
		case MPM_ST_F32:
			c->weight_dtype = MP_DTYPE_FP32;
			break;
		case MPM_ST_I8:
			c->weight_dtype = MP_DTYPE_INT8;
			break;
		case MPM_ST_BF16:
			c->weight_dtype = MP_DTYPE_BF16;
			break;
		default:
			c->weight_dtype = MP_DTYPE_BF16;
			c->weight_dtype_exact = false;
			break;
		}
	}
}

/* The index's shards against the headers given, and its tensors against theirs. */
static mp_status check_index(const cJSON *index, const mpm_st *st, size_t n, const char *pointer, mp_error *err)
{
	const char *names[MPM_GGUF_MAX_SPLITS];
	int ns = mpm_st_index_shards(index, names, MPM_GGUF_MAX_SPLITS);
	const cJSON *map, *e;
	char ptr[160];

	snprintf(ptr, sizeof(ptr), "%s", pointer);
	if (ns == -1)
		return mp_fail(err, MP_EINVAL, pointer,
			       "safetensors_index is model.safetensors.index.json: {\"weight_map\": {tensor: shard file}}");
	if (ns == -2 || (size_t)ns != n)
		return mp_fail(err, MP_EINVAL, pointer,
			       "the index names %s shards and %zu headers were given: give each shard's header, in the "
			       "order the index names them",
			       ns == -2 ? "more than 256" : "a different number of", n);
	map = cJSON_GetObjectItemCaseSensitive(index, "weight_map");
	cJSON_ArrayForEach(e, map)
	{
		bool found = false;

		for (size_t i = 0; i < st->n_tensors && !found; i++)
			found = strcmp(st->tensors[i].name, e->string) == 0;
		if (!found)
			return mp_fail(err, MP_EINVAL, pointer,
				       "tensor '%.200s' is in the index's weight_map (shard %.200s) but in none of the headers",
				       e->string, cJSON_IsString(e) ? e->valuestring : "?");
	}
	return MP_OK;
}

static mp_status st_finish(mpm_st *st, size_t n, const cJSON *index, const mp_model *m, const char *pointer,
			   mpm_checkpoint *out, mp_error *err)
{
	mpm_named_tensor *nt;
	mp_status st_ = MP_OK;

	if (index)
		st_ = check_index(index, st, n, pointer, err);
	if (st_ != MP_OK)
		return st_;
	nt = calloc(st->n_tensors ? st->n_tensors : 1, sizeof(*nt));
	if (nt == NULL)
		return mp_fail(err, MP_ENOMEM, pointer, "out of memory");
	for (size_t i = 0; i < st->n_tensors; i++) {
		nt[i].name = st->tensors[i].name;
		nt[i].values = st->tensors[i].values;
		nt[i].bytes = st->tensors[i].bytes;
		nt[i].aux = st->tensors[i].aux;
		count_type(out, mpm_st_dtype_name(st->tensors[i].dtype), st->tensors[i].bytes);
	}
	st_ = mpm_match_tensors(nt, st->n_tensors, MPM_NAMING_HF, m, MP_LAYOUT_PACKED, &out->match, err);
	free(nt);
	if (st_ != MP_OK)
		return st_;
	qsort(out->types, out->ntypes, sizeof(out->types[0]), cmp_type);
	out->format = MPM_CKPT_SAFETENSORS;
	out->files = st->shards;
	out->tensors = st->n_tensors;
	out->tensor_bytes = st->tensor_bytes;
	out->aux_bytes = st->aux_bytes;
	out->header_bytes = st->header_bytes;
	snprintf(out->architecture, sizeof(out->architecture), "%s", m->model_type);
	snprintf(out->quant_method, sizeof(out->quant_method), "%s", st->quant_method);
	memcpy(out->class_bytes, out->match.class_bytes, sizeof(out->class_bytes));
	out->other_bytes = out->match.other_bytes;
	st_format(st, out);
	return MP_OK;
}

mp_status mpm_checkpoint_safetensors(const cJSON *const *headers, size_t n, const cJSON *index, const mp_model *m,
				     const char *pointer, mpm_checkpoint *out, mp_error *err)
{
	mpm_st st = { 0 };
	char ptr[128];
	mp_status s = MP_OK;

	memset(out, 0, sizeof(*out));
	if (n == 0 || n > MPM_GGUF_MAX_SPLITS)
		return mp_fail(err, MP_EINVAL, pointer, "safetensors_headers is a list of 1 to %d shard headers (got %zu)",
			       MPM_GGUF_MAX_SPLITS, n);
	for (size_t i = 0; i < n && s == MP_OK; i++) {
		snprintf(ptr, sizeof(ptr), "%s/%zu", pointer, i);
		s = mpm_st_read_json(headers[i], (uint32_t)i, ptr, &st, err);
	}
	if (s == MP_OK)
		s = st_finish(&st, n, index, m, pointer, out, err);
	mpm_st_free(&st);
	if (s != MP_OK)
		mpm_checkpoint_free(out);
	return s;
}

mp_status mpm_checkpoint_safetensors_bytes(const uint8_t *const *bufs, const size_t *lens, size_t n,
					   const cJSON *index, const mp_model *m, const char *pointer,
					   mpm_checkpoint *out, mp_error *err)
{
	mpm_st st = { 0 };
	char ptr[128];
	mp_status s = MP_OK;

	memset(out, 0, sizeof(*out));
	if (n == 0 || n > MPM_GGUF_MAX_SPLITS)
		return mp_fail(err, MP_EINVAL, pointer, "a checkpoint is 1 to %d shards (got %zu)", MPM_GGUF_MAX_SPLITS, n);
	for (size_t i = 0; i < n && s == MP_OK; i++) {
		snprintf(ptr, sizeof(ptr), "%s/%zu", pointer, i);
		s = mpm_st_read(bufs[i], lens[i], 0, (uint32_t)i, ptr, &st, err);
	}
	if (s == MP_OK)
		s = st_finish(&st, n, index, m, pointer, out, err);
	mpm_st_free(&st);
	if (s != MP_OK)
		mpm_checkpoint_free(out);
	return s;
}

void mpm_checkpoint_weights(const mpm_checkpoint *c, const mp_weights *computed, mp_weights *out)
{
	*out = *computed;
	for (int k = 0; k < MP_TC_COUNT; k++)
		out->cls[k].bytes = c->class_bytes[k];
	out->buffers_bytes = c->other_bytes;
	out->total_bytes = c->tensor_bytes;
}

mp_status mpm_checkpoint_safetensors_files(const char *config_text, const uint8_t *const *bufs, const size_t *lens,
					   size_t n, const char *index_text, const char *pointer, mp_model *m,
					   mpm_checkpoint *out, mp_error *err)
{
	cJSON *index = NULL;
	mp_status st;

	memset(out, 0, sizeof(*out));
	st = mpm_from_hf_text(config_text, pointer, m, err);
	if (st != MP_OK)
		return st;
	if (index_text && (index = cJSON_Parse(index_text)) == NULL)
		return mp_fail(err, MP_EPARSE, pointer, "model.safetensors.index.json is not JSON");
	st = mpm_checkpoint_safetensors_bytes(bufs, lens, n, index, m, pointer, out, err);
	cJSON_Delete(index);
	return st;
}

mp_status mpm_checkpoint_index_shards(const char *index_text, const char *pointer, char (*names)[MPM_SHARD_NAME_MAX],
				      size_t cap, size_t *n, mp_error *err)
{
	cJSON *index = cJSON_Parse(index_text);
	const char *found[1024];
	int k;

	*n = 0;
	if (index == NULL)
		return mp_fail(err, MP_EPARSE, pointer, "model.safetensors.index.json is not JSON");
	k = mpm_st_index_shards(index, found, cap < 1024 ? cap : 1024);
	if (k >= 0)
		for (int i = 0; i < k; i++) {
			snprintf(names[i], MPM_SHARD_NAME_MAX, "%s", found[i]);
			(*n)++;
		}
	cJSON_Delete(index);
	if (k == -1)
		return mp_fail(err, MP_EINVAL, pointer,
			       "model.safetensors.index.json is not an index: {\"weight_map\": {tensor: shard file}}");
	if (k == -2)
		return mp_fail(err, MP_EINVAL, pointer, "model.safetensors.index.json names more than %zu shards", cap);
	return MP_OK;
}
