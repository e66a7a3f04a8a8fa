/*
 * store_lock.c: how long a device read waits while GET /v1/capacity pages through the store. One service over a
 * fresh store of the presets plus DEVICES copies of the H100 SXM5 profile (default 1,000: a page of capacity is
 * 1,000 devices), as the daemon holds it: one store connection for every worker thread. A thread asks capacity
 * for Llama-3-8B at 4,096 tokens over every GPU, page after page, for SECONDS (default 5); meanwhile the main
 * thread reads a device (mps_device_get: what GET /v1/devices/{id} and every plan that names a device do) about
 * every 200 us and times each read. Prints the reads' p50, p99 and maximum with the store quiet and while capacity
 * pages, and the capacity rows answered. Not a test: figures go to bench/RESULTS.md.
 * Run: make bench-store-lock [SECONDS=5] [DEVICES=1000]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../codec/codec.h"
#include "../service/service.h"

#define MAX_READS 200000

static mps_service *svc;
static atomic_int stop;
static atomic_ulong rows_answered, pages_answered;

static double now_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static const char *capacity_query(void *ctx, const char *name)
{
	(void)ctx;
	if (strcmp(name, "model") == 0)
		return "llama-3-8b";
	if (strcmp(name, "sequence_length") == 0)
		return "4096";
	return NULL;
}

static mp_status count_row(void *ctx, const mps_capacity_row *row)
{
	(void)ctx;
	(void)row;
	atomic_fetch_add(&rows_answered, 1);
	return MP_OK;
}

/* Capacity over every GPU, a page of 1,000 devices at a time, until told to stop. */
static void *capacity_loop(void *arg)
{
	mps_capacity_request *rq = malloc(sizeof(*rq));
	mps_model *model = malloc(sizeof(*model));
	char cursor[MP_STORE_ID_MAX];
	bool text;
	mp_error err = MP_ERROR_INIT;

	(void)arg;
	if (rq == NULL || model == NULL || mpc_capacity_decode(capacity_query, NULL, rq, &text, &err) != MP_OK) {
		fprintf(stderr, "bench-store-lock: capacity request: %s\n", err.message);
		exit(1);
	}
	rq->limit = MPS_CAPACITY_MAX_LIMIT;
	while (!atomic_load(&stop)) {
		if (mps_capacity(svc, rq, model, count_row, NULL, cursor, &err) != MP_OK) {
			fprintf(stderr, "bench-store-lock: capacity: %s: %s\n", err.field, err.message);
			exit(1);
		}
		atomic_fetch_add(&pages_answered, 1);
		snprintf(rq->after, sizeof(rq->after), "%s", cursor); /* "" after the last page: from the first again */
	}
	free(model);
	free(rq);
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Reads a device every 200 us for `seconds`, timing each; prints the figures under `label`. */
static void time_reads(const char *label, double seconds, double *lat)
{
	static const char *const ids[] = { "h100-sxm5-80gb", "h200-sxm-141gb", "a100-sxm4-80gb", "l40s-48gb" };
	mp_store_device *d = malloc(sizeof(*d));
	mp_error err = MP_ERROR_INIT;
	size_t n = 0;
	double end = now_seconds() + seconds;

	if (d == NULL)
		exit(1);
	while (now_seconds() < end && n < MAX_READS) {
		double t0 = now_seconds();

		if (mps_device_get(svc, ids[n % 4], d, &err) != MP_OK) {
			fprintf(stderr, "bench-store-lock: read %s: %s\n", ids[n % 4], err.message);
			exit(1);
		}
		lat[n++] = now_seconds() - t0;
		usleep(200);
	}
	qsort(lat, n, sizeof(*lat), cmp_double);
	printf("bench-store-lock: %-28s %6zu reads: p50 %8.3f ms, p99 %8.3f ms, max %8.3f ms\n", label, n,
	       lat[n / 2] * 1e3, lat[n * 99 / 100] * 1e3, lat[n - 1] * 1e3);
	free(d);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? strtod(argv[1], NULL) : 5;
	int devices = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 1000;
	char dir[] = "/tmp/memplan-bench-lock-XXXXXX", db[64], cmd[96];
	mp_store_device *d = malloc(sizeof(*d));
	double *lat = malloc(MAX_READS * sizeof(*lat));
	mp_error err = MP_ERROR_INIT;
	pthread_t th;

	if (d == NULL || lat == NULL || mkdtemp(dir) == NULL) {
		free(d);
		free(lat);
		return 1;
	}
	snprintf(db, sizeof(db), "%s/m.db", dir);
	if (mps_open(db, &svc, &err) != MP_OK || mps_device_get(svc, "h100-sxm5-80gb", d, &err) != MP_OK) {
		fprintf(stderr, "bench-store-lock: %s\n", err.message);
		free(d);
		free(lat);
		return 1;
	}
	/* copies of the H100 profile (without its aliases, which are the preset's own) */
	d->naliases = 0;
	snprintf(d->source, sizeof(d->source), "user");
	for (int i = 0; i < devices; i++) {
		snprintf(d->id, sizeof(d->id), "bench-gpu-%04d", i);
		snprintf(d->name, sizeof(d->name), "bench GPU %d", i);
		if (mps_device_put(svc, d, "bench", "/", NULL, &err) != MP_OK) {
			fprintf(stderr, "bench-store-lock: %s: %s\n", d->id, err.message);
			return 1;
		}
	}
	time_reads("store quiet", seconds / 2, lat);
	if (pthread_create(&th, NULL, capacity_loop, NULL) != 0)
		return 1;
	usleep(100000); /* the first page under way */
	time_reads("capacity paging", seconds, lat);
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	printf("bench-store-lock: capacity answered %lu pages, %lu rows (%d devices stored beside the presets)\n",
	       atomic_load(&pages_answered), atomic_load(&rows_answered), devices);
	mps_close(svc);
	free(lat);
	free(d);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : 1;
}
