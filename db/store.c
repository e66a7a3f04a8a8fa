/*
 * store.c: the SQLite store. Owns the connection, the migrations and every SQL statement.
 * Rules: SQL text is constant and every value is bound to a prepared statement; each migration runs in one
 * transaction and bumps PRAGMA user_version; one mutex serialises use of the connection.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "store.h"

struct mp_store {
	sqlite3 *db;
	pthread_mutex_t lock;
};

/* ----- migrations ------------------------------------------------------------------------------------- */

static const char schema_v1[] =
	"CREATE TABLE devices ("
	" id TEXT PRIMARY KEY NOT NULL,"
	" name TEXT NOT NULL,"
	" vendor TEXT NOT NULL,"
	" architecture TEXT NOT NULL DEFAULT '',"
	" form_factor TEXT NOT NULL DEFAULT '',"
	" memory_type TEXT NOT NULL DEFAULT '',"
	" memory_bytes INTEGER NOT NULL CHECK (memory_bytes > 0),"
	" usable_memory_bytes INTEGER CHECK (usable_memory_bytes > 0),"
	" memory_bandwidth_bytes_per_second REAL NOT NULL CHECK (memory_bandwidth_bytes_per_second > 0),"
	" l2_cache_bytes INTEGER,"
	" sm_count INTEGER,"
	" boost_clock_hz REAL,"
	" tdp_watts REAL,"
	" cuda_context_bytes INTEGER,"
	" interconnect_json TEXT,"
	" source TEXT NOT NULL CHECK (source IN ('datasheet', 'measured', 'user')),"
	" source_note TEXT NOT NULL DEFAULT '',"
	" measured_at TEXT,"
	" created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),"
	" updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))"
	") STRICT;"
	"CREATE TABLE device_peaks ("
	" device_id TEXT NOT NULL REFERENCES devices(id) ON DELETE CASCADE,"
	" dtype TEXT NOT NULL,"
	" flops_per_second REAL NOT NULL CHECK (flops_per_second > 0),"
	" PRIMARY KEY (device_id, dtype)"
	") STRICT;"
	"CREATE TABLE models ("
	" id TEXT PRIMARY KEY NOT NULL,"
	" model_type TEXT NOT NULL,"
	" config_json TEXT NOT NULL,"
	" parameters INTEGER NOT NULL CHECK (parameters > 0),"
	" source TEXT NOT NULL CHECK (source IN ('preset', 'user')),"
	" created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),"
	" updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))"
	") STRICT;";

static mp_status db_fail(mp_error *err, sqlite3 *db, const char *what)
{
	return mp_fail(err, MP_EDB, "", "%s: %s", what, db ? sqlite3_errmsg(db) : "cannot allocate");
}

/* Runs a constant script of statements that take no parameters (DDL, PRAGMA). */
static mp_status exec_script(sqlite3 *db, const char *sql, mp_error *err)
{
	while (sql && *sql) {
		sqlite3_stmt *stmt = NULL;
		const char *tail = NULL;
		int rc = sqlite3_prepare_v2(db, sql, -1, &stmt, &tail);

		if (rc != SQLITE_OK)
			return db_fail(err, db, "schema");
		if (stmt) {
			while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
				;
			sqlite3_finalize(stmt);
			if (rc != SQLITE_DONE)
				return db_fail(err, db, "schema");
		}
		sql = tail;
	}
	return MP_OK;
}

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *s)
{
	if (s && *s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void bind_num_or_null(sqlite3_stmt *st, int i, const cJSON *v, int as_int)
{
	if (!cJSON_IsNumber(v))
		sqlite3_bind_null(st, i);
	else if (as_int)
		sqlite3_bind_int64(st, i, (sqlite3_int64)v->valuedouble);
	else
		sqlite3_bind_double(st, i, v->valuedouble);
}

static const char *json_str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) ? v->valuestring : "";
}

/* Inserts the device presets (db/presets/devices.json), skipping ids that already exist so that an upgrade
 * never touches rows a user wrote. */
