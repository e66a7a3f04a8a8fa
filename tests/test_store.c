/*
 * test_store.c: the SQLite store. A new database is created at the current schema version and seeded with
 * the presets; opening it again applies nothing twice; devices carry their datasheet figures and sources; a
 * version 2 database with user rows is upgraded in place without touching them; the measured H200 profile
 * matches tests/ref/groundtruth/h200; every write is audited; filters and batch transactions work; listings are
 * pages of copies, so no lock of the store is held while a caller computes on the rows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "../model/model.h"
#include "../service/service_int.h"
#include "refs.h"

static char dir[64], path[128];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/memplan-store-XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/t.db", dir);
	return 0;
}

static int teardown(void **state)
{
	char p[160];

	(void)state;
	unlink(path);
	snprintf(p, sizeof(p), "%s-wal", path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", path);
	unlink(p);
	rmdir(dir);
	return 0;
}

/* A page of devices (filter f, after `after`, at most cap) copied out; *more as the store says; the rows (heap). */
static mp_store_device *device_page(mp_store *s, const mp_store_device_filter *f, const char *after, size_t cap,
				    size_t *n, bool *more)
{
	mp_store_device *rows = malloc(cap * sizeof(*rows));
	mp_error err = MP_ERROR_INIT;

	assert_non_null(rows);
	assert_int_equal(mp_store_device_page(s, f, after, rows, cap, n, more, &err), MP_OK);
	return rows;
}

static void test_create_seed_reopen(void **state)
{
	mp_store *s;
	mp_error err = MP_ERROR_INIT;
	mp_store_device d, *rows;
	mp_store_model m, *models = calloc(100, sizeof(*models));
	size_t n = 0;
	bool more = false;
	cJSON *counts = ref_json("models/parameter_counts.json");

	(void)state;
	assert_int_equal(mp_store_open(path, mps_presets(), &s, &err), MP_OK);
	assert_int_equal(mp_store_user_version(s), mp_store_schema_version());
	assert_int_equal(mp_store_model_page(s, NULL, NULL, models, 100, &n, &more, &err), MP_OK);
	assert_true(n >= 20);
	for (size_t i = 0; i < n; i++) {
		assert_true(models[i].parameters > 0);
		assert_string_equal(models[i].source, "preset");
		mp_store_model_free(&models[i]);
	}
	free(models);
	assert_int_equal(mp_store_model_get(s, "falcon-7b", &m, &err), MP_OK);
	assert_true((double)m.parameters ==
		    cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(counts, "models"), "falcon-7b"), "total")
			    ->valuedouble);
	mp_store_model_free(&m);

	/* the three devices the skeleton needs, with the seed figures (seed-figures.md) */
	assert_int_equal(mp_store_device_get(s, "h100-sxm5-80gb", &d, &err), MP_OK);
	assert_true(d.hw.peak_flops_per_second[MP_DTYPE_BF16] == 989.4e12);
	assert_true(d.hw.memory_bandwidth_bytes_per_second == 3352e9);
	assert_int_equal(mp_store_device_get(s, "a100-sxm4-80gb", &d, &err), MP_OK);
	assert_true(d.hw.peak_flops_per_second[MP_DTYPE_BF16] == 312e12);
	assert_true(d.hw.memory_bandwidth_bytes_per_second == 2039e9);
	assert_int_equal(mp_store_device_get(s, "h200-sxm-141gb", &d, &err), MP_OK);
	assert_int_equal(d.hw.usable_memory_bytes, UINT64_C(150109880320));
	assert_int_equal(mp_store_device_get(s, "nope", &d, &err), MP_ENOTFOUND);
	mp_store_close(s);

	/* reopening migrates nothing and duplicates nothing */
	assert_int_equal(mp_store_open(path, mps_presets(), &s, &err), MP_OK);
	rows = device_page(s, NULL, NULL, MP_STORE_PAGE_MAX, &n, &more);
	assert_true(n >= 3);
	assert_false(more);
	for (size_t i = 0; i < n; i++) {
		assert_true(rows[i].hw.memory_bytes > 0);
		assert_true(rows[i].hw.memory_bandwidth_bytes_per_second > 0);
		assert_true(strlen(rows[i].source_note) > 0);
		if (i)
			assert_true(strcmp(rows[i - 1].id, rows[i].id) < 0); /* in id order */
	}
	{
		/* pagination: a page of 2, then the next 2 after its last id: the third and fourth of the whole list */
		mp_store_device *first = device_page(s, NULL, NULL, 2, &n, &more), *next;

		assert_int_equal(n, 2);
		assert_true(more);
		assert_string_equal(first[1].id, rows[1].id);
		next = device_page(s, NULL, first[1].id, 2, &n, &more);
		assert_int_equal(n, 2);
		assert_string_equal(next[0].id, rows[2].id);
		assert_string_equal(next[1].id, rows[3].id);
		/* a page holds 1 to MP_STORE_PAGE_MAX rows */
		assert_int_equal(mp_store_device_page(s, NULL, NULL, next, 0, &n, &more, &err), MP_EINVAL);
		free(first);
		free(next);
	}
	free(rows);
	mp_store_close(s);
	cJSON_Delete(counts);
}


static sqlite3 *raw_open(void)
{
	sqlite3 *db = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	return db;
}

