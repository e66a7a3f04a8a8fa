/*
 * mpc_model.c: a request's "model" member (a stored id, an inline hf_config or architecture object, or a bare
 * parameter count) into a model reference; the model block of a plan; the stored-model documents both ways.
 * Configs are read by model/ (the readers); parameter counts come from the service.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "../model/checkpoint.h"
#include "../model/fields.h"
#include "../model/model.h"
#include "codec.h"

typedef struct bare_model {
	uint64_t parameters;
} bare_model;

static const mpm_field bare_model_fields[] = {
	{ .name = "parameters", .type = MPM_F_U64, .required = true, .offset = offsetof(bare_model, parameters),
	  .min = 1, .max = UINT64_C(1) << 50 },
};

bool mpc_repo_id_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0, slashes = 0;
	bool start = true;

	if (n == 0 || n > 96)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');

		if (c == '/') {
			if (start || ++slashes > 1)
				return false;
			start = true;
			continue;
		}
		if (start ? !alnum : !(alnum || c == '.' || c == '_' || c == '-'))
			return false;
		start = false;
	}
	return !start;
}

mp_status mpc_base64_decode(const char *text, size_t len, const char *field, uint8_t **out, size_t *out_len,
			    mp_error *err)
{
	EVP_ENCODE_CTX *ctx;
	uint8_t *buf;
	int n = 0, tail = 0, rc;

	*out = NULL;
	*out_len = 0;
	if (len > (size_t)INT32_MAX)
		return mp_fail(err, MP_EINVAL, field, "the base64 text is over 2 GiB");
	buf = malloc(len / 4 * 3 + 4);
	ctx = EVP_ENCODE_CTX_new();
	if (buf == NULL || ctx == NULL) {
		free(buf);
		EVP_ENCODE_CTX_free(ctx);
		return mp_fail(err, MP_ENOMEM, field, "out of memory decoding base64");
	}
	EVP_DecodeInit(ctx);
	/* OpenSSL's decoder: the RFC 4648 alphabet, '=' padding, line breaks and blanks between groups allowed */
	rc = EVP_DecodeUpdate(ctx, buf, &n, (const unsigned char *)text, (int)len);
	if (rc >= 0)
		rc = EVP_DecodeFinal(ctx, buf + n, &tail);
	EVP_ENCODE_CTX_free(ctx);
	if (rc < 0) {
		free(buf);
		return mp_fail(err, MP_EINVAL, field,
			       "not base64 (RFC 4648: A-Z, a-z, 0-9, '+', '/', '=' padding; `base64 -w0 FILE` writes it)");
	}
	*out = buf;
	*out_len = (size_t)n + (size_t)tail;
	return MP_OK;
}

/* {"gguf_header": "<base64>" | ["<base64>", ...]}: the header bytes of a GGUF file, or of each file of a split
 * model. */
static mp_status decode_gguf_header(const cJSON *model, const char *pointer, mps_model_ref *out, mp_error *err)
{
	const cJSON *h = cJSON_GetObjectItemCaseSensitive(model, "gguf_header"), *e;
	size_t n = cJSON_IsArray(h) ? (size_t)cJSON_GetArraySize(h) : 1, i = 0;
	uint8_t **bufs = NULL;
	size_t *lens = NULL;
	char ptr[96];
	mp_status st = MP_OK;

	snprintf(ptr, sizeof(ptr), "%s/gguf_header", pointer);
	if (cJSON_GetArraySize(model) != 1)
		return mp_fail(err, MP_EINVAL, pointer,
			       "a GGUF model is {\"gguf_header\": \"<base64 of the file's first bytes>\"} (a list of them for "
			       "a split model) with no other members: the architecture is the file's own");
	if (!(cJSON_IsString(h) || (cJSON_IsArray(h) && n >= 1 && n <= 256)))
		return mp_fail(err, MP_EINVAL, ptr,
			       "gguf_header is the base64 of a GGUF file's first bytes (its header: `head -c 32M FILE | "
			       "base64 -w0`), or a list of 1 to 256 of them, one per file of a split model");
	bufs = calloc(n, sizeof(*bufs));
	lens = calloc(n, sizeof(*lens));
	out->ckpt = calloc(1, sizeof(*out->ckpt));
	out->arch = malloc(sizeof(*out->arch));
	if (bufs == NULL || lens == NULL || out->ckpt == NULL || out->arch == NULL) {
		st = mp_fail(err, MP_ENOMEM, pointer, "out of memory");
		goto out;
	}
	if (cJSON_IsString(h)) {
		st = mpc_base64_decode(h->valuestring, strlen(h->valuestring), ptr, &bufs[0], &lens[0], err);
	} else {
		cJSON_ArrayForEach(e, h)
		{
			char ip[112];

			snprintf(ip, sizeof(ip), "%s/%zu", ptr, i);
			if (!cJSON_IsString(e))
				st = mp_fail(err, MP_EINVAL, ip, "each item is the base64 of one file's header");
			else
				st = mpc_base64_decode(e->valuestring, strlen(e->valuestring), ip, &bufs[i], &lens[i], err);
			if (st != MP_OK)
				break;
			i++;
		}
	}
	if (st == MP_OK)
		st = mpm_checkpoint_gguf((const uint8_t *const *)bufs, lens, n, ptr, out->arch, out->ckpt, err);
	if (st == MP_OK) {
		snprintf(out->arch->json_pointer, sizeof(out->arch->json_pointer), "%.60s", ptr);
		out->kind = MPS_MODEL_INLINE;
	}
out:
	for (size_t k = 0; bufs && k < n; k++)
		free(bufs[k]);
	free(bufs);
	free(lens);
	if (st != MP_OK)
		mpc_model_ref_release(out);
	return st;
}

