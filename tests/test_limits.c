/*
 * test_limits.c: the daemon's limits, lifecycle settings and metrics, in-process on 127.0.0.1 port 0.
 * URL cap (414), header cap (431), slow clients cut off by the connection timeout (half a request line,
 * half a body), the serve settings (config file, environment, ranges), and GET /metrics counting what
 * it served plus the gauge registration API. Responses go through http_do, so they are logged for the
 * response-schema check like every other HTTP test.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "../daemon/config.h"
#include "../daemon/log.h"
#include "../daemon/metrics.h"
#include "http_util.h"

typedef http_fixture fixture; /* a daemon on 127.0.0.1 port 0 with a fresh database (http_util.h) */

static void test_url_too_long(void **state)
{
	fixture *f = *state;
	char path[MPD_MAX_URL_BYTES + 64];
	http_resp r;

	snprintf(path, sizeof(path), "/v1/devices/");
	memset(path + 12, 'a', MPD_MAX_URL_BYTES);
	path[12 + MPD_MAX_URL_BYTES] = '\0';
	http_do(&f->d, "GET", path, NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 414);
	assert_string_equal(r.content_type, "application/problem+json");
	assert_int_equal((long)cJSON_GetObjectItem(r.json, "status")->valuedouble, 414);
	http_resp_free(&r);
}

