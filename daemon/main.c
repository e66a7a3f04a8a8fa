/*
 * main.c: the memplan command line. Subcommands are thin: `serve` starts the HTTP daemon; `plan` runs the
 * same plan functions as the API without a daemon. All argument errors go to stderr with exit status 2.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "daemon.h"
#include "log.h"
#include "plan.h"
#include "routes.h"

static const char usage[] =
	"memplan " MP_VERSION ": GPU memory and roofline planner for LLM training and inference\n"
	"\n"
	"Usage:\n"
	"  memplan serve [--listen ADDR:PORT] [--db PATH]   start the REST daemon (default 127.0.0.1:8080,\n"
	"                                                    database var/memplan.db, created and seeded);\n"
	"                                                    memplan serve --help lists every flag\n"
	"  memplan plan inference|training --json FILE [--db PATH]\n"
	"                                                    run a plan request (the API's JSON body) locally\n"
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

static int serve(int argc, char **argv)
{
	mpd_daemon d;
	mp_error err = { { 0 }, { 0 } };
	mp_status st;
	sigset_t stop_set;
	int sig = 0;
	mpd_log_level lvl;
	unsigned long left;
	int rc;

	memset(&d, 0, sizeof(d));
	rc = serve_settings(argc, argv, &d.cfg);
	if (rc != 0)
		return rc;
	lvl = (mpd_log_level)d.cfg.log_level;
	/* a client that goes away mid-response must not kill the daemon */
	signal(SIGPIPE, SIG_IGN);
	/* SIGINT and SIGTERM are blocked in every thread (the server's inherit the mask) and taken by sigwait
	 * below: no window between testing a flag and pause() where a signal could be lost */
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
	mpd_log(lvl, MPD_LOG_INFO, "memplan %s listening on %s%s%s:%u, database %s, %u threads", MP_VERSION,
		strchr(d.cfg.listen_host, ':') ? "[" : "", d.cfg.listen_host, strchr(d.cfg.listen_host, ':') ? "]" : "",
		d.bound_port, d.cfg.db_path, d.cfg.threads);
	while (sigwait(&stop_set, &sig) != 0)
		;
	mpd_log(lvl, MPD_LOG_INFO, "%s: shutting down: no new connections, waiting up to %u s for requests in flight",
		sig == SIGINT ? "SIGINT" : "SIGTERM", d.cfg.shutdown_timeout_seconds);
	left = mpd_shutdown(&d);
	if (left > 0)
		mpd_log(lvl, MPD_LOG_WARN, "gave up waiting: %lu requests were still in flight", left);
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

static int plan(int argc, char **argv)
{
	const char *kind = argc > 0 ? argv[0] : "", *file = NULL;
	mpd_daemon d;
	mp_error err = { { 0 }, { 0 } };
	cJSON *body = NULL, *out = NULL;
	char *text = NULL, *printed;
	size_t len = 0;
	mp_status st;
	int rc = 1;

	memset(&d, 0, sizeof(d));
	mpd_config_defaults(&d.cfg);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0 && i + 1 < argc)
			file = argv[++i];
		else if (strcmp(argv[i], "--db") == 0 && i + 1 < argc)
			snprintf(d.cfg.db_path, sizeof(d.cfg.db_path), "%s", argv[++i]);
		else
			file = NULL, i = argc;
	}
	if ((strcmp(kind, "inference") != 0 && strcmp(kind, "training") != 0) || file == NULL) {
		fprintf(stderr, "%s", usage);
		return 2;
	}
	text = read_file(file, &len);
	if (text == NULL) {
		fprintf(stderr, "memplan plan: cannot read %s\n", file);
		return 2;
	}
	st = mpd_open_store(&d, &err);
	if (st == MP_OK) {
		body = cJSON_ParseWithLength(text, len);
		if (body == NULL)
			st = mp_fail(&err, MP_EPARSE, "", "%s is not valid JSON", file);
	}
	if (st == MP_OK)
		st = kind[0] == 'i' ? mpd_plan_inference(d.store, body, &out, &err)
				    : mpd_plan_training(d.store, body, &out, &err);
	if (st == MP_OK) {
		printed = cJSON_Print(out);
		if (printed)
			printf("%s\n", printed);
		cJSON_free(printed);
		rc = 0;
	} else {
		fprintf(stderr, "memplan plan: %s%s%s: %s\n", mp_status_str(st), err.field[0] ? " at " : "", err.field,
			err.message);
	}
	cJSON_Delete(out);
	cJSON_Delete(body);
	free(text);
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
	if (strcmp(argv[1], "routes") == 0)
		return routes();
	fprintf(stderr, "memplan: unknown command '%s'\n\n%s", argv[1], usage);
	return 2;
}