static void raw_exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg ? msg : "?");
}

static long long raw_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	long long v = -1;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* A version 2 database as the previous release left it (schema 2, some preset rows, a user's own rows, one of
 * them holding an id that is now a preset) upgrades in place: user rows untouched, new presets added, a
 * preset the user had deleted not brought back. */
static void test_upgrade_from_v2(void **state)
{
	mp_store *s;
	mp_error err = MP_ERROR_INIT;
	mp_store_device d;
	mp_store_model m;
	sqlite3 *db;

	(void)state;
	assert_int_equal(mp_store_open_at(path, 2, mps_presets(), &s, &err), MP_OK);
	assert_int_equal(mp_store_user_version(s), 2);
	mp_store_close(s);
	db = raw_open();
	/* what release 1 seeded (one preset, edited by nobody) and what its users wrote */
	raw_exec(db, "INSERT INTO devices (id, name, vendor, memory_bytes, memory_bandwidth_bytes_per_second, source,"
		     " source_note) VALUES ('a100-sxm4-80gb', 'A100 SXM4 80GB', 'NVIDIA', 85899345920, 2039e9,"
		     " 'datasheet', 'old preset')");
	raw_exec(db, "INSERT INTO devices (id, name, vendor, memory_bytes, memory_bandwidth_bytes_per_second, source,"
		     " source_note) VALUES ('lab-gpu', 'Lab GPU', 'ACME', 1073741824, 1e11, 'user', 'mine')");
	raw_exec(db, "INSERT INTO devices (id, name, vendor, memory_bytes, memory_bandwidth_bytes_per_second, source,"
		     " source_note) VALUES ('h200-sxm-141gb-measured', 'My own H200 run', 'NVIDIA', 150000000000, 4e12,"
		     " 'user', 'my measurement')");
	raw_exec(db, "INSERT INTO models (id, model_type, config_json, parameters, source) VALUES ('qwen2.5-14b',"
		     " 'llama', '{\"model_type\":\"llama\"}', 42, 'user')");
	raw_exec(db, "INSERT INTO calibration_runs (id, target, state) VALUES ('job-1', 'gpu:0', 'succeeded')");
	sqlite3_close(db);

	assert_int_equal(mp_store_open(path, mps_presets(), &s, &err), MP_OK);
	assert_int_equal(mp_store_user_version(s), mp_store_schema_version());
	/* user rows as they were */
	assert_int_equal(mp_store_device_get(s, "lab-gpu", &d, &err), MP_OK);
	assert_string_equal(d.source_note, "mine");
	assert_int_equal(mp_store_device_get(s, "h200-sxm-141gb-measured", &d, &err), MP_OK);
	assert_string_equal(d.name, "My own H200 run");
	assert_string_equal(d.source, "user");
	assert_int_equal(mp_store_model_get(s, "qwen2.5-14b", &m, &err), MP_OK);
	assert_int_equal(m.parameters, 42);
	assert_string_equal(m.source, "user");
	mp_store_model_free(&m);
	/* the old preset row untouched, new presets added */
	assert_int_equal(mp_store_device_get(s, "a100-sxm4-80gb", &d, &err), MP_OK);
	assert_string_equal(d.source_note, "old preset");
	assert_int_equal(mp_store_device_get(s, "h200-sxm-141gb", &d, &err), MP_OK);
	assert_int_equal(mp_store_model_get(s, "llama-3.1-405b", &m, &err), MP_OK);
	mp_store_model_free(&m);
	assert_int_equal(mp_store_calibration_get(s, "job-1", &(mp_store_calibration){ 0 }, &err), MP_OK);
	/* a deleted preset stays deleted across reopen (the preset log remembers it was applied) */
	assert_int_equal(mp_store_device_remove(s, "h200-sxm-141gb", "test", &err), MP_OK);
	mp_store_close(s);
	assert_int_equal(mp_store_open(path, mps_presets(), &s, &err), MP_OK);
	assert_int_equal(mp_store_device_get(s, "h200-sxm-141gb", &d, &err), MP_ENOTFOUND);
	mp_store_close(s);
	db = raw_open();
	assert_int_equal(raw_int(db, "SELECT count(*) FROM devices WHERE id = 'lab-gpu' AND source = 'user'"), 1);
	sqlite3_close(db);
}

/* Schema 6: a database of schema 5 (the presets written) gets the presets' aliases on the preset rows that are still the preset's (a row
 * the user replaced gets none); an alias is looked up by its key (case, ' ', '_', '-' aside); each name belongs to
 * one device; deleting a device frees its names. */