/* {"safetensors_headers": [{...}, ...], "hf_config": {...}, "safetensors_index": {...}}: the JSON header of each
 * shard beside the checkpoint's config.json (the architecture) and, optionally, its index. */
static mp_status safetensors_model(const cJSON *model, const char *pointer, mps_model_ref *out, mp_error *err)
{
	const cJSON *h = cJSON_GetObjectItemCaseSensitive(model, "safetensors_headers");
	const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(model, "hf_config");
	const cJSON *index = cJSON_GetObjectItemCaseSensitive(model, "safetensors_index"), *e;
	const cJSON **list = NULL;
	size_t n = (size_t)cJSON_GetArraySize(h), i = 0;
	char ptr[96];
	mp_status st = MP_OK;

	snprintf(ptr, sizeof(ptr), "%s/safetensors_headers", pointer);
	if (cfg == NULL)
		return mp_fail(err, MP_EINVAL, pointer,
			       "safetensors_headers come with the checkpoint's config.json as hf_config (the headers give "
			       "the tensors, the config the architecture)");
	if (cJSON_GetArraySize(model) != 2 + (index != NULL))
		return mp_fail(err, MP_EINVAL, pointer,
			       "a safetensors model is {\"safetensors_headers\": [...], \"hf_config\": {...}} with an optional "
			       "safetensors_index (model.safetensors.index.json) and no other members");
	if (!cJSON_IsArray(h) || n < 1 || n > 256)
		return mp_fail(err, MP_EINVAL, ptr,
			       "safetensors_headers is a list of 1 to 256 JSON objects, each shard's header (the JSON after "
			       "the file's 8-byte length)");
	if (index && !cJSON_IsObject(index)) {
		snprintf(ptr, sizeof(ptr), "%s/safetensors_index", pointer);
		return mp_fail(err, MP_EINVAL, ptr, "safetensors_index is model.safetensors.index.json, an object");
	}
	list = calloc(n, sizeof(*list));
	out->ckpt = calloc(1, sizeof(*out->ckpt));
	out->arch = malloc(sizeof(*out->arch));
	if (list == NULL || out->ckpt == NULL || out->arch == NULL) {
		st = mp_fail(err, MP_ENOMEM, pointer, "out of memory");
		goto out;
	}
	cJSON_ArrayForEach(e, h) list[i++] = e;
	{
		char cp[96];

		snprintf(cp, sizeof(cp), "%s/hf_config", pointer);
		st = mpm_from_hf(cfg, cp, out->arch, err);
	}
	if (st == MP_OK)
		st = mpm_checkpoint_safetensors((const struct cJSON *const *)list, n, index, out->arch, ptr, out->ckpt,
						err);
	if (st == MP_OK)
		out->kind = MPS_MODEL_INLINE;
out:
	free(list);
	if (st != MP_OK)
		mpc_model_ref_release(out);
	return st;
}

