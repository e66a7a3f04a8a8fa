/*
 * store.h: memplan's SQLite store (db/). Owns the schema, its migrations (keyed on PRAGMA user_version),
 * and every SQL statement: all of them are prepared statements with bound parameters, never built from strings.
 * Rows in, rows out as plain structs: no JSON, no calls upward (presets arrive as structs). The planner never
 * sees SQLite. Thread-safe: one handle may be shared by the daemon's worker threads.
 */
#ifndef MP_STORE_H
#define MP_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../planner/memplan.h"

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

#define MP_STORE_ID_MAX 64
#define MP_STORE_MAX_ALIASES 8		/* aliases per device */
#define MP_STORE_ALIAS_MAX 96		/* bytes of one alias, NUL included */

typedef struct mp_store_device {
	char id[MP_STORE_ID_MAX];
	char name[128];
	char vendor[64];
	char architecture[64];
	char form_factor[96];
	char memory_type[32];
	char source[16];		/* "datasheet", "measured" or "user" */
	char source_note[2048];
	char measured_at[32];		/* ISO 8601 UTC, "" when not measured */
	char created_at[32];
	char updated_at[32];
	char interconnect_json[1024];	/* JSON object text, "" when unknown */
	double tdp_watts;		/* 0 = unknown */
	mp_device hw;			/* the planner's view */
	/* schema v3; 0 or "" = unknown */
	char linked_device_id[MP_STORE_ID_MAX];	/* a measured profile: the datasheet profile it was measured on */
	double base_clock_hz;
	double memory_clock_hz;
	double fma_flops_per_second;	/* fp32 vector FMA rate (CUDA cores / stream processors), not a matrix rate */
	double memory_latency_seconds;	/* one dependent DRAM load (pointer chase beyond L2) */
	/* schema v6 (issue 17): names the device goes by elsewhere (table device_aliases), matched by mp_alias_key (core/).
	 * By convention the first is the NVML name ("NVIDIA H100 80GB HBM3"), from which NVIDIA GPU Feature
	 * Discovery's nvidia.com/gpu.product (spaces to '-'), Slurm's AutoDetect=nvml GRES type (lowercase, spaces
	 * to '_') and DCGM's modelName (the name itself) all follow; others: GKE accelerator names, site names. */
	char aliases[MP_STORE_MAX_ALIASES][MP_STORE_ALIAS_MAX];
	size_t naliases;
	/* schema v5 (issue 15) */
	char kind[16];			/* "gpu", "cpu" or "accelerator" (fit and capacity consider GPUs by default);
					   "" = "gpu" */
	uint64_t nvml_memory_bytes;	/* NVML's total (nvidia-smi, GPU Feature Discovery's nvidia.com/gpu.memory in
					   MiB, DCGM): above the CUDA total by what the driver hides; 0 = unknown */
	char usable_memory_source[16];	/* how usable_memory_bytes is known: "measured" (cudaMemGetInfo here),
					   "published" (a real card's reading, cited in source_note), "derived" (from
					   related figures, said how in source_note); "" = not said */
} mp_store_device;

/* The device kinds a profile may have, as a mask for filters (MP_STORE_KIND_GPU is the default everywhere). */
#define MP_STORE_KIND_GPU 1u
#define MP_STORE_KIND_CPU 2u
#define MP_STORE_KIND_ACCELERATOR 4u
#define MP_STORE_KIND_ALL 7u
/* The kind bit of a profile's kind ("" counts as gpu); 0 for a name that is none of them. */
static inline unsigned mp_store_kind_bit(const char *kind)
{
	if (kind == NULL || kind[0] == '\0' || strcmp(kind, "gpu") == 0)
		return MP_STORE_KIND_GPU;
	if (strcmp(kind, "cpu") == 0)
		return MP_STORE_KIND_CPU;
	if (strcmp(kind, "accelerator") == 0)
		return MP_STORE_KIND_ACCELERATOR;
	return 0;
}

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
 * Calls fn for each device with id > after (NULL: from the start) in id order, at most limit of them.
 * Sets *more when further rows exist. fn returns MP_OK to go on; any other status stops and is returned.
 */
typedef mp_status (*mp_store_device_fn)(const mp_store_device *d, void *ctx);
mp_status mp_store_device_list(mp_store *s, const char *after, int limit, mp_store_device_fn fn, void *ctx,
			       int *more, mp_error *err);

