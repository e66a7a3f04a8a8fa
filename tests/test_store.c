/*
 * test_store.c: the SQLite store. A new database is created at the current schema version and seeded with
 * the presets; opening it again applies nothing twice; devices carry their datasheet figures and sources.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../daemon/hf_config.h"
#include "../db/store.h"
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

static mp_status count_models(const mp_store_model *m, void *ctx)
{
	(*(int *)ctx)++;
	assert_true(m->parameters > 0);
	assert_string_equal(m->source, "preset");
	return MP_OK;
}

static mp_status count_devices(const mp_store_device *d, void *ctx)
{
	(*(int *)ctx)++;
	assert_true(d->hw.memory_bytes > 0);
	assert_true(d->hw.memory_bandwidth_bytes_per_second > 0);
	assert_true(strlen(d->source_note) > 0);
	return MP_OK;
}

static void test_create_seed_reopen(void **state)
{
	mp_store *s;
	mp_error err;
	mp_store_device d;
	mp_store_model m;
	int n = 0, more = 0;
	cJSON *counts = ref_json("models/parameter_counts.json");

	(void)state;
	assert_int_equal(mp_store_open(path, mpd_hf_count_parameters, &s, &err), MP_OK);
	assert_int_equal(mp_store_user_version(s), mp_store_schema_version());
	assert_int_equal(mp_store_model_list(s, NULL, 100, count_models, &n, &more, &err), MP_OK);
	assert_true(n >= 20);
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
	assert_int_equal(mp_store_open(path, mpd_hf_count_parameters, &s, &err), MP_OK);
	n = 0;
	assert_int_equal(mp_store_device_list(s, NULL, 1000, count_devices, &n, &more, &err), MP_OK);
	assert_true(n >= 3);
	assert_int_equal(more, 0);
	/* pagination: two pages of 2 from a cursor */
	n = 0;
	assert_int_equal(mp_store_device_list(s, NULL, 2, count_devices, &n, &more, &err), MP_OK);
	assert_int_equal(n, 2);
	assert_int_equal(more, 1);
	mp_store_close(s);
	cJSON_Delete(counts);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_create_seed_reopen, setup, teardown),
	};

	return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
