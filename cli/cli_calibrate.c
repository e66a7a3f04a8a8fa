/*
 * cli_calibrate.c: `memplan calibrate`: the request POST /v1/calibrations takes, built from the command line, run
 * here with a progress bar on a terminal (Ctrl-C cancels at the next suite boundary), then the job's table (or
 * its document with --json; --save FILE writes the document too).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../codec/mpc_calib.h"
#include "../service/mps_calib.h"
#include "cli.h"

/* Ctrl-C during `memplan calibrate` cancels the run at the next suite boundary (the only global: a signal flag). */
static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

typedef struct bar {
	bool tty;
	int last;
} bar;

/* Draws a progress bar on a terminal (stderr); stops the job on Ctrl-C. */
static bool calib_tick(void *ctx, double percent, const char *suite)
{
	bar *b = ctx;
	int filled = (int)(percent * 0.4);

	if (b->tty && (int)(percent * 10) != b->last) {
		b->last = (int)(percent * 10);
		fprintf(stderr, "\r[%-40.*s] %5.1f%% %-12s", filled, "########################################", percent,
			suite);
		fflush(stderr);
	}
	return !stop_requested;
}

static bool parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end = NULL;
	unsigned long long v;

	if (s == NULL || *s == '-')
		return false;
	v = strtoull(s, &end, 10);
	if (end == s || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

/* The suites of one mask as "a, b, c". */
static void suite_list(uint32_t mask, char *out, size_t len)
{
	size_t o = 0;

	out[0] = '\0';
	for (int b = 0; b < MP_CALIB_SUITE_BITS && o < len; b++) {
		const char *name = (mask >> b) & 1u ? mp_calib_suite_name(1u << b) : NULL;

		if (name)
			o += (size_t)snprintf(out + o, len - o, "%s%s", o ? ", " : "", name);
	}
}

void cli_calibrate_help(void)
{
	char gpu[256], cpu[128], dflt[256];

	suite_list(MP_CALIB_GPU_SUITES, gpu, sizeof(gpu));
	suite_list(MP_CALIB_CPU_SUITES, cpu, sizeof(cpu));
	suite_list(MP_CALIB_GPU_DEFAULT, dflt, sizeof(dflt));
	printf("Usage: memplan calibrate [--cpu | --gpu] [--json] [--db PATH] [--suites a,b,...] [--runs N]\n"
	       "                         [--array-bytes N] [--matrix-size N] [--threads N] [--fit-plan FILE]\n"
	       "                         [--save FILE]\n\n"
	       "Measures this machine's GPU 0 (the CPU with --cpu, or when no GPU is usable), stores the measured\n"
	       "profile beside the datasheet one and prints a table (the job document with --json), as POST\n"
	       "/v1/calibrations does.\n\n"
	       "Options:\n"
	       "  --cpu | --gpu       what to measure (default: the GPU when one is usable)\n"
	       "  --suites a,b,...    GPU suites: %s\n"
	       "                      (default: %s); CPU suites: %s\n"
	       "  --runs N            timed runs per figure, %u to 1000\n"
	       "  --array-bytes N     bytes per bandwidth array, 1 MiB (1048576) to 1 TiB\n"
	       "  --matrix-size N     matrix side of the matmul suites, 64 to 16384\n"
	       "  --threads N         CPU threads, 1 to 256\n"
	       "  --fit-plan FILE     an inference request (JSON) whose bytes the fit suite allocates\n"
	       "  --save FILE         also write the job document to FILE\n"
	       "  --json              print the job document instead of the table\n"
	       "  --db PATH           the database the measured profile is stored in (below)\n\n",
	       gpu, dflt, cpu, MP_CALIB_MIN_RUNS);
	cli_print_db_help(stdout);
}

/* What the command line asked for. */
typedef struct calib_args {
	const char *db, *suites, *fit_file, *save;
	bool json, force_cpu, force_gpu;
	uint64_t runs, array_bytes, matrix, threads;
} calib_args;

/* Reads the options into *a. Returns -1 to go on, else the exit status (0 for --help, 2 for a usage error). */
static int parse_args(int argc, char **argv, calib_args *a)
{
	memset(a, 0, sizeof(*a));
	a->db = cli_default_db();
	for (int i = 0; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool ok = true;

		if (strcmp(o, "--cpu") == 0)
			a->force_cpu = true;
		else if (strcmp(o, "--gpu") == 0)
			a->force_gpu = true;
		else if (strcmp(o, "--json") == 0)
			a->json = true;
		else if (strcmp(o, "--db") == 0 && v)
			a->db = argv[++i];
		else if (strcmp(o, "--suites") == 0 && v)
			a->suites = argv[++i];
		else if (strcmp(o, "--fit-plan") == 0 && v)
			a->fit_file = argv[++i];
		else if (strcmp(o, "--save") == 0 && v)
			a->save = argv[++i];
		else if (strcmp(o, "--runs") == 0 && v)
			ok = parse_count(argv[++i], MP_CALIB_MIN_RUNS, 1000, &a->runs);
		else if (strcmp(o, "--array-bytes") == 0 && v)
			ok = parse_count(argv[++i], 1u << 20, UINT64_C(1) << 40, &a->array_bytes);
		else if (strcmp(o, "--matrix-size") == 0 && v)
			ok = parse_count(argv[++i], 64, 16384, &a->matrix);
		else if (strcmp(o, "--threads") == 0 && v)
			ok = parse_count(argv[++i], 1, 256, &a->threads);
		else
			ok = false;
		if (!ok || (a->force_cpu && a->force_gpu)) {
			fprintf(stderr,
				"memplan calibrate: bad or incomplete option '%s' (--runs takes %u to 1000, --array-bytes "
				"1 MiB to 1 TiB, --matrix-size 64 to 16384 (4096 with --cpu), --threads 1 to 256; --cpu and --gpu exclude "
				"each other)\n\n%s",
				o, MP_CALIB_MIN_RUNS, "memplan calibrate --help lists the options\n");
			return 2;
		}
	}
	return -1;
}

/* The request as the API would get it, so the CLI validates exactly like POST /v1/calibrations. NULL (after a
 * message) when the fit plan cannot be read. */
static cJSON *request_body(calib_args *a)
{
	cJSON *body = cJSON_CreateObject();
	mp_calib_gpu_info gi;
	mp_error err = { { 0 }, { 0 }, NULL };

	if (body == NULL)
		return NULL;
	if (!a->force_cpu && !a->force_gpu && mp_calib_gpu_probe(&gi, &err) != MP_OK) {
		fprintf(stderr, "memplan calibrate: no GPU to measure (%s); measuring the CPU\n", err.message);
		a->force_cpu = true;
	}
	cJSON_AddStringToObject(body, "target", a->force_cpu ? "cpu" : "gpu:0");
	if (a->suites) {
		cJSON *arr = cJSON_AddArrayToObject(body, "suites");

		for (const char *p = a->suites; *p;) {
			size_t n = strcspn(p, ",");
			char name[32];

			snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) ? n : sizeof(name) - 1), p);
			mpc_append(arr, cJSON_CreateString(name));
			p += n + (p[n] == ',');
		}
	}
	if (a->runs || a->array_bytes || a->matrix || a->threads) {
		cJSON *o = cJSON_AddObjectToObject(body, "options");

		if (a->runs)
			cJSON_AddNumberToObject(o, "runs", (double)a->runs);
		if (a->array_bytes)
			cJSON_AddNumberToObject(o, "array_bytes", (double)a->array_bytes);
		if (a->matrix)
			cJSON_AddNumberToObject(o, "matrix_size", (double)a->matrix);
		if (a->threads)
			cJSON_AddNumberToObject(o, "threads", (double)a->threads);
	}
	if (a->fit_file) {
		cJSON *plan = cli_parse_file("calibrate", a->fit_file, "fit plan");

		if (plan == NULL) {
			cJSON_Delete(body);
			return NULL;
		}
		mpc_add_item(body, "fit_plan", plan);
	}
	return body;
}

