/*
 * service.c: the service handle (the store, the memo of decoded models, the GPU probe), model and device
 * resolution, and the store's use cases (reads, writes, read-modify-write, export and import). The memo holds
 * stored models already parsed and counted, so a stored config is read once per store change, not per request.
 */
#include <errno.h>
#include <pthread.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "../db/store.h"
#include "../hub/hub.h"
#include "../kernels/calib.h"
#include "../model/model.h"
#include "mps_hub_fetch.h"
#include "mps_observe.h"
#include "mps_presets.h"
#include "service.h"

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
	mph_hub hub;		/* the Hub the operator lets it fetch from (mps_set_hub); endpoint "" = none */
	bool observed_terms_off;	/* --observed-terms off (service/mps_observe.h) */
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

uint64_t mps_generation(mps_service *s)
{
	return mp_store_generation(s->store);
}

int mps_schema_version(mps_service *s)
{
	return mp_store_user_version(s->store);
}

bool mps_writable(mps_service *s, char *why, size_t len)
{
	return mp_store_write_state(s->store, why, len) == MP_STORE_WRITABLE;
}

const char *mps_open_notice(mps_service *s)
{
	return mp_store_open_notice(s->store);
}

/* ----- walks through the store's rows ------------------------------------------------------------------- */

/* Rows the walks below copy out of the store at a time: 64 device profiles are about 370 KB. */
#define WALK_ROWS 64