static void test_aliases_upgrade_and_rules(void **state)
{
	mp_store *s;
	mp_error err = MP_ERROR_INIT;
	mp_store_device d, other;
	sqlite3 *db;

	(void)state;
	assert_int_equal(mp_store_open_at(path, 5, mps_presets(), &s, &err), MP_OK);
	mp_store_close(s);
	db = raw_open();
	raw_exec(db, "UPDATE devices SET source = 'user', source_note = 'replaced by the site' WHERE id = 'l40s-48gb'");
	sqlite3_close(db);
	assert_int_equal(mp_store_open(path, mps_presets(), &s, &err), MP_OK);
	assert_int_equal(mp_store_user_version(s), mp_store_schema_version());
	assert_int_equal(mp_store_device_get(s, "h100-sxm5-80gb", &d, &err), MP_OK);
	assert_true(d.naliases >= 2);
	assert_string_equal(d.aliases[0], "NVIDIA H100 80GB HBM3"); /* the NVML name first */
	assert_int_equal(mp_store_device_get(s, "l40s-48gb", &d, &err), MP_OK);
	assert_int_equal(d.naliases, 0);
	/* GPU Feature Discovery's and Slurm's spellings of the NVML name find the device */
	assert_int_equal(mp_store_device_by_alias(s, "NVIDIA-H100-80GB-HBM3", &d, &err), MP_OK);
	assert_string_equal(d.id, "h100-sxm5-80gb");
	assert_int_equal(mp_store_device_by_alias(s, "nvidia_h100_80gb_hbm3", &d, &err), MP_OK);
	assert_string_equal(d.id, "h100-sxm5-80gb");
	assert_int_equal(mp_store_device_by_alias(s, "NVIDIA-L40S", &d, &err), MP_ENOTFOUND);
	/* no alias: the device's own name (devices.json "H100 SXM5 80GB"), by the same key; a name two devices share
	 * finds neither */
	assert_int_equal(mp_store_device_by_alias(s, "h100_sxm5_80gb", &d, &err), MP_OK);
	assert_string_equal(d.id, "h100-sxm5-80gb");
	assert_int_equal(mp_store_device_get(s, "l40s-48gb", &other, &err), MP_OK);
	snprintf(other.name, sizeof(other.name), "H100 SXM5 80GB");
	assert_int_equal(mp_store_device_write(s, &other, "test", NULL, &err), MP_OK);
	assert_int_equal(mp_store_device_by_alias(s, "H100 SXM5 80GB", &d, &err), MP_ENOTFOUND);
	assert_non_null(strstr(err.message, "2 devices are named"));
	snprintf(other.name, sizeof(other.name), "L40S");
	assert_int_equal(mp_store_device_write(s, &other, "test", NULL, &err), MP_OK);
	/* a name another device goes by is a conflict naming it; nothing is written */
	assert_int_equal(mp_store_device_get(s, "h100-pcie-80gb", &other, &err), MP_OK);
	snprintf(other.aliases[other.naliases++], MP_STORE_ALIAS_MAX, "nvidia-h100-80gb-hbm3");
	assert_int_equal(mp_store_device_write(s, &other, "test", NULL, &err), MP_ECONFLICT);
	assert_string_equal(err.field, "/aliases/1");
	assert_non_null(strstr(err.message, "h100-sxm5-80gb"));
	assert_int_equal(mp_store_device_get(s, "h100-pcie-80gb", &other, &err), MP_OK);
	assert_int_equal(other.naliases, 1);
	/* a replace sets the list; a delete frees the names */
	assert_int_equal(mp_store_device_remove(s, "h100-sxm5-80gb", "test", &err), MP_OK);
	assert_int_equal(mp_store_device_by_alias(s, "NVIDIA-H100-80GB-HBM3", &d, &err), MP_ENOTFOUND);
	snprintf(other.aliases[other.naliases++], MP_STORE_ALIAS_MAX, "NVIDIA H100 80GB HBM3");
	assert_int_equal(mp_store_device_write(s, &other, "test", NULL, &err), MP_OK);
	assert_int_equal(mp_store_device_by_alias(s, "NVIDIA-H100-80GB-HBM3", &d, &err), MP_OK);
	assert_string_equal(d.id, "h100-pcie-80gb");
	mp_store_close(s);
}

/* Version 5 (issue 15): a database of version 4, with a preset row only the presets wrote (its audit entry is the
 * preset's) and one a user replaced, upgrades: the untouched preset takes this build's figures (usable memory,
 * kind), the user's row stays as it was, and rows get their kind (a measured CPU profile is a cpu). */