/* Decodes the body, plans the fit check's bytes, starts the job and waits for it (progress bar on a terminal).
 * *job gets the finished job. */
static mp_status run_job(mps_service *svc, mps_calib_jobs *jobs, const cJSON *body, const char *db, mps_calib_job **job,
			 mp_error *err)
{
	mps_calib_request rq;
	mps_inference_request *fit = malloc(sizeof(*fit));
	mps_inference_plan *plan = NULL;
	bool has_fit = false;
	bar b = { isatty(2) != 0, -1 };
	char id[MPS_CALIB_ID_MAX];
	mp_status st = fit ? mpc_calib_decode(body, &rq, fit, &has_fit, err) : mp_fail(err, MP_ENOMEM, "", "out of memory");

	if (st == MP_OK && has_fit) {
		plan = calloc(1, sizeof(*plan));
		st = plan ? mps_plan_inference(svc, fit, plan, err) : mp_fail(err, MP_ENOMEM, "", "out of memory");
		if (st == MP_OK)
			mps_calib_fit_from_plan(plan, &rq);
	}
	mps_inference_plan_release(plan);
	free(plan);
	free(fit);
	if (st == MP_OK)
		st = mps_calib_start(jobs, &rq, id, err);
	if (st == MP_OK) {
		if (b.tty)
			fprintf(stderr, "memplan calibrate: job %s on %s, database %s\n", id, rq.gpu ? "gpu:0" : "cpu", db);
		st = mps_calib_wait(jobs, id, calib_tick, &b, err);
		if (b.tty)
			fprintf(stderr, "\r%-70s\r", "");
	}
	return st == MP_OK ? mps_calib_get(jobs, id, job, err) : st;
}

