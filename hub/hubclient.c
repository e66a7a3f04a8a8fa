/*
 * hubclient.c: the Hugging Face Hub over HTTP (hub.h): one file or byte range of a repository at a revision, as
 * huggingface_hub's hf_hub_download asks for it (GET {endpoint}/{repo}/resolve/{revision}/{file}, the commit in
 * X-Repo-Commit, large files redirected to a CDN), with libcurl; and the bounded cache of what was fetched, written
 * in the Hugging Face cache's own layout so that mph_cache_read reads it back. Redirects are followed here, not by
 * libcurl, so the token goes to the endpoint's host alone. Parses no document (model/ does); never logs the token.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "hub.h"

#define MAX_REDIRECTS 5

typedef struct fetch {
	uint8_t *buf;
	size_t len, cap;
	uint64_t skip;		/* bytes to drop first (a 200 answered to a range request) */
	uint64_t range_offset;	/* the range's first byte (0: no range) */
	uint64_t want;		/* bytes wanted after the skip (0: all, up to max) */
	uint64_t max;		/* more than this is refused */
	bool over;		/* the body went past max */
	char location[2048];
	char commit[96];
	char error_code[64];	/* X-Error-Code: GatedRepo, RepoNotFound, RevisionNotFound, EntryNotFound */
	char content_range[128];
} fetch;

static size_t on_body(char *data, size_t size, size_t nmemb, void *ctx)
{
	fetch *f = ctx;
	size_t n = size * nmemb, take = n;

	if (f->skip) {
		size_t s = f->skip < take ? (size_t)f->skip : take;
		data += s;
		take -= s;
		f->skip -= s;
	}
	if (f->want && f->len + take > f->want)
		take = (size_t)(f->want - f->len); /* a 200 to a range: the bytes after the range are not kept */
	if (f->len + take > f->max) {
		f->over = true;
		return 0; /* aborts the transfer */
	}
	if (f->len + take + 1 > f->cap) { /* + 1: the body is kept NUL-terminated (callers parse it as text) */
		size_t cap = f->cap ? f->cap : 4096;
		uint8_t *nb;
		while (cap < f->len + take + 1)
			cap *= 2;
		if ((nb = realloc(f->buf, cap)) == NULL)
			return 0;
		f->buf = nb;
		f->cap = cap;
	}
	memcpy(f->buf + f->len, data, take);
	f->len += take;
	f->buf[f->len] = 0;
	if (f->want && f->len >= f->want)
		return n == take ? n : 0; /* done: the rest of a whole-file answer is not read */
	return n;
}

/* The value of header `name` in line (case-insensitive), trimmed, into out. */
static bool header_value(const char *line, size_t n, const char *name, char *out, size_t len)
{
	size_t k = strlen(name);

	if (n <= k + 1 || strncasecmp(line, name, k) != 0 || line[k] != ':')
		return false;
	line += k + 1;
	n -= k + 1;
	while (n && (*line == ' ' || *line == '\t'))
		line++, n--;
	while (n && (line[n - 1] == '\r' || line[n - 1] == '\n' || line[n - 1] == ' '))
		n--;
	if (n >= len)
		n = len - 1;
	memcpy(out, line, n);
	out[n] = '\0';
	return true;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *ctx)
{
	fetch *f = ctx;
	size_t n = size * nmemb;

	/* a server that ignores Range answers 200 with the whole file: the range is cut out of it */
	if (n > 9 && strncmp(data, "HTTP/", 5) == 0) {
		const char *sp = memchr(data, ' ', n);
		f->skip = sp && strncmp(sp + 1, "200", 3) == 0 ? f->range_offset : 0;
	}
	header_value(data, n, "Location", f->location, sizeof(f->location));
	header_value(data, n, "X-Repo-Commit", f->commit, sizeof(f->commit));
	header_value(data, n, "X-Error-Code", f->error_code, sizeof(f->error_code));
	header_value(data, n, "Content-Range", f->content_range, sizeof(f->content_range));
	return n;
}

/* scheme://host[:port] of url into out. */
static bool origin_of(const char *url, char *out, size_t len)
{
	const char *p = strstr(url, "://"), *end;

	if (p == NULL)
		return false;
	end = strchr(p + 3, '/');
	snprintf(out, len, "%.*s", (int)(end ? end - url : (long)strlen(url)), url);
	return true;
}