/* A revision as the Hub takes it: a branch, tag or commit ([A-Za-z0-9._-] and '/' between them, no ".."). */
static bool revision_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 95 || strstr(s, "..") || s[0] == '/' || s[n - 1] == '/')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
		      c == '_' || c == '-' || c == '/'))
			return false;
	}
	return true;
}

static mp_status hf_repo_model(const cJSON *model, const char *pointer, mps_model_ref *out, mp_error *err)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(model, "hf_repo");
	const cJSON *rev = cJSON_GetObjectItemCaseSensitive(model, "revision");
	char ptr[96];

	if (cJSON_GetArraySize(model) != 1 + (rev != NULL))
		return mp_fail(err, MP_EINVAL, pointer,
			       "a model by repository is {\"hf_repo\": \"org/name\"} with an optional revision and no other "
			       "members");
	snprintf(ptr, sizeof(ptr), "%s/hf_repo", pointer);
	if (!cJSON_IsString(r) || !mpc_repo_id_ok(r->valuestring) || strchr(r->valuestring, '/') == NULL)
		return mp_fail(err, MP_EINVAL, ptr,
			       "hf_repo is a Hugging Face repository id, org/name (letters, digits, '.', '_', '-'; at most "
			       "96 bytes)");
	if (rev) {
		snprintf(ptr, sizeof(ptr), "%s/revision", pointer);
		if (!cJSON_IsString(rev) || !revision_ok(rev->valuestring))
			return mp_fail(err, MP_EINVAL, ptr,
				       "revision is a branch, tag or commit of the repository (letters, digits, '.', '_', "
				       "'-', '/'; at most 95 bytes; no \"..\")");
		snprintf(out->revision, sizeof(out->revision), "%s", rev->valuestring);
	}
	snprintf(out->repo_id, sizeof(out->repo_id), "%s", r->valuestring);
	out->kind = MPS_MODEL_HF_REPO;
	return MP_OK;
}

