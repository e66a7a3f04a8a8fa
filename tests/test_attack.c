/*
 * test_attack.c: the daemon under the third round of attacks (issue 30), each finding reproduced in-process on
 * 127.0.0.1 port 0, bounded in count and time (the figures of the larger runs are bench/attack's, in
 * bench/RESULTS.md):
 * - framing the daemon's own port sees (differing duplicate Content-Length, "Transfer-Encoding :", a folded
 *   framing line, NUL, bare CR, two Host headers), the Host check against DNS rebinding, RFC 9110 conditionals on
 *   PUT and DELETE, 100 Continue never before a 401, a query of 300 arguments, ?pretty= empty, the access log's
 *   bytes;
 * - memory and fairness: the extender body read as it streams, the budget of bytes in flight, the body and send
 *   deadlines, the heavy slot given back when the answer is computed, the health probe during slow and busy
 *   clients;
 * - the database: a deleted -wal, a replaced main file, a -wal that does not belong, integrity at start.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "../codec/codec.h"
#include "../codec/mpc_json.h"
#include "../codec/mpc_k8s.h"
#include "../codec/mpc_k8s_stream.h"
#include "../daemon/budget.h"
#include "../service/mps_k8s.h"
#include "http_util.h"
#include "lib_util.h"
#include "refs.h"

typedef http_fixture fixture;

/* ----- helpers ------------------------------------------------------------------------------------------ */

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int connect_to(uint16_t port)
{
	struct sockaddr_in a;
	int s = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(s >= 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(s, (struct sockaddr *)&a, sizeof(a)), 0);
	return s;
}

/* Reads until the daemon closes the connection or wait_s passes: the bytes (NUL-terminated, caller frees), and
 * *closed whether it closed. */
static char *read_all(int s, double wait_s, bool *closed)
{
	size_t len = 0, cap = 4096;
	char *b = malloc(cap);
	double t0 = now_s();

	assert_non_null(b);
	*closed = false;
	for (;;) {
		struct pollfd p = { .fd = s, .events = POLLIN };
		double left = wait_s - (now_s() - t0);
		ssize_t n;

		if (left <= 0)
			break;
		if (poll(&p, 1, (int)(left * 1000) + 1) <= 0)
			continue;
		if (len + 4097 > cap) {
			char *nb = realloc(b, cap * 2);

			assert_non_null(nb);
			b = nb;
			cap *= 2;
		}
		n = recv(s, b + len, 4096, 0);
		if (n <= 0) {
			*closed = true;
			break;
		}
		len += (size_t)n;
	}
	b[len] = '\0';
	return b;
}

/* One raw exchange: sends request (len bytes), returns what came back before the close (or 5 s). */
static char *exchange(uint16_t port, const char *request, size_t len, bool *closed)
{
	int s = connect_to(port);
	char *got;

	assert_int_equal(send(s, request, len, MSG_NOSIGNAL), (ssize_t)len);
	got = read_all(s, 5, closed);
	close(s);
	return got;
}

/* A raw request answered with status (its first line starts so), in problem+json naming field (NULL: any), one
 * answer only, the connection closed. */
static void expect_refused(uint16_t port, const char *request, size_t len, const char *status, const char *field)
{
	bool closed;
	char *got = exchange(port, request, len, &closed);
	char want_field[96];

	if (strncmp(got, status, strlen(status)) != 0)
		fail_msg("%.70s...: got \"%.120s\", want \"%s\"", request, got, status);
	if (strstr(got, "application/problem+json") == NULL)
		fail_msg("%.70s...: not problem+json: %.300s", request, got);
	snprintf(want_field, sizeof(want_field), "\"field\":\"%s\"", field ? field : "");
	if (field && strstr(got, want_field) == NULL)
		fail_msg("%.70s...: no %s in %.400s", request, want_field, got);
	if (!closed)
		fail_msg("%.70s...: the connection stayed open", request);
	if (strstr(got + 5, "\r\nHTTP/1.") != NULL)
		fail_msg("%.70s...: two answers: %.300s", request, got);
	free(got);
}

static const char device_body[] = "{\"name\":\"Lab\",\"vendor\":\"ACME\",\"memory_bytes\":25769803776,"
				  "\"memory_bandwidth_bytes_per_second\":1e12,\"peak_flops_per_second\":{\"bf16\":1e14}}";

static void with_token(mpd_config *cfg)
{
	snprintf(cfg->token, sizeof(cfg->token), "sekrit");
}

/* ----- framing ------------------------------------------------------------------------------------------- */

#define RAW(s) s, sizeof(s) - 1

/*
 * Finding 11: what libmicrohttpd 0.9.75 let through on the daemon's own port. Before: a differing second
 * Content-Length was read as the next request's bytes (the first won), "Transfer-Encoding : chunked" and a folded
 * Transfer-Encoding were read by Content-Length, "Bearer <token>\0junk" authenticated, two Host headers and a bare
 * CR were served. Now each is a 400 in problem+json naming the header, and the connection closes.
 */
static void test_framing_seen(void **state)
{
	mpd_daemon d;
	char dir[64];
	uint16_t p;

	(void)state;
	http_start_with(&d, dir, sizeof(dir), with_token);
	p = d.bound_port;
	expect_refused(p, RAW("POST /v1/roofline HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
			      "Content-Length: 2\r\nContent-Length: 40\r\n\r\n{}GET /v1/health HTTP/1.1\r\nHost: localhost\r\n\r\n"),
		       "HTTP/1.1 400", "Content-Length");
	expect_refused(p, RAW("POST /v1/roofline HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
			      "Content-Length: 5\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n"),
		       "HTTP/1.1 400", "Transfer-Encoding ");
	expect_refused(p, RAW("POST /v1/roofline HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
			      "Content-Length: 5\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n"),
		       "HTTP/1.1 400", "Transfer-Encodingchunked");
	expect_refused(p, RAW("PUT /v1/devices/x1 HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer sekrit\0junk\r\n"
			      "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"),
		       "HTTP/1.1 400", "Authorization");
	expect_refused(p, RAW("GET /v1/health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"), "HTTP/1.1 400", "Host");
	expect_refused(p, RAW("GET /v1/health HTTP/1.1\r\nHost: localhost\rX: y\r\n\r\n"), "HTTP/1.1 400", "Host");
	expect_refused(p, RAW("GET /v1/health HTTP/1.1\r\nHost: localhost\r\nX-A: a\rb\r\n\r\n"), "HTTP/1.1 400", "X-A");
	expect_refused(p, RAW("GET /v1/health HTTP/1.1\r\nHost: localhost\r\nX-A: a\nConnection: close\r\n\r\n"),
		       "HTTP/1.1 400", "X-A");
	expect_refused(p, RAW("POST /v1/roofline HTTP/1.0\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked"
			      "\r\n\r\n2\r\n{}\r\n0\r\n\r\n"),
		       "HTTP/1.1 400", "Transfer-Encoding");
	expect_refused(p, RAW("POST /v1/roofline HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
			      "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"),
		       "HTTP/1.1 501", "Transfer-Encoding");
	/* still served: the same Content-Length twice (RFC 9110 section 8.6 lets it be taken as one), the token */
	{
		bool closed;
		char *got = exchange(p, RAW("POST /v1/roofline HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
					    "Content-Length: 2\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"),
				     &closed);

		assert_true(strncmp(got, "HTTP/1.1 422", 12) == 0); /* the body's own problem: it was read */
		free(got);
		got = exchange(p, RAW("PUT /v1/devices/x1 HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer sekrit\r\n"
				      "Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"),
			       &closed);
		assert_true(strncmp(got, "HTTP/1.1 422", 12) == 0); /* authenticated, then the device's own problems */
		free(got);
	}
	http_stop(&d, dir);
}

