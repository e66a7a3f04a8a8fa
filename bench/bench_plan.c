/*
 * bench_plan.c: the per-request cost of POST /v1/plan/inference without HTTP: parses the bench-load body (strictly,
 * as the daemon does), decodes it, plans it with the service against a fresh store and writes the answer's text,
 * N times (default 5,000): the handler's path (daemon/h_plan.c). Meant to run
 * under `valgrind --tool=callgrind` (instruction counts are repeatable on a shared machine); also prints the
 * wall time per request. Not a test: figures go to bench/RESULTS.md. Run: make bench-plan [N=5000]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../codec/codec.h"
#include "../codec/mpc_json.h"
#include "../service/service.h"

static const char body_text[] = "{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\","
				"\"batch_size\":1,\"sequence_length\":4096,\"device\":\"h200-sxm-141gb\"}";

int main(int argc, char **argv)
{
	int n = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 5000;
	char path[] = "/tmp/memplan-bench-plan-XXXXXX";
	char db[sizeof(path) + 16];
	mps_service *svc = NULL;
	mps_inference_request *rq = malloc(sizeof(*rq));
	mps_inference_plan *plan = malloc(sizeof(*plan));
	mp_error err = { 0 };
	struct timespec t0, t1;
	size_t bytes = 0;

	if (rq == NULL || plan == NULL || mkdtemp(path) == NULL) {
		free(rq);
		free(plan);
		return 1;
	}
	snprintf(db, sizeof(db), "%s/m.db", path);
	if (mps_open(db, &svc, &err) != MP_OK) {
		fprintf(stderr, "bench-plan: %s\n", err.message);
		free(rq);
		free(plan);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < n; i++) {
		cJSON *body = NULL;
		char *text = NULL;
		size_t len = 0;

		/* the handler's path: the strict parse, decode, plan, the answer written as text (daemon/h_plan.c) */
		if (mpc_parse_body(body_text, sizeof(body_text) - 1, &body, &err) != MP_OK ||
		    mpc_inference_decode(body, "", true, rq, &err) != MP_OK || mps_plan_inference(svc, rq, plan, &err) != MP_OK ||
		    (text = mpc_inference_plan_print(rq, plan, &len)) == NULL) {
			fprintf(stderr, "bench-plan: %s: %s\n", err.field, err.message);
			return 1;
		}
		bytes += len;
		free(text);
		mpc_inference_request_release(rq);
		cJSON_Delete(body);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("bench-plan: %d requests, %.1f us each, %zu bytes each\n", n,
	       ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / 1e3 / n, bytes / (size_t)n);
	mps_close(svc);
	free(plan);
	free(rq);
	unlink(db);
	{
		char wal[sizeof(db) + 8];

		snprintf(wal, sizeof(wal), "%s-wal", db);
		unlink(wal);
		snprintf(wal, sizeof(wal), "%s-shm", db);
		unlink(wal);
	}
	rmdir(path);
	return 0;
}
