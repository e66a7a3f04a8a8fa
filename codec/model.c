/*
 * model.c: a request's "model" member (a stored id, an inline hf_config or architecture object, or a bare
 * parameter count) into a model reference; the model block of a plan; the stored-model documents both ways.
 * Configs are read by model/ (the readers); parameter counts come from the service.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		       "model must be a stored id (\"llama-3-8b\"), {\"hf_config\": {...}}, {\"architecture\": {...}} "
		       "or {\"parameters\": N}");
}

void mpc_model_ref_release(mps_model_ref *r)
{
	if (r == NULL)
		return;
	free(r->arch);
	r->arch = NULL;
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
