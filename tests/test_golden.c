/*
 * test_golden.c: golden answers. Replays every request of tests/golden/http_cases.jsonl against a daemon with a
 * freshly seeded database and compares status, media type and body with
 * tests/golden/http_expected.jsonl; runs every command line of tests/golden/cli_cases.txt and compares its
 * output with tests/golden/cli/<name>.txt. The requests are those the HTTP tests send plus the README's examples
 * (tests/golden/README.md). Timestamps of stored rows (created_at, updated_at), and in CLI outputs the temporary
 * database's path and the working folder, are the only bytes masked.
 *
 * Bytes that differ pass when only wording that is not the contract moved (http_same, cli_same: every member,
 * number, enum and verdict alike; the figures of a note or a text for people alike); the count is printed.
 * MEMPLAN_GOLDEN_STRICT=1 compares every byte, as a change meant to keep every answer must show.
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

#include "../codec/mpc_tables.h"
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

/* ----- what a golden answer holds to: figures exactly, wording where it is not the contract loosely -------------- */

/* MEMPLAN_GOLDEN_STRICT=1: every byte (what a change that is meant to keep every answer must show). */
static bool strict(void)
{
	const char *s = getenv("MEMPLAN_GOLDEN_STRICT");

	return s && strcmp(s, "1") == 0;
}

static bool token_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
	       c == '.' || c == ',' || c == '%' || c == '+' || c == '/';
}

/* Whether a word of a text is one of its figures: it holds a digit ("8,030,261,248", "-0.5", "bf16",
 * "h200-sxm-141gb"), it is a name joined by '_' or '-' ("mixed_bf16", "--max-model-len"), a number's unit ("GiB",
 * "%"), or capitals people read as a verdict (FITS, DOES NOT FIT). Plain words are wording. */
static bool figure_word(const char *w, size_t n, bool after_number)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "KB", "MB", "GB", "TB", "PB", "B",
					     "%", "ms", "us", "s", NULL };
	size_t caps = 0;

	for (size_t i = 0; i < n; i++) {
		if ((w[i] >= '0' && w[i] <= '9') || w[i] == '_' || w[i] == '%' || (w[i] == '-' && i > 0 && i + 1 < n))
			return true;
		caps += w[i] >= 'A' && w[i] <= 'Z';
	}
	for (int i = 0; after_number && units[i]; i++)
		if (strlen(units[i]) == n && strncmp(w, units[i], n) == 0)
			return true;
	return caps == n && n >= 2;
}

/* The figures of a text (figure_word), in order, one a line into out (a growing string). The words around them
 * are left out: they are not the contract. */
static void figures_of(const char *s, char **out, size_t *len, size_t *cap)
{
	bool after_number = false;

	for (const char *p = s; *p;) {
		const char *start = p;
		size_t n;

		if (!token_char(*p)) {
			p++;
			continue;
		}
		while (token_char(*p))
			p++;
		n = (size_t)(p - start);
		while (n > 0 && (start[n - 1] == '.' || start[n - 1] == ',')) /* a sentence's stop, a list's comma */
			n--;
		if (!figure_word(start, n, after_number)) {
			after_number = false;
			continue;
		}
		after_number = start[0] == '-' || (start[0] >= '0' && start[0] <= '9');
		if (*len + n + 2 > *cap) {
			*cap = (*cap + n + 2) * 2;
			*out = realloc(*out, *cap);
			assert_non_null(*out);
		}
		memcpy(*out + *len, start, n);
		*len += n;
		(*out)[(*len)++] = '\n';
		(*out)[*len] = '\0';
	}
}

static bool same_figures(const char *a, const char *b)
{
	char *fa = calloc(1, 1), *fb = calloc(1, 1);
	size_t la = 0, ca = 1, lb = 0, cb = 1;
	bool same;

	assert_non_null(fa);
	assert_non_null(fb);
	figures_of(a, &fa, &la, &ca);
	figures_of(b, &fb, &lb, &cb);
	same = strcmp(fa, fb) == 0;
	free(fa);
	free(fb);
	return same;
}

/* Members whose words explain and are not the contract: what they say may be reworded, the figures they quote may
 * not. A problem's field, every key, enum and id are compared whole. */
static bool prose_key(const char *k)
{
	static const char *const keys[] = { "detail", "message", "note", "notes", "description", "warnings", NULL };

	for (int i = 0; k && keys[i]; i++)
		if (strcmp(k, keys[i]) == 0)
			return true;
	return false;
}

/* All the strings of v (a string or an array of strings) joined, for figures_of. */
static char *joined(const cJSON *v)
{
	size_t n = 1;
	char *s;
	const cJSON *e;

	if (cJSON_IsString(v))
		return strdup(v->valuestring);
	cJSON_ArrayForEach(e, v) n += cJSON_IsString(e) ? strlen(e->valuestring) + 1 : 0;
	s = calloc(1, n);
	assert_non_null(s);
	n = 0;
	cJSON_ArrayForEach(e, v) if (cJSON_IsString(e))
	{
		size_t l = strlen(e->valuestring);

		memcpy(s + n, e->valuestring, l);
		s[n + l] = '\n';
		n += l + 1;
	}
	return s;
}

