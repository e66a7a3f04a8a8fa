/*
 * calib_cpu.c: the CPU calibration path, in every build: a multi-threaded STREAM-style triad (pthreads,
 * first-touch arrays, bytes read + written counted) and dgemm / sgemm through OpenBLAS. It measures and
 * reports plain values; it never stores anything and never talks JSON. Method: STREAM (McCalpin,
 * https://www.cs.virginia.edu/stream/ref.html): a = b + s c over arrays well beyond the last-level cache,
 * 24 bytes counted per element (two 8-byte reads, one 8-byte write; write-allocate traffic not counted).
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#include "../core/mp_assert.h"
#include "calib.h"

#define MiB (UINT64_C(1) << 20)

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ----- probe ------------------------------------------------------------------------------------------- */

/* Copies the value of "key<spaces>: value" from a /proc line into dst when the line has that key. */
static void proc_value(const char *line, const char *key, char *dst, size_t len)
{
	size_t k = strlen(key);
	const char *v;

	if (strncmp(line, key, k) != 0 || (line[k] != ' ' && line[k] != '\t' && line[k] != ':'))
		return;
	v = strchr(line + k, ':');
	if (v == NULL)
		return;
	v++;
	while (*v == ' ' || *v == '\t')
		v++;
	snprintf(dst, len, "%.*s", (int)strcspn(v, "\n"), v);
}

/* "32K", "4096K", "480M": sysfs cache sizes in bytes; 0 when unreadable. */
static uint64_t parse_size(const char *s)
{
	char *end = NULL;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return 0;
	switch (*end) {
	case 'K':
		return (uint64_t)v << 10;
	case 'M':
		return (uint64_t)v << 20;
	case 'G':
		return (uint64_t)v << 30;
	default:
		return (uint64_t)v;
	}
}

static uint64_t largest_cache_bytes(void)
{
	uint64_t best = 0;
	int best_level = 0;

	for (int i = 0; i < 16; i++) {
		char path[128], buf[64] = "";
		FILE *f;
		int level = 0;
		uint64_t size;

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
		f = fopen(path, "r");
		if (f == NULL)
			break;
		if (fgets(buf, sizeof(buf), f))
			level = (int)strtol(buf, NULL, 10);
		fclose(f);
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		size = fgets(buf, sizeof(buf), f) ? parse_size(buf) : 0;
		fclose(f);
		if (level > best_level || (level == best_level && size > best)) {
			best_level = level;
			best = size;
		}
	}
	return best;
}

mp_status mp_calib_cpu_probe(mp_calib_cpu_info *info, mp_error *err)
{
	char line[512], vendor[64] = "", kb[64];
	struct utsname u;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	FILE *f;

	(void)err;
	memset(info, 0, sizeof(*info));
	f = fopen("/proc/cpuinfo", "r");
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			if (info->name[0] == '\0')
				proc_value(line, "model name", info->name, sizeof(info->name));
			if (vendor[0] == '\0')
				proc_value(line, "vendor_id", vendor, sizeof(vendor));
		}
		fclose(f);
	}
	if (strcmp(vendor, "GenuineIntel") == 0)
		snprintf(info->vendor, sizeof(info->vendor), "Intel");
	else if (strcmp(vendor, "AuthenticAMD") == 0)
		snprintf(info->vendor, sizeof(info->vendor), "AMD");
	else /* a CPUID vendor string is 12 characters (three registers); ARM's /proc/cpuinfo has none */
		snprintf(info->vendor, sizeof(info->vendor), "%.31s", vendor);
	if (uname(&u) == 0)
		snprintf(info->architecture, sizeof(info->architecture), "%.31s", u.machine);
	if (info->name[0] == '\0')
		snprintf(info->name, sizeof(info->name), "%s CPU",
		         info->architecture[0] ? info->architecture : "unknown");
	info->threads = n > 0 ? (uint32_t)n : 1;
	info->llc_bytes = largest_cache_bytes();
	f = fopen("/proc/meminfo", "r");
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			kb[0] = '\0';
			proc_value(line, "MemTotal", kb, sizeof(kb));
			if (kb[0])
				info->memory_bytes = (uint64_t)strtoull(kb, NULL, 10) * 1024;
			kb[0] = '\0';
			proc_value(line, "MemAvailable", kb, sizeof(kb));
			if (kb[0])
				info->available_bytes = (uint64_t)strtoull(kb, NULL, 10) * 1024;
		}
		fclose(f);
	}
	snprintf(info->blas, sizeof(info->blas), "%s", openblas_get_config());
	return MP_OK;
}

