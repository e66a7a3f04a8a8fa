/*
 * h_models.c: the model resource. GET /v1/models (cursor pagination; filters model_type, source), GET, PUT
 * ({"hf_config": {...}}: stored with the planner's exact parameter count), PATCH (JSON merge patch, usually of
 * hf_config, in one transaction) and DELETE /v1/models/{id}. Writes are audited as "api".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../codec/codec.h"
#include "query.h"
#include "routes.h"

#define LIST_DEFAULT 100
#define LIST_MAX 1000

mp_status mpd_h_models_list(mpd_request *req, mpd_reply *rep)
{
	mp_store_model_filter f = { mpd_query(req, "model_type"), mpd_query(req, "source") };
	uint64_t limit;
	mpc_page page;
	int more;
	mp_status st = mpd_query_u64(req, "limit", 1, LIST_MAX, LIST_DEFAULT, &limit, &rep->err);

	if (st != MP_OK)
		return st;
	if (f.source && strcmp(f.source, "preset") != 0 && strcmp(f.source, "user") != 0)
		return mp_fail(&rep->err, MP_EINVAL, "?source", "source must be one of: preset, user");
	mpc_page_begin(&page);
	st = mps_model_find(req->d->svc, &f, mpd_query(req, "cursor"), (int)limit, mpc_page_add_model, &page, &more,
			    &rep->err);
	if (st != MP_OK) {
		mpc_out_free(&page.w);
		return st;
	}
	rep->text = mpc_page_finish(&page, more, NULL);
	rep->text_type = "application/json";
	return rep->text ? MP_OK : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
}

/* Answers with the stored document of path_id (201 with Location when created). */
static mp_status answer(mpd_request *req, mpd_reply *rep, bool created)
{
	mp_store_model m;
	mp_status st = mps_model_get(req->d->svc, req->path_id, &m, &rep->err);

	if (st == MP_EINVAL)
		snprintf(rep->err.field, sizeof(rep->err.field), "/id"); /* a malformed path id: 422 naming it */
	if (st != MP_OK)
		return st;
	{
		mpc_out w;

		mpc_out_init(&w);
		mpc_stored_model_write(&w, NULL, &m, mps_stored_model_repo_ids(&m));
		mps_model_free(&m);
		st = mpd_reply_json(rep, &w);
	}
	if (st != MP_OK)
		return st;
	if (created) {
		rep->http_status = 201;
		snprintf(rep->location, sizeof(rep->location), "/v1/models/%s", req->path_id);
	}
	return MP_OK;
}

mp_status mpd_h_model_get(mpd_request *req, mpd_reply *rep)
{
	return answer(req, rep, false);
}

static mp_status valid_path_id(const mpd_request *req, mp_error *err)
{
	if (mp_valid_id(req->path_id))
		return MP_OK;
	return mp_fail(err, MP_EINVAL, "/id", "a model id is 1 to 63 of a-z 0-9 . - _, starting with a letter or digit");
}

/* The request's preconditions on the stored model (NULL: none stored), inside the write's transaction. */
static mp_status model_precondition(void *ctx, const mp_store_model *current, mp_error *err)
{
	char *doc = NULL;
	mp_status st;

	if (current) { /* the document a GET of it gives */
		mpc_out w;

		mpc_out_init(&w);
		mpc_stored_model_write(&w, NULL, current, mps_stored_model_repo_ids(current));
		doc = mpc_out_finish(&w, NULL);
	}
	st = current && doc == NULL ? mp_fail(err, MP_ENOMEM, "", "out of memory")
				    : mpd_check_preconditions(ctx, doc, err);
	free(doc);
	return st;
}

static bool conditional(const mpd_request *req)
{
	return mpd_header(req, "If-Match") || mpd_header(req, "If-None-Match");
}

mp_status mpd_h_model_put(mpd_request *req, mpd_reply *rep)
{
	mps_model_input *in = malloc(sizeof(*in));
	char *owned = NULL;
	bool created = false;
	mp_status st = in ? valid_path_id(req, &rep->err) : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");

	if (st == MP_OK)
		st = mpc_stored_model_decode(req->json, "", req->path_id, in, &owned, &rep->err);
	if (st == MP_OK)
		st = mps_model_put_if(req->d->svc, in, "api", conditional(req) ? model_precondition : NULL, req, &created,
				      &rep->err);
	free(owned);
	free(in);
	return st == MP_OK ? answer(req, rep, created) : st;
}

