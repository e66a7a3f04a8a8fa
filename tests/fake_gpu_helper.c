/*
 * fake_gpu_helper.c: a stand-in for memplan-gpu that speaks the helper protocol (kernels/calib_ipc.h) with
 * canned answers, so test_calib can drive memplan's side of it (kernels/calib_gpu_client.c) in every build,
 * with no GPU and no CUDA. What it does is chosen by $MEMPLAN_FAKE_HELPER_MODE:
 *   ok        probe: "Fake GPU", 80 GiB; run: progress 0, 0.25, ..., 1, then results
 *   fail      run: MP_EINTERNAL with a CUDA-like message
 *   slow      run: progress every 10 ms until CANCEL (or memplan's end of file), then a cancelled result
 *   crash     after HELLO: a line on stderr, then abort()
 *   silent    exits 3 without a word
 *   badhello  HELLO of another protocol version
 *   noisy     like ok, and 100 KiB on stderr first (memplan must keep reading it)
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../kernels/calib_ipc.h"

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int run(const char *mode, const mp_calib_gpu_options *o)
{
	mp_calib_ipc_run_result *res = calloc(1, sizeof(*res));
	mp_calib_ipc_progress p;
	int rc;

	if (res == NULL)
		return 1;
	memset(&p, 0, sizeof(p));
	if (strcmp(mode, "slow") == 0) {
		for (;;) {
			struct pollfd in = { 0, POLLIN, 0 };

			p.fraction = 0.5;
			snprintf(p.suite, sizeof(p.suite), "hbm");
			if (mp_calib_ipc_send(1, MP_CALIB_IPC_PROGRESS, &p, sizeof(p)) != 0)
				break;
			if (poll(&in, 1, 10) > 0)
				break; /* CANCEL or end of file */
		}
		res->status = MP_OK;
		res->results.cancelled = true;
	} else if (strcmp(mode, "fail") == 0) {
		res->status = MP_EINTERNAL;
		snprintf(res->err.message, sizeof(res->err.message), "cudaMalloc(&a, 1 GiB) failed: fake out of memory");
	} else {
		for (int i = 0; i <= 4; i++) {
			p.fraction = i / 4.0;
			snprintf(p.suite, sizeof(p.suite), "%s", i < 4 ? "hbm" : "done");
			(void)mp_calib_ipc_send(1, MP_CALIB_IPC_PROGRESS, &p, sizeof(p));
		}
		res->status = MP_OK;
		snprintf(res->results.info.name, sizeof(res->results.info.name), "Fake GPU");
		res->results.suites_done = o->suites;
		res->results.runs = o->runs;
		res->results.copy.best = 4.0e12;
		res->results.copy.median = 3.9e12;
		res->results.copy.runs = o->runs;
	}
	rc = mp_calib_ipc_send(1, MP_CALIB_IPC_RUN_RESULT, res, sizeof(*res));
	free(res);
	return rc == 0 ? 0 : 1;
}

int main(void)
{
	const char *mode = getenv("MEMPLAN_FAKE_HELPER_MODE");
	mp_calib_ipc_hello hello;
	mp_calib_ipc_header h;
	mp_calib_gpu_options o;

	if (mode == NULL)
		mode = "ok";
	if (strcmp(mode, "silent") == 0)
		return 3;
	if (strcmp(mode, "noisy") == 0) {
		char line[1024];

		memset(line, 'x', sizeof(line) - 1);
		line[sizeof(line) - 1] = '\n';
		for (int i = 0; i < 100; i++)
			if (write(2, line, sizeof(line)) < 0)
				return 1;
	}
	mp_calib_ipc_hello_fill(&hello, (int32_t)getpid());
	if (strcmp(mode, "badhello") == 0)
		hello.version = 999;
	if (mp_calib_ipc_send(1, MP_CALIB_IPC_HELLO, &hello, sizeof(hello)) != 0)
		return 1;
	if (strcmp(mode, "crash") == 0) {
		fprintf(stderr, "fake helper: dying on purpose\n");
		fflush(stderr);
		sleep_ms(20);
		abort();
	}
	memset(&o, 0, sizeof(o));
	if (mp_calib_ipc_recv(0, &h, &o, sizeof(o)) != 0)
		return 1;
	if (h.kind == MP_CALIB_IPC_PROBE) {
		mp_calib_ipc_probe_result pr;

		memset(&pr, 0, sizeof(pr));
		pr.status = MP_OK;
		snprintf(pr.info.name, sizeof(pr.info.name), "Fake GPU");
		pr.info.memory_bytes = UINT64_C(80) << 30;
		pr.info.cc_major = 9;
		return mp_calib_ipc_send(1, MP_CALIB_IPC_PROBE_RESULT, &pr, sizeof(pr)) == 0 ? 0 : 1;
	}
	if (h.kind == MP_CALIB_IPC_RUN)
		return run(mode, &o);
	return 1;
}