/* ----- triad ------------------------------------------------------------------------------------------- */

enum { OP_INIT, OP_TRIAD, OP_VERIFY, OP_QUIT };

#define TRIAD_SCALAR 3.0

typedef struct pool {
	pthread_mutex_t lock;
	pthread_cond_t go, finished;
	uint64_t generation; /* bumped by the main thread for each step */
	uint32_t pending;    /* workers still busy with the current step */
	int op;
	uint32_t nthreads; /* workers that share the arrays (chunking) */
	double *a, *b, *c;
	size_t n;
	size_t bad[256]; /* per thread: VERIFY mismatches */
} pool;

typedef struct worker_arg {
	pool *p;
	uint32_t idx;
} worker_arg;

/* a = b + s c on [lo, hi). restrict lets the compiler vectorise without alias checks. */
static void triad(double *restrict a, const double *restrict b, const double *restrict c, size_t lo, size_t hi)
{
	for (size_t i = lo; i < hi; i++)
		a[i] = b[i] + TRIAD_SCALAR * c[i];
}

static void do_op(pool *p, int op, uint32_t idx, size_t lo, size_t hi)
{
	if (op == OP_INIT) {
		/* First touch by the thread that will use the pages; never zeros; a poisoned with NaN. */
		for (size_t i = lo; i < hi; i++) {
			p->a[i] = NAN;
			p->b[i] = 1.0 + (double)(i % 1021) / 1021.0;
			p->c[i] = 0.5 + (double)(i % 977) / 977.0;
		}
	} else if (op == OP_TRIAD) {
		triad(p->a, p->b, p->c, lo, hi);
	} else if (op == OP_VERIFY) {
		size_t bad = 0;

		for (size_t i = lo; i < hi; i++) {
			double want = p->b[i] + TRIAD_SCALAR * p->c[i];

			if (!(fabs(p->a[i] - want) <= 1e-12 * fabs(want)))
				bad++;
		}
		p->bad[idx] = bad;
	}
}

static void *worker(void *arg)
{
	worker_arg *w = arg;
	pool *p = w->p;
	size_t chunk = (p->n + p->nthreads - 1) / p->nthreads;
	size_t lo = (size_t)w->idx * chunk, hi = lo + chunk > p->n ? p->n : lo + chunk;
	uint64_t seen = 0;

	if (lo > p->n)
		lo = p->n;
	for (;;) {
		int op;

		pthread_mutex_lock(&p->lock);
		while (p->generation == seen)
			pthread_cond_wait(&p->go, &p->lock);
		seen = p->generation;
		op = p->op;
		pthread_mutex_unlock(&p->lock);
		if (op == OP_QUIT)
			break;
		do_op(p, op, w->idx, lo, hi);
		pthread_mutex_lock(&p->lock);
		if (--p->pending == 0)
			pthread_cond_signal(&p->finished);
		pthread_mutex_unlock(&p->lock);
	}
	return NULL;
}

/* Runs one step on every worker and returns its wall time (wake-up to last finisher). */
static double pool_step(pool *p, int op, uint32_t workers)
{
	double t0, t1;

	pthread_mutex_lock(&p->lock);
	p->op = op;
	p->pending = workers;
	p->generation++;
	t0 = now_seconds();
	pthread_cond_broadcast(&p->go);
	while (op != OP_QUIT && p->pending > 0)
		pthread_cond_wait(&p->finished, &p->lock);
	t1 = now_seconds();
	pthread_mutex_unlock(&p->lock);
	return t1 - t0;
}

static bool report(const mp_calib_ctl *ctl, double fraction, const char *suite)
{
	if (ctl == NULL || ctl->progress == NULL)
		return true;
	return ctl->progress(ctl->ctx, fraction, suite);
}

