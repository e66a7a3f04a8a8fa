/*
 * cli_db.c: `memplan db export|import`: devices and user models as one JSON document, and that document written back
 * all or nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../codec/codec.h"
#include "cli.h"

void cli_db_help(void)
{
	printf("Usage: memplan db export [--db PATH] > fleet.json\n"
	       "       memplan db import FILE [--db PATH]\n\n"
	       "export prints every device profile and every user model as one JSON document (format memplan-export);\n"
	       "import writes such a document back, all or nothing (a device or model that exists is replaced).\n"
	       "export refuses a database that does not exist (a mistyped path must not export a fresh fleet).\n\n");
	cli_print_db_help(stdout);
}

/* memplan db export [--db PATH] | memplan db import FILE [--db PATH] */
int cli_db(int argc, char **argv)
{
	const char *verb = argc > 0 ? argv[0] : "", *file = NULL;
	const char *path = cli_default_db();
	mps_service *svc = NULL;
	mp_error err = { { 0 }, { 0 }, NULL };
	cJSON *doc = NULL;
	char *text = NULL;
	size_t len = 0;
	mp_status st;
	int rc = 1;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--db") == 0 && i + 1 < argc)
			path = argv[++i];
		else if (file == NULL && argv[i][0] != '-')
			file = argv[i];
		else
			verb = "";
	}
	if (!((strcmp(verb, "export") == 0 && file == NULL) || (strcmp(verb, "import") == 0 && file))) {
		fprintf(stderr, "memplan db: say export [--db PATH] or import FILE [--db PATH] (memplan db --help)\n");
		return 2;
	}
	if (file && (text = cli_read_file(file, &len)) == NULL) {
		fprintf(stderr, "memplan db import: cannot read %s\n", file);
		return 2;
	}
	if (verb[0] == 'e' && access(path, F_OK) != 0) {
		/* a mistyped path must not export a freshly seeded, empty fleet */
		fprintf(stderr, "memplan db export: no database at %s (give --db PATH, or set MEMPLAN_DB)\n", path);
		return 1;
	}
	st = mps_open(path, &svc, &err);
	if (st == MP_OK && verb[0] == 'e') {
		mpc_export e;

		mpc_export_begin(&e, mps_schema_version(svc));
		st = mps_export(svc, mpc_export_add_device, mpc_export_add_model, &e, &err);
		if (st == MP_OK)
			rc = cli_print_json_text(mpc_export_finish(&e, NULL)) ? 0 : 1;
		else
			mpc_out_free(&e.w);
	} else if (st == MP_OK) {
		mps_import im;

		doc = cJSON_ParseWithLength(text, len);
		st = doc ? mpc_import_decode(doc, &im, &err) : mp_fail(&err, MP_EPARSE, "", "%s is not valid JSON", file);
		if (st == MP_OK) {
			st = mps_import_run(svc, &im, &err);
			if (st == MP_OK) {
				fprintf(stderr, "memplan db import: %zu device%s and %zu model%s written to %s\n",
					im.ndevices, im.ndevices == 1 ? "" : "s", im.nmodels, im.nmodels == 1 ? "" : "s",
					path);
				rc = 0;
			}
			mpc_import_free(&im);
		}
	}
	if (st != MP_OK)
		fprintf(stderr, "memplan db %s: %s%s%s: %s\n", verb, mp_status_str(st), err.field[0] ? " at " : "",
			err.field, err.message);
	cJSON_Delete(doc);
	free(text);
	mps_close(svc);
	return rc;
}