static mp_status seed_devices(sqlite3 *db, mp_error *err)
{
	static const char ins_dev[] =
		"INSERT INTO devices (id, name, vendor, form_factor, memory_type, memory_bytes, usable_memory_bytes,"
		" memory_bandwidth_bytes_per_second, l2_cache_bytes, sm_count, boost_clock_hz, tdp_watts,"
		" interconnect_json, source, source_note)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, 'datasheet', ?14)"
		" ON CONFLICT (id) DO NOTHING";
	static const char ins_peak[] =
		"INSERT INTO device_peaks (device_id, dtype, flops_per_second) VALUES (?1, ?2, ?3)"
		" ON CONFLICT DO NOTHING";
	sqlite3_stmt *sd = NULL, *sp = NULL;
	cJSON *doc = cJSON_Parse(mp_store_device_presets[0].data);
	const cJSON *d;
	mp_status st = MP_OK;

	if (!cJSON_IsArray(doc)) {
		st = mp_fail(err, MP_EINTERNAL, "", "device presets are not a JSON array");
		goto out;
	}
	if (sqlite3_prepare_v2(db, ins_dev, -1, &sd, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, ins_peak, -1, &sp, NULL) != SQLITE_OK) {
		st = db_fail(err, db, "seed devices");
		goto out;
	}
	cJSON_ArrayForEach(d, doc)
	{
		const cJSON *peaks = cJSON_GetObjectItemCaseSensitive(d, "peak_flops_per_second"), *p;
		char *ic = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(d, "interconnect"));

		sqlite3_reset(sd);
		sqlite3_bind_text(sd, 1, json_str(d, "id"), -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(sd, 2, json_str(d, "name"), -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(sd, 3, json_str(d, "vendor"), -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(sd, 4, json_str(d, "form_factor"), -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(sd, 5, json_str(d, "memory_type"), -1, SQLITE_TRANSIENT);
		bind_num_or_null(sd, 6, cJSON_GetObjectItemCaseSensitive(d, "memory_bytes"), 1);
		bind_num_or_null(sd, 7, cJSON_GetObjectItemCaseSensitive(d, "usable_memory_bytes"), 1);
		bind_num_or_null(sd, 8, cJSON_GetObjectItemCaseSensitive(d, "memory_bandwidth_bytes_per_second"), 0);
		bind_num_or_null(sd, 9, cJSON_GetObjectItemCaseSensitive(d, "l2_cache_bytes"), 1);
		bind_num_or_null(sd, 10, cJSON_GetObjectItemCaseSensitive(d, "sm_count"), 1);
		bind_num_or_null(sd, 11, cJSON_GetObjectItemCaseSensitive(d, "boost_clock_hz"), 0);
		bind_num_or_null(sd, 12, cJSON_GetObjectItemCaseSensitive(d, "tdp_watts"), 0);
		bind_text_or_null(sd, 13, ic);
		sqlite3_bind_text(sd, 14, json_str(d, "source_note"), -1, SQLITE_TRANSIENT);
		cJSON_free(ic);
		if (sqlite3_step(sd) != SQLITE_DONE) {
			st = db_fail(err, db, "seed devices");
			goto out;
		}
		cJSON_ArrayForEach(p, peaks)
		{
			sqlite3_reset(sp);
			sqlite3_bind_text(sp, 1, json_str(d, "id"), -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(sp, 2, p->string, -1, SQLITE_TRANSIENT);
			sqlite3_bind_double(sp, 3, p->valuedouble);
			if (sqlite3_step(sp) != SQLITE_DONE) {
				st = db_fail(err, db, "seed device peaks");
				goto out;
			}
		}
	}
out:
	sqlite3_finalize(sp);
	sqlite3_finalize(sd);
	cJSON_Delete(doc);
	return st;
}

/* Inserts the model presets (db/presets/models/ *.json) with their parameter counts. */
static mp_status seed_models(sqlite3 *db, mp_store_count_fn count, mp_error *err)
{
	static const char ins[] = "INSERT INTO models (id, model_type, config_json, parameters, source)"
				  " VALUES (?1, ?2, ?3, ?4, 'preset') ON CONFLICT (id) DO NOTHING";
	sqlite3_stmt *stmt = NULL;
	mp_status st = MP_OK;

	if (sqlite3_prepare_v2(db, ins, -1, &stmt, NULL) != SQLITE_OK)
		return db_fail(err, db, "seed models");
	for (const mp_embedded_file *f = mp_store_model_presets; f->name; f++) {
		uint64_t params = 0;
		cJSON *cfg = cJSON_Parse(f->data);

		if (cfg == NULL) {
			st = mp_fail(err, MP_EINTERNAL, "", "model preset %s is not valid JSON", f->name);
			break;
		}
		st = count(f->data, &params, err);
		if (st != MP_OK) {
			cJSON_Delete(cfg);
			break;
		}
		sqlite3_reset(stmt);
		sqlite3_bind_text(stmt, 1, f->name, -1, SQLITE_STATIC);
		sqlite3_bind_text(stmt, 2, json_str(cfg, "model_type"), -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(stmt, 3, f->data, (int)f->len, SQLITE_STATIC);
		sqlite3_bind_int64(stmt, 4, (sqlite3_int64)params);
		cJSON_Delete(cfg);
		if (sqlite3_step(stmt) != SQLITE_DONE) {
			st = db_fail(err, db, "seed models");
			break;
		}
	}
	sqlite3_finalize(stmt);
	return st;
}

/* Version 2: calibration runs. */
static const char schema_v2[] =
	"CREATE TABLE calibration_runs ("
	" id TEXT PRIMARY KEY NOT NULL,"
	" target TEXT NOT NULL,"
	" state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),"
	" device_id TEXT REFERENCES devices(id) ON DELETE SET NULL,"
	" datasheet_id TEXT REFERENCES devices(id) ON DELETE SET NULL,"
	" results_json TEXT,"
	" created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),"
	" finished_at TEXT"
	") STRICT;"
	"CREATE INDEX calibration_runs_device ON calibration_runs(device_id, created_at);";

#define SCHEMA_VERSION 2

int mp_store_schema_version(void)
{
	return SCHEMA_VERSION;
}

static int user_version(sqlite3 *db)
{
	sqlite3_stmt *stmt = NULL;
	int v = -1;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &stmt, NULL) == SQLITE_OK &&
	    sqlite3_step(stmt) == SQLITE_ROW)
		v = sqlite3_column_int(stmt, 0);
	sqlite3_finalize(stmt);
	return v;
}

/* Migration n takes the database from user_version n - 1 to n. */
static mp_status migrate_1(sqlite3 *db, mp_store_count_fn count, mp_error *err)
{
	mp_status st = exec_script(db, schema_v1, err);

	if (st == MP_OK)
		st = seed_devices(db, err);
	if (st == MP_OK)
		st = seed_models(db, count, err);
	return st;
}

static mp_status migrate(sqlite3 *db, mp_store_count_fn count, mp_error *err)
{
	static const char *const set_version[] = { NULL, "PRAGMA user_version = 1", "PRAGMA user_version = 2" };
	int v = user_version(db);
	mp_status st = MP_OK;

	if (v < 0)
		return db_fail(err, db, "read user_version");
	if (v > SCHEMA_VERSION)
		return mp_fail(err, MP_EDB, "", "database schema version %d is newer than this build's %d", v,
			       SCHEMA_VERSION);
	for (int next = v + 1; next <= SCHEMA_VERSION && st == MP_OK; next++) {
		st = exec_script(db, "BEGIN IMMEDIATE", err);
		if (st != MP_OK)
			return st;
		/* Another process may have migrated between our read and our lock. */
		if (user_version(db) >= next) {
			st = exec_script(db, "COMMIT", err);
			continue;
		}
		switch (next) {
		case 1: st = migrate_1(db, count, err); break;
		case 2: st = exec_script(db, schema_v2, err); break;
		default: st = mp_fail(err, MP_EINTERNAL, "", "no migration to version %d", next);
		}
		if (st == MP_OK)
			st = exec_script(db, set_version[next], err);
		if (st == MP_OK)
			st = exec_script(db, "COMMIT", err);
		else
			exec_script(db, "ROLLBACK", NULL);
	}
	return st;
}

mp_status mp_store_open(const char *path, mp_store_count_fn count_parameters, mp_store **out, mp_error *err)
{
	mp_store *s;
	mp_status st;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return mp_fail(err, MP_ENOMEM, "", "cannot allocate the store");
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
			    NULL) != SQLITE_OK) {
		st = mp_fail(err, MP_EDB, "", "cannot open database %s: %s", path,
			     s->db ? sqlite3_errmsg(s->db) : "out of memory");
		sqlite3_close(s->db);
		free(s);
		return st;
	}
	sqlite3_busy_timeout(s->db, 5000);
	st = exec_script(s->db, "PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL",
			 err);
	if (st == MP_OK)
		st = migrate(s->db, count_parameters, err);
	if (st != MP_OK) {
		sqlite3_close(s->db);
		free(s);
		return st;
	}
	pthread_mutex_init(&s->lock, NULL);
	*out = s;
	return MP_OK;
}

void mp_store_close(mp_store *s)
{
	if (s == NULL)
		return;
	sqlite3_close(s->db);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

int mp_store_user_version(mp_store *s)
{
	int v;

	pthread_mutex_lock(&s->lock);
	v = user_version(s->db);
	pthread_mutex_unlock(&s->lock);
	return v;
}

/* ----- devices ---------------------------------------------------------------------------------------- */

#define DEVICE_COLUMNS                                                                                       \
	"id, name, vendor, architecture, form_factor, memory_type, memory_bytes, usable_memory_bytes,"        \
	" memory_bandwidth_bytes_per_second, l2_cache_bytes, sm_count, boost_clock_hz, tdp_watts,"            \
	" cuda_context_bytes, interconnect_json, source, source_note, measured_at, created_at, updated_at"

static void col_text(sqlite3_stmt *st, int i, char *dst, size_t len)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	snprintf(dst, len, "%s", t ? (const char *)t : "");
}

static void row_to_device(sqlite3_stmt *st, mp_store_device *d)
{
	memset(d, 0, sizeof(*d));
	col_text(st, 0, d->id, sizeof(d->id));
	col_text(st, 1, d->name, sizeof(d->name));
	col_text(st, 2, d->vendor, sizeof(d->vendor));
	col_text(st, 3, d->architecture, sizeof(d->architecture));
	col_text(st, 4, d->form_factor, sizeof(d->form_factor));
	col_text(st, 5, d->memory_type, sizeof(d->memory_type));
	d->hw.memory_bytes = (uint64_t)sqlite3_column_int64(st, 6);
	d->hw.usable_memory_bytes = (uint64_t)sqlite3_column_int64(st, 7);
	d->hw.memory_bandwidth_bytes_per_second = sqlite3_column_double(st, 8);
	d->hw.l2_cache_bytes = (uint64_t)sqlite3_column_int64(st, 9);
	d->hw.sm_count = (uint32_t)sqlite3_column_int64(st, 10);
	d->hw.boost_clock_hz = sqlite3_column_double(st, 11);
	d->tdp_watts = sqlite3_column_double(st, 12);
	d->hw.cuda_context_bytes = (uint64_t)sqlite3_column_int64(st, 13);
	col_text(st, 14, d->interconnect_json, sizeof(d->interconnect_json));
	col_text(st, 15, d->source, sizeof(d->source));
	col_text(st, 16, d->source_note, sizeof(d->source_note));
	col_text(st, 17, d->measured_at, sizeof(d->measured_at));
	col_text(st, 18, d->created_at, sizeof(d->created_at));
	col_text(st, 19, d->updated_at, sizeof(d->updated_at));
}

static mp_status load_peaks(sqlite3 *db, mp_store_device *d, mp_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT dtype, flops_per_second FROM device_peaks WHERE device_id = ?1", -1, &st,
			       NULL) != SQLITE_OK)
		return db_fail(err, db, "read peaks");
	sqlite3_bind_text(st, 1, d->id, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		mp_dtype dt = mp_dtype_from_name((const char *)sqlite3_column_text(st, 0));

		if (dt != MP_DTYPE_INVALID)
			d->hw.peak_flops_per_second[dt] = sqlite3_column_double(st, 1);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? MP_OK : db_fail(err, db, "read peaks");
}

