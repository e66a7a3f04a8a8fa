/*
 * main.c: the memplan command line. Subcommands are thin: `serve` starts the HTTP daemon; `plan` runs the
 * same plan functions as the API without a daemon. All argument errors go to stderr with exit status 2.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth.h"
#include "calib_jobs.h"
#include "config.h"
#include "daemon.h"
#include "decode.h"
#include "log.h"
#include "plan.h"
#include "roofline_doc.h"
#include "routes.h"
#include "store_json.h"
#include "reply.h"

static const char usage[] =
	"memplan " MP_VERSION ": GPU memory and roofline planner for LLM training and inference\n"
	"\n"
	"Usage:\n"
	"  memplan serve [--listen ADDR:PORT] [--db PATH] [--token-file FILE] [--insecure] [--config FILE] ...\n"
	"                                                    start the REST daemon (default 127.0.0.1:8080,\n"
	"                                                    database var/memplan.db, created and seeded); writes\n"
	"                                                    need 'Authorization: Bearer <token>' when a token is\n"
	"                                                    set (--token-file or MEMPLAN_TOKEN); a non-loopback\n"
	"                                                    address needs a token unless --insecure;\n"
	"                                                    memplan serve --help lists every flag\n"
	"  memplan db export [--db PATH]                     print devices and user models as JSON\n"
	"  memplan db import FILE [--db PATH]                import such a file (all or nothing)\n"
	"  memplan plan inference|training [--model ID | --config FILE] [--device ID] [--name value ...]\n"
	"              [--request FILE] [--json] [--db PATH]\n"
	"                                                    run a plan locally (no daemon): every --name value\n"
	"                                                    becomes a request field (numbers, true/false and\n"
	"                                                    strings auto-detected; a.b sets a nested field);\n"
	"                                                    --config FILE is model.hf_config; --request FILE a\n"
	"                                                    whole body; --json prints the API's document\n"
	"  memplan roofline --device ID [--db PATH] [--json] [--svg FILE] [--model ID [--batch N]\n"
	"                   [--context N] [--prompt N]] [OP...]\n"
	"                                                    roofline table and chart; OP is KIND:key=value,...\n"
	"                                                    e.g. matmul:m=1,k=4096,n=4096,dtype=bf16\n"
	"  memplan calibrate [--cpu | --gpu] [--json] [--db PATH] [--suites a,b,...] [--runs N]\n"
	"                    [--array-bytes N] [--matrix-size N] [--threads N] [--fit-plan FILE]\n"
	"                    [--save FILE]                  (--save: also write the job document to FILE)\n"
	"                                                    measure this machine's GPU 0 (the CPU with --cpu,\n"
	"                                                    or when no GPU is usable), store the measured\n"
	"                                                    profile, print a table (the job document: --json)\n"
	"  memplan routes                                    the route table (METHOD PATTERN lines)\n"
	"  memplan --help                                    this text\n"
	"  memplan --version                                 the version\n";

/* Finds --config FILE in argv (or MEMPLAN_CONFIG); NULL when neither is given. */
static const char *config_path(int argc, char **argv)
{
	for (int i = 0; i + 1 < argc; i++)
		if (strcmp(argv[i], "--config") == 0)
			return argv[i + 1];
	return getenv("MEMPLAN_CONFIG");
}

/* Defaults, then the config file, then MEMPLAN_* variables, then flags. Returns 0, or 2 after a message. */
static int serve_settings(int argc, char **argv, mpd_config *cfg)
{
	const char *file = config_path(argc, argv);
	mp_error err = { { 0 }, { 0 } };

	mpd_config_defaults(cfg);
	if (file && mpd_config_load_file(cfg, file, &err) != MP_OK)
		goto bad;
	if (mpd_config_load_env(cfg, &err) != MP_OK)
		goto bad;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			printf("Usage: memplan serve [FLAGS]\n\n  %-22s %-28s %s\n", "flag", "environment", "meaning");
			mpd_config_usage(stdout);
			exit(0);
		}
		/* --insecure is a switch: alone it means "true" */
		if (strcmp(argv[i], "--insecure") == 0 && (i + 1 >= argc || strncmp(argv[i + 1], "--", 2) == 0)) {
			if (mpd_config_set(cfg, "insecure", "true", &err) != MP_OK)
				goto bad;
			continue;
		}
		if (strncmp(argv[i], "--", 2) != 0 || i + 1 >= argc) {
			fprintf(stderr, "memplan serve: unknown or incomplete option '%s'\n\n%s", argv[i], usage);
			return 2;
		}
		if (strcmp(argv[i], "--config") == 0) {
			i++;
			continue;
		}
		if (mpd_config_set(cfg, argv[i] + 2, argv[i + 1], &err) != MP_OK)
			goto bad;
		i++;
	}
	return 0;