static mp_status run_stream(mp_calib_cpu_results *r, const mp_calib_ctl *ctl, double f0, double f1, mp_error *err)
{
	pool p;
	pthread_t tid[256];
	worker_arg args[256];
	uint32_t started = 0;
	double *samples = NULL;
	size_t bytes = (size_t)r->array_bytes;
	mp_status st = MP_OK;

	memset(&p, 0, sizeof(p));
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.go, NULL);
	pthread_cond_init(&p.finished, NULL);
	p.nthreads = r->threads;
	p.n = bytes / sizeof(double);
	p.a = aligned_alloc(64, bytes);
	p.b = aligned_alloc(64, bytes);
	p.c = aligned_alloc(64, bytes);
	samples = calloc(r->runs, sizeof(*samples));
	if (p.a == NULL || p.b == NULL || p.c == NULL || samples == NULL) {
		st = mp_fail(err, MP_ENOMEM, "/options/array_bytes", "cannot allocate three triad arrays of %zu bytes",
		             bytes);
		goto out;
	}
	for (; started < p.nthreads; started++) {
		args[started].p = &p;
		args[started].idx = started;
		if (pthread_create(&tid[started], NULL, worker, &args[started]) != 0) {
			st = mp_fail(err, MP_EINTERNAL, "", "cannot start triad thread %u of %u", started, p.nthreads);
			goto quit;
		}
	}
	pool_step(&p, OP_INIT, started);
	pool_step(&p, OP_TRIAD, started); /* warm-up */
	for (uint32_t i = 0; i < r->runs; i++) {
		double t;

		if (!report(ctl, f0 + (f1 - f0) * i / r->runs, "stream")) {
			r->cancelled = true;
			goto quit;
		}
		t = pool_step(&p, OP_TRIAD, started);
		samples[i] = 3.0 * sizeof(double) * (double)p.n / t;
	}
	pool_step(&p, OP_VERIFY, started);
	for (uint32_t i = 0; i < p.nthreads; i++)
		if (p.bad[i]) {
			st = mp_fail(err, MP_EINTERNAL, "", "triad check failed: %zu wrong elements in thread %u",
			             p.bad[i], i);
			goto quit;
		}
	r->triad = mp_calib_stat_of(samples, r->runs, true);
	r->suites_done |= MP_CALIB_STREAM;
quit:
	pool_step(&p, OP_QUIT, started);
	for (uint32_t i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
out:
	pthread_cond_destroy(&p.go);
	pthread_cond_destroy(&p.finished);
	pthread_mutex_destroy(&p.lock);
	free(samples);
	free(p.a);
	free(p.b);
	free(p.c);
	return st;
}

/* ----- gemm -------------------------------------------------------------------------------------------- */

/* xorshift64*: reproducible inputs in [-1, 1), never all zeros. */
static double rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return (double)((*s * UINT64_C(2685821657736338717)) >> 11) / 4503599627370496.0 - 1.0;
}

/* ||C - ref|| / ||ref|| over 64 sampled entries, ref an fp64 dot product of the same inputs. NaN -> inf. */
static double sampled_error(const void *A, const void *B, const void *C, size_t n, bool single)
{
	uint64_t s = 0x9e3779b97f4a7c15u;
	double num = 0, den = 0;

	for (int t = 0; t < 64; t++) {
		size_t i = (size_t)((rnd(&s) + 1.0) * 0.5 * (double)n) % n,
		       j = (size_t)((rnd(&s) + 1.0) * 0.5 * (double)n) % n;
		double ref = 0, got;

		for (size_t k = 0; k < n; k++)
			ref += single ? (double)((const float *)A)[i * n + k] * (double)((const float *)B)[k * n + j]
			              : ((const double *)A)[i * n + k] * ((const double *)B)[k * n + j];
		got = single ? (double)((const float *)C)[i * n + j] : ((const double *)C)[i * n + j];
		if (!isfinite(got))
			return INFINITY;
		num += (got - ref) * (got - ref);
		den += ref * ref;
	}
	return den > 0 ? sqrt(num / den) : INFINITY;
}

/* ----- the two products, each a row of gemm_kinds: its element, how it fills and multiplies, its tolerance, where its
 * results go. */
static void fill_double(void *A, void *B, void *C, size_t nn, uint64_t *seed)
{
	for (size_t i = 0; i < nn; i++) {
		((double *)A)[i] = rnd(seed);
		((double *)B)[i] = rnd(seed);
		((double *)C)[i] = NAN;
	}
}

static void fill_float(void *A, void *B, void *C, size_t nn, uint64_t *seed)
{
	for (size_t i = 0; i < nn; i++) {
		((float *)A)[i] = (float)rnd(seed);
		((float *)B)[i] = (float)rnd(seed);
		((float *)C)[i] = NAN;
	}
}