/* ----- Host: DNS rebinding ------------------------------------------------------------------------------- */

static void allow_corp(mpd_config *cfg)
{
	snprintf(cfg->allowed_hosts, sizeof(cfg->allowed_hosts), "memplan.example,.corp.example");
}

/*
 * Finding 10: a web page whose name resolves to 127.0.0.1 reaches the default daemon (loopback, no token) from the
 * browser; before, a PUT with Host: attacker.example was 201 and a DELETE of a preset 204. Now every request whose
 * Host is not a loopback name or address, nor the listener's, nor in --allowed-hosts, is a 403 naming Host, and
 * nothing is written. With a token, writes need it and the Host is not checked.
 */
static void test_host_rebinding(void **state)
{
	fixture *f = *state;
	static const char *const served[] = { "Host: localhost", "Host: 127.0.0.1", "Host: 127.0.0.1:1",
					      "Host: [::1]:8080", "Host: api.localhost" };
	static const char *const refused[] = { "Host: attacker.example", "Host: attacker.example:8080",
					       "Host: localhost.attacker.example", "Host: 10.0.0.1", "Host: [::2]" };
	mpd_daemon d;
	char dir[64];
	http_resp r;

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		http_do(&f->d, "PUT", "/v1/devices/rebound", device_body, "application/json", refused[i], &r);
		if (r.status != 403)
			fail_msg("%s: PUT answered %ld, want 403", refused[i], r.status);
		assert_string_equal(http_problem_field(&r), "Host");
		assert_string_equal(cJSON_GetObjectItem(r.json, "type")->valuestring, "urn:memplan:problem:forbidden");
		http_resp_free(&r);
		http_do(&f->d, "DELETE", "/v1/devices/h100-sxm5-80gb", NULL, NULL, refused[i], &r);
		assert_int_equal(r.status, 403);
		http_resp_free(&r);
		http_do(&f->d, "GET", "/v1/devices", NULL, NULL, refused[i], &r); /* reads too: the fleet is not leaked */
		assert_int_equal(r.status, 403);
		http_resp_free(&r);
	}
	http_do(&f->d, "GET", "/v1/devices/rebound", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 404); /* nothing was written */
	http_resp_free(&r);
	http_do(&f->d, "GET", "/v1/devices/h100-sxm5-80gb", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200); /* nor deleted */
	http_resp_free(&r);
	for (size_t i = 0; i < sizeof(served) / sizeof(served[0]); i++) {
		http_do(&f->d, "GET", "/v1/health", NULL, NULL, served[i], &r);
		if (r.status != 200)
			fail_msg("%s: answered %ld, want 200", served[i], r.status);
		http_resp_free(&r);
	}
	/* --allowed-hosts: a name and a domain with its subdomains */
	http_start_with(&d, dir, sizeof(dir), allow_corp);
	http_do(&d, "GET", "/v1/health", NULL, NULL, "Host: memplan.example", &r);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	http_do(&d, "GET", "/v1/health", NULL, NULL, "Host: gpu.corp.example:443", &r);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	http_do(&d, "GET", "/v1/health", NULL, NULL, "Host: corp.example.attacker.example", &r);
	assert_int_equal(r.status, 403);
	http_resp_free(&r);
	http_stop(&d, dir);
	/* with a token: the Host is not what protects writes */
	http_start_with(&d, dir, sizeof(dir), with_token);
	http_do(&d, "GET", "/v1/health", NULL, NULL, "Host: attacker.example", &r);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	http_do(&d, "PUT", "/v1/devices/rebound", device_body, "application/json", "Host: attacker.example", &r);
	assert_int_equal(r.status, 401);
	http_resp_free(&r);
	http_stop(&d, dir);
}

/* ----- RFC 9110 conditionals on PUT and DELETE ---------------------------------------------------------- */

/*
 * Finding 9: before, a stale If-Match on PUT answered 200 and on DELETE 204; If-Match on a missing id created it
 * (201); If-None-Match: * on an existing id replaced it (200). RFC 9110 section 13.1 wants 412 for each, and nothing
 * written. Devices and models alike.
 */
static void test_conditional_writes(void **state)
{
	fixture *f = *state;
	static const char model_body[] = "{\"hf_config\":{\"model_type\":\"llama\",\"hidden_size\":64,"
					 "\"intermediate_size\":128,\"num_hidden_layers\":2,\"num_attention_heads\":4,"
					 "\"vocab_size\":100}}";
	static const struct {
		const char *base, *body;
	} kinds[] = { { "/v1/devices/", device_body }, { "/v1/models/", model_body } };

	for (size_t k = 0; k < 2; k++) {
		char path[96], fresh[96], first[160], header[200];
		http_resp r;

		snprintf(path, sizeof(path), "%scond-a", kinds[k].base);
		snprintf(fresh, sizeof(fresh), "%scond-new", kinds[k].base);
		/* If-Match on a missing id: 412, not created */
		http_do(&f->d, "PUT", fresh, kinds[k].body, "application/json", "If-Match: \"0123456789abcdef\"", &r);
		assert_int_equal(r.status, 412);
		assert_string_equal(http_problem_field(&r), "If-Match");
		assert_string_equal(cJSON_GetObjectItem(r.json, "type")->valuestring,
				    "urn:memplan:problem:precondition-failed");
		http_resp_free(&r);
		http_do(&f->d, "PUT", fresh, kinds[k].body, "application/json", "If-Match: *", &r);
		assert_int_equal(r.status, 412);
		http_resp_free(&r);
		http_do(&f->d, "GET", fresh, NULL, NULL, NULL, &r);
		assert_int_equal(r.status, 404);
		http_resp_free(&r);
		/* If-None-Match: * creates only */
		http_do(&f->d, "PUT", path, kinds[k].body, "application/json", "If-None-Match: *", &r);
		assert_int_equal(r.status, 201);
		http_resp_free(&r);
		http_do(&f->d, "PUT", path, kinds[k].body, "application/json", "If-None-Match: *", &r);
		assert_int_equal(r.status, 412);
		assert_string_equal(http_problem_field(&r), "If-None-Match");
		http_resp_free(&r);
		/* the current tag replaces; the same tag again is stale */
		http_do(&f->d, "GET", path, NULL, NULL, NULL, &r);
		snprintf(first, sizeof(first), "%s", r.etag);
		http_resp_free(&r);
		snprintf(header, sizeof(header), "If-Match: %s", first);
		http_do(&f->d, "PUT", path, kinds[k].body, "application/json", header, &r);
		assert_int_equal(r.status, 200);
		http_resp_free(&r);
		if (k == 0) { /* a device PUT again with another body changes its tag */
			static const char other[] = "{\"name\":\"Lab 2\",\"vendor\":\"ACME\",\"memory_bytes\":25769803776,"
						    "\"memory_bandwidth_bytes_per_second\":1e12,\"peak_flops_per_second\":"
						    "{\"bf16\":1e14}}";

			http_do(&f->d, "PUT", path, other, "application/json", header, &r);
			assert_int_equal(r.status, 200);
			http_resp_free(&r);
		} else {
			http_do(&f->d, "PATCH", path, "{\"hf_config\":{\"num_hidden_layers\":3}}",
				"application/merge-patch+json", NULL, &r);
			assert_int_equal(r.status, 200);
			http_resp_free(&r);
		}
		http_do(&f->d, "PUT", path, kinds[k].body, "application/json", header, &r);
		assert_int_equal(r.status, 412); /* stale: before, 200 */
		http_resp_free(&r);
		http_do(&f->d, "DELETE", path, NULL, NULL, header, &r);
		assert_int_equal(r.status, 412); /* stale: before, 204 */
		http_resp_free(&r);
		http_do(&f->d, "GET", path, NULL, NULL, NULL, &r);
		assert_int_equal(r.status, 200); /* still there */
		snprintf(header, sizeof(header), "If-Match: %s", r.etag);
		http_resp_free(&r);
		http_do(&f->d, "DELETE", path, NULL, NULL, "If-None-Match: *", &r);
		assert_int_equal(r.status, 412);
		http_resp_free(&r);
		http_do(&f->d, "DELETE", path, NULL, NULL, header, &r);
		assert_int_equal(r.status, 204);
		http_resp_free(&r);
		http_do(&f->d, "DELETE", path, NULL, NULL, header, &r);
		assert_int_equal(r.status, 412); /* gone: If-Match cannot match */
		http_resp_free(&r);
	}
}

