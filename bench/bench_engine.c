/*
 * bench_engine.c: the serving-engine figures, measured. (1) For every real start-up log of tests/data/engines
 * (the issue reports its README names), memplan's plan for the same launch beside each figure the engine printed:
 * reported, predicted, the difference, and whether the log's own figures agree by the engine's arithmetic. (2) The
 * log reader's cost: a synthetic log of unrelated lines around three real ones, read N times. Not a test (the
 * tests hold the arithmetic; this prints how far the modelled terms are): figures go to bench/RESULTS.md.
 * Run from the repository root: make bench-engine
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../codec/codec.h"
#include "../codec/mpc_json.h"
#include "../service/service.h"

#define RTX3090 \
	"{\"name\":\"RTX 3090 (vllm #10517)\",\"memory_bytes\":25769803776,\"usable_memory_bytes\":25318829015," \
	"\"memory_bandwidth_bytes_per_second\":936e9,\"peak_flops_per_second\":{\"bf16\":71e12}}"

#define H100_7922 \
	"{\"name\":\"H100 80GB (79.22 GiB as CUDA reports it)\",\"memory_bytes\":85899345920,"         \
	"\"usable_memory_bytes\":85061853676,\"memory_bandwidth_bytes_per_second\":3.35e12,"                \
	"\"peak_flops_per_second\":{\"bf16\":989e12}}"

/* Each log with the plan of its launch, as its README row states it (unknown GPUs: an H100), and the engine's
 * release line. `stated` marks the logs whose GPU, model and settings the report states: the ones the accuracy
 * summary counts. */
static const struct {
	const char *engine, *file, *plan;
	const char *launch;	/* what the report states of the GPU and the budget */
	bool stated;
	/* a stated log whose launch adds memory no engine term covers: kept in the table, counted apart */
	const char *out_of_scope;
} runs[] = {
	{"vllm", "vllm-10517-llama31-8b-rtx3090-20k.log",
	 "{\"model\":\"llama-3.1-8b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":256,"
	 "\"sequence_length\":20000,\"chunked_prefill\":false,\"engine_version\":\"0.6\",\"device\":" RTX3090 "}",
	 "RTX 3090, 0.90, vLLM 0.6", true, NULL},
	{"vllm", "vllm-10517-llama31-8b-rtx3090-29k.log",
	 "{\"model\":\"llama-3.1-8b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":256,"
	 "\"sequence_length\":29000,\"chunked_prefill\":false,\"engine_version\":\"0.6\",\"device\":" RTX3090 "}",
	 "RTX 3090, 0.90, vLLM 0.6", true, NULL},
	{"vllm", "vllm-10511-llama3-8b-h100-table.log",
	 "{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":256,"
	 "\"sequence_length\":8192,\"chunked_prefill\":false,\"engine_version\":\"0.6\",\"device\":" H100_7922 "}",
	 "H100 (79.22 GiB), 0.90, vLLM 0.6.5 defaults", true, NULL},
	{"vllm", "vllm-13061-r1-qwen14b-2x4090-tp2.log",
	 "{\"model\":\"qwen2.5-14b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":256,"
	 "\"sequence_length\":131072,\"max_num_batched_tokens\":2048,\"gpu_memory_utilization\":0.98,"
	 "\"num_gpus\":2,\"engine_version\":\"0.7\",\"device\":\"rtx-4090-24gb\"}",
	 "2 x RTX 4090, TP 2, 0.98, vLLM 0.7 (V0)", true, NULL},
	{"vllm", "vllm-lmcache1739-qwen3-14b.log", "qwen3-14b.json:32768:bf16:1:0.11",
	 "not stated (H100, 0.9 assumed), vLLM 0.11", false, NULL},
	{"vllm", "vllm-25350-fp8kv-100k.log", "qwen3-30b-a3b.json:100000:fp8:1:0.11",
	 "not stated (H100, 0.9 assumed), vLLM 0.11", false, NULL},
	{"vllm", "vllm-25350-fp8kv-221k.log", "qwen3-30b-a3b.json:221000:fp8:1:0.11",
	 "not stated (H100, 0.9 assumed), vLLM 0.11", false, NULL},
	{"vllm", "vllm-21348-qwen3-235b-tp4.log", "qwen3-235b-a22b.json:40960:bf16:4:0.11",
	 "4 x H100, 0.9, an LMCache KV connector, vLLM 0.10 (V1)", true,
	 "the LMCache KV connector (--kv-transfer-config LMCacheConnectorV1) allocates its own GPU buffers in the "
	 "worker before vLLM sizes the KV cache: memory of a plug-in, not of vLLM, and the log prints no term of it"},
	{"sglang", "sglang-21348-qwen3-235b-tp4.log", "qwen3-235b-a22b.json:40960:bf16:4:0.5", "4 x H100, 0.93", true, NULL},
};

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *t = NULL;
	long n;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (t = malloc((size_t)n + 1)) != NULL) {
		size_t got = fread(t, 1, (size_t)n, f);

		t[got] = '\0';
	}
	fclose(f);
	return t;
}

