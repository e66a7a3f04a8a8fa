/*
 * bench_fit.c: how fast POST /v1/fit answers a scheduler-sized batch: ~10,000 job x device pairs (435 jobs x the
 * 24 stored devices, 4 GPU counts each). Measures the handler function alone (decode, plan, encode, print) and
 * the whole HTTP round trip against an in-process daemon; prints medians and extremes. Not a test: figures go
 * to bench/RESULTS.md. Run: make bench-store
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "../codec/codec.h"
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

/* 435 jobs cycling through stored models, batch sizes and lengths; every fifth job is a training job. */
static char *make_body(int jobs, const char *gpu_counts)
{
	static const char *const models[] = { "llama-3-8b", "llama-3.1-70b", "qwen2.5-7b", "mixtral-8x7b", "gemma-7b",
					      "qwen2.5-72b-instruct", "mistral-7b-v0.1", "phi-3-mini-4k" };
	size_t cap = (size_t)jobs * 256 + 256, used = 0;
	char *b = malloc(cap);

	used += (size_t)snprintf(b + used, cap - used, "{\"gpu_counts\":%s,\"jobs\":[", gpu_counts);
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
						 i ? "," : "", i, m, 1 << (i % 7), 1024 << (i % 4));
	}
	snprintf(b + used, cap - used, "]}");
	return b;
}

static void report(const char *what, double *t, int n)
{
	qsort(t, (size_t)n, sizeof(*t), cmp);
	printf("%-58s median %7.2f ms  min %7.2f ms  max %7.2f ms\n", what, t[n / 2] * 1e3, t[0] * 1e3, t[n - 1] * 1e3);
}

static void run(mpd_daemon *d, const char *label, const char *gpu_counts)
{
	char *body = make_body(435, gpu_counts), name[128];
	cJSON *req = cJSON_Parse(body);
	double fn[RUNS], http[RUNS];
	size_t bytes = 0;
	mp_error err = MP_ERROR_INIT;

	for (int r = 0; r < RUNS; r++) {
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
		mpc_fit_request_free(&rq);
		fn[r] = now() - t0;
		bytes = strlen(printed);
		free(printed);
	}
	for (int r = 0; r < RUNS; r++) {
		http_resp resp;
		double t0 = now();

		http_do(d, "POST", "/v1/fit", body, "application/json", NULL, &resp);
		http[r] = now() - t0;
		if (resp.status != 200) {
			fprintf(stderr, "HTTP %ld\n", resp.status);
			exit(1);
		}
		http_resp_free(&resp);
	}
	printf("%s: 435 jobs x every stored device (24 presets: 10,440 pairs), request %zu bytes, response %zu bytes\n", label, strlen(body),
	       bytes);
	snprintf(name, sizeof(name), "  fit: decode, service, write (in process)");
	report(name, fn, RUNS);
	snprintf(name, sizeof(name), "  POST /v1/fit over HTTP (libcurl, loopback)");
	report(name, http, RUNS);
	cJSON_Delete(req);
	free(body);
}

int main(void)
{
	mpd_daemon d;
	char dir[64];
	double t[RUNS];

	curl_global_init(CURL_GLOBAL_DEFAULT);
	http_start(&d, dir, sizeof(dir));
	run(&d, "gpu_counts [1,2,4,8] (40,020 rows)", "[1,2,4,8]");
	run(&d, "gpu_counts [1] (10,005 rows)", "[1]");
	for (int r = 0; r < RUNS; r++) {
		http_resp resp;
		double t0 = now();

		http_do(&d, "GET", "/v1/capacity?model=llama-3-8b&sequence_length=4096", NULL, NULL, NULL, &resp);
		t[r] = now() - t0;
		http_resp_free(&resp);
	}
	report("GET /v1/capacity (24 devices) over HTTP", t, RUNS);
	http_stop(&d, dir);
	curl_global_cleanup();
	return 0;
}
