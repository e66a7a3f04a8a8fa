/*
 * hub_server.c: a Hugging Face Hub for the tests, serving the Hub's URL layout from a folder (libmicrohttpd, on
 * 127.0.0.1): GET and HEAD {org}/{name}/resolve/{revision}/{file}, the commit in X-Repo-Commit, small files answered
 * directly with an ETag, .safetensors files redirected (302, X-Linked-Etag, X-Linked-Size) to a CDN path on another
 * host name (http://localhost:PORT/cdn/...) that honours Range requests; 401 with X-Error-Code RepoNotFound for a
 * repository that is not there (as the Hub answers without a token), GatedRepo for a gated one without the right
 * Bearer token, 404 RevisionNotFound / EntryNotFound. The CDN refuses any request that carries an Authorization
 * header (a client that leaks the token fails). Repositories of the organisation slow answer after 3 seconds.
 *
 * The folder: <root>/<org>/<name>/refs/<branch> holding a commit, <root>/<org>/<name>/<commit>/<file>, and a file
 * <root>/<org>/<name>/gated for a gated one. Usage: hub_server ROOT TOKEN; prints "port N" once listening, serves
 * until its stdin closes. GET /_stats answers the requests served so far as "resolve N cdn M ranges R". Checked
 * against huggingface_hub itself in tests/contract/test_hub_server.py.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <microhttpd.h>

static const char *root, *token;
static unsigned short port;
static unsigned long n_resolve, n_cdn, n_ranges;

static enum MHD_Result answer(struct MHD_Connection *c, unsigned code, const char *body, const char *error_code)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (error_code)
		MHD_add_response_header(r, "X-Error-Code", error_code);
	MHD_add_response_header(r, "Content-Type", "application/json");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf) {
		buf[n] = '\0';
		*len = (size_t)n;
	}
	return buf;
}

/* A content hash (FNV-1a, 64 bits) as the file's ETag: the client caches blobs by it, so files must not share one */
static void etag_of(const char *data, size_t len, char *out, size_t n)
{
	unsigned long long h = 1469598103934665603ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)data[i]) * 1099511628211ULL;
	snprintf(out, n, "\"%016llx\"", h);
}

static bool exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

/* /cdn/<org>/<name>/<commit>/<file>: the bytes, a Range honoured */
static enum MHD_Result cdn(struct MHD_Connection *c, const char *rest)
{
	char path[2048];
	size_t len = 0;
	char *data;
	const char *range = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Range");
	struct MHD_Response *r;
	enum MHD_Result ret;
	unsigned long long a = 0, b = 0;

	n_cdn++;
	if (MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization"))
		return answer(c, 400, "{\"error\": \"the CDN received an Authorization header\"}", "TokenLeaked");
	snprintf(path, sizeof(path), "%s/%s", root, rest);
	if (strstr(rest, "..") || (data = read_all(path, &len)) == NULL)
		return answer(c, 404, "{\"error\": \"no such object\"}", NULL);
	if (range && sscanf(range, "bytes=%llu-%llu", &a, &b) == 2 && a <= b && a < len) {
		char cr[96];
		if (b >= len)
			b = len - 1;
		n_ranges++;
		r = MHD_create_response_from_buffer((size_t)(b - a + 1), data + a, MHD_RESPMEM_MUST_COPY);
		snprintf(cr, sizeof(cr), "bytes %llu-%llu/%zu", a, b, len);
		MHD_add_response_header(r, "Content-Range", cr);
		MHD_add_response_header(r, "Accept-Ranges", "bytes");
		ret = MHD_queue_response(c, 206, r);
	} else {
		r = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_COPY);
		MHD_add_response_header(r, "Accept-Ranges", "bytes");
		ret = MHD_queue_response(c, 200, r);
	}
	MHD_destroy_response(r);
	free(data);
	return ret;
}

static enum MHD_Result resolve(struct MHD_Connection *c, const char *url)
{
	char org[128], name[128], rev[256], file[512], repo[1024], path[2400], commit[128] = { 0 };
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	char want[600];
	size_t len = 0;
	char *data;
	struct MHD_Response *r;
	enum MHD_Result ret;