/* ----- smaller findings (13) ---------------------------------------------------------------------------- */

/* 100 Continue was sent before the 401 (the client then sent its body for nothing): the token is checked with the
 * headers, so a write without it gets 401 as the first and only answer. */
static void test_continue_not_before_401(void **state)
{
	static const char req[] = "PUT /v1/devices/x1 HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
				  "Content-Length: 180\r\nExpect: 100-continue\r\n\r\n";
	mpd_daemon d;
	char dir[64], *got;
	bool closed;

	(void)state;
	http_start_with(&d, dir, sizeof(dir), with_token);
	got = exchange(d.bound_port, req, sizeof(req) - 1, &closed);
	if (strncmp(got, "HTTP/1.1 401", 12) != 0)
		fail_msg("the first answer is \"%.60s\", want 401", got);
	assert_null(strstr(got, "100 Continue"));
	assert_non_null(strstr(got, "WWW-Authenticate: Bearer"));
	assert_true(closed);
	free(got);
	got = exchange(d.bound_port,
		       RAW("PUT /v1/devices/x1 HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer nope\r\n"
			   "Content-Type: application/json\r\nContent-Length: 180\r\nExpect: 100-continue\r\n\r\n"),
		       &closed);
	assert_true(strncmp(got, "HTTP/1.1 403", 12) == 0);
	free(got);
	/* with the token, 100 Continue comes and the body is read */
	{
		int s = connect_to(d.bound_port);
		char head[512], *rest;
		int n = snprintf(head, sizeof(head),
				 "PUT /v1/devices/x1 HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer sekrit\r\n"
				 "Content-Type: application/json\r\nContent-Length: %zu\r\nExpect: 100-continue\r\n"
				 "Connection: close\r\n\r\n",
				 sizeof(device_body) - 1);

		assert_int_equal(send(s, head, (size_t)n, MSG_NOSIGNAL), n);
		rest = read_all(s, 1.0, &closed);
		assert_true(strncmp(rest, "HTTP/1.1 100", 12) == 0);
		free(rest);
		assert_int_equal(send(s, device_body, sizeof(device_body) - 1, MSG_NOSIGNAL), (ssize_t)sizeof(device_body) - 1);
		rest = read_all(s, 5, &closed);
		assert_true(strncmp(rest, "HTTP/1.1 201", 12) == 0);
		free(rest);
		close(s);
	}
	http_stop(&d, dir);
}

/* 300 query arguments closed the connection without an answer (libmicrohttpd's 16 KiB pool could not hold them):
 * now a 414 in problem+json; 64 are still parsed and judged (an unknown one is the route's 422). */
static void test_many_query_args(void **state)
{
	fixture *f = *state;
	char path[4096];
	size_t o;
	http_resp r;

	o = (size_t)snprintf(path, sizeof(path), "/v1/health?");
	for (int i = 0; i < 300; i++)
		o += (size_t)snprintf(path + o, sizeof(path) - o, "%sa%d=1", i ? "&" : "", i);
	http_do(&f->d, "GET", path, NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 414);
	assert_string_equal(r.content_type, "application/problem+json");
	assert_string_equal(http_problem_field(&r), "?");
	http_resp_free(&r);
	o = (size_t)snprintf(path, sizeof(path), "/v1/devices?");
	for (int i = 0; i < 64; i++)
		o += (size_t)snprintf(path + o, sizeof(path) - o, "%sa%d=1", i ? "&" : "", i);
	http_do(&f->d, "GET", path, NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "?a0");
	http_resp_free(&r);
}

/* ?pretty= (empty) and a bare ?pretty were taken as true and false; neither says which: 422 naming ?pretty. */
static void test_pretty_empty(void **state)
{
	fixture *f = *state;
	static const char *const bad[] = { "/v1/health?pretty=", "/v1/health?pretty", "/v1/health?pretty=yes" };
	http_resp r;

	for (size_t i = 0; i < 3; i++) {
		http_do(&f->d, "GET", bad[i], NULL, NULL, NULL, &r);
		if (r.status != 422)
			fail_msg("%s answered %ld, want 422", bad[i], r.status);
		assert_string_equal(http_problem_field(&r), "?pretty");
		http_resp_free(&r);
	}
	http_do(&f->d, "GET", "/v1/health?pretty=true", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, "\n\t\"status\""));
	http_resp_free(&r);
	http_do(&f->d, "GET", "/v1/health?pretty=0", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
}

static void log_info(mpd_config *cfg)
{
	cfg->log_level = 1; /* MPD_LOG_INFO: access lines */
}

/* Raw invalid UTF-8 of a request target reached the access log (a line that is not JSON text): it is written as
 * \xNN now, and every line is valid UTF-8. */
