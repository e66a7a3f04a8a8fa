/*
 * startup.c: what starting memplan costs. For one memplan binary: the CPU time (user + system, from wait4's
 * rusage) and peak RSS of `memplan --version` and of a `memplan plan inference` against a seeded database (the
 * median and the lowest of RUNS runs each), and the resident memory (VmRSS from /proc/PID/status) of an idle
 * daemon one second after it says it listens, then after a GET /v1/health (whose GPU probe runs in the helper
 * process, never in the daemon) and after a plan. bench/startup.sh runs it for the CUDA build and the
 * CUDA=0 build side by side. Not a test: figures go to bench/RESULTS.md.
 * Run: build/bench/startup BIN [RUNS]   (RUNS default 20)
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

typedef struct sample {
	double cpu_seconds;
	long maxrss_kib;
} sample;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Runs argv with stdout and stderr to /dev/null; its CPU time and peak RSS. Exits on failure. */
static sample run_once(char *const argv[])
{
	struct rusage ru;
	int status;
	pid_t pid;
	sample s;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		if (freopen("/dev/null", "w", stdout) == NULL || freopen("/dev/null", "w", stderr) == NULL)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "startup: %s %s failed (status %d)\n", argv[0], argv[1], status);
		exit(1);
	}
	s.cpu_seconds = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
			1e-6 * (double)ru.ru_stime.tv_usec;
	s.maxrss_kib = ru.ru_maxrss;
	return s;
}

static void measure(const char *what, char *const argv[], int runs)
{
	double *cpu = calloc((size_t)runs, sizeof(double));
	long rss = 0;

	if (cpu == NULL)
		exit(1);
	(void)run_once(argv); /* warm the page cache (and, for plan, the database) */
	for (int i = 0; i < runs; i++) {
		sample s = run_once(argv);

		cpu[i] = s.cpu_seconds;
		if (s.maxrss_kib > rss)
			rss = s.maxrss_kib;
	}
	qsort(cpu, (size_t)runs, sizeof(double), cmp_double);
	printf("%-22s CPU median %6.1f ms, lowest %6.1f ms (%d runs); peak RSS %6.1f MiB\n", what,
	       1e3 * cpu[runs / 2], 1e3 * cpu[0], runs, (double)rss / 1024.0);
	free(cpu);
}

/* VmRSS of pid in KiB, or -1. */
static long vm_rss_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "VmRSS:", 6) == 0)
			kib = strtol(line + 6, NULL, 10);
	fclose(f);
	return kib;
}

/* utime + stime of pid in seconds, or -1. */
static double proc_cpu_seconds(pid_t pid)
{
	char path[64], buf[2048], *p;
	unsigned long ut, st;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* after the command name: state is field 3, utime 14, stime 15 */
	if (p == NULL || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static size_t discard(char *p, size_t size, size_t n, void *ctx)
{
	(void)p;
	(void)ctx;
	return size * n;
}

static long http(const char *url, const char *body)
{
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	long code = 0;

	if (c == NULL)
		return 0;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);
	if (body) {
		h = curl_slist_append(h, "Content-Type: application/json");
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	}
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	return code;
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	nanosleep(&ts, NULL);
}

/* Starts `BIN serve` on port 0, reads the port from its log, and reports its memory idle and after requests. */
static void daemon_rss(const char *bin, const char *db)
{
	int fds[2];
	pid_t pid;
	FILE *log;
	char line[1024], url[128];
	unsigned port = 0;
	double cpu_start;
	long idle, after_health, after_plan;

	if (pipe(fds) != 0)
		exit(1);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		if (freopen("/dev/null", "w", stdout) == NULL)
			_exit(126);
		execl(bin, bin, "serve", "--listen", "127.0.0.1:0", "--db", db, "--threads", "2", "--log-level", "info",
		      (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	log = fdopen(fds[0], "r");
	while (log && fgets(line, sizeof(line), log)) {
		char *p = strstr(line, "listening on 127.0.0.1:");

		if (p && sscanf(p + strlen("listening on 127.0.0.1:"), "%u", &port) == 1)
			break;
	}
	if (port == 0) {
		fprintf(stderr, "startup: the daemon did not start\n");
		kill(pid, SIGKILL);
		exit(1);
	}
	cpu_start = proc_cpu_seconds(pid);
	sleep_s(1.0);
	idle = vm_rss_kib(pid);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/v1/health", port);
	if (http(url, NULL) != 200)
		fprintf(stderr, "startup: GET /v1/health did not answer 200\n");
	sleep_s(0.5);
	after_health = vm_rss_kib(pid);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/v1/plan/inference", port);
	if (http(url, "{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,"
		      "\"sequence_length\":4096,\"device\":\"h200-sxm-141gb\"}") != 200)
		fprintf(stderr, "startup: POST /v1/plan/inference did not answer 200\n");
	sleep_s(0.5);
	after_plan = vm_rss_kib(pid);
	printf("%-22s CPU to listening %4.0f ms (in clock ticks of %.0f ms); RSS idle %6.1f MiB, after /v1/health "
	       "%6.1f MiB, after a plan %6.1f MiB\n",
	       "memplan serve", 1e3 * cpu_start, 1e3 / (double)sysconf(_SC_CLK_TCK), (double)idle / 1024.0,
	       (double)after_health / 1024.0, (double)after_plan / 1024.0);
	kill(pid, SIGTERM);
	while (fgets(line, sizeof(line), log))
		;
	fclose(log);
	waitpid(pid, NULL, 0);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/memplan-bench-startup-XXXXXX";
	char db[sizeof(dir) + 16];
	int runs = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 20;
	char *bin;

	if (argc < 2 || runs < 1 || mkdtemp(dir) == NULL) {
		fprintf(stderr, "usage: startup BIN [RUNS]\n");
		return 2;
	}
	bin = argv[1];
	snprintf(db, sizeof(db), "%s/m.db", dir);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	{
		char *version[] = { bin, "--version", NULL };
		char *plan[] = { bin, "plan", "inference", "--model", "llama-3-8b", "--weight_dtype", "bf16",
				 "--kv_cache_dtype", "bf16", "--batch_size", "1", "--sequence_length", "4096",
				 "--device", "h200-sxm-141gb", "--db", db, NULL };

		printf("%s\n", bin);
		measure("memplan --version", version, runs);
		measure("memplan plan inference", plan, runs);
	}
	daemon_rss(bin, db);
	curl_global_cleanup();
	unlink(db);
	{
		char side[sizeof(db) + 8];

		snprintf(side, sizeof(side), "%s-wal", db);
		unlink(side);
		snprintf(side, sizeof(side), "%s-shm", db);
		unlink(side);
	}
	rmdir(dir);
	return 0;
}
