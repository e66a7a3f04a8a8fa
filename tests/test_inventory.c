/*
 * test_inventory.c: the tensor inventory against the state_dict transformers builds. For every reference case
 * (tests/ref/hf/state_dicts.json, made by tools/groundtruth/state_dicts.py from transformers 5.24 building each config
 * of tests/ref/hf/groundtruth.json on the meta device), memplan's inventory of the same config lists the same tensors,
 * name by name (numeric path components folded) and shape by shape, with the same counts: parameters and the buffers
 * the state_dict keeps. The few cases where memplan follows the checkpoint rather than transformers name what differs.
 */
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../model/model.h"
#include "refs.h"

/* One (template, shape) of a state_dict, with how many tensors have it. */
typedef struct row {
	char key[320]; /* "model.layers.#.self_attn.q_proj.weight [4096,4096]" */
	uint64_t count;
	bool seen;
} row;

typedef struct rows {
	size_t n;
	row r[512];
} rows;

/* name with every "{x}" and every numeric path component made "#". */
static void fold(const char *name, char *out, size_t len)
{
	size_t o = 0;

	for (const char *p = name; *p && o + 2 < len; p++) {
		if (*p == '{' && p[1] && p[2] == '}') {
			out[o++] = '#';
			p += 2;
		} else if ((p == name || p[-1] == '.') && *p >= '0' && *p <= '9') {
			while (p[1] >= '0' && p[1] <= '9')
				p++;
			out[o++] = '#';
		} else {
			out[o++] = *p;
		}
	}
	out[o] = '\0';
}

static void put(rows *rs, const char *name, const uint64_t *dims, unsigned ndim, uint64_t count)
{
	char key[320], folded[256];
	int w;

	fold(name, folded, sizeof(folded));
	w = snprintf(key, sizeof(key), "%s [", folded);
	for (unsigned i = 0; i < ndim && w > 0 && (size_t)w < sizeof(key); i++)
		w += snprintf(key + w, sizeof(key) - (size_t)w, "%s%llu", i ? "," : "", (unsigned long long)dims[i]);
	if (w > 0 && (size_t)w < sizeof(key))
		snprintf(key + w, sizeof(key) - (size_t)w, "]");
	for (size_t i = 0; i < rs->n; i++)
		if (strcmp(rs->r[i].key, key) == 0) {
			rs->r[i].count += count;
			return;
		}
	assert_true(rs->n < sizeof(rs->r) / sizeof(rs->r[0]));
	snprintf(rs->r[rs->n].key, sizeof(rs->r[rs->n].key), "%s", key);
	rs->r[rs->n].count = count;
	rs->r[rs->n].seen = false;
	rs->n++;
}

/* The reference's parameters and persistent buffers of one case. */
static void reference_rows(const cJSON *c, rows *rs)
{
	static const char *const parts[] = {"parameters", "buffers"};

	rs->n = 0;
	for (size_t k = 0; k < 2; k++) {
		const cJSON *tmpl;

		cJSON_ArrayForEach(tmpl, cJSON_GetObjectItem(c, parts[k]))
		{
			const cJSON *r;

			cJSON_ArrayForEach(r, tmpl)
			{
				uint64_t dims[8];
				unsigned nd = 0;
				const cJSON *d;

				cJSON_ArrayForEach(d, cJSON_GetObjectItem(r, "shape"))
				{
					if (nd < 8)
						dims[nd++] = (uint64_t)d->valuedouble;
				}
				put(rs, tmpl->string, dims, nd, (uint64_t)cJSON_GetObjectItem(r, "count")->valuedouble);
			}
		}
	}
}

/* memplan's inventory of m as rows (every entry the state_dict holds: parameters and buffers, not the ones no
 * checkpoint holds). */
static void inventory_rows(const mp_model *m, rows *rs)
{
	rs->n = 0;
	for (size_t i = 0; i < mp_inventory_size(&m->inv); i++) {
		const mp_tensor *t = mp_inventory_at(&m->inv, i);
		char name[256];
		uint64_t dims[MP_TENSOR_MAX_DIMS];

		mp_tensor_name(&m->inv, t, name, sizeof(name));
		for (unsigned d = 0; d < t->ndim; d++)
			dims[d] = t->dims[d];
		put(rs, name, dims, t->ndim, t->count);
	}
}

