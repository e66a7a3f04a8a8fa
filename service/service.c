/*
 * service.c: the service handle (the store, the memo of decoded models, the GPU probe), model and device
 * resolution, and the store's use cases (reads, writes, read-modify-write, export and import). The memo holds
 * stored models already parsed and counted, so a stored config is read once per store change, not per request.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../kernels/calib.h"
#include "../model/model.h"
#include "service_int.h"

#define MEMO_SLOTS 64

typedef struct memo_slot {
	uint64_t used;		/* last use (least recently used goes first); 0 = free */
	mps_model *value;	/* heap, kept between uses of the slot */
} memo_slot;

struct mps_service {
	mp_store *store;
	char db_path[512];
	pthread_mutex_t lock;	/* the memo and the GPU probe */
	uint64_t memo_generation;
	uint64_t memo_clock;
	memo_slot memo[MEMO_SLOTS];
	uint64_t memo_hits, memo_misses;
	bool gpu_probed;
	mp_status gpu_status;
	mp_calib_gpu_info gpu;
	char gpu_reason[320];
};

/* ----- opening -------------------------------------------------------------------------------------------- */

static mp_status mkdir_parents(const char *path, mp_error *err)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return mp_fail(err, MP_EDB, "--db", "cannot create folder %s: %s", buf, strerror(errno));
		*p = '/';
	}
	return MP_OK;
}

mp_status mps_open_at(const char *db_path, int version, mps_service **out, mp_error *err)
{
	mps_service *s;
	mp_status st;

	*out = NULL;
	if (strlen(db_path) >= sizeof(s->db_path))
		return mp_fail(err, MP_EDB, "--db", "the database path is longer than %zu bytes", sizeof(s->db_path) - 1);
	st = mkdir_parents(db_path, err);
	if (st != MP_OK)
		return st;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	snprintf(s->db_path, sizeof(s->db_path), "%s", db_path);
	st = version > 0 ? mp_store_open_at(db_path, version, mps_presets(), &s->store, err)
			 : mp_store_open(db_path, mps_presets(), &s->store, err);
	if (st != MP_OK) {
		free(s);
		return st;
	}
	pthread_mutex_init(&s->lock, NULL);
	*out = s;
	return MP_OK;
}

mp_status mps_open(const char *db_path, mps_service **out, mp_error *err)
{
	return mps_open_at(db_path, 0, out, err);
}

static void memo_clear(mps_service *s)
{
	for (int i = 0; i < MEMO_SLOTS; i++) {
		free(s->memo[i].value);
		memset(&s->memo[i], 0, sizeof(s->memo[i]));
	}
}