mp_status mp_store_device_get(mp_store *s, const char *id, mp_store_device *out, mp_error *err)
{
	sqlite3_stmt *st = NULL;
	mp_status rc = MP_OK;
	int step;

	pthread_mutex_lock(&s->lock);
	if (sqlite3_prepare_v2(s->db, "SELECT " DEVICE_COLUMNS " FROM devices WHERE id = ?1", -1, &st, NULL) !=
	    SQLITE_OK) {
		rc = db_fail(err, s->db, "read device");
		goto out;
	}
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		row_to_device(st, out);
		rc = load_peaks(s->db, out, err);
	} else if (step == SQLITE_DONE) {
		rc = mp_fail(err, MP_ENOTFOUND, "/device", "no device with id '%s' (GET /v1/devices lists them)", id);
	} else {
		rc = db_fail(err, s->db, "read device");
	}
out:
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

mp_status mp_store_device_list(mp_store *s, const char *after, int limit, mp_store_device_fn fn, void *ctx,
			       int *more, mp_error *err)
{
	sqlite3_stmt *st = NULL;
	mp_status rc = MP_OK;
	mp_store_device *d = malloc(sizeof(*d));
	int n = 0, step;

	*more = 0;
	if (d == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	pthread_mutex_lock(&s->lock);
	if (sqlite3_prepare_v2(s->db, "SELECT " DEVICE_COLUMNS " FROM devices WHERE id > ?1 ORDER BY id LIMIT ?2",
			       -1, &st, NULL) != SQLITE_OK) {
		rc = db_fail(err, s->db, "list devices");
		goto out;
	}
	sqlite3_bind_text(st, 1, after ? after : "", -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, limit + 1);
	while (rc == MP_OK && (step = sqlite3_step(st)) == SQLITE_ROW) {
		if (n++ == limit) {
			*more = 1;
			break;
		}
		row_to_device(st, d);
		rc = load_peaks(s->db, d, err);
		if (rc == MP_OK)
			rc = fn(d, ctx);
	}
	if (rc == MP_OK && !*more && step != SQLITE_DONE)
		rc = db_fail(err, s->db, "list devices");
out:
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->lock);
	free(d);
	return rc;
}