static void test_access_log_utf8(void **state)
{
	char logpath[] = "/tmp/memplan-accesslog-XXXXXX", line[4096];
	int fd = mkstemp(logpath), saved;
	mpd_daemon d;
	char dir[64];
	http_resp r;
	FILE *in;
	bool seen = false;

	(void)state;
	assert_true(fd >= 0);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	dup2(fd, STDERR_FILENO);
	http_start_with(&d, dir, sizeof(dir), log_info);
	http_do(&d, "GET", "/v1/devices/%FF%C3%28ok", NULL, NULL, NULL, &r);
	http_resp_free(&r);
	http_stop(&d, dir);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(fd);
	in = fopen(logpath, "r");
	assert_non_null(in);
	while (fgets(line, sizeof(line), in)) {
		size_t n = strlen(line);

		if (mpc_utf8_invalid_at(line, n) != n)
			fail_msg("a log line is not UTF-8: %s", line);
		if (strstr(line, "\"msg\":\"access\"") && strstr(line, "/v1/devices/\\\\xff\\\\xc3(ok"))
			seen = true;
	}
	fclose(in);
	unlink(logpath);
	assert_true(seen);
}


/* ----- the extender body read as it streams (items 1, 2, 7) --------------------------------------------- */

/* A Node object from the GFD fixtures (tests/ref/k8s/nodes.json) with what kube-scheduler adds, and a status. */
static cJSON *fixture_node(const cJSON *fx, int copy)
{
	cJSON *n = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(n, "metadata"), *status, *alloc;
	char name[96];

	snprintf(name, sizeof(name), "%s-%d", cJSON_GetObjectItem(fx, "name")->valuestring, copy);
	cJSON_AddStringToObject(meta, "name", name);
	cJSON_AddItemToObject(meta, "labels", cJSON_Duplicate(cJSON_GetObjectItem(fx, "labels"), true));
	cJSON_AddStringToObject(cJSON_GetObjectItem(meta, "labels"), "kubernetes.io/hostname", name);
	status = cJSON_AddObjectToObject(n, "status");
	alloc = cJSON_AddObjectToObject(status, "allocatable");
	cJSON_AddStringToObject(alloc, "cpu", "96");
	if (cJSON_GetObjectItem(fx, "allocatable"))
		cJSON_AddStringToObject(alloc, "nvidia.com/gpu", cJSON_GetObjectItem(fx, "allocatable")->valuestring);
	cJSON_AddItemToObject(status, "images", cJSON_Parse("[{\"names\":[\"nvcr.io/nvidia/k8s/dcgm-exporter:4.2\"],"
							    "\"sizeBytes\":1234567890123}]"));
	return n;
}

/* The filter's answer to body by the tree decoder (mpc_parse_body, mpc_k8s_args_decode, mpc_k8s_filter_write) and by
 * the stream decoder fed in chunks of `chunk` bytes (mpc_k8s_filter_pieces around the echoed texts). Returns the two
 * statuses; *tree and *stream the answers (parsed), NULL on an error. */
static void both_ways(mps_service *svc, const char *body, size_t chunk, mp_status *st_tree, mp_status *st_stream,
		      cJSON **tree, cJSON **stream)
{
	mps_k8s_policy policy = { false, 0.1, NULL, 0 };
	mpc_k8s_args a;
	mps_k8s_result r;
	mp_error e = MP_ERROR_INIT;
	mpc_k8s_limits lim;
	mpc_k8s_stream *ks;
	cJSON *doc = NULL;
	size_t len = strlen(body);

	*tree = *stream = NULL;
	*st_tree = mpc_parse_body(body, len, &doc, &e);
	if (*st_tree == MP_OK)
		*st_tree = mpc_k8s_args_decode(doc, &a, &e);
	if (*st_tree == MP_OK) {
		memset(&r, 0, sizeof(r));
		assert_int_equal(mps_k8s_place(svc, &a.rq, &policy, &r, &e), MP_OK);
		{
			mpc_out w;

			mpc_out_init(&w);
			mpc_k8s_filter_write(&w, &a, &r);
			*tree = mpc_out_parse(&w);
		}
		mps_k8s_result_free(&r);
		mpc_k8s_args_free(&a);
	}
	cJSON_Delete(doc);
	mpc_k8s_limits_default(&lim);
	ks = mpc_k8s_stream_new(&lim, true);
	assert_non_null(ks);
	*st_stream = MP_OK;
	for (size_t at = 0; at < len && *st_stream == MP_OK; at += chunk)
		*st_stream = mpc_k8s_stream_feed(ks, body + at, len - at < chunk ? len - at : chunk, &e);
	if (*st_stream == MP_OK)
		*st_stream = mpc_k8s_stream_finish(ks, &a, &e);
	mpc_k8s_stream_free(ks);
	if (*st_stream == MP_OK) {
		char *head, *tail, *text;
		size_t hl, tl, o = 0, total;

		memset(&r, 0, sizeof(r));
		assert_int_equal(mps_k8s_place(svc, &a.rq, &policy, &r, &e), MP_OK);
		assert_int_equal(mpc_k8s_filter_pieces(&a, &r, &head, &hl, &tail, &tl), MP_OK);
		total = hl + tl + 1;
		for (size_t i = 0; i < a.rq.nnodes && a.echo_len; i++) /* (NodeNames alone: no texts) */
			total += a.echo_len[i] + 1;
		text = malloc(total);
		memcpy(text, head, hl);
		o = hl;
		for (size_t i = 0, k = 0; i < a.rq.nnodes && hl > 0; i++) /* (no head: no Nodes echoed, an Error) */
			if (r.nodes[i].verdict == MPS_K8S_PASS) {
				if (k++)
					text[o++] = ',';
				memcpy(text + o, a.echo + a.echo_at[i], a.echo_len[i]);
				o += a.echo_len[i];
			}
		memcpy(text + o, tail, tl);
		text[o + tl] = '\0';
		*stream = cJSON_Parse(text);
		assert_non_null(*stream);
		free(text);
		free(head);
		free(tail);
		mps_k8s_result_free(&r);
		mpc_k8s_args_free(&a);
	}
}

/*
 * The stream decoder reads every body as the tree decoder does: each fixture pod (tests/ref/k8s/pods.json: vLLM and
 * SGLang launches, annotations, bad ones) on every GFD fixture node, fed one byte at a time, 7 at a time and whole,
 * gives the same filter answer (the echoed Node objects included), and Nodes before Pod too; the bodies kube-
 * scheduler could not have sent get the same status.
 */