static bool http_url(const char *u)
{
	return strncmp(u, "http://", 7) == 0 || strncmp(u, "https://", 8) == 0;
}

mp_status mph_hub_get(const mph_hub *h, const char *repo, const char *revision, const char *file, uint64_t offset,
		      uint64_t length, uint64_t max_bytes, mph_blob *out, mp_error *err)
{
	char url[2048], origin[600], hdr[600], range[96], here[600];
	char *rev_esc = NULL, *file_esc = NULL;
	struct curl_slist *headers = NULL;
	fetch f;
	CURL *c = NULL;
	long code = 0;
	mp_status st = MP_OK;
	CURLcode rc = CURLE_OK;

	memset(out, 0, sizeof(*out));
	memset(&f, 0, sizeof(f));
	if (h == NULL || h->endpoint[0] == '\0')
		return mp_fail(err, MP_EINTERNAL, "/model/hf_repo", "no Hub endpoint");
	if ((c = curl_easy_init()) == NULL)
		return mp_fail(err, MP_ENOMEM, "/model/hf_repo", "out of memory");
	/* huggingface_hub quotes the revision with no safe characters (refs/pr/1 -> refs%2Fpr%2F1) */
	rev_esc = curl_easy_escape(c, revision && revision[0] ? revision : "main", 0);
	file_esc = curl_easy_escape(c, file, 0);
	if (rev_esc == NULL || file_esc == NULL) {
		st = mp_fail(err, MP_ENOMEM, "/model/hf_repo", "out of memory");
		goto out;
	}
	snprintf(url, sizeof(url), "%s/%s/resolve/%s/%s", h->endpoint, repo, rev_esc, file_esc);
	origin_of(h->endpoint, origin, sizeof(origin));
	f.max = max_bytes;
	if (length) {
		snprintf(range, sizeof(range), "bytes=%llu-%llu", (unsigned long long)offset,
			 (unsigned long long)(offset + length - 1));
		f.want = length;
		f.range_offset = offset;
	}
	for (int hop = 0; hop <= MAX_REDIRECTS; hop++) {
		curl_easy_reset(c);
		curl_slist_free_all(headers);
		headers = NULL;
		f.location[0] = f.error_code[0] = f.content_range[0] = '\0';
		f.len = 0;
		f.over = false;
		origin_of(url, here, sizeof(here));
		/* the token goes to the endpoint's own host, never to the CDN a file is redirected to */
		if (h->token[0] && strcmp(here, origin) == 0) {
			snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s", h->token);
			headers = curl_slist_append(headers, hdr);
			memset(hdr, 0, sizeof(hdr));
		}
		headers = curl_slist_append(headers, "Accept-Encoding: identity");
		if (headers == NULL) {
			st = mp_fail(err, MP_ENOMEM, "/model/hf_repo", "out of memory");
			goto out;
		}
		curl_easy_setopt(c, CURLOPT_URL, url);
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
		curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
		curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
		curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)(h->timeout_seconds ? h->timeout_seconds : 30));
		curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)(h->timeout_seconds ? h->timeout_seconds : 30));
		curl_easy_setopt(c, CURLOPT_USERAGENT, "memplan");
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, &f);
		curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
		curl_easy_setopt(c, CURLOPT_HEADERDATA, &f);
		if (length)
			curl_easy_setopt(c, CURLOPT_RANGE, range + 6);
		rc = curl_easy_perform(c);
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
		if (rc == CURLE_WRITE_ERROR && !f.over && f.want && f.len >= f.want)
			rc = CURLE_OK; /* stopped on purpose after the range */
		if (rc != CURLE_OK) {
			if (f.over)
				st = mp_fail(err, MP_EUPSTREAM, "/model/hf_repo",
					     "the Hub sent more than %llu bytes for %s/%s: over memplan's limit for it",
					     (unsigned long long)max_bytes, repo, file);
			else
				st = mp_fail(err, MP_EUPSTREAM, "/model/hf_repo",
					     "the Hub at %s did not answer for %s/%s at %s: %s (the daemon's --hub-timeout is "
					     "%u s)",
					     h->endpoint, repo, file, revision && revision[0] ? revision : "main",
					     curl_easy_strerror(rc), h->timeout_seconds ? h->timeout_seconds : 30);
			goto out;
		}
		if (code >= 300 && code < 400 && f.location[0]) {
			char next[sizeof(here) + sizeof(f.location)];
			int n = 0;

			if (http_url(f.location))
				n = snprintf(next, sizeof(next), "%s", f.location);
			else if (f.location[0] == '/')
				n = snprintf(next, sizeof(next), "%s%s", here, f.location);
			else {
				st = mp_fail(err, MP_EUPSTREAM, "/model/hf_repo",
					     "the Hub redirected %s/%s to '%.200s', not an http(s) URL or path", repo, file,
					     f.location);
				goto out;
			}
			if (n < 0 || (size_t)n >= sizeof(url)) { /* never a cut URL */
				st = mp_fail(err, MP_EUPSTREAM, "/model/hf_repo",
					     "the Hub redirected %s/%s to a URL of %d bytes, over memplan's %zu", repo, file, n,
					     sizeof(url) - 1);
				goto out;
			}
			memcpy(url, next, (size_t)n + 1);
			continue;
		}
		break;
	}
	if (code >= 300 && code < 400) {
		st = mp_fail(err, MP_EUPSTREAM, "/model/hf_repo", "the Hub redirected %s/%s more than %d times", repo, file,
			     MAX_REDIRECTS);
	} else if (code == 404 || strcmp(f.error_code, "RepoNotFound") == 0) {
		/* the Hub answers 401 RepoNotFound for a repository it does not have (or hides) when asked without a
		 * token, 404 with one */
		st = mp_fail(err, MP_ENOTFOUND, "/model/hf_repo", "the Hub at %s has no %s%s%s (%s)", h->endpoint,
			     strcmp(f.error_code, "EntryNotFound") == 0 ? file : repo,
			     strcmp(f.error_code, "EntryNotFound") == 0 ? " in " : "",
			     strcmp(f.error_code, "EntryNotFound") == 0 ? repo : "",
			     f.error_code[0] ? f.error_code : "404");
	} else if (code == 401 || code == 403) {
		st = mp_fail(err, MP_EUPSTREAM, "/model/hf_repo",
			     "the Hub refused %s (HTTP %ld%s%s): %s", repo, code, f.error_code[0] ? ", " : "", f.error_code,
			     strcmp(f.error_code, "GatedRepo") == 0
				     ? "a gated repository: accept its conditions on the Hub with the account of the daemon's "
				       "token (--hub-token-file)"
				     : h->token[0] ? "the daemon's hub token has no access to it"
						   : "a private or gated repository, and the daemon has no hub token "
						     "(--hub-token-file)");
	} else if (code != 200 && code != 206) {
		st = mp_fail(err, MP_EUPSTREAM, "/model/hf_repo", "the Hub answered HTTP %ld for %s/%s", code, repo, file);
	} else if (length && code == 206 && f.content_range[0] &&
		   strtoull(f.content_range + strcspn(f.content_range, "0123456789"), NULL, 10) != offset) {
		st = mp_fail(err, MP_EUPSTREAM, "/model/hf_repo", "the Hub sent the range '%.60s' for %s/%s, not bytes %llu-",
			     f.content_range, repo, file, (unsigned long long)offset);
	} else if (length && f.len < length) {
		st = mp_fail(err, MP_EUPSTREAM, "/model/hf_repo",
			     "the Hub sent %zu bytes of %s/%s where %llu were asked from byte %llu (the file is shorter)",
			     f.len, repo, file, (unsigned long long)length, (unsigned long long)offset);
	}
out:
	if (st == MP_OK && f.buf == NULL && (f.buf = calloc(1, 1)) == NULL) /* an empty body: "" */
		st = mp_fail(err, MP_ENOMEM, "/model/hf_repo", "out of memory reading %s/%s", repo, file);
	if (st == MP_OK) {
		out->data = f.buf;
		out->len = f.len;
		snprintf(out->commit, sizeof(out->commit), "%s", f.commit);
	} else {
		free(f.buf);
	}
	curl_slist_free_all(headers);
	curl_free(rev_esc);
	curl_free(file_esc);
	curl_easy_cleanup(c);
	return st;
}
