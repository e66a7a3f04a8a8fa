/*
 * calibrate.c: `memplan calibrate`: the request POST /v1/calibrations takes, built from the command line, run
 * here with a progress bar on a terminal (Ctrl-C cancels at the next suite boundary), then the job's table (or
 * its document with --json; --save FILE writes the document too).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../codec/calib.h"
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

int cli_calibrate(int argc, char **argv)
{
	const char *db = CLI_DEFAULT_DB;
	mps_service *svc = NULL;
	mps_calib_jobs *jobs = NULL;
	mps_calib_request rq;
	mps_calib_job *job = NULL;
	mps_inference_request *fit = malloc(sizeof(*fit));
	mps_inference_plan *plan = NULL;
	bool has_fit = false;
	mp_error err = { { 0 }, { 0 } };
	mp_calib_gpu_info gi;
	cJSON *doc = NULL, *body = NULL;
	char id[MPS_CALIB_ID_MAX], *text = NULL;
	const char *suites = NULL, *fit_file = NULL, *save = NULL;
	bool json = false, force_cpu = false, force_gpu = false;
	uint64_t runs = 0, array_bytes = 0, matrix = 0, threads = 0;
	bar b = { isatty(2) != 0, -1 };
	struct sigaction sa;
	size_t len = 0;
	mp_status st;
	int rc = 1;

	if (fit == NULL)
		return 1;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool ok = true;

		if (strcmp(a, "--cpu") == 0)
			force_cpu = true;
		else if (strcmp(a, "--gpu") == 0)
			force_gpu = true;
		else if (strcmp(a, "--json") == 0)
			json = true;
		else if (strcmp(a, "--db") == 0 && v)
			db = argv[++i];
		else if (strcmp(a, "--suites") == 0 && v)
			suites = argv[++i];
		else if (strcmp(a, "--fit-plan") == 0 && v)
			fit_file = argv[++i];
		else if (strcmp(a, "--save") == 0 && v)
			save = argv[++i];
		else if (strcmp(a, "--runs") == 0 && v)
			ok = parse_count(argv[++i], MP_CALIB_MIN_RUNS, 1000, &runs);
		else if (strcmp(a, "--array-bytes") == 0 && v)
			ok = parse_count(argv[++i], 1u << 20, UINT64_C(1) << 40, &array_bytes);
		else if (strcmp(a, "--matrix-size") == 0 && v)
			ok = parse_count(argv[++i], 64, 16384, &matrix);
		else if (strcmp(a, "--threads") == 0 && v)
			ok = parse_count(argv[++i], 1, 256, &threads);
		else
			ok = false;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(cli_usage, stdout);
			free(fit);
			return 0;
		}
		if (!ok || (force_cpu && force_gpu)) {
			fprintf(stderr,
				"memplan calibrate: bad or incomplete option '%s' (--runs takes %u to 1000, --array-bytes "
				"1 MiB to 1 TiB, --matrix-size 64 to 16384, --threads 1 to 256; --cpu and --gpu exclude "
				"each other)\n\n%s",
				a, MP_CALIB_MIN_RUNS, cli_usage);
			free(fit);
			return 2;
		}
	}
	/* The request as the API would get it, so the CLI validates exactly like POST /v1/calibrations. */
	body = cJSON_CreateObject();
	if (!force_cpu && !force_gpu && mp_calib_gpu_probe(&gi, &err) != MP_OK) {
		fprintf(stderr, "memplan calibrate: no GPU to measure (%s); measuring the CPU\n", err.message);
		force_cpu = true;
	}
	cJSON_AddStringToObject(body, "target", force_cpu ? "cpu" : "gpu:0");
	if (suites) {
		cJSON *a = cJSON_AddArrayToObject(body, "suites");

		for (const char *p = suites; *p;) {
			size_t n = strcspn(p, ",");
			char name[32];

			snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) ? n : sizeof(name) - 1), p);
			cJSON_AddItemToArray(a, cJSON_CreateString(name));
			p += n + (p[n] == ',');
		}
	}
	if (runs || array_bytes || matrix || threads) {
		cJSON *o = cJSON_AddObjectToObject(body, "options");

		if (runs)
			cJSON_AddNumberToObject(o, "runs", (double)runs);
		if (array_bytes)
			cJSON_AddNumberToObject(o, "array_bytes", (double)array_bytes);
		if (matrix)
			cJSON_AddNumberToObject(o, "matrix_size", (double)matrix);
		if (threads)
			cJSON_AddNumberToObject(o, "threads", (double)threads);
	}
	if (fit_file) {
		cJSON *plan;

		text = cli_read_file(fit_file, &len);
		plan = text ? cJSON_ParseWithLength(text, len) : NULL;
		if (plan == NULL) {
			fprintf(stderr, "memplan calibrate: cannot read %s as JSON\n", fit_file);
			cJSON_Delete(body);
			free(text);
			free(fit);
			return 2;
		}
		cJSON_AddItemToObject(body, "fit_plan", plan);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	st = mps_open(db, &svc, &err);
	if (st == MP_OK)
		st = mps_calib_jobs_create(svc, mpc_calib_job_text, &jobs, &err);
	if (st == MP_OK)
		st = mpc_calib_decode(body, &rq, fit, &has_fit, &err);
	if (st == MP_OK && has_fit) {
		plan = malloc(sizeof(*plan));
		st = plan ? mps_plan_inference(svc, fit, plan, &err) : mp_fail(&err, MP_ENOMEM, "", "out of memory");
		if (st == MP_OK)
			mps_calib_fit_from_plan(plan, &rq);
	}
	if (st == MP_OK)
		st = mps_calib_start(jobs, &rq, id, &err);
	if (st == MP_OK) {
		if (b.tty)
			fprintf(stderr, "memplan calibrate: job %s on %s, database %s\n", id, rq.gpu ? "gpu:0" : "cpu", db);
		st = mps_calib_wait(jobs, id, calib_tick, &b, &err);
		if (b.tty)
			fprintf(stderr, "\r%-70s\r", "");
	}
	if (st == MP_OK)
		st = mps_calib_get(jobs, id, &job, &err);
	if (st == MP_OK && (doc = mpc_calib_job_json(job)) == NULL)
		st = mp_fail(&err, MP_ENOMEM, "", "out of memory");
	if (st == MP_OK) {
		rc = strcmp(job->state, "succeeded") == 0 ? 0 : 1;
		if (save) {
			FILE *sf = fopen(save, "w");
			char *printed = mpc_print(doc, true);

			if (sf == NULL || printed == NULL || fprintf(sf, "%s\n", printed) < 0) {
				fprintf(stderr, "memplan calibrate: cannot write %s\n", save);
				rc = 1;
			}
			if (sf)
				fclose(sf);
			cJSON_free(printed);
		}
		if (json)
			cli_print_json(doc);
		else
			mpc_calib_print_table(stdout, job);
	} else {
		cli_print_error("calibrate", st, &err);
		rc = st == MP_EINVAL ? 2 : 1;
	}
	cJSON_Delete(doc);
	cJSON_Delete(body);
	free(text);
	free(plan);
	free(fit);
	mps_calib_job_free(job);
	mps_calib_jobs_destroy(jobs);
	mps_close(svc);
	return rc;
}