static void test_stream_equals_tree(void **state)
{
	fixture *f = *state;
	cJSON *pods = ref_json("k8s/pods.json"), *nodes = ref_json("k8s/nodes.json"), *p;
	static const char *const odd[] = {
		"{\"Nodes\":null}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{}}]}}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[7]}}",
		"{\"Pod\":{},\"Nodes\":[]}",
		"{\"Pod\":{},\"NodeNames\":[\"a\",3]}",
		"{\"Pod\":{},\"NodeNames\":[\"a\",\"b\"]}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n1\",\"labels\":[1]},\"status\":[]}]}}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n1\",\"labels\":{\"nvidia.com/gpu.memory\":"
		"\"x\"}},\"status\":{\"allocatable\":{\"nvidia.com/gpu\":{}}}}]}}",
		"[1,2]",
		"{\"Pod\":{\"metadata\":{\"name\":\"a\\u0000b\"}}}",
		"{\"Pod\":{\"metadata\":{\"name\":\"a\",\"name\":\"b\"}}}",
		"{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n1\",\"labels\":{\"nvidia.com/gpu.count\":\"1\","
		"\"nvidia.com/gpu.count\":\"8\"}}}]}}",
		"{\"Pod\":{},",
		"",
	};
	int compared = 0;

	cJSON_ArrayForEach(p, cJSON_GetObjectItem(pods, "pods"))
	{
		cJSON *args = cJSON_CreateObject(), *items, *n;
		char *body;
		int copy = 0;

		cJSON_AddItemToObject(args, "Pod", cJSON_Duplicate(p, true));
		items = cJSON_AddArrayToObject(cJSON_AddObjectToObject(args, "Nodes"), "items");
		cJSON_ArrayForEach(n, cJSON_GetObjectItem(nodes, "nodes"))
		{
			cJSON_AddItemToArray(items, fixture_node(n, copy++));
		}
		cJSON_AddNullToObject(args, "NodeNames");
		body = cJSON_PrintUnformatted(args);
		for (size_t chunk = 1; chunk <= strlen(body); chunk = chunk == 1 ? 7 : strlen(body)) {
			mp_status a, b;
			cJSON *t, *s;

			both_ways(f->d.svc, body, chunk, &a, &b, &t, &s);
			if (a != b || !cJSON_Compare(t, s, true)) {
				char *x = t ? cJSON_PrintUnformatted(t) : NULL, *y = s ? cJSON_PrintUnformatted(s) : NULL;

				fail_msg("pod %s, chunks of %zu: tree %d, stream %d:\n%.600s\n%.600s", p->string, chunk, a, b,
					 x ? x : "", y ? y : "");
			}
			cJSON_Delete(t);
			cJSON_Delete(s);
			compared++;
			if (chunk == strlen(body))
				break;
		}
		/* Nodes before Pod: judged once the pod is known */
		{
			cJSON *rev = cJSON_CreateObject();
			char *text;
			mp_status a, b;
			cJSON *t, *s;

			cJSON_AddItemToObject(rev, "Nodes", cJSON_Duplicate(cJSON_GetObjectItem(args, "Nodes"), true));
			cJSON_AddItemToObject(rev, "Pod", cJSON_Duplicate(p, true));
			text = cJSON_PrintUnformatted(rev);
			both_ways(f->d.svc, text, 13, &a, &b, &t, &s);
			assert_int_equal(a, b);
			assert_true(cJSON_Compare(t, s, true));
			cJSON_Delete(t);
			cJSON_Delete(s);
			cJSON_free(text);
			cJSON_Delete(rev);
		}
		cJSON_free(body);
		cJSON_Delete(args);
	}
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		mp_status a, b;
		cJSON *t, *s;

		both_ways(f->d.svc, odd[i], 3, &a, &b, &t, &s);
		if (a != b)
			fail_msg("%s: tree %s, stream %s", odd[i], mp_status_str(a), mp_status_str(b));
		assert_true(a != MP_OK || cJSON_Compare(t, s, true));
		cJSON_Delete(t);
		cJSON_Delete(s);
	}
	assert_true(compared >= 3 * 14);
	cJSON_Delete(pods);
	cJSON_Delete(nodes);
}

/* The process's peak resident memory, in KiB (VmHWM), and its reset (/proc/self/clear_refs "5"). */
static long peak_kib(bool reset)
{
	char line[256];
	long kib = -1;
	FILE *f;

	if (reset) {
		f = fopen("/proc/self/clear_refs", "w");
		if (f) {
			fputs("5", f);
			fclose(f);
		}
	}
	f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, reset ? "VmRSS:" : "VmHWM:", 6) == 0)
			kib = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return kib;
}

/* Sends a body of n bytes made by gen (chunk by chunk) after head; returns what came back. */
static char *send_body(uint16_t port, const char *head, size_t n, void (*gen)(char *buf, size_t at, size_t len))
{
	int s = connect_to(port);
	char chunk[65536];
	bool closed;
	char *got;

	assert_int_equal(send(s, head, strlen(head), MSG_NOSIGNAL), (ssize_t)strlen(head));
	for (size_t at = 0; at < n;) {
		size_t len = n - at < sizeof(chunk) ? n - at : sizeof(chunk);

		gen(chunk, at, len);
		if (send(s, chunk, len, MSG_NOSIGNAL) != (ssize_t)len)
			break;
		at += len;
	}
	got = read_all(s, 30, &closed);
	close(s);
	return got;
}

static size_t tiny_total;

/* {"x":[0,0,...,0]} of tiny_total bytes. */
static void tiny_values(char *buf, size_t at, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		size_t k = at + i;

		buf[i] = k < 6 ? "{\"x\":["[k] : k >= tiny_total - 3 ? "0]}"[k - (tiny_total - 3)] : ((k - 6) % 2 ? ',' : '0');
	}
}

/*
 * Finding 1: a POST /v1/k8s/filter of 16 MiB of tiny values, {"x":[0,0,...]}, cost +615 MiB before (every value a
 * cJSON node before anything was checked; 127 MiB cost +4,551 MiB and left 7,650 MiB resident). Read as it streams,
 * the values of a member kube-scheduler does not send are counted and dropped: 413 at the 10,001st, and the
 * process's peak stays within a few MiB. (bench/attack/attack.py big-tiny measures the 127 MiB body.)
 */
static void test_extender_tiny_values(void **state)
{
	fixture *f = *state;
	char head[256], *got;
	long before, peak;

	tiny_total = (16u << 20) + 1; /* 6 + 2 m + 3 bytes: "{\"x\":[", m times "0,", "0]}" */
	snprintf(head, sizeof(head),
		 "POST /v1/k8s/filter HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: "
		 "%zu\r\nConnection: close\r\n\r\n",
		 tiny_total);
	before = peak_kib(true);
	got = send_body(f->d.bound_port, head, tiny_total, tiny_values);
	peak = peak_kib(false);
	if (strncmp(got, "HTTP/1.1 413", 12) != 0)
		fail_msg("answered %.80s", got);
	assert_non_null(strstr(got, "outside Pod, Nodes.items and NodeNames"));
	free(got);
	print_message("16 MiB of tiny values: peak +%ld KiB\n", peak - before);
	if (peak - before > 48 * 1024)
		fail_msg("the 16 MiB body of tiny values raised the peak by %ld KiB (want < 48 MiB)", peak - before);
}

static void small_budget(mpd_config *cfg)
{
	cfg->max_request_memory_bytes = 24u << 20;
	cfg->max_request_memory_bytes_per_ip = 14u << 20;
	cfg->body_timeout_seconds = 20;
}