/* ----- models ----------------------------------------------------------------------------------------- */

#define MODEL_COLUMNS "id, model_type, source, created_at, updated_at, parameters, config_json"

static mp_status row_to_model(sqlite3_stmt *st, mp_store_model *m, mp_error *err)
{
	const unsigned char *cfg = sqlite3_column_text(st, 6);

	memset(m, 0, sizeof(*m));
	col_text(st, 0, m->id, sizeof(m->id));
	col_text(st, 1, m->model_type, sizeof(m->model_type));
	col_text(st, 2, m->source, sizeof(m->source));
	col_text(st, 3, m->created_at, sizeof(m->created_at));
	col_text(st, 4, m->updated_at, sizeof(m->updated_at));
	m->parameters = (uint64_t)sqlite3_column_int64(st, 5);
	m->config_json = strdup(cfg ? (const char *)cfg : "{}");
	return m->config_json ? MP_OK : mp_fail(err, MP_ENOMEM, "", "out of memory");
}

void mp_store_model_free(mp_store_model *m)
{
	if (m) {
		free(m->config_json);
		m->config_json = NULL;
	}
}

mp_status mp_store_model_get(mp_store *s, const char *id, mp_store_model *out, mp_error *err)
{
	sqlite3_stmt *st = NULL;
	mp_status rc;
	int step;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&s->lock);
	if (sqlite3_prepare_v2(s->db, "SELECT " MODEL_COLUMNS " FROM models WHERE id = ?1", -1, &st, NULL) !=
	    SQLITE_OK) {
		rc = db_fail(err, s->db, "read model");
		goto out;
	}
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	step = sqlite3_step(st);
	if (step == SQLITE_ROW)
		rc = row_to_model(st, out, err);
	else if (step == SQLITE_DONE)
		rc = mp_fail(err, MP_ENOTFOUND, "/model", "no model with id '%s' (GET /v1/models lists them)", id);
	else
		rc = db_fail(err, s->db, "read model");
