/*
 * bench_fit.c: how fast POST /v1/fit answers a scheduler-sized batch: ~10,000 job x device pairs (435 jobs x the
 * 24 stored devices, 4 GPU counts each), and the largest batch the daemon takes (4,000 jobs x 25 devices x 16 GPU
 * counts: 1.6 million rows). Measures the handler's work alone (decode, plan, write the text) and the whole HTTP
 * round trip against an in-process daemon; prints medians and extremes, and job x device x GPU-count evaluations
 * per second (one thread: per core). Not a test: figures go to bench/RESULTS.md. Run: make bench-store
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "../codec/codec.h"
#include "../daemon/respcache.h"
#include "../tests/http_util.h"

#define RUNS 21

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* jobs cycling through stored models, batch sizes 1-64 and lengths 1,024-4,096 (within every model's context:
 * phi-3-mini-4k has 4,096 positions); every fifth job is a training job. */
static char *make_body(int jobs, const char *gpu_counts, const char *devices)
{
	static const char *const models[] = { "llama-3-8b", "llama-3.1-70b", "qwen2.5-7b", "mixtral-8x7b", "gemma-7b",
					      "qwen2.5-72b-instruct", "mistral-7b-v0.1", "phi-3-mini-4k" };
	size_t cap = (size_t)jobs * 256 + 4096, used = 0;
	char *b = malloc(cap);

	used += (size_t)snprintf(b + used, cap - used, "{\"gpu_counts\":%s,%s%s%s\"jobs\":[", gpu_counts,
				 devices ? "\"devices\":" : "", devices ? devices : "", devices ? "," : "");
	for (int i = 0; i < jobs; i++) {
		const char *m = models[i % 8];

		if (i % 5 == 4)
			used += (size_t)snprintf(b + used, cap - used,
						 "%s{\"id\":\"job-%d\",\"training\":{\"model\":\"%s\",\"precision\":"
						 "\"mixed_bf16\",\"optimizer\":\"adamw\",\"micro_batch_size\":1,"
						 "\"sequence_length\":4096}}",
						 i ? "," : "", i, m);
		else
			used += (size_t)snprintf(b + used, cap - used,
						 "%s{\"id\":\"job-%d\",\"inference\":{\"model\":\"%s\",\"weight_dtype\":"
						 "\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":%d,"
						 "\"sequence_length\":%d}}",
						 i ? "," : "", i, m, 1 << (i % 7), 1024 << (i % 3));
	}
	snprintf(b + used, cap - used, "]}");
	return b;
}

static void report(const char *what, double *t, int n, double evaluations)
{
	qsort(t, (size_t)n, sizeof(*t), cmp);
	printf("%-58s median %7.2f ms  min %7.2f ms  max %7.2f ms", what, t[n / 2] * 1e3, t[0] * 1e3, t[n - 1] * 1e3);
	if (evaluations > 0)
		printf("  %.2f million evaluations/s (median)", evaluations / t[n / 2] / 1e6);
	printf("\n");
}

static size_t discard(char *p, size_t size, size_t n, void *ctx)
{
	(void)p;
	*(size_t *)ctx += size * n;
	return size * n;
}

/* POST body to path, counting the answer's bytes without keeping them (a scheduler reads it as it arrives). */
static long post_discard(const mpd_daemon *d, const char *path, const char *body, size_t *bytes)
{
	CURL *c = curl_easy_init();
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
	char url[128];
	long status = 0;

	*bytes = 0;
	snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", d->bound_port, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, bytes);
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	return status;
}

/* Decodes, fits and writes body `runs` times in process, then sends it `runs` times over HTTP (response cache off:
 * every answer computed). */
