/*
 * gpu_helper.c: main() of memplan-gpu, the process the CUDA suites run in (calib_gpu.cu). memplan starts it for
 * each GPU probe or calibration (calib_gpu_client.c) with one socket as stdin and stdout, sends one request and
 * reads progress and one result back (calib_ipc.h); the helper then exits, and the CUDA runtime, cuBLASLt and the
 * context go with it. Only a CUDA build makes it. Writes nothing to stdout but messages; never stores anything.
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "calib_ipc.h"

#define IN 0
#define OUT 1
#define PROGRESS_EVERY_SECONDS 0.05 /* at most 20 progress messages a second, and one per suite change */

typedef struct helper_state {
	bool cancelled;
	double last_sent;
	char last_suite[32];
} helper_state;

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The run's progress callback: hears a CANCEL (or memplan's end of file), and passes progress on. */
static bool on_progress(void *ctx, double fraction, const char *suite)
{
	helper_state *hs = ctx;
	struct pollfd p = { IN, POLLIN, 0 };
	double now = mono();

	if (!hs->cancelled && poll(&p, 1, 0) > 0) {
		mp_calib_ipc_header h;
		char buf[64];

		/* CANCEL, end of file (memplan went away) and anything unexpected all stop the run */
		(void)mp_calib_ipc_recv(IN, &h, buf, sizeof(buf));
		hs->cancelled = true;
	}
	if (hs->cancelled)
		return false;
	if (suite == NULL)
		suite = "";
	if (strcmp(suite, hs->last_suite) != 0 || now - hs->last_sent >= PROGRESS_EVERY_SECONDS || fraction >= 1.0) {
		mp_calib_ipc_progress m;

		memset(&m, 0, sizeof(m));
		m.fraction = fraction;
		snprintf(m.suite, sizeof(m.suite), "%s", suite);
		snprintf(hs->last_suite, sizeof(hs->last_suite), "%s", suite);
		hs->last_sent = now;
		if (mp_calib_ipc_send(OUT, MP_CALIB_IPC_PROGRESS, &m, (uint32_t)sizeof(m)) != 0)
			hs->cancelled = true;
	}
	return !hs->cancelled;
}

static int usage(void)
{
	fprintf(stderr, "memplan-gpu: memplan's GPU calibration helper (memplan %s, protocol %u).\n"
			"memplan starts it for GPU probes and calibrations (memplan calibrate --gpu, POST "
			"/v1/calibrations with target gpu:0); it is not run by hand.\n"
			"memplan finds it beside its own executable, or at $MEMPLAN_GPU_HELPER.\n",
		MP_VERSION, MP_CALIB_IPC_VERSION);
	return 2;
}

int main(int argc, char **argv)
{
	mp_calib_ipc_hello hello;
	mp_calib_ipc_header h;
	mp_calib_gpu_options o;
	mp_calib_ipc_run_result *res;
	int rc;

	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("memplan-gpu %s (protocol %u)\n", MP_VERSION, MP_CALIB_IPC_VERSION);
		return 0;
	}
	if (argc != 2 || strcmp(argv[1], "--memplan-ipc") != 0 || isatty(OUT))
		return usage();
	signal(SIGPIPE, SIG_IGN); /* memplan gone: a failed send, then exit */
	mp_calib_ipc_hello_fill(&hello, (int32_t)getpid());
	if (mp_calib_ipc_send(OUT, MP_CALIB_IPC_HELLO, &hello, (uint32_t)sizeof(hello)) != 0)
		return 1;
	rc = mp_calib_ipc_recv(IN, &h, &o, sizeof(o));
	if (rc != 0)
		return 1;
	res = calloc(1, sizeof(*res));
	if (res == NULL)
		return 1;
	if (h.kind == MP_CALIB_IPC_PROBE && h.length == 0) {
		mp_calib_ipc_probe_result pr;

		memset(&pr, 0, sizeof(pr));
		pr.status = (int32_t)mp_calib_cuda_probe(&pr.info, &pr.err);
		rc = mp_calib_ipc_send(OUT, MP_CALIB_IPC_PROBE_RESULT, &pr, (uint32_t)sizeof(pr));
	} else if (h.kind == MP_CALIB_IPC_RUN && h.length == sizeof(o)) {
		helper_state hs;
		mp_calib_ctl ctl = { on_progress, &hs };

		memset(&hs, 0, sizeof(hs));
		res->status = (int32_t)mp_calib_cuda_run(&o, &ctl, &res->results, &res->err);
		if (hs.cancelled)
			res->results.cancelled = true;
		rc = mp_calib_ipc_send(OUT, MP_CALIB_IPC_RUN_RESULT, res, (uint32_t)sizeof(*res));
	} else {
		fprintf(stderr, "memplan-gpu: unexpected request (kind %u, %u bytes)\n", h.kind, h.length);
		rc = 1;
	}
	free(res);
	return rc == 0 ? 0 : 1;
}