static void multiply_double(const void *A, const void *B, void *C, size_t n)
{
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0, A, (int)n, B, (int)n, 0.0,
	            C, (int)n);
}

static void multiply_float(const void *A, const void *B, void *C, size_t n)
{
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0f, A, (int)n, B, (int)n, 0.0f,
	            C, (int)n);
}

typedef enum gemm_kind { GEMM_DOUBLE, GEMM_FLOAT, GEMM_KIND_COUNT } gemm_kind;

static const struct gemm_row {
	const char *name;
	size_t element_bytes;
	uint64_t seed;
	double tolerance; /* relative error over the sampled entries */
	void (*fill)(void *A, void *B, void *C, size_t nn, uint64_t *seed);
	void (*multiply)(const void *A, const void *B, void *C, size_t n);
	size_t stat, rel_error; /* offsets of its figures in mp_calib_cpu_results */
} gemm_kinds[] = {
    [GEMM_DOUBLE] = {"dgemm", sizeof(double), 0x7654321u, 1e-10, fill_double, multiply_double,
                     offsetof(mp_calib_cpu_results, dgemm), offsetof(mp_calib_cpu_results, dgemm_rel_error)},
    [GEMM_FLOAT] = {"sgemm", sizeof(float), 0x1234567u, 1e-4, fill_float, multiply_float,
                    offsetof(mp_calib_cpu_results, sgemm), offsetof(mp_calib_cpu_results, sgemm_rel_error)},
};
MP_STATIC_ASSERT(MP_COUNT_OF(gemm_kinds) == GEMM_KIND_COUNT, "a row of gemm_kinds per gemm_kind");

static mp_status run_gemm_one(mp_calib_cpu_results *r, gemm_kind kind, const mp_calib_ctl *ctl, double f0, double f1,
                              mp_error *err)
{
	const struct gemm_row *g = &gemm_kinds[kind];
	size_t n = r->matrix_size;
	size_t bytes = n * n * g->element_bytes;
	void *A = malloc(bytes), *B = malloc(bytes), *C = malloc(bytes);
	double *samples = calloc(r->runs, sizeof(double)), flops = 2.0 * (double)n * (double)n * (double)n, e;
	uint64_t seed = g->seed;
	mp_status st = MP_OK;

	if (A == NULL || B == NULL || C == NULL || samples == NULL) {
		st = mp_fail(err, MP_ENOMEM, "/options/matrix_size", "cannot allocate three %zu x %zu matrices", n, n);
		goto out;
	}
	g->fill(A, B, C, n * n, &seed);
	for (uint32_t i = 0; i <= r->runs; i++) { /* run 0 is the warm-up */
		double t0, t1;

		if (!report(ctl, f0 + (f1 - f0) * i / (r->runs + 1), "gemm")) {
			r->cancelled = true;
			goto out;
		}
		t0 = now_seconds();
		g->multiply(A, B, C, n);
		t1 = now_seconds();
		if (i > 0)
			samples[i - 1] = flops / (t1 - t0);
	}
	e = sampled_error(A, B, C, n, kind == GEMM_FLOAT);
	*(double *)((char *)r + g->rel_error) = e;
	if (!(e <= g->tolerance)) {
		st = mp_fail(err, MP_EINTERNAL, "", "%s check failed: relative error %g over sampled entries (limit %g)",
		             g->name, e, g->tolerance);
		goto out;
	}
	*(mp_calib_stat *)((char *)r + g->stat) = mp_calib_stat_of(samples, r->runs, true);
out:
	free(A);
	free(B);
	free(C);
	free(samples);
	return st;
}

/* ----- run --------------------------------------------------------------------------------------------- */

/* The bytes of each STREAM array: the caller's (at most a sixteenth of the memory free: three arrays the kernel will
 * touch, in the daemon's process, or the OOM killer may take the daemon, since an allocation beyond memory succeeds
 * under overcommit and fails only when written), else STREAM's rule of 4 x the last-level cache per array, from
 * 64 MiB to 512 MiB (a VM may report its host's whole L3) and at most 1/16 of the available memory. The results warn
 * when an array is under 4 x LLC; bench/calibrate asks for more. Whole cache lines. */
