/*
 * http_util.c: in-process daemon and libcurl client for the HTTP tests (see http_util.h).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <curl/curl.h>

#include "../codec/mpc_json.h"
#include "../daemon/log.h"
#include "http_util.h"

void http_start(mpd_daemon *d, char *dir, size_t dirlen)
{
	http_start_with(d, dir, dirlen, NULL);
}

void http_start_with(mpd_daemon *d, char *dir, size_t dirlen, void (*adjust)(mpd_config *cfg))
{
	mp_error err = MP_ERROR_INIT;

	memset(d, 0, sizeof(*d));
	mpd_config_defaults(&d->cfg);
	d->cfg.listen_port = 0;
	d->cfg.threads = 2;
	/* The tests provoke errors on purpose (503 without a GPU, 431, cut-off bodies): the daemon's log of them
	 * would read like failures, so it is off unless MEMPLAN_TEST_LOG_LEVEL asks for it (debug, info, warn,
	 * error) when a test is being debugged. */
	d->cfg.log_level = MPD_LOG_OFF;
	if (getenv("MEMPLAN_TEST_LOG_LEVEL")) {
		mpd_log_level lvl = MPD_LOG_WARN;

		if (mpd_log_level_parse(getenv("MEMPLAN_TEST_LOG_LEVEL"), &lvl, &err) != MP_OK)
			lvl = MPD_LOG_WARN;
		d->cfg.log_level = (int)lvl;
	}
	snprintf(dir, dirlen, "/tmp/memplan-test-XXXXXX");
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		exit(1);
	}
	snprintf(d->cfg.db_path, sizeof(d->cfg.db_path), "%s/memplan.db", dir);
	if (adjust)
		adjust(&d->cfg);
	if (mps_open(d->cfg.db_path, &d->svc, &err) != MP_OK || mpd_start(d, &err) != MP_OK) {
		fprintf(stderr, "cannot start the daemon: %s\n", err.message);
		exit(1);
	}
}

void http_stop(mpd_daemon *d, const char *dir)
{
	char path[600];
	static const char *const files[] = { "memplan.db", "memplan.db-wal", "memplan.db-shm" };

	mpd_stop(d);
	mps_close(d->svc);
	d->svc = NULL;
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

static size_t on_body(char *p, size_t size, size_t n, void *ctx)
{
	http_resp *r = ctx;
	char *nb = realloc(r->body, r->len + size * n + 1);

	if (nb == NULL)
		return 0;
	memcpy(nb + r->len, p, size * n);
	r->len += size * n;
	nb[r->len] = '\0';
	r->body = nb;
	return size * n;
}

static void header_value(const char *line, size_t n, const char *name, char *dst, size_t len)
{
	size_t k = strlen(name);

	if (n > k + 1 && strncasecmp(line, name, k) == 0 && line[k] == ':') {
		const char *v = line + k + 1;
		size_t m = n - k - 1;

		while (m && (*v == ' '))
			v++, m--;
		while (m && (v[m - 1] == '\r' || v[m - 1] == '\n'))
			m--;
		snprintf(dst, len, "%.*s", (int)m, v);
	}
}

static size_t on_header(char *p, size_t size, size_t n, void *ctx)
{
	http_resp *r = ctx;

	header_value(p, size * n, "Content-Type", r->content_type, sizeof(r->content_type));
	header_value(p, size * n, "Allow", r->allow, sizeof(r->allow));
	header_value(p, size * n, "ETag", r->etag, sizeof(r->etag));
	header_value(p, size * n, "Location", r->location, sizeof(r->location));
	header_value(p, size * n, "Content-Security-Policy", r->csp, sizeof(r->csp));
	header_value(p, size * n, "Retry-After", r->retry_after, sizeof(r->retry_after));
	header_value(p, size * n, "Transfer-Encoding", r->transfer_encoding, sizeof(r->transfer_encoding));
	header_value(p, size * n, "Content-Length", r->content_length, sizeof(r->content_length));
	header_value(p, size * n, "Connection", r->connection, sizeof(r->connection));
	return size * n;
}

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Appends the exchange as one JSON line to the file named by MEMPLAN_HTTP_LOG (when set):
 * tests/contract/validate_responses.py checks every logged response against openapi.yaml.
 */
static void log_exchange(const char *method, const char *path, const char *body, const char *content_type,
			 const http_resp *r)
{
	const char *file = getenv("MEMPLAN_HTTP_LOG");
	cJSON *o;
	char *line;
	FILE *f;

	if (file == NULL || file[0] == '\0')
		return;
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "method", method);
	cJSON_AddStringToObject(o, "path", path);
	cJSON_AddNumberToObject(o, "status", (double)r->status);
	cJSON_AddStringToObject(o, "content_type", r->content_type);
	cJSON_AddStringToObject(o, "allow", r->allow);
	cJSON_AddStringToObject(o, "body", r->body ? r->body : "");
	/* the request too (tests/golden/README.md), when it is text a JSON string can carry */
	if (body && mpc_utf8_invalid_at(body, strlen(body)) == strlen(body))
		cJSON_AddStringToObject(o, "request_body", body);
	cJSON_AddStringToObject(o, "request_content_type", content_type ? content_type : "");
	line = cJSON_PrintUnformatted(o);
	/* one line at a time: a test's threads log at once (a line longer than stdio's buffer is several writes) */
	pthread_mutex_lock(&log_lock);
	f = fopen(file, "a");
	if (f && line)
		fprintf(f, "%s\n", line);
	if (f)
		fclose(f);
	pthread_mutex_unlock(&log_lock);
	cJSON_free(line);
	cJSON_Delete(o);
}