static void test_upgrade_to_v5(void **state)
{
	mp_store *s;
	mp_error err = MP_ERROR_INIT;
	mp_store_device d;
	sqlite3 *db;

	(void)state;
	assert_int_equal(mp_store_open_at(path, 4, mps_presets(), &s, &err), MP_OK);
	mp_store_close(s);
	db = raw_open();
	raw_exec(db, "INSERT INTO devices (id, name, vendor, memory_bytes, memory_bandwidth_bytes_per_second, source,"
		     " source_note) VALUES ('rtx-3090-24gb', 'RTX 3090', 'NVIDIA', 25769803776, 936e9, 'datasheet',"
		     " 'release 4 preset')");
	raw_exec(db, "INSERT INTO audit_log (actor, action, kind, resource_id) VALUES ('preset', 'preset', 'device',"
		     " 'rtx-3090-24gb')");
	raw_exec(db, "INSERT INTO preset_log (kind, id) VALUES ('device', 'rtx-3090-24gb')");
	raw_exec(db, "INSERT INTO devices (id, name, vendor, memory_bytes, memory_bandwidth_bytes_per_second, source,"
		     " source_note) VALUES ('t4-16gb', 'T4', 'NVIDIA', 17179869184, 320e9, 'datasheet', 'edited')");
	raw_exec(db, "INSERT INTO audit_log (actor, action, kind, resource_id) VALUES ('preset', 'preset', 'device',"
		     " 't4-16gb')");
	raw_exec(db, "INSERT INTO audit_log (actor, action, kind, resource_id) VALUES ('api', 'replace', 'device',"
		     " 't4-16gb')");
	raw_exec(db, "INSERT INTO preset_log (kind, id) VALUES ('device', 't4-16gb')");
	raw_exec(db, "INSERT INTO devices (id, name, vendor, memory_bytes, memory_bandwidth_bytes_per_second, source,"
		     " source_note, measured_at) VALUES ('measured-cpu-lab', 'CPU', 'Intel', 68719476736, 1e11,"
		     " 'measured', 'stream', '2026-11-29T10:00:00Z')");
	sqlite3_close(db);
	assert_int_equal(mp_store_open(path, mps_presets(), &s, &err), MP_OK);
	assert_int_equal(mp_store_user_version(s), mp_store_schema_version());
	assert_int_equal(mp_store_device_get(s, "rtx-3090-24gb", &d, &err), MP_OK);
	assert_int_equal(d.hw.usable_memory_bytes, UINT64_C(25206325248)); /* this build's preset figure */
	assert_string_equal(d.usable_memory_source, "published");
	assert_int_equal(mp_store_device_get(s, "t4-16gb", &d, &err), MP_OK);
	assert_string_equal(d.source_note, "edited");
	assert_int_equal(d.hw.usable_memory_bytes, 0);
	assert_int_equal(mp_store_device_get(s, "measured-cpu-lab", &d, &err), MP_OK);
	assert_string_equal(d.kind, "cpu");
	assert_int_equal(mp_store_device_get(s, "gaudi3-128gb", &d, &err), MP_OK);
	assert_string_equal(d.kind, "accelerator");
	mp_store_close(s);
}

/* Version 7: the whole-package MI250X preset (128 GiB over two GCDs that software sees as two 64 GiB devices) is
 * retired. A version-6 database with the row as the presets wrote it loses it (audited: the preset's delete) and gains
 * the per-GCD profile; a database where someone replaced the row, or where a calibration run refers to it, keeps
 * it untouched. */
static void write_v6_with_package(int how)
{
	mp_store *s;
	mp_error err = MP_ERROR_INIT;
	sqlite3 *db;

	assert_int_equal(mp_store_open_at(path, 6, mps_presets(), &s, &err), MP_OK);
	mp_store_close(s);
	db = raw_open();
	raw_exec(db, "DELETE FROM devices WHERE id = 'mi250x-gcd-64gb'");
	raw_exec(db, "DELETE FROM preset_log WHERE id = 'mi250x-gcd-64gb'");
	raw_exec(db, "INSERT INTO devices (id, name, vendor, memory_bytes, memory_bandwidth_bytes_per_second, source,"
		     " source_note) VALUES ('mi250x-128gb', 'MI250X', 'AMD', 137438953472, 3.2768e12, 'datasheet',"
		     " 'release 6 preset')");
	raw_exec(db, "INSERT INTO audit_log (actor, action, kind, resource_id) VALUES ('preset', 'preset', 'device',"
		     " 'mi250x-128gb')");
	raw_exec(db, "INSERT INTO preset_log (kind, id) VALUES ('device', 'mi250x-128gb')");
	if (how == 1)
		raw_exec(db, "INSERT INTO audit_log (actor, action, kind, resource_id) VALUES ('api', 'replace',"
			     " 'device', 'mi250x-128gb')");
	if (how == 2)
		raw_exec(db, "INSERT INTO calibration_runs (id, target, state, device_id) VALUES ('run-1', 'gpu',"
			     " 'succeeded', 'mi250x-128gb')");
	sqlite3_close(db);
}

static void test_upgrade_to_v7_retires_package(void **state)
{
	mp_store *s;
	mp_error err = MP_ERROR_INIT;
	mp_store_device d;
	sqlite3 *db;
	sqlite3_stmt *q;

	(void)state;
	assert_int_equal(mp_store_schema_version(), 9); /* 8: observations (service/mps_observe.h); 9: store_meta, the
							   store's id and write sequence */
	write_v6_with_package(0);
	if (mp_store_open(path, mps_presets(), &s, &err) != MP_OK)
		fail_msg("open: %s", err.message);
	assert_int_equal(mp_store_user_version(s), mp_store_schema_version());
	assert_int_equal(mp_store_device_get(s, "mi250x-128gb", &d, &err), MP_ENOTFOUND);
	assert_int_equal(mp_store_device_get(s, "mi250x-gcd-64gb", &d, &err), MP_OK);
	assert_int_equal(d.hw.memory_bytes, UINT64_C(68719476736));		 /* 64 GiB per GCD */
	assert_int_equal(d.hw.usable_memory_bytes, UINT64_C(68702699520));	 /* rocm-smi, one GCD */
	assert_true(d.hw.memory_bandwidth_bytes_per_second == 1.6384e12); /* half the package's 3.2768 TB/s */
	mp_store_close(s);
	db = raw_open();
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM audit_log WHERE actor = 'preset' AND action ="
						" 'delete' AND resource_id = 'mi250x-128gb'", -1, &q, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(q, 0), 1);
	sqlite3_finalize(q);
	sqlite3_close(db);
	/* reopening does not bring it back */
	assert_int_equal(mp_store_open(path, mps_presets(), &s, &err), MP_OK);
	assert_int_equal(mp_store_device_get(s, "mi250x-128gb", &d, &err), MP_ENOTFOUND);
	mp_store_close(s);
	for (int how = 1; how <= 2; how++) {
		unlink(path);
		write_v6_with_package(how);
		assert_int_equal(mp_store_open(path, mps_presets(), &s, &err), MP_OK);
		assert_int_equal(mp_store_device_get(s, "mi250x-128gb", &d, &err), MP_OK);
		assert_string_equal(d.source_note, "release 6 preset");
		assert_int_equal(mp_store_device_get(s, "mi250x-gcd-64gb", &d, &err), MP_OK);
		mp_store_close(s);
	}
}