/* An extender body of real nodes, n bytes long: {"Pod":{},"Nodes":{"items":[<node>,<node>,...]}} (the tail closes
 * it); the nodes' texts are what the filter keeps. */
static const char lead[] = "{\"Pod\":{},\"Nodes\":{\"items\":[";
static const char node[] = "{\"metadata\":{\"name\":\"gpu-node\",\"labels\":{\"nvidia.com/gpu.product\":"
				   "\"NVIDIA-H100-80GB-HBM3\",\"kubernetes.io/os\":\"linux\"}},\"status\":{\"allocatable\":"
				   "{\"nvidia.com/gpu\":\"8\"},\"images\":[{\"names\":[\"nvcr.io/nvidia/image-00@sha256:"
				   "0000000000000000000000000000000000000000000000000000000000000000\",\"nvcr.io/nvidia/image-00:v1"
				   "\"],\"sizeBytes\":100000000},{\"names\":[\"nvcr.io/nvidia/image-01@sha256:000000000000000000"
				   "0000000000000000000000000000000000000000000000\",\"nvcr.io/nvidia/image-01:v1\"],\"sizeBytes\":"
				   "100000001},{\"names\":[\"nvcr.io/nvidia/image-02@sha256:00000000000000000000000000000000000000"
				   "00000000000000000000000000\",\"nvcr.io/nvidia/image-02:v1\"],\"sizeBytes\":100000002}]}},";

static void nodes_body(char *buf, size_t at, size_t len)
{
	size_t nl = sizeof(node) - 1, ll = sizeof(lead) - 1;

	for (size_t i = 0; i < len; i++) {
		size_t k = at + i;

		buf[i] = k < ll ? lead[k] : node[(k - ll) % nl];
	}
}

/*
 * Finding 2: trickled extender uploads each held up to 128 MiB (40 of them: 5 GiB). Bodies and what the extender
 * keeps count in a budget: with 14 MiB per address here (24 MiB in all), a third upload of 1.5 MiB of Node
 * objects (2,800 nodes: 5.5 MB held with their texts and decoded nodes) is refused (503, Retry-After) while two are held just short of their
 * end, and answered when its body ends; the first two are still served.
 */
static void test_budget_of_bodies(void **state)
{
	static const char end[] = "{\"metadata\":{\"name\":\"last\"}}]}}";
	mpd_daemon d;
	char dir[64], head[256], chunk[65536];
	int s[3];
	size_t n = sizeof(lead) - 1 + ((3u << 19) / (sizeof(node) - 1)) * (sizeof(node) - 1); /* 1.5 MiB of nodes */
	bool closed;

	(void)state;
	http_start_with(&d, dir, sizeof(dir), small_budget);
	snprintf(head, sizeof(head),
		 "POST /v1/k8s/filter HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: "
		 "%zu\r\nConnection: close\r\n\r\n",
		 n + sizeof(end) - 1);
	for (int k = 0; k < 3; k++) {
		s[k] = connect_to(d.bound_port);
		assert_int_equal(send(s[k], head, strlen(head), MSG_NOSIGNAL), (ssize_t)strlen(head));
		for (size_t at = 0; at < n; at += sizeof(chunk)) {
			size_t len = n - at < sizeof(chunk) ? n - at : sizeof(chunk);

			nodes_body(chunk, at, len);
			assert_int_equal(send(s[k], chunk, len, MSG_NOSIGNAL), (ssize_t)len);
		}
		usleep(300 * 1000); /* the daemon reads it all */
		print_message("after upload %d: %zu bytes held\n", k, mpd_budget_used(d.budget));
	}
	assert_true(mpd_budget_used(d.budget) <= (14u << 20));
	/* the ends: the third was refused while it arrived, the first two complete */
	for (int k = 0; k < 3; k++) {
		char *got;

		assert_int_equal(send(s[k], end, sizeof(end) - 1, MSG_NOSIGNAL), (ssize_t)sizeof(end) - 1);
		got = read_all(s[k], 10, &closed);
		if (k < 2 && strncmp(got, "HTTP/1.1 200", 12) != 0)
			fail_msg("upload %d: %.300s", k, got);
		if (k == 2 && (strncmp(got, "HTTP/1.1 503", 12) != 0 || strstr(got, "Retry-After: 1") == NULL ||
			       strstr(got, "max-request-memory-bytes-per-ip") == NULL))
			fail_msg("the third upload: %.300s", got);
		free(got);
		close(s[k]);
	}
	usleep(200 * 1000);
	assert_int_equal(mpd_budget_used(d.budget), 0); /* every byte given back */
	http_stop(&d, dir);
}

static void body_deadline(mpd_config *cfg)
{
	cfg->body_timeout_seconds = 2;
	cfg->connection_timeout_seconds = 30;
}

/*
 * Finding 3: the header deadline never applied to a body: one byte per 25 s held a connection (1,030 of them locked
 * every client out for 80 s). A body now has --body-timeout (2 s here) however it trickles, and must move
 * --min-transfer-rate over each 5 s window: a body trickling a byte every 300 ms is cut at 2 s.
 */
static void test_body_deadline(void **state)
{
	static const char head[] = "POST /v1/plan/inference HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
				   "Content-Length: 200\r\n\r\n";
	mpd_daemon d;
	char dir[64];
	double t0, closed_at = -1;
	int s;

	(void)state;
	http_start_with(&d, dir, sizeof(dir), body_deadline);
	s = connect_to(d.bound_port);
	assert_int_equal(send(s, head, sizeof(head) - 1, MSG_NOSIGNAL), (ssize_t)sizeof(head) - 1);
	t0 = now_s();
	for (int i = 0; i < 40 && closed_at < 0; i++) { /* 12 s at most */
		struct pollfd p = { .fd = s, .events = POLLIN };
		char c;

		if (send(s, " ", 1, MSG_NOSIGNAL) != 1 || (poll(&p, 1, 300) == 1 && recv(s, &c, 1, 0) <= 0))
			closed_at = now_s() - t0;
	}
	close(s);
	if (!(closed_at >= 1.8 && closed_at <= 4.0))
		fail_msg("the trickled body was closed at %.1f s (want about 2 s, the body timeout)", closed_at);
	http_stop(&d, dir);
}

static void one_heavy(mpd_config *cfg)
{
	cfg->max_heavy_requests = 1;
	cfg->send_timeout_seconds = 60;
}

/* A fit body of n jobs over the stored GPUs and 16 GPU counts. */
static char *big_fit(int n)
{
	size_t cap = (size_t)n * 200 + 256, o;
	char *b = malloc(cap);

	o = (size_t)snprintf(b, cap, "{\"gpu_counts\":[1,2,3,4,5,6,7,8,10,12,16,24,32,48,64,128],\"jobs\":[");
	for (int i = 0; i < n; i++)
		o += (size_t)snprintf(b + o, cap - o,
				      "%s{\"id\":\"i%d\",\"inference\":{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\","
				      "\"kv_cache_dtype\":\"bf16\",\"batch_size\":%d,\"sequence_length\":1024}}",
				      i ? "," : "", i, 1 + i % 64);
	snprintf(b + o, cap - o, "]}");
	return b;
}

