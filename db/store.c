/*
 * store.c: the SQLite store. Owns the connection, the migrations, the preset seeding and every SQL statement.
 * Rules: SQL text is constant (string literals, or const char[] built only from literals) and every value is
 * bound to a prepared statement; each migration runs in one transaction and bumps PRAGMA user_version; every
 * write appends its audit_log row in its own transaction; one recursive mutex serialises the connection.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store.h"

/* Statements prepared once per connection, keyed by the address of their SQL text (a literal or a static const
 * char[]: the same call site always passes the same address). More distinct statements than slots are prepared
 * and finalized per use, as before. */
#define STMT_SLOTS 48

typedef struct stmt_slot {
	const char *sql;
	sqlite3_stmt *st;
	bool busy;		/* handed out (a nested use of the same SQL gets its own statement) */
} stmt_slot;

/* Device rows kept for mp_store_device_get (see store.h), dropped whenever the generation moves. */
#define MEMO_SLOTS 64

typedef struct memo_slot {
	uint64_t used;		/* last use, for eviction (least recently used goes); 0 = free */
	mp_store_device *value;	/* heap, kept between uses of the slot */
} memo_slot;

struct mp_store {
	sqlite3 *db;
	pthread_mutex_t lock;	/* recursive: mp_store_begin holds it across calls */
	int depth;		/* nesting of open transactions (mp_store_begin + the write's own) */
	bool failed;		/* a write inside mp_store_begin failed: commit rolls back */
	bool wrote;		/* a write inside the open transaction succeeded (its effects were visible here) */
	stmt_slot stmts[STMT_SLOTS];
	int nstmts;
	uint64_t generation;	/* moves on every write through this handle and every commit seen from others */
	int64_t data_version;	/* PRAGMA data_version when last read, -1 before */
	uint64_t memo_generation;	/* the generation the memo's values were read at */
	uint64_t memo_clock;
	memo_slot memo[MEMO_SLOTS];
	bool aliases_ready;	/* the database is at schema v6 or later: devices have aliases */
	bool meta_ready;	/* schema v9: store_meta holds the store's id and its write sequence */
	/* the -wal and -shm files as opened (their device and inode), to see them deleted or replaced */
	char wal_path[600], shm_path[600];
	dev_t wal_dev, shm_dev;
	ino_t wal_ino, shm_ino;
	bool files_known;
	bool files_lost;	/* seen deleted or replaced: what was written before was checkpointed into the main file */
	char lost_why[1400];
	char corrupt[300];	/* integrity_check's first row at open when not "ok", else "" */
	char notice[2400];	/* what the open did that an operator should know (a -wal moved aside), else "" */
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

/*
 * The store's error for SQLite's last one on db. What the operator can act on gets its own status and a true
 * detail: a full disk (SQLITE_FULL: MP_ENOSPACE, 507) and a database that cannot be written (SQLITE_READONLY:
 * MP_ESTORAGE, 503); the rest is MP_EDB (500). A failed write changed nothing (its transaction rolls back).
 */
static mp_status db_fail(mp_error *err, sqlite3 *db, const char *what)
{
	int code = db ? sqlite3_errcode(db) & 0xff : SQLITE_NOMEM;
	const char *msg = db ? sqlite3_errmsg(db) : "cannot allocate";

	if (code == SQLITE_FULL)
		return mp_fail(err, MP_ENOSPACE, "",
			       "%s: the disk holding the database is full (SQLite: %s); nothing was written: free space "
			       "on it and send the request again",
			       what, msg);
	if (code == SQLITE_READONLY)
		return mp_fail(err, MP_ESTORAGE, "",
			       "%s: the database cannot be written (SQLite: %s): check the permissions of the file, of "
			       "its -wal and -shm files and of their folder, or a read-only filesystem; reads still work",
			       what, msg);
	return mp_fail(err, MP_EDB, "", "%s: %s", what, msg);
}

/* Runs a constant script of statements that take no parameters (DDL, PRAGMA). Callers pass only string
 * literals or const char[] defined from literals (tests/lint_sql.sh checks every call). */
static mp_status exec_script(sqlite3 *db, const char *sql, mp_error *err)
{
	/* what failed, for the message: a transaction's begin or commit is not "the schema" */
	const char *what = strncmp(sql, "BEGIN", 5) == 0	? "begin a write"
			   : strncmp(sql, "COMMIT", 6) == 0	? "commit"
			   : strncmp(sql, "ROLLBACK", 8) == 0 ? "roll back"
			   : strncmp(sql, "PRAGMA", 6) == 0	? "database settings"
							: "schema";

	while (sql && *sql) {
		sqlite3_stmt *stmt = NULL;
		const char *tail = NULL;
		int rc = sqlite3_prepare_v2(db, sql, -1, &stmt, &tail);

		if (rc != SQLITE_OK)
			return db_fail(err, db, what);
		if (stmt) {
			while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
				;
			sqlite3_finalize(stmt);
			if (rc != SQLITE_DONE)
				return db_fail(err, db, what);
		}
		sql = tail;
	}
	return MP_OK;
}

/*
 * The prepared statement for sql, which must be a string literal or a static const char[] of literals (the cache
 * is keyed by its address; tests/lint_sql.sh checks every caller). Prepared once per connection with
 * SQLITE_PREPARE_PERSISTENT; NULL when preparing fails (sqlite3_errmsg says why). The caller holds the store's
 * lock and hands the statement back with stmt_done, which resets it and clears its bindings.
 */
static sqlite3_stmt *stmt_get(mp_store *s, const char *sql)
{
	sqlite3_stmt *st = NULL;
	stmt_slot *slot = NULL;
	int i;

	for (i = 0; i < s->nstmts; i++)
		if (s->stmts[i].sql == sql)
			break;
	if (i < s->nstmts && !s->stmts[i].busy) {
		s->stmts[i].busy = true;
		return s->stmts[i].st;
	}
	if (i == s->nstmts && s->nstmts < STMT_SLOTS)
		slot = &s->stmts[s->nstmts];
	if (sqlite3_prepare_v3(s->db, sql, -1, slot ? SQLITE_PREPARE_PERSISTENT : 0, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return NULL;
	}
	if (slot) {
		slot->sql = sql;
		slot->st = st;
		slot->busy = true;
		s->nstmts++;
	}
	return st;
}

/* Gives back a statement from stmt_get: a cached one is reset (ending its read) and cleared, another finalized. */
static void stmt_done(mp_store *s, sqlite3_stmt *st)
{
	if (st == NULL)
		return;
	for (int i = 0; i < s->nstmts; i++) {
		if (s->stmts[i].st == st) {
			sqlite3_reset(st);
			sqlite3_clear_bindings(st);
			s->stmts[i].busy = false;
			return;
		}
	}
	sqlite3_finalize(st);
}

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *s)
{
	if (s && *s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void bind_u64_or_null(sqlite3_stmt *st, int i, uint64_t v)
{
	if (v)
		sqlite3_bind_int64(st, i, (sqlite3_int64)v);
	else
		sqlite3_bind_null(st, i);
}

static void bind_double_or_null(sqlite3_stmt *st, int i, double v)
{
	if (v > 0)
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
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

/* Version 3: clocks, measured-profile link, FMA rate and latency; the audit log; the preset log (which preset
 * ids were ever applied, so an upgrade adds new presets but never resurrects one a user deleted, and never
 * touches a row a user wrote). Existing preset rows are recorded as applied. */
static const char schema_v3[] =
	"ALTER TABLE devices ADD COLUMN linked_device_id TEXT REFERENCES devices(id) ON DELETE SET NULL;"
	"ALTER TABLE devices ADD COLUMN base_clock_hz REAL CHECK (base_clock_hz > 0);"
	"ALTER TABLE devices ADD COLUMN memory_clock_hz REAL CHECK (memory_clock_hz > 0);"
	"ALTER TABLE devices ADD COLUMN fma_flops_per_second REAL CHECK (fma_flops_per_second > 0);"
	"ALTER TABLE devices ADD COLUMN memory_latency_seconds REAL CHECK (memory_latency_seconds > 0);"
	"CREATE INDEX devices_vendor ON devices(vendor COLLATE NOCASE);"
	"CREATE INDEX models_type ON models(model_type);"
	"CREATE TABLE audit_log ("
	" seq INTEGER PRIMARY KEY,"
	" at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),"
	" actor TEXT NOT NULL,"
	" action TEXT NOT NULL CHECK (action IN ('create', 'replace', 'delete', 'preset')),"
	" kind TEXT NOT NULL CHECK (kind IN ('device', 'model')),"
	" resource_id TEXT NOT NULL"
	") STRICT;"
	"CREATE TABLE preset_log ("
	" kind TEXT NOT NULL CHECK (kind IN ('device', 'model')),"
	" id TEXT NOT NULL,"
	" applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),"
	" PRIMARY KEY (kind, id)"
	") STRICT;"
	"INSERT INTO preset_log (kind, id) SELECT 'device', id FROM devices WHERE source <> 'user';"
	"INSERT INTO preset_log (kind, id) SELECT 'model', id FROM models WHERE source = 'preset';";

/* Version 5: the device's kind (gpu, cpu, accelerator: fit and capacity consider GPUs unless asked otherwise),
 * NVML's memory total beside the CUDA total (usable_memory_bytes) and how the usable figure is known. Rows written
 * before get their kind from what they are: measured CPU profiles are "cpu", Intel Gaudi presets "accelerator". */
static const char schema_v5[] =
	"ALTER TABLE devices ADD COLUMN kind TEXT NOT NULL DEFAULT 'gpu' CHECK (kind IN ('gpu', 'cpu', 'accelerator'));"
	"ALTER TABLE devices ADD COLUMN nvml_memory_bytes INTEGER CHECK (nvml_memory_bytes > 0);"
	"ALTER TABLE devices ADD COLUMN usable_memory_source TEXT"
	" CHECK (usable_memory_source IN ('measured', 'published', 'derived'));"
	"UPDATE devices SET kind = 'cpu' WHERE id LIKE 'measured-cpu-%';"
	"UPDATE devices SET kind = 'accelerator' WHERE id LIKE 'gaudi%' AND source = 'datasheet';"
	"CREATE INDEX devices_kind ON devices(kind);";

/* Version 6: the names a device goes by elsewhere (NVML and GPU Feature Discovery product names, GKE accelerator
 * names, a site's own), one row per alias, keyed by mp_alias_key so each name means one device. A separate
 * table, so the device row itself is unchanged. */
static const char schema_v6[] =
	"CREATE TABLE device_aliases ("
	" alias_key TEXT PRIMARY KEY NOT NULL,"
	" alias TEXT NOT NULL,"
	" device_id TEXT NOT NULL REFERENCES devices(id) ON DELETE CASCADE,"
	" position INTEGER NOT NULL CHECK (position >= 0)"
	") STRICT;"
	"CREATE INDEX device_aliases_device ON device_aliases(device_id, position);";

/* Version 8: observations, what running engines reported beside memplan's prediction for the same launch
 * (service/mps_observe.c). Append-only, its own record (observed_at, key): not in audit_log, whose kinds are the
 * catalog's resources. The first index serves the terms a plan takes from observations, the second the error
 * per (engine, version, device, model). */
static const char schema_v8[] =
	"CREATE TABLE observations ("
	" id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" observed_at TEXT NOT NULL,"
	" key TEXT UNIQUE,"
	" engine TEXT NOT NULL CHECK (engine IN ('vllm', 'sglang', 'trtllm')),"
	" engine_version TEXT NOT NULL,"
	" version_line TEXT NOT NULL,"
	" device_id TEXT NOT NULL,"
	" model_id TEXT NOT NULL,"
	" node TEXT NOT NULL,"
	" namespace TEXT NOT NULL,"
	" pod TEXT NOT NULL,"
	" source TEXT NOT NULL CHECK (source IN ('metrics', 'log')),"
	" settings_json TEXT NOT NULL,"
	" figure TEXT NOT NULL,"
	" reported REAL NOT NULL,"
	" predicted REAL NOT NULL,"
	" error_ratio REAL NOT NULL,"
	" term TEXT NOT NULL,"
	" term_observed_bytes INTEGER NOT NULL,"
	" term_modelled_bytes INTEGER NOT NULL,"
	" term_resolution_bytes INTEGER NOT NULL CHECK (term_resolution_bytes >= 0)"
	") STRICT;"
	"CREATE INDEX observations_term ON observations(engine, device_id, term, version_line, id);"
	"CREATE INDEX observations_group ON observations(engine, engine_version, device_id, model_id, figure, id);";

/* Version 9: the store's identity and a counter every write transaction moves (tx_end): every committed write
 * rewrites this table's one page, so a -wal always carries the id and sequence of the database it was written for,
 * which the start-up check compares with the main file's (wal_preflight). */
static const char schema_v9[] =
	"CREATE TABLE store_meta ("
	" key TEXT PRIMARY KEY NOT NULL,"
	" value NOT NULL"
	");"
	"INSERT INTO store_meta (key, value) VALUES ('store_id', lower(hex(randomblob(16)))), ('write_seq', 0);";

/* Migration n takes the database from user_version n - 1 to n; when presets change, add a migration that
 * calls apply_presets again (it only adds ids never applied before) and move the preset writes there: they use
 * this build's columns, so only the newest migration may write them. */
#define SCHEMA_VERSION 9

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

/* Statement helpers used by the write paths below (they run inside a transaction already). */
static mp_status device_upsert(mp_store *s, const mp_store_device *d, const char *actor, const char *action,
			       bool *created, mp_error *err);
static mp_status model_upsert(mp_store *s, const mp_store_model *m, const char *actor, const char *action,
			      bool *created, mp_error *err);
static mp_status preset_aliases(mp_store *s, const mp_store_presets *p, mp_error *err);

/* Whether (kind, id) was applied before; records it when not. */
static mp_status preset_claim(mp_store *s, const char *kind, const char *id, bool *fresh, mp_error *err)
{
	sqlite3 *db = s->db;
	sqlite3_stmt *st = NULL;
	mp_status rc = MP_OK;

	if ((st = stmt_get(s, "INSERT INTO preset_log (kind, id) VALUES (?1, ?2) ON CONFLICT DO NOTHING")) == NULL)
		return db_fail(err, db, "preset log");
	sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE)
		rc = db_fail(err, db, "preset log");
	*fresh = sqlite3_changes(db) > 0;
	stmt_done(s, st);
	return rc;
}

static mp_status row_exists(mp_store *s, bool model, const char *id, bool *exists, mp_error *err)
{
	sqlite3 *db = s->db;
	sqlite3_stmt *st = NULL;
	int step;

	if ((st = stmt_get(s, model ? "SELECT 1 FROM models WHERE id = ?1" : "SELECT 1 FROM devices WHERE id = ?1")) ==
	    NULL)
		return db_fail(err, db, "read");
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	step = sqlite3_step(st);
	stmt_done(s, st);
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		return db_fail(err, db, "read");
	*exists = step == SQLITE_ROW;
	return MP_OK;
}

/*
 * Applies the presets (service/presets.c gives those built into the binary): each device and model id never applied
 * before is inserted, unless a row with that id exists already (a user's row is never touched). Datasheet devices
 * come first so that a measured profile can link to its datasheet one.
 */
/* The device row ?1 is provably the presets' own: not a user's, written by the presets (the audit log holds their
 * write of it) and by nothing else. Shared by the refresh (migration 5) and the retirement (migration 7). */
#define PRESETS_OWN_ROW                                                                                          \
	"id = ?1 AND source <> 'user' AND EXISTS (SELECT 1 FROM audit_log WHERE kind = 'device' AND resource_id = ?1" \
	" AND actor = 'preset') AND NOT EXISTS (SELECT 1 FROM audit_log WHERE kind = 'device' AND resource_id = ?1"  \
	" AND actor <> 'preset')"

static mp_status apply_presets(mp_store *s, const mp_store_presets *p, mp_error *err)
{
	mp_status st = MP_OK;

	if (p == NULL)
		return MP_OK;
	for (int pass = 0; pass < 2 && st == MP_OK; pass++) {
		for (size_t i = 0; i < p->ndevices && st == MP_OK; i++) {
			const mp_store_device *d = &p->devices[i];
			bool fresh = false, exists = false;

			if ((d->linked_device_id[0] != '\0') != (pass == 1))
				continue;
			st = preset_claim(s, "device", d->id, &fresh, err);
			if (st == MP_OK && fresh)
				st = row_exists(s, false, d->id, &exists, err);
			if (st == MP_OK && fresh && !exists)
				st = device_upsert(s, d, "preset", "preset", NULL, err);
		}
	}
	for (size_t i = 0; i < p->nmodels && st == MP_OK; i++) {
		const mp_store_model *m = &p->models[i];
		bool fresh = false, exists = false;

		st = preset_claim(s, "model", m->id, &fresh, err);
		if (st == MP_OK && fresh)
			st = row_exists(s, true, m->id, &exists, err);
		if (st == MP_OK && fresh && !exists)
			st = model_upsert(s, m, "preset", "preset", NULL, err);
	}
	return st;
}

/*
 * Rewrites the preset device rows provably written by the presets alone (the audit log holds the preset's write of
 * the id and no other; rows from before the audit log are left alone) with this build's preset figures, so an
 * upgrade brings
 * corrected datasheet values without touching a row a user wrote, replaced or imported.
 */
static mp_status refresh_presets(mp_store *s, const mp_store_presets *p, mp_error *err)
{
	mp_status st = MP_OK;

	if (p == NULL)
		return MP_OK;
	for (int pass = 0; pass < 2 && st == MP_OK; pass++) {
		for (size_t i = 0; i < p->ndevices && st == MP_OK; i++) {
			const mp_store_device *d = &p->devices[i];
			sqlite3_stmt *q;
			int step;

			if ((d->linked_device_id[0] != '\0') != (pass == 1))
				continue;
			q = stmt_get(s, "SELECT 1 FROM devices WHERE " PRESETS_OWN_ROW);
			if (q == NULL)
				return db_fail(err, s->db, "refresh presets");
			sqlite3_bind_text(q, 1, d->id, -1, SQLITE_STATIC);
			step = sqlite3_step(q);
			stmt_done(s, q);
			if (step != SQLITE_ROW && step != SQLITE_DONE)
				return db_fail(err, s->db, "refresh presets");
			if (step == SQLITE_ROW)
				st = device_upsert(s, d, "preset", "preset", NULL, err);
		}
	}
	return st;
}

/*
 * Preset ids this build no longer ships, with why. Migration 7 deletes each such row that is provably the preset's
 * own (the audit log holds the preset's write of it and no other write, its source is not 'user') and that no
 * calibration run and no measured profile refers to; a row anyone changed or uses stays, untouched. The preset log
 * keeps the id, so no later migration brings it back. Each deletion is audited (actor 'preset', action 'delete').
 */
static mp_status audit(mp_store *s, const char *actor, const char *action, const char *kind, const char *id,
		       mp_error *err);

static const char *const retired_presets[] = {
	/* the whole MI250X package (128 GiB, two GCDs): ROCm and every engine see two 64 GiB devices, so no
	 * process can hold what a plan on it promised; mi250x-gcd-64gb is the device software sees */
	"mi250x-128gb",
};

static mp_status retire_presets(mp_store *s, mp_error *err)
{
	for (size_t i = 0; i < sizeof(retired_presets) / sizeof(retired_presets[0]); i++) {
		sqlite3_stmt *q = stmt_get(s, "DELETE FROM devices WHERE " PRESETS_OWN_ROW
					      " AND NOT EXISTS (SELECT 1 FROM calibration_runs"
					      " WHERE device_id = ?1 OR datasheet_id = ?1)"
					      " AND NOT EXISTS (SELECT 1 FROM devices WHERE linked_device_id = ?1)");
		int step, changed;

		if (q == NULL)
			return db_fail(err, s->db, "retire presets");
		sqlite3_bind_text(q, 1, retired_presets[i], -1, SQLITE_STATIC);
		step = sqlite3_step(q);
		changed = sqlite3_changes(s->db);
		stmt_done(s, q);
		if (step != SQLITE_DONE)
			return db_fail(err, s->db, "retire presets");
		if (changed > 0) {
			mp_status st = audit(s, "preset", "delete", "device", retired_presets[i], err);

			if (st != MP_OK)
				return st;
		}
	}
	return MP_OK;
}

static mp_status migrate(mp_store *s, int target, const mp_store_presets *presets, mp_error *err)
{
	sqlite3 *db = s->db;
	int v = user_version(db);
	mp_status st = MP_OK;

	if (v < 0)
		return db_fail(err, db, "read user_version");
	if (v > SCHEMA_VERSION)
		return mp_fail(err, MP_EDB, "", "database schema version %d is newer than this build's %d", v,
			       SCHEMA_VERSION);
	for (int next = v + 1; next <= target && st == MP_OK; next++) {
		st = exec_script(db, "BEGIN IMMEDIATE", err);
		if (st != MP_OK)
			return st;
		/* Another process may have migrated between our read and our lock. */
		if (user_version(db) >= next) {
			st = exec_script(db, "COMMIT", err);
			continue;
		}
		/* PRAGMA takes no bound values: each version number is its own literal */
		switch (next) {
		case 1:
			st = exec_script(db, schema_v1, err);
			if (st == MP_OK)
				st = exec_script(db, "PRAGMA user_version = 1", err);
			break;
		case 2:
			st = exec_script(db, schema_v2, err);
			if (st == MP_OK)
				st = exec_script(db, "PRAGMA user_version = 2", err);
			break;
		case 3:
			/* the presets are written by migration 5 (migration 6 adds their aliases): this build's rows have its
			 * columns */
			st = exec_script(db, schema_v3, err);
			if (st == MP_OK)
				st = exec_script(db, "PRAGMA user_version = 3", err);
			break;
		case 4:
			/* version 4 added the A100 40GB PCIe preset; version 5 applies every preset never applied */
			st = exec_script(db, "PRAGMA user_version = 4", err);
			break;
		case 5:
			/* kinds, NVML totals, usable memory for every GPU preset: preset rows nobody changed take the
			 * new figures; user rows are untouched */
			st = exec_script(db, schema_v5, err);
			if (st == MP_OK)
				st = refresh_presets(s, presets, err);
			if (st == MP_OK)
				st = apply_presets(s, presets, err);
			if (st == MP_OK)
				st = exec_script(db, "PRAGMA user_version = 5", err);
			break;
		case 6:
			/* device aliases; the presets' aliases go to preset rows that are still the preset's */
			st = exec_script(db, schema_v6, err);
			s->aliases_ready = st == MP_OK;
			if (st == MP_OK)
				st = preset_aliases(s, presets, err);
			if (st == MP_OK)
				st = exec_script(db, "PRAGMA user_version = 6", err);
			break;
		case 7:
			/* presets added since version 6 (mi250x-gcd-64gb) and retired ones (the MI250X package) */
			st = apply_presets(s, presets, err);
			if (st == MP_OK)
				st = retire_presets(s, err);
			if (st == MP_OK)
				st = exec_script(db, "PRAGMA user_version = 7", err);
			break;
		case 8:
			st = exec_script(db, schema_v8, err);
			if (st == MP_OK)
				st = exec_script(db, "PRAGMA user_version = 8", err);
			break;
		case 9:
			st = exec_script(db, schema_v9, err);
			if (st == MP_OK)
				st = exec_script(db, "PRAGMA user_version = 9", err);
			break;
		default: st = mp_fail(err, MP_EINTERNAL, "", "no migration to version %d", next);
		}
		if (st == MP_OK)
			st = exec_script(db, "COMMIT", err);
		else
			exec_script(db, "ROLLBACK", NULL);
	}
	return st;
}

/* Finalizes the cached statements (before the connection closes). */
static void stmts_finalize(mp_store *s)
{
	for (int i = 0; i < s->nstmts; i++)
		sqlite3_finalize(s->stmts[i].st);
	s->nstmts = 0;
}

static void memo_clear(mp_store *s)
{
	for (int i = 0; i < MEMO_SLOTS; i++) {
		free(s->memo[i].value);
		memset(&s->memo[i], 0, sizeof(s->memo[i]));
	}
}

/* ----- the main file and its -wal: identity at start, watch while open ---------------------------------------- */

/*
 * SQLite applies whatever -wal lies beside a database when it opens it: frames carry page numbers and checksums of
 * their own, not the identity of the file they were written for (https://www.sqlite.org/walformat.html). A -wal
 * left by a daemon killed after its database file was replaced (restored from a backup, copied from another host)
 * is applied to the new file: integrity_check then fails ("Rowid ... out of order") and reads answer "database
 * disk image is malformed". wal_preflight decides, before SQLite opens the path, whether a non-empty -wal belongs
 * to the main file, on copies of both in a temporary folder (the files themselves are not touched):
 * - main alone and main with the -wal are opened, each checked (PRAGMA integrity_check) and their store_meta read;
 * - the -wal's first transaction alone (its frames up to the first commit frame, walformat.html section 2) gives
 *   the write sequence the -wal continues from.
 * It does not belong when the main file is sound and the -wal breaks it, when the two name different stores,
 * when the main file is older than what the -wal continues (a gap: transactions in neither), or newer than its last
 * write. Then the -wal (and the -shm built from it) are renamed aside with a ".orphan-<UTC time>" suffix, never
 * applied, and the open's notice says so. Nothing is decided while another connection has the database open (a
 * POSIX lock on the -shm in /proc/locks: SQLite's unix VFS holds one for as long as a connection maps it): its
 * -wal is live. A -wal without a frame is left to SQLite, which ignores it.
 */

/* "<path><suffix>" into out; false when it does not fit. */
static bool path_with(char *out, size_t len, const char *path, const char *suffix)
{
	int n = snprintf(out, len, "%s%s", path, suffix);

	return n > 0 && (size_t)n < len;
}

/* Copies the first limit bytes of src (all of it when limit is 0) to dst. */
static bool copy_file(const char *src, const char *dst, off_t limit)
{
	char buf[65536];
	int in = open(src, O_RDONLY | O_CLOEXEC), out;
	off_t done = 0;
	bool ok = true;

	if (in < 0)
		return false;
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0) {
		close(in);
		return false;
	}
	for (;;) {
		size_t want = sizeof(buf);
		ssize_t n;

		if (limit > 0 && (off_t)want > limit - done)
			want = (size_t)(limit - done);
		if (want == 0)
			break;
		n = read(in, buf, want);
		if (n == 0)
			break;
		if (n < 0 || write(out, buf, (size_t)n) != n) {
			ok = false;
			break;
		}
		done += n;
	}
	close(in);
	if (close(out) != 0)
		ok = false;
	return ok;
}

/* What one copy says of itself: its integrity_check's first row and its store_meta, when it has one. */
typedef struct copy_facts {
	bool opened;
	char integrity[200];
	bool has_meta;
	char store_id[40];
	long long write_seq;
} copy_facts;

static void read_copy(const char *path, copy_facts *f)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;

	memset(f, 0, sizeof(*f));
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		sqlite3_close(db);
		return;
	}
	f->opened = true;
	if (sqlite3_prepare_v2(db, "PRAGMA integrity_check(1)", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		snprintf(f->integrity, sizeof(f->integrity), "%s", (const char *)sqlite3_column_text(st, 0));
	else
		snprintf(f->integrity, sizeof(f->integrity), "%s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	st = NULL;
	if (sqlite3_prepare_v2(db, "SELECT (SELECT value FROM store_meta WHERE key = 'store_id'), "
				   "(SELECT value FROM store_meta WHERE key = 'write_seq')",
			       -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_TEXT) {
		f->has_meta = true;
		snprintf(f->store_id, sizeof(f->store_id), "%s", (const char *)sqlite3_column_text(st, 0));
		f->write_seq = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*
 * The length of the -wal's prefix that ends with its first commit frame (the 32-byte header, then frames of a
 * 24-byte header and a page: walformat.html section 2.1; a frame commits when its "database size after commit"
 * field, bytes 4 to 7, is not 0, and is current when its salts, bytes 8 to 15, equal the header's, bytes 16 to 23).
 * 0 when the -wal holds no current commit.
 */
static off_t first_commit_end(const char *wal)
{
	unsigned char hdr[32], fh[24];
	int fd = open(wal, O_RDONLY | O_CLOEXEC);
	uint32_t magic, page;
	off_t end = 0;

	if (fd < 0)
		return 0;
	if (read(fd, hdr, sizeof(hdr)) != (ssize_t)sizeof(hdr))
		goto out;
	magic = be32(hdr);
	page = be32(hdr + 8);
	if ((magic != 0x377f0682 && magic != 0x377f0683) || page < 512 || page > 65536 || (page & (page - 1)))
		goto out;
	for (off_t at = 32;; at += 24 + (off_t)page) {
		if (pread(fd, fh, sizeof(fh), at) != (ssize_t)sizeof(fh) || memcmp(fh + 8, hdr + 16, 8) != 0)
			break;
		if (be32(fh + 4) != 0) {
			end = at + 24 + (off_t)page;
			break;
		}
	}
out:
	close(fd);
	return end;
}

/* Whether some connection holds a POSIX lock on the file (ino on dev), by /proc/locks ("1: POSIX ADVISORY READ
 * 4242 08:01:1234567 128 128": major:minor in hex, then the inode). Unknown (no /proc): true, to decide nothing. */
static bool file_locked(dev_t dev, ino_t ino)
{
	FILE *f = fopen("/proc/locks", "re");
	char line[256];
	bool locked = false;

	if (f == NULL)
		return true;
	while (!locked && fgets(line, sizeof(line), f)) {
		unsigned maj, min;
		unsigned long long i;
		const char *p = line;

		for (int field = 0; field < 5 && p; field++) /* "1:" "POSIX" "ADVISORY" "READ" "pid" */
			p = (p = strchr(p, ' ')) ? p + strspn(p, " ") : NULL;
		if (p && sscanf(p, "%x:%x:%llu", &maj, &min, &i) == 3 && i == (unsigned long long)ino &&
		    maj == major(dev) && min == minor(dev))
			locked = true;
	}
	fclose(f);
	return locked;
}

static void remove_copy(const char *dir, const char *name)
{
	static const char *const suffixes[] = { "", "-wal", "-shm", "-journal" };
	char p[700];

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
		if (snprintf(p, sizeof(p), "%s/%s%s", dir, name, suffixes[i]) < (int)sizeof(p))
			unlink(p);
}

static void wal_preflight(const char *path, char *notice, size_t len)
{
	char wal[600], shm[600], dir[96], a[700], b[700], first[700], aside[640], why[400] = "";
	const char *tmp = getenv("TMPDIR");
	struct stat ws, ss;
	copy_facts fa, fb, ff;
	off_t prefix;
	time_t now = time(NULL);
	struct tm tm;

	if (!path_with(wal, sizeof(wal), path, "-wal") || !path_with(shm, sizeof(shm), path, "-shm") ||
	    stat(wal, &ws) != 0 || ws.st_size <= 32)
		return;
	if (stat(shm, &ss) == 0 && file_locked(ss.st_dev, ss.st_ino))
		return; /* live: another connection is using it */
	if ((prefix = first_commit_end(wal)) == 0)
		return;
	snprintf(dir, sizeof(dir), "%s/memplan-wal-XXXXXX", tmp && tmp[0] && strlen(tmp) < 60 ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL)
		return;
	snprintf(a, sizeof(a), "%s/main.db", dir);
	snprintf(b, sizeof(b), "%s/full.db", dir);
	snprintf(first, sizeof(first), "%s/first.db", dir);
	memset(&ff, 0, sizeof(ff));
	if (copy_file(path, a, 0) && copy_file(path, b, 0) && path_with(aside, sizeof(aside), b, "-wal") &&
	    copy_file(wal, aside, 0) && copy_file(path, first, 0) && path_with(aside, sizeof(aside), first, "-wal") &&
	    copy_file(wal, aside, prefix)) {
		read_copy(a, &fa);
		read_copy(b, &fb);
		read_copy(first, &ff);
		if (fa.opened && fb.opened && strcmp(fa.integrity, "ok") == 0 && strcmp(fb.integrity, "ok") != 0)
			snprintf(why, sizeof(why), "applied to it, the database fails integrity_check (%.200s)", fb.integrity);
		else if (fa.has_meta && fb.has_meta && strcmp(fa.store_id, fb.store_id) != 0)
			snprintf(why, sizeof(why), "it was written for store %s, the database file is store %s", fb.store_id,
				 fa.store_id);
		else if (fa.has_meta && ff.has_meta && strcmp(fa.store_id, ff.store_id) == 0 &&
			 fa.write_seq < ff.write_seq - 1)
			snprintf(why, sizeof(why),
				 "it continues from write %lld but the database file holds writes up to %lld (an older "
				 "copy: the writes between would be missing)",
				 ff.write_seq - 1, fa.write_seq);
		else if (fa.has_meta && fb.has_meta && fa.write_seq > fb.write_seq)
			snprintf(why, sizeof(why),
				 "the database file holds writes up to %lld, past the -wal's last (%lld): a newer copy",
				 fa.write_seq, fb.write_seq);
	}
	remove_copy(dir, "main.db");
	remove_copy(dir, "full.db");
	remove_copy(dir, "first.db");
	rmdir(dir);
	if (why[0] == '\0')
		return;
	gmtime_r(&now, &tm);
	snprintf(aside, sizeof(aside), "%s.orphan-%04d%02d%02dT%02d%02d%02dZ", wal, tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
	if (rename(wal, aside) != 0) {
		snprintf(notice, len,
			 "%s does not belong to %s (%s) and could not be moved aside (%s): SQLite will apply it; stop "
			 "the daemon and move it away",
			 wal, path, why, strerror(errno));
		return;
	}
	unlink(shm); /* the index of the -wal moved aside; SQLite builds a new one */
	snprintf(notice, len, "at start, %s did not belong to %s (%s): moved aside to %s, not applied", wal, path, why,
		 aside);
}

/* Where the -wal and -shm of the open database are, and which files they are (after the first read made them). */
static void remember_files(mp_store *s)
{
	const char *path = sqlite3_db_filename(s->db, "main");
	struct stat w, m;

	s->files_known = false;
	if (path == NULL || path[0] == '\0' || !path_with(s->wal_path, sizeof(s->wal_path), path, "-wal") ||
	    !path_with(s->shm_path, sizeof(s->shm_path), path, "-shm"))
		return;
	if (stat(s->wal_path, &w) != 0 || stat(s->shm_path, &m) != 0)
		return; /* not in WAL mode (read-only, or another journal): nothing to watch */
	s->wal_dev = w.st_dev;
	s->wal_ino = w.st_ino;
	s->shm_dev = m.st_dev;
	s->shm_ino = m.st_ino;
	s->files_known = true;
}

/*
 * Whether the -wal or -shm at their paths are still the files this connection uses. A deleted -wal keeps taking
 * writes into a file no one will find: the next start would not see them. On the first sight of it the frames are
 * checkpointed into the main file (which is still the one at its path: write_state checks that first), so every
 * write acknowledged before is kept, and writes are refused from then on. Caller holds the lock.
 */
static bool files_lost(mp_store *s)
{
	struct stat w, m;
	bool wal_gone, shm_gone;

	if (!s->files_known)
		return false;
	if (s->files_lost)
		return true;
	wal_gone = stat(s->wal_path, &w) != 0 || w.st_ino != s->wal_ino || w.st_dev != s->wal_dev;
	shm_gone = stat(s->shm_path, &m) != 0 || m.st_ino != s->shm_ino || m.st_dev != s->shm_dev;
	if (!wal_gone && !shm_gone)
		return false;
	s->files_lost = true;
	sqlite3_wal_checkpoint_v2(s->db, "main", SQLITE_CHECKPOINT_FULL, NULL, NULL);
	snprintf(s->lost_why, sizeof(s->lost_why),
		 "the database's %s file %s was deleted or replaced while the daemon runs: a write now would be lost "
		 "at the next start (what was written before has been copied into the database file); restart the "
		 "daemon",
		 wal_gone ? "-wal" : "-shm", wal_gone ? s->wal_path : s->shm_path);
	return true;
}

/* PRAGMA integrity_check at open: its first row when it is not "ok" (health says so and writes are refused). */
static void check_at_open(mp_store *s)
{
	sqlite3_stmt *st = NULL;

	s->corrupt[0] = '\0';
	if (sqlite3_prepare_v2(s->db, "PRAGMA integrity_check(1)", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		const char *row = (const char *)sqlite3_column_text(st, 0);

		if (row && strcmp(row, "ok") != 0)
			snprintf(s->corrupt, sizeof(s->corrupt), "%s", row);
	} else {
		snprintf(s->corrupt, sizeof(s->corrupt), "%s", sqlite3_errmsg(s->db));
	}
	sqlite3_finalize(st);
}

const char *mp_store_open_notice(mp_store *s)
{
	return s->notice;
}

mp_status mp_store_open_at(const char *path, int version, const mp_store_presets *presets, mp_store **out,
			   mp_error *err)
{
	pthread_mutexattr_t attr;
	mp_store *s;
	mp_status st;

	*out = NULL;
	if (version < 0 || version > SCHEMA_VERSION)
		return mp_fail(err, MP_EINVAL, "", "no schema version %d (0 to %d)", version, SCHEMA_VERSION);
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return mp_fail(err, MP_ENOMEM, "", "cannot allocate the store");
	s->data_version = -1;
	if (path[0] && strcmp(path, ":memory:") != 0 && strncmp(path, "file:", 5) != 0)
		wal_preflight(path, s->notice, sizeof(s->notice));
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
			    NULL) != SQLITE_OK) {
		st = mp_fail(err, MP_EDB, "", "cannot open database %s: %s", path,
			     s->db ? sqlite3_errmsg(s->db) : "out of memory");
		sqlite3_close(s->db);
		free(s);
		return st;
	}
	sqlite3_busy_timeout(s->db, 10000);
	st = exec_script(s->db, "PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL",
			 err);
	if (st == MP_ESTORAGE) /* SQLite cannot even read: a WAL database needs its -shm file, which it makes */
		st = mp_fail(err, MP_ESTORAGE, "--db",
			     "cannot read the database %s: it is not writable here and SQLite cannot create its %s-shm "
			     "file (WAL mode); make the file and its folder writable for this user",
			     path, path);
	if (st == MP_OK && sqlite3_db_readonly(s->db, "main") == 1 && user_version(s->db) < version)
		st = mp_fail(err, MP_ESTORAGE, "--db",
			     "the database %s is read-only and needs migrating to schema version %d (it is at %d): make it "
			     "writable for one start",
			     path, version, user_version(s->db));
	if (st == MP_OK)
		st = migrate(s, version, presets, err);
	s->aliases_ready = st == MP_OK && user_version(s->db) >= 6;
	s->meta_ready = st == MP_OK && user_version(s->db) >= 9;
	if (st == MP_OK) {
		check_at_open(s);
		remember_files(s);
	}
	if (st != MP_OK) {
		stmts_finalize(s);
		sqlite3_close(s->db);
		free(s);
		return st;
	}
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&s->lock, &attr);
	pthread_mutexattr_destroy(&attr);
	*out = s;
	return MP_OK;
}

mp_status mp_store_open(const char *path, const mp_store_presets *presets, mp_store **out, mp_error *err)
{
	return mp_store_open_at(path, SCHEMA_VERSION, presets, out, err);
}

void mp_store_close(mp_store *s)
{
	if (s == NULL)
		return;
	memo_clear(s);
	stmts_finalize(s);
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

mp_status mp_store_integrity_check(mp_store *s, char *out, size_t len, mp_error *err)
{
	sqlite3_stmt *st = NULL;
	mp_status rc = MP_OK;

	pthread_mutex_lock(&s->lock);
	if (sqlite3_prepare_v2(s->db, "PRAGMA integrity_check", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW)
		rc = db_fail(err, s->db, "integrity_check");
	else
		snprintf(out, len, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* ----- whether writes can be kept ------------------------------------------------------------------------ */

/* Caller holds the lock. */
static mp_store_state write_state(mp_store *s, char *why, size_t len)
{
	const char *path = sqlite3_db_filename(s->db, "main");
	int moved = 0;

	if (path == NULL || path[0] == '\0')
		path = "(in memory)";
	/* SQLITE_FCNTL_HAS_MOVED: the file at the path is no longer the one open (deleted, renamed or replaced) */
	if (sqlite3_file_control(s->db, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK && moved) {
		if (why)
			snprintf(why, len,
				 "the database file %s was deleted or replaced while the daemon runs: a write now would be "
				 "lost when it restarts; restart it (it opens the path again, creating and seeding it when it "
				 "is gone) or restore the file",
				 path);
		return MP_STORE_MOVED;
	}
	if (files_lost(s)) {
		if (why)
			snprintf(why, len, "%s", s->lost_why);
		return MP_STORE_MOVED;
	}
	if (s->corrupt[0]) {
		if (why)
			snprintf(why, len,
				 "integrity_check found the database %s damaged when the daemon started (%s): reads are "
				 "served as far as they can be, writes are refused; restore it from a backup (memplan db "
				 "export from a sound copy, then db import)",
				 path, s->corrupt);
		return MP_STORE_CORRUPT;
	}
	if (sqlite3_db_readonly(s->db, "main") == 1) {
		if (why)
			snprintf(why, len,
				 "the database %s is open read-only (the file, its -wal or -shm file or its folder is not "
				 "writable, or the filesystem is read-only): reads are served, writes are refused",
				 path);
		return MP_STORE_READONLY;
	}
	if (why && len)
		why[0] = '\0';
	return MP_STORE_WRITABLE;
}

mp_store_state mp_store_write_state(mp_store *s, char *why, size_t len)
{
	mp_store_state st;

	pthread_mutex_lock(&s->lock);
	st = write_state(s, why, len);
	pthread_mutex_unlock(&s->lock);
	return st;
}

/* ----- transactions ----------------------------------------------------------------------------------- */

/* Takes the lock and opens a transaction unless one is open (mp_store_begin). A database that cannot keep a write
 * (moved, deleted, read-only) refuses it before it begins: MP_ESTORAGE. */
static mp_status tx_begin(mp_store *s, mp_error *err)
{
	pthread_mutex_lock(&s->lock);
	if (s->depth == 0) {
		char why[600];
		mp_status st = write_state(s, why, sizeof(why)) == MP_STORE_WRITABLE
				       ? exec_script(s->db, "BEGIN IMMEDIATE", err)
				       : mp_fail(err, MP_ESTORAGE, "", "%s", why);

		if (st != MP_OK) {
			pthread_mutex_unlock(&s->lock);
			return st;
		}
		s->failed = false;
		s->wrote = false;
	}
	s->depth++;
	return MP_OK;
}

/* Data read before may have changed (a write through this handle): decoded values of it are dropped. Caller holds
 * the lock. */
static void bump_generation(mp_store *s)
{
	s->generation++;
}

/* Closes what tx_begin opened: commits the outermost transaction when everything in it succeeded. */
static mp_status tx_end(mp_store *s, mp_status rc, mp_error *err)
{
	if (rc != MP_OK) {
		s->failed = true;
	} else {
		s->wrote = true;
		bump_generation(s); /* reads through this handle see the write from now on */
	}
	if (--s->depth == 0) {
		bool committed = false;

		/* every committed write moves the store's write sequence (store_meta, wal_preflight) */
		if (!s->failed && s->meta_ready)
			rc = exec_script(s->db, "UPDATE store_meta SET value = value + 1 WHERE key = 'write_seq'", err);
		if (!s->failed && rc == MP_OK) {
			mp_error e2 = MP_ERROR_INIT;

			rc = exec_script(s->db, "COMMIT", err ? err : &e2);
			committed = rc == MP_OK;
		}
		if (!committed) {
			exec_script(s->db, "ROLLBACK", NULL);
			if (rc == MP_OK)
				rc = mp_fail(err, MP_EINVAL, "", "an earlier write in this transaction failed");
			/* the rollback undid writes that reads through this handle may have seen; a write that failed
			 * on its own changed nothing, and leaves the generation (and every cache keyed on it) alone */
			if (s->wrote)
				bump_generation(s);
		} else if (files_lost(s)) {
			/* the -wal went while the write ran: files_lost copied the write into the main file, but no later
			 * write would be kept; it is not acknowledged as if nothing happened */
			rc = mp_fail(err, MP_ESTORAGE, "", "%s", s->lost_why);
		}
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

mp_status mp_store_begin(mp_store *s, mp_error *err)
{
	return tx_begin(s, err);
}

mp_status mp_store_commit(mp_store *s, mp_error *err)
{
	mp_status rc = tx_end(s, MP_OK, err);

	return rc;
}

void mp_store_rollback(mp_store *s)
{
	tx_end(s, MP_EINVAL, NULL);
}

static mp_status audit(mp_store *s, const char *actor, const char *action, const char *kind, const char *id,
		       mp_error *err)
{
	sqlite3 *db = s->db;
	sqlite3_stmt *st = NULL;
	mp_status rc = MP_OK;

	if ((st = stmt_get(s, "INSERT INTO audit_log (actor, action, kind, resource_id) VALUES (?1, ?2, ?3, ?4)")) ==
	    NULL)
		return db_fail(err, db, "audit log");
	sqlite3_bind_text(st, 1, actor && *actor ? actor : "store", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, action, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, id, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE)
		rc = db_fail(err, db, "audit log");
	stmt_done(s, st);
	return rc;
}

static void col_text(sqlite3_stmt *st, int i, char *dst, size_t len);

mp_status mp_store_audit_page(mp_store *s, int64_t after_seq, mp_store_audit *rows, size_t cap, size_t *n, bool *more,
			      mp_error *err)
{
	sqlite3_stmt *st = NULL;
	mp_status rc = MP_OK;
	int step = SQLITE_DONE;

	*n = 0;
	*more = false;
	if (cap == 0 || cap > MP_STORE_PAGE_MAX)
		return mp_fail(err, MP_EINVAL, "", "a page holds 1 to %d rows", MP_STORE_PAGE_MAX);
	pthread_mutex_lock(&s->lock);
	if ((st = stmt_get(s, "SELECT seq, at, actor, action, kind, resource_id FROM audit_log WHERE seq > ?1"
			      " ORDER BY seq LIMIT ?2")) == NULL) {
		rc = db_fail(err, s->db, "read audit log");
		goto out;
	}
	sqlite3_bind_int64(st, 1, after_seq);
	sqlite3_bind_int(st, 2, (int)cap + 1);
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		mp_store_audit *a = &rows[*n];

		if (*n == cap) {
			*more = true;
			break;
		}
		memset(a, 0, sizeof(*a));
		a->seq = sqlite3_column_int64(st, 0);
		col_text(st, 1, a->at, sizeof(a->at));
		col_text(st, 2, a->actor, sizeof(a->actor));
		col_text(st, 3, a->action, sizeof(a->action));
		col_text(st, 4, a->kind, sizeof(a->kind));
		col_text(st, 5, a->resource_id, sizeof(a->resource_id));
		(*n)++;
	}
	if (!*more && step != SQLITE_DONE)
		rc = db_fail(err, s->db, "read audit log");
out:
	stmt_done(s, st);
	pthread_mutex_unlock(&s->lock);
	if (rc != MP_OK)
		*n = 0;
	return rc;
}

/* ----- devices ---------------------------------------------------------------------------------------- */

#define DEVICE_COLUMNS                                                                                       \
	"id, name, vendor, architecture, form_factor, memory_type, memory_bytes, usable_memory_bytes,"        \
	" memory_bandwidth_bytes_per_second, l2_cache_bytes, sm_count, boost_clock_hz, tdp_watts,"            \
	" cuda_context_bytes, interconnect_json, source, source_note, measured_at, created_at, updated_at,"   \
	" linked_device_id, base_clock_hz, memory_clock_hz, fma_flops_per_second, memory_latency_seconds,"        \
	" kind, nvml_memory_bytes, usable_memory_source"

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
	col_text(st, 20, d->linked_device_id, sizeof(d->linked_device_id));
	d->base_clock_hz = sqlite3_column_double(st, 21);
	d->memory_clock_hz = sqlite3_column_double(st, 22);
	d->fma_flops_per_second = sqlite3_column_double(st, 23);
	d->memory_latency_seconds = sqlite3_column_double(st, 24);
	col_text(st, 25, d->kind, sizeof(d->kind));
	d->hw.host_memory = strcmp(d->kind, "cpu") == 0;
	d->nvml_memory_bytes = (uint64_t)sqlite3_column_int64(st, 26);
	col_text(st, 27, d->usable_memory_source, sizeof(d->usable_memory_source));
}


static mp_status load_peaks(mp_store *s, mp_store_device *d, mp_error *err)
{
	sqlite3 *db = s->db;
	sqlite3_stmt *st = NULL;
	int rc;

	if ((st = stmt_get(s, "SELECT dtype, flops_per_second FROM device_peaks WHERE device_id = ?1")) == NULL)
		return db_fail(err, db, "read peaks");
	sqlite3_bind_text(st, 1, d->id, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		mp_dtype dt = mp_dtype_from_name((const char *)sqlite3_column_text(st, 0));

		if (dt != MP_DTYPE_INVALID)
			d->hw.peak_flops_per_second[dt] = sqlite3_column_double(st, 1);
	}
	stmt_done(s, st);
	return rc == SQLITE_DONE ? MP_OK : db_fail(err, db, "read peaks");
}

/* The device's aliases in their order (none before schema v5). */
static mp_status load_aliases(mp_store *s, mp_store_device *d, mp_error *err)
{
	sqlite3 *db = s->db;
	sqlite3_stmt *st = NULL;
	int rc;

	d->naliases = 0;
	if (!s->aliases_ready)
		return MP_OK;
	if ((st = stmt_get(s, "SELECT alias FROM device_aliases WHERE device_id = ?1 ORDER BY position")) == NULL)
		return db_fail(err, db, "read aliases");
	sqlite3_bind_text(st, 1, d->id, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (d->naliases < MP_STORE_MAX_ALIASES)
			col_text(st, 0, d->aliases[d->naliases++], MP_STORE_ALIAS_MAX);
	stmt_done(s, st);
	return rc == SQLITE_DONE ? MP_OK : db_fail(err, db, "read aliases");
}

bool mp_store_valid_id(const char *id)
{
	return mp_valid_id(id); /* the one id rule (core/mp_base.h); MP_STORE_ID_MAX is 64 */
}

#define BAD_ID_MESSAGE "is not a valid id: ids match ^[a-z0-9][a-z0-9._-]{0,62}$ (1 to 63 bytes)"

static bool memo_get(mp_store *s, const char *id, const uint64_t *gen, mp_store_device *out);
static void memo_put(mp_store *s, const mp_store_device *value);

static mp_status device_get(mp_store *s, const char *id, const uint64_t *gen, mp_store_device *out, mp_error *err);

mp_status mp_store_device_get(mp_store *s, const char *id, mp_store_device *out, mp_error *err)
{
	return device_get(s, id, NULL, out, err);
}

mp_status mp_store_device_get_at(mp_store *s, const char *id, uint64_t gen, mp_store_device *out, mp_error *err)
{
	return device_get(s, id, &gen, out, err);
}

/* gen: a generation the caller read just now (NULL: read it here) */
static mp_status device_get(mp_store *s, const char *id, const uint64_t *gen, mp_store_device *out, mp_error *err)
{
	sqlite3_stmt *st = NULL;
	mp_status rc = MP_OK;
	int step;
	bool memo;

	if (!mp_store_valid_id(id))
		return mp_fail(err, MP_EINVAL, "/device", "the device id " BAD_ID_MESSAGE);

	pthread_mutex_lock(&s->lock);
	/* like the decoded models: kept while the generation stays, never inside a transaction */
	memo = s->depth == 0;
	if (memo && memo_get(s, id, gen, out)) {
		pthread_mutex_unlock(&s->lock);
		return MP_OK;
	}
	if ((st = stmt_get(s, "SELECT " DEVICE_COLUMNS " FROM devices WHERE id = ?1")) == NULL) {
		rc = db_fail(err, s->db, "read device");
		goto out;
	}
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		row_to_device(st, out);
		rc = load_peaks(s, out, err);
		if (rc == MP_OK)
			rc = load_aliases(s, out, err);
		/* read under the lock at s->memo_generation: a commit elsewhere since then moves the generation at the
		 * next look, which drops this copy */
		if (rc == MP_OK && memo)
			memo_put(s, out);
	} else if (step == SQLITE_DONE) {
		rc = mp_fail(err, MP_ENOTFOUND, "/device", "no device with id '%.64s' (GET /v1/devices lists them)", id);
	} else {
		rc = db_fail(err, s->db, "read device");
	}
out:
	stmt_done(s, st);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

mp_status mp_store_device_page(mp_store *s, const mp_store_device_filter *f, const char *after, mp_store_device *rows,
			       size_t cap, size_t *n, bool *more, mp_error *err)
{
	static const char sql[] = "SELECT " DEVICE_COLUMNS " FROM devices WHERE id > ?1"
				  " AND (?3 IS NULL OR vendor = ?3 COLLATE NOCASE)"
				  " AND (?4 IS NULL OR source = ?4)"
				  " AND (?5 IS NULL OR memory_bytes >= ?5)"
				  " AND (?6 IS NULL OR (?6 & CASE kind WHEN 'gpu' THEN 1 WHEN 'cpu' THEN 2 ELSE 4 END) <> 0)"
				  " ORDER BY id LIMIT ?2";
	sqlite3_stmt *st = NULL;
	mp_status rc = MP_OK;
	int step = SQLITE_DONE;

	*n = 0;
	*more = false;
	if (cap == 0 || cap > MP_STORE_PAGE_MAX)
		return mp_fail(err, MP_EINVAL, "", "a page holds 1 to %d rows", MP_STORE_PAGE_MAX);
	pthread_mutex_lock(&s->lock);
	if ((st = stmt_get(s, sql)) == NULL) {
		rc = db_fail(err, s->db, "list devices");
		goto out;
	}
	sqlite3_bind_text(st, 1, after ? after : "", -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, (int)cap + 1);
	bind_text_or_null(st, 3, f ? f->vendor : NULL);
	bind_text_or_null(st, 4, f ? f->source : NULL);
	bind_u64_or_null(st, 5, f ? f->min_memory_bytes : 0);
	bind_u64_or_null(st, 6, f ? f->kinds : 0);
	while (rc == MP_OK && (step = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			*more = true;
			break;
		}
		row_to_device(st, &rows[*n]);
		rc = load_peaks(s, &rows[*n], err);
		if (rc == MP_OK)
			rc = load_aliases(s, &rows[*n], err);
		if (rc == MP_OK)
			(*n)++;
	}
	if (rc == MP_OK && !*more && step != SQLITE_DONE)
		rc = db_fail(err, s->db, "list devices");
out:
	stmt_done(s, st);
	pthread_mutex_unlock(&s->lock);
	if (rc != MP_OK)
		*n = 0;
	return rc;
}

static mp_status constraint_or_db(sqlite3 *db, mp_error *err, const char *what)
{
	if (sqlite3_errcode(db) == SQLITE_CONSTRAINT)
		return mp_fail(err, MP_EINVAL, "", "%s: %s", what, sqlite3_errmsg(db));
	return db_fail(err, db, what);
}

/* Replaces the aliases of d->id with d's (inside the write's transaction). An alias another device goes by is a
 * conflict naming "/aliases/<i>"; nothing is written before schema v5. */
static mp_status write_aliases(mp_store *s, const mp_store_device *d, mp_error *err)
{
	sqlite3 *db = s->db;
	sqlite3_stmt *del = NULL, *owner = NULL, *ins = NULL;
	mp_status rc = MP_OK;

	if (!s->aliases_ready)
		return MP_OK;
	if ((del = stmt_get(s, "DELETE FROM device_aliases WHERE device_id = ?1")) == NULL ||
	    (owner = stmt_get(s, "SELECT device_id FROM device_aliases WHERE alias_key = ?1")) == NULL ||
	    (ins = stmt_get(s, "INSERT INTO device_aliases (alias_key, alias, device_id, position)"
			      " VALUES (?1, ?2, ?3, ?4)")) == NULL) {
		rc = db_fail(err, db, "write device aliases");
		goto out;
	}
	sqlite3_bind_text(del, 1, d->id, -1, SQLITE_STATIC);
	if (sqlite3_step(del) != SQLITE_DONE) {
		rc = db_fail(err, db, "write device aliases");
		goto out;
	}
	for (size_t i = 0; i < d->naliases && i < MP_STORE_MAX_ALIASES && rc == MP_OK; i++) {
		char key[MP_STORE_ALIAS_MAX];
		int step;

		if (!mp_alias_key(d->aliases[i], key, sizeof(key)) || key[0] == '\0') {
			rc = mp_fail(err, MP_EINVAL, "", "alias %zu is empty or too long", i);
			snprintf(err->field, sizeof(err->field), "/aliases/%zu", i);
			break;
		}
		sqlite3_reset(owner);
		sqlite3_bind_text(owner, 1, key, -1, SQLITE_TRANSIENT);
		step = sqlite3_step(owner);
		if (step == SQLITE_ROW) {
			rc = mp_fail(err, MP_ECONFLICT, "", "the alias '%s' is taken: device '%s' goes by it (or by a name "
				     "that matches it, case and ' ', '_', '-' aside); remove it there first",
				     d->aliases[i], (const char *)sqlite3_column_text(owner, 0));
			snprintf(err->field, sizeof(err->field), "/aliases/%zu", i);
			break;
		}
		if (step != SQLITE_DONE) {
			rc = db_fail(err, db, "write device aliases");
			break;
		}
		sqlite3_reset(ins);
		sqlite3_bind_text(ins, 1, key, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(ins, 2, d->aliases[i], -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 3, d->id, -1, SQLITE_STATIC);
		sqlite3_bind_int(ins, 4, (int)i);
		if (sqlite3_step(ins) != SQLITE_DONE)
			rc = constraint_or_db(db, err, "write device aliases");
	}
out:
	stmt_done(s, ins);
	stmt_done(s, owner);
	stmt_done(s, del);
	return rc;
}

/*
 * The presets' aliases, for a database that had the presets before aliases existed (migration 5): each alias goes
 * to its preset device when that row is still a preset's (not the user's) and no device goes by the name yet. On a
 * new database the preset rows were written at migration 3, before the table; this is where they get theirs.
 */
static mp_status preset_aliases(mp_store *s, const mp_store_presets *p, mp_error *err)
{
	sqlite3_stmt *ins = NULL;
	mp_status rc = MP_OK;

	if (p == NULL)
		return MP_OK;
	if ((ins = stmt_get(s, "INSERT INTO device_aliases (alias_key, alias, device_id, position)"
			      " SELECT ?1, ?2, id, ?4 FROM devices WHERE id = ?3 AND source <> 'user'"
			      " ON CONFLICT DO NOTHING")) == NULL)
		return db_fail(err, s->db, "preset aliases");
	for (size_t i = 0; i < p->ndevices && rc == MP_OK; i++)
		for (size_t a = 0; a < p->devices[i].naliases && a < MP_STORE_MAX_ALIASES && rc == MP_OK; a++) {
			char key[MP_STORE_ALIAS_MAX];

			if (!mp_alias_key(p->devices[i].aliases[a], key, sizeof(key)))
				continue;
			sqlite3_reset(ins);
			sqlite3_bind_text(ins, 1, key, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(ins, 2, p->devices[i].aliases[a], -1, SQLITE_STATIC);
			sqlite3_bind_text(ins, 3, p->devices[i].id, -1, SQLITE_STATIC);
			sqlite3_bind_int(ins, 4, (int)a);
			if (sqlite3_step(ins) != SQLITE_DONE)
				rc = db_fail(err, s->db, "preset aliases");
		}
	stmt_done(s, ins);
	return rc;
}

mp_status mp_store_device_by_alias(mp_store *s, const char *alias, mp_store_device *out, mp_error *err)
{
	sqlite3_stmt *st = NULL;
	char key[MP_STORE_ALIAS_MAX], id[MP_STORE_ID_MAX];
	mp_status rc = MP_OK;
	int step;

	if (!mp_alias_key(alias, key, sizeof(key)) || key[0] == '\0' || !s->aliases_ready)
		return mp_fail(err, MP_ENOTFOUND, "", "no device goes by '%.95s'", alias);
	pthread_mutex_lock(&s->lock);
	if ((st = stmt_get(s, "SELECT device_id FROM device_aliases WHERE alias_key = ?1")) == NULL) {
		rc = db_fail(err, s->db, "read aliases");
		goto out;
	}
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	step = sqlite3_step(st);
	if (step == SQLITE_ROW)
		col_text(st, 0, id, sizeof(id));
	else if (step == SQLITE_DONE) {
		/* no alias: the one device whose own name has that key ("H100 SXM5 80GB"); two of one name are none */
		char name[sizeof(((mp_store_device *)0)->name)], nkey[sizeof(name)], cand[MP_STORE_ID_MAX];
		int found = 0;

		stmt_done(s, st);
		if ((st = stmt_get(s, "SELECT id, name FROM devices ORDER BY id")) == NULL) {
			rc = db_fail(err, s->db, "read device names");
			goto out;
		}
		while ((step = sqlite3_step(st)) == SQLITE_ROW) {
			col_text(st, 1, name, sizeof(name));
			if (mp_alias_key(name, nkey, sizeof(nkey)) && strcmp(nkey, key) == 0 && found++ == 0)
				col_text(st, 0, cand, sizeof(cand));
		}
		if (step != SQLITE_DONE)
			rc = db_fail(err, s->db, "read device names");
		else if (found == 1)
			snprintf(id, sizeof(id), "%s", cand);
		else if (found)
			rc = mp_fail(err, MP_ENOTFOUND, "", "%d devices are named '%.95s': give the id", found, alias);
		else
			rc = mp_fail(err, MP_ENOTFOUND, "", "no device goes by '%.95s'", alias);
	} else
		rc = db_fail(err, s->db, "read aliases");
out:
	stmt_done(s, st);
	if (rc == MP_OK)
		rc = mp_store_device_get(s, id, out, err); /* recursive lock */
	pthread_mutex_unlock(&s->lock);
	return rc;
}

static mp_status device_upsert(mp_store *s, const mp_store_device *d, const char *actor, const char *action,
			       bool *created, mp_error *err)
{
	static const char upsert[] =
		"INSERT INTO devices (id, name, vendor, architecture, form_factor, memory_type, memory_bytes,"
		" usable_memory_bytes, memory_bandwidth_bytes_per_second, l2_cache_bytes, sm_count, boost_clock_hz,"
		" tdp_watts, cuda_context_bytes, interconnect_json, source, source_note, measured_at,"
		" linked_device_id, base_clock_hz, memory_clock_hz, fma_flops_per_second, memory_latency_seconds,"
		" kind, nvml_memory_bytes, usable_memory_source)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20,"
		" ?21, ?22, ?23, ?24, ?25, ?26)"
		" ON CONFLICT (id) DO UPDATE SET name = excluded.name, vendor = excluded.vendor,"
		" architecture = excluded.architecture, form_factor = excluded.form_factor,"
		" memory_type = excluded.memory_type, memory_bytes = excluded.memory_bytes,"
		" usable_memory_bytes = excluded.usable_memory_bytes,"
		" memory_bandwidth_bytes_per_second = excluded.memory_bandwidth_bytes_per_second,"
		" l2_cache_bytes = excluded.l2_cache_bytes, sm_count = excluded.sm_count,"
		" boost_clock_hz = excluded.boost_clock_hz, tdp_watts = excluded.tdp_watts,"
		" cuda_context_bytes = excluded.cuda_context_bytes, interconnect_json = excluded.interconnect_json,"
		" source = excluded.source, source_note = excluded.source_note, measured_at = excluded.measured_at,"
		" linked_device_id = excluded.linked_device_id, base_clock_hz = excluded.base_clock_hz,"
		" memory_clock_hz = excluded.memory_clock_hz, fma_flops_per_second = excluded.fma_flops_per_second,"
		" memory_latency_seconds = excluded.memory_latency_seconds, kind = excluded.kind,"
		" nvml_memory_bytes = excluded.nvml_memory_bytes, usable_memory_source = excluded.usable_memory_source,"
		" updated_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now')";
	sqlite3 *db = s->db;
	sqlite3_stmt *st = NULL, *del = NULL, *ins = NULL;
	mp_status rc = MP_OK;
	bool existed = false;

	rc = row_exists(s, false, d->id, &existed, err);
	if (rc != MP_OK)
		return rc;
	if (created)
		*created = !existed;
	if ((st = stmt_get(s, upsert)) == NULL ||
	    (del = stmt_get(s, "DELETE FROM device_peaks WHERE device_id = ?1")) == NULL ||
	    (ins = stmt_get(s, "INSERT INTO device_peaks (device_id, dtype, flops_per_second) VALUES (?1, ?2, ?3)")) == NULL) {
		rc = db_fail(err, db, "write device");
		goto out;
	}
	sqlite3_bind_text(st, 1, d->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, d->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, d->vendor, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, d->architecture, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, d->form_factor, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, d->memory_type, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 7, (sqlite3_int64)d->hw.memory_bytes);
	bind_u64_or_null(st, 8, d->hw.usable_memory_bytes);
	sqlite3_bind_double(st, 9, d->hw.memory_bandwidth_bytes_per_second);
	bind_u64_or_null(st, 10, d->hw.l2_cache_bytes);
	bind_u64_or_null(st, 11, d->hw.sm_count);
	bind_double_or_null(st, 12, d->hw.boost_clock_hz);
	bind_double_or_null(st, 13, d->tdp_watts);
	bind_u64_or_null(st, 14, d->hw.cuda_context_bytes);
	bind_text_or_null(st, 15, d->interconnect_json);
	sqlite3_bind_text(st, 16, d->source, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 17, d->source_note, -1, SQLITE_STATIC);
	bind_text_or_null(st, 18, d->measured_at);
	bind_text_or_null(st, 19, d->linked_device_id);
	bind_double_or_null(st, 20, d->base_clock_hz);
	bind_double_or_null(st, 21, d->memory_clock_hz);
	bind_double_or_null(st, 22, d->fma_flops_per_second);
	bind_double_or_null(st, 23, d->memory_latency_seconds);
	sqlite3_bind_text(st, 24, d->kind[0] ? d->kind : "gpu", -1, SQLITE_STATIC);
	bind_u64_or_null(st, 25, d->nvml_memory_bytes);
	bind_text_or_null(st, 26, d->usable_memory_source);
	if (sqlite3_step(st) != SQLITE_DONE) {
		rc = constraint_or_db(db, err, "write device");
		goto out;
	}
	sqlite3_bind_text(del, 1, d->id, -1, SQLITE_STATIC);
	if (sqlite3_step(del) != SQLITE_DONE) {
		rc = db_fail(err, db, "write device peaks");
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
			rc = constraint_or_db(db, err, "write device peaks");
			goto out;
		}
	}
	stmt_done(s, ins);
	stmt_done(s, del);
	stmt_done(s, st);
	ins = del = st = NULL;
	rc = write_aliases(s, d, err);
	if (rc == MP_OK)
		rc = audit(s, actor, action ? action : existed ? "replace" : "create", "device", d->id, err);
out:
	stmt_done(s, ins);
	stmt_done(s, del);
	stmt_done(s, st);
	return rc;
}

mp_status mp_store_device_write(mp_store *s, const mp_store_device *d, const char *actor, bool *created,
				mp_error *err)
{
	mp_status rc = tx_begin(s, err);

	if (rc != MP_OK)
		return rc;
	rc = device_upsert(s, d, actor, NULL, created, err);
	return tx_end(s, rc, err);
}

mp_status mp_store_device_put(mp_store *s, const mp_store_device *d, mp_error *err)
{
	return mp_store_device_write(s, d, "store", NULL, err);
}

static mp_status remove_row(mp_store *s, bool model, const char *id, const char *actor, mp_error *err)
{
	sqlite3_stmt *st = NULL;
	mp_status rc;

	if (!mp_store_valid_id(id))
		return mp_fail(err, MP_EINVAL, "/id", "the %s id " BAD_ID_MESSAGE, model ? "model" : "device");
	rc = tx_begin(s, err);
	if (rc != MP_OK)
		return rc;
	if ((st = stmt_get(s, model ? "DELETE FROM models WHERE id = ?1" : "DELETE FROM devices WHERE id = ?1")) ==
	    NULL) {
		rc = db_fail(err, s->db, "delete");
	} else {
		sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_DONE)
			rc = constraint_or_db(s->db, err, "delete");
		else if (sqlite3_changes(s->db) == 0)
			rc = mp_fail(err, MP_ENOTFOUND, "/id", "no %s with id '%.64s'", model ? "model" : "device", id);
	}
	stmt_done(s, st);
	if (rc == MP_OK)
		rc = audit(s, actor, "delete", model ? "model" : "device", id, err);
	return tx_end(s, rc, err);
}

mp_status mp_store_device_remove(mp_store *s, const char *id, const char *actor, mp_error *err)
{
	return remove_row(s, false, id, actor, err);
}

mp_status mp_store_device_delete(mp_store *s, const char *id, mp_error *err)
{
	return remove_row(s, false, id, "store", err);
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
	if (!mp_store_valid_id(id))
		return mp_fail(err, MP_EINVAL, "/model", "the model id " BAD_ID_MESSAGE);
	pthread_mutex_lock(&s->lock);
	if ((st = stmt_get(s, "SELECT " MODEL_COLUMNS " FROM models WHERE id = ?1")) == NULL) {
		rc = db_fail(err, s->db, "read model");
		goto out;
	}
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	step = sqlite3_step(st);
	if (step == SQLITE_ROW)
		rc = row_to_model(st, out, err);
	else if (step == SQLITE_DONE)
		rc = mp_fail(err, MP_ENOTFOUND, "/model", "no model with id '%.64s' (GET /v1/models lists them)", id);
	else
		rc = db_fail(err, s->db, "read model");
out:
	stmt_done(s, st);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

mp_status mp_store_model_page(mp_store *s, const mp_store_model_filter *f, const char *after, mp_store_model *rows,
			      size_t cap, size_t *n, bool *more, mp_error *err)
{
	static const char sql[] = "SELECT " MODEL_COLUMNS " FROM models WHERE id > ?1"
				  " AND (?3 IS NULL OR model_type = ?3) AND (?4 IS NULL OR source = ?4)"
				  " ORDER BY id LIMIT ?2";
	sqlite3_stmt *st = NULL;
	mp_status rc = MP_OK;
	int step = SQLITE_DONE;

	*n = 0;
	*more = false;
	if (cap == 0 || cap > MP_STORE_PAGE_MAX)
		return mp_fail(err, MP_EINVAL, "", "a page holds 1 to %d rows", MP_STORE_PAGE_MAX);
	pthread_mutex_lock(&s->lock);
	if ((st = stmt_get(s, sql)) == NULL) {
		rc = db_fail(err, s->db, "list models");
		goto out;
	}
	sqlite3_bind_text(st, 1, after ? after : "", -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, (int)cap + 1);
	bind_text_or_null(st, 3, f ? f->model_type : NULL);
	bind_text_or_null(st, 4, f ? f->source : NULL);
	while (rc == MP_OK && (step = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			*more = true;
			break;
		}
		rc = row_to_model(st, &rows[*n], err);
		if (rc == MP_OK)
			(*n)++;
	}
	if (rc == MP_OK && !*more && step != SQLITE_DONE)
		rc = db_fail(err, s->db, "list models");
out:
	stmt_done(s, st);
	pthread_mutex_unlock(&s->lock);
	if (rc != MP_OK) {
		for (size_t i = 0; i < *n; i++)
			mp_store_model_free(&rows[i]);
		*n = 0;
	}
	return rc;
}

static mp_status model_upsert(mp_store *s, const mp_store_model *m, const char *actor, const char *action,
			      bool *created, mp_error *err)
{
	static const char upsert[] =
		"INSERT INTO models (id, model_type, config_json, parameters, source) VALUES (?1, ?2, ?3, ?4, ?5)"
		" ON CONFLICT (id) DO UPDATE SET model_type = excluded.model_type, config_json = excluded.config_json,"
		" parameters = excluded.parameters, source = excluded.source,"
		" updated_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now')";
	sqlite3 *db = s->db;
	sqlite3_stmt *st = NULL;
	bool existed = false;
	mp_status rc = row_exists(s, true, m->id, &existed, err);

	if (rc != MP_OK)
		return rc;
	if (created)
		*created = !existed;
	if ((st = stmt_get(s, upsert)) == NULL)
		return db_fail(err, db, "write model");
	sqlite3_bind_text(st, 1, m->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, m->model_type, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, m->config_json ? m->config_json : "", -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)m->parameters);
	sqlite3_bind_text(st, 5, m->source[0] ? m->source : "user", -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE)
		rc = constraint_or_db(db, err, "write model");
	stmt_done(s, st);
	if (rc == MP_OK)
		rc = audit(s, actor, action ? action : existed ? "replace" : "create", "model", m->id, err);
	return rc;
}

mp_status mp_store_model_write(mp_store *s, const mp_store_model *m, const char *actor, bool *created,
			       mp_error *err)
{
	mp_status rc = tx_begin(s, err);

	if (rc != MP_OK)
		return rc;
	rc = model_upsert(s, m, actor, NULL, created, err);
	return tx_end(s, rc, err);
}

mp_status mp_store_model_remove(mp_store *s, const char *id, const char *actor, mp_error *err)
{
	return remove_row(s, true, id, actor, err);
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
	if ((st = stmt_get(s, sql)) == NULL) {
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
	bump_generation(s);
	if (sqlite3_step(st) != SQLITE_DONE)
		rc = sqlite3_errcode(s->db) == SQLITE_CONSTRAINT ? mp_fail(err, MP_EINVAL, "", "%s", sqlite3_errmsg(s->db))
								  : db_fail(err, s->db, "write calibration");
out:
	stmt_done(s, st);
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
	if ((st = stmt_get(s, "SELECT id, target, state, device_id, datasheet_id, created_at, finished_at, results_json"
			      " FROM calibration_runs WHERE id = ?1")) == NULL) {
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
		rc = mp_fail(err, MP_ENOTFOUND, "/id", "no calibration with id '%.64s'", id);
	} else {
		rc = db_fail(err, s->db, "read calibration");
	}
out:
	stmt_done(s, st);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* ----- generation and the decoded-model memo ---------------------------------------------------------- */

/* The generation, first taking in commits made through other connections (in this process or another), which
 * PRAGMA data_version reveals. Caller holds the lock. A failed read moves the generation (nothing is served). */
static uint64_t generation_now(mp_store *s)
{
	sqlite3_stmt *st = stmt_get(s, "PRAGMA data_version");
	int64_t v = -1;

	if (st && sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	stmt_done(s, st);
	if (v < 0 || v != s->data_version) {
		s->data_version = v;
		s->generation++;
	}
	return s->generation;
}

uint64_t mp_store_generation(mp_store *s)
{
	uint64_t g;

	pthread_mutex_lock(&s->lock);
	g = generation_now(s);
	pthread_mutex_unlock(&s->lock);
	return g;
}

static memo_slot *memo_find(mp_store *s, const char *id)
{
	for (int i = 0; i < MEMO_SLOTS; i++) {
		memo_slot *m = &s->memo[i];

		if (m->used && strcmp(m->value->id, id) == 0)
			return m;
	}
	return NULL;
}

/* Keeps a copy of the device, evicting the least recently used entry when full. Best effort: out of memory only
 * means it is not kept. Caller holds the lock. */
static void memo_put(mp_store *s, const mp_store_device *value)
{
	memo_slot *m = memo_find(s, value->id);

	if (m == NULL) {
		m = &s->memo[0];
		for (int i = 0; i < MEMO_SLOTS && m->used; i++)
			if (!s->memo[i].used || s->memo[i].used < m->used)
				m = &s->memo[i];
		if (m->value == NULL && (m->value = malloc(sizeof(*m->value))) == NULL)
			return;
	}
	*m->value = *value;
	m->used = ++s->memo_clock;
}

/* The memo's copy of device id into out, first dropping every copy when the generation moved. gen: the caller's
 * fresh reading of the generation, used while the handle's still equals it (NULL: read it now). Caller holds the
 * lock, outside any transaction. */
static bool memo_get(mp_store *s, const char *id, const uint64_t *gen, mp_store_device *out)
{
	uint64_t g = gen && *gen == s->generation ? *gen : generation_now(s);
	memo_slot *hit;

	if (g != s->memo_generation) {
		memo_clear(s);
		s->memo_generation = g;
	}
	hit = memo_find(s, id);
	if (hit == NULL)
		return false;
	*out = *hit->value;
	hit->used = ++s->memo_clock;
	return true;
}

/* ----- observations ---------------------------------------------------------------------------------------- */

#define OBS_COLUMNS \
	"id, observed_at, coalesce(key, ''), engine, engine_version, version_line, device_id, model_id, node," \
	" namespace, pod, source, settings_json, figure, reported, predicted, error_ratio, term," \
	" term_observed_bytes, term_modelled_bytes, term_resolution_bytes"

static void obs_row(sqlite3_stmt *st, mp_store_observation *o)
{
	memset(o, 0, sizeof(*o));
	o->id = sqlite3_column_int64(st, 0);
	col_text(st, 1, o->observed_at, sizeof(o->observed_at));
	col_text(st, 2, o->key, sizeof(o->key));
	col_text(st, 3, o->engine, sizeof(o->engine));
	col_text(st, 4, o->engine_version, sizeof(o->engine_version));
	col_text(st, 5, o->version_line, sizeof(o->version_line));
	col_text(st, 6, o->device_id, sizeof(o->device_id));
	col_text(st, 7, o->model_id, sizeof(o->model_id));
	col_text(st, 8, o->node, sizeof(o->node));
	col_text(st, 9, o->namespace_, sizeof(o->namespace_));
	col_text(st, 10, o->pod, sizeof(o->pod));
	col_text(st, 11, o->source, sizeof(o->source));
	col_text(st, 12, o->settings_json, sizeof(o->settings_json));
	col_text(st, 13, o->figure, sizeof(o->figure));
	o->reported = sqlite3_column_double(st, 14);
	o->predicted = sqlite3_column_double(st, 15);
	o->error_ratio = sqlite3_column_double(st, 16);
	col_text(st, 17, o->term, sizeof(o->term));
	o->term_observed_bytes = sqlite3_column_int64(st, 18);
	o->term_modelled_bytes = sqlite3_column_int64(st, 19);
	o->term_resolution_bytes = sqlite3_column_int64(st, 20);
}

mp_status mp_store_observation_add(mp_store *s, const mp_store_observation *o, int64_t *id, bool *existed,
				   mp_error *err)
{
	static const char ins[] =
		"INSERT INTO observations (observed_at, key, engine, engine_version, version_line, device_id, model_id,"
		" node, namespace, pod, source, settings_json, figure, reported, predicted, error_ratio, term,"
		" term_observed_bytes, term_modelled_bytes, term_resolution_bytes)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)"
		" ON CONFLICT (key) DO NOTHING";
	static const char by_key[] = "SELECT id FROM observations WHERE key = ?1";
	sqlite3_stmt *st = NULL;
	mp_status rc = tx_begin(s, err);
	int step;

	*existed = false;
	*id = 0;
	if (rc != MP_OK)
		return rc;
	if ((st = stmt_get(s, ins)) == NULL) {
		rc = db_fail(err, s->db, "write observation");
		goto out;
	}
	sqlite3_bind_text(st, 1, o->observed_at, -1, SQLITE_STATIC);
	bind_text_or_null(st, 2, o->key);
	sqlite3_bind_text(st, 3, o->engine, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, o->engine_version, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, o->version_line, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, o->device_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, o->model_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 8, o->node, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 9, o->namespace_, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 10, o->pod, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 11, o->source, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 12, o->settings_json, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 13, o->figure, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 14, o->reported);
	sqlite3_bind_double(st, 15, o->predicted);
	sqlite3_bind_double(st, 16, o->error_ratio);
	sqlite3_bind_text(st, 17, o->term, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 18, o->term_observed_bytes);
	sqlite3_bind_int64(st, 19, o->term_modelled_bytes);
	sqlite3_bind_int64(st, 20, o->term_resolution_bytes);
	step = sqlite3_step(st);
	if (step != SQLITE_DONE) {
		rc = sqlite3_errcode(s->db) == SQLITE_CONSTRAINT ? mp_fail(err, MP_EINVAL, "", "%s", sqlite3_errmsg(s->db))
								  : db_fail(err, s->db, "write observation");
		goto out;
	}
	if (sqlite3_changes(s->db) == 1) {
		*id = sqlite3_last_insert_rowid(s->db);
		goto out;
	}
	stmt_done(s, st);
	*existed = true;
	if ((st = stmt_get(s, by_key)) == NULL) {
		rc = db_fail(err, s->db, "read observation");
		goto out;
	}
	sqlite3_bind_text(st, 1, o->key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		*id = sqlite3_column_int64(st, 0);
	else
		rc = db_fail(err, s->db, "read observation");
out:
	stmt_done(s, st);
	return tx_end(s, rc, err);
}

mp_status mp_store_observation_get(mp_store *s, int64_t id, mp_store_observation *out, mp_error *err)
{
	static const char sql[] = "SELECT " OBS_COLUMNS " FROM observations WHERE id = ?1";
	sqlite3_stmt *st = NULL;
	mp_status rc = MP_OK;
	int step;

	pthread_mutex_lock(&s->lock);
	if ((st = stmt_get(s, sql)) == NULL) {
		rc = db_fail(err, s->db, "read observation");
		goto out;
	}
	sqlite3_bind_int64(st, 1, id);
	step = sqlite3_step(st);
	if (step == SQLITE_ROW)
		obs_row(st, out);
	else if (step == SQLITE_DONE)
		rc = mp_fail(err, MP_ENOTFOUND, "/id", "no observation %lld", (long long)id);
	else
		rc = db_fail(err, s->db, "read observation");
out:
	stmt_done(s, st);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

mp_status mp_store_observation_page(mp_store *s, const mp_store_observation_filter *f, int64_t before,
				    mp_store_observation *rows, size_t cap, size_t *n, bool *more, mp_error *err)
{
	static const char sql[] = "SELECT " OBS_COLUMNS " FROM observations WHERE (?1 = 0 OR id < ?1)"
				  " AND (?2 IS NULL OR engine = ?2) AND (?3 IS NULL OR device_id = ?3)"
				  " AND (?4 IS NULL OR model_id = ?4) ORDER BY id DESC LIMIT ?5";
	sqlite3_stmt *st = NULL;
	mp_status rc = MP_OK;
	int step;

	*n = 0;
	*more = false;
	if (cap < 1 || cap > MP_STORE_PAGE_MAX)
		return mp_fail(err, MP_EINVAL, "?limit", "a page holds 1 to %d rows", MP_STORE_PAGE_MAX);
	pthread_mutex_lock(&s->lock);
	if ((st = stmt_get(s, sql)) == NULL) {
		rc = db_fail(err, s->db, "list observations");
		goto out;
	}
	sqlite3_bind_int64(st, 1, before);
	bind_text_or_null(st, 2, f ? f->engine : NULL);
	bind_text_or_null(st, 3, f ? f->device_id : NULL);
	bind_text_or_null(st, 4, f ? f->model_id : NULL);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)cap + 1);
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			*more = true;
			break;
		}
		obs_row(st, &rows[(*n)++]);
	}
	if (step != SQLITE_ROW && step != SQLITE_DONE) {
		*n = 0;
		rc = db_fail(err, s->db, "list observations");
	}
out:
	stmt_done(s, st);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

mp_status mp_store_term_samples(mp_store *s, const char *engine, const char *version_line, const char *device_id,
				const char *term, mp_store_term_sample *rows, size_t cap, size_t *n, mp_error *err)
{
	static const char sql[] = "SELECT term_observed_bytes, term_modelled_bytes, term_resolution_bytes"
				  " FROM observations WHERE engine = ?1 AND device_id = ?2 AND term = ?3"
				  " AND (?4 = '' OR version_line = ?4) ORDER BY id DESC LIMIT ?5";
	sqlite3_stmt *st = NULL;
	mp_status rc = MP_OK;
	int step = SQLITE_DONE;

	*n = 0;
	pthread_mutex_lock(&s->lock);
	if ((st = stmt_get(s, sql)) == NULL) {
		rc = db_fail(err, s->db, "read observations");
		goto out;
	}
	sqlite3_bind_text(st, 1, engine, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, device_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, term, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, version_line ? version_line : "", -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)cap);
	while (*n < cap && (step = sqlite3_step(st)) == SQLITE_ROW) {
		rows[*n].observed_bytes = sqlite3_column_int64(st, 0);
		rows[*n].modelled_bytes = sqlite3_column_int64(st, 1);
		rows[*n].resolution_bytes = sqlite3_column_int64(st, 2);
		(*n)++;
	}
	if (*n < cap && step != SQLITE_DONE) {
		*n = 0;
		rc = db_fail(err, s->db, "read observations");
	}
out:
	stmt_done(s, st);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

mp_status mp_store_observation_groups(mp_store *s, mp_store_observation_group *rows, size_t cap, size_t *n,
				      mp_error *err)
{
	static const char sql[] = "SELECT engine, engine_version, device_id, model_id, figure, count(*)"
				  " FROM observations GROUP BY engine, engine_version, device_id, model_id, figure"
				  " ORDER BY engine, engine_version, device_id, model_id, figure LIMIT ?1";
	sqlite3_stmt *st = NULL;
	mp_status rc = MP_OK;
	int step = SQLITE_DONE;

	*n = 0;
	pthread_mutex_lock(&s->lock);
	if ((st = stmt_get(s, sql)) == NULL) {
		rc = db_fail(err, s->db, "read observations");
		goto out;
	}
	sqlite3_bind_int64(st, 1, (sqlite3_int64)cap);
	while (*n < cap && (step = sqlite3_step(st)) == SQLITE_ROW) {
		mp_store_observation_group *g = &rows[(*n)++];

		col_text(st, 0, g->engine, sizeof(g->engine));
		col_text(st, 1, g->engine_version, sizeof(g->engine_version));
		col_text(st, 2, g->device_id, sizeof(g->device_id));
		col_text(st, 3, g->model_id, sizeof(g->model_id));
		col_text(st, 4, g->figure, sizeof(g->figure));
		g->count = (uint64_t)sqlite3_column_int64(st, 5);
	}
	if (*n < cap && step != SQLITE_DONE) {
		*n = 0;
		rc = db_fail(err, s->db, "read observations");
	}
out:
	stmt_done(s, st);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

mp_status mp_store_observation_errors(mp_store *s, const mp_store_observation_group *g, double *ratios, size_t cap,
				      size_t *n, mp_error *err)
{
	static const char sql[] = "SELECT error_ratio FROM observations WHERE engine = ?1 AND engine_version = ?2"
				  " AND device_id = ?3 AND model_id = ?4 AND figure = ?5 ORDER BY id DESC LIMIT ?6";
	sqlite3_stmt *st = NULL;
	mp_status rc = MP_OK;
	int step = SQLITE_DONE;

	*n = 0;
	pthread_mutex_lock(&s->lock);
	if ((st = stmt_get(s, sql)) == NULL) {
		rc = db_fail(err, s->db, "read observations");
		goto out;
	}
	sqlite3_bind_text(st, 1, g->engine, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, g->engine_version, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, g->device_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, g->model_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, g->figure, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 6, (sqlite3_int64)cap);
	while (*n < cap && (step = sqlite3_step(st)) == SQLITE_ROW)
		ratios[(*n)++] = sqlite3_column_double(st, 0);
	if (*n < cap && step != SQLITE_DONE) {
		*n = 0;
		rc = db_fail(err, s->db, "read observations");
	}
out:
	stmt_done(s, st);
	pthread_mutex_unlock(&s->lock);
	return rc;
}
