/*
 * store.h: memplan's SQLite store (db/). Owns the schema, its migrations (keyed on PRAGMA user_version),
 * and every SQL statement: all of them are prepared statements with bound parameters, never built from strings.
 * Rows in, rows out as plain structs (rows.h): no JSON, no calls upward (presets arrive as structs). The planner
 * never sees SQLite. Thread-safe: one handle may be shared by the daemon's worker threads.
 */
#ifndef MP_STORE_H
#define MP_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "rows.h"

typedef struct mp_store mp_store;	/* opaque: holds the sqlite3 handle */

/* Rows every new database starts with (service/presets.c builds them from db/presets at build time). */
struct mp_store_device;
struct mp_store_model;
typedef struct mp_store_presets {
	const struct mp_store_device *devices;	/* a profile with linked_device_id is written after the rest */
	size_t ndevices;
	const struct mp_store_model *models;	/* model_type and parameters filled */
	size_t nmodels;
} mp_store_presets;

/*
 * Opens (creating if needed) the database at path, applies pending migrations and the presets (borrowed; NULL =
 * none) in one transaction each: each preset id is written once in a database's life, and never over a row the
 * user has. Before SQLite opens the file, a -wal beside it that does not belong to it (another store's, or one an
 * older or newer copy of this store's file does not continue; found on temporary copies, see store.c) is moved
 * aside, never applied; after the open, PRAGMA integrity_check runs (a damaged database refuses writes:
 * mp_store_write_state). On success *out is a handle the caller releases with mp_store_close. Errors: MP_EDB
 * (err->message carries SQLite's message).
 */
mp_status mp_store_open(const char *path, const mp_store_presets *presets, mp_store **out, mp_error *err);
void mp_store_close(mp_store *s);
/* What opening the store did that an operator should know ("at start, ... -wal did not belong to ...: moved aside
 * to ..."), or "" (borrowed from the handle). */
const char *mp_store_open_notice(mp_store *s);

/* The schema version this build migrates to, and the one the open database is at. */
int mp_store_schema_version(void);
int mp_store_user_version(mp_store *s);

/*
 * Whether id is a valid resource id: ^[a-z0-9][a-z0-9._-]{0,62}$ (1 to MP_STORE_ID_MAX - 1 bytes). Lookups and
 * removals of any other string answer MP_EINVAL naming their field, without echoing it (it may be anything).
 */
bool mp_store_valid_id(const char *id);

/*
 * Fills *out with the device one of whose aliases has the key of alias (mp_alias_key, core/mp_base.h). Errors:
 * MP_ENOTFOUND (no device goes by that name; err->message names it), MP_EDB.
 */
mp_status mp_store_device_by_alias(mp_store *s, const char *alias, mp_store_device *out, mp_error *err);

/* Fills *out for id. Reads are memoised per handle: up to 64 rows kept while mp_store_generation stays (any write
 * through this handle or a commit by another connection drops them), bypassed inside mp_store_begin. Errors: MP_EINVAL (not a valid id), MP_ENOTFOUND,
 * MP_EDB. */
mp_status mp_store_device_get(mp_store *s, const char *id, mp_store_device *out, mp_error *err);
/* As mp_store_device_get, at a generation the caller has just read (mp_store_generation): the memo answers without
 * reading PRAGMA data_version again while the handle's generation still equals gen, so a request that resolves a
 * model and a device reads it once (about 7,000 instructions each), and both come from the same state. */
mp_status mp_store_device_get_at(mp_store *s, const char *id, uint64_t gen, mp_store_device *out, mp_error *err);

/*
 * Listings come out a page at a time, copied: the rows are read into the caller's array under the store's lock, and
 * the lock is released before the function returns, so whatever the caller then computes on its copies leaves the
 * store free for every other thread (no callback runs under the lock). A page holds 1 to MP_STORE_PAGE_MAX rows;
 * the next page starts after the last id (or seq) of this one.
 */
#define MP_STORE_PAGE_MAX 1000

