/*
 * test_golden.c: golden answers. Replays every request of tests/golden/http_cases.jsonl against a daemon with a
 * freshly seeded database and compares status, media type and body, byte for byte, with
 * tests/golden/http_expected.jsonl; runs every command line of tests/golden/cli_cases.txt and compares its
 * output with tests/golden/cli/<name>.txt. The requests are those the HTTP tests send plus the README's examples
 * (tests/golden/README.md). Timestamps of stored rows (created_at, updated_at), and in CLI outputs the temporary
 * database's path and the working folder, are the only bytes masked.
 *
 * MEMPLAN_GOLDEN_RECORD=1 rewrites the expected files from what this build answers: do it only for a change
 * that is meant to change answers, and say why in the commit.
 */
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../codec/tables.h"
#include "http_util.h"
#include "refs.h"

#define GOLDEN_DIR "tests/golden"

static bool recording(void)
{
	const char *r = getenv("MEMPLAN_GOLDEN_RECORD");

	return r && strcmp(r, "1") == 0;
}

/* Replaces the values of "created_at" and "updated_at" members by "T" (seeding time differs per database), in
 * compact and in pretty-printed JSON. */
static char *mask_times(const char *in)
{
	static const char *const keys[] = { "\"created_at\":", "\"updated_at\":" };
	size_t n = strlen(in);
	char *out = malloc(n + 1), *o = out;

	assert_non_null(out);
	for (const char *p = in; *p;) {
		bool hit = false;

		for (size_t k = 0; k < 2 && !hit; k++) {
			size_t kl = strlen(keys[k]);
			const char *v = p + kl, *end;

			if (strncmp(p, keys[k], kl) != 0)
				continue;
			while (*v == ' ' || *v == '\t')
				v++;
			if (*v != '"' || (end = strchr(v + 1, '"')) == NULL)
				continue;
			memcpy(o, p, (size_t)(v + 1 - p));
			o += v + 1 - p;
			*o++ = 'T';
			p = end;
			hit = true;
		}
		if (!hit)
			*o++ = *p++;
	}
	*o = '\0';
	return out;
}

/* Replaces each occurrence of needle (the test's database path, a fresh temporary folder; the working folder the
 * help names) by repl, at most as long; in is consumed. */
static char *mask_text(char *in, const char *needle, const char *repl)
{
	size_t n = strlen(needle), rn = strlen(repl), o = 0;
	char *out = malloc(strlen(in) + 1);

	assert_non_null(out);
	assert_true(rn <= n);
	for (const char *p = in; *p;) {
		if (strncmp(p, needle, n) == 0) {
			memcpy(out + o, repl, rn);
			o += rn;
			p += n;
		} else {
			out[o++] = *p++;
		}
	}
	out[o] = '\0';
	free(in);
	return out;
}

static char *read_text(const char *path)
{
	size_t len = 0;
	char *t = ref_read(path, &len);

	if (t == NULL && !recording()) {
		fprintf(stderr, "cannot read %s\n", path);
		fail();
	}
	return t;
}