mp_status mps_each_device(mps_service *s, const mp_store_device_filter *f, const char *after, size_t limit,
			  mps_device_fn fn, void *ctx, bool *more, mp_error *err)
{
	mp_store_device *rows = malloc(WALK_ROWS * sizeof(*rows));
	char last[MP_STORE_ID_MAX];
	size_t seen = 0, n = 0;
	bool further = true;
	mp_status st = MP_OK;

	if (more)
		*more = false;
	if (rows == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	snprintf(last, sizeof(last), "%s", after ? after : "");
	while (st == MP_OK && further && (limit == 0 || seen < limit)) {
		size_t cap = limit && limit - seen < WALK_ROWS ? limit - seen : WALK_ROWS;

		/* the page is a copy: the store's lock is not held while fn computes on it */
		st = mp_store_device_page(s->store, f, last[0] ? last : NULL, rows, cap, &n, &further, err);
		for (size_t i = 0; i < n && st == MP_OK; i++)
			st = fn(&rows[i], ctx);
		seen += n;
		if (n)
			snprintf(last, sizeof(last), "%s", rows[n - 1].id);
	}
	if (st == MP_OK && more)
		*more = further;
	free(rows);
	return st == MP_ENOMEM ? mp_fail(err, st, "", "out of memory") : st;
}

mp_status mps_each_model(mps_service *s, const mp_store_model_filter *f, const char *after, size_t limit,
			 mps_model_fn fn, void *ctx, bool *more, mp_error *err)
{
	mp_store_model *rows = malloc(WALK_ROWS * sizeof(*rows));
	char last[MP_STORE_ID_MAX];
	size_t seen = 0, n = 0;
	bool further = true;
	mp_status st = MP_OK;

	if (more)
		*more = false;
	if (rows == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	snprintf(last, sizeof(last), "%s", after ? after : "");
	while (st == MP_OK && further && (limit == 0 || seen < limit)) {
		size_t cap = limit && limit - seen < WALK_ROWS ? limit - seen : WALK_ROWS;

		st = mp_store_model_page(s->store, f, last[0] ? last : NULL, rows, cap, &n, &further, err);
		for (size_t i = 0; i < n && st == MP_OK; i++)
			st = fn(&rows[i], mps_stored_model_repo_ids(&rows[i]), ctx);
		seen += n;
		if (n)
			snprintf(last, sizeof(last), "%s", rows[n - 1].id);
		for (size_t i = 0; i < n; i++)
			mp_store_model_free(&rows[i]);
	}
	if (st == MP_OK && more)
		*more = further;
	free(rows);
	return st == MP_ENOMEM ? mp_fail(err, st, "", "out of memory") : st;
}

/* ----- ids nothing is stored under ------------------------------------------------------------------------ */

#define SUGGEST_CANDIDATES 1000 /* the stored ids a 404 compares with: the first ones in id order */

#define SUGGEST_OTHER_BYTES 512 /* the names one id also goes by, space-separated */

typedef struct id_list {
	size_t n;
	char (*id)[MP_STORE_ID_MAX];
	char (*other)[SUGGEST_OTHER_BYTES];
} id_list;

static void add_other(id_list *c, const char *name)
{
	char key[MP_STORE_ALIAS_MAX];

	if (name && name[0] && mp_alias_key(name, key, sizeof(key)))
		mp_list_add(c->other[c->n], SUGGEST_OTHER_BYTES, key); /* ", "-separated; spaces are the separator */
}

static mp_status add_device_id(const mp_store_device *d, void *ctx)
{
	id_list *c = ctx;

	snprintf(c->id[c->n], MP_STORE_ID_MAX, "%s", d->id);
	c->other[c->n][0] = '\0';
	for (size_t i = 0; i < d->naliases; i++)
		add_other(c, d->aliases[i]);
	c->n++;
	return MP_OK;
}

static mp_status add_model_id(const mp_store_model *m, const char *const *repo_ids, void *ctx)
{
	id_list *c = ctx;

	snprintf(c->id[c->n], MP_STORE_ID_MAX, "%s", m->id);
	c->other[c->n][0] = '\0';
	for (size_t i = 0; repo_ids && repo_ids[i]; i++) {
		const char *base = strrchr(repo_ids[i], '/');

		add_other(c, base ? base + 1 : repo_ids[i]);
	}
	c->n++;
	return MP_OK;
}

/* The 404 for an id nothing is stored under, naming pointer, with the nearest of the first stored ids (mps_suggest.h
 * picks them). Returns MP_ENOTFOUND. */
static mp_status not_found(mps_service *s, bool models, const char *asked, const char *pointer, mp_error *err)
{
	id_list c = { 0, malloc(SUGGEST_CANDIDATES * sizeof(*c.id)), malloc(SUGGEST_CANDIDATES * sizeof(*c.other)) };
	const char **other = malloc(SUGGEST_CANDIDATES * sizeof(*other));
	char near[320] = "", low[MP_STORE_ID_MAX];
	mp_error e = MP_ERROR_INIT;

	/* a repo id is compared by its last part, as ids spell it ("Qwen/Qwen2.5-7B-Instruct": qwen2.5-7b-instruct) */
	mps_id_of_repo(asked, low, sizeof(low));
	if (c.id && c.other && other) {
		if (models)
			mps_each_model(s, NULL, NULL, SUGGEST_CANDIDATES, add_model_id, &c, NULL, &e);
		else
			mps_each_device(s, NULL, NULL, SUGGEST_CANDIDATES, add_device_id, &c, NULL, &e);
		for (size_t i = 0; i < c.n; i++) {
			/* mp_list_add's ", " separators as the one space mps_nearest_names splits on */
			for (char *q = c.other[i]; (q = strstr(q, ", ")) != NULL;)
				memmove(q, q + 1, strlen(q + 1) + 1);
			other[i] = c.other[i];
		}
		mps_nearest_names((const char (*)[MP_STORE_ID_MAX])c.id, other, c.n, low, near, sizeof(near));
	}
	free(other);
	free(c.other);
	free(c.id);
	return mps_not_found_near(models, asked, near, pointer, err);
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

void mps_model_copy(mps_model *dst, const mps_model *src)
{
	if (dst == src)
		return;
	memcpy(dst, src, offsetof(mps_model, arch));
	mp_model_copy(&dst->arch, &src->arch);
}

/* Every member of *m zeroed (its model's tensor room left as it is: nothing reads past inv.n). */
static void clear_model(mps_model *m)
{
	memset(m, 0, offsetof(mps_model, arch));
	mp_model_clear(&m->arch);
}

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
	mps_model_copy(out, hit->value);
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
	mps_model_copy(slot->value, m);
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
	clear_model(out);
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

/* Whether a preset's table names repo (case aside): the models memplan ships, not a guess at a stored id. */
static bool preset_for_repo(const char *repo)
{
	for (const mps_repo_alias *a = mps_preset_repo_ids(); a->id; a++)
		for (size_t i = 0; a->repo_ids[i]; i++)
			if (strcasecmp(a->repo_ids[i], repo) == 0)
				return true;
	return false;
}

void mps_set_hub(mps_service *s, const char *endpoint, const char *token, const char *cache_dir,
		 uint64_t cache_max_bytes, unsigned timeout_seconds)
{
	memset(&s->hub, 0, sizeof(s->hub));
	snprintf(s->hub.endpoint, sizeof(s->hub.endpoint), "%s", endpoint ? endpoint : "");
	for (size_t n = strlen(s->hub.endpoint); n > 0 && s->hub.endpoint[n - 1] == '/'; n--)
		s->hub.endpoint[n - 1] = '\0';
	snprintf(s->hub.token, sizeof(s->hub.token), "%s", token ? token : "");
	snprintf(s->hub.cache_dir, sizeof(s->hub.cache_dir), "%s", cache_dir ? cache_dir : "");
	s->hub.cache_max_bytes = cache_max_bytes;
	s->hub.timeout_seconds = timeout_seconds;
}

bool mps_hub_enabled(const mps_service *s)
{
	return s->hub.endpoint[0] != '\0';
}

mp_status mps_model_ref_fetch(mps_service *s, mps_model_ref *ref, bool *fetched, mp_error *err)
{
	char dir[1024], id[MP_STORE_ID_MAX], ptr[96];
	const char *from = "hf_cache";
	mph_repo_files f;
	mp_status st;

	if (fetched)
		*fetched = false;
	if (ref->kind != MPS_MODEL_HF_REPO)
		return MP_OK;
	mph_cache_dir(dir, sizeof(dir));
	st = mph_cache_read(dir, ref->repo_id, ref->revision, &f, err);
	if (st == MP_ENOTFOUND && s && s->hub.endpoint[0]) {
		/* not in the local cache: the Hub the operator allowed (its answers kept in the daemon's hub cache) */
		bool cached = false;

		mph_repo_files_free(&f);
		st = mps_hub_fetch_repo(&s->hub, ref->repo_id, ref->revision, &f, &cached, err);
		from = cached ? "hub_cache" : "hub";
		if (st != MP_OK && preset_for_repo(ref->repo_id)) {
			/* the Hub refused or failed, and a preset stands for the repo */
			mph_repo_files_free(&f);
			ref->kind = MPS_MODEL_STORED;
			return MP_OK;
		}
		if (st != MP_OK) {
			snprintf(err->field, sizeof(err->field), "%s", ref->pointer);
			mph_repo_files_free(&f);
			return st;
		}
	} else if (st == MP_ENOTFOUND) {
		char why[sizeof(err->message)];

		snprintf(why, sizeof(why), "%s", err ? err->message : "");
		mph_repo_files_free(&f);
		if (mps_model_repo_lookup(ref->repo_id, id, sizeof(id))) {
			ref->kind = MPS_MODEL_STORED; /* the preset it stands for (resolved by repo_id) */
			return MP_OK;
		}
		return mp_fail(err, MP_ENOTFOUND, ref->pointer,
			       "%.400s; no preset stands for it, and this daemon fetches from no Hub: put the repository in "
			       "the Hugging Face cache (huggingface-cli download %s config.json '*.safetensors*'), or give "
			       "its hf_config",
			       why, ref->repo_id);
	}
	if (st == MP_OK) {
		ref->arch = malloc(sizeof(*ref->arch));
		ref->ckpt = calloc(1, sizeof(*ref->ckpt));
		if (ref->arch == NULL || ref->ckpt == NULL)
			st = mp_fail(err, MP_ENOMEM, ref->pointer, "out of memory");
	}
	if (st == MP_OK) {
		snprintf(ptr, sizeof(ptr), "%s/hf_repo", ref->pointer);
		st = mpm_checkpoint_safetensors_files(f.config, (const uint8_t *const *)f.shards, f.lens, f.n, f.index,
						      ptr, ref->arch, ref->ckpt, err);
	}
	if (st == MP_OK) {
		ref->kind = MPS_MODEL_INLINE;
		snprintf(ref->source, sizeof(ref->source), "%s:%.96s@%.40s", from, ref->repo_id, f.commit);
		if (fetched)
			*fetched = true;
	} else {
		/* the readers name "/model/hf_repo...": the member where this ref sits ("/jobs/3/inference/model") */
		if (err && strncmp(err->field, "/model/hf_repo", 14) == 0 && strcmp(ref->pointer, "/model") != 0) {
			char rest[256];
			snprintf(rest, sizeof(rest), "%.255s", err->field + 6);
			snprintf(err->field, sizeof(err->field), "%.200s%s", ref->pointer, rest);
		}
		free(ref->arch);
		ref->arch = NULL;
		mpm_checkpoint_free(ref->ckpt);
		free(ref->ckpt);
		ref->ckpt = NULL;
	}
	mph_repo_files_free(&f);
	return st;
}

mp_status mps_model_resolve(mps_service *s, const mps_model_ref *ref, mps_model *out, mp_error *err)
{
	return mps_model_resolve_at(s, ref, ref->kind == MPS_MODEL_STORED ? mp_store_generation(s->store) : 0, out, err);
}

mp_status mps_model_resolve_at(mps_service *s, const mps_model_ref *ref, uint64_t gen, mps_model *out, mp_error *err)
{
	mp_status st;

	clear_model(out);
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
			return not_found(s, true, asked, ref->pointer, err);
		st = stored_model(s, id, gen, out, err);
		if (st == MP_ENOTFOUND)
			return not_found(s, true, asked, ref->pointer, err);
		if (st == MP_EINVAL)
			snprintf(err->field, sizeof(err->field), "%s", ref->pointer);
		if (st == MP_OK) /* errors about a stored model's keys name the model member itself */
			snprintf(out->arch.json_pointer, sizeof(out->arch.json_pointer), "%s", ref->pointer);
		return st;
	}
	case MPS_MODEL_INLINE:
		if (ref->arch == NULL)
			return mp_fail(err, MP_EINTERNAL, ref->pointer, "an inline model reference without its model");
		mp_model_copy(&out->arch, ref->arch);
		out->architecture_known = true;
		out->ckpt = ref->ckpt;
		snprintf(out->source, sizeof(out->source), "%s", ref->source);
		return mp_count_parameters(&out->arch, &out->params, err);
	case MPS_MODEL_HF_REPO:
		return mp_fail(err, MP_EINVAL, ref->pointer,
			       "a model by Hugging Face repository ({\"hf_repo\": ...}) is taken by POST /v1/plan/inference, "
			       "/v1/plan/training, /v1/engine-check and /v1/fit; here name a stored model or give its "
			       "hf_config");
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
	st = ref->id[0] ? mp_store_device_get_at(s->store, ref->id, gen, out, err) : MP_ENOTFOUND;
	/* not an id: a name it goes by (aliases match by their key: case, '_' and ' ' aside) */
	if (st == MP_ENOTFOUND && ref->asked[0])
		st = mp_store_device_by_alias(s->store, ref->asked, out, err);
	if (st == MP_ENOTFOUND)
		return not_found(s, false, ref->asked[0] ? ref->asked : ref->id, ref->pointer, err);
	if (st != MP_OK)
		snprintf(err->field, sizeof(err->field), "%s", ref->pointer);
	return st;
}

mp_status mps_device_get(mps_service *s, const char *id, mp_store_device *out, mp_error *err)
{
	mp_status st = mp_store_device_get(s->store, id, out, err), first = st;
	mp_error e = MP_ERROR_INIT;
	char low[MP_STORE_ID_MAX];
	size_t i;

	if (st != MP_ENOTFOUND && st != MP_EINVAL)
		return st;
	/* an id in another case ("H100-SXM5-80GB"), then a name the device goes by ("nvidia-h100-80gb") */
	for (i = 0; id[i] && i + 1 < sizeof(low); i++)
		low[i] = (char)tolower((unsigned char)id[i]);
	low[i] = '\0';
	st = id[i] == '\0' && mp_valid_id(low) ? mp_store_device_get(s->store, low, out, &e) : MP_ENOTFOUND;
	if (st == MP_ENOTFOUND)
		st = mp_store_device_by_alias(s->store, id, out, &e);
	if (st == MP_OK)
		return MP_OK;
	if (st != MP_ENOTFOUND)
		return mp_fail(err, st, "/device", "%s", e.message);
	if (first == MP_EINVAL && !(id[i] == '\0' && mp_valid_id(low)))
		return mp_store_device_get(s->store, id, out, err); /* malformed as an id and no alias: its 422 */
	return not_found(s, false, id, "/device", err);
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

/*
 * The read-modify-writes below hold no lock of the store while change computes (a merge patch: JSON built, patched
 * and decoded): the row is read, a copy changed, and then, in one short transaction, read again and written only
 * when it is still the row that was changed. A row another writer changed in between is read and changed anew, at
 * most UPDATE_TRIES times; one that keeps changing under a patch is a 409.
 */
#define UPDATE_TRIES 16

mp_status mps_device_update(mps_service *s, const char *id, const char *actor,
			    mp_status (*change)(void *ctx, mp_store_device *d, mp_error *err), void *ctx, mp_error *err)
{
	mp_store_device *rows = malloc(3 * sizeof(*rows)), *seen = rows, *d = rows + 1, *now = rows + 2;
	mp_status st = MP_OK;
	bool raced = true;

	if (rows == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	for (int tries = 0; st == MP_OK && raced; tries++) {
		if (tries == UPDATE_TRIES) {
			st = mp_fail(err, MP_ECONFLICT, "", "device %s changed under this patch %d times in a row; send it "
				     "again", id, UPDATE_TRIES);
			break;
		}
		st = mp_store_device_get(s->store, id, seen, err);
		if (st == MP_OK) {
			memcpy(d, seen, sizeof(*d));
			st = change(ctx, d, err);
		}
		if (st == MP_OK)
			st = mp_store_begin(s->store, err);
		if (st != MP_OK)
			break;
		st = mp_store_device_get(s->store, id, now, err); /* inside the transaction: the row as it is */
		/* written by another since it was read: read and change it again */
		raced = st == MP_OK && memcmp(now, seen, sizeof(*now)) != 0;
		if (st == MP_OK && !raced)
			st = mps_device_put(s, d, actor, "", NULL, err);
		if (st == MP_OK && !raced)
			st = mp_store_commit(s->store, err);
		else
			mp_store_rollback(s->store);
	}
	free(rows);
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

	return st == MP_ENOTFOUND ? not_found(s, true, id, "/model", err) : st;
}

void mps_model_free(mp_store_model *m)
{
	mp_store_model_free(m);
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

/* Whether two reads of a model are the same row, text and all. */
static bool model_same(const mp_store_model *a, const mp_store_model *b)
{
	return strcmp(a->id, b->id) == 0 && strcmp(a->model_type, b->model_type) == 0 &&
	       strcmp(a->source, b->source) == 0 && strcmp(a->created_at, b->created_at) == 0 &&
	       strcmp(a->updated_at, b->updated_at) == 0 && a->parameters == b->parameters &&
	       strcmp(a->config_json ? a->config_json : "", b->config_json ? b->config_json : "") == 0;
}

mp_status mps_model_update(mps_service *s, const char *id, const char *actor,
			   mp_status (*change)(void *ctx, const mp_store_model *m, mps_model_input *in, char **owned,
					       mp_error *err),
			   void *ctx, mp_error *err)
{
	mp_store_model seen, now;
	mps_model_input *in = malloc(sizeof(*in));
	char *owned = NULL;
	mp_status st = MP_OK;
	bool raced = true;

	memset(&seen, 0, sizeof(seen));
	memset(&now, 0, sizeof(now));
	if (in == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	for (int tries = 0; st == MP_OK && raced; tries++) {
		if (tries == UPDATE_TRIES) {
			st = mp_fail(err, MP_ECONFLICT, "", "model %s changed under this patch %d times in a row; send it "
				     "again", id, UPDATE_TRIES);
			break;
		}
		mp_store_model_free(&seen);
		mp_store_model_free(&now);
		free(owned);
		owned = NULL;
		memset(in, 0, sizeof(*in));
		st = mp_store_model_get(s->store, id, &seen, err);
		if (st == MP_OK)
			st = change(ctx, &seen, in, &owned, err);
		if (st == MP_OK)
			st = mp_store_begin(s->store, err);
		if (st != MP_OK)
			break;
		st = mp_store_model_get(s->store, id, &now, err); /* inside the transaction: the row as it is */
		raced = st == MP_OK && !model_same(&now, &seen);
		if (st == MP_OK && !raced)
			st = mps_model_put(s, in, actor, NULL, err);
		if (st == MP_OK && !raced)
			st = mp_store_commit(s->store, err);
		else
			mp_store_rollback(s->store);
	}
	mp_store_model_free(&seen);
	mp_store_model_free(&now);
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

mp_status mps_device_find(mps_service *s, const mp_store_device_filter *f, const char *after, int limit,
			  mps_device_fn fn, void *ctx, int *more, mp_error *err)
{
	bool further = false;
	mp_status st = mps_each_device(s, f, after, limit > 0 ? (size_t)limit : 1, fn, ctx, &further, err);

	*more = further;
	return st;
}

mp_status mps_model_find(mps_service *s, const mp_store_model_filter *f, const char *after, int limit,
			 mps_model_fn fn, void *ctx, int *more, mp_error *err)
{
	bool further = false;
	mp_status st = mps_each_model(s, f, after, limit > 0 ? (size_t)limit : 1, fn, ctx, &further, err);

	*more = further;
	return st;
}

mp_status mps_export(mps_service *s, mps_device_fn device, mps_model_fn model, void *ctx, mp_error *err)
{
	mp_store_model_filter user = { NULL, "user" };
	mp_status st = mps_each_device(s, NULL, NULL, 0, device, ctx, NULL, err);

	return st == MP_OK ? mps_each_model(s, &user, NULL, 0, model, ctx, NULL, err) : st;
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

/* The switch of service/mps_observe.h: a plain flag, set once at start-up before the daemon serves. */
void mps_observed_terms_set(mps_service *s, bool on)
{
	s->observed_terms_off = !on;
}

bool mps_observed_terms_on(const mps_service *s)
{
	return !s->observed_terms_off;
}