static mp_status array_bytes_of(const mp_calib_cpu_options *o, mp_calib_cpu_results *r, mp_error *err)
{
	uint64_t want = 4 * r->info.llc_bytes, cap = r->info.available_bytes / 16;

	if (o->array_bytes && r->info.available_bytes && o->array_bytes > cap)
		return mp_fail(err, MP_EINVAL, "/options/array_bytes",
		               "array_bytes %llu is more than a sixteenth of the memory available now (%llu bytes): "
		               "at most %llu here",
		               (unsigned long long)o->array_bytes, (unsigned long long)r->info.available_bytes,
		               (unsigned long long)cap);
	want = want > 512 * MiB ? 512 * MiB : want < 64 * MiB ? 64 * MiB : want;
	if (cap >= 16 * MiB && want > cap)
		want = cap;
	r->array_bytes = (o->array_bytes ? o->array_bytes : want) & ~(uint64_t)63;
	if (r->array_bytes < MiB)
		return mp_fail(err, MP_EINVAL, "/options/array_bytes", "array_bytes must be at least 1 MiB");
	return MP_OK;
}

/* The options against their limits; the runs, threads and sizes of the run into r (after the probe). */
static mp_status run_sizes(const mp_calib_cpu_options *o, uint32_t suites, mp_calib_cpu_results *r, mp_error *err)
{
	mp_status st;

	if (suites & ~(uint32_t)MP_CALIB_CPU_SUITES)
		return mp_fail(err, MP_EINVAL, "/suites", "the cpu target runs the suites stream and gemm only");
	if (o->runs != 0 && (o->runs < MP_CALIB_MIN_RUNS || o->runs > 1000))
		return mp_fail(err, MP_EINVAL, "/options/runs", "runs must be between %u and 1000 (got %u)",
		               MP_CALIB_MIN_RUNS, o->runs);
	st = mp_calib_cpu_probe(&r->info, err);
	if (st != MP_OK)
		return st;
	r->runs = o->runs ? o->runs : 10;
	r->threads = o->threads ? o->threads : r->info.threads;
	if (r->threads > 256)
		r->threads = 256;
	r->matrix_size = o->matrix_size ? o->matrix_size : 2048;
	st = array_bytes_of(o, r, err);
	if (st != MP_OK)
		return st;
	if (r->matrix_size < 64 || r->matrix_size > MP_CALIB_CPU_MAX_MATRIX)
		return mp_fail(err, MP_EINVAL, "/options/matrix_size", "matrix_size must be between 64 and %u (got %u)",
		               MP_CALIB_CPU_MAX_MATRIX, r->matrix_size);
	return MP_OK;
}

/* dgemm then sgemm through OpenBLAS on r->threads threads, from progress f0 to 1. */
static mp_status run_gemm(mp_calib_cpu_results *r, const mp_calib_ctl *ctl, double f0, mp_error *err)
{
	double mid = f0 + (1.0 - f0) * 0.5;
	mp_status st;

	openblas_set_num_threads((int)r->threads);
	st = run_gemm_one(r, GEMM_DOUBLE, ctl, f0, mid, err);
	if (st == MP_OK && !r->cancelled)
		st = run_gemm_one(r, GEMM_FLOAT, ctl, mid, 1.0, err);
	return st;
}

mp_status mp_calib_cpu_run(const mp_calib_cpu_options *o, const mp_calib_ctl *ctl, mp_calib_cpu_results *r,
                           mp_error *err)
{
	uint32_t suites = o->suites ? o->suites : MP_CALIB_CPU_DEFAULT;
	double weight_stream, t0;
	mp_status st;

	memset(r, 0, sizeof(*r));
	st = run_sizes(o, suites, r, err);
	if (st != MP_OK)
		return st;
	weight_stream = (suites & MP_CALIB_STREAM) ? ((suites & MP_CALIB_GEMM) ? 0.5 : 1.0) : 0.0;
	if (suites & MP_CALIB_STREAM) {
		t0 = now_seconds();
		st = run_stream(r, ctl, 0.0, weight_stream, err);
		r->suite_seconds[mp_calib_suite_index(MP_CALIB_STREAM)] = now_seconds() - t0;
		if (st != MP_OK || r->cancelled)
			return st;
	}
	if (suites & MP_CALIB_GEMM) {
		t0 = now_seconds();
		st = run_gemm(r, ctl, weight_stream, err);
		r->suite_seconds[mp_calib_suite_index(MP_CALIB_GEMM)] = now_seconds() - t0;
		if (st != MP_OK || r->cancelled)
			return st;
		r->suites_done |= MP_CALIB_GEMM;
	}
	report(ctl, 1.0, "done");
	return MP_OK;
}