/* The devices with id > after (NULL: from the first) that match filter (NULL = all), in id order: at most cap of
 * them into rows (cap rows, the caller's), *n how many, *more whether further ones match. Errors: MP_EINVAL (cap
 * outside 1 to MP_STORE_PAGE_MAX), MP_EDB; *n is 0 on error. */
mp_status mp_store_device_page(mp_store *s, const mp_store_device_filter *filter, const char *after,
			       mp_store_device *rows, size_t cap, size_t *n, bool *more, mp_error *err);

/*
 * Creates or replaces the device d->id with its peaks (peak_flops_per_second > 0 only) and its aliases (replacing
 * those it had), in one transaction
 * that also appends an audit_log row naming actor ("api", "import", "calibration"; NULL = "store").
 * created_at is kept on replace; updated_at is set to now. *created (may be NULL) tells whether the id was
 * new. Errors: MP_EINVAL (a CHECK failed, e.g. source not one of datasheet/measured/user, or a
 * linked_device_id that names no device), MP_ECONFLICT naming "/aliases/<i>" (an alias another device goes
 * by), MP_EDB.
 */
mp_status mp_store_device_write(mp_store *s, const mp_store_device *d, const char *actor, bool *created,
				mp_error *err);
/* mp_store_device_write with actor "store". */
mp_status mp_store_device_put(mp_store *s, const mp_store_device *d, mp_error *err);

/* Deletes a device and its peaks (audited as actor). Errors: MP_ENOTFOUND, MP_EDB. */
mp_status mp_store_device_remove(mp_store *s, const char *id, const char *actor, mp_error *err);
/* mp_store_device_remove with actor "store". */
mp_status mp_store_device_delete(mp_store *s, const char *id, mp_error *err);

/* ----- calibration runs (one row per job; history per device) ----- */

/* Inserts or replaces run c (by id). created_at is set by the store on insert. Errors: MP_EDB. */
mp_status mp_store_calibration_save(mp_store *s, const mp_store_calibration *c, mp_error *err);
/* Fills *out (results_json owned by *out). Errors: MP_ENOTFOUND, MP_EDB, MP_ENOMEM. */
mp_status mp_store_calibration_get(mp_store *s, const char *id, mp_store_calibration *out, mp_error *err);
void mp_store_calibration_free(mp_store_calibration *c);

/* Fills *out for id. Errors: MP_ENOTFOUND, MP_EDB, MP_ENOMEM. */
mp_status mp_store_model_get(mp_store *s, const char *id, mp_store_model *out, mp_error *err);
void mp_store_model_free(mp_store_model *m);

/* As mp_store_device_page, for models: each row filled owns its config text (mp_store_model_free each of the *n).
 * Errors: MP_EINVAL, MP_EDB, MP_ENOMEM; on error nothing is left to free. */
mp_status mp_store_model_page(mp_store *s, const mp_store_model_filter *filter, const char *after, mp_store_model *rows,
			      size_t cap, size_t *n, bool *more, mp_error *err);

/*
 * Creates or replaces model m->id (model_type, config_json, parameters > 0, source "preset" or "user"), audited
 * as actor. *created (may be NULL) tells whether the id was new. Errors: MP_EINVAL (a CHECK failed), MP_EDB.
 */
mp_status mp_store_model_write(mp_store *s, const mp_store_model *m, const char *actor, bool *created,
			       mp_error *err);
/* Deletes a model (audited as actor). Errors: MP_ENOTFOUND, MP_EDB. */
mp_status mp_store_model_remove(mp_store *s, const char *id, const char *actor, mp_error *err);

/* ----- observations (schema v8): what running engines reported, beside memplan's prediction ----- */

/*
 * Appends o (its id ignored) and sets *id; a row whose key (when not "") is already stored is not added again: *id is
 * that row's and *existed true (the reporter's retries are idempotent). Errors: MP_EINVAL (a CHECK failed), MP_ESTORAGE
 * (the database cannot keep a write), MP_EDB.
 */
mp_status mp_store_observation_add(mp_store *s, const mp_store_observation *o, int64_t *id, bool *existed,
				   mp_error *err);