mp_status mpc_model_ref_decode(const cJSON *model, const char *pointer, bool required, mps_model_ref *out,
			       mp_error *err)
{
	char ptr[96];
	mp_status st;

	memset(out, 0, sizeof(*out));
	mpc_join(out->pointer, sizeof(out->pointer), pointer, NULL);
	if (model == NULL) {
		if (!required)
			return MP_OK;
		return mp_fail(err, MP_EINVAL, pointer,
			       "model is required: a stored id, {\"hf_config\": {...}}, {\"architecture\": {...}} or "
			       "{\"parameters\": N}");
	}
	if (cJSON_IsString(model)) {
		out->kind = MPS_MODEL_STORED;
		if (mp_valid_id(model->valuestring)) {
			snprintf(out->id, sizeof(out->id), "%s", model->valuestring);
			return MP_OK;
		}
		/* a Hugging Face repo id ("meta-llama/Llama-3.1-8B-Instruct", "Qwen2.5-7B"): the service finds the
		 * preset it stands for */
		if (mpc_repo_id_ok(model->valuestring)) {
			snprintf(out->repo_id, sizeof(out->repo_id), "%s", model->valuestring);
			return MP_OK;
		}
		return mp_fail(err, MP_EINVAL, pointer,
			       "model must be a stored id (^[a-z0-9][a-z0-9._-]{0,62}$, GET /v1/models) or a Hugging Face "
			       "repo id (owner/name, letters, digits, '.', '_', '-', at most 96 bytes)");
	}
	if (cJSON_IsObject(model) && cJSON_GetObjectItemCaseSensitive(model, "gguf_header"))
		return decode_gguf_header(model, pointer, out, err);
	if (cJSON_IsObject(model) && cJSON_GetObjectItemCaseSensitive(model, "safetensors_headers"))
		return safetensors_model(model, pointer, out, err);
	if (cJSON_IsObject(model) && cJSON_GetObjectItemCaseSensitive(model, "hf_repo"))
		return hf_repo_model(model, pointer, out, err);
	if (cJSON_IsObject(model) && cJSON_GetObjectItemCaseSensitive(model, "architecture")) {
		/* a generic architecture; an hf_config beside it names the model (its model_type) and gives the
		 * training details (dropout, activation) */
		const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(model, "hf_config");
		const cJSON *type = cfg ? cJSON_GetObjectItemCaseSensitive(cfg, "model_type") : NULL;

		if (cJSON_GetArraySize(model) != 1 + (cfg != NULL))
			return mp_fail(err, MP_EINVAL, pointer,
				       "a model by architecture is {\"architecture\": {...}} (with an optional hf_config)");
		snprintf(ptr, sizeof(ptr), "%s/architecture", pointer);
		if ((out->arch = malloc(sizeof(*out->arch))) == NULL)
			return mp_fail(err, MP_ENOMEM, pointer, "out of memory");
		st = mpm_from_architecture(cJSON_GetObjectItemCaseSensitive(model, "architecture"), ptr, out->arch,
					   err);
		if (st != MP_OK) {
			mpc_model_ref_release(out);
			return st;
		}
		if (cJSON_IsString(type))
			snprintf(out->arch->model_type, sizeof(out->arch->model_type), "%s", type->valuestring);
		mpm_training_extras(cfg, out->arch);
		out->kind = MPS_MODEL_INLINE;
		return MP_OK;
	}
	if (cJSON_IsObject(model) && cJSON_GetObjectItemCaseSensitive(model, "hf_config")) {
		if (cJSON_GetArraySize(model) != 1)
			return mp_fail(err, MP_EINVAL, pointer,
				       "an inline model is {\"hf_config\": {...}} with no other members");
		snprintf(ptr, sizeof(ptr), "%s/hf_config", pointer);
		if ((out->arch = malloc(sizeof(*out->arch))) == NULL)
			return mp_fail(err, MP_ENOMEM, pointer, "out of memory");
		st = mpm_from_hf(cJSON_GetObjectItemCaseSensitive(model, "hf_config"), ptr, out->arch, err);
		if (st != MP_OK) {
			mpc_model_ref_release(out);
			return st;
		}
		out->kind = MPS_MODEL_INLINE;
		return MP_OK;
	}
	if (cJSON_IsObject(model) && cJSON_GetObjectItemCaseSensitive(model, "parameters")) {
		bare_model bm = { 0 };

		st = mpm_decode_fields(model, pointer, bare_model_fields, MPM_COUNT(bare_model_fields), &bm, err);
		if (st != MP_OK)
			return st;
		out->kind = MPS_MODEL_BARE;
		out->parameters = bm.parameters;
		return MP_OK;
	}
	return mp_fail(err, MP_EINVAL, pointer,
		       "model must be a stored id (\"llama-3-8b\"), {\"hf_config\": {...}}, {\"architecture\": {...}}, "
		       "{\"parameters\": N}, {\"gguf_header\": \"<base64>\"}, {\"safetensors_headers\": [...], "
		       "\"hf_config\": {...}} or {\"hf_repo\": \"org/name\"}");
}

void mpc_model_ref_release(mps_model_ref *r)
{
	if (r == NULL)
		return;
	free(r->arch);
	r->arch = NULL;
	mpm_checkpoint_free(r->ckpt);
	free(r->ckpt);
	r->ckpt = NULL;
}

void mpc_inference_request_release(mps_inference_request *rq)
{
	if (rq)
		mpc_model_ref_release(&rq->job.model);
}

void mpc_training_request_release(mps_training_request *rq)
{
	if (rq)
		mpc_model_ref_release(&rq->job.model);
}

void mpc_roofline_request_release(mps_roofline_request *rq)
{
	if (rq)
		mpc_model_ref_release(&rq->transformer.job.model);
}

void mpc_engine_check_request_release(mps_engine_check_request *rq)
{
	if (rq)
		mpc_model_ref_release(&rq->plan.job.model);
}

/* The checkpoint a model was read from: its files, tensors, bytes per storage type and the match against the
 * inventory, each mismatch named. */