/* Two JSON values alike: the same members in the same order, every number and every string equal, except the
 * prose members (prose_key), whose figures must be equal; a warnings list also keeps its length (a warning more or
 * less is an answer that rests on something else). */
static bool json_same(const cJSON *a, const cJSON *b, const char *key)
{
	if (prose_key(key) && (cJSON_IsString(a) || cJSON_IsArray(a)) && (cJSON_IsString(b) || cJSON_IsArray(b))) {
		char *ja = joined(a), *jb = joined(b);
		bool same = same_figures(ja, jb) &&
			    (strcmp(key, "warnings") != 0 || cJSON_GetArraySize(a) == cJSON_GetArraySize(b));

		free(ja);
		free(jb);
		return same;
	}
	if ((a->type & 0xFF) != (b->type & 0xFF))
		return false;
	if (cJSON_IsNumber(a))
		return a->valuedouble == b->valuedouble;
	if (cJSON_IsString(a))
		return strcmp(a->valuestring, b->valuestring) == 0;
	if (cJSON_IsObject(a) || cJSON_IsArray(a)) {
		const cJSON *x = a->child, *y = b->child;

		for (; x && y; x = x->next, y = y->next) {
			if (cJSON_IsObject(a) && strcmp(x->string, y->string) != 0)
				return false;
			if (!json_same(x, y, cJSON_IsObject(a) ? x->string : key))
				return false;
		}
		return x == NULL && y == NULL;
	}
	return true; /* null, true, false: the type said it */
}

static bool json_type(const char *t)
{
	return strncmp(t, "application/json", 16) == 0 || strncmp(t, "application/problem+json", 24) == 0;
}

/* Two recorded HTTP answers ({status, content_type, body}) alike: status and media type exactly; a JSON body as
 * json_same; a text for people by its figures; anything else (a chart) byte for byte. */
static bool http_same(const char *expected, const char *got)
{
	cJSON *a = cJSON_Parse(expected), *b = cJSON_Parse(got);
	const char *ta, *tb, *ba, *bb;
	bool same = false;

	if (a && b && cJSON_GetObjectItem(a, "status")->valuedouble == cJSON_GetObjectItem(b, "status")->valuedouble &&
	    strcmp(ta = cJSON_GetObjectItem(a, "content_type")->valuestring,
		   tb = cJSON_GetObjectItem(b, "content_type")->valuestring) == 0) {
		ba = cJSON_GetObjectItem(a, "body")->valuestring;
		bb = cJSON_GetObjectItem(b, "body")->valuestring;
		if (json_type(ta)) {
			cJSON *ja = cJSON_Parse(ba), *jb = cJSON_Parse(bb);

			same = ja && jb ? json_same(ja, jb, NULL) : strcmp(ba, bb) == 0;
			cJSON_Delete(ja);
			cJSON_Delete(jb);
		} else if (strncmp(ta, "text/plain", 10) == 0) {
			same = same_figures(ba, bb);
		} else {
			same = strcmp(ba, bb) == 0;
		}
	}
	(void)tb;
	cJSON_Delete(a);
	cJSON_Delete(b);
	return same;
}

/* Two outputs of a command line alike. A plan's (cases plan_*): its JSON document as json_same, its text for people
 * by its figures, the exit status exactly. Every other output byte for byte: --help (the options' documentation),
 * --print-args (an engine's command line), routes, the roofline's tables and SVG. */
static bool cli_same(const char *name, const char *expected, const char *got)
{
	const char *ea = strstr(expected, "[exit "), *eb = strstr(got, "[exit ");
	char *da, *db;
	bool same;

	if (strncmp(name, "plan", 4) != 0 || strstr(name, "print_args") || ea == NULL || eb == NULL)
		return strcmp(expected, got) == 0;
	if (strcmp(strrchr(expected, '['), strrchr(got, '[')) != 0)
		return false;
	da = strndup(expected, (size_t)(strrchr(expected, '[') - expected));
	db = strndup(got, (size_t)(strrchr(got, '[') - got));
	assert_non_null(da);
	assert_non_null(db);
	if (da[0] == '{' && db[0] == '{') {
		cJSON *ja = cJSON_Parse(da), *jb = cJSON_Parse(db);

		same = ja && jb ? json_same(ja, jb, NULL) : strcmp(da, db) == 0;
		cJSON_Delete(ja);
		cJSON_Delete(jb);
	} else {
		same = same_figures(da, db);
	}
	free(da);
	free(db);
	return same;
}

