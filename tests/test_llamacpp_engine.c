/*
 * test_llamacpp_engine.c: engines llamacpp and ollama in an inference plan and in POST /v1/engine-check, against the
 * real llama.cpp: every command memplan gives is held to the argument parser of the program it names (the flags and
 * enumerated values its --help printed, tests/ref/llamacpp/help, and, where the build is here, the program itself
 * parsing the command with --help appended); the logs llama.cpp printed when it ran memplan's commands
 * (tests/data/engines/llamacpp, tests/llamacpp/real.py --record) go through the engine check, whose model, KV and
 * output buffers and cache sizes must equal the plan's to the printed digit. Ollama 0.32.15's rules (its source at
 * that tag: server/routes.go, server/sched.go, llm/llama_server.go) are checked on their worked examples; Ollama
 * itself cannot be installed here.
 */
#include <dirent.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <spawn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "../codec/codec.h"
#include "../service/service.h"
#include "lib_util.h"
#include "refs.h"

extern char **environ;

static mps_service *svc;
static char dir[] = "/tmp/memplan-llamacpp-XXXXXX";

static int setup(void **state)
{
	char path[64];
	mp_error err = MP_ERROR_INIT;

	(void)state;
	mpc_json_init(NULL);
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/m.db", dir);
	return mps_open(path, &svc, &err) == MP_OK ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[96];

	(void)state;
	mps_close(svc);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* ----- helpers -------------------------------------------------------------------------------------------- */

/* The base64 (RFC 4648, OpenSSL's EVP_EncodeBlock) of n bytes; caller frees. */
static char *b64(const unsigned char *p, size_t n)
{
	char *o;

	assert_true(n <= (size_t)INT_MAX / 4 * 3);
	o = malloc(4 * ((n + 2) / 3) + 1);
	assert_non_null(o);
	EVP_EncodeBlock((unsigned char *)o, p, (int)n);
	return o;
}

/* {"gguf_header": base64 of tests/ref/llamacpp/models/<name>.gguf.hdr} */
static cJSON *gguf_model(const char *name)
{
	char rel[160], *text;
	size_t len;
	unsigned char *buf;
	cJSON *m = cJSON_CreateObject();

	snprintf(rel, sizeof(rel), "llamacpp/models/%s.gguf.hdr", name);
	buf = (unsigned char *)ref_read(ref_path(rel), &len);
	if (buf == NULL)
		fail_msg("cannot read %s", rel);
	text = b64(buf, len);
	cJSON_AddStringToObject(m, "gguf_header", text);
	free(text);
	free(buf);
	return m;
}

static cJSON *answer(const char *kind, const cJSON *body, mp_status *st, mp_error *err)
{
	char *out = NULL;
	cJSON *doc;

	*st = lib_answer(svc, kind, body, &out, err);
	if (*st != MP_OK)
		return NULL;
	doc = cJSON_Parse(out);
	free(out);
	assert_non_null(doc);
	return doc;
}

static cJSON *plan_ok(const cJSON *body)
{
	mp_error err = MP_ERROR_INIT;
	mp_status st;
	cJSON *doc = answer("inference", body, &st, &err);

	if (st != MP_OK)
		fail_msg("plan: %s: %s", err.field, err.message);
	return doc;
}

/* A body on a reference GGUF; extra (JSON text) merged in. */
static cJSON *body_of(const char *model, const char *engine, const char *extra)
{
	cJSON *b = extra ? cJSON_Parse(extra) : cJSON_CreateObject();

	assert_non_null(b);
	cJSON_AddItemToObject(b, "model", gguf_model(model));
	if (!cJSON_GetObjectItem(b, "batch_size"))
		cJSON_AddNumberToObject(b, "batch_size", 1);
	if (!cJSON_GetObjectItem(b, "sequence_length"))
		cJSON_AddNumberToObject(b, "sequence_length", 4096);
	cJSON_AddStringToObject(b, "engine", engine);
	return b;
}

/* o's member at a dotted path ("engine.placement.devices.1.model_bytes"; a number indexes an array). */
static const cJSON *path(const cJSON *o, const char *dotted)
{
	const char *k = dotted;

	while (o && *k) {
		const char *dot = strchr(k, '.');
		size_t n = dot ? (size_t)(dot - k) : strlen(k);
		char key[96];
		char *end;
		long idx;

		snprintf(key, sizeof(key), "%.*s", (int)n, k);
		idx = strtol(key, &end, 10);
		o = *end == '\0' && n > 0 ? cJSON_GetArrayItem(o, (int)idx) : cJSON_GetObjectItemCaseSensitive(o, key);
		k += n + (dot != NULL);
	}
	return o;
}

static double num_at(const cJSON *o, const char *dotted)
{
	const cJSON *v = path(o, dotted);

	if (!cJSON_IsNumber(v))
		fail_msg("%s is not a number", dotted);
	return v->valuedouble;
}

static const char *str_at(const cJSON *o, const char *dotted)
{
	const cJSON *v = path(o, dotted);

	if (!cJSON_IsString(v))
		fail_msg("%s is not a string", dotted);
	return v->valuestring;
}

static char *data_text(const char *rel)
{
	char p[320];
	size_t len;
	char *t;

	snprintf(p, sizeof(p), "tests/data/%s", rel);
	t = ref_read(p, &len);
	if (t == NULL)
		fail_msg("cannot read %s (run from the worktree root)", p);
	return t;
}

/* ----- llama.cpp's argument parser, as its --help printed it -------------------------------------------------- */

#define MAX_FLAGS 1024

typedef struct help_flag {
	char name[48];
	char values[24][24];	/* the enumerated values its entry names ("allowed values: ...", "[on|off|auto]",
				 * "- none:" lines); none: any value */
	int nvalues;
} help_flag;

typedef struct help_table {
	help_flag flags[MAX_FLAGS];
	int n;
} help_table;

static void add_value(help_flag *f, const char *v, size_t n)
{
	if (f->nvalues < 24 && n > 0 && n < 24) {
		memcpy(f->values[f->nvalues], v, n);
		f->values[f->nvalues][n] = '\0';
		f->nvalues++;
	}
}

/* The values of a list "a, b, c" or "a|b|c". */
static void add_list(help_flag *f, const char *s, const char *seps)
{
	while (*s) {
		size_t n = strcspn(s, seps);
		while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == ']'))
			n--;
		while (n > 0 && (*s == ' ' || *s == '['))
			s++, n--;
		add_value(f, s, n);
		s += strcspn(s, seps);
		s += strspn(s, seps);
	}
}