static void run(mpd_daemon *d, const char *label, int jobs, const char *gpu_counts, const char *devices, int runs)
{
	char *body = make_body(jobs, gpu_counts, devices), name[128];
	cJSON *req = cJSON_Parse(body);
	double fn[RUNS] = { 0 }, http[RUNS] = { 0 }, rows = 0;
	size_t bytes = 0, pairs = 0;
	mp_error err = MP_ERROR_INIT;

	for (int r = 0; r < runs; r++) {
		double t0 = now();
		char *printed;
		mps_fit_request rq;
		mpc_fit_writer *w;

		if (mpc_fit_decode(req, &rq, &err) != MP_OK || (w = mpc_fit_writer_new(&rq)) == NULL ||
		    mps_fit(d->svc, &rq, mpc_fit_sink(), w, &err) != MP_OK) {
			fprintf(stderr, "fit failed: %s %s\n", err.field, err.message);
			exit(1);
		}
		printed = mpc_fit_writer_finish(w);
		fn[r] = now() - t0;
		bytes = strlen(printed);
		{
			cJSON *a = cJSON_Parse(printed);

			pairs = (size_t)cJSON_GetObjectItem(a, "pairs")->valuedouble;
			rows = (double)pairs * (double)rq.ngpu_counts;
			cJSON_Delete(a);
		}
		mpc_fit_request_free(&rq);
		free(printed);
	}
	for (int r = 0; r < runs; r++) {
		size_t got;
		double t0 = now();
		long status = post_discard(d, "/v1/fit", body, &got);

		http[r] = now() - t0;
		if (status != 200 || got != bytes) {
			fprintf(stderr, "HTTP %ld, %zu bytes\n", status, got);
			exit(1);
		}
	}
	printf("%s: %d jobs, %zu job x device pairs, %.0f rows, request %zu bytes, response %zu bytes\n", label, jobs,
	       pairs, rows, strlen(body), bytes);
	snprintf(name, sizeof(name), "  fit: decode, service, write (in process, one thread)");
	report(name, fn, runs, rows);
	snprintf(name, sizeof(name), "  POST /v1/fit over HTTP (libcurl, loopback)");
	report(name, http, runs, rows);
	cJSON_Delete(req);
	free(body);
}

int main(void)
{
	static const char all_presets[] = /* the 24 presets and one inline profile */
		"[\"v100-sxm2-32gb\",\"t4-16gb\",\"a10-24gb\",\"a100-sxm4-40gb\",\"a100-sxm4-80gb\","
		"\"a100-pcie-40gb\",\"a100-pcie-80gb\",\"l4-24gb\",\"l40s-48gb\",\"rtx-3090-24gb\","
		"\"rtx-4090-24gb\",\"h100-sxm5-80gb\",\"h100-pcie-80gb\",\"h100-nvl-94gb\",\"h200-sxm-141gb\","
		"\"h200-nvl-141gb\",\"b200-180gb\",\"gb200-186gb\",\"mi250x-gcd-64gb\",\"mi300x-192gb\","
		"\"mi325x-256gb\",\"gaudi2-96gb\",\"gaudi3-128gb\",\"h200-sxm-141gb-measured\","
		"{\"name\":\"inline\",\"memory_bytes\":85899345920,\"memory_bandwidth_bytes_per_second\":2e12,"
		"\"peak_flops_per_second\":{\"bf16\":5e14}}]";
	mpd_daemon d;
	char dir[64];
	double t[RUNS];

	curl_global_init(CURL_GLOBAL_DEFAULT);
	http_start(&d, dir, sizeof(dir));
	mpd_respcache_free(d.respcache); /* every HTTP answer computed, not a repeat from the cache */
	d.respcache = NULL;
	run(&d, "gpu_counts [1,2,4,8]", 435, "[1,2,4,8]", NULL, RUNS);
	run(&d, "gpu_counts [1]", 435, "[1]", NULL, RUNS);
	run(&d, "the largest fit: 16 GPU counts, 25 devices", 4000, "[1,2,3,4,5,6,7,8,10,12,16,24,32,48,64,128]",
	    all_presets, 5);
	for (int r = 0; r < RUNS; r++) {
		http_resp resp;
		double t0 = now();

		http_do(&d, "GET", "/v1/capacity?model=llama-3-8b&sequence_length=4096", NULL, NULL, NULL, &resp);
		t[r] = now() - t0;
		http_resp_free(&resp);
	}
	report("GET /v1/capacity (24 devices) over HTTP", t, RUNS, 0);
	http_stop(&d, dir);
	curl_global_cleanup();
	return 0;
}