/* Lists what differs between memplan's rows (mine) and transformers' (ref) into msg; returns the number of rows. */
static size_t differences(rows *mine, rows *ref, char *msg, size_t len)
{
	size_t bad = 0, used = 0;

	msg[0] = '\0';
	for (size_t i = 0; i < ref->n; i++) {
		row *r = &ref->r[i];
		bool found = false;

		for (size_t j = 0; j < mine->n && !found; j++)
			if (strcmp(mine->r[j].key, r->key) == 0) {
				found = true;
				mine->r[j].seen = true;
				if (mine->r[j].count != r->count) {
					bad++;
					used += (size_t)snprintf(msg + used, used < len ? len - used : 0,
					                         "\n    count %s: memplan %llu, transformers %llu", r->key,
					                         (unsigned long long)mine->r[j].count,
					                         (unsigned long long)r->count);
				}
			}
		if (!found) {
			bad++;
			used += (size_t)snprintf(msg + used, used < len ? len - used : 0, "\n    missing %s x %llu", r->key,
			                         (unsigned long long)r->count);
		}
	}
	for (size_t j = 0; j < mine->n; j++)
		if (!mine->r[j].seen) {
			bad++;
			used += (size_t)snprintf(msg + used, used < len ? len - used : 0, "\n    extra   %s x %llu",
			                         mine->r[j].key, (unsigned long long)mine->r[j].count);
		}
	return bad;
}

/* Where memplan follows the checkpoint rather than the model transformers builds, each on purpose
 * (tests/ref/hf/README.md): the case, the folded name whose rows differ, and why. */
static const struct {
	const char *name, *tensor, *why;
} follows_checkpoint[] = {
    {"longcat_flash-default", "model.layers.#.mlp.experts.gate_up_proj",
     "transformers 5.24 allocates gate_up_proj for the 256 zero-computation experts too (LongcatFlashExperts."
     "total_experts); they hold no weights in the checkpoint and vLLM has none: memplan lists 512 of 768"},
};

/* Drops the rows of both lists whose name is `tensor` (a difference on purpose); returns how many it dropped. */
static size_t drop(rows *rs, const char *tensor)
{
	size_t n = 0, k = 0, len = strlen(tensor);

	for (size_t i = 0; i < rs->n; i++) {
		if (strncmp(rs->r[i].key, tensor, len) == 0 && rs->r[i].key[len] == ' ') {
			n++;
			continue;
		}
		rs->r[k++] = rs->r[i];
	}
	rs->n = k;
	return n;
}

static void test_state_dicts(void **state)
{
	cJSON *gt = ref_json("hf/groundtruth.json"), *sd = ref_json("hf/state_dicts.json"), *c;
	static rows mine, ref;
	static char msg[65536];
	int cases = 0, exact = 0, failing = 0;
	char failed[4096] = "";

	(void)state;
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(sd, "cases"))
	{
		const cJSON *g = cJSON_GetObjectItem(cJSON_GetObjectItem(gt, "cases"), c->string);
		const cJSON *cfg = g ? cJSON_GetObjectItem(g, "config") : NULL;
		mp_model m;
		mp_error err = MP_ERROR_INIT;
		mp_status st;

		if (cfg == NULL || cJSON_GetObjectItem(c, "parameters") == NULL)
			continue; /* transformers itself could not build it */
		st = mpm_from_hf(cfg, "/model/hf_config", &m, &err);
		if (st == MP_EUNSUPPORTED || st == MP_EINVAL)
			continue;
		assert_int_equal(st, MP_OK);
		cases++;
		inventory_rows(&m, &mine);
		reference_rows(c, &ref);
		for (size_t i = 0; i < sizeof(follows_checkpoint) / sizeof(follows_checkpoint[0]); i++)
			if (strcmp(c->string, follows_checkpoint[i].name) == 0 &&
			    (drop(&mine, follows_checkpoint[i].tensor) == 0 || drop(&ref, follows_checkpoint[i].tensor) == 0))
				fail_msg("%s: %s was expected to differ (%s)", c->string, follows_checkpoint[i].tensor,
				         follows_checkpoint[i].why);
		if (differences(&mine, &ref, msg, sizeof(msg)) == 0) {
			exact++;
			continue;
		}
		failing++;
		msg[4000] = '\0'; /* the first lines are enough to see what differs */
		fprintf(stderr, "%s:%s\n", c->string, msg);
		mp_list_add(failed, sizeof(failed), c->string);
	}
	print_message("%d of %d reference cases name every tensor as transformers does%s%s\n", exact, cases,
	              failing ? "; not: " : "", failed);
	cJSON_Delete(gt);
	cJSON_Delete(sd);
	assert_int_equal(failing, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_state_dicts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