void mps_close(mps_service *s)
{
	if (s == NULL)
		return;
	mp_store_close(s->store);
	memo_clear(s);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

mp_store *mps_store(mps_service *s)
{
	return s->store;
}

const char *mps_db_path(const mps_service *s)
{
	return s->db_path;
}

/* ----- health --------------------------------------------------------------------------------------------- */

void mps_health_get(mps_service *s, mps_health *h)
{
	mp_error e = { { 0 }, { 0 }, NULL };

	memset(h, 0, sizeof(*h));
	h->db_path = s->db_path;
	h->schema_version = mp_store_user_version(s->store);
	h->db_writable = mp_store_write_state(s->store, h->db_problem, sizeof(h->db_problem)) == MP_STORE_WRITABLE;
	snprintf(h->db_notice, sizeof(h->db_notice), "%s", mp_store_open_notice(s->store));
	h->kernels_built_in = mp_calib_built_in();
	pthread_mutex_lock(&s->lock);
	if (!s->gpu_probed) {
		s->gpu_status = mp_calib_gpu_probe(&s->gpu, &e);
		snprintf(s->gpu_reason, sizeof(s->gpu_reason), "%.319s", s->gpu_status == MP_OK ? "" : e.message);
		s->gpu_probed = true;
	}
	h->gpu_available = s->gpu_status == MP_OK;
	if (h->gpu_available) {
		snprintf(h->gpu_name, sizeof(h->gpu_name), "%s", s->gpu.name);
		h->gpu_memory_bytes = s->gpu.memory_bytes;
	}
	snprintf(h->gpu_reason, sizeof(h->gpu_reason), "%s", s->gpu_reason);
	pthread_mutex_unlock(&s->lock);
}

void mps_health_refresh(mps_service *s)
{
	pthread_mutex_lock(&s->lock);
	s->gpu_probed = false;
	pthread_mutex_unlock(&s->lock);
}

/* ----- models ------------------------------------------------------------------------------------------ */

static memo_slot *memo_find(mps_service *s, const char *id)
{
	for (int i = 0; i < MEMO_SLOTS; i++)
		if (s->memo[i].used && strcmp(s->memo[i].value->id, id) == 0)
			return &s->memo[i];
	return NULL;
}

/* The memo's copy of id into out, first dropping every copy when the store moved. Caller holds the lock. */
static bool memo_get(mps_service *s, const char *id, uint64_t gen, mps_model *out)
{
	memo_slot *hit;

	if (gen != s->memo_generation) {
		memo_clear(s);
		s->memo_generation = gen;
	}
	hit = memo_find(s, id);
	if (hit == NULL)
		return false;
	*out = *hit->value;
	hit->used = ++s->memo_clock;
	return true;
}

/* Keeps a copy (best effort: out of memory only means it is not kept). Caller holds the lock. */
static void memo_put(mps_service *s, const mps_model *m)
{
	memo_slot *slot = memo_find(s, m->id);

	if (slot == NULL) {
		slot = &s->memo[0];
		for (int i = 0; i < MEMO_SLOTS && slot->used; i++)
			if (!s->memo[i].used || s->memo[i].used < slot->used)
				slot = &s->memo[i];
		if (slot->value == NULL && (slot->value = malloc(sizeof(*slot->value))) == NULL)
			return;
	}
	*slot->value = *m;
	slot->used = ++s->memo_clock;
}

/* A stored model: parsed and counted once per store generation (gen: read by the caller just now). */
static mp_status stored_model(mps_service *s, const char *id, uint64_t gen, mps_model *out, mp_error *err)
{
	mp_store_model row;
	mp_status st;

	pthread_mutex_lock(&s->lock);
	if (memo_get(s, id, gen, out)) {
		s->memo_hits++;
		pthread_mutex_unlock(&s->lock);
		return MP_OK;
	}
	s->memo_misses++;
	pthread_mutex_unlock(&s->lock);
	st = mp_store_model_get(s->store, id, &row, err);
	if (st != MP_OK)
		return st;
	memset(out, 0, sizeof(*out));
	snprintf(out->id, sizeof(out->id), "%s", id);
	st = mpm_from_hf_text(row.config_json, "/model", &out->arch, err);
	mp_store_model_free(&row);
	if (st == MP_EPARSE)
		return mp_fail(err, MP_EINTERNAL, "/model", "stored config of '%s' is not JSON", id);
	if (st == MP_OK)
		st = mp_count_parameters(&out->arch, &out->params, err);
	if (st != MP_OK)
		return st;
	out->architecture_known = true;
	/* kept only if nothing was written while it was read */
	pthread_mutex_lock(&s->lock);
	if (mp_store_generation(s->store) == gen && s->memo_generation == gen)
		memo_put(s, out);
	pthread_mutex_unlock(&s->lock);
	return MP_OK;
}

void mps_model_memo_stats(mps_service *s, uint64_t *hits, uint64_t *misses)
{
	pthread_mutex_lock(&s->lock);
	*hits = s->memo_hits;
	*misses = s->memo_misses;
	pthread_mutex_unlock(&s->lock);
}

mp_status mps_model_resolve(mps_service *s, const mps_model_ref *ref, mps_model *out, mp_error *err)
{
	return mps_model_resolve_at(s, ref, ref->kind == MPS_MODEL_STORED ? mp_store_generation(s->store) : 0, out, err);
}

mp_status mps_model_resolve_at(mps_service *s, const mps_model_ref *ref, uint64_t gen, mps_model *out, mp_error *err)
{
	mp_status st;

	memset(out, 0, sizeof(*out));
	switch (ref->kind) {
	case MPS_MODEL_NONE:
		return mp_fail(err, MP_EINVAL, ref->pointer,
			       "model is required: a stored id, {\"hf_config\": {...}}, {\"architecture\": {...}} or "
			       "{\"parameters\": N}");
	case MPS_MODEL_STORED: {
		char id[MP_STORE_ID_MAX];
		const char *asked = ref->repo_id[0] ? ref->repo_id : ref->id;

		/* a Hugging Face repo id stands for its preset (or names a stored id spelt in its own case) */
		snprintf(id, sizeof(id), "%s", ref->id);
		if (ref->repo_id[0] && !mps_model_repo_lookup(ref->repo_id, id, sizeof(id)))
			return mps_not_found(s, true, asked, ref->pointer, err);
		st = stored_model(s, id, gen, out, err);
		if (st == MP_ENOTFOUND)
			return mps_not_found(s, true, asked, ref->pointer, err);
		if (st == MP_EINVAL)
			snprintf(err->field, sizeof(err->field), "%s", ref->pointer);
		if (st == MP_OK) /* errors about a stored model's keys name the model member itself */
			snprintf(out->arch.json_pointer, sizeof(out->arch.json_pointer), "%s", ref->pointer);
		return st;
	}
	case MPS_MODEL_INLINE:
		out->arch = ref->arch;
		out->architecture_known = true;
		return mp_count_parameters(&out->arch, &out->params, err);
	case MPS_MODEL_BARE:
		out->params.total = out->params.active_per_token = ref->parameters;
		snprintf(out->arch.model_type, sizeof(out->arch.model_type), "unknown");
		return MP_OK;
	}
	return mp_fail(err, MP_EINTERNAL, ref->pointer, "unknown model reference");
}

/* ----- devices ------------------------------------------------------------------------------------------ */

mp_status mps_device_resolve(mps_service *s, const mps_device_ref *ref, mp_store_device *out, mp_error *err)
{
	return mps_device_resolve_at(s, ref, ref->inline_profile ? 0 : mp_store_generation(s->store), out, err);
}

mp_status mps_device_resolve_at(mps_service *s, const mps_device_ref *ref, uint64_t gen, mp_store_device *out,
				mp_error *err)
{
	mp_status st;

	if (ref->inline_profile) {
		*out = ref->profile;
		return MP_OK;
	}
	st = mp_store_device_get_at(s->store, ref->id, gen, out, err);
	if (st == MP_ENOTFOUND)
		return mps_not_found(s, false, ref->id, ref->pointer, err);
	if (st != MP_OK)
		snprintf(err->field, sizeof(err->field), "%s", ref->pointer);
	return st;
}

mp_status mps_device_get(mps_service *s, const char *id, mp_store_device *out, mp_error *err)
{
	mp_status st = mp_store_device_get(s->store, id, out, err);

	return st == MP_ENOTFOUND ? mps_not_found(s, false, id, "/device", err) : st;
}

/* A profile's link must name a stored device. */
static mp_status check_link(mps_service *s, const mp_store_device *d, const char *pointer, mp_error *err)
{
	mp_store_device *other;
	mp_error e2 = MP_ERROR_INIT;
	mp_status st;

	if (d->linked_device_id[0] == '\0')
		return MP_OK;
	other = malloc(sizeof(*other));
	st = other ? mp_store_device_get(s->store, d->linked_device_id, other, &e2) : MP_ENOMEM;
	free(other);
	if (st == MP_ENOTFOUND || st == MP_EINVAL)
		return mp_fail_at(err, MP_EINVAL, pointer, "/linked_device_id", "linked_device_id names no stored device");
	if (st != MP_OK)
		return mp_fail(err, st, "", "%s", st == MP_ENOMEM ? "out of memory" : e2.message);
	return MP_OK;
}

mp_status mps_device_put(mps_service *s, const mp_store_device *d, const char *actor, const char *pointer,
			 bool *created, mp_error *err)
{
	mp_status st = check_link(s, d, pointer, err);

	return st == MP_OK ? mp_store_device_write(s->store, d, actor, created, err) : st;
}

mp_status mps_device_delete(mps_service *s, const char *id, const char *actor, mp_error *err)
{
	return mp_store_device_remove(s->store, id, actor, err);
}

mp_status mps_device_update(mps_service *s, const char *id, const char *actor,
			    mp_status (*change)(void *ctx, mp_store_device *d, mp_error *err), void *ctx, mp_error *err)
{
	mp_store_device *d = malloc(sizeof(*d));
	mp_status st;

	if (d == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	st = mp_store_begin(s->store, err);
	if (st != MP_OK) {
		free(d);
		return st;
	}
	st = mp_store_device_get(s->store, id, d, err);
	if (st == MP_OK)
		st = change(ctx, d, err);
	if (st == MP_OK)
		st = mps_device_put(s, d, actor, "", NULL, err);
	if (st == MP_OK)
		st = mp_store_commit(s->store, err);
	else
		mp_store_rollback(s->store);
	free(d);
	return st;
}

/* The stored device id for a precondition: *current points at d when it is stored, is NULL when it is not. */
static mp_status device_current(mps_service *s, const char *id, mp_store_device *d, const mp_store_device **current,
				mp_error *err)
{
	mp_status st = mp_store_device_get(s->store, id, d, err);

	*current = st == MP_OK ? d : NULL;
	return st == MP_ENOTFOUND ? MP_OK : st;
}

mp_status mps_device_put_if(mps_service *s, const mp_store_device *d, const char *actor, mps_device_precondition check,
			    void *ctx, bool *created, mp_error *err)
{
	mp_store_device *cur = malloc(sizeof(*cur));
	const mp_store_device *current = NULL;
	mp_status st = cur ? mp_store_begin(s->store, err) : mp_fail(err, MP_ENOMEM, "", "out of memory");

	if (st != MP_OK) {
		free(cur);
		return st;
	}
	if (check)
		st = device_current(s, d->id, cur, &current, err);
	if (st == MP_OK && check)
		st = check(ctx, current, err);
	if (st == MP_OK)
		st = mps_device_put(s, d, actor, "", created, err);
	if (st == MP_OK)
		st = mp_store_commit(s->store, err);
	else
		mp_store_rollback(s->store);
	free(cur);
	return st;
}

mp_status mps_device_delete_if(mps_service *s, const char *id, const char *actor, mps_device_precondition check,
			       void *ctx, mp_error *err)
{
	mp_store_device *cur = malloc(sizeof(*cur));
	const mp_store_device *current = NULL;
	mp_status st = cur ? mp_store_begin(s->store, err) : mp_fail(err, MP_ENOMEM, "", "out of memory");

	if (st != MP_OK) {
		free(cur);
		return st;
	}
	if (check)
		st = device_current(s, id, cur, &current, err);
	if (st == MP_OK && check)
		st = check(ctx, current, err);
	if (st == MP_OK)
		st = mps_device_delete(s, id, actor, err);
	if (st == MP_OK)
		st = mp_store_commit(s->store, err);
	else
		mp_store_rollback(s->store);
	free(cur);
	return st;
}

/* ----- models in the store ------------------------------------------------------------------------------ */

mp_status mps_model_get(mps_service *s, const char *id, mp_store_model *out, mp_error *err)
{
	mp_status st = mp_store_model_get(s->store, id, out, err);

	return st == MP_ENOTFOUND ? mps_not_found(s, true, id, "/model", err) : st;
}

static mp_status model_row(const mps_model_input *in, mp_store_model *row, mp_error *err)
{
	mp_param_count pc;
	mp_status st = mp_count_parameters(&in->arch, &pc, err);
	mp_problems p = MP_PROBLEMS_INIT;

	if (st != MP_OK)
		return st;
	/* model_type and parameters are derived from hf_config: a body that states others contradicts itself */
	if (in->stated_model_type[0] && strcmp(in->stated_model_type, in->arch.model_type) != 0)
		mp_problems_note(&p,
				 mp_fail(err, MP_EINVAL, "/model_type",
					 "model_type '%s' contradicts hf_config, whose model_type is '%s': model_type is "
					 "read from hf_config (leave it out, or send the config of the model you mean)",
					 in->stated_model_type, in->arch.model_type),
				 err);
	if (in->stated_parameters_given && in->stated_parameters != pc.total)
		mp_problems_note(&p,
				 mp_fail(err, MP_EINVAL, "/parameters",
					 "parameters %llu contradicts hf_config, whose model has %llu parameters: the count "
					 "is computed from hf_config (leave it out)",
					 (unsigned long long)in->stated_parameters, (unsigned long long)pc.total),
				 err);
	st = mp_problems_end(&p, err);
	if (st != MP_OK)
		return st;
	memset(row, 0, sizeof(*row));
	snprintf(row->id, sizeof(row->id), "%s", in->id);
	snprintf(row->model_type, sizeof(row->model_type), "%s", in->arch.model_type);
	snprintf(row->source, sizeof(row->source), "user");
	row->parameters = pc.total;
	row->config_json = (char *)in->config_json; /* borrowed: the store only reads it */
	return MP_OK;
}

mp_status mps_model_put(mps_service *s, const mps_model_input *in, const char *actor, bool *created, mp_error *err)
{
	mp_store_model row;
	mp_status st = model_row(in, &row, err);

	return st == MP_OK ? mp_store_model_write(s->store, &row, actor, created, err) : st;
}

mp_status mps_model_delete(mps_service *s, const char *id, const char *actor, mp_error *err)
{
	return mp_store_model_remove(s->store, id, actor, err);
}

mp_status mps_model_update(mps_service *s, const char *id, const char *actor,
			   mp_status (*change)(void *ctx, const mp_store_model *m, mps_model_input *in, char **owned,
					       mp_error *err),
			   void *ctx, mp_error *err)
{
	mp_store_model m;
	mps_model_input *in = calloc(1, sizeof(*in));
	char *owned = NULL;
	mp_status st;

	memset(&m, 0, sizeof(m));
	if (in == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	st = mp_store_begin(s->store, err);
	if (st != MP_OK) {
		free(in);
		return st;
	}
	st = mp_store_model_get(s->store, id, &m, err);
	if (st == MP_OK)
		st = change(ctx, &m, in, &owned, err);
	if (st == MP_OK)
		st = mps_model_put(s, in, actor, NULL, err);
	if (st == MP_OK)
		st = mp_store_commit(s->store, err);
	else
		mp_store_rollback(s->store);
	mp_store_model_free(&m);
	free(owned);
	free(in);
	return st;
}

/* The stored model id for a precondition (as device_current); *m is freed by the caller. */
static mp_status model_current(mps_service *s, const char *id, mp_store_model *m, const mp_store_model **current,
			       mp_error *err)
{
	mp_status st = mp_store_model_get(s->store, id, m, err);

	*current = st == MP_OK ? m : NULL;
	return st == MP_ENOTFOUND ? MP_OK : st;
}

mp_status mps_model_put_if(mps_service *s, const mps_model_input *in, const char *actor, mps_model_precondition check,
			   void *ctx, bool *created, mp_error *err)
{
	mp_store_model m;
	const mp_store_model *current = NULL;
	mp_status st = mp_store_begin(s->store, err);

	memset(&m, 0, sizeof(m));
	if (st != MP_OK)
		return st;
	if (check)
		st = model_current(s, in->id, &m, &current, err);
	if (st == MP_OK && check)
		st = check(ctx, current, err);
	if (st == MP_OK)
		st = mps_model_put(s, in, actor, created, err);
	if (st == MP_OK)
		st = mp_store_commit(s->store, err);
	else
		mp_store_rollback(s->store);
	mp_store_model_free(&m);
	return st;
}

mp_status mps_model_delete_if(mps_service *s, const char *id, const char *actor, mps_model_precondition check,
			      void *ctx, mp_error *err)
{
	mp_store_model m;
	const mp_store_model *current = NULL;
	mp_status st = mp_store_begin(s->store, err);

	memset(&m, 0, sizeof(m));
	if (st != MP_OK)
		return st;
	if (check)
		st = model_current(s, id, &m, &current, err);
	if (st == MP_OK && check)
		st = check(ctx, current, err);
	if (st == MP_OK)
		st = mps_model_delete(s, id, actor, err);
	if (st == MP_OK)
		st = mp_store_commit(s->store, err);
	else
		mp_store_rollback(s->store);
	mp_store_model_free(&m);
	return st;
}

/* ----- export and import ------------------------------------------------------------------------------ */

typedef struct page_ctx {
	mp_store_device_fn device;
	mp_store_model_fn model;
	void *ctx;
	char last[MP_STORE_ID_MAX];
} page_ctx;

static mp_status page_device(const mp_store_device *d, void *ctx)
{
	page_ctx *p = ctx;

	snprintf(p->last, sizeof(p->last), "%s", d->id);
	return p->device(d, p->ctx);
}

static mp_status page_model(const mp_store_model *m, void *ctx)
{
	page_ctx *p = ctx;

	snprintf(p->last, sizeof(p->last), "%s", m->id);
	return p->model(m, p->ctx);
}

mp_status mps_device_find(mps_service *s, const mp_store_device_filter *f, const char *after, int limit,
			  mp_store_device_fn fn, void *ctx, int *more, mp_error *err)
{
	mp_status st = mp_store_device_find(s->store, f, after, limit, fn, ctx, more, err);

	return st == MP_ENOMEM ? mp_fail(err, st, "", "out of memory") : st;
}

mp_status mps_model_find(mps_service *s, const mp_store_model_filter *f, const char *after, int limit,
			 mp_store_model_fn fn, void *ctx, int *more, mp_error *err)
{
	mp_status st = mp_store_model_find(s->store, f, after, limit, fn, ctx, more, err);

	return st == MP_ENOMEM ? mp_fail(err, st, "", "out of memory") : st;
}

mp_status mps_export(mps_service *s, mp_store_device_fn device, mp_store_model_fn model, void *ctx, mp_error *err)
{
	mp_store_model_filter user = { NULL, "user" };
	page_ctx p = { device, model, ctx, "" };
	int more = 1;
	mp_status st = MP_OK;

	/* pages of 1000 so that any number of rows is exported */
	while (st == MP_OK && more)
		st = mp_store_device_list(s->store, p.last[0] ? p.last : NULL, 1000, page_device, &p, &more, err);
	p.last[0] = '\0';
	more = 1;
	while (st == MP_OK && more)
		st = mp_store_model_find(s->store, &user, p.last[0] ? p.last : NULL, 1000, page_model, &p, &more, err);
	return st == MP_ENOMEM ? mp_fail(err, MP_ENOMEM, "", "out of memory") : st;
}

mp_status mps_import_run(mps_service *s, const mps_import *im, mp_error *err)
{
	mp_status st = mp_store_begin(s->store, err);

	if (st != MP_OK)
		return st;
	/* profiles that link to another after the rest, so a measured profile finds its datasheet */
	for (int pass = 0; pass < 2 && st == MP_OK; pass++)
		for (size_t i = 0; i < im->ndevices && st == MP_OK; i++) {
			if ((im->devices[i].linked_device_id[0] != '\0') != (pass == 1))
				continue;
			st = mps_device_put(s, &im->devices[i], "import", im->device_pointers[i], NULL, err);
		}
	for (size_t i = 0; i < im->nmodels && st == MP_OK; i++) {
		st = mps_model_put(s, &im->models[i], "import", NULL, err);
		if (st == MP_EINVAL && err->field[0] == '\0')
			snprintf(err->field, sizeof(err->field), "%s", im->model_pointers[i]);
	}
	if (st != MP_OK) {
		mp_store_rollback(s->store);
		return st;
	}
	return mp_store_commit(s->store, err);
}