	n_resolve++;
	/* /{org}/{name}/resolve/{rev}/{file}; the revision arrives percent-decoded by libmicrohttpd */
	if (sscanf(url, "/%127[^/]/%127[^/]/resolve/%255[^/]/%511s", org, name, rev, file) != 4 || strstr(url, ".."))
		return answer(c, 400, "{\"error\": \"not a resolve URL\"}", NULL);
	if (strcmp(org, "slow") == 0)
		sleep(3);
	snprintf(repo, sizeof(repo), "%s/%s/%s", root, org, name);
	snprintf(want, sizeof(want), "Bearer %s", token);
	if (!exists(repo))
		return answer(c, 401, "{\"error\": \"Repository Not Found\"}", "RepoNotFound");
	snprintf(path, sizeof(path), "%s/gated", repo);
	if (exists(path) && (auth == NULL || strcmp(auth, want) != 0))
		return answer(c, 401, "{\"error\": \"Access to this model is restricted\"}", "GatedRepo");
	snprintf(path, sizeof(path), "%s/refs/%s", repo, rev);
	if ((data = read_all(path, &len)) != NULL) {
		snprintf(commit, sizeof(commit), "%.*s", (int)strcspn(data, "\r\n"), data);
		free(data);
	} else {
		snprintf(path, sizeof(path), "%s/%s", repo, rev);
		if (strlen(rev) != 40 || !exists(path))
			return answer(c, 404, "{\"error\": \"Invalid rev id\"}", "RevisionNotFound");
		snprintf(commit, sizeof(commit), "%.40s", rev); /* 40 hex digits (checked above) */
	}
	snprintf(path, sizeof(path), "%s/%s/%s", repo, commit, file);
	if (!exists(path))
		return answer(c, 404, "{\"error\": \"Entry not found\"}", "EntryNotFound");
	if (strlen(file) > 12 && strcmp(file + strlen(file) - 12, ".safetensors") == 0) {
		/* a large (LFS) file: to the CDN, another host name */
		char loc[2400], size[32], tag[40];
		struct stat st;
		size_t flen = 0;
		char *fdata = read_all(path, &flen);

		stat(path, &st);
		etag_of(fdata ? fdata : "", flen, tag, sizeof(tag));
		free(fdata);
		snprintf(loc, sizeof(loc), "http://localhost:%u/cdn/%s/%s/%s/%s", port, org, name, commit, file);
		snprintf(size, sizeof(size), "%lld", (long long)st.st_size);
		r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
		MHD_add_response_header(r, "Location", loc);
		MHD_add_response_header(r, "X-Repo-Commit", commit);
		MHD_add_response_header(r, "X-Linked-Etag", tag);
		MHD_add_response_header(r, "X-Linked-Size", size);
		MHD_add_response_header(r, "ETag", tag);
		ret = MHD_queue_response(c, 302, r);
		MHD_destroy_response(r);
		return ret;
	}
	if ((data = read_all(path, &len)) == NULL)
		return answer(c, 500, "{\"error\": \"unreadable\"}", NULL);
	{
		char tag[40];
		etag_of(data, len, tag, sizeof(tag));
		r = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
		MHD_add_response_header(r, "ETag", tag);
	}
	MHD_add_response_header(r, "X-Repo-Commit", commit);
	ret = MHD_queue_response(c, 200, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version, const char *upload, size_t *upload_size, void **req_cls)
{
	(void)cls;
	(void)version;
	(void)upload;
	(void)upload_size;
	if (*req_cls == NULL) {
		*req_cls = (void *)1;
		return MHD_YES;
	}
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return answer(c, 405, "{}", NULL);
	if (strcmp(url, "/_stats") == 0) {
		char s[128];
		snprintf(s, sizeof(s), "resolve %lu cdn %lu ranges %lu", n_resolve, n_cdn, n_ranges);
		return answer(c, 200, s, NULL);
	}
	if (strncmp(url, "/cdn/", 5) == 0)
		return cdn(c, url + 5);
	return resolve(c, url);
}

int main(int argc, char **argv)
{
	struct MHD_Daemon *d;
	const union MHD_DaemonInfo *info;
	char buf[64];

	if (argc != 3) {
		fprintf(stderr, "usage: hub_server ROOT TOKEN\n");
		return 2;
	}
	root = argv[1];
	token = argv[2];
	{
		/* 127.0.0.1 alone, any free port */
		static struct sockaddr_in sa;
		sa.sin_family = AF_INET;
		sa.sin_port = 0;
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL, NULL,
				     on_request, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_END);
	}
	if (d == NULL) {
		fprintf(stderr, "hub_server: cannot start: %s\n", strerror(errno));
		return 1;
	}
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	port = info ? info->port : 0;
	printf("port %u\n", port);
	fflush(stdout);
	while (fgets(buf, sizeof(buf), stdin) != NULL)
		; /* until the test closes our stdin */
	MHD_stop_daemon(d);
	return 0;
}