static void checkpoint_write(mpc_out *w, const mpm_checkpoint *c)
{
	const mpm_match *mt = &c->match;
	char line[400];

	mpc_w_obj(w, "checkpoint");
	mpc_w_lit(w, "format", mpm_ckpt_format_name(c->format));
	mpc_w_u64(w, "files", c->files);
	mpc_w_u64(w, "tensors", c->tensors);
	mpc_w_u64(w, "tensor_bytes", c->tensor_bytes);
	mpc_w_u64(w, "aux_bytes", c->aux_bytes);
	mpc_w_u64(w, "header_bytes", c->header_bytes);
	mpc_w_str(w, "architecture", c->architecture);
	if (c->name[0])
		mpc_w_str(w, "name", c->name);
	if (c->format == MPM_CKPT_GGUF)
		mpc_w_u64(w, "gguf_version", c->gguf_version);
	if (c->quant_method[0])
		mpc_w_str(w, "quant_method", c->quant_method);
	mpc_w_lit(w, "weight_dtype", mp_dtype_name(c->weight_dtype));
	mpc_w_bool(w, "weight_dtype_exact", c->weight_dtype_exact);
	mpc_w_arr(w, "tensor_types");
	for (size_t i = 0; i < c->ntypes; i++) {
		mpc_w_obj(w, NULL);
		mpc_w_str(w, "type", c->types[i].name);
		mpc_w_u64(w, "tensors", c->types[i].tensors);
		mpc_w_u64(w, "bytes", c->types[i].bytes);
		mpc_w_end(w);
	}
	mpc_w_end(w);
	mpc_w_bool(w, "matches_inventory", mt->ok);
	mpc_w_u64(w, "inventory_rows", mt->n);
	mpc_w_arr(w, "mismatches");
	for (size_t k = 0; k < mt->n; k++) {
		const mpm_match_row *r = &mt->row[k];

		if (r->ok)
			continue;
		snprintf(line, sizeof(line), "%s: %llu tensors, %llu values; the inventory's %s: %llu values", r->file_name,
			 (unsigned long long)r->file_tensors, (unsigned long long)r->file_values, r->inventory,
			 (unsigned long long)r->expected_values);
		mpc_w_str(w, NULL, line);
	}
	for (size_t k = 0; k < mt->unmapped && k < MPM_MATCH_MAX_UNMAPPED; k++) {
		snprintf(line, sizeof(line), "%s: not a tensor of the model's inventory", mt->unmapped_names[k]);
		mpc_w_str(w, NULL, line);
	}
	for (size_t k = 0; k < mt->missing && k < MPM_MATCH_MAX_UNMAPPED; k++) {
		snprintf(line, sizeof(line), "the inventory's %s: not in the file", mt->missing_names[k]);
		mpc_w_str(w, NULL, line);
	}
	if (mt->unmapped > MPM_MATCH_MAX_UNMAPPED || mt->missing > MPM_MATCH_MAX_UNMAPPED) {
		snprintf(line, sizeof(line), "%llu more were left out",
			 (unsigned long long)((mt->unmapped > MPM_MATCH_MAX_UNMAPPED ? mt->unmapped - MPM_MATCH_MAX_UNMAPPED : 0) +
					      (mt->missing > MPM_MATCH_MAX_UNMAPPED ? mt->missing - MPM_MATCH_MAX_UNMAPPED : 0)));
		mpc_w_str(w, NULL, line);
	}
	mpc_w_end(w);
	mpc_w_end(w);
}

void mpc_model_write(mpc_out *w, const char *key, const mps_model *m)
{
	mpc_w_obj(w, key);
	mpc_w_str_or_null(w, "id", m->id);
	mpc_w_str(w, "model_type", m->arch.model_type);
	mpc_w_u64(w, "parameters", m->params.total);
	if (m->architecture_known) {
		mpc_w_u64(w, "active_parameters_per_token", m->params.active_per_token);
		mpc_w_obj(w, "parameters_by_component");
		mpc_w_u64(w, "embedding", m->params.embedding);
		mpc_w_u64(w, "position_embedding", m->params.position_embedding);
		mpc_w_u64(w, "attention", m->params.attention);
		mpc_w_u64(w, "mlp", m->params.mlp);
		mpc_w_u64(w, "experts", m->params.experts);
		mpc_w_u64(w, "norms", m->params.norms);
		mpc_w_u64(w, "lm_head", m->params.lm_head);
		if (m->params.recurrent) /* state-space mixers: only models that have them report the member */
			mpc_w_u64(w, "recurrent", m->params.recurrent);
		if (m->params.vision) /* a multimodal wrapper's image tower and projector */
			mpc_w_u64(w, "vision", m->params.vision);
		mpc_w_end(w);
		mpc_w_bool(w, "tie_word_embeddings", m->arch.tie_word_embeddings);
	}
	if (m->source[0])
		mpc_w_str(w, "source", m->source);
	if (m->ckpt)
		checkpoint_write(w, m->ckpt);
	mpc_w_end(w);
}

