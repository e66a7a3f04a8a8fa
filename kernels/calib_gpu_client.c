/*
 * calib_gpu_client.c: the GPU half of calib.h as memplan sees it. The CUDA suites run in the helper executable
 * (memplan-gpu, built from gpu_helper.c and calib_gpu.cu only in a CUDA build), started here for each probe or
 * run and spoken to over a socket (calib_ipc.h). So neither the daemon nor the CLI links or loads the CUDA
 * runtime or cuBLASLt: their start-up and resident memory are the same with CUDA and without, a fault or hang in
 * a CUDA call cannot take the daemon with it, and a run that ignores its cancellation can be killed.
 *
 * Where the helper is: $MEMPLAN_GPU_HELPER when set, else memplan-gpu beside the running executable
 * (/proc/self/exe). Its stderr is kept (the last bytes) for the error message when it fails; nothing of it
 * reaches memplan's own log. Builds without CUDA answer MP_ENOTBUILTIN without looking for a helper.
 */
#define _GNU_SOURCE /* pipe2, strsignal */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "calib_ipc.h"

extern char **environ;
extern const int mp_calib_cuda_build; /* build/gen/cuda_mode.c: 1 when the build made the helper */

#define HELPER_NAME "memplan-gpu"
#define HELLO_TIMEOUT_MS 30000  /* start-up: loading the CUDA libraries, a few hundred ms on a warm machine */
#define PROBE_TIMEOUT_MS 60000  /* cudaGetDeviceCount on a driver that is still initialising the GPUs */
#define CANCEL_GRACE_MS 30000   /* after CANCEL, how long the run may take to stop before it is killed */
#define QUIET_POLL_MS 1000      /* without messages, how often a run asks its caller whether to go on */
#define EXIT_GRACE_MS 10000     /* after its answer, how long the helper may take to exit */

bool mp_calib_built_in(void)
{
	return mp_calib_cuda_build != 0;
}

typedef struct helper {
	pid_t pid;
	int fd;    /* the socket: the helper's stdin and stdout */
	int errfd; /* the read end of the helper's stderr, -1 once closed */
	char path[PATH_MAX];
	char errtail[200]; /* the last bytes the helper wrote to stderr */
	size_t errlen;
	int wstatus;
	bool reaped;
} helper;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

/* $MEMPLAN_GPU_HELPER, else memplan-gpu in the folder of /proc/self/exe. */
static void helper_path(const char *given, char *out, size_t cap)
{
	const char *env = getenv("MEMPLAN_GPU_HELPER");
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (given && *given) {
		snprintf(out, cap, "%s", given);
		return;
	}
	if (env && *env) {
		snprintf(out, cap, "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		snprintf(out, cap, "%s", HELPER_NAME);
		return;
	}
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		slash[1] = '\0';
	if (snprintf(out, cap, "%s%s", slash ? exe : "", HELPER_NAME) >= (int)cap)
		snprintf(out, cap, "%s", HELPER_NAME); /* a path too long to hold: let the spawn say it is missing */
}

/* Keeps the last bytes of the helper's stderr, one line of printable text. */
static void keep_stderr(helper *hp, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = (p[i] == '\n' || p[i] == '\t' || (unsigned char)p[i] < 32) ? ' ' : p[i];

		if (hp->errlen + 1 >= sizeof(hp->errtail)) {
			memmove(hp->errtail, hp->errtail + 1, hp->errlen - 1);
			hp->errlen--;
		}
		if (c == ' ' && (hp->errlen == 0 || hp->errtail[hp->errlen - 1] == ' '))
			continue;
		hp->errtail[hp->errlen++] = c;
	}
	while (hp->errlen && hp->errtail[hp->errlen - 1] == ' ')
		hp->errlen--;
	hp->errtail[hp->errlen] = '\0';
}

static void drain_stderr(helper *hp)
{
	char buf[512];
	ssize_t n;

	if (hp->errfd < 0)
		return;
	n = read(hp->errfd, buf, sizeof(buf));
	if (n > 0) {
		keep_stderr(hp, buf, (size_t)n);
	} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
		close(hp->errfd);
		hp->errfd = -1;
	}
}

/*
 * Waits up to timeout_ms (-1: without limit) for the next message. 0 with a message; ETIMEDOUT; -1 at end of
 * file; else an errno value from calib_ipc's framing.
 */
static int helper_next(helper *hp, int timeout_ms, mp_calib_ipc_header *h, void *buf, size_t cap)
{
	double until = now_ms() + timeout_ms;

	for (;;) {
		struct pollfd p[2] = { { hp->fd, POLLIN, 0 }, { hp->errfd, POLLIN, 0 } };
		int wait = -1, n;

		if (timeout_ms >= 0) {
			double left = until - now_ms();

			if (left <= 0)
				return ETIMEDOUT;
			wait = (int)left + 1;
		}
		n = poll(p, hp->errfd >= 0 ? 2 : 1, wait);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (n == 0)
			continue; /* the deadline check above answers */
		if (hp->errfd >= 0 && p[1].revents)
			drain_stderr(hp);
		if (p[0].revents)
			return mp_calib_ipc_recv(hp->fd, h, buf, cap);
	}
}