static double gt_num(const cJSON *o, const char *a, const char *b)
{
	const cJSON *v = b ? cJSON_GetObjectItem(cJSON_GetObjectItem(o, a), b) : cJSON_GetObjectItem(o, a);

	if (!cJSON_IsNumber(v))
		fail_msg("%s.%s missing from measurements.json", a, b ? b : "");
	return v->valuedouble;
}

/* The measured H200 profile carries the ground truth's figures: best measured bandwidth, the per-dtype matrix
 * rates, the FMA rate, usable bytes, context overhead and latency, linked to the datasheet profile. */
static void test_measured_h200(void **state)
{
	cJSON *gt = ref_json("groundtruth/h200/measurements.json");
	const cJSON *gemm = cJSON_GetObjectItem(cJSON_GetObjectItem(gt, "ceilings_torch"), "gemm_TFLOPs"), *g;
	const char *mb = cJSON_GetObjectItem(gt, "microbenchmarks_cuda_c")->valuestring, *p;
	double best = gt_num(gt, "ceilings_torch", "copy_GBps"), fma = 0, lat = 0, v;
	mp_store *s;
	mp_error err = MP_ERROR_INIT;
	mp_store_device d;

	(void)state;
	if (gt_num(gt, "ceilings_torch", "triad_GBps") > best)
		best = gt_num(gt, "ceilings_torch", "triad_GBps");
	/* every "GBps <x>" figure of the CUDA C run competes too */
	for (p = strstr(mb, "GBps "); p; p = strstr(p + 1, "GBps "))
		if (sscanf(p + 5, "%lf", &v) == 1 && v > best && strncmp(p - 7, "useful_", 7) != 0)
			best = v;
	p = strstr(mb, "fma_fp32 TFLOPs ");
	assert_non_null(p);
	sscanf(p + 16, "%lf", &fma);
	p = strstr(mb, "latency span_bytes 1073741824 ns ");
	assert_non_null(p);
	sscanf(p + 33, "%lf", &lat);

	assert_int_equal(mp_store_open(path, mps_presets(), &s, &err), MP_OK);
	assert_int_equal(mp_store_device_get(s, "h200-sxm-141gb-measured", &d, &err), MP_OK);
	assert_string_equal(d.source, "measured");
	assert_string_equal(d.linked_device_id, "h200-sxm-141gb");
	assert_true(strlen(d.measured_at) > 0);
	assert_non_null(strstr(d.source_note, "cudaMemGetInfo"));
	assert_true(ref_close(d.hw.memory_bandwidth_bytes_per_second, best * 1e9, 1e-12));
	cJSON_ArrayForEach(g, gemm)
	{
		mp_dtype dt = mp_dtype_from_name(g->string);

		assert_int_not_equal(dt, MP_DTYPE_INVALID);
		if (!ref_close(d.hw.peak_flops_per_second[dt], g->valuedouble * 1e12, 1e-12))
			fail_msg("%s peak %g, measured %g", g->string, d.hw.peak_flops_per_second[dt], g->valuedouble * 1e12);
	}
	assert_true(ref_close(d.fma_flops_per_second, fma * 1e12, 1e-12));
	assert_true(ref_close(d.memory_latency_seconds, lat * 1e-9, 1e-12));
	assert_int_equal(d.hw.usable_memory_bytes, (uint64_t)gt_num(gt, "device", "mem_get_info_total"));
	assert_int_equal(d.hw.cuda_context_bytes, (uint64_t)gt_num(gt, "device", "context_overhead_bytes"));
	assert_int_equal(d.hw.l2_cache_bytes, (uint64_t)gt_num(gt, "device", "l2"));
	assert_int_equal(d.hw.sm_count, (uint32_t)gt_num(gt, "device", "sms"));
	mp_store_close(s);
	cJSON_Delete(gt);
}