void mpc_stored_model_write(mpc_out *w, const char *key, const mp_store_model *m, const char *const *hf_repo_ids)
{
	cJSON *cfg = cJSON_Parse(m->config_json);

	if (cfg == NULL) {
		w->failed = true; /* the store keeps what the decoder took: JSON; here only memory can fail */
		return;
	}
	mpc_w_obj(w, key);
	mpc_w_str(w, "id", m->id);
	mpc_w_str(w, "model_type", m->model_type);
	mpc_w_u64(w, "parameters", m->parameters);
	mpc_w_str(w, "source", m->source);
	mpc_w_str(w, "created_at", m->created_at);
	mpc_w_str(w, "updated_at", m->updated_at);
	/* the Hugging Face repo ids a preset stands for (a request may name the model by any of them) */
	mpc_w_arr(w, "hf_repo_ids");
	for (size_t i = 0; hf_repo_ids && hf_repo_ids[i]; i++)
		mpc_w_str(w, NULL, hf_repo_ids[i]);
	mpc_w_end(w);
	mpc_w_item(w, "hf_config", cfg);
	mpc_w_end(w);
	cJSON_Delete(cfg);
}

static const mpm_field stored_model_fields[] = {
	{ .name = "hf_config", .type = MPM_F_ANY, .required = true },
	{ .name = "id", .type = MPM_F_ANY },
	{ .name = "model_type", .type = MPM_F_ANY },
	{ .name = "parameters", .type = MPM_F_ANY },
	{ .name = "source", .type = MPM_F_ANY },
	{ .name = "created_at", .type = MPM_F_ANY },
	{ .name = "updated_at", .type = MPM_F_ANY },
	{ .name = "hf_repo_ids", .type = MPM_F_ANY }, /* read-only: the presets' table */
};

mp_status mpc_stored_model_decode(const cJSON *doc, const char *pointer, const char *id, mps_model_input *in,
				  char **owned, mp_error *err)
{
	const cJSON *cfg, *bid;
	char ptr[96], field[96];
	mp_status st;
	int unused = 0; /* every member is read here, not by the table */

	memset(in, 0, sizeof(*in));
	*owned = NULL;
	st = mpm_decode_fields(doc, pointer, stored_model_fields, MPM_COUNT(stored_model_fields), &unused, err);
	if (st != MP_OK)
		return st;
	bid = cJSON_GetObjectItemCaseSensitive(doc, "id");
	if (bid && !(cJSON_IsString(bid) && strcmp(bid->valuestring, id) == 0)) {
		snprintf(field, sizeof(field), "%s/id", pointer);
		return mp_fail(err, MP_EINVAL, field, "id in the body differs from the id in the path");
	}
	{
		/* the derived members, as stated: the service checks them against hf_config */
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(doc, "model_type");
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(doc, "parameters");
		mp_problems p = MP_PROBLEMS_INIT;

		if (t && !(cJSON_IsString(t) && strlen(t->valuestring) < sizeof(in->stated_model_type))) {
			snprintf(field, sizeof(field), "%s/model_type", pointer);
			mp_problems_note(&p, mp_fail(err, MP_EINVAL, field, "model_type is a string (read from hf_config)"),
					 err);
		} else if (t)
			snprintf(in->stated_model_type, sizeof(in->stated_model_type), "%s", t->valuestring);
		if (n && !(cJSON_IsNumber(n) && n->valuedouble >= 0 && n->valuedouble < 1.8e19 &&
			   n->valuedouble == (double)(uint64_t)n->valuedouble)) {
			snprintf(field, sizeof(field), "%s/parameters", pointer);
			mp_problems_note(&p,
					 mp_fail(err, MP_EINVAL, field,
						 "parameters is a whole number (computed from hf_config; leave it out)"),
					 err);
		} else if (n) {
			in->stated_parameters_given = true;
			in->stated_parameters = (uint64_t)n->valuedouble;
		}
		st = mp_problems_end(&p, err);
		if (st != MP_OK)
			return st;
	}
	cfg = cJSON_GetObjectItemCaseSensitive(doc, "hf_config");
	snprintf(ptr, sizeof(ptr), "%s/hf_config", pointer);
	st = mpm_from_hf(cfg, ptr, &in->arch, err);
	if (st != MP_OK)
		return st;
	*owned = cJSON_PrintUnformatted(cfg);
	if (*owned == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	in->config_json = *owned;
	snprintf(in->id, sizeof(in->id), "%s", id);
	return MP_OK;
}