/* Fills *out for id. Errors: MP_ENOTFOUND, MP_EDB. */
mp_status mp_store_observation_get(mp_store *s, int64_t id, mp_store_observation *out, mp_error *err);
/* The observations matching f with id < before (0: from the newest), newest first, at most cap into rows; *more
 * whether older ones match. Errors: MP_EINVAL (cap outside 1 to MP_STORE_PAGE_MAX), MP_EDB. */
mp_status mp_store_observation_page(mp_store *s, const mp_store_observation_filter *f, int64_t before,
				    mp_store_observation *rows, size_t cap, size_t *n, bool *more, mp_error *err);
/* The newest cap samples of term for engine on device at version_line ("": every version), newest first. Errors:
 * MP_EDB. */
mp_status mp_store_term_samples(mp_store *s, const char *engine, const char *version_line, const char *device_id,
				const char *term, mp_store_term_sample *rows, size_t cap, size_t *n, mp_error *err);
/* The groups of observations (engine, version, device, model, figure), at most cap. Errors: MP_EDB. */
mp_status mp_store_observation_groups(mp_store *s, mp_store_observation_group *rows, size_t cap, size_t *n,
				      mp_error *err);
/* The newest cap error ratios of group g, newest first. Errors: MP_EDB. */
mp_status mp_store_observation_errors(mp_store *s, const mp_store_observation_group *g, double *ratios, size_t cap,
				      size_t *n, mp_error *err);

/* Whether a write would be kept. MOVED: the file open is no longer the one at its path (deleted or replaced while
 * open; SQLITE_FCNTL_HAS_MOVED), or its -wal or -shm file is not (deleted or replaced: the frames written so far are
 * checkpointed into the main file when that is first seen), so what is written now would be lost at the next
 * start. CORRUPT: PRAGMA integrity_check failed when the store was opened. READONLY: SQLite opened it read-only. why
 * (len bytes, may be NULL) says so in words for an operator. Every write checks it first and is refused with
 * MP_ESTORAGE (a write during which the -wal went is refused after its commit); a full disk is found by the write
 * itself (MP_ENOSPACE). Thread-safe. */
typedef enum mp_store_state { MP_STORE_WRITABLE = 0, MP_STORE_READONLY, MP_STORE_MOVED, MP_STORE_CORRUPT } mp_store_state;
mp_store_state mp_store_write_state(mp_store *s, char *why, size_t len);

/*
 * A counter that moves whenever data read through this handle may have changed: on every write through it, and
 * when another connection (in this process or another) committed since the last call (PRAGMA data_version).
 * Equal values mean nothing changed in between. Thread-safe.
 */
uint64_t mp_store_generation(mp_store *s);

/* ----- audit log: one row per write, in the write's own transaction ----- */
/* The entries with seq > after_seq, oldest first, a page as mp_store_device_page's. Errors: MP_EINVAL, MP_EDB. */
mp_status mp_store_audit_page(mp_store *s, int64_t after_seq, mp_store_audit *rows, size_t cap, size_t *n, bool *more,
			      mp_error *err);

/*
 * Groups the writes that follow (on this thread) into one transaction: mp_store_begin, any number of
 * *_write / *_remove calls, then mp_store_commit (which rolls back instead when any of them failed) or
 * mp_store_rollback. Holds the store's lock in between, so other threads wait. Errors: MP_EDB.
 */
mp_status mp_store_begin(mp_store *s, mp_error *err);
mp_status mp_store_commit(mp_store *s, mp_error *err);
void mp_store_rollback(mp_store *s);

/* Runs PRAGMA integrity_check and copies its first row ("ok" when sound) into out. Errors: MP_EDB. */
mp_status mp_store_integrity_check(mp_store *s, char *out, size_t len, mp_error *err);

/*
 * Opens the database at path and migrates it only up to schema version `version` (tests build old
 * databases with it to check upgrades). Otherwise as mp_store_open.
 */
mp_status mp_store_open_at(const char *path, int version, const mp_store_presets *presets, mp_store **out,
			   mp_error *err);

#endif /* MP_STORE_H */