bad:
	fprintf(stderr, "memplan serve: %s\n", err.message);
	return 2;
}

/*
 * SIGINT and SIGTERM reach `serve` through a pipe. The handler writes the signal number to it; the main thread
 * reads it. A signal handler has no way in but a global, so the write end is the one global here.
 * A handler, rather than blocking the signals and calling sigwait: libraries loaded before main() start
 * threads of their own with nothing blocked (OpenBLAS starts its pool in a constructor). The kernel may hand a
 * process-directed SIGTERM to any such thread, and there its default action would kill the daemon mid-request.
 * With a handler, whichever thread takes the signal only writes one byte.
 */
static int stop_pipe_w = -1;

static void on_stop_signal(int sig)
{
	unsigned char b = (unsigned char)sig;
	int saved = errno;
	ssize_t n = write(stop_pipe_w, &b, 1); /* async-signal-safe; a full pipe means a stop is pending anyway */

	(void)n;
	errno = saved;
}

/* Installs on_stop_signal for SIGINT and SIGTERM; *read_fd gets the pipe's read end. Returns 0 or -1. */
static int stop_signals_install(int *read_fd)
{
	struct sigaction sa;
	int fds[2];

	if (pipe(fds) != 0)
		return -1;
	for (int i = 0; i < 2; i++)
		fcntl(fds[i], F_SETFD, FD_CLOEXEC);
	fcntl(fds[1], F_SETFL, O_NONBLOCK);
	stop_pipe_w = fds[1];
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGINT, &sa, NULL) != 0 || sigaction(SIGTERM, &sa, NULL) != 0)
		return -1;
	*read_fd = fds[0];
	return 0;
}

static int serve(int argc, char **argv)
{
	mpd_daemon d;
	mp_error err = { { 0 }, { 0 } };
	mp_status st;
	sigset_t stop_set;
	int sig = 0, stop_fd = -1;
	mpd_log_level lvl;
	unsigned long left;
	int rc;

	memset(&d, 0, sizeof(d));
	rc = serve_settings(argc, argv, &d.cfg);
	if (rc != 0)
		return rc;
	if (mpd_auth_load(&d.cfg, d.cfg.token_file[0] ? d.cfg.token_file : NULL, &err) != MP_OK ||
	    mpd_auth_check_listen(&d.cfg, &err) != MP_OK) {
		fprintf(stderr, "memplan serve: %s\n", err.message);
		return 2;
	}
	lvl = (mpd_log_level)d.cfg.log_level;
	/* a client that goes away mid-response must not kill the daemon */
	signal(SIGPIPE, SIG_IGN);
	if (stop_signals_install(&stop_fd) != 0) {
		mpd_log(lvl, MPD_LOG_ERROR, "memplan serve: cannot install the SIGTERM handler: %s", strerror(errno));
		return 1;
	}
	/* the server's threads start with SIGINT and SIGTERM blocked (they inherit this mask), so their polls are not
	 * interrupted; the main thread unblocks them again once the server runs */
	sigemptyset(&stop_set);
	sigaddset(&stop_set, SIGINT);
	sigaddset(&stop_set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop_set, NULL);
	st = mpd_open_store(&d, &err);
	if (st != MP_OK) {
		mpd_log(lvl, MPD_LOG_ERROR, "memplan serve: %s", err.message);
		return 1;
	}
	st = mpd_start(&d, &err);
	if (st != MP_OK) {
		mpd_log(lvl, MPD_LOG_ERROR, "memplan serve: %s", err.message);
		mp_store_close(d.store);
		return 1;
	}
	mpd_log(lvl, MPD_LOG_INFO, "memplan %s listening on %s%s%s:%u, database %s, %u thread%s", MP_VERSION,
		strchr(d.cfg.listen_host, ':') ? "[" : "", d.cfg.listen_host, strchr(d.cfg.listen_host, ':') ? "]" : "",
		d.bound_port, d.cfg.db_path, d.cfg.threads, d.cfg.threads == 1 ? "" : "s");
	pthread_sigmask(SIG_UNBLOCK, &stop_set, NULL);
	for (;;) {
		unsigned char b;
		ssize_t n = read(stop_fd, &b, 1);

		if (n == 1) {
			sig = b;
			break;
		}
		if (n < 0 && errno == EINTR)
			continue;
		sig = SIGTERM; /* the pipe failed: stop rather than run unstoppable */
		break;
	}
	mpd_log(lvl, MPD_LOG_INFO, "%s: shutting down: no new connections, waiting up to %u s for requests in flight",
		sig == SIGINT ? "SIGINT" : "SIGTERM", d.cfg.shutdown_timeout_seconds);
	left = mpd_shutdown(&d);
	if (left > 0)
		mpd_log(lvl, MPD_LOG_WARN, "gave up waiting: %lu request%s still in flight", left,
			left == 1 ? " was" : "s were");
	mp_store_close(d.store);
	mpd_log(lvl, MPD_LOG_INFO, "stopped; database closed");
	return 0;
}