/* Reaps the helper: waits up to EXIT_GRACE_MS after closing its socket, then kills it. */
static void helper_reap(helper *hp)
{
	double until = now_ms() + EXIT_GRACE_MS;

	if (hp->fd >= 0)
		close(hp->fd);
	hp->fd = -1;
	while (!hp->reaped) {
		pid_t w = waitpid(hp->pid, &hp->wstatus, WNOHANG);

		if (w == hp->pid || (w < 0 && errno != EINTR)) {
			hp->reaped = w == hp->pid;
			break;
		}
		if (now_ms() > until) {
			kill(hp->pid, SIGKILL);
			while (waitpid(hp->pid, &hp->wstatus, 0) < 0 && errno == EINTR)
				;
			hp->reaped = true;
			break;
		}
		if (hp->errfd >= 0) {
			struct pollfd p = { hp->errfd, POLLIN, 0 };

			if (poll(&p, 1, 20) > 0)
				drain_stderr(hp);
		} else {
			struct timespec ts = { 0, 20 * 1000 * 1000 };

			nanosleep(&ts, NULL);
		}
	}
	while (hp->errfd >= 0) {
		struct pollfd p = { hp->errfd, POLLIN, 0 };

		if (poll(&p, 1, 0) <= 0) {
			close(hp->errfd);
			hp->errfd = -1;
			break;
		}
		drain_stderr(hp);
	}
}

/* "exited with status 1", "was killed by signal 11 (Segmentation fault)", then `then` ("before it answered"),
 * then its stderr's last words. */
static void describe_end(const helper *hp, const char *then, char *out, size_t cap)
{
	int n;

	if (!hp->reaped)
		n = snprintf(out, cap, "ended%s", then);
	else if (WIFSIGNALED(hp->wstatus))
		n = snprintf(out, cap, "was killed by signal %d (%s)%s", WTERMSIG(hp->wstatus),
			     strsignal(WTERMSIG(hp->wstatus)), then);
	else
		n = snprintf(out, cap, "exited with status %d%s", WEXITSTATUS(hp->wstatus), then);
	if (hp->errlen && n > 0 && (size_t)n < cap)
		snprintf(out + n, cap - (size_t)n, "; its stderr ended: \"%s\"", hp->errtail);
}

/* The child's start: socket on stdin and stdout, the pipe on stderr, nothing else open (descriptors are close-on-exec
 * here, and glibc 2.34+ closes any other); the signal mask and the dispositions of a fresh process (the daemon's
 * threads block SIGTERM, and may ignore SIGPIPE). Returns posix_spawn's error (0: started). */
static int spawn_child(helper *hp, int sock, int errpipe)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, deflt;
	char *argv[3];
	int rc;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, sock, 0);
	posix_spawn_file_actions_adddup2(&fa, sock, 1);
	posix_spawn_file_actions_adddup2(&fa, errpipe, 2);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
	posix_spawn_file_actions_addclosefrom_np(&fa, 3); /* none of the daemon's sockets or database files */
#endif
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigemptyset(&deflt);
	sigaddset(&deflt, SIGPIPE);
	sigaddset(&deflt, SIGTERM);
	sigaddset(&deflt, SIGINT);
	sigaddset(&deflt, SIGHUP);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &deflt);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	argv[0] = hp->path;
	argv[1] = (char *)"--memplan-ipc";
	argv[2] = NULL;
	rc = posix_spawn(&hp->pid, hp->path, &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	return rc;
}

/* Reads the helper's HELLO: MP_OK when it speaks this build's protocol and layouts; otherwise the helper is reaped
 * (killed if it said nothing in time) and MP_ENODEV says why. */