static void test_headers_too_large(void **state)
{
	fixture *f = *state;
	size_t n = MPD_CONNECTION_MEMORY_BYTES + 100;
	char *h = malloc(n + 16);
	http_resp r;

	memcpy(h, "X-Big: ", 7);
	memset(h + 7, 'x', n);
	h[7 + n] = '\0';
	http_do(&f->d, "GET", "/v1/health", NULL, NULL, h, &r);
	assert_int_equal(r.status, 431);
	http_resp_free(&r);
	free(h);
	/* the daemon still answers afterwards */
	http_do(&f->d, "GET", "/v1/health", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
}

/* Connects, sends `partial`, then waits; returns seconds until the daemon closed the connection (-1: never
 * within `wait_s`). */
static double stall(uint16_t port, const char *partial, int wait_s)
{
	struct sockaddr_in a;
	struct timeval tv = { .tv_sec = wait_s, .tv_usec = 0 };
	struct timespec t0, t1;
	char buf[4096];
	ssize_t got;
	int s = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(s >= 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(s, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(send(s, partial, strlen(partial), 0), (ssize_t)strlen(partial));
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		got = recv(s, buf, sizeof(buf), 0);
	while (got > 0);	/* a daemon may answer before it closes; read until EOF */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	close(s);
	if (got < 0)
		return -1;
	return (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
}

/* A slow-loris client (half the headers, or half a body, then nothing) is cut off by the idle timeout. */
static void test_slow_client_cut_off(void **state)
{
	fixture *f = *state;
	mpd_daemon d;
	char dir[64];
	double t;

	(void)f;
	http_start(&d, dir, sizeof(dir));
	mpd_stop(&d);
	d.cfg.connection_timeout_seconds = 1;
	assert_int_equal(mpd_start(&d, NULL), MP_OK);
	t = stall(d.bound_port, "GET /v1/health HTTP/1.1\r\nHost: localhost\r\nX-Slow:", 5);
	assert_true(t >= 0.5 && t < 4.0);
	t = stall(d.bound_port,
		  "POST /v1/plan/inference HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
		  "Content-Length: 100\r\n\r\n{\"model\":",
		  5);
	assert_true(t >= 0.5 && t < 4.0);
	http_stop(&d, dir);
}

/* Connects to the daemon on port; returns the socket with a receive timeout of wait_s. */
static int dial(uint16_t port, int wait_s)
{
	struct sockaddr_in a;
	struct timeval tv = { .tv_sec = wait_s, .tv_usec = 0 };
	int s = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(s >= 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(s, (struct sockaddr *)&a, sizeof(a)), 0);
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)); /* a daemon that stalls fails the test, never hangs it */
	return s;
}

/* D9: a declared Content-Length over the cap is answered 413 (problem+json) at once, before any body is read; a
 * chunked body is cut off as soon as it crosses the cap instead of being drained. */
static void test_oversized_body_refused_early(void **state)
{
	fixture *f = *state;
	char buf[4096], chunk[16384 + 16];
	size_t got = 0, sent = 0;
	ssize_t n;
	int s = dial(f->d.bound_port, 3);

	snprintf(buf, sizeof(buf),
		 "POST /v1/plan/inference HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
		 "Content-Length: 10000000000\r\n\r\n{\"model\":");
	assert_int_equal(send(s, buf, strlen(buf), 0), (ssize_t)strlen(buf));
	while (got + 1 < sizeof(buf) && (n = recv(s, buf + got, sizeof(buf) - 1 - got, 0)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	close(s);
	if (strncmp(buf, "HTTP/1.1 413", 12) != 0)
		fail_msg("expected an immediate 413, got: %.200s", buf);
	assert_non_null(strstr(buf, "application/problem+json"));
	assert_non_null(strstr(buf, "exceeds the limit of"));

	/* chunked: libmicrohttpd 0.9.75 cannot queue a reply mid-body, so the connection is closed at the cap */
	s = dial(f->d.bound_port, 3);
	snprintf(buf, sizeof(buf),
		 "POST /v1/roofline HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
		 "Transfer-Encoding: chunked\r\n\r\n");
	assert_int_equal(send(s, buf, strlen(buf), 0), (ssize_t)strlen(buf));
	snprintf(chunk, sizeof(chunk), "4000\r\n");
	memset(chunk + 6, ' ', 16384);
	memcpy(chunk + 6 + 16384, "\r\n", 2);
	while (sent < 20 * f->d.cfg.max_body_bytes) {
		n = send(s, chunk, 6 + 16384 + 2, MSG_NOSIGNAL);
		if (n <= 0)
			break;
		sent += (size_t)n;
	}
	/* the daemon stopped reading near the cap (socket buffers hold a few MB at most) */
	assert_true(sent < 20 * f->d.cfg.max_body_bytes);
	close(s);
}

static void test_metrics(void **state)
{
	fixture own, *f = &own;
	mpd_label lab[] = { { "device", "h200-sxm-141gb" }, { "dtype", "bf16 \"dense\"" } };
	mp_error err = MP_ERROR_INIT;
	http_resp r;

	(void)state;	/* a daemon of its own, so the counts start at zero */
	http_start(&f->d, f->dir, sizeof(f->dir));
	http_do(&f->d, "GET", "/v1/health", NULL, NULL, NULL, &r);
	http_resp_free(&r);
	http_do(&f->d, "GET", "/v1/devices/no-such-gpu", NULL, NULL, NULL, &r);
	http_resp_free(&r);
	/* a conditional GET answered 304 is counted as 304, not as the 200 it replaced */
	{
		char inm[200];

		http_do(&f->d, "GET", "/v1/devices/h100-sxm5-80gb", NULL, NULL, NULL, &r);
		snprintf(inm, sizeof(inm), "If-None-Match: %s", r.etag);
		http_resp_free(&r);
		http_do(&f->d, "GET", "/v1/devices/h100-sxm5-80gb", NULL, NULL, inm, &r);
		assert_int_equal(r.status, 304);
		http_resp_free(&r);
	}
	/* a 405 is counted under the path's route, not "unmatched" */
	http_do(&f->d, "DELETE", "/v1/health", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 405);
	http_resp_free(&r);
	assert_int_equal(mpd_metrics_gauge_set(f->d.metrics, "memplan_calibration_peak_flops_per_second",
					       "Latest measured dense peak.", lab, 2, 7.5e14, &err),
			 MP_OK);
	assert_int_equal(mpd_metrics_gauge_set(f->d.metrics, "memplan_calibration_peak_flops_per_second", NULL, lab,
					       2, 8.25e14, &err),
			 MP_OK);
	assert_int_equal(mpd_metrics_gauge_set(f->d.metrics, "bad name", NULL, NULL, 0, 1, &err), MP_EINVAL);
	assert_int_equal(mpd_metrics_gauge_set(f->d.metrics, "memplan_build_info", NULL, NULL, 0, 1, &err), MP_EINVAL);
	assert_int_equal(mpd_metrics_gauge_set(f->d.metrics, "x", NULL, &(mpd_label){ "__x", "" }, 1, 1, &err),
			 MP_EINVAL);

	/* A request is counted in libmicrohttpd's completion callback, which may run just after the client has its
	 * response: poll (at most 2 s) until the requests above are counted, so the figures below are settled. */
	for (int tries = 0;; tries++) {
		http_do(&f->d, "GET", "/metrics", NULL, NULL, NULL, &r);
		/* each request's completion runs on its own connection's thread: wait for every one, not only the last */
		if (tries >= 200 || (strstr(r.body ? r.body : "", "code=\"304\"} 1\n") != NULL &&
				     strstr(r.body ? r.body : "", "code=\"404\"} 1\n") != NULL &&
				     strstr(r.body ? r.body : "",
					    "route=\"/v1/devices/{id}\",method=\"GET\",code=\"200\"} 1\n") != NULL &&
				     strstr(r.body ? r.body : "", "route=\"/v1/health\",method=\"GET\",code=\"200\"} 1\n") &&
				     strstr(r.body ? r.body : "", "method=\"DELETE\",code=\"405\"} 1\n")))
			break;
		http_resp_free(&r);
		usleep(10000);
	}
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.content_type, "text/plain"));
	assert_non_null(strstr(r.body, "memplan_http_requests_total{route=\"/v1/health\",method=\"GET\",code=\"200\"} 1\n"));
	assert_non_null(
		strstr(r.body, "memplan_http_requests_total{route=\"/v1/devices/{id}\",method=\"GET\",code=\"404\"} 1\n"));
	assert_non_null(
		strstr(r.body, "memplan_http_requests_total{route=\"/v1/devices/{id}\",method=\"GET\",code=\"304\"} 1\n"));
	assert_non_null(
		strstr(r.body, "memplan_http_requests_total{route=\"/v1/devices/{id}\",method=\"GET\",code=\"200\"} 1\n"));
	assert_non_null(strstr(r.body, "memplan_http_request_duration_seconds_count{route=\"/v1/health\",method=\"GET\"} 1\n"));
	assert_non_null(
		strstr(r.body, "memplan_http_requests_total{route=\"/v1/health\",method=\"DELETE\",code=\"405\"} 1\n"));
	/* the /metrics request itself is in flight while it renders */
	assert_non_null(strstr(r.body, "memplan_http_requests_in_flight 1\n"));
	assert_non_null(strstr(r.body, "memplan_database_errors_total 0\n"));
	assert_non_null(strstr(r.body, "memplan_build_info{version=\"" MP_VERSION "\""));
	/* the latest value wins, labels escaped */
	assert_non_null(strstr(r.body, "memplan_calibration_peak_flops_per_second{device=\"h200-sxm-141gb\","
				       "dtype=\"bf16 \\\"dense\\\"\"} 825000000000000\n"));
	assert_null(strstr(r.body, "750000000000000"));
	http_resp_free(&r);
	http_stop(&f->d, f->dir);
}

static void test_settings(void **state)
{
	mpd_config cfg;
	mp_error err = MP_ERROR_INIT;
	char path[] = "/tmp/memplan-cfg-XXXXXX";
	int fd;
	FILE *fp;

	(void)state;
	mpd_config_defaults(&cfg);
	assert_int_equal(mpd_config_set(&cfg, "threads", "3", &err), MP_OK);
	assert_int_equal(cfg.threads, 3);
	assert_int_equal(mpd_config_set(&cfg, "threads", "0", &err), MP_EINVAL);
	assert_string_equal(err.field, "threads");
	assert_int_equal(mpd_config_set(&cfg, "threads", "3x", &err), MP_EINVAL);
	assert_int_equal(mpd_config_set(&cfg, "max-body-bytes", "-5", &err), MP_EINVAL);
	assert_int_equal(mpd_config_set(&cfg, "max-body-bytes", "99999999999999999999999", &err), MP_EINVAL);
	assert_int_equal(mpd_config_set(&cfg, "log-level", "loud", &err), MP_EINVAL);
	assert_int_equal(mpd_config_set(&cfg, "no-such", "1", &err), MP_EINVAL);
	assert_int_equal(mpd_config_set(&cfg, "listen", "localhost:80", &err), MP_EINVAL);
	assert_int_equal(cfg.response_cache_bytes, 32 * 1024 * 1024);
	assert_int_equal(mpd_config_set(&cfg, "response-cache-bytes", "0", &err), MP_OK);
	assert_int_equal(cfg.response_cache_bytes, 0);
	assert_int_equal(mpd_config_set(&cfg, "response-cache-bytes", "68719476737", &err), MP_EINVAL); /* 2^36 + 1 */
	assert_string_equal(err.field, "response-cache-bytes");

	fd = mkstemp(path);
	assert_true(fd >= 0);
	fp = fdopen(fd, "w");
	fprintf(fp, "# memplan\n\nlisten = 127.0.0.1:9099\nmax-body-bytes = 4096\n  log-level = warn  \n"
		    "connection-timeout=7\nmax-connections = 12\n");
	fclose(fp);
	mpd_config_defaults(&cfg);
	assert_int_equal(mpd_config_load_file(&cfg, path, &err), MP_OK);
	assert_int_equal(cfg.listen_port, 9099);
	assert_int_equal(cfg.max_body_bytes, 4096);
	assert_int_equal(cfg.log_level, MPD_LOG_WARN);
	assert_int_equal(cfg.connection_timeout_seconds, 7);
	assert_int_equal(cfg.connection_limit, 12);
	/* the environment overrides the file */
	setenv("MEMPLAN_MAX_BODY_BYTES", "8192", 1);
	setenv("MEMPLAN_THREADS", "5", 1);
	assert_int_equal(mpd_config_load_env(&cfg, &err), MP_OK);
	assert_int_equal(cfg.max_body_bytes, 8192);
	assert_int_equal(cfg.threads, 5);
	setenv("MEMPLAN_THREADS", "many", 1);
	assert_int_equal(mpd_config_load_env(&cfg, &err), MP_EINVAL);
	assert_string_equal(err.field, "MEMPLAN_THREADS");
	unsetenv("MEMPLAN_THREADS");
	unsetenv("MEMPLAN_MAX_BODY_BYTES");
	/* a bad line names file and line */
	fp = fopen(path, "w");
	fprintf(fp, "threads = 2\nthreads\n");
	fclose(fp);
	assert_int_equal(mpd_config_load_file(&cfg, path, &err), MP_EINVAL);
	assert_non_null(strstr(err.field, ":2"));
	unlink(path);
	assert_int_equal(mpd_config_load_file(&cfg, path, &err), MP_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_url_too_long),
		cmocka_unit_test(test_headers_too_large),
		cmocka_unit_test(test_slow_client_cut_off),
		cmocka_unit_test(test_oversized_body_refused_early),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_settings),
	};
	int rc;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = cmocka_run_group_tests_name("limits", tests, http_fixture_setup, http_fixture_teardown);
	curl_global_cleanup();
	return rc;
}