/* `memplan routes`: the route table, one "METHOD PATTERN" a line (the contract tests compare it with the spec). */
static int routes(void)
{
	for (size_t i = 0; i < mpd_route_count; i++)
		printf("%s %s\n", mpd_routes[i].method, mpd_routes[i].pattern);
	return 0;
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;

	if (f == NULL)
		return NULL;
	do {
		if (n + 4096 + 1 > cap) {
			char *p = realloc(buf, cap = (cap ? cap * 2 : 8192));

			if (p == NULL) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = p;
		}
		r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
	} while (r > 0);
	if (f != stdin)
		fclose(f);
	if (buf)
		buf[n] = '\0';
	*len = n;
	return buf;
}

static cJSON *parse_file(const char *path, const char *what)
{
	size_t len = 0;
	char *text = read_file(path, &len);
	cJSON *doc;

	if (text == NULL) {
		fprintf(stderr, "memplan plan: cannot read %s %s\n", what, path);
		return NULL;
	}
	doc = cJSON_ParseWithLength(text, len);
	free(text);
	if (doc == NULL)
		fprintf(stderr, "memplan plan: %s %s is not valid JSON\n", what, path);
	return doc;
}

/*
 * A command-line value as JSON: true/false, a number when the whole text is one, a JSON object or list
 * when it starts with { or [, else a string. So new request fields need no CLI code.
 */
static cJSON *cli_value(const char *v)
{
	char *end;

	if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0)
		return cJSON_CreateBool(v[0] == 't');
	if (v[0] == '{' || v[0] == '[')
		return cJSON_Parse(v);
	if (v[0] != '\0') {
		double d = strtod(v, &end);

		if (*end == '\0')
			return cJSON_CreateNumber(d);
	}
	return cJSON_CreateString(v);
}

/* Sets body[path] = value; a dotted path ("weight_formats.lm_head") creates the objects on the way. Dashes in
 * names become underscores (--batch-size = --batch_size). */