static mp_status helper_hello(helper *hp, mp_error *err)
{
	mp_calib_ipc_header h;
	mp_calib_ipc_hello got, want;
	char end[400];
	int rc = helper_next(hp, HELLO_TIMEOUT_MS, &h, &got, sizeof(got));

	mp_calib_ipc_hello_fill(&want, 0);
	if (rc == 0 && h.kind == MP_CALIB_IPC_HELLO && h.length == sizeof(got) && got.version == want.version &&
	    got.options_size == want.options_size && got.info_size == want.info_size &&
	    got.results_size == want.results_size && got.error_size == want.error_size)
		return MP_OK;
	if (rc == ETIMEDOUT)
		kill(hp->pid, SIGKILL);
	helper_reap(hp);
	describe_end(hp, " before it answered", end, sizeof(end));
	if (rc == 0)
		return mp_fail(err, MP_ENODEV, "",
			       "GPU calibration is unavailable: %s is not this build's GPU helper (protocol %u, sizes "
			       "%u/%u/%u; this build speaks %u, %u/%u/%u): rebuild it with make",
			       hp->path, h.kind == MP_CALIB_IPC_HELLO ? got.version : 0, got.options_size, got.info_size,
			       got.results_size, want.version, want.options_size, want.info_size, want.results_size);
	if (rc == ETIMEDOUT)
		return mp_fail(err, MP_ENODEV, "", "GPU calibration is unavailable: the GPU helper %s did not start "
			       "within %d s (killed)", hp->path, HELLO_TIMEOUT_MS / 1000);
	return mp_fail(err, MP_ENODEV, "", "GPU calibration is unavailable: the GPU helper %s %s", hp->path, end);
}

/* Starts the helper and reads its HELLO. MP_ENODEV when it cannot be started or speaks another layout. */
static mp_status helper_start(const char *given, helper *hp, mp_error *err)
{
	int sv[2], ep[2], rc;

	memset(hp, 0, sizeof(*hp));
	hp->fd = hp->errfd = -1;
	helper_path(given, hp->path, sizeof(hp->path));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return mp_fail(err, MP_EINTERNAL, "", "cannot start the GPU helper: socketpair: %s", strerror(errno));
	if (pipe2(ep, O_CLOEXEC) != 0) {
		close(sv[0]);
		close(sv[1]);
		return mp_fail(err, MP_EINTERNAL, "", "cannot start the GPU helper: pipe: %s", strerror(errno));
	}
	rc = spawn_child(hp, sv[1], ep[1]);
	close(sv[1]);
	close(ep[1]);
	if (rc != 0) {
		close(sv[0]);
		close(ep[0]);
		return mp_fail(err, MP_ENODEV, "",
			       "GPU calibration is unavailable: cannot start the GPU helper %s: %s (a CUDA build makes it "
			       "as memplan-gpu beside memplan; MEMPLAN_GPU_HELPER=PATH names another)",
			       hp->path, strerror(rc));
	}
	hp->fd = sv[0];
	hp->errfd = ep[0];
	return helper_hello(hp, err);
}

/* A status the helper sent, or MP_EINTERNAL for one this build does not know. */
static mp_status known_status(int32_t st)
{
	return st >= MP_OK && st <= MP_EFORBIDDEN ? (mp_status)st : MP_EINTERNAL;
}

/* The error for a helper that ended, or broke the protocol, before its result. */
static mp_status lost(helper *hp, int rc, const char *what, mp_error *err)
{
	char end[400], then[64];

	if (rc == ETIMEDOUT)
		kill(hp->pid, SIGKILL);
	helper_reap(hp);
	snprintf(then, sizeof(then), " before it answered the %s", what);
	describe_end(hp, then, end, sizeof(end));
	if (rc == ETIMEDOUT)
		return mp_fail(err, MP_EINTERNAL, "", "the GPU helper %s did not answer in time and was killed; it %s",
			       hp->path, end);
	if (rc == -1 || rc == EPIPE || rc == ECONNRESET)
		return mp_fail(err, MP_EINTERNAL, "", "the GPU helper %s %s", hp->path, end);
	return mp_fail(err, MP_EINTERNAL, "", "the GPU helper %s broke the protocol during the %s (%s); it %s",
		       hp->path, what, strerror(rc), end);
}

mp_status mp_calib_helper_probe(const char *path, mp_calib_gpu_info *info, mp_error *err)
{
	helper hp;
	mp_calib_ipc_header h;
	mp_calib_ipc_probe_result *res;
	double until;
	mp_status st;
	int rc;

	memset(info, 0, sizeof(*info));
	st = helper_start(path, &hp, err);
	if (st != MP_OK)
		return st;
	res = malloc(MP_CALIB_IPC_MAX_PAYLOAD);
	if (res == NULL) {
		kill(hp.pid, SIGKILL);
		helper_reap(&hp);
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	}
	rc = mp_calib_ipc_send(hp.fd, MP_CALIB_IPC_PROBE, NULL, 0);
	until = now_ms() + PROBE_TIMEOUT_MS;
	while (rc == 0) {
		double left = until - now_ms();

		rc = helper_next(&hp, left > 0 ? (int)left : 0, &h, res, MP_CALIB_IPC_MAX_PAYLOAD);
		if (rc != 0 || h.kind != MP_CALIB_IPC_PROGRESS)
			break;
	}
	if (rc == 0 && h.kind == MP_CALIB_IPC_PROBE_RESULT && h.length == sizeof(*res)) {
		st = known_status(res->status);
		*info = res->info;
		if (st != MP_OK && err)
			*err = res->err;
		helper_reap(&hp);
	} else {
		(void)lost(&hp, rc == 0 ? EPROTO : rc, "probe", err);
		st = MP_ENODEV; /* no answer about the GPU: as good as none (503, with why) */
	}
	free(res);
	return st;
}