/* The merge patch applied to a copy of the stored model (mps_model_update writes it only over the row it read). */
static mp_status patch_model(void *ctx, const mp_store_model *m, mps_model_input *in, char **owned, mp_error *err)
{
	const mpd_request *req = ctx;
	mpc_out w;
	char *stored;
	cJSON *doc = NULL;
	mp_status st;

	mpc_out_init(&w);
	mpc_stored_model_write(&w, NULL, m, mps_stored_model_repo_ids(m));
	stored = mpc_out_finish(&w, NULL);
	st = stored && (doc = cJSON_Parse(stored)) != NULL ? mpd_check_if_match(req, stored, err)
							   : mp_fail(err, MP_ENOMEM, "", "out of memory");

	/* hf_repo_ids is the presets' table, not the row's: a patch of it would be dropped without a word */
	if (st == MP_OK && cJSON_GetObjectItemCaseSensitive(req->json, "hf_repo_ids"))
		st = mp_fail(err, MP_EINVAL, "/hf_repo_ids",
			     "hf_repo_ids is read-only (the presets' table of Hugging Face repository ids, db/presets); a "
			     "model is found by its id, or by a repository id the presets list");
	if (st == MP_OK)
		st = mpc_merge_patch(doc, req->json, err);

	if (st == MP_OK)
		st = mpc_stored_model_decode(doc, "", req->path_id, in, owned, err);
	/* the stored representation carries the old derived members: only what the patch itself states is checked */
	if (st == MP_OK && !cJSON_GetObjectItemCaseSensitive(req->json, "model_type"))
		in->stated_model_type[0] = '\0';
	if (st == MP_OK && !cJSON_GetObjectItemCaseSensitive(req->json, "parameters"))
		in->stated_parameters_given = false;
	cJSON_Delete(doc);
	free(stored);
	return st;
}

mp_status mpd_h_model_patch(mpd_request *req, mpd_reply *rep)
{
	mp_status st = mps_model_update(req->d->svc, req->path_id, "api", patch_model, req, &rep->err);

	if (st == MP_EINVAL && strcmp(rep->err.field, "/model") == 0)
		snprintf(rep->err.field, sizeof(rep->err.field), "/id");
	return st == MP_OK ? answer(req, rep, false) : st;
}

mp_status mpd_h_model_delete(mpd_request *req, mpd_reply *rep)
{
	mp_status st = mps_model_delete_if(req->d->svc, req->path_id, "api", conditional(req) ? model_precondition : NULL,
					   req, &rep->err);

	if (st == MP_OK)
		rep->http_status = 204;
	return st;
}

/* GET /v1/models/{id}/tensors[?weight_dtype=D&tensor_parallel_size=N&format=text]: the stored model's tensors
 * (service mps_model_tensors), as JSON or, with ?format=text, as a table for people. */
mp_status mpd_h_model_tensors(mpd_request *req, mpd_reply *rep)
{
	mps_model_ref ref;
	mps_tensors_query q = {MP_DTYPE_INVALID, MP_DTYPE_INVALID, 1, NULL};
	mps_tensor_list l;
	mp_problems p = MP_PROBLEMS_INIT;
	const char *wd = mpd_query(req, "weight_dtype");
	bool is_auto = false;
	mp_status st;

	memset(&ref, 0, sizeof(ref));
	ref.kind = MPS_MODEL_STORED;
	snprintf(ref.id, sizeof(ref.id), "%s", req->path_id);
	snprintf(ref.pointer, sizeof(ref.pointer), "/id");
	if (!mp_valid_id(req->path_id))
		mp_problems_note(&p, valid_path_id(req, &rep->err), &rep->err);
	if (wd)
		mp_problems_note(&p, mpc_weight_dtype_ex(wd, "?weight_dtype", &q.weight_dtype, NULL, &is_auto, &rep->err),
				 &rep->err);
	mp_problems_note(&p,
			 mpd_query_u64(req, "tensor_parallel_size", 1, MP_MAX_GPUS, 1, &q.tensor_parallel_size,
				       &rep->err),
			 &rep->err);
	st = mp_problems_end(&p, &rep->err);
	if (st != MP_OK)
		return st;
	st = mps_model_tensors(req->d->svc, &ref, &q, &l, &rep->err);
	if (st != MP_OK)
		return st;
	rep->text = req->text ? mpc_model_tensors_text(req->path_id, &l) : mpc_model_tensors_print(req->path_id, &l, NULL);
	rep->text_type = req->text ? "text/plain; charset=utf-8" : "application/json";
	mps_tensor_list_release(&l);
	return rep->text ? MP_OK : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
}