static bool set_path(cJSON *body, const char *path, cJSON *value)
{
	char key[128];
	const char *dot;
	cJSON *obj = body;

	for (;;) {
		size_t n;

		dot = strchr(path, '.');
		n = dot ? (size_t)(dot - path) : strlen(path);
		if (n == 0 || n >= sizeof(key)) {
			cJSON_Delete(value);
			return false;
		}
		memcpy(key, path, n);
		key[n] = '\0';
		for (char *p = key; *p; p++)
			if (*p == '-')
				*p = '_';
		if (dot == NULL)
			break;
		{
			cJSON *next = cJSON_GetObjectItemCaseSensitive(obj, key);

			if (!cJSON_IsObject(next)) {
				cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
				next = cJSON_AddObjectToObject(obj, key);
			}
			obj = next;
		}
		path = dot + 1;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	cJSON_AddItemToObject(obj, key, value);
	return true;
}

/* Prints n bytes as "16,060,522,496 B = 16.061 GB = 14.958 GiB". */
static void print_bytes(double n)
{
	char digits[32], grouped[48];
	size_t len, j = 0;
	bool neg = n < 0;

	snprintf(digits, sizeof(digits), "%.0f", neg ? -n : n);
	len = strlen(digits);
	if (neg)
		grouped[j++] = '-';
	for (size_t i = 0; i < len; i++) {
		grouped[j++] = digits[i];
		if ((len - i - 1) % 3 == 0 && i + 1 < len)
			grouped[j++] = ',';
	}
	grouped[j] = '\0';
	printf("%s B = %.3f GB = %.3f GiB", grouped, n / 1e9, n / 1073741824.0);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* A readable breakdown of a plan document: every member, indented; *_bytes figures in B, GB (1e9) and GiB (2^30). */
/* A figure for humans: whole numbers as integers, others to 4 significant digits (the JSON output keeps all). */
static void print_figure(double v)
{
	if (v == floor(v) && fabs(v) <= 9007199254740992.0)
		printf("%.0f", v);
	else
		printf("%.4g", v);
}

static void print_doc(const cJSON *o, int depth)
{
	const cJSON *v;

	cJSON_ArrayForEach(v, o)
	{
		const char *k = v->string ? v->string : "-";

		if (strcmp(k, "notes") == 0 && cJSON_IsArray(v)) {
			const cJSON *n;

			printf("%*snotes:\n", depth * 2, "");
			cJSON_ArrayForEach(n, v)
			{
				printf("%*s- %s\n", depth * 2 + 2, "", cJSON_IsString(n) ? n->valuestring : "");
			}
			continue;
		}
		printf("%*s%s: ", depth * 2, "", k);
		if (cJSON_IsObject(v)) {
			printf("\n");
			print_doc(v, depth + 1);
		} else if (cJSON_IsArray(v)) {
			char *t = cJSON_PrintUnformatted(v);

			printf("%s\n", t ? t : "[]");
			cJSON_free(t);
		} else if (cJSON_IsNumber(v) && (ends_with(k, "_bytes") || strcmp(k, "bytes") == 0)) {
			print_bytes(v->valuedouble);
			printf("\n");
		} else if (cJSON_IsNumber(v)) {
			print_figure(v->valuedouble);
			printf("\n");
		} else if (cJSON_IsString(v)) {
			printf("%s\n", v->valuestring);
		} else if (cJSON_IsBool(v)) {
			printf("%s\n", cJSON_IsTrue(v) ? "true" : "false");
		} else {
			printf("null\n");
		}
	}
}

static int plan(int argc, char **argv)
{
	const char *kind = argc > 0 ? argv[0] : "";
	mpd_daemon d;
	mp_error err = { { 0 }, { 0 } };
	cJSON *body = NULL, *out = NULL;
	char *printed;
	bool json = false;
	mp_status st;
	int rc = 2;

	memset(&d, 0, sizeof(d));
	mpd_config_defaults(&d.cfg);
	if (strcmp(kind, "inference") != 0 && strcmp(kind, "training") != 0) {
		fprintf(stderr, "%s", usage);
		return 2;
	}
	body = cJSON_CreateObject();
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--json") == 0) {
			json = true;
			continue;
		}
		if (strncmp(a, "--", 2) != 0 || a[2] == '\0' || val == NULL) {
			fprintf(stderr, "memplan plan: expected --name value, got '%s'\n\n%s", a, usage);
			goto out;
		}
		i++;
		if (strcmp(a, "--db") == 0) {
			snprintf(d.cfg.db_path, sizeof(d.cfg.db_path), "%s", val);
		} else if (strcmp(a, "--request") == 0) {
			cJSON *base = parse_file(val, "request"), *item;

			if (base == NULL || !cJSON_IsObject(base)) {
				cJSON_Delete(base);
				goto out;
			}
			/* the file's members, each overridable by a later --name value */
			while ((item = base->child) != NULL) {
				cJSON_DetachItemViaPointer(base, item);
				cJSON_DeleteItemFromObjectCaseSensitive(body, item->string);
				cJSON_AddItemToObject(body, item->string, item);
			}
			cJSON_Delete(base);
		} else if (strcmp(a, "--config") == 0) {
			cJSON *cfg = parse_file(val, "config"), *model;

			if (cfg == NULL)
				goto out;
			model = cJSON_CreateObject();
			cJSON_AddItemToObject(model, "hf_config", cfg);
			set_path(body, "model", model);
		} else if (!set_path(body, a + 2, cli_value(val))) {
			fprintf(stderr, "memplan plan: bad option name '%s'\n", a);
			goto out;
		}
	}
	rc = 1;
	st = mpd_open_store(&d, &err);
	if (st == MP_OK)
		st = kind[0] == 'i' ? mpd_plan_inference(d.store, body, &out, &err)
				    : mpd_plan_training(d.store, body, &out, &err);
	if (st == MP_OK) {
		if (json) {
			printed = mpd_json_print(out, true);
			if (printed)
				printf("%s\n", printed);
			cJSON_free(printed);
		} else {
			printf("memplan plan %s (GB = 1e9 bytes, GiB = 2^30 bytes)\n", kind);
			print_doc(out, 0);
		}
		rc = 0;
	} else {
		fprintf(stderr, "memplan plan: %s%s%s: %s\n", mp_status_str(st), err.field[0] ? " at " : "", err.field,
			err.message);
	}
out:
	cJSON_Delete(out);
	cJSON_Delete(body);
	if (d.store)
		mp_store_close(d.store);
	return rc;
}