/* The job's document to --save FILE, then the document (--json) or the table. Returns the exit status. */
static int report(const calib_args *a, const mps_calib_job *job)
{
	char *text = mpc_calib_job_text(job);
	int rc = strcmp(job->state, "succeeded") == 0 ? 0 : 1;

	if (text == NULL)
		return 1;
	if (a->save) {
		FILE *sf = fopen(a->save, "w");
		char *printed = mpc_reprint(text, true);

		if (sf == NULL || printed == NULL || fprintf(sf, "%s\n", printed) < 0) {
			fprintf(stderr, "memplan calibrate: cannot write %s\n", a->save);
			rc = 1;
		}
		if (sf)
			fclose(sf);
		cJSON_free(printed);
	}
	if (a->json) {
		cli_print_json_text(text);
		text = NULL;
	} else {
		mpc_calib_print_table(stdout, job); /* the job's structs, as the document is */
	}
	free(text);
	return rc;
}

int cli_calibrate(int argc, char **argv)
{
	calib_args a;
	mps_service *svc = NULL;
	mps_calib_jobs *jobs = NULL;
	mps_calib_job *job = NULL;
	mp_error err = { { 0 }, { 0 }, NULL };
	cJSON *body;
	struct sigaction sa;
	mp_status st;
	int rc = parse_args(argc, argv, &a);

	if (rc >= 0)
		return rc;
	body = request_body(&a);
	if (body == NULL)
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	st = mps_open(a.db, &svc, &err);
	if (st == MP_OK)
		st = mps_calib_jobs_create(svc, mpc_calib_job_text, &jobs, &err);
	if (st == MP_OK)
		st = run_job(svc, jobs, body, a.db, &job, &err);
	if (st == MP_OK) {
		rc = report(&a, job);
	} else {
		cli_print_error_db("calibrate", st, &err, a.db);
		rc = st == MP_EINVAL ? 2 : 1;
	}
	cJSON_Delete(body);
	mps_calib_job_free(job);
	mps_calib_jobs_destroy(jobs);
	mps_close(svc);
	return rc;
}
