/*
 * common.c: what the subcommands share: reading files, printing JSON and errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../codec/json.h"
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

bool cli_print_json(const cJSON *doc)
{
	char *printed = mpc_print(doc, true);

	if (printed == NULL)
		return false;
	printf("%s\n", printed);
	cJSON_free(printed);
	return true;
}

void cli_print_error(const char *cmd, mp_status st, const mp_error *err)
{
	fprintf(stderr, "memplan %s: %s%s%s: %s\n", cmd, mp_status_str(st), err->field[0] ? " at " : "", err->field,
		err->message);
	/* every other problem the decoders found (err->all, when the caller attached one) */
	for (size_t i = 0; err->all && i < err->all->n; i++)
		if (strcmp(err->all->item[i].field, err->field) || strcmp(err->all->item[i].message, err->message))
			fprintf(stderr, "memplan %s: %s%s%s: %s\n", cmd, mp_status_str(st),
				err->all->item[i].field[0] ? " at " : "", err->all->item[i].field, err->all->item[i].message);
}