/* memplan db export [--db PATH] | memplan db import FILE [--db PATH] */
static int db(int argc, char **argv)
{
	const char *verb = argc > 0 ? argv[0] : "", *file = NULL;
	mpd_daemon d;
	mp_error err = { { 0 }, { 0 } };
	cJSON *doc = NULL;
	char *text = NULL;
	size_t len = 0;
	mp_status st;
	int rc = 1;

	memset(&d, 0, sizeof(d));
	mpd_config_defaults(&d.cfg);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--db") == 0 && i + 1 < argc)
			snprintf(d.cfg.db_path, sizeof(d.cfg.db_path), "%s", argv[++i]);
		else if (file == NULL && argv[i][0] != '-')
			file = argv[i];
		else
			verb = "";
	}
	if (!((strcmp(verb, "export") == 0 && file == NULL) || (strcmp(verb, "import") == 0 && file))) {
		fprintf(stderr, "%s", usage);
		return 2;
	}
	if (file && (text = read_file(file, &len)) == NULL) {
		fprintf(stderr, "memplan db import: cannot read %s\n", file);
		return 2;
	}
	if (verb[0] == 'e' && access(d.cfg.db_path, F_OK) != 0) {
		/* a mistyped path must not export a freshly seeded, empty fleet */
		fprintf(stderr, "memplan db export: no database at %s (give --db PATH)\n", d.cfg.db_path);
		return 1;
	}
	st = mpd_open_store(&d, &err);
	if (st == MP_OK && verb[0] == 'e') {
		st = mpd_export(d.store, &doc, &err);
		if (st == MP_OK) {
			char *printed = mpd_json_print(doc, true);

			if (printed)
				printf("%s\n", printed);
			cJSON_free(printed);
			rc = printed ? 0 : 1;
		}
	} else if (st == MP_OK) {
		int ndev = 0, nmod = 0;

		doc = cJSON_ParseWithLength(text, len);
		st = doc ? mpd_import(d.store, doc, &ndev, &nmod, &err)
			 : mp_fail(&err, MP_EPARSE, "", "%s is not valid JSON", file);
		if (st == MP_OK) {
			fprintf(stderr, "memplan db import: %d devices and %d models written to %s\n", ndev, nmod,
				d.cfg.db_path);
			rc = 0;
		}
	}
	if (st != MP_OK)
		fprintf(stderr, "memplan db %s: %s%s%s: %s\n", verb, mp_status_str(st), err.field[0] ? " at " : "",
			err.field, err.message);
	cJSON_Delete(doc);
	free(text);
	mp_store_close(d.store);
	return rc;
}

