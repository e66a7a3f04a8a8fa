/*
 * test_store_proc.c: the store across processes, with build/memplan (MEMPLAN_BIN) spawned as real daemons:
 * data survives a restart; two daemons writing one database do not corrupt it; a daemon killed with SIGKILL
 * in the middle of a write loop leaves PRAGMA integrity_check = ok and every write it acknowledged; and
 * `memplan db export` / `db import` carry devices and user models to another database.
 */
#include <pthread.h>
#include <stdbool.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "../model/model.h"
#include "../service/service_int.h"

static char dir[64];

typedef struct proc {
	pid_t pid;
	unsigned port;
} proc;

static const char *bin(void)
{
	const char *b = getenv("MEMPLAN_BIN");

	return b ? b : "build/memplan";
}

static void db_path(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
}

typedef struct spawn_opts {
	const char *disk_full_flag;	/* preload tests/full_disk.c, full while this file exists (NULL: no) */
	bool as_nobody;			/* run as uid/gid 65534 (when the test runs as root) */
	char *startup;			/* out: the start-up lines (heap), when not NULL */
} spawn_opts;

static proc spawn_ex(const char *db, spawn_opts *o);

/* Starts `memplan serve` on a free port and reads the port from its start-up line on stderr. */
static proc spawn(const char *db)
{
	return spawn_ex(db, NULL);
}