/* "config.json:length:kv:tp:version" -> a plan on an H100 with that inline config; else the JSON text itself. */
static cJSON *plan_of(const char *spec, const char *engine)
{
	char cfg[64], kv[16], path[128], ver[16];
	unsigned long len, tp;
	cJSON *p, *m;
	char *text;

	if (spec[0] == '{')
		return cJSON_Parse(spec);
	if (sscanf(spec, "%63[^:]:%lu:%15[^:]:%lu:%15s", cfg, &len, kv, &tp, ver) != 5)
		return NULL;
	snprintf(path, sizeof(path), "tests/data/%s", cfg);
	text = slurp(path);
	if (text == NULL)
		return NULL;
	p = cJSON_CreateObject();
	m = cJSON_AddObjectToObject(p, "model");
	cJSON_AddItemToObject(m, "hf_config", cJSON_Parse(text));
	free(text);
	cJSON_AddStringToObject(p, "weight_dtype", strstr(cfg, "235b") ? "fp8_e4m3" : "bf16");
	cJSON_AddStringToObject(p, "kv_cache_dtype", kv);
	cJSON_AddNumberToObject(p, "batch_size", 1);
	cJSON_AddNumberToObject(p, "sequence_length", (double)len);
	cJSON_AddNumberToObject(p, "tensor_parallel_size", (double)tp);
	cJSON_AddTrueToObject(p, "allow_beyond_max_position_embeddings");
	cJSON_AddStringToObject(p, "device", "h100-sxm5-80gb");
	cJSON_AddStringToObject(p, "engine", engine);
	cJSON_AddStringToObject(p, "engine_version", ver);
	if (strcmp(engine, "sglang") == 0)
		cJSON_AddNumberToObject(p, "mem_fraction_static", 0.93);
	return p;
}

/* The relative errors of one class of figures over the stated logs, for the summary. */
typedef struct errs {
	const char *what;
	double v[64];
	size_t n;
} errs;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void summary(errs *e)
{
	double worst = 0, med;

	if (e->n == 0) {
		printf("| %s | 0 | | |\n", e->what);
		return;
	}
	for (size_t i = 0; i < e->n; i++)
		worst = e->v[i] > worst ? e->v[i] : worst;
	qsort(e->v, e->n, sizeof(e->v[0]), cmp_double);
	med = e->n % 2 ? e->v[e->n / 2] : (e->v[e->n / 2 - 1] + e->v[e->n / 2]) / 2;
	printf("| %s | %zu | %.2f%% | %.2f%% |\n", e->what, e->n, 100 * med, 100 * worst);
}