/* Preset model counts agree with the references: parameter_counts.json and the H200 ground truth. */
static void test_model_presets(void **state)
{
	cJSON *counts = ref_json("models/parameter_counts.json"), *gt = ref_json("groundtruth/h200/measurements.json");
	const cJSON *c, *run;
	mp_store *s;
	mp_error err = MP_ERROR_INIT;
	mp_store_model m;
	int n = 0;

	(void)state;
	assert_int_equal(mp_store_open(path, mps_presets(), &s, &err), MP_OK);
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(counts, "models"))
	{
		assert_int_equal(mp_store_model_get(s, c->string, &m, &err), MP_OK);
		assert_true((double)m.parameters == cJSON_GetObjectItem(c, "total")->valuedouble);
		mp_store_model_free(&m);
		n++;
	}
	assert_true(n >= 10);
	cJSON_ArrayForEach(run, cJSON_GetObjectItem(gt, "inference"))
	{
		const char *id = cJSON_GetObjectItem(run, "model")->valuestring;

		/* full-depth runs only (llama-3-8b was measured with 4 of its 32 layers) */
		if (mp_store_model_get(s, id, &m, &err) != MP_OK)
			continue;
		if (strcmp(id, "llama-3-8b") != 0)
			assert_true((double)m.parameters == cJSON_GetObjectItem(run, "params")->valuedouble);
		mp_store_model_free(&m);
	}
	assert_int_equal(mp_store_model_get(s, "qwen2.5-0.5b", &m, &err), MP_OK);
	mp_store_model_free(&m);
	mp_store_close(s);
	cJSON_Delete(counts);
	cJSON_Delete(gt);
}

/* The tester's audit entries by action: create, replace, delete. */
static void count_audit(mp_store *s, int *counts)
{
	mp_store_audit *rows = malloc(MP_STORE_PAGE_MAX * sizeof(*rows));
	mp_error err = MP_ERROR_INIT;
	size_t n;
	bool more;

	assert_non_null(rows);
	assert_int_equal(mp_store_audit_page(s, 0, rows, MP_STORE_PAGE_MAX, &n, &more, &err), MP_OK);
	assert_false(more);
	for (size_t i = 0; i < n; i++) {
		if (i)
			assert_true(rows[i - 1].seq < rows[i].seq); /* oldest first */
		if (strcmp(rows[i].actor, "tester") == 0)
			counts[strcmp(rows[i].action, "create") == 0 ? 0 : strcmp(rows[i].action, "replace") == 0 ? 1 : 2]++;
	}
	free(rows);
}

/* How many devices filter f matches. */
static size_t count_matching(mp_store *s, const mp_store_device_filter *f)
{
	size_t n;
	bool more;
	mp_store_device *rows = device_page(s, f, NULL, 100, &n, &more);

	assert_false(more);
	free(rows);
	return n;
}

/* Writes are audited in their own transaction; filters; mp_store_begin groups writes all or nothing. */
static void test_writes_audit_filters_batch(void **state)
{
	mp_store *s;
	mp_error err = MP_ERROR_INIT;
	mp_store_device d, back;
	mp_store_device_filter amd = { "amd", NULL, 0, 0 }, big = { NULL, NULL, UINT64_C(150) << 30, 0 },
			       user = { NULL, "user", 0, 0 };
	int counts[3] = { 0, 0, 0 };
	bool created = false;

	(void)state;
	assert_int_equal(mp_store_open(path, mps_presets(), &s, &err), MP_OK);
	memset(&d, 0, sizeof(d));
	snprintf(d.id, sizeof(d.id), "t-gpu");
	snprintf(d.name, sizeof(d.name), "Test GPU");
	snprintf(d.vendor, sizeof(d.vendor), "ACME");
	snprintf(d.source, sizeof(d.source), "user");
	d.hw.memory_bytes = UINT64_C(1) << 34;
	d.hw.memory_bandwidth_bytes_per_second = 1e12;
	d.hw.peak_flops_per_second[MP_DTYPE_BF16] = 1e14;
	d.base_clock_hz = 1.1e9;
	assert_int_equal(mp_store_device_write(s, &d, "tester", &created, &err), MP_OK);
	assert_true(created);
	d.hw.memory_bytes = UINT64_C(1) << 35;
	assert_int_equal(mp_store_device_write(s, &d, "tester", &created, &err), MP_OK);
	assert_false(created);
	assert_int_equal(mp_store_device_get(s, "t-gpu", &back, &err), MP_OK);
	assert_int_equal(back.hw.memory_bytes, UINT64_C(1) << 35);
	assert_true(back.base_clock_hz == 1.1e9);
	assert_true(back.hw.peak_flops_per_second[MP_DTYPE_BF16] == 1e14);
	/* a CHECK failure is MP_EINVAL and leaves nothing behind */
	snprintf(d.source, sizeof(d.source), "guess");
	assert_int_equal(mp_store_device_write(s, &d, "tester", NULL, &err), MP_EINVAL);
	snprintf(d.source, sizeof(d.source), "user");
	assert_int_equal(mp_store_device_remove(s, "t-gpu", "tester", &err), MP_OK);
	assert_int_equal(mp_store_device_remove(s, "t-gpu", "tester", &err), MP_ENOTFOUND);
	count_audit(s, counts);
	assert_int_equal(counts[0], 1);
	assert_int_equal(counts[1], 1);
	assert_int_equal(counts[2], 1);

	assert_int_equal(count_matching(s, &amd), 3); /* MI250X, MI300X, MI325X */
	assert_true(count_matching(s, &big) >= 4); /* B200, GB200, MI300X, MI325X, ... */
	assert_int_equal(count_matching(s, &user), 0);

	/* a batch with one bad write commits nothing */
	assert_int_equal(mp_store_begin(s, &err), MP_OK);
	snprintf(d.id, sizeof(d.id), "batch-1");
	assert_int_equal(mp_store_device_write(s, &d, "tester", NULL, &err), MP_OK);
	snprintf(d.id, sizeof(d.id), "batch-2");
	snprintf(d.source, sizeof(d.source), "guess");
	assert_int_equal(mp_store_device_write(s, &d, "tester", NULL, &err), MP_EINVAL);
	assert_int_not_equal(mp_store_commit(s, &err), MP_OK);
	assert_int_equal(mp_store_device_get(s, "batch-1", &back, &err), MP_ENOTFOUND);
	mp_store_close(s);
}