void http_do(const mpd_daemon *d, const char *method, const char *path, const char *body, const char *content_type,
	     const char *extra_header, http_resp *r)
{
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	size_t urllen = strlen(path) + 32;
	char *url = malloc(urllen), ct[160];

	memset(r, 0, sizeof(*r));
	if (url == NULL)
		exit(1);
	snprintf(url, urllen, "http://127.0.0.1:%u%s", d->bound_port, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	free(url);	/* libcurl copies it */
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (strcmp(method, "HEAD") == 0)
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	if (body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	}
	snprintf(ct, sizeof(ct), "Content-Type: %s", content_type ? content_type : "");
	h = curl_slist_append(h, content_type ? ct : "Content-Type:");
	if (extra_header)
		h = curl_slist_append(h, extra_header);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	/* a request that hangs fails the test in 30 s; under the sanitizers (make asan sets MEMPLAN_SANITIZED) the
	 * heavy requests of the attack tests run 20-30 times slower (four 24 MiB extender bodies: 23 s each unloaded,
	 * 0.8 s plain), so they get 120 s: the tests that mean a latency bound it themselves */
	curl_easy_setopt(c, CURLOPT_TIMEOUT, getenv("MEMPLAN_SANITIZED") ? 120L : 30L);
	if (curl_easy_perform(c) != CURLE_OK) {
		fprintf(stderr, "request %s %s failed\n", method, path);
		exit(1);
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	if (r->body && (strstr(r->content_type, "json") != NULL))
		r->json = cJSON_Parse(r->body);
	log_exchange(method, path, body, content_type, r);
}

void http_resp_free(http_resp *r)
{
	free(r->body);
	cJSON_Delete(r->json);
	memset(r, 0, sizeof(*r));
}

const char *http_problem_field(const http_resp *r)
{
	const cJSON *e = cJSON_GetArrayItem(cJSON_GetObjectItem(r->json, "errors"), 0);
	const cJSON *f = cJSON_GetObjectItem(e, "field");

	return cJSON_IsString(f) ? f->valuestring : "";
}

int http_fixture_setup(void **state)
{
	http_fixture *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -1;
	http_start(&f->d, f->dir, sizeof(f->dir));
	*state = f;
	return 0;
}

int http_fixture_teardown(void **state)
{
	http_fixture *f = *state;

	http_stop(&f->d, f->dir);
	free(f);
	return 0;
}