/* Reads tests/ref/llamacpp/help/<program>.txt: each entry's flags (the line's text before its description, which
 * starts after two spaces at column 38 or later) and enumerated values. */
static help_table *help_of(const char *program)
{
	char rel[128], *text, *line, *next;
	help_table *t = calloc(1, sizeof(*t));
	int first = -1, last = -1; /* the flags of the current entry */

	assert_non_null(t);
	snprintf(rel, sizeof(rel), "llamacpp/help/%s.txt", program);
	text = ref_text(rel);
	for (line = text; line && *line; line = next) {
		char *nl = strchr(line, '\n');
		next = nl ? nl + 1 : NULL;
		if (nl)
			*nl = '\0';
		if (line[0] == '#')
			continue;
		if (strncmp(line, "-----", 5) == 0) /* "----- common params -----" */
			continue;
		if (line[0] == '-') {
			size_t cut = strlen(line);
			for (size_t i = 38; i + 1 < strlen(line); i++)
				if (line[i] == ' ' && line[i + 1] == ' ') {
					cut = i;
					break;
				}
			first = t->n;
			for (size_t i = 0; i < cut;) {
				size_t n;
				while (i < cut && (line[i] == ' ' || line[i] == ','))
					i++;
				n = 0;
				while (i + n < cut && line[i + n] != ' ' && line[i + n] != ',')
					n++;
				if (n > 1 && line[i] == '-' && n < 48 && t->n < MAX_FLAGS &&
				    ((line[i + 1] >= 'a' && line[i + 1] <= 'z') || (line[i + 1] >= 'A' && line[i + 1] <= 'Z') ||
				     line[i + 1] == '-')) {
					memcpy(t->flags[t->n].name, line + i, n);
					t->flags[t->n].name[n] = '\0';
					t->n++;
				}
				i += n;
			}
			last = t->n;
			{
				/* [a|b|c] or {a,b,c} on the flag line */
				char *br = strchr(line, '['), *cb = strchr(line, '{');
				char *open = br && (size_t)(br - line) < cut ? br : cb && (size_t)(cb - line) < cut ? cb : NULL;
				if (open) {
					char close = *open == '[' ? ']' : '}', list[128];
					char *end = strchr(open, close);
					if (end && end - open < (long)sizeof(list)) {
						snprintf(list, sizeof(list), "%.*s", (int)(end - open - 1), open + 1);
						for (int k = first; k < last; k++) {
							t->flags[k].nvalues = 0;
							add_list(&t->flags[k], list, *open == '[' ? "|" : ",");
						}
					}
				}
			}
			continue;
		}
		if (first < 0)
			continue;
		{
			/* the entry's description: "allowed values: a, b" and "- name: ..." lines */
			const char *av = strstr(line, "allowed values: ");
			const char *dash = line + strspn(line, " ");
			for (int k = first; k < last && av; k++)
				add_list(&t->flags[k], av + 16, ",");
			if (dash[0] == '-' && dash[1] == ' ' && strchr(dash, ':')) {
				const char *v = dash + 2;
				size_t n = strcspn(v, ":");
				for (int k = first; k < last; k++)
					add_value(&t->flags[k], v, n);
			}
		}
	}
	free(text);
	return t;
}

static const help_flag *flag_in(const help_table *t, const char *name)
{
	for (int i = 0; i < t->n; i++)
		if (strcmp(t->flags[i].name, name) == 0)
			return &t->flags[i];
	return NULL;
}

/* Every flag of the engine block's args is one the program's parser takes, and an enumerated value one it names. */
static void args_in_help(const cJSON *engine, const char *program)
{
	help_table *t = help_of(program);
	const cJSON *a;

	cJSON_ArrayForEach(a, cJSON_GetObjectItem(engine, "args"))
	{
		const char *flag = cJSON_GetObjectItem(a, "flag")->valuestring;
		const cJSON *v = cJSON_GetObjectItem(a, "value");
		const help_flag *f = flag_in(t, flag);

		if (f == NULL)
			fail_msg("%s: %s is not an argument of its parser (tests/ref/llamacpp/help/%s.txt)", program, flag,
				 program);
		if (f->nvalues && cJSON_IsString(v)) {
			bool ok = false;
			for (int i = 0; i < f->nvalues; i++)
				ok = ok || strcmp(f->values[i], v->valuestring) == 0;
			if (!ok)
				fail_msg("%s %s %s: its parser takes %s (and %d more)", program, flag, v->valuestring,
					 f->values[0], f->nvalues - 1);
		}
	}
	free(t);
}

/* The folder of the llama.cpp build (tools/groundtruth/llamacpp/build.sh), NULL when it is not here. */
static const char *llama_bin(void)
{
	static char b[512];
	const char *env = getenv("LLAMACPP_BIN"), *cache = getenv("LLAMACPP_CACHE");
	char probe[600];

	if (env && env[0])
		snprintf(b, sizeof(b), "%s", env);
	else
		snprintf(b, sizeof(b), "%s/build-cpu/bin", cache && cache[0] ? cache : "/work/cache/gguf");
	snprintf(probe, sizeof(probe), "%s/llama-server", b);
	return access(probe, X_OK) == 0 ? b : NULL;
}

