/*
 * http_util.h: test helpers for the HTTP tests: an in-process daemon on 127.0.0.1 port 0 with a temporary
 * database, and libcurl requests against it.
 */
#ifndef MP_TEST_HTTP_UTIL_H
#define MP_TEST_HTTP_UTIL_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "../daemon/daemon.h"

typedef struct http_resp {
	long status;
	char *body;		/* NUL-terminated, owned */
	size_t len;
	char content_type[128];
	char allow[64];
	char etag[128];
	char location[256];
	char csp[512];		/* Content-Security-Policy */
	char retry_after[32];
	char transfer_encoding[64];
	char content_length[32];
	char connection[32];
	cJSON *json;		/* parsed body when it is JSON, else NULL; owned */
} http_resp;

/* A cmocka fixture: a daemon with a fresh database, started by http_fixture_setup (as a group or test setup)
 * and stopped, its folder removed, by http_fixture_teardown. */
typedef struct http_fixture {
	mpd_daemon d;
	char dir[64];
} http_fixture;
int http_fixture_setup(void **state);
int http_fixture_teardown(void **state);

/* Starts a daemon with a fresh database in a temporary folder; fills d. Aborts on failure. */
void http_start(mpd_daemon *d, char *dir, size_t dirlen);
/* The same, with adjust (may be NULL) changing the settings first (limits, timeouts). */
void http_start_with(mpd_daemon *d, char *dir, size_t dirlen, void (*adjust)(mpd_config *cfg));
void http_stop(mpd_daemon *d, const char *dir);

/* Sends a request; content_type NULL sends none; extra_header (e.g. "If-None-Match: x") may be NULL. */
void http_do(const mpd_daemon *d, const char *method, const char *path, const char *body, const char *content_type,
	     const char *extra_header, http_resp *r);
void http_resp_free(http_resp *r);

/* The problem+json "errors[0].field" of a response, or "". */
const char *http_problem_field(const http_resp *r);

#endif