/*
 * Finding 5: a slow reader of the largest fit held the only heavy slot for as long as it read (39 of 40 other fits
 * got 503 over 80 s; one that never read held it 30 s). The answer is computed whole on the heavy lane and sent from
 * its buffer: with one slot, a client that never reads its 5 MB answer does not keep a second fit from being
 * computed at once.
 */
static void test_slot_free_while_sent(void **state)
{
	mpd_daemon d;
	char dir[64], head[256], *body = big_fit(300), *got;
	int s, rcv = 4096;
	http_resp r;
	bool closed;

	(void)state;
	http_start_with(&d, dir, sizeof(dir), one_heavy);
	s = connect_to(d.bound_port);
	setsockopt(s, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv)); /* a reader that takes nothing */
	snprintf(head, sizeof(head),
		 "POST /v1/fit HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
		 strlen(body));
	assert_int_equal(send(s, head, strlen(head), MSG_NOSIGNAL), (ssize_t)strlen(head));
	assert_int_equal(send(s, body, strlen(body), MSG_NOSIGNAL), (ssize_t)strlen(body));
	got = read_all(s, 3.0, &closed); /* its first bytes only: the answer is computed, the reader reads no more */
	assert_true(strncmp(got, "HTTP/1.1 200", 12) == 0);
	free(got);
	for (int k = 0; k < 3; k++) {
		http_do(&d, "POST", "/v1/fit", body, "application/json", NULL, &r);
		if (r.status != 200)
			fail_msg("fit %d while the first answer waits for its reader: %ld", k, r.status);
		http_resp_free(&r);
	}
	close(s);
	free(body);
	http_stop(&d, dir);
}

/* memplan_response_cache_<name> in the daemon's /metrics, as a number (-1 when absent). */
static long long cache_metric(const mpd_daemon *d, const char *name)
{
	http_resp r;
	char key[96];
	const char *p;
	long long v = -1;

	snprintf(key, sizeof(key), "\nmemplan_response_cache_%s ", name);
	http_do(d, "GET", "/metrics", NULL, NULL, NULL, &r);
	p = r.body ? strstr(r.body, key) : NULL;
	if (p)
		v = strtoll(p + strlen(key), NULL, 10);
	http_resp_free(&r);
	return v;
}

/* A file of the reference tree (tests/ref/rel) copied to path. */
static void copy_ref(const char *rel, const char *path)
{
	size_t len;
	char *b = ref_read(ref_path(rel), &len);
	FILE *f = fopen(path, "wb");

	assert_non_null(b);
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, len, f), len);
	fclose(f);
	free(b);
}

/*
 * POST /v1/fit, computed job by job on the heavy lane, with jobs naming Hugging Face repositories: each is read from
 * the local Hugging Face cache (laid out as huggingface_hub does, HF_HUB_CACHE; the llama reference's config, index
 * and shard headers, tests/ref/llamacpp/models) before the first job is planned, as the library's fit reads them
 * (the same document); the table for people too; a repository nobody has is a 404 naming its job. Such an answer
 * rests on files outside the store, so the response cache never keeps it, where a fit of stored models repeated
 * is answered from the cache.
 */
static void test_fit_hf_repo_job_by_job(void **state)
{
	static const char commit[] = "0123456789abcdef0123456789abcdef01234567";
	static const char *const files[][2] = {
		{ "llamacpp/models/llama.config.json", "config.json" },
		{ "llamacpp/models/llama.model.safetensors.index.json", "model.safetensors.index.json" },
		{ "llamacpp/models/llama.model-00001-of-00002.safetensors.hdr", "model-00001-of-00002.safetensors" },
		{ "llamacpp/models/llama.model-00002-of-00002.safetensors.hdr", "model-00002-of-00002.safetensors" },
	};
	const char *body = "{\"jobs\": [{\"inference\": {\"model\": {\"hf_repo\": \"acme/tiny-llama\"}, \"batch_size\": 1, "
			   "\"sequence_length\": 4096}}, {\"inference\": {\"model\": {\"hf_repo\": \"acme/tiny-llama\"}, "
			   "\"batch_size\": 8, \"sequence_length\": 4096}}, {\"inference\": {\"model\": \"llama-3-8b\", "
			   "\"batch_size\": 1, \"sequence_length\": 4096}}], \"devices\": [\"rtx-4090-24gb\", \"h100-sxm5-80gb\"]}";
	const char *stored = "{\"jobs\": [{\"inference\": {\"model\": \"llama-3-8b\", \"batch_size\": 2, "
			     "\"sequence_length\": 2048}}], \"devices\": [\"rtx-4090-24gb\"]}";
	char hf[] = "/tmp/memplan-attack-hf-XXXXXX", path[700], dir[64], *lib = NULL;
	const char *old = getenv("HF_HUB_CACHE");
	char *saved = old ? strdup(old) : NULL;
	mpd_daemon d;
	http_resp r;
	cJSON *got, *want, *parsed;
	mp_error err = MP_ERROR_INIT;
	long long hits;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(hf));
	snprintf(path, sizeof(path), "mkdir -p '%s/models--acme--tiny-llama/refs' '%s/models--acme--tiny-llama/snapshots/%s'",
		 hf, hf, commit);
	assert_int_equal(system(path), 0);
	snprintf(path, sizeof(path), "%s/models--acme--tiny-llama/refs/main", hf);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(commit, f);
	fclose(f);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/models--acme--tiny-llama/snapshots/%s/%s", hf, commit, files[i][1]);
		copy_ref(files[i][0], path);
	}
	setenv("HF_HUB_CACHE", hf, 1);
	http_start(&d, dir, sizeof(dir));

	http_do(&d, "POST", "/v1/fit", body, "application/json", NULL, &r);
	if (r.status != 200)
		fail_msg("fit naming a cached repository: %ld %.400s", r.status, r.body ? r.body : "");
	got = cJSON_Parse(r.body);
	assert_non_null(got);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(got, "jobs")), 3);
	http_resp_free(&r);
	parsed = cJSON_Parse(body);
	assert_int_equal(lib_answer(d.svc, "fit", parsed, &lib, &err), MP_OK);
	want = cJSON_Parse(lib);
	assert_non_null(want);
	if (!cJSON_Compare(got, want, true))
		fail_msg("the daemon's fit differs from the library's for the same repositories");
	cJSON_Delete(want);
	cJSON_Delete(got);
	cJSON_Delete(parsed);
	free(lib);

	http_do(&d, "POST", "/v1/fit?format=text", body, "application/json", NULL, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.content_type, "text/plain"));
	http_resp_free(&r);

	/* the cache keeps a fit of stored models (its second answer a hit) and never one of repositories */
	http_do(&d, "POST", "/v1/fit", stored, "application/json", NULL, &r);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	hits = cache_metric(&d, "hits_total");
	assert_true(hits >= 0);
	http_do(&d, "POST", "/v1/fit", stored, "application/json", NULL, &r);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	assert_int_equal(cache_metric(&d, "hits_total"), hits + 1);
	http_do(&d, "POST", "/v1/fit", body, "application/json", NULL, &r);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	assert_int_equal(cache_metric(&d, "hits_total"), hits + 1);

	http_do(&d, "POST", "/v1/fit",
		"{\"jobs\": [{\"inference\": {\"model\": \"llama-3-8b\", \"batch_size\": 1, \"sequence_length\": 1024}}, "
		"{\"inference\": {\"model\": {\"hf_repo\": \"acme/none\"}, \"batch_size\": 1, \"sequence_length\": 1024}}], "
		"\"devices\": [\"rtx-4090-24gb\"]}",
		"application/json", NULL, &r);
	assert_int_equal(r.status, 404);
	assert_non_null(strstr(r.body, "/jobs/1/inference/model"));
	http_resp_free(&r);

	http_stop(&d, dir);
	if (saved)
		setenv("HF_HUB_CACHE", saved, 1);
	else
		unsetenv("HF_HUB_CACHE");
	free(saved);
	snprintf(path, sizeof(path), "rm -rf '%s'", hf);
	assert_int_equal(system(path), 0);
}

