/*
 * cli_common.c: what the subcommands share: reading files, printing JSON and errors.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../codec/mpc_json.h"
#include "cli.h"

char *cli_read_file(const char *path, size_t *len)
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

cJSON *cli_parse_file(const char *cmd, const char *path, const char *what)
{
	size_t len = 0;
	char *text = cli_read_file(path, &len);
	cJSON *doc;

	if (text == NULL) {
		fprintf(stderr, "memplan %s: cannot read %s %s\n", cmd, what, path);
		return NULL;
	}
	doc = cJSON_ParseWithLength(text, len);
	free(text);
	if (doc == NULL)
		fprintf(stderr, "memplan %s: %s %s is not valid JSON\n", cmd, what, path);
	return doc;
}

bool cli_print_json_text(char *json)
{
	char *pretty = json ? mpc_reprint(json, true) : NULL;

	free(json);
	if (pretty == NULL)
		return false;
	printf("%s\n", pretty);
	cJSON_free(pretty);
	return true;
}

/* msg in the command line's terms: the API's listings named as the commands that print them ("GET /v1/models
 * lists them" -> "memplan models lists them"), into out. */
static const char *cli_terms(const char *msg, char *out, size_t len)
{
	static const struct {
		const char *api, *cli;
	} terms[] = {{"GET /v1/models", "memplan models"}, {"GET /v1/devices", "memplan devices"}};
	size_t o = 0;

	while (*msg && o + 1 < len) {
		size_t k = 0;

		for (; k < sizeof(terms) / sizeof(terms[0]); k++)
			if (strncmp(msg, terms[k].api, strlen(terms[k].api)) == 0)
				break;
		if (k < sizeof(terms) / sizeof(terms[0])) {
			o += (size_t)snprintf(out + o, len - o, "%s", terms[k].cli);
			msg += strlen(terms[k].api);
			continue;
		}
		out[o++] = *msg++;
	}
	out[o < len ? o : len - 1] = '\0';
	return out;
}

void cli_print_error(const char *cmd, mp_status st, const mp_error *err)
{
	char msg[MP_MESSAGE_MAX + 64];

	fprintf(stderr, "memplan %s: %s%s%s: %s\n", cmd, mp_status_str(st), err->field[0] ? " at " : "", err->field,
		cli_terms(err->message, msg, sizeof(msg)));
	/* every other problem found (err->all, when the caller attached one): the decoders' and the lookups' */
	for (size_t i = 0; err->all && i < err->all->n; i++)
		if (strcmp(err->all->item[i].field, err->field) || strcmp(err->all->item[i].message, err->message))
			fprintf(stderr, "memplan %s: %s%s%s\n", cmd, err->all->item[i].field,
				err->all->item[i].field[0] ? ": " : "",
				cli_terms(err->all->item[i].message, msg, sizeof(msg)));
	if (err->all && err->all->dropped)
		fprintf(stderr, "memplan %s: %zu more problems were found and not listed (at most %d are)\n", cmd,
			err->all->dropped, MP_MAX_ERRORS);
}

void cli_print_error_db(const char *cmd, mp_status st, const mp_error *err, const char *db)
{
	cli_print_error(cmd, st, err);
	if (st == MP_ENOTFOUND)
		fprintf(stderr,
			"memplan %s: looked in the database %s; what was stored through the daemon is in the daemon's "
			"database: give it with --db PATH (or MEMPLAN_DB)\n",
			cmd, db);
}

const char *cli_default_db(void)
{
	const char *e = getenv("MEMPLAN_DB");

	return e && e[0] ? e : CLI_DEFAULT_DB;
}

void cli_print_db_help(FILE *f)
{
	char cwd[PATH_MAX];
	const char *e = getenv("MEMPLAN_DB");

	fprintf(f,
		"Database: --db PATH, else $MEMPLAN_DB, else %s under the current folder; created and seeded with the\n"
		"device and model presets on first use. Models and devices stored through the daemon are in the daemon's\n"
		"database (memplan serve --db PATH; make run: var/memplan.db in the clone): give that path to see them.\n",
		CLI_DEFAULT_DB);
	if (e && e[0])
		fprintf(f, "Now: %s (MEMPLAN_DB)\n", e);
	else if (getcwd(cwd, sizeof(cwd)))
		fprintf(f, "Now: %s/%s\n", cwd, CLI_DEFAULT_DB);
}

mp_status cli_open(const char *cmd, const char *db, bool db_given, mps_service **svc, mp_error *err)
{
	bool existed = access(db, F_OK) == 0;
	mp_status st = mps_open(db, svc, err);

	if (st == MP_OK && !existed && !db_given)
		fprintf(stderr, "memplan %s: created the database %s (seeded with the presets); give --db PATH to use "
				"another, such as the daemon's\n",
			cmd, db);
	return st;
}

int cli_split_options(int argc, char **argv, char ***out)
{
	char **v = calloc((size_t)argc * 2 + 1, sizeof(*v));
	int n = 0;

	if (v == NULL)
		return -1;
	for (int i = 0; i < argc; i++) {
		const char *eq = strncmp(argv[i], "--", 2) == 0 ? strchr(argv[i], '=') : NULL;

		if (eq && eq > argv[i] + 2) {
			v[n] = strndup(argv[i], (size_t)(eq - argv[i]));
			v[n + 1] = strdup(eq + 1);
		} else {
			v[n] = strdup(argv[i]);
		}
		if (v[n] == NULL || (eq && eq > argv[i] + 2 && v[n + 1] == NULL)) {
			cli_free_options(n + 2, v);
			return -1;
		}
		n += eq && eq > argv[i] + 2 ? 2 : 1;
	}
	*out = v;
	return n;
}

void cli_free_options(int argc, char **argv)
{
	for (int i = 0; argv && i < argc; i++)
		free(argv[i]);
	free(argv);
}

bool cli_wants_help(int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return true;
	return false;
}