static void table(mps_service *svc)
{
	errs kv = {"KV pool (blocks, tokens, available KV memory)", {0}, 0}, w = {"weights", {0}, 0};
	errs kv_all = {"KV pool, the out-of-scope logs included", {0}, 0};

	printf("| log | GPU, budget | figure | reported | predicted | difference | within rounding | log consistent |"
	       " explained by |\n");
	printf("|---|---|---|---:|---:|---:|---|---|---|\n");
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		char path[160];
		char *log;
		cJSON *body = cJSON_CreateObject(), *doc = NULL, *f;
		mps_engine_check_request *rq = calloc(1, sizeof(*rq));
		mps_engine_check *c = malloc(sizeof(*c));
		mp_error err = MP_ERROR_INIT;
		mp_status st;

		snprintf(path, sizeof(path), "tests/data/engines/%s", runs[i].file);
		log = slurp(path);
		if (log == NULL || rq == NULL || c == NULL) {
			fprintf(stderr, "bench_engine: cannot read %s (run from the repository root)\n", path);
			exit(1);
		}
		cJSON_AddStringToObject(body, "engine", runs[i].engine);
		cJSON_AddStringToObject(body, "log", log);
		cJSON_AddItemToObject(body, "plan", plan_of(runs[i].plan, runs[i].engine));
		st = mpc_engine_check_decode(body, rq, &err);
		if (st == MP_OK)
			st = mps_engine_check_run(svc, rq, c, &err);
		if (st == MP_OK) {
			mpc_out w;

			mpc_out_init(&w);
			mpc_engine_check_write(&w, rq, c);
			doc = mpc_out_parse(&w);
		}
		if (doc == NULL) {
			fprintf(stderr, "bench_engine: %s: %s %s\n", runs[i].file, err.field, err.message);
			exit(1);
		}
		cJSON_ArrayForEach(f, cJSON_GetObjectItem(doc, "figures"))
		{
			const cJSON *pr = cJSON_GetObjectItem(f, "predicted"), *cons = cJSON_GetObjectItem(f, "consistent");
			double rep = cJSON_GetObjectItem(f, "reported")->valuedouble;

			const char *name = cJSON_GetObjectItem(f, "figure")->valuestring;
			const cJSON *why = cJSON_GetObjectItem(f, "explained_by");

			printf("| %s | %s | %s | %g |", runs[i].file, runs[i].launch, name, rep);
			if (cJSON_IsNumber(pr)) {
				double rel = pr->valuedouble ? (rep - pr->valuedouble) / fabs(pr->valuedouble) : 0.0;

				printf(" %.6g | %+.2f%% | %s |", pr->valuedouble, 100 * rel,
				       cJSON_IsTrue(cJSON_GetObjectItem(f, "within_tolerance")) ? "yes" : "no");
				bool kv_figure = strcmp(name, "num_gpu_blocks") == 0 || strcmp(name, "kv_cache_tokens") == 0 ||
						 strcmp(name, "available_kv_cache_gib") == 0;

				if (runs[i].stated && kv_figure && runs[i].out_of_scope == NULL && kv.n < 64)
					kv.v[kv.n++] = fabs(rel);
				if (runs[i].stated && kv_figure && kv_all.n < 64)
					kv_all.v[kv_all.n++] = fabs(rel);
				if (runs[i].stated && strcmp(name, "weights_loaded_gib") == 0 && w.n < 64)
					w.v[w.n++] = fabs(rel);
			} else {
				printf(" (not modelled) | | |");
			}
			printf(" %s | %s |\n", cJSON_IsBool(cons) ? (cJSON_IsTrue(cons) ? "yes" : "NO") : "",
			       cJSON_IsString(why) ? why->valuestring : "");
		}
		cJSON_Delete(doc);
		cJSON_Delete(body);
		free(log);
		free(c);
		mpc_engine_check_request_release(rq);
		free(rq);
	}
	printf("\nOn the logs whose GPU, model and settings the report states (|reported - predicted| / predicted):\n\n");
	printf("| figures | count | median | worst |\n|---|---:|---:|---:|\n");
	summary(&kv);
	summary(&w);
	summary(&kv_all);
	printf("\nOut of scope (in the table, not in the first line):\n");
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
		if (runs[i].out_of_scope)
			printf("- %s: %s\n", runs[i].file, runs[i].out_of_scope);
}

/* The reader on a log of `lines` unrelated lines with the three V1 lines in the middle. */
static void reader_cost(int lines, int reps)
{
	static const char real[] = "Available KV cache memory: 6.51 GiB\nGPU KV cache size: 42,656 tokens\n"
				   "Maximum concurrency for 32,768 tokens per request: 1.30x\n";
	size_t cap = (size_t)lines * 120 + sizeof(real), n = 0;
	char *text = malloc(cap);
	static mps_engine_report r;
	struct timespec t0, t1;
	mp_error err = MP_ERROR_INIT;
	double ms;

	if (text == NULL)
		exit(1);
	for (int i = 0; i < lines; i++) {
		if (i == lines / 2)
			n += (size_t)snprintf(text + n, cap - n, "%s", real);
		n += (size_t)snprintf(text + n, cap - n,
				      "INFO 10-03 16:22:%02d [core.py:%d] an unrelated line with 1.23 GiB and %d tokens\n",
				      i % 60, i, i);
	}
	(void)mpc_engine_report_parse(MP_ENGINE_VLLM, "warm-up", false, "/log", &r, &err); /* compiles the patterns */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int k = 0; k < reps; k++)
		if (mpc_engine_report_parse(MP_ENGINE_VLLM, text, false, "/log", &r, &err) != MP_OK || r.nfigures != 3)
			exit(1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = ((double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6) / reps;
	printf("reader: %zu bytes, %u lines, %d reads: %.3f ms per read (%.1f MB/s), %zu figures\n", n, r.lines, reps, ms,
	       (double)n / 1e6 / (ms / 1e3), r.nfigures);
	free(text);
}

int main(void)
{
	char dir[] = "/tmp/memplan-bench-engine-XXXXXX", db[64];
	mps_service *svc = NULL;
	mp_error err = MP_ERROR_INIT;

	mpc_json_init(NULL);
	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(db, sizeof(db), "%s/m.db", dir);
	if (mps_open(db, &svc, &err) != MP_OK) {
		fprintf(stderr, "bench_engine: %s\n", err.message);
		return 1;
	}
	table(svc);
	printf("\n");
	reader_cost(10, 2000);
	reader_cost(10000, 20);
	mps_close(svc);
	unlink(db);
	rmdir(dir);
	return 0;
}