out:
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

mp_status mp_store_model_list(mp_store *s, const char *after, int limit, mp_store_model_fn fn, void *ctx,
			      int *more, mp_error *err)
{
	sqlite3_stmt *st = NULL;
	mp_status rc = MP_OK;
	int n = 0, step = SQLITE_DONE;

	*more = 0;
	pthread_mutex_lock(&s->lock);
	if (sqlite3_prepare_v2(s->db, "SELECT " MODEL_COLUMNS " FROM models WHERE id > ?1 ORDER BY id LIMIT ?2", -1,
			       &st, NULL) != SQLITE_OK) {
		rc = db_fail(err, s->db, "list models");
		goto out;
	}
	sqlite3_bind_text(st, 1, after ? after : "", -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, limit + 1);
	while (rc == MP_OK && (step = sqlite3_step(st)) == SQLITE_ROW) {
		mp_store_model m;

		if (n++ == limit) {
			*more = 1;
			break;
		}
		rc = row_to_model(st, &m, err);
		if (rc == MP_OK)
			rc = fn(&m, ctx);
		mp_store_model_free(&m);
	}
	if (rc == MP_OK && !*more && step != SQLITE_DONE)
		rc = db_fail(err, s->db, "list models");
out:
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

mp_status mp_store_device_put(mp_store *s, const mp_store_device *d, mp_error *err)
{
	static const char upsert[] =
		"INSERT INTO devices (id, name, vendor, architecture, form_factor, memory_type, memory_bytes,"
		" usable_memory_bytes, memory_bandwidth_bytes_per_second, l2_cache_bytes, sm_count, boost_clock_hz,"
		" tdp_watts, cuda_context_bytes, interconnect_json, source, source_note, measured_at)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)"
		" ON CONFLICT (id) DO UPDATE SET name = excluded.name, vendor = excluded.vendor,"
		" architecture = excluded.architecture, form_factor = excluded.form_factor,"
		" memory_type = excluded.memory_type, memory_bytes = excluded.memory_bytes,"
		" usable_memory_bytes = excluded.usable_memory_bytes,"
		" memory_bandwidth_bytes_per_second = excluded.memory_bandwidth_bytes_per_second,"
		" l2_cache_bytes = excluded.l2_cache_bytes, sm_count = excluded.sm_count,"
		" boost_clock_hz = excluded.boost_clock_hz, tdp_watts = excluded.tdp_watts,"
		" cuda_context_bytes = excluded.cuda_context_bytes, interconnect_json = excluded.interconnect_json,"
		" source = excluded.source, source_note = excluded.source_note, measured_at = excluded.measured_at,"
		" updated_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now')";
	sqlite3_stmt *st = NULL, *del = NULL, *ins = NULL;
	mp_status rc = MP_OK;

	pthread_mutex_lock(&s->lock);
	if (exec_script(s->db, "BEGIN IMMEDIATE", err) != MP_OK) {
		pthread_mutex_unlock(&s->lock);
		return MP_EDB;
	}
	if (sqlite3_prepare_v2(s->db, upsert, -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "DELETE FROM device_peaks WHERE device_id = ?1", -1, &del, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "INSERT INTO device_peaks (device_id, dtype, flops_per_second) VALUES (?1, ?2, ?3)",
			       -1, &ins, NULL) != SQLITE_OK) {
		rc = db_fail(err, s->db, "write device");
		goto out;
	}
	sqlite3_bind_text(st, 1, d->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, d->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, d->vendor, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, d->architecture, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, d->form_factor, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, d->memory_type, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 7, (sqlite3_int64)d->hw.memory_bytes);
	if (d->hw.usable_memory_bytes)
		sqlite3_bind_int64(st, 8, (sqlite3_int64)d->hw.usable_memory_bytes);
	sqlite3_bind_double(st, 9, d->hw.memory_bandwidth_bytes_per_second);
	if (d->hw.l2_cache_bytes)
		sqlite3_bind_int64(st, 10, (sqlite3_int64)d->hw.l2_cache_bytes);
	if (d->hw.sm_count)
		sqlite3_bind_int64(st, 11, d->hw.sm_count);
	if (d->hw.boost_clock_hz > 0)
		sqlite3_bind_double(st, 12, d->hw.boost_clock_hz);
	if (d->tdp_watts > 0)
		sqlite3_bind_double(st, 13, d->tdp_watts);
	if (d->hw.cuda_context_bytes)
		sqlite3_bind_int64(st, 14, (sqlite3_int64)d->hw.cuda_context_bytes);
	bind_text_or_null(st, 15, d->interconnect_json);
	sqlite3_bind_text(st, 16, d->source, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 17, d->source_note, -1, SQLITE_STATIC);
	bind_text_or_null(st, 18, d->measured_at);
	if (sqlite3_step(st) != SQLITE_DONE) {
		rc = sqlite3_errcode(s->db) == SQLITE_CONSTRAINT ? mp_fail(err, MP_EINVAL, "", "%s", sqlite3_errmsg(s->db))
								  : db_fail(err, s->db, "write device");
		goto out;
	}
	sqlite3_bind_text(del, 1, d->id, -1, SQLITE_STATIC);
	if (sqlite3_step(del) != SQLITE_DONE) {
		rc = db_fail(err, s->db, "write device peaks");
		goto out;
	}
	for (int t = 1; t < MP_DTYPE_COUNT; t++) {
		if (!(d->hw.peak_flops_per_second[t] > 0))
			continue;
		sqlite3_reset(ins);
		sqlite3_bind_text(ins, 1, d->id, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 2, mp_dtype_name((mp_dtype)t), -1, SQLITE_STATIC);
		sqlite3_bind_double(ins, 3, d->hw.peak_flops_per_second[t]);
		if (sqlite3_step(ins) != SQLITE_DONE) {
			rc = db_fail(err, s->db, "write device peaks");
			goto out;
		}
	}
out:
	sqlite3_finalize(ins);
	sqlite3_finalize(del);
	sqlite3_finalize(st);
	exec_script(s->db, rc == MP_OK ? "COMMIT" : "ROLLBACK", NULL);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

mp_status mp_store_device_delete(mp_store *s, const char *id, mp_error *err)
{
	sqlite3_stmt *st = NULL;
	mp_status rc = MP_OK;

	pthread_mutex_lock(&s->lock);
	if (sqlite3_prepare_v2(s->db, "DELETE FROM devices WHERE id = ?1", -1, &st, NULL) != SQLITE_OK) {
		rc = db_fail(err, s->db, "delete device");
	} else {
		sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_DONE)
			rc = db_fail(err, s->db, "delete device");
		else if (sqlite3_changes(s->db) == 0)
			rc = mp_fail(err, MP_ENOTFOUND, "/id", "no device with id '%s'", id);
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* ----- calibration runs ------------------------------------------------------------------------------- */

mp_status mp_store_calibration_save(mp_store *s, const mp_store_calibration *c, mp_error *err)
{
	static const char sql[] =
		"INSERT INTO calibration_runs (id, target, state, device_id, datasheet_id, results_json, finished_at)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
		" ON CONFLICT (id) DO UPDATE SET target = excluded.target, state = excluded.state,"
		" device_id = excluded.device_id, datasheet_id = excluded.datasheet_id,"
		" results_json = excluded.results_json, finished_at = excluded.finished_at";
	sqlite3_stmt *st = NULL;
	mp_status rc = MP_OK;

	pthread_mutex_lock(&s->lock);
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
		rc = db_fail(err, s->db, "write calibration");
		goto out;
	}
	sqlite3_bind_text(st, 1, c->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, c->target, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, c->state, -1, SQLITE_STATIC);
	bind_text_or_null(st, 4, c->device_id);
	bind_text_or_null(st, 5, c->datasheet_id);
	bind_text_or_null(st, 6, c->results_json);
	bind_text_or_null(st, 7, c->finished_at);
	if (sqlite3_step(st) != SQLITE_DONE)
		rc = sqlite3_errcode(s->db) == SQLITE_CONSTRAINT ? mp_fail(err, MP_EINVAL, "", "%s", sqlite3_errmsg(s->db))
								  : db_fail(err, s->db, "write calibration");
out:
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

void mp_store_calibration_free(mp_store_calibration *c)
{
	if (c) {
		free(c->results_json);
		c->results_json = NULL;
	}
}

mp_status mp_store_calibration_get(mp_store *s, const char *id, mp_store_calibration *out, mp_error *err)
{
	sqlite3_stmt *st = NULL;
	mp_status rc = MP_OK;
	int step;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&s->lock);
	if (sqlite3_prepare_v2(s->db,
			       "SELECT id, target, state, device_id, datasheet_id, created_at, finished_at, results_json"
			       " FROM calibration_runs WHERE id = ?1",
			       -1, &st, NULL) != SQLITE_OK) {
		rc = db_fail(err, s->db, "read calibration");
		goto out;
	}
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		const unsigned char *r = sqlite3_column_text(st, 7);

		col_text(st, 0, out->id, sizeof(out->id));
		col_text(st, 1, out->target, sizeof(out->target));
		col_text(st, 2, out->state, sizeof(out->state));
		col_text(st, 3, out->device_id, sizeof(out->device_id));
		col_text(st, 4, out->datasheet_id, sizeof(out->datasheet_id));
		col_text(st, 5, out->created_at, sizeof(out->created_at));
		col_text(st, 6, out->finished_at, sizeof(out->finished_at));
		if (r && (out->results_json = strdup((const char *)r)) == NULL)
			rc = mp_fail(err, MP_ENOMEM, "", "out of memory");
	} else if (step == SQLITE_DONE) {
		rc = mp_fail(err, MP_ENOTFOUND, "/id", "no calibration with id '%s'", id);
	} else {
		rc = db_fail(err, s->db, "read calibration");
	}
out:
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->lock);
	return rc;
}