static void two_heavy(mpd_config *cfg)
{
	cfg->max_heavy_requests = 2;
	cfg->threads = 2;
}

typedef struct poster {
	mpd_daemon *d;
	const char *path, *body;
	long status;
} poster;

static void *post_thread(void *arg)
{
	poster *p = arg;
	http_resp r;

	http_do(p->d, "POST", p->path, p->body, "application/json", NULL, &r);
	p->status = r.status;
	http_resp_free(&r);
	return NULL;
}

/* An extender body of about n bytes: nodes_body's Node objects, each with an image list of kube-scheduler's size
 * (20 images, about 3 KB a node), whole. */
static char *extender_of(size_t n)
{
	static const char end[] = "{\"metadata\":{\"name\":\"last\"}}]}}";
	char img[4096], *b = malloc(n + 8192);
	size_t o = sizeof(lead) - 1, il = 0;

	assert_non_null(b);
	memcpy(b, lead, o);
	for (int m = 0; m < 20; m++)
		il += (size_t)snprintf(img + il, sizeof(img) - il,
				       "%s{\"names\":[\"nvcr.io/nvidia/image-%02d@sha256:%064d\",\"nvcr.io/nvidia/image-%02d:v1\"],"
				       "\"sizeBytes\":%d}",
				       m ? "," : "", m, m * 7919, m, 100000000 + m);
	while (o + 4096 < n)
		o += (size_t)snprintf(b + o, n + 8192 - o,
				      "{\"metadata\":{\"name\":\"gpu-node\",\"labels\":{\"nvidia.com/gpu.product\":"
				      "\"NVIDIA-H100-80GB-HBM3\"}},\"status\":{\"allocatable\":{\"nvidia.com/gpu\":\"8\"},"
				      "\"images\":[%s]}},",
				      img);
	memcpy(b + o, end, sizeof(end));
	return b;
}

/*
 * Finding 7: parallel extender parses starved health: six 24 MiB bodies at once were parsed whole (a cJSON tree
 * each) on the HTTP workers, and GET /v1/health waited up to 7.62 s. The body is read as it streams, a chunk at a
 * time between the worker's other connections, and placement runs on the heavy lane: while four 24 MiB extender
 * calls (8,000 Node objects each) are read and computed at once, nine health probes in ten answer within 100 ms and
 * none takes 1.5 s (before: 2.9 and 4.3 s while the bodies were parsed, in two runs).
 */
static void test_health_while_heavy(void **state)
{
	mpd_daemon d;
	char dir[64], *body = extender_of(24u << 20);
	pthread_t t[4];
	poster p[4];
	double worst = 0;
	int probes = 0, slow = 0;

	(void)state;
	http_start_with(&d, dir, sizeof(dir), two_heavy);
	for (int i = 0; i < 4; i++) {
		p[i] = (poster){ &d, "/v1/k8s/filter", body, -1 };
		pthread_create(&t[i], NULL, post_thread, &p[i]);
	}
	usleep(20 * 1000);
	while ((p[0].status < 0 || p[1].status < 0 || p[2].status < 0 || p[3].status < 0) && probes < 1000) {
		double t0 = now_s(), took;
		http_resp r;

		http_do(&d, "GET", "/v1/health", NULL, NULL, NULL, &r);
		took = now_s() - t0;
		assert_int_equal(r.status, 200);
		http_resp_free(&r);
		worst = took > worst ? took : worst;
		slow += took > 0.1;
		probes++;
		usleep(20 * 1000);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		assert_true(p[i].status == 200 || p[i].status == 503); /* two slots: more wait their turn */
	}
	print_message("%d health probes while four extender calls were read and placed: %d over 100 ms, slowest %.1f ms\n",
		      probes, slow, worst * 1e3);
	assert_true(probes >= 3);
	/* (a probe may lose its CPU to other work on a shared machine; a worker parsing a body whole delayed every
	 * probe on its connections by the whole parse) */
	/* The regression this guards: a probe behind a whole parse waited 2.9-4.3 s. On a loaded shared machine (make
	 * check beside other builds) a probe loses its CPU now and then: one in five may pass 100 ms, none 1.5 s (the
	 * p99 target itself is the bench's: bench/attack, bench/RESULTS.md). Under AddressSanitizer (make asan sets
	 * MEMPLAN_SANITIZED) every request runs 2-3 times slower: none past 3 s. */
	if (slow * 5 > probes || worst > (getenv("MEMPLAN_SANITIZED") ? 3.0 : 1.5))
		fail_msg("%d of %d GET /v1/health took over 100 ms while the extender calls ran (slowest %.0f ms; want four "
			 "in five within 100 ms and none past %s)",
			 slow, probes, worst * 1e3, getenv("MEMPLAN_SANITIZED") ? "3 s (sanitized)" : "1.5 s");
	free(body);
	http_stop(&d, dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_framing_seen),
		cmocka_unit_test_setup_teardown(test_host_rebinding, http_fixture_setup, http_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_conditional_writes, http_fixture_setup, http_fixture_teardown),
		cmocka_unit_test(test_continue_not_before_401),
		cmocka_unit_test_setup_teardown(test_many_query_args, http_fixture_setup, http_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_pretty_empty, http_fixture_setup, http_fixture_teardown),
		cmocka_unit_test(test_access_log_utf8),
		cmocka_unit_test_setup_teardown(test_stream_equals_tree, http_fixture_setup, http_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_extender_tiny_values, http_fixture_setup, http_fixture_teardown),
		cmocka_unit_test(test_budget_of_bodies),
		cmocka_unit_test(test_body_deadline),
		cmocka_unit_test(test_slot_free_while_sent),
		cmocka_unit_test(test_fit_hf_repo_job_by_job),
		cmocka_unit_test(test_health_while_heavy),
	};

	curl_global_init(CURL_GLOBAL_DEFAULT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