/* A run's cancellation: asked of ctl at each progress message and each quiet stretch (so a cancellation is heard
 * even while one CUDA call runs long), sent to the helper once, and the helper killed when it has not stopped
 * CANCEL_GRACE_MS later (the driver frees its memory with the process). */
typedef struct run_cancel {
	bool sent, killed;
	double at;
} run_cancel;

static void run_tick(helper *hp, const mp_calib_ctl *ctl, const mp_calib_ipc_progress *last, run_cancel *c)
{
	if (!c->sent && ctl && ctl->progress && !ctl->progress(ctl->ctx, last->fraction, last->suite)) {
		c->sent = true;
		c->at = now_ms();
		(void)mp_calib_ipc_send(hp->fd, MP_CALIB_IPC_CANCEL, NULL, 0);
	}
	if (c->sent && !c->killed && now_ms() - c->at > CANCEL_GRACE_MS) {
		kill(hp->pid, SIGKILL);
		c->killed = true;
	}
}

/* Reads the helper's messages until its result (or an error, rc), keeping the last progress and ticking the
 * cancellation between them. */
static int run_wait(helper *hp, const mp_calib_ctl *ctl, mp_calib_ipc_header *h, mp_calib_ipc_run_result *res,
		    run_cancel *c)
{
	mp_calib_ipc_progress last = { 0, "" };
	int rc = 0;

	while (rc == 0) {
		rc = helper_next(hp, QUIET_POLL_MS, h, res, MP_CALIB_IPC_MAX_PAYLOAD);
		if (rc == 0 && h->kind == MP_CALIB_IPC_PROGRESS && h->length == sizeof(last)) {
			memcpy(&last, res, sizeof(last));
			last.suite[sizeof(last.suite) - 1] = '\0';
		} else if (rc == 0 || rc != ETIMEDOUT) {
			break; /* the result, a protocol error or the helper's end: the caller reads which */
		}
		rc = 0;
		run_tick(hp, ctl, &last, c);
	}
	return rc;
}

mp_status mp_calib_helper_run(const char *path, const mp_calib_gpu_options *o, const mp_calib_ctl *ctl,
                              mp_calib_gpu_results *r, mp_error *err)
{
	helper hp;
	mp_calib_ipc_header h;
	mp_calib_ipc_run_result *res;
	run_cancel cancel = { false, false, 0 };
	mp_status st;
	int rc;

	memset(r, 0, sizeof(*r));
	st = helper_start(path, &hp, err);
	if (st != MP_OK)
		return st;
	res = malloc(MP_CALIB_IPC_MAX_PAYLOAD);
	if (res == NULL) {
		kill(hp.pid, SIGKILL);
		helper_reap(&hp);
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	}
	rc = mp_calib_ipc_send(hp.fd, MP_CALIB_IPC_RUN, o, (uint32_t)sizeof(*o));
	if (rc == 0)
		rc = run_wait(&hp, ctl, &h, res, &cancel);
	if (rc == 0 && h.kind == MP_CALIB_IPC_RUN_RESULT && h.length == sizeof(*res)) {
		st = known_status(res->status);
		*r = res->results;
		if (st != MP_OK && err)
			*err = res->err;
		helper_reap(&hp);
	} else if (cancel.sent && (rc == -1 || rc == EPIPE || rc == ECONNRESET)) {
		helper_reap(&hp); /* stopped (or killed) on request without a result: a cancelled run */
		r->cancelled = true;
		st = MP_OK;
	} else {
		st = lost(&hp, rc == 0 ? EPROTO : rc, "run", err);
	}
	free(res);
	return st;
}

mp_status mp_calib_gpu_probe(mp_calib_gpu_info *info, mp_error *err)
{
	if (!mp_calib_built_in()) {
		memset(info, 0, sizeof(*info));
		return mp_fail(err, MP_ENOTBUILTIN, "", "GPU calibration is not built in (this build has no CUDA kernels)");
	}
	return mp_calib_helper_probe(NULL, info, err);
}

mp_status mp_calib_gpu_run(const mp_calib_gpu_options *o, const mp_calib_ctl *ctl, mp_calib_gpu_results *r,
                           mp_error *err)
{
	if (!mp_calib_built_in()) {
		memset(r, 0, sizeof(*r));
		return mp_fail(err, MP_ENOTBUILTIN, "/target",
			       "GPU calibration is not built in (this build has no CUDA kernels; rebuild with nvcc on "
			       "PATH)");
	}
	return mp_calib_helper_run(NULL, o, ctl, r, err);
}
