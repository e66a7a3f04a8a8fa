/*
 * main.c: the memplan command line. Subcommands are thin: `serve` starts the HTTP daemon; `plan` runs the
 * same plan functions as the API without a daemon. All argument errors go to stderr with exit status 2.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth.h"
#include "daemon.h"
#include "plan.h"
#include "store_json.h"

static const char usage[] =
	"memplan " MP_VERSION ": GPU memory and roofline planner for LLM training and inference\n"
	"\n"
	"Usage:\n"
	"  memplan serve [--listen ADDR:PORT] [--db PATH] [--token-file FILE] [--insecure]\n"
	"                                                    start the REST daemon (default 127.0.0.1:8080,\n"
	"                                                    database var/memplan.db, created and seeded); writes\n"
	"                                                    need 'Authorization: Bearer <token>' when a token is\n"
	"                                                    set (--token-file or MEMPLAN_TOKEN); a non-loopback\n"
	"                                                    address needs a token unless --insecure\n"
	"  memplan db export [--db PATH]                     print devices and user models as JSON\n"
	"  memplan db import FILE [--db PATH]                import such a file (all or nothing)\n"
	"  memplan plan inference|training --json FILE [--db PATH]\n"
	"                                                    run a plan request (the API's JSON body) locally\n"
	"  memplan --help                                    this text\n"
	"  memplan --version                                 the version\n";

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static int serve(int argc, char **argv)
{
	mpd_daemon d;
	mp_error err = { { 0 }, { 0 } };
	mp_status st;
	struct sigaction sa;

	const char *token_file = NULL;

	memset(&d, 0, sizeof(d));
	mpd_config_defaults(&d.cfg);
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--token-file") == 0 && i + 1 < argc) {
			token_file = argv[++i];
		} else if (strcmp(argv[i], "--insecure") == 0) {
			d.cfg.insecure = true;
		} else if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc) {
			if (mpd_parse_listen(argv[++i], &d.cfg, &err) != MP_OK) {
				fprintf(stderr, "memplan serve: %s\n", err.message);
				return 2;
			}
		} else if (strcmp(argv[i], "--db") == 0 && i + 1 < argc) {
			if (snprintf(d.cfg.db_path, sizeof(d.cfg.db_path), "%s", argv[++i]) >=
			    (int)sizeof(d.cfg.db_path)) {
				fprintf(stderr, "memplan serve: --db path too long\n");
				return 2;
			}
		} else {
			fprintf(stderr, "memplan serve: unknown or incomplete option '%s'\n\n%s", argv[i], usage);
			return 2;
		}
	}
	if (mpd_auth_load(&d.cfg, token_file, &err) != MP_OK || mpd_auth_check_listen(&d.cfg, &err) != MP_OK) {
		fprintf(stderr, "memplan serve: %s\n", err.message);
		return 2;
	}
	st = mpd_open_store(&d, &err);
	if (st != MP_OK) {
		fprintf(stderr, "memplan serve: %s\n", err.message);
		return 1;
	}
	st = mpd_start(&d, &err);
	if (st != MP_OK) {
		fprintf(stderr, "memplan serve: %s\n", err.message);
		mp_store_close(d.store);
		return 1;
	}
	fprintf(stderr, "memplan %s listening on %s%s%s:%u, database %s\n", MP_VERSION,
		strchr(d.cfg.listen_host, ':') ? "[" : "", d.cfg.listen_host, strchr(d.cfg.listen_host, ':') ? "]" : "",
		d.bound_port, d.cfg.db_path);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while (!stop_requested)
		pause();
	fprintf(stderr, "memplan: shutting down\n");
	mpd_stop(&d);
	mp_store_close(d.store);
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
	st = mpd_open_store(&d, &err);
	if (st == MP_OK && verb[0] == 'e') {
		st = mpd_export(d.store, &doc, &err);
		if (st == MP_OK) {
			char *printed = cJSON_Print(doc);

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
	if (strcmp(argv[1], "db") == 0)
		return db(argc - 2, argv + 2);
	fprintf(stderr, "memplan: unknown command '%s'\n\n%s", argv[1], usage);
	return 2;
}