/* ----- the decoded-model memo (service/) and the statement cache ----------------------------------------- */

/* A llama config of `layers` layers: each count gives its own parameter total. */
static const char *config_of(int layers, char *buf, size_t len)
{
	snprintf(buf, len, "{\"model_type\":\"llama\",\"num_hidden_layers\":%d}", layers);
	return buf;
}

static uint64_t params_of(int layers)
{
	char buf[96];
	mp_model m;
	mp_param_count pc;
	mp_error err = MP_ERROR_INIT;

	assert_int_equal(mpm_from_hf_text(config_of(layers, buf, sizeof(buf)), "", &m, &err), MP_OK);
	assert_int_equal(mp_count_parameters(&m, &pc, &err), MP_OK);
	return pc.total;
}

static void write_model(mp_store *s, const char *id, int layers)
{
	mp_store_model m;
	mp_error err = MP_ERROR_INIT;
	char buf[96];

	memset(&m, 0, sizeof(m));
	snprintf(m.id, sizeof(m.id), "%s", id);
	snprintf(m.model_type, sizeof(m.model_type), "llama");
	snprintf(m.source, sizeof(m.source), "user");
	m.config_json = (char *)config_of(layers, buf, sizeof(buf));
	m.parameters = params_of(layers);
	assert_int_equal(mp_store_model_write(s, &m, "test", NULL, &err), MP_OK);
}

/* The resolved parameter count of stored model id (0 when the resolution fails with `want`). */
static uint64_t resolved(mps_service *svc, const char *id, mp_status want)
{
	mps_model_ref ref;
	mps_model m;
	mp_error err = MP_ERROR_INIT;

	memset(&ref, 0, sizeof(ref));
	ref.kind = MPS_MODEL_STORED;
	snprintf(ref.id, sizeof(ref.id), "%s", id);
	snprintf(ref.pointer, sizeof(ref.pointer), "/model");
	assert_int_equal(mps_model_resolve(svc, &ref, &m, &err), want);
	return want == MP_OK ? m.params.total : 0;
}

/* A memo hit skips parsing; a write through the same handle, a write through a second handle (another connection)
 * and a write by a child process (another process) are each seen by the next read; deletes too; no decoded value
 * outlives its row. The store's generation moves exactly when something changed. */
static void test_memo_invalidation(void **state)
{
	mps_service *svc;
	mp_store *s, *s2;
	mp_error err = MP_ERROR_INIT;
	uint64_t g, hits, misses;
	pid_t pid;
	int status;

	(void)state;
	assert_int_equal(mps_open(path, &svc, &err), MP_OK);
	s = mps_store(svc);
	write_model(s, "memo-m", 2);
	assert_true(resolved(svc, "memo-m", MP_OK) == params_of(2));
	mps_model_memo_stats(svc, &hits, &misses);
	assert_true(resolved(svc, "memo-m", MP_OK) == params_of(2));
	mps_model_memo_stats(svc, &g, &misses);
	assert_true(g == hits + 1); /* the second read was a hit */
	g = mp_store_generation(s);
	assert_true(mp_store_generation(s) == g);

	/* a write that fails changes nothing, and leaves the generation (and the caches keyed on it) alone */
	assert_int_equal(mp_store_model_remove(s, "memo-none", "test", &err), MP_ENOTFOUND);
	assert_int_equal(mp_store_device_remove(s, "memo-none", "test", &err), MP_ENOTFOUND);
	assert_true(mp_store_generation(s) == g);
	/* a transaction rolled back after a write that succeeded inside it: its reads saw the write, so it moves */
	assert_int_equal(mp_store_begin(s, &err), MP_OK);
	write_model(s, "memo-rolled-back", 1);
	mp_store_rollback(s);
	assert_true(mp_store_generation(s) != g);
	resolved(svc, "memo-rolled-back", MP_ENOTFOUND);
	g = mp_store_generation(s);

	/* this handle writes: seen at once */
	write_model(s, "memo-m", 3);
	assert_true(mp_store_generation(s) != g);
	assert_true(resolved(svc, "memo-m", MP_OK) == params_of(3));

	/* another connection writes */
	assert_int_equal(mp_store_open(path, mps_presets(), &s2, &err), MP_OK);
	write_model(s2, "memo-m", 4);
	assert_true(resolved(svc, "memo-m", MP_OK) == params_of(4));
	/* a write to another row also drops the memo (it is all or nothing), and reads stay right */
	write_model(s2, "memo-other", 5);
	assert_true(resolved(svc, "memo-m", MP_OK) == params_of(4));
	assert_true(resolved(svc, "memo-other", MP_OK) == params_of(5));
	assert_int_equal(mp_store_model_remove(s2, "memo-other", "test", &err), MP_OK);
	resolved(svc, "memo-other", MP_ENOTFOUND);
	mp_store_close(s2);

	/* another process writes */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		mp_store *c;

		if (mp_store_open(path, mps_presets(), &c, &err) != MP_OK)
			_exit(1);
		write_model(c, "memo-m", 6);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(resolved(svc, "memo-m", MP_OK) == params_of(6));

	/* deleted through this handle: not served from the memo */
	assert_int_equal(mp_store_model_remove(s, "memo-m", "test", &err), MP_OK);
	resolved(svc, "memo-m", MP_ENOTFOUND);

	/* inside a batch transaction the writer sees its own uncommitted row, and nothing of it is kept on rollback */
	assert_int_equal(mp_store_begin(s, &err), MP_OK);
	write_model(s, "memo-m", 7);
	assert_true(resolved(svc, "memo-m", MP_OK) == params_of(7));
	mp_store_rollback(s);
	resolved(svc, "memo-m", MP_ENOTFOUND);
	mps_close(svc);
}