static void test_http_golden(void **state)
{
	http_fixture *fx = *state;
	char *cases = read_text(GOLDEN_DIR "/http_cases.jsonl"), *expected = recording() ? NULL
						: read_text(GOLDEN_DIR "/http_expected.jsonl");
	FILE *rec = recording() ? fopen(GOLDEN_DIR "/http_expected.jsonl", "w") : NULL;
	char *line, *save = NULL, *eline = NULL, *esave = NULL;
	int n = 0, bad = 0;

	assert_non_null(cases);
	if (recording())
		assert_non_null(rec);
	for (line = strtok_r(cases, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		cJSON *c = cJSON_Parse(line), *got;
		const char *method, *path, *ct, *body;
		http_resp r;
		char *masked, *text;

		assert_non_null(c);
		method = cJSON_GetObjectItem(c, "method")->valuestring;
		path = cJSON_GetObjectItem(c, "path")->valuestring;
		ct = cJSON_GetObjectItem(c, "content_type")->valuestring;
		body = cJSON_GetObjectItem(c, "body")->valuestring;
		http_do(&fx->d, method, path, body[0] ? body : NULL, ct[0] ? ct : NULL, NULL, &r);
		masked = mask_times(r.body ? r.body : "");
		got = cJSON_CreateObject();
		cJSON_AddNumberToObject(got, "status", (double)r.status);
		cJSON_AddStringToObject(got, "content_type", r.content_type);
		cJSON_AddStringToObject(got, "body", masked);
		text = cJSON_PrintUnformatted(got);
		if (rec) {
			fprintf(rec, "%s\n", text);
		} else {
			eline = eline == NULL ? strtok_r(expected, "\n", &esave) : strtok_r(NULL, "\n", &esave);
			if (eline == NULL || strcmp(eline, text) != 0) {
				size_t at = 0;

				while (eline && eline[at] && eline[at] == text[at])
					at++;
				at = at > 120 ? at - 120 : 0;
				bad++;
				fprintf(stderr, "golden case %d differs: %s %s\n  body:     %.300s\n  expected: ...%.400s\n"
					"  got:      ...%.400s\n",
					n + 1, method, path, body, eline ? eline + at : "(none)", text + at);
			}
		}
		cJSON_free(text);
		cJSON_Delete(got);
		free(masked);
		http_resp_free(&r);
		cJSON_Delete(c);
		n++;
	}
	if (rec)
		fclose(rec);
	fprintf(stderr, "%d golden HTTP cases, %d differ%s\n", n, bad, rec ? " (recorded)" : "");
	assert_true(n >= 200);
	assert_int_equal(bad, 0);
	free(cases);
	free(expected);
}

/* Runs `memplan ARGS` (through the shell, stdout and stderr together) with a fresh database; returns the output. */
static char *run_cli(const char *bin, const char *args, const char *db, int *rc)
{
	char cmd[4096];
	FILE *p;
	char *out = NULL;
	size_t cap = 0, n = 0, r;

	snprintf(cmd, sizeof(cmd), "%s %s --db %s 2>&1; echo \"[exit $?]\"", bin, args, db);
	p = popen(cmd, "r");
	assert_non_null(p);
	do {
		if (n + 4097 > cap) {
			char *grown;

			cap = cap ? cap * 2 : 8192;
			grown = realloc(out, cap);
			assert_non_null(grown);
			out = grown;
		}
		r = fread(out + n, 1, cap - n - 1, p);
		n += r;
	} while (r > 0);
	out[n] = '\0';
	*rc = pclose(p);
	return out;
}

static void test_cli_golden(void **state)
{
	const char *bin = getenv("MEMPLAN_BIN");
	char *cases = read_text(GOLDEN_DIR "/cli_cases.txt"), *line, *save = NULL;
	char dir[] = "/tmp/memplan-golden-XXXXXX", db[128], binabs[1024], cwd[1024];
	int n = 0, bad = 0;

	(void)state;
	if (bin == NULL) {
		fprintf(stderr, "CLI golden cases skipped: MEMPLAN_BIN is not set (make check sets it)\n");
		skip();
	}
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_non_null(realpath(bin, binabs));
	assert_non_null(mkdtemp(dir));
	snprintf(db, sizeof(db), "%s/golden.db", dir);
	for (line = strtok_r(cases, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[64], path[256], *out, *masked, *expected;
		const char *tab = strchr(line, '\t');
		int rc;

		if (line[0] == '#' || tab == NULL)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(tab - line), line);
		snprintf(path, sizeof(path), GOLDEN_DIR "/cli/%s.txt", name);
		out = run_cli(binabs, tab + 1, db, &rc);
		masked = mask_text(mask_text(mask_times(out), db, "$DB"), cwd, "$CWD");
		if (recording()) {
			FILE *f = fopen(path, "w");

			assert_non_null(f);
			fprintf(f, "%s", masked);
			fclose(f);
		} else {
			size_t len = 0;

			expected = ref_read(path, &len);
			if (expected == NULL || strcmp(expected, masked) != 0) {
				bad++;
				fprintf(stderr, "CLI golden %s differs (memplan %s):\n--- expected\n%.2000s\n--- got\n%.2000s\n",
					name, tab + 1, expected ? expected : "(missing)", masked);
			}
			free(expected);
		}
		free(masked);
		free(out);
		n++;
	}
	unlink(db);
	{
		char wal[160];

		snprintf(wal, sizeof(wal), "%s-wal", db);
		unlink(wal);
		snprintf(wal, sizeof(wal), "%s-shm", db);
		unlink(wal);
	}
	rmdir(dir);
	fprintf(stderr, "%d golden CLI cases, %d differ%s\n", n, bad, recording() ? " (recorded)" : "");
	assert_true(n >= 5);
	assert_int_equal(bad, 0);
	free(cases);
}

/* `memplan CMD --help` for each subcommand: exit 0, a usage line, the options; the plan and roofline helps list
 * every field of the decoders' own tables (so a new field is never missing) with what it takes. */
static void test_cli_help(void **state)
{
	static const char *const subcommands[] = { "plan inference", "plan training", "plan", "roofline", "calibrate",
						   "db", "routes", "serve" };
	const char *bin = getenv("MEMPLAN_BIN");
	char dir[] = "/tmp/memplan-help-XXXXXX", db[128], binabs[1024];

	(void)state;
	if (bin == NULL) {
		fprintf(stderr, "CLI help cases skipped: MEMPLAN_BIN is not set (make check sets it)\n");
		skip();
	}
	assert_non_null(realpath(bin, binabs));
	assert_non_null(mkdtemp(dir));
	snprintf(db, sizeof(db), "%s/h.db", dir);
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++) {
		char args[64], usage[64];
		int rc;
		char *out;

		snprintf(args, sizeof(args), "%s --help", subcommands[i]);
		out = run_cli(binabs, args, db, &rc);
		snprintf(usage, sizeof(usage), "Usage: memplan %.*s", (int)strcspn(subcommands[i], " "), subcommands[i]);
		if (strncmp(out, usage, strlen(usage)) != 0 || strstr(out, "[exit 0]") == NULL)
			fail_msg("memplan %s:\n%s", args, out);
		if (strcmp(subcommands[i], "routes") != 0 && strcmp(subcommands[i], "serve") != 0)
			assert_non_null(strstr(out, "Database: --db PATH, else $MEMPLAN_DB"));
		for (int k = 0; k < 2 && strncmp(subcommands[i], "plan", 4) == 0; k++) {
			size_t n;
			const mpm_field *t = k ? mpc_training_field_table(&n) : mpc_inference_field_table(&n);

			if (strcmp(subcommands[i], k ? "plan inference" : "plan training") == 0)
				continue;
			for (size_t j = 0; j < n; j++) {
				char opt[96];

				snprintf(opt, sizeof(opt), "  --%s", t[j].name);
				if (strstr(out, opt) == NULL)
					fail_msg("memplan %s does not list %s", args, opt);
			}
		}
		if (strcmp(subcommands[i], "plan inference") == 0) {
			/* the allowed values: from the table (an enum, the dtypes) and the KV formats */
			assert_non_null(strstr(out, "one of: none, fused, eager"));
			assert_non_null(strstr(out, "fp8 = fp8_e4m3)"));
			/* weight_dtype and kv_cache_dtype list what their decoders take, "auto" and gptq/awq included */
			assert_non_null(strstr(out, "--weight_dtype  storage format of the weights\n      one of: auto (the "
						    "config's quantization or dtype), gptq, awq"));
			assert_non_null(strstr(out, "--kv_cache_dtype  format of the KV cache\n      one of: auto (the "
						    "compute dtype), fp32"));
			assert_non_null(strstr(out, "one of: none, vllm, sglang, trtllm"));
			assert_non_null(strstr(out, "an integer 1 to 1,048,576"));
		}
		if (strcmp(subcommands[i], "roofline") == 0) {
			const char *name;
			size_t n;

			for (size_t k = 0; mpc_op_field_table(k, &name, &n); k++) {
				char spec[64];

				snprintf(spec, sizeof(spec), "\n%s:key=value,...\n", name);
				assert_non_null(strstr(out, spec));
			}
		}
		free(out);
	}
	/* --name=value is --name value; a not-found error says which database it read */
	{
		int rc1, rc2;
		char *a = run_cli(binabs, "plan inference --model=llama-3-8b --weight_dtype=bf16 --kv_cache_dtype=bf16 "
					  "--batch_size=2 --sequence_length=1024", db, &rc1);
		char *b = run_cli(binabs, "plan inference --model llama-3-8b --weight_dtype bf16 --kv_cache_dtype bf16 "
					  "--batch_size 2 --sequence_length 1024", db, &rc2);
		char want[256];

		assert_string_equal(a, b);
		assert_non_null(strstr(a, "batch 2 x 1,024 tokens"));
		free(a);
		free(b);
		a = run_cli(binabs, "plan inference --model=nope --weight_dtype=bf16 --kv_cache_dtype=bf16 --batch_size=1 "
				    "--sequence_length=1", db, &rc1);
		snprintf(want, sizeof(want), "looked in the database %s;", db);
		assert_non_null(strstr(a, want));
		assert_non_null(strstr(a, "[exit 1]"));
		free(a);
	}
	{
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		assert_int_equal(system(cmd), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_http_golden, http_fixture_setup, http_fixture_teardown),
		cmocka_unit_test(test_cli_golden),
		cmocka_unit_test(test_cli_help),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