/* The program parses the engine block's command with --help appended: exit 0 when every argument parsed. -1 when
 * the build is not here. */
static int dry_parse(const cJSON *engine, const char *program)
{
	const char *bin = llama_bin();
	char exe[600], *argv[64];
	int argc = 0, status = 0, devnull;
	posix_spawn_file_actions_t fa;
	pid_t pid;
	const cJSON *a;

	if (bin == NULL)
		return -1;
	snprintf(exe, sizeof(exe), "%s/%s", bin, program);
	argv[argc++] = exe;
	argv[argc++] = strcmp(program, "llama-server") == 0 && strcmp(str_at(engine, "name"), "ollama") == 0 ? "--model"
														      : "-m";
	argv[argc++] = "/nonexistent/MODEL.gguf"; /* the parser does not open it */
	cJSON_ArrayForEach(a, cJSON_GetObjectItem(engine, "args"))
	{
		const cJSON *v = cJSON_GetObjectItem(a, "value");
		assert_true(argc < 60);
		argv[argc++] = cJSON_GetObjectItem(a, "flag")->valuestring;
		if (cJSON_IsString(v))
			argv[argc++] = strcmp(v->valuestring, "PORT") == 0 ? "8080" : v->valuestring;
	}
	argv[argc++] = "--help";
	argv[argc] = NULL;
	posix_spawn_file_actions_init(&fa);
	devnull = open("/dev/null", O_WRONLY);
	assert_true(devnull >= 0);
	posix_spawn_file_actions_adddup2(&fa, devnull, 1);
	posix_spawn_file_actions_adddup2(&fa, devnull, 2);
	assert_int_equal(posix_spawn(&pid, exe, &fa, NULL, argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	close(devnull);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Both checks of one plan's command. */
static void command_parses(const cJSON *doc, int *parsed, int *skipped)
{
	const cJSON *e = cJSON_GetObjectItem(doc, "engine");
	const char *name = str_at(e, "name");
	const char *program = strcmp(name, "ollama") == 0 ? "llama-server" : str_at(e, "program");
	int rc;

	args_in_help(e, program);
	rc = dry_parse(e, program);
	if (rc < 0) {
		(*skipped)++;
		return;
	}
	if (rc != 0)
		fail_msg("%s refused memplan's command (exit %d): %s", program, rc,
			 strcmp(name, "ollama") == 0 ? str_at(e, "ollama.llama_server_command") : str_at(e, "command"));
	(*parsed)++;
}

/* ----- the commands against llama.cpp's parsers ------------------------------------------------------------- */

static void test_commands_parse(void **state)
{
	static const struct {
		const char *model, *engine, *extra;
	} grid[] = {
		{ "llama-q4_k_m", "llamacpp", "{\"device\": \"rtx-4090-24gb\"}" },
		{ "llama-q4_k_m", "llamacpp",
		  "{\"device\": \"rtx-4090-24gb\", \"engine_options\": {\"program\": \"llama-completion\", \"cache_type_k\": "
		  "\"q8_0\", \"cache_type_v\": \"q8_0\", \"flash_attention\": \"on\", \"n_batch\": 1024, \"n_ubatch\": 256}}" },
		{ "llama-q4_k_m", "llamacpp",
		  "{\"device\": \"rtx-4090-24gb\", \"engine_options\": {\"program\": \"llama-cli\", \"gpu_layers\": 3, "
		  "\"mmap\": false, \"repack\": false, \"kv_offload\": false, \"flash_attention\": \"off\"}}" },
		{ "qwen2-q8_0", "llamacpp",
		  "{\"device\": \"a10-24gb\", \"num_gpus\": 2, \"batch_size\": 4, \"sequence_length\": 1024, "
		  "\"sequence_length_scope\": \"shared\", \"engine_options\": {\"tensor_split\": [3, 1], \"cache_type_k\": "
		  "\"q5_1\", \"cache_type_v\": \"iq4_nl\"}}" },
		{ "mixtral-q4_k_m", "llamacpp", "{\"device\": \"l4-24gb\", \"engine_options\": {\"n_cpu_moe\": 2}}" },
		{ "qwen3_moe-q6_k", "llamacpp", "{\"device\": \"l4-24gb\", \"engine_options\": {\"cpu_moe\": true}}" },
		{ "gemma3-q4_k_m", "llamacpp", "{\"engine_options\": {\"swa_full\": true, \"cache_type_k\": \"bf16\"}}" },
		{ "gpt2-q8_0", "llamacpp", "{\"batch_size\": 3, \"sequence_length\": 512}" },
		{ "gemma3-q4_k_m", "ollama", "{\"device\": \"rtx-4090-24gb\", \"batch_size\": 2}" },
		{ "phi3-q4_0", "ollama",
		  "{\"device\": \"t4-16gb\", \"engine_options\": {\"cache_type_k\": \"q8_0\", \"flash_attention\": \"on\", "
		  "\"n_batch\": 256, \"gpu_layers\": 2, \"mmap\": false}}" },
		{ "qwen3-q8_0", "ollama", "{\"engine_options\": {\"flash_attention\": \"off\", \"gpu_layers\": 0}}" },
	};
	int parsed = 0, skipped = 0;
	(void)state;

	for (size_t i = 0; i < sizeof(grid) / sizeof(grid[0]); i++) {
		cJSON *b = body_of(grid[i].model, grid[i].engine, grid[i].extra), *doc = plan_ok(b);

		command_parses(doc, &parsed, &skipped);
		cJSON_Delete(doc);
		cJSON_Delete(b);
	}
	if (skipped)
		printf("  %d commands held to tests/ref/llamacpp/help; the programs' own parse skipped: llama.cpp is not "
		       "built here (tools/groundtruth/llamacpp/build.sh; LLAMACPP_BIN names a build)\n",
		       (int)(sizeof(grid) / sizeof(grid[0])));
	else
		printf("  %d commands held to tests/ref/llamacpp/help and parsed by llama.cpp 0c1e5709's own programs\n",
		       parsed);
}

/* ----- the recorded runs: llama.cpp's log of memplan's command through the engine check ----------------------- */

static cJSON *check_of(const char *case_name, bool drop_launch, mp_status *st, mp_error *err)
{
	char rel[256], *log, *meta_text, model[96];
	cJSON *meta, *plan, *body, *doc;
	const char *m, *slash;

	snprintf(rel, sizeof(rel), "engines/llamacpp/%s.json", case_name);
	meta_text = data_text(rel);
	meta = cJSON_Parse(meta_text);
	free(meta_text);
	assert_non_null(meta);
	snprintf(rel, sizeof(rel), "engines/llamacpp/%s.log", case_name);
	log = data_text(rel);
	plan = cJSON_DetachItemFromObject(meta, "plan");
	m = cJSON_GetObjectItem(meta, "model")->valuestring;
	slash = strrchr(m, '/');
	snprintf(model, sizeof(model), "%.*s", (int)(strlen(slash + 1) - 5), slash + 1); /* "llama-q4_k_m" */
	cJSON_AddItemToObject(plan, "model", gguf_model(model));
	if (drop_launch) {
		/* what the check takes from the log: the layers, the GPUs, the backend */
		cJSON *eo = cJSON_GetObjectItem(plan, "engine_options");
		cJSON_DeleteItemFromObject(plan, "device");
		if (eo) {
			cJSON_DeleteItemFromObject(eo, "gpu_layers");
			cJSON_DeleteItemFromObject(eo, "backend");
		}
	}
	body = cJSON_CreateObject();
	cJSON_AddStringToObject(body, "engine",
				cJSON_GetObjectItem(plan, "engine") ? cJSON_GetObjectItem(plan, "engine")->valuestring
								    : "llamacpp");
	cJSON_AddStringToObject(body, "log", log);
	cJSON_AddItemToObject(body, "plan", plan);
	doc = answer("engine-check", body, st, err);
	free(log);
	cJSON_Delete(body);
	cJSON_Delete(meta);
	return doc;
}

static void test_recorded_logs(void **state)
{
	DIR *d = opendir("tests/data/engines/llamacpp");
	struct dirent *e;
	int cases = 0, figures = 0;
	(void)state;

	assert_non_null(d);
	printf("  %-30s %8s %8s  %s\n", "run", "figures", "exact", "compute buffers (printed / predicted MiB)");
	while ((e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);
		char name[256], comp[512];
		const cJSON *f;
		mp_error err = MP_ERROR_INIT;
		mp_status st;
		cJSON *doc;
		size_t used = 0;

		if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(n - 5), e->d_name);
		doc = check_of(name, false, &st, &err);
		if (st != MP_OK)
			fail_msg("%s: %s: %s", name, err.field, err.message);
		comp[0] = '\0';
		cJSON_ArrayForEach(f, cJSON_GetObjectItem(doc, "figures"))
		{
			const char *kind = str_at(f, "figure");
			const cJSON *w = cJSON_GetObjectItem(f, "within_tolerance");
			bool exact = strcmp(str_at(f, "basis"), "llama.cpp's arithmetic") == 0;

			if (exact && !cJSON_IsTrue(w))
				fail_msg("%s line %d: %s printed %g, the plan %g", name, (int)num_at(f, "line"), kind,
					 num_at(f, "reported"), num_at(f, "predicted"));
			if (strcmp(kind, "compute_buffer_mib") == 0 && cJSON_IsNumber(cJSON_GetObjectItem(f, "predicted")) &&
			    used + 32 < sizeof(comp))
				used += (size_t)snprintf(comp + used, sizeof(comp) - used, "%s%.2f/%.2f", used ? ", " : "",
							 num_at(f, "reported"), num_at(f, "predicted"));
		}
		assert_true(cJSON_IsTrue(path(doc, "summary.model_and_kv_match")));
		assert_true(num_at(doc, "summary.model_and_kv_figures") >= 3);
		printf("  %-30s %8.0f %8.0f  %s\n", name, num_at(doc, "summary.figures"),
		       num_at(doc, "summary.model_and_kv_figures"), comp);
		figures += (int)num_at(doc, "summary.model_and_kv_figures");
		cases++;
		cJSON_Delete(doc);
	}
	closedir(d);
	assert_true(cases >= 13);
	printf("  %d runs, %d model / KV / output / cache figures: each equal to what llama.cpp printed\n", cases,
	       figures);
}

/* A plan that names neither the layers, the GPUs nor the backend takes them from the log. */
static void test_launch_from_log(void **state)
{
	mp_error err = MP_ERROR_INIT;
	mp_status st;
	cJSON *doc = check_of("rpc1-llama-f16-ngl2", true, &st, &err);
	(void)state;

	if (st != MP_OK)
		fail_msg("%s: %s", err.field, err.message);
	assert_true(cJSON_IsTrue(path(doc, "summary.taken_from_log.gpu_layers")));
	assert_true(cJSON_IsTrue(path(doc, "summary.taken_from_log.num_gpus")));
	assert_true(cJSON_IsTrue(path(doc, "summary.taken_from_log.backend")));
	assert_true(cJSON_IsTrue(path(doc, "summary.model_and_kv_match")));
	assert_int_equal((int)num_at(doc, "plan.engine.placement.gpu_layers"), 2);
	assert_string_equal(str_at(doc, "plan.engine.placement.backend"), "cpu");
	cJSON_Delete(doc);
	/* the host alone: a log with no GPU buffer */
	doc = check_of("host-llama-q4_k_m", true, &st, &err);
	if (st != MP_OK)
		fail_msg("%s: %s", err.field, err.message);
	assert_true(cJSON_IsTrue(path(doc, "summary.model_and_kv_match")));
	assert_string_equal(str_at(doc, "plan.engine.placement.gpu_layers_from"), "host_only");
	cJSON_Delete(doc);
}

/* An Ollama log: its llama-server command and llama.cpp's lines after it (Ollama's own slog lines, as its text handler
 * writes them, around the recorded llama-server output). */
static void test_ollama_log(void **state)
{
	char *log = data_text("engines/llamacpp/ollama-host-qwen3-q8_0.log"), *full;
	cJSON *body = cJSON_CreateObject(), *plan, *doc;
	const cJSON *f;
	mp_error err = MP_ERROR_INIT;
	mp_status st;
	int launch = 0;
	size_t n = strlen(log) + 2048;
	(void)state;

	full = malloc(n);
	assert_non_null(full);
	/* server/routes.go and llm/llama_server.go's lines (slog text handler: time=... level=INFO source=... msg=...) */
	snprintf(full, n,
		 "time=2026-12-01T10:00:00.000Z level=INFO source=routes.go:2058 msg=\"vram-based default context\" "
		 "total_vram=\"0 B\" default_num_ctx=4096\n"
		 "time=2026-12-01T10:00:01.000Z level=INFO source=llama_server.go:433 msg=\"starting llama-server\" "
		 "cmd=\"/usr/lib/ollama/llama-server --model /root/.ollama/models/blobs/sha256-0123 --port 41234 --host "
		 "127.0.0.1 --no-webui --offline -c 4096 -np 1 --log-verbosity 4 --no-log-prefix --no-log-timestamps "
		 "--load-mode none --flash-attn auto -b 512 -ub 512 -ngl 0\"\n%s",
		 log);
	plan = body_of("qwen3-q8_0", "ollama",
		       "{\"device\": {\"name\": \"this host\", \"kind\": \"cpu\", \"memory_bytes\": 17179869184, "
		       "\"memory_bandwidth_bytes_per_second\": 2e10, \"peak_flops_per_second\": {\"fp32\": 1e11}}}");
	cJSON_AddStringToObject(body, "engine", "ollama");
	cJSON_AddStringToObject(body, "log", full);
	cJSON_AddItemToObject(body, "plan", plan);
	doc = answer("engine-check", body, &st, &err);
	if (st != MP_OK)
		fail_msg("%s: %s", err.field, err.message);
	cJSON_ArrayForEach(f, cJSON_GetObjectItem(doc, "figures"))
	{
		const char *kind = str_at(f, "figure");
		if (strncmp(kind, "launch_", 7) == 0) {
			assert_true(cJSON_IsTrue(cJSON_GetObjectItem(f, "within_tolerance")));
			launch++;
		}
	}
	assert_int_equal(launch, 5); /* -c, -np, -ngl, -b, -ub */
	assert_true(cJSON_IsTrue(path(doc, "summary.model_and_kv_match")));
	cJSON_Delete(doc);
	cJSON_Delete(body);
	free(full);
	free(log);
}

/* ----- Ollama's rules (the source at v0.32.15) ---------------------------------------------------------------- */

static void test_ollama_rules(void **state)
{
	const uint64_t GiB = UINT64_C(1) << 30, MiB = UINT64_C(1) << 20;
	cJSON *b, *doc;
	(void)state;

	/* server/routes.go: >= 47 GiB 262144, >= 23 GiB 32768, else 4096 */
	assert_int_equal(mp_ollama_default_num_ctx(24 * GiB), 32768);
	assert_int_equal(mp_ollama_default_num_ctx(23 * GiB), 32768);
	assert_int_equal(mp_ollama_default_num_ctx(23 * GiB - 1), 4096);
	assert_int_equal(mp_ollama_default_num_ctx(UINT64_C(85520809984)), 262144); /* an H100 */
	assert_int_equal(mp_ollama_default_num_ctx(0), 4096);
	/* server/sched.go automaticGenerationBatch */
	assert_int_equal(mp_ollama_auto_num_batch(32768, 4 * GiB, 24 * GiB, false, true, 24 * GiB), 1024);
	assert_int_equal(mp_ollama_auto_num_batch(40000, 4 * GiB, 24 * GiB, false, true, 24 * GiB), 2048);
	assert_int_equal(mp_ollama_auto_num_batch(40000, 16 * GiB, 24 * GiB, false, true, 24 * GiB), 1024);
	assert_int_equal(mp_ollama_auto_num_batch(40000, 19 * GiB, 24 * GiB, false, true, 24 * GiB), 512);
	assert_int_equal(mp_ollama_auto_num_batch(4096, 1 * GiB, 24 * GiB, false, true, 24 * GiB), 512);
	assert_int_equal(mp_ollama_auto_num_batch(8192, 1 * GiB, 8 * GiB, true, true, 8 * GiB), 256);
	assert_int_equal(mp_ollama_auto_num_batch(8192, 1 * GiB, 8 * GiB, true, false, 8 * GiB), 1024);
	assert_int_equal(mp_ollama_auto_num_batch(4096, 1 * GiB, 8 * GiB, true, true, 8 * GiB), 512);
	assert_int_equal(mp_ollama_auto_num_batch(40000, 1 * GiB, 0, false, true, 0), 2048); /* nothing known: fits */
	/* llm/llama_server.go PredictServerVRAM: file + 2 x layers x kv heads x head dim x ctx x 2 */
	assert_int_equal(mp_ollama_predict_server_vram(1000, 32, 8, 128, 8192), 1000 + UINT64_C(2) * 32 * 8 * 128 * 8192 * 2);
	assert_int_equal(mp_ollama_predict_server_vram(0, 4, 0, 64, 4096), UINT64_C(2) * 4 * 1 * 64 * 4096 * 2);
	(void)MiB;

	/* through the plan: gemma3 (6 layers, 1 KV head, head 64) on a 24 GiB RTX 4090, two slots of 4,096 */
	b = body_of("gemma3-q4_k_m", "ollama", "{\"device\": \"rtx-4090-24gb\", \"batch_size\": 2}");
	doc = plan_ok(b);
	assert_int_equal((int)num_at(doc, "engine.ollama.default_num_ctx"), 32768);
	assert_int_equal((int)num_at(doc, "engine.ollama.options.num_ctx"), 4096);
	assert_int_equal((int)num_at(doc, "engine.ollama.options.num_batch"), 1024); /* 8,192 cells: above 4,096 */
	assert_string_equal(str_at(doc, "engine.ollama.num_batch_from"), "ollama_automatic");
	assert_string_equal(str_at(doc, "engine.ollama.environment.OLLAMA_NUM_PARALLEL"), "2");
	assert_int_equal((int)num_at(doc, "engine.context.n_ctx"), 8192);
	assert_int_equal((int)num_at(doc, "engine.context.n_ubatch"), 1024);
	assert_string_equal(str_at(doc, "engine.command"), "OLLAMA_NUM_PARALLEL=2 ollama serve");
	assert_non_null(strstr(str_at(doc, "engine.ollama.llama_server_command"), " -c 8192 -np 2 "));
	assert_non_null(strstr(str_at(doc, "engine.ollama.llama_server_command"), " -b 1024 -ub 1024 "));
	cJSON_Delete(doc);
	cJSON_Delete(b);
	/* on a host without a GPU Ollama loads without mmap (sched.go disableMmapDefaultReason "cpu") */
	b = body_of("qwen3-q8_0", "ollama",
		    "{\"device\": {\"name\": \"h\", \"kind\": \"cpu\", \"memory_bytes\": 17179869184, "
		    "\"memory_bandwidth_bytes_per_second\": 2e10, \"peak_flops_per_second\": {\"fp32\": 1e11}}, "
		    "\"engine_options\": {\"cache_type_k\": \"q8_0\", \"flash_attention\": \"on\"}}");
	doc = plan_ok(b);
	assert_non_null(strstr(str_at(doc, "engine.ollama.llama_server_command"), " --load-mode none "));
	assert_string_equal(str_at(doc, "engine.command"),
			    "OLLAMA_FLASH_ATTENTION=1 OLLAMA_KV_CACHE_TYPE=q8_0 OLLAMA_NUM_PARALLEL=1 ollama serve");
	assert_string_equal(str_at(doc, "engine.context.cache_type_v"), "q8_0"); /* one type for both */
	cJSON_Delete(doc);
	cJSON_Delete(b);
}

/* engine_options' one cache type is the plan's kv_cache_dtype (the top-level memory is of the cache the command makes:
 * it was fp16 beside -ctk q8_0 -ctv q8_0); K and V apart keep kv_cache_dtype and say so; a kv_cache_dtype given
 * beside another type is a 422 naming it. */
static void test_cache_types_are_the_plan(void **state)
{
	cJSON *b, *doc;
	mp_error err = MP_ERROR_INIT;
	mp_status st;
	const cJSON *w;
	bool said = false;

	(void)state;
	b = body_of("llama-q4_k_m", "llamacpp", "{\"engine_options\": {\"cache_type_k\": \"q8_0\", \"cache_type_v\": \"q8_0\"}}");
	doc = plan_ok(b);
	assert_string_equal(str_at(doc, "request.kv_cache_dtype"), "q8_0");
	assert_string_equal(str_at(doc, "request.kv_cache_dtype_from"), "engine_options");
	assert_true(num_at(doc, "memory.kv_cache_bytes") == num_at(doc, "engine.placement.devices.1.kv_cache_bytes"));
	cJSON_Delete(doc);
	cJSON_Delete(b);
	b = body_of("llama-q4_k_m", "llamacpp", "{\"engine_options\": {\"cache_type_k\": \"q8_0\", \"cache_type_v\": \"q4_0\"}}");
	doc = plan_ok(b);
	assert_string_equal(str_at(doc, "request.kv_cache_dtype"), "fp16");
	cJSON_ArrayForEach(w, cJSON_GetObjectItem(doc, "warnings"))
	{
		said |= strstr(w->valuestring, "the command's cache is -ctk q8_0 -ctv q4_0") != NULL;
	}
	assert_true(said);
	cJSON_Delete(doc);
	cJSON_Delete(b);
	/* a file's format is the type of most of its matrices' values (GPT-2's f32 token embedding outweighs its q4_0
	 * layers in bytes only: it was labelled fp32) */
	b = body_of("gpt2-q4_0", "llamacpp", "{\"sequence_length\": 1024}");
	doc = plan_ok(b);
	assert_string_equal(str_at(doc, "request.weight_dtype"), "q4_0");
	cJSON_Delete(doc);
	cJSON_Delete(b);
	b = body_of("llama-q4_k_m", "llamacpp",
		    "{\"kv_cache_dtype\": \"q4_0\", \"engine_options\": {\"cache_type_k\": \"q8_0\", \"cache_type_v\": \"q8_0\"}}");
	assert_null(answer("inference", b, &st, &err));
	assert_int_equal(st, MP_EINVAL);
	assert_string_equal(err.field, "/kv_cache_dtype");
	assert_non_null(strstr(err.message, "disagree"));
	cJSON_Delete(b);
}

/* ----- bad input ------------------------------------------------------------------------------------------- */

static void refused(const char *model, const char *engine, const char *extra, const char *field, const char *words)
{
	cJSON *b = body_of(model, engine, extra);
	mp_error err = MP_ERROR_INIT;
	mp_status st;
	cJSON *doc = answer("inference", b, &st, &err);

	cJSON_Delete(doc);
	cJSON_Delete(b);
	if (st != MP_EINVAL)
		fail_msg("%s %s: expected a 422 at %s, got status %d (%s)", engine, extra, field, st, err.message);
	assert_string_equal(err.field, field);
	if (strstr(err.message, words) == NULL)
		fail_msg("%s: \"%s\" lacks \"%s\"", field, err.message, words);
}

static void test_refusals(void **state)
{
	(void)state;
	refused("llama-q8_0", "vllm", "{\"engine_options\": {\"gpu_layers\": 3}}", "/engine_options", "llamacpp or ollama");
	refused("llama-q8_0", "ollama", "{\"engine_options\": {\"tensor_split\": [1, 1]}}", "/engine_options/tensor_split",
		"Ollama passes no -ts");
	refused("llama-q8_0", "ollama", "{\"engine_options\": {\"n_ubatch\": 128}}", "/engine_options/n_ubatch", "-b and -ub");
	refused("llama-q8_0", "ollama", "{\"engine_options\": {\"cache_type_k\": \"q8_0\", \"cache_type_v\": \"q4_0\"}}",
		"/engine_options/cache_type_v", "one type for K and V");
	refused("llama-q8_0", "llamacpp", "{\"engine_options\": {\"cache_type_k\": \"q9\"}}", "/engine_options/cache_type_k",
		"f32, f16, bf16, q8_0");
	refused("llama-q8_0", "llamacpp",
		"{\"engine_options\": {\"cache_type_v\": \"q8_0\", \"flash_attention\": \"off\"}}",
		"/engine_options/cache_type_v", "needs flash attention");
	refused("llama-q8_0", "llamacpp", "{\"batch_size\": 2, \"engine_options\": {\"program\": \"llama-completion\"}}",
		"/batch_size", "decodes one sequence");
	refused("llama-q8_0", "llamacpp", "{\"kv_cache_dtype\": \"fp8_e4m3\"}", "/kv_cache_dtype", "no fp8_e4m3 cache");
	refused("llama-q8_0", "llamacpp", "{\"engine_options\": {\"cpu_moe\": true, \"n_cpu_moe\": 2}}",
		"/engine_options/n_cpu_moe", "not both");
	refused("llama-q8_0", "llamacpp", "{\"engine_options\": {\"tensor_split\": [1, 1]}}", "/engine_options/tensor_split",
		"one per GPU");
	refused("llama-q8_0", "llamacpp", "{\"device\": \"gaudi2-96gb\"}", "/engine_options/backend", "cuda or cpu");
	refused("llama-q8_0", "ollama", "{\"sequence_length_scope\": \"shared\", \"batch_size\": 2}",
		"/sequence_length_scope", "per_sequence");
	{
		/* a model that is not a GGUF file */
		cJSON *b = cJSON_Parse("{\"model\": \"llama-3-8b\", \"batch_size\": 1, \"sequence_length\": 1024, "
				       "\"engine\": \"llamacpp\"}");
		mp_error err = MP_ERROR_INIT;
		mp_status st;
		cJSON *doc = answer("inference", b, &st, &err);

		assert_null(doc);
		assert_int_equal(st, MP_EINVAL);
		assert_string_equal(err.field, "/model");
		assert_non_null(strstr(err.message, "gguf_header"));
		cJSON_Delete(b);
	}
}

/* ----- the placement and its speed ----------------------------------------------------------------------------- */

static void test_placement_and_speed(void **state)
{
	cJSON *b, *doc;
	(void)state;

	/* the llama reference in q8_0 wholly on a GPU of 1e12 B/s and 1e14 FLOP/s: the decode step reads every tensor but
	 * the embedding table (4,465,664 - 557,056 bytes) and 4,095 cached cells of 4 layers x 512 bytes */
	b = body_of("llama-q8_0", "llamacpp",
		    "{\"device\": {\"name\": \"g\", \"vendor\": \"NVIDIA\", \"memory_bytes\": 8589934592, "
		    "\"memory_bandwidth_bytes_per_second\": 1e12, \"peak_flops_per_second\": {\"fp16\": 1e14}}}");
	doc = plan_ok(b);
	assert_int_equal((int)num_at(doc, "engine.placement.gpu_layers"), 5);
	assert_string_equal(str_at(doc, "engine.placement.gpu_layers_from"), "largest_that_fits");
	assert_true(cJSON_IsTrue(path(doc, "engine.placement.fits")));
	assert_int_equal((int64_t)num_at(doc, "engine.performance.devices.1.decode_bytes"),
			 4465664 - 557056 + 4095 * 4 * 512);
	assert_true(ref_close(num_at(doc, "engine.performance.decode_step_seconds"),
			      (4465664.0 - 557056 + 4095.0 * 4 * 512) / 1e12, 1e-9));
	assert_string_equal(str_at(doc, "engine.performance.devices.1.decode_bound"), "memory");
	/* the host holds no layer: its gather bounds nothing, and no host profile is needed */
	assert_string_equal(str_at(doc, "engine.performance.devices.0.decode_bound"), "none");
	cJSON_Delete(doc);
	cJSON_Delete(b);

	/* two layers on the GPU, the rest on the host: the host's time needs a host profile */
	b = body_of("llama-q8_0", "llamacpp", "{\"device\": \"rtx-4090-24gb\", \"engine_options\": {\"gpu_layers\": 2}}");
	doc = plan_ok(b);
	assert_true(cJSON_IsNull(path(doc, "engine.performance.decode_step_seconds")));
	assert_string_equal(str_at(doc, "engine.performance.devices.0.decode_bound"), "unknown");
	cJSON_Delete(doc);
	cJSON_AddItemToObject(cJSON_GetObjectItem(b, "engine_options"), "host_device",
			      cJSON_Parse("{\"name\": \"epyc\", \"kind\": \"cpu\", \"memory_bytes\": 68719476736, "
					  "\"memory_bandwidth_bytes_per_second\": 1e11, \"peak_flops_per_second\": {\"fp32\": "
					  "2e12}}"));
	doc = plan_ok(b);
	assert_true(num_at(doc, "engine.performance.decode_step_seconds") > 0);
	assert_true(num_at(doc, "engine.performance.devices.0.decode_seconds") >
		    num_at(doc, "engine.performance.devices.1.decode_seconds"));
	assert_string_equal(str_at(doc, "engine.performance.host_profile"), "epyc");
	assert_true(cJSON_IsTrue(path(doc, "engine.placement.devices.0.fits")));
	cJSON_Delete(doc);
	cJSON_Delete(b);

	/* a budget the whole model does not fit (20,000,000 bytes beside the CUDA context of 552,402,944): the largest -ngl
	 * that does */
	b = body_of("llama-f16", "llamacpp",
		    "{\"device\": {\"name\": \"small\", \"vendor\": \"NVIDIA\", \"memory_bytes\": 572402944, "
		    "\"memory_bandwidth_bytes_per_second\": 1e12, \"peak_flops_per_second\": {\"fp16\": 1e14}}, "
		    "\"engine_options\": {\"gpu_margin_bytes\": 0}}");
	doc = plan_ok(b);
	{
		int ngl = (int)num_at(doc, "engine.placement.gpu_layers");
		double total = num_at(doc, "engine.placement.devices.1.total_bytes");
		cJSON *more = cJSON_Duplicate(b, true), *d2;

		assert_true(ngl > 0 && ngl < 5);
		assert_true(total <= 20000000);
		/* one layer more does not fit */
		cJSON_AddNumberToObject(cJSON_GetObjectItem(more, "engine_options"), "gpu_layers", ngl + 1);
		d2 = plan_ok(more);
		assert_true(num_at(d2, "engine.placement.devices.1.total_bytes") > 20000000);
		assert_false(cJSON_IsTrue(path(d2, "engine.placement.fits")));
		cJSON_Delete(d2);
		cJSON_Delete(more);
	}
	cJSON_Delete(doc);
	cJSON_Delete(b);

	/* two GPUs, every layer: pipeline parallelism keeps 4 copies of the graph's inputs; a GPU a byte short of that
	 * plan: llama.cpp retries without it (llama-context.cpp sched_reserve), every layer still on the GPUs, said once */
	b = body_of("llama-f16", "llamacpp",
		    "{\"device\": {\"name\": \"g\", \"vendor\": \"NVIDIA\", \"memory_bytes\": 8589934592, "
		    "\"memory_bandwidth_bytes_per_second\": 1e12, \"peak_flops_per_second\": {\"fp16\": 1e14}}, "
		    "\"num_gpus\": 2, \"sequence_length\": 2048, \"engine_options\": {\"gpu_margin_bytes\": 0}}");
	doc = plan_ok(b);
	{
		double ctx = num_at(doc, "engine.placement.cuda_context_bytes");
		double t1 = num_at(doc, "engine.placement.devices.1.total_bytes");
		double t2 = num_at(doc, "engine.placement.devices.2.total_bytes");
		double c1 = num_at(doc, "engine.placement.devices.1.compute_bytes"), c1_flat;
		cJSON *d2, *w;
		bool said = false;

		assert_int_equal((int)num_at(doc, "engine.placement.gpu_layers"), 5);
		cJSON_ReplaceItemInObject(cJSON_GetObjectItem(b, "device"), "memory_bytes",
					  cJSON_CreateNumber(ctx + (t1 > t2 ? t1 : t2) - 1));
		d2 = plan_ok(b);
		assert_int_equal((int)num_at(d2, "engine.placement.gpu_layers"), 5);
		assert_true(cJSON_IsTrue(path(d2, "engine.placement.fits")));
		c1_flat = num_at(d2, "engine.placement.devices.1.compute_bytes");
		/* the first GPU's split inputs kept 4 times: the mask (2 MiB) 3 times more, the gathered embeddings (512 KiB)
		 * and the positions (2 KiB) 4 times beside the moment */
		printf("  two GPUs: compute %.0f bytes with pipeline parallelism, %.0f in llama.cpp's retry\n", c1, c1_flat);
		assert_true(c1 - c1_flat == 3.0 * 2097152 + 4.0 * (524288 + 2048));
		cJSON_ArrayForEach(w, cJSON_GetObjectItem(d2, "warnings"))
			said |= strstr(w->valuestring, "retrying without pipeline parallelism") != NULL;
		assert_true(said);
		cJSON_Delete(d2);
		/* the same -ngl given: the same retry */
		cJSON_AddNumberToObject(cJSON_GetObjectItem(b, "engine_options"), "gpu_layers", 5);
		d2 = plan_ok(b);
		assert_string_equal(str_at(d2, "engine.placement.gpu_layers_from"), "request");
		assert_true(cJSON_IsTrue(path(d2, "engine.placement.fits")));
		assert_true(num_at(d2, "engine.placement.devices.1.compute_bytes") == c1_flat);
		cJSON_Delete(d2);
	}
	cJSON_Delete(doc);
	cJSON_Delete(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_commands_parse), cmocka_unit_test(test_recorded_logs),
		cmocka_unit_test(test_launch_from_log), cmocka_unit_test(test_ollama_log),
		cmocka_unit_test(test_ollama_rules),   cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_placement_and_speed), cmocka_unit_test(test_cache_types_are_the_plan),
	};
	if (getenv("MEMPLAN_TEST_FILTER"))
		cmocka_set_test_filter(getenv("MEMPLAN_TEST_FILTER"));
	return cmocka_run_group_tests(tests, setup, teardown);
}