/* ----- calibrate ----------------------------------------------------------------------------------------- */

/* Ctrl-C during `memplan calibrate` cancels the run at the next suite boundary (the only global: a signal flag). */
static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

typedef struct bar {
	bool tty;
	int last;
} bar;

/* Draws a progress bar on a terminal (stderr); stops the job on Ctrl-C. */
static bool calib_tick(void *ctx, double percent, const char *suite)
{
	bar *b = ctx;
	int filled = (int)(percent * 0.4);

	if (b->tty && (int)(percent * 10) != b->last) {
		b->last = (int)(percent * 10);
		fprintf(stderr, "\r[%-40.*s] %5.1f%% %-12s", filled, "########################################", percent,
			suite);
		fflush(stderr);
	}
	return !stop_requested;
}

static bool parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end = NULL;
	unsigned long long v;

	if (s == NULL || *s == '-')
		return false;
	v = strtoull(s, &end, 10);
	if (end == s || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

static int calibrate(int argc, char **argv)
{
	mpd_daemon d;
	mpd_calib_jobs *jobs = NULL;
	mpd_calib_request rq;
	mp_error err = { { 0 }, { 0 } };
	mp_calib_gpu_info gi;
	cJSON *doc = NULL, *body = NULL, *st_item;
	char id[MPD_CALIB_ID_MAX], *text = NULL, *printed;
	const char *suites = NULL, *fit_file = NULL, *save = NULL;
	bool json = false, force_cpu = false, force_gpu = false;
	uint64_t runs = 0, array_bytes = 0, matrix = 0, threads = 0;
	bar b = { isatty(2) != 0, -1 };
	struct sigaction sa;
	size_t len = 0;
	mp_status st;
	int rc = 1;

	memset(&d, 0, sizeof(d));
	mpd_config_defaults(&d.cfg);
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool ok = true;

		if (strcmp(a, "--cpu") == 0)
			force_cpu = true;
		else if (strcmp(a, "--gpu") == 0)
			force_gpu = true;
		else if (strcmp(a, "--json") == 0)
			json = true;
		else if (strcmp(a, "--db") == 0 && v)
			ok = snprintf(d.cfg.db_path, sizeof(d.cfg.db_path), "%s", argv[++i]) < (int)sizeof(d.cfg.db_path);
		else if (strcmp(a, "--suites") == 0 && v)
			suites = argv[++i];
		else if (strcmp(a, "--fit-plan") == 0 && v)
			fit_file = argv[++i];
		else if (strcmp(a, "--save") == 0 && v)
			save = argv[++i];
		else if (strcmp(a, "--runs") == 0 && v)
			ok = parse_count(argv[++i], MP_CALIB_MIN_RUNS, 1000, &runs);
		else if (strcmp(a, "--array-bytes") == 0 && v)
			ok = parse_count(argv[++i], 1u << 20, UINT64_C(1) << 40, &array_bytes);
		else if (strcmp(a, "--matrix-size") == 0 && v)
			ok = parse_count(argv[++i], 64, 16384, &matrix);
		else if (strcmp(a, "--threads") == 0 && v)
			ok = parse_count(argv[++i], 1, 256, &threads);
		else
			ok = false;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(usage, stdout);
			return 0;
		}
		if (!ok || (force_cpu && force_gpu)) {
			fprintf(stderr,
				"memplan calibrate: bad or incomplete option '%s' (--runs takes %u to 1000, --array-bytes "
				"1 MiB to 1 TiB, --matrix-size 64 to 16384, --threads 1 to 256; --cpu and --gpu exclude "
				"each other)\n\n%s",
				a, MP_CALIB_MIN_RUNS, usage);
			return 2;
		}
	}
	/* The request as the API would get it, so the CLI validates exactly like POST /v1/calibrations. */
	body = cJSON_CreateObject();
	if (!force_cpu && !force_gpu && mp_calib_gpu_probe(&gi, &err) != MP_OK) {
		fprintf(stderr, "memplan calibrate: no GPU to measure (%s); measuring the CPU\n", err.message);
		force_cpu = true;
	}
	cJSON_AddStringToObject(body, "target", force_cpu ? "cpu" : "gpu:0");
	if (suites) {
		cJSON *a = cJSON_AddArrayToObject(body, "suites");

		for (const char *p = suites; *p;) {
			size_t n = strcspn(p, ",");
			char name[32];

			snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) ? n : sizeof(name) - 1), p);
			cJSON_AddItemToArray(a, cJSON_CreateString(name));
			p += n + (p[n] == ',');
		}
	}
	if (runs || array_bytes || matrix || threads) {
		cJSON *o = cJSON_AddObjectToObject(body, "options");

		if (runs)
			cJSON_AddNumberToObject(o, "runs", (double)runs);
		if (array_bytes)
			cJSON_AddNumberToObject(o, "array_bytes", (double)array_bytes);
		if (matrix)
			cJSON_AddNumberToObject(o, "matrix_size", (double)matrix);
		if (threads)
			cJSON_AddNumberToObject(o, "threads", (double)threads);
	}
	if (fit_file) {
		cJSON *plan;

		text = read_file(fit_file, &len);
		plan = text ? cJSON_ParseWithLength(text, len) : NULL;
		if (plan == NULL) {
			fprintf(stderr, "memplan calibrate: cannot read %s as JSON\n", fit_file);
			cJSON_Delete(body);
			free(text);
			return 2;
		}
		cJSON_AddItemToObject(body, "fit_plan", plan);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	st = mpd_open_store(&d, &err);
	if (st == MP_OK)
		st = mpd_calib_jobs_create(d.store, &jobs, &err);
	if (st == MP_OK)
		st = mpd_calib_decode(d.store, body, &rq, &err);
	if (st == MP_OK)
		st = mpd_calib_start(jobs, &rq, id, &err);
	if (st == MP_OK) {
		if (b.tty)
			fprintf(stderr, "memplan calibrate: job %s on %s, database %s\n", id, rq.gpu ? "gpu:0" : "cpu",
				d.cfg.db_path);
		st = mpd_calib_wait(jobs, id, calib_tick, &b, &err);
		if (b.tty)
			fprintf(stderr, "\r%-70s\r", "");
	}
	if (st == MP_OK)
		st = mpd_calib_get(jobs, id, &doc, &err);
	if (st == MP_OK) {
		st_item = cJSON_GetObjectItem(doc, "state");
		rc = cJSON_IsString(st_item) && strcmp(st_item->valuestring, "succeeded") == 0 ? 0 : 1;
		if (save) {
			FILE *sf = fopen(save, "w");

			printed = mpd_json_print(doc, true);
			if (sf == NULL || printed == NULL || fprintf(sf, "%s\n", printed) < 0) {
				fprintf(stderr, "memplan calibrate: cannot write %s\n", save);
				rc = 1;
			}
			if (sf)
				fclose(sf);
			cJSON_free(printed);
		}
		if (json) {
			printed = mpd_json_print(doc, true);
			if (printed)
				printf("%s\n", printed);
			cJSON_free(printed);
		} else {
			mpd_calib_print_table(stdout, doc);
		}
	} else {
		fprintf(stderr, "memplan calibrate: %s%s%s: %s\n", mp_status_str(st), err.field[0] ? " at " : "", err.field,
			err.message);
		rc = st == MP_EINVAL ? 2 : 1;
	}
	cJSON_Delete(doc);
	cJSON_Delete(body);
	free(text);
	mpd_calib_jobs_destroy(jobs);
	mp_store_close(d.store);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("memplan %s\n", MP_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "serve") == 0)
		return serve(argc - 2, argv + 2);
	if (strcmp(argv[1], "plan") == 0)
		return plan(argc - 2, argv + 2);
	if (strcmp(argv[1], "roofline") == 0)
		return mpd_roofline_cli(argc - 2, argv + 2, usage);
	if (strcmp(argv[1], "db") == 0)
		return db(argc - 2, argv + 2);
	if (strcmp(argv[1], "calibrate") == 0)
		return calibrate(argc - 2, argv + 2);
	if (strcmp(argv[1], "routes") == 0)
		return routes();
	fprintf(stderr, "memplan: unknown command '%s'\n\n%s", argv[1], usage);
	return 2;
}