/* Filters of a device listing; NULL / 0 members match everything. */
typedef struct mp_store_device_filter {
	const char *vendor;		/* exact, case-insensitive ("nvidia" matches "NVIDIA") */
	const char *source;		/* "datasheet", "measured" or "user" */
	uint64_t min_memory_bytes;	/* memory_bytes >= this */
	unsigned kinds;			/* MP_STORE_KIND_* mask; 0 = every kind */
} mp_store_device_filter;

/* As mp_store_device_list, restricted by filter (NULL = none). */
mp_status mp_store_device_find(mp_store *s, const mp_store_device_filter *filter, const char *after, int limit,
			       mp_store_device_fn fn, void *ctx, int *more, mp_error *err);

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
typedef struct mp_store_calibration {
	char id[40];			/* job id */
	char target[32];		/* "gpu:0", "cpu" */
	char state[16];			/* "queued", "running", "succeeded", "failed", "cancelled" */
	char device_id[MP_STORE_ID_MAX];	/* measured profile it produced, "" until then */
	char datasheet_id[MP_STORE_ID_MAX];	/* the datasheet profile it is compared with, "" if none */
	char created_at[32];
	char finished_at[32];		/* "" while not finished */
	char *results_json;		/* heap, owned; NULL or a JSON document; free with mp_store_calibration_free */
} mp_store_calibration;

/* Inserts or replaces run c (by id). created_at is set by the store on insert. Errors: MP_EDB. */
mp_status mp_store_calibration_save(mp_store *s, const mp_store_calibration *c, mp_error *err);
/* Fills *out (results_json owned by *out). Errors: MP_ENOTFOUND, MP_EDB, MP_ENOMEM. */
mp_status mp_store_calibration_get(mp_store *s, const char *id, mp_store_calibration *out, mp_error *err);
void mp_store_calibration_free(mp_store_calibration *c);

typedef struct mp_store_model {
	char id[MP_STORE_ID_MAX];
	char model_type[32];
	char source[16];		/* "preset" or "user" */
	char created_at[32];
	char updated_at[32];
	uint64_t parameters;
	char *config_json;		/* heap, owned by the struct: release with mp_store_model_free */
} mp_store_model;

/* Fills *out for id. Errors: MP_ENOTFOUND, MP_EDB, MP_ENOMEM. */
mp_status mp_store_model_get(mp_store *s, const char *id, mp_store_model *out, mp_error *err);
void mp_store_model_free(mp_store_model *m);

/* As mp_store_device_list; the model passed to fn is borrowed for the call only. */
typedef mp_status (*mp_store_model_fn)(const mp_store_model *m, void *ctx);
mp_status mp_store_model_list(mp_store *s, const char *after, int limit, mp_store_model_fn fn, void *ctx,
			      int *more, mp_error *err);

typedef struct mp_store_model_filter {
	const char *model_type;		/* NULL = any */
	const char *source;		/* "preset" or "user"; NULL = any */
} mp_store_model_filter;
mp_status mp_store_model_find(mp_store *s, const mp_store_model_filter *filter, const char *after, int limit,
			      mp_store_model_fn fn, void *ctx, int *more, mp_error *err);

/*
 * Creates or replaces model m->id (model_type, config_json, parameters > 0, source "preset" or "user"), audited
 * as actor. *created (may be NULL) tells whether the id was new. Errors: MP_EINVAL (a CHECK failed), MP_EDB.
 */
mp_status mp_store_model_write(mp_store *s, const mp_store_model *m, const char *actor, bool *created,
			       mp_error *err);
/* Deletes a model (audited as actor). Errors: MP_ENOTFOUND, MP_EDB. */
mp_status mp_store_model_remove(mp_store *s, const char *id, const char *actor, mp_error *err);

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
typedef struct mp_store_audit {
	int64_t seq;			/* increasing */
	char at[32];			/* ISO 8601 UTC with milliseconds */
	char actor[64];
	char action[16];		/* "create", "replace", "delete", "preset" */
	char kind[16];			/* "device", "model" */
	char resource_id[MP_STORE_ID_MAX];
} mp_store_audit;
typedef mp_status (*mp_store_audit_fn)(const mp_store_audit *a, void *ctx);
/* Calls fn for each entry with seq > after_seq, oldest first, at most limit. Errors: MP_EDB. */
mp_status mp_store_audit_list(mp_store *s, int64_t after_seq, int limit, mp_store_audit_fn fn, void *ctx,
			      int *more, mp_error *err);

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