/* json_same of two JSON texts, for the test below (the trees are freed). */
static bool texts_same(const char *a, const char *b)
{
	cJSON *ja = cJSON_Parse(a), *jb = cJSON_Parse(b);
	bool same;

	assert_non_null(ja);
	assert_non_null(jb);
	same = json_same(ja, jb, NULL);
	cJSON_Delete(ja);
	cJSON_Delete(jb);
	return same;
}

/* The comparison itself: wording may move, figures, members and verdicts may not. */
static void test_golden_comparison(void **state)
{
	(void)state;
	/* a note reworded, its figures kept */
	assert_true(texts_same("{\"a\":1,\"notes\":[\"Byte counts are per GPU (8,192 tokens).\"]}", "{\"a\":1,\"notes\":[\"Every byte count is one GPU's; 8,192 tokens.\"]}"));
	/* a figure in a note changed */
	assert_false(texts_same("{\"notes\":[\"552,402,944 bytes\"]}", "{\"notes\":[\"552,402,945 bytes\"]}"));
	/* a member renamed, a number changed, an enum value changed, a warning more */
	assert_false(texts_same("{\"total_bytes\":1}", "{\"total\":1}"));
	assert_false(texts_same("{\"total_bytes\":1}", "{\"total_bytes\":2}"));
	assert_false(texts_same("{\"bound\":\"memory\"}", "{\"bound\":\"compute\"}"));
	assert_false(texts_same("{\"warnings\":[\"a\"]}", "{\"warnings\":[\"a\",\"b\"]}"));
	/* a problem's message reworded, its field kept; its field changed */
	assert_true(texts_same("{\"errors\":[{\"field\":\"/x\",\"message\":\"must be 1 to 4\"}]}", "{\"errors\":[{\"field\":\"/x\",\"message\":\"an integer from 1 to 4\"}]}"));
	assert_false(texts_same("{\"errors\":[{\"field\":\"/x\",\"message\":\"m\"}]}", "{\"errors\":[{\"field\":\"/y\",\"message\":\"m\"}]}"));
	/* a text for people: the verdict and the figures */
	assert_true(same_figures("FITS: 17.6 GB (16.4 GiB) per GPU", "FITS: 17.6 GB (16.4 GiB) for each GPU"));
	assert_false(same_figures("FITS: 17.6 GB", "DOES NOT FIT: 17.6 GB"));
	assert_false(same_figures("headroom -1.5e9 B", "headroom 1.5e9 B"));
	assert_false(same_figures("16.4 GiB per GPU", "16.4 MiB per GPU"));
	assert_true(same_figures("16.4 GiB, 91.1% of it", "16.4 GiB; 91.1% of the total"));
	assert_false(same_figures("h200-sxm-141gb FITS", "h100-sxm5-80gb FITS"));
	assert_false(same_figures("precision mixed_bf16", "precision mixed_fp16"));
	assert_true(cli_same("plan", "text 1\n[exit 0]\n", "words 1\n[exit 0]\n"));
	assert_false(cli_same("plan", "text 1\n[exit 0]\n", "text 1\n[exit 1]\n"));
	assert_false(cli_same("help_plan", "Usage: a\n[exit 0]\n", "Usage: b\n[exit 0]\n"));
	assert_false(cli_same("plan_print_args_vllm", "vllm serve a\n[exit 0]\n", "vllm serve b\n[exit 0]\n"));
}


static void test_http_golden(void **state)
{
	http_fixture *fx = *state;
	char *cases = read_text(GOLDEN_DIR "/http_cases.jsonl"), *expected = recording() ? NULL
						: read_text(GOLDEN_DIR "/http_expected.jsonl");
	FILE *rec = recording() ? fopen(GOLDEN_DIR "/http_expected.jsonl", "w") : NULL;
	char *line, *save = NULL, *eline = NULL, *esave = NULL;
	int n = 0, bad = 0, reworded = 0;

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
			if (eline != NULL && strcmp(eline, text) != 0 && !strict() && http_same(eline, text)) {
				reworded++;
			} else if (eline == NULL || strcmp(eline, text) != 0) {
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
	fprintf(stderr, "%d golden HTTP cases, %d differ, %d in wording only%s\n", n, bad, reworded,
		rec ? " (recorded)" : "");
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
	int n = 0, bad = 0, reworded = 0;

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
			if (expected != NULL && strcmp(expected, masked) != 0 && !strict() &&
			    cli_same(name, expected, masked)) {
				reworded++;
			} else if (expected == NULL || strcmp(expected, masked) != 0) {
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
	fprintf(stderr, "%d golden CLI cases, %d differ, %d in wording only%s\n", n, bad, reworded,
		recording() ? " (recorded)" : "");
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
		cmocka_unit_test(test_golden_comparison),
		cmocka_unit_test_setup_teardown(test_http_golden, http_fixture_setup, http_fixture_teardown),
		cmocka_unit_test(test_cli_golden),
		cmocka_unit_test(test_cli_help),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