/* More distinct rows than the memo holds, read three times over: every answer right (evictions never mix rows
 * up). */
static void test_memo_bounds_and_statements(void **state)
{
	mps_service *svc;
	mp_store *s;
	mp_error err = MP_ERROR_INIT;
	char id[32];

	(void)state;
	assert_int_equal(mps_open(path, &svc, &err), MP_OK);
	s = mps_store(svc);
	assert_int_equal(mp_store_begin(s, &err), MP_OK);
	for (int i = 0; i < 100; i++) {
		snprintf(id, sizeof(id), "bulk-%03d", i);
		write_model(s, id, i + 1);
	}
	assert_int_equal(mp_store_commit(s, &err), MP_OK);
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 100; i++) {
			snprintf(id, sizeof(id), "bulk-%03d", i);
			assert_true(resolved(svc, id, MP_OK) == params_of(i + 1));
		}
	mps_close(svc);
}

/* A listing's caller that takes long over its first row (as capacity plans one): the store stays free meanwhile. */
typedef struct slow_reader {
	mps_service *svc;
	atomic_int inside;	/* 1 while the first row's callback sleeps, 2 once it returned */
	int rows;
} slow_reader;

static mp_status slow_row(const mp_store_device *d, void *ctx)
{
	slow_reader *r = ctx;

	(void)d;
	if (r->rows++ == 0) {
		r->inside = 1;
		usleep(400 * 1000);
		r->inside = 2;
	}
	return MP_OK;
}

static void *slow_list(void *arg)
{
	slow_reader *r = arg;
	mp_error err = MP_ERROR_INIT;
	int more = 0;

	assert_int_equal(mps_device_find(r->svc, NULL, NULL, 100, slow_row, r, &more, &err), MP_OK);
	return NULL;
}

static double seconds_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* While a listing's caller computes on its rows for 400 ms, another thread reads a device (not memoised yet) and
 * writes one: both finish while the first is still at its first row (under the old callbacks, run under the
 * store's lock, both waited the 400 ms). */
static void test_no_lock_while_computing(void **state)
{
	slow_reader r = { NULL, 0, 0 };
	mp_store_device *d = malloc(sizeof(*d));
	mp_error err = MP_ERROR_INIT;
	pthread_t th;
	double t0, read_s, write_s;

	(void)state;
	assert_non_null(d);
	assert_int_equal(mps_open(path, &r.svc, &err), MP_OK);
	assert_int_equal(pthread_create(&th, NULL, slow_list, &r), 0);
	while (r.inside == 0)
		usleep(1000);
	t0 = seconds_now();
	assert_int_equal(mps_device_get(r.svc, "a100-sxm4-80gb", d, &err), MP_OK);
	read_s = seconds_now() - t0;
	d->naliases = 0;
	snprintf(d->id, sizeof(d->id), "lock-free-copy");
	snprintf(d->source, sizeof(d->source), "user");
	t0 = seconds_now();
	assert_int_equal(mps_device_put(r.svc, d, "tester", "", NULL, &err), MP_OK);
	write_s = seconds_now() - t0;
	assert_int_equal(r.inside, 1); /* the listing's caller is still at its first row */
	pthread_join(th, NULL);
	print_message("a read took %.3f ms and a write %.3f ms while the listing's caller computed\n", read_s * 1e3,
		      write_s * 1e3);
	assert_true(read_s < 0.2 && write_s < 0.2);
	assert_true(r.rows > 20); /* the listing went on to every preset */
	mps_close(r.svc);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_create_seed_reopen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_upgrade_from_v2, setup, teardown),
		cmocka_unit_test_setup_teardown(test_aliases_upgrade_and_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_upgrade_to_v5, setup, teardown),
		cmocka_unit_test_setup_teardown(test_upgrade_to_v7_retires_package, setup, teardown),
		cmocka_unit_test_setup_teardown(test_measured_h200, setup, teardown),
		cmocka_unit_test_setup_teardown(test_model_presets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writes_audit_filters_batch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memo_invalidation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memo_bounds_and_statements, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_lock_while_computing, setup, teardown),
	};

	return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
