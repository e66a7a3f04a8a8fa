/*
 * cli.h: the memplan command line: main() and one file per subcommand, over service/ and codec/ as cmark's
 * src/main.c sits over cmark.h. Only `serve` starts daemon/. Argument errors go to stderr with exit status 2;
 * a failed request exits 1.
 */
#ifndef MPCLI_CLI_H
#define MPCLI_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "../core/mp_base.h"

/* The global usage text (memplan --help). */
extern const char cli_usage[];
/* The database a command uses unless --db is given. */
#define CLI_DEFAULT_DB "var/memplan.db"

int cli_serve(int argc, char **argv);
int cli_plan(int argc, char **argv);
int cli_roofline(int argc, char **argv);
int cli_calibrate(int argc, char **argv);
int cli_db(int argc, char **argv);
int cli_routes(void);

/* Reads a whole file ("-" = stdin), NUL-terminated; *len gets its length. NULL when it cannot. Caller frees. */
char *cli_read_file(const char *path, size_t *len);
/* Parses a JSON file, saying on stderr what failed ("memplan <cmd>: cannot read <what> <path>"). Caller owns. */
cJSON *cli_parse_file(const char *cmd, const char *path, const char *what);
/* Prints doc as JSON (pretty) on stdout, followed by a newline. Returns false when out of memory. */
bool cli_print_json(const cJSON *doc);
/* Prints "memplan <cmd>: <status> at <field>: <message>" on stderr. */
void cli_print_error(const char *cmd, mp_status st, const mp_error *err);

#endif /* MPCLI_CLI_H */