static proc spawn_ex(const char *db, spawn_opts *o)
{
	int fd[2];
	proc p = { 0, 0 };
	FILE *f;
	char line[512];

	assert_int_equal(pipe(fd), 0);
	p.pid = fork();
	assert_true(p.pid >= 0);
	if (p.pid == 0) {
		dup2(fd[1], 2);
		close(fd[0]);
		close(fd[1]);
		if (o && o->disk_full_flag) {
			char lib[600];
			const char *b = getenv("MEMPLAN_TEST_LIB_DIR");

			snprintf(lib, sizeof(lib), "%s/libfull_disk.so", b ? b : "build/tests");
			setenv("LD_PRELOAD", lib, 1);
			setenv("MEMPLAN_TEST_DISK_FULL", o->disk_full_flag, 1);
			setenv("ASAN_OPTIONS", "verify_asan_link_order=0:detect_leaks=0", 1); /* the library comes first */
		}
		if (o && o->as_nobody && geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
			_exit(126);
		execl(bin(), bin(), "serve", "--listen", "127.0.0.1:0", "--db", db, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	f = fdopen(fd[0], "r");
	while (fgets(line, sizeof(line), f)) {
		const char *at = strstr(line, "listening on 127.0.0.1:");

		if (o && o->startup) {
			size_t had = strlen(o->startup);
			char *more = realloc(o->startup, had + strlen(line) + 1);

			if (more) {
				memcpy(more + had, line, strlen(line) + 1);
				o->startup = more;
			}
		}
		if (at) {
			p.port = (unsigned)strtoul(at + 23, NULL, 10);
			if (o && o->startup) { /* the line after it: a warning about the database, if any */
				if (fgets(line, sizeof(line), f)) {
					size_t had = strlen(o->startup);
					char *more = realloc(o->startup, had + strlen(line) + 1);

					if (more) {
						memcpy(more + had, line, strlen(line) + 1);
						o->startup = more;
					}
				}
			}
			break;
		}
	}
	fclose(f); /* the daemon's later stderr goes nowhere (SIGPIPE is harmless: it writes once more at exit) */
	if (p.port == 0)
		fail_msg("%s serve did not start", bin());
	return p;
}

static int stop(proc *p, int sig)
{
	int status = 0;

	kill(p->pid, sig);
	waitpid(p->pid, &status, 0);
	return status;
}

static size_t sink(char *ptr, size_t size, size_t n, void *ctx)
{
	char **buf = ctx;
	size_t old = *buf ? strlen(*buf) : 0;
	char *nb = realloc(*buf, old + size * n + 1);

	if (nb == NULL)
		return 0;
	memcpy(nb + old, ptr, size * n);
	nb[old + size * n] = '\0';
	*buf = nb;
	return size * n;
}

/* One request; returns the HTTP status (0 when the connection failed); *body (may be NULL) gets the body. */
static long req(unsigned port, const char *method, const char *path, const char *body, char **out)
{
	CURL *c = curl_easy_init();
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
	char url[256], *buf = NULL;
	long status = 0;

	snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", port, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &buf);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (body)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	if (out)
		*out = buf;
	else
		free(buf);
	return status;
}

static long put_device(unsigned port, const char *id, int n)
{
	char path[128], body[512];

	snprintf(path, sizeof(path), "/v1/devices/%s", id);
	snprintf(body, sizeof(body),
		 "{\"name\":\"GPU %d\",\"vendor\":\"ACME\",\"memory_bytes\":%llu,"
		 "\"memory_bandwidth_bytes_per_second\":1e12,\"peak_flops_per_second\":{\"bf16\":1e14},"
		 "\"source_note\":\"write %d\"}",
		 n, (unsigned long long)(UINT64_C(1) << 30) * (uint64_t)(n + 1), n);
	return req(port, "PUT", path, body, NULL);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/memplan-proc-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* integrity_check of the database, from a fresh handle. */
static void check_integrity(const char *db, mp_store **out)
{
	mp_store *s;
	mp_error err = MP_ERROR_INIT;
	char ok[64];

	assert_int_equal(mp_store_open(db, mps_presets(), &s, &err), MP_OK);
	assert_int_equal(mp_store_integrity_check(s, ok, sizeof(ok), &err), MP_OK);
	assert_string_equal(ok, "ok");
	*out = s;
}

static void test_restart(void **state)
{
	char db[128], *before = NULL, *after = NULL;
	proc p;

	(void)state;
	db_path(db, sizeof(db), "restart.db");
	p = spawn(db);
	assert_int_equal(put_device(p.port, "keep-me", 7), 201);
	assert_int_equal(req(p.port, "PUT", "/v1/models/tiny",
			     "{\"hf_config\":{\"model_type\":\"llama\",\"hidden_size\":64,\"intermediate_size\":128,"
			     "\"num_hidden_layers\":2,\"num_attention_heads\":4,\"vocab_size\":100}}",
			     NULL),
			 201);
	assert_int_equal(req(p.port, "GET", "/v1/devices/keep-me", NULL, &before), 200);
	assert_int_equal(WEXITSTATUS(stop(&p, SIGTERM)), 0);
	p = spawn(db);
	assert_int_equal(req(p.port, "GET", "/v1/devices/keep-me", NULL, &after), 200);
	assert_string_equal(before, after);
	assert_int_equal(req(p.port, "GET", "/v1/models/tiny", NULL, NULL), 200);
	stop(&p, SIGTERM);
	free(before);
	free(after);
}

typedef struct writer {
	unsigned port;
	const char *prefix;
	int count;		/* writes to do (0 = until a request fails) */
	int acked;		/* writes answered 200/201 */
} writer;

static void *write_loop(void *arg)
{
	writer *w = arg;

	for (int i = 0; w->count == 0 || i < w->count; i++) {
		char id[64];
		long st;

		snprintf(id, sizeof(id), "%s-%d", w->prefix, i);
		st = put_device(w->port, id, i);
		if (st != 200 && st != 201)
			break;
		w->acked = i + 1;
		/* every daemon also rewrites one shared row */
		if (w->count && (st = put_device(w->port, "shared", i)) != 200 && st != 201)
			break;
	}
	return NULL;
}

static void test_two_daemons(void **state)
{
	char db[128];
	proc a, b;
	writer wa = { 0, "a", 60, 0 }, wb = { 0, "b", 60, 0 };
	pthread_t ta, tb;
	mp_store *s;
	mp_store_device d;
	mp_error err = MP_ERROR_INIT;

	(void)state;
	db_path(db, sizeof(db), "two.db");
	a = spawn(db);
	b = spawn(db);
	wa.port = a.port;
	wb.port = b.port;
	pthread_create(&ta, NULL, write_loop, &wa);
	pthread_create(&tb, NULL, write_loop, &wb);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	assert_int_equal(wa.acked, 60);
	assert_int_equal(wb.acked, 60);
	/* each daemon sees the other's writes */
	assert_int_equal(req(a.port, "GET", "/v1/devices/b-59", NULL, NULL), 200);
	assert_int_equal(req(b.port, "GET", "/v1/devices/a-59", NULL, NULL), 200);
	stop(&a, SIGTERM);
	stop(&b, SIGTERM);
	check_integrity(db, &s);
	for (int i = 0; i < 60; i++) {
		char id[32];

		snprintf(id, sizeof(id), "a-%d", i);
		assert_int_equal(mp_store_device_get(s, id, &d, &err), MP_OK);
		snprintf(id, sizeof(id), "b-%d", i);
		assert_int_equal(mp_store_device_get(s, id, &d, &err), MP_OK);
		assert_int_equal(d.hw.memory_bytes, (UINT64_C(1) << 30) * (uint64_t)(i + 1));
	}
	assert_int_equal(mp_store_device_get(s, "shared", &d, &err), MP_OK);
	mp_store_close(s);
}

static void test_sigkill_mid_loop(void **state)
{
	char db[128];
	proc p;
	writer w = { 0, "k", 0, 0 };
	pthread_t t;
	mp_store *s;
	mp_store_device d;
	mp_error err = MP_ERROR_INIT;
	struct timespec nap = { 0, 400 * 1000 * 1000 };

	(void)state;
	db_path(db, sizeof(db), "kill.db");
	p = spawn(db);
	w.port = p.port;
	pthread_create(&t, NULL, write_loop, &w);
	nanosleep(&nap, NULL);
	assert_true(WIFSIGNALED(stop(&p, SIGKILL)));
	pthread_join(t, NULL);
	assert_true(w.acked > 5); /* it really was writing when it died */
	check_integrity(db, &s);
	for (int i = 0; i < w.acked; i++) {
		char id[32];

		snprintf(id, sizeof(id), "k-%d", i);
		if (mp_store_device_get(s, id, &d, &err) != MP_OK)
			fail_msg("acknowledged write %s is missing after SIGKILL (%d acknowledged)", id, w.acked);
		assert_int_equal(d.hw.memory_bytes, (UINT64_C(1) << 30) * (uint64_t)(i + 1));
	}
	print_message("SIGKILL after %d acknowledged writes: all present, integrity ok\n", w.acked);
	mp_store_close(s);
}

static void test_export_import(void **state)
{
	char a[128], b[128], file[128], cmd[2048];
	proc p;
	mp_store *s;
	mp_store_device d;
	mp_store_model m;
	mp_error err = MP_ERROR_INIT;

	(void)state;
	db_path(a, sizeof(a), "from.db");
	db_path(b, sizeof(b), "to.db");
	db_path(file, sizeof(file), "fleet.json");
	p = spawn(a);
	assert_int_equal(put_device(p.port, "fleet-gpu", 3), 201);
	assert_int_equal(req(p.port, "PUT", "/v1/models/fleet-model",
			     "{\"hf_config\":{\"model_type\":\"gpt2\",\"n_layer\":2}}", NULL),
			 201);
	stop(&p, SIGTERM);
	snprintf(cmd, sizeof(cmd), "'%s' db export --db '%s' > '%s'", bin(), a, file);
	assert_int_equal(system(cmd), 0);
	/* a mistyped database path is an error, not a freshly seeded and empty export */
	snprintf(cmd, sizeof(cmd), "'%s' db export --db '%s.typo' > /dev/null 2>&1", bin(), a);
	assert_int_not_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s.typo", a);
	assert_int_not_equal(access(cmd, F_OK), 0);
	snprintf(cmd, sizeof(cmd), "'%s' db import '%s' --db '%s' 2>/dev/null", bin(), file, b);
	assert_int_equal(system(cmd), 0);
	check_integrity(b, &s);
	assert_int_equal(mp_store_device_get(s, "fleet-gpu", &d, &err), MP_OK);
	assert_string_equal(d.source_note, "write 3");
	assert_int_equal(mp_store_device_get(s, "h200-sxm-141gb-measured", &d, &err), MP_OK);
	assert_int_equal(mp_store_model_get(s, "fleet-model", &m, &err), MP_OK);
	assert_string_equal(m.source, "user");
	mp_store_model_free(&m);
	mp_store_close(s);
	/* a bad file changes nothing and says where it is wrong */
	snprintf(cmd, sizeof(cmd),
		 "printf '{\"format\":\"memplan-export\",\"devices\":[{\"id\":\"ok-1\",\"name\":\"A\",\"vendor\":\"V\","
		 "\"memory_bytes\":1e10,\"memory_bandwidth_bytes_per_second\":1e12},{\"id\":\"bad\",\"name\":\"B\"}]}' > "
		 "'%s' && '%s' db import '%s' --db '%s' 2>&1 | grep -q '/devices/1/vendor'",
		 file, bin(), file, b);
	assert_int_equal(system(cmd), 0);
	check_integrity(b, &s);
	assert_int_equal(mp_store_device_get(s, "ok-1", &d, &err), MP_ENOTFOUND);
	mp_store_close(s);
	/* an id twice in the file is refused, naming the second (the last copy used to win without a word) */
	snprintf(cmd, sizeof(cmd),
		 "printf '{\"format\":\"memplan-export\",\"devices\":[{\"id\":\"dup-1\",\"name\":\"A\",\"vendor\":\"V\","
		 "\"memory_bytes\":1e10,\"memory_bandwidth_bytes_per_second\":1e12},{\"id\":\"dup-1\",\"name\":\"B\","
		 "\"vendor\":\"V\",\"memory_bytes\":2e10,\"memory_bandwidth_bytes_per_second\":1e12}]}' > '%s' && "
		 "! '%s' db import '%s' --db '%s' > '%s.out' 2>&1 && grep -q '/devices/1/id' '%s.out' && "
		 "grep -q 'also devices 0' '%s.out'",
		 file, bin(), file, b, file, file, file);
	assert_int_equal(system(cmd), 0);
	check_integrity(b, &s);
	assert_int_equal(mp_store_device_get(s, "dup-1", &d, &err), MP_ENOTFOUND);
	mp_store_close(s);
}

/* Finding 9, a full disk: every write is 507 insufficient-storage saying so (was: 500 "schema: database or disk
 * is full"), reads go on, health stays ok (a full disk is not the database's state), and once there is room again
 * the next write succeeds: nothing acknowledged is lost, nothing half-written stays. */
static void test_disk_full(void **state)
{
	char db[128], flag[160], *body = NULL;
	spawn_opts o = { 0 };
	proc p;
	FILE *f;

	(void)state;
	db_path(db, sizeof(db), "full.db");
	db_path(flag, sizeof(flag), "disk-is-full");
	o.disk_full_flag = flag;
	{
		/* the preload library must be there: without it the disk is never full and the test would say 201 */
		char lib[600];
		const char *b = getenv("MEMPLAN_TEST_LIB_DIR");

		snprintf(lib, sizeof(lib), "%s/libfull_disk.so", b ? b : "build/tests");
		if (access(lib, R_OK) != 0)
			fail_msg("%s is missing (make builds it; MEMPLAN_TEST_LIB_DIR names its folder)", lib);
	}
	p = spawn_ex(db, &o);
	assert_int_equal(put_device(p.port, "before", 1), 201);
	f = fopen(flag, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(req(p.port, "PUT", "/v1/devices/during",
			     "{\"name\":\"x\",\"vendor\":\"v\",\"memory_bytes\":1073741824,\"memory_bandwidth_bytes_per_"
			     "second\":1e12,\"peak_flops_per_second\":{\"bf16\":1e14}}",
			     &body),
			 507);
	assert_non_null(strstr(body, "urn:memplan:problem:insufficient-storage"));
	assert_non_null(strstr(body, "the disk holding the database is full"));
	assert_null(strstr(body, "schema:"));
	free(body);
	body = NULL;
	assert_int_equal(req(p.port, "GET", "/v1/devices/before", NULL, NULL), 200);
	assert_int_equal(req(p.port, "GET", "/v1/devices/during", NULL, NULL), 404);
	assert_int_equal(req(p.port, "GET", "/v1/health", NULL, &body), 200);
	assert_non_null(strstr(body, "\"status\":\"ok\""));
	free(body);
	unlink(flag);
	assert_int_equal(put_device(p.port, "after", 2), 201);
	assert_int_equal(WEXITSTATUS(stop(&p, SIGTERM)), 0);
	p = spawn(db);
	assert_int_equal(req(p.port, "GET", "/v1/devices/before", NULL, NULL), 200);
	assert_int_equal(req(p.port, "GET", "/v1/devices/after", NULL, NULL), 200);
	assert_int_equal(req(p.port, "GET", "/v1/devices/during", NULL, NULL), 404);
	stop(&p, SIGTERM);
}

/* Finding 9, a read-only database (the file not writable by the daemon's user; its -wal and -shm are, as when a
 * file is chmod'ed 0444 under a running system): the daemon says so when it starts, serves reads, answers every
 * write 503 database-unavailable naming the cause, and health reports degraded. */
static void test_read_only(void **state)
{
	char db[128], wal[160], shm[160], *body = NULL;
	mps_service *keep = NULL;
	spawn_opts o = { 0 };
	mp_error err;
	proc p;

	(void)state;
	db_path(db, sizeof(db), "ro.db");
	snprintf(wal, sizeof(wal), "%s-wal", db);
	snprintf(shm, sizeof(shm), "%s-shm", db);
	/* created and seeded, and held open so that its -wal and -shm files stay */
	assert_int_equal(mps_open(db, &keep, &err), MP_OK);
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(chmod(db, 0444), 0);
	assert_int_equal(chmod(wal, 0666), 0);
	assert_int_equal(chmod(shm, 0666), 0);
	o.as_nobody = true; /* as root the mode bits would not bind */
	o.startup = calloc(1, 1);
	p = spawn_ex(db, &o);
	if (strstr(o.startup, "open read-only") == NULL)
		fail_msg("no read-only warning at start: %s", o.startup);
	assert_int_equal(req(p.port, "GET", "/v1/devices/h100-sxm5-80gb", NULL, NULL), 200);
	assert_int_equal(req(p.port, "PUT", "/v1/devices/x",
			     "{\"name\":\"x\",\"vendor\":\"v\",\"memory_bytes\":1073741824,\"memory_bandwidth_bytes_per_"
			     "second\":1e12,\"peak_flops_per_second\":{\"bf16\":1e14}}",
			     &body),
			 503);
	assert_non_null(strstr(body, "urn:memplan:problem:database-unavailable"));
	assert_non_null(strstr(body, "read-only"));
	free(body);
	body = NULL;
	assert_int_equal(req(p.port, "GET", "/v1/health", NULL, &body), 200);
	assert_non_null(strstr(body, "\"status\":\"degraded\""));
	assert_non_null(strstr(body, "\"writable\":false"));
	free(body);
	stop(&p, SIGTERM);
	free(o.startup);
	chmod(db, 0644);
	mps_close(keep);
}


/* ----- the -wal and the main file (issue 30) ------------------------------------------------------------- */

/* A writer that creates ids prefix-0, prefix-1, ... and, every other write, updates prefix-0 again; it remembers
 * every acknowledged write (a create's id, the update's last acknowledged value) and stops at the first refusal. */
typedef struct acker {
	unsigned port;
	const char *prefix;
	int created;		/* acknowledged creates: prefix-0 .. prefix-(created-1) */
	int update_value;	/* the last acknowledged value of prefix-0's update (0 = none) */
	int refused;		/* the status of the first refused write */
	volatile int stop;
} acker;

static void *ack_loop(void *arg)
{
	acker *a = arg;

	for (int i = 0; !a->stop && i < 5000; i++) {
		char id[64];
		long st;

		snprintf(id, sizeof(id), "%s-%d", a->prefix, i);
		st = put_device(a->port, id, i);
		if (st != 201) {
			a->refused = (int)st;
			break;
		}
		a->created = i + 1;
		if (i > 0 && i % 2 == 0) {
			snprintf(id, sizeof(id), "%s-0", a->prefix);
			st = put_device(a->port, id, 10000 + i);
			if (st != 200) {
				a->refused = (int)st;
				break;
			}
			a->update_value = 10000 + i;
		}
	}
	return NULL;
}

/* Waits (10 s at most) until the writer has n acknowledged creates: a loaded machine writes slowly. */
static void wait_acked(const acker *a, int n)
{
	struct timespec nap = { 0, 20 * 1000 * 1000 };

	for (int i = 0; i < 500 && a->created < n && !a->refused; i++)
		nanosleep(&nap, NULL);
}

/* Every acknowledged write of a is in the store at db, integrity ok. */
static void check_acked(const char *db, const acker *a)
{
	mp_store *s;
	mp_store_device d;
	mp_error err = MP_ERROR_INIT;
	int lost = 0;

	check_integrity(db, &s);
	for (int i = 0; i < a->created; i++) {
		char id[64];

		snprintf(id, sizeof(id), "%s-%d", a->prefix, i);
		if (mp_store_device_get(s, id, &d, &err) != MP_OK)
			lost++;
	}
	if (lost)
		fail_msg("%d of %d acknowledged creates are gone", lost, a->created);
	if (a->update_value) {
		char id[64];
		int n = a->update_value;

		snprintf(id, sizeof(id), "%s-0", a->prefix);
		assert_int_equal(mp_store_device_get(s, id, &d, &err), MP_OK);
		/* that write or a later one (a write refused after its commit, because the -wal went while it ran, is
		 * kept too: refused is not acknowledged) */
		if (d.hw.memory_bytes < (UINT64_C(1) << 30) * (uint64_t)(n + 1))
			fail_msg("the acknowledged update of %s (write %d) is gone: %llu bytes", id, n,
				 (unsigned long long)d.hw.memory_bytes);
	}
	mp_store_close(s);
}

/*
 * Finding 8: the -wal deleted while the daemon writes, then a crash. Before, health stayed ok, writes went on
 * being acknowledged into the unlinked file and were gone after SIGKILL (24 of 3,943 creates, 67 updates). Now the
 * first write that sees it is refused (503, the -wal named), health says degraded, what was written before is
 * checkpointed into the main file, and after SIGKILL and a restart every acknowledged write is there.
 */
static void test_wal_deleted_then_crash(void **state)
{
	char db[128], wal[160], *body = NULL;
	acker a = { 0, "w", 0, 0, 0, 0 };
	struct timespec nap = { 0, 300 * 1000 * 1000 };
	pthread_t t;
	proc p;

	(void)state;
	db_path(db, sizeof(db), "walgone.db");
	snprintf(wal, sizeof(wal), "%s-wal", db);
	p = spawn(db);
	a.port = p.port;
	pthread_create(&t, NULL, ack_loop, &a);
	wait_acked(&a, 20);
	assert_int_equal(unlink(wal), 0);
	nanosleep(&nap, NULL);
	assert_int_equal(req(p.port, "GET", "/v1/health", NULL, &body), 200);
	if (strstr(body, "\"status\":\"degraded\"") == NULL || strstr(body, "-wal") == NULL)
		fail_msg("health after the -wal was deleted: %s", body);
	free(body);
	body = NULL;
	assert_int_equal(put_device(p.port, "after", 1), 503);
	a.stop = 1;
	pthread_join(t, NULL);
	assert_true(a.created > 5); /* it really was writing */
	assert_true(WIFSIGNALED(stop(&p, SIGKILL)));
	check_acked(db, &a);
	print_message("-wal deleted after %d acknowledged creates: all present after SIGKILL\n", a.created);
}

/* A second database with rows of its own, written and closed (no -wal left), to replace another's file. */
static void other_database(const char *path, int rows)
{
	proc p = spawn(path);

	for (int i = 0; i < rows; i++) {
		char id[32];

		snprintf(id, sizeof(id), "other-%d", i);
		assert_int_equal(put_device(p.port, id, i), 201);
	}
	assert_int_equal(WEXITSTATUS(stop(&p, SIGTERM)), 0);
}

/* The files in dir whose names start with prefix. */
static int count_files(const char *prefix)
{
	char cmd[400], line[64];
	FILE *f;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "ls -1 '%s' | grep -c '^%s' || true", dir, prefix);
	f = popen(cmd, "r");
	if (f && fgets(line, sizeof(line), f))
		n = (int)strtol(line, NULL, 10);
	if (f)
		pclose(f);
	return n;
}

/*
 * Finding 6: the database file replaced while the daemon runs (mv of another database over it), then a crash. The
 * daemon refused writes while running; before, the old -wal stayed beside the new file and was applied at the next
 * start: integrity_check failed, GET /v1/models answered 500, health said ok. Now the start moves that -wal aside
 * (another store's), integrity is ok, the replacing database is served as it is, and health's notice says what was
 * moved where.
 */
static void test_replaced_file_then_restart(void **state)
{
	char db[128], other[128], *body = NULL;
	acker a = { 0, "r", 0, 0, 0, 0 };
	pthread_t t;
	mp_store *s;
	mp_store_device d;
	mp_error err = MP_ERROR_INIT;
	proc p;

	(void)state;
	db_path(db, sizeof(db), "replaced.db");
	db_path(other, sizeof(other), "other.db");
	other_database(other, 40);
	p = spawn(db);
	a.port = p.port;
	pthread_create(&t, NULL, ack_loop, &a);
	wait_acked(&a, 20);
	a.stop = 1;
	pthread_join(t, NULL);
	assert_true(a.created > 5);
	assert_int_equal(rename(other, db), 0);
	assert_int_equal(put_device(p.port, "after", 1), 503);
	assert_true(WIFSIGNALED(stop(&p, SIGKILL)));
	p = spawn(db);
	assert_int_equal(req(p.port, "GET", "/v1/models", NULL, NULL), 200);
	assert_int_equal(req(p.port, "GET", "/v1/devices/other-39", NULL, NULL), 200);
	assert_int_equal(req(p.port, "GET", "/v1/health", NULL, &body), 200);
	if (strstr(body, "\"status\":\"ok\"") == NULL || strstr(body, "moved aside") == NULL)
		fail_msg("health after the restart: %s", body);
	free(body);
	assert_int_equal(put_device(p.port, "after", 2), 201);
	stop(&p, SIGTERM);
	assert_int_equal(count_files("replaced.db-wal.orphan-"), 1);
	check_integrity(db, &s);
	assert_int_equal(mp_store_device_get(s, "other-0", &d, &err), MP_OK);
	assert_int_equal(mp_store_device_get(s, "r-0", &d, &err), MP_ENOTFOUND); /* the moved -wal's, not applied */
	mp_store_close(s);
}

/*
 * The same store's older copy restored over the file (a backup taken before many writes and checkpoints), then a
 * crash: the -wal continues from a write the copy does not hold, so applying it would leave the writes between
 * missing under later ones. It is moved aside too; the restored copy is served as it was. A -wal that continues the
 * file (an ordinary crash, test_sigkill_mid_loop) is applied as always, and nothing is moved.
 */
static void test_older_copy_then_restart(void **state)
{
	char db[128], backup[128], cmd[400];
	mp_store *s;
	mp_store_device d;
	mp_error err = MP_ERROR_INIT;
	proc p;

	(void)state;
	db_path(db, sizeof(db), "older.db");
	db_path(backup, sizeof(backup), "older.bak");
	other_database(db, 10);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", db, backup);
	assert_int_equal(system(cmd), 0);
	p = spawn(db);
	for (int i = 0; i < 600; i++) /* past SQLite's 1,000-page automatic checkpoint: the -wal starts over */
		assert_int_equal(put_device(p.port, "churn", i), i ? 200 : 201);
	assert_true(WIFSIGNALED(stop(&p, SIGKILL)));
	assert_int_equal(rename(backup, db), 0);
	p = spawn(db);
	assert_int_equal(req(p.port, "GET", "/v1/devices/other-9", NULL, NULL), 200);
	assert_int_equal(req(p.port, "GET", "/v1/devices/churn", NULL, NULL), 404);
	stop(&p, SIGTERM);
	assert_int_equal(count_files("older.db-wal.orphan-"), 1);
	check_integrity(db, &s);
	assert_int_equal(mp_store_device_get(s, "other-0", &d, &err), MP_OK);
	mp_store_close(s);
	/* an ordinary crash: the -wal continues the file and is applied */
	p = spawn(db);
	for (int i = 0; i < 20; i++)
		assert_int_equal(put_device(p.port, "kept", i), i ? 200 : 201);
	assert_true(WIFSIGNALED(stop(&p, SIGKILL)));
	p = spawn(db);
	assert_int_equal(req(p.port, "GET", "/v1/devices/kept", NULL, NULL), 200);
	stop(&p, SIGTERM);
	assert_int_equal(count_files("older.db-wal.orphan-"), 1);
}

/* integrity_check at start: a damaged database (bytes of its last pages overwritten) starts, says so in health
 * (degraded, integrity_check's first row) and refuses writes, where before health said ok. */
static void test_integrity_at_start(void **state)
{
	char db[128], *body = NULL;
	struct stat st;
	FILE *f;
	proc p;

	(void)state;
	db_path(db, sizeof(db), "damaged.db");
	other_database(db, 60);
	assert_int_equal(stat(db, &st), 0);
	f = fopen(db, "r+b");
	assert_non_null(f);
	/* the last two pages (4,096 bytes each): index and table leaves of the rows just written, not page 1 */
	for (long off = (long)st.st_size - 8192 + 8; off < (long)st.st_size; off += 64) {
		fseek(f, off, SEEK_SET);
		fwrite("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 1, 12, f);
	}
	fclose(f);
	p = spawn(db);
	assert_int_equal(req(p.port, "GET", "/v1/health", NULL, &body), 200);
	if (strstr(body, "\"status\":\"degraded\"") == NULL || strstr(body, "integrity_check") == NULL)
		fail_msg("health of a damaged database: %s", body);
	free(body);
	assert_int_equal(put_device(p.port, "x", 1), 503);
	stop(&p, SIGTERM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_daemons, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sigkill_mid_loop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_export_import, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disk_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wal_deleted_then_crash, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replaced_file_then_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_older_copy_then_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_integrity_at_start, setup, teardown),
	};
	int rc;

	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = cmocka_run_group_tests_name("store_proc", tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}
