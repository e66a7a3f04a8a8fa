/*
 * cli.h: the memplan command line: main() and one file per subcommand, over service/ and codec/ as cmark's
 * src/main.c sits over cmark.h. Only `serve` starts daemon/. Argument errors go to stderr with exit status 2;
 * a failed request exits 1.
 */
#ifndef MPCLI_CLI_H
#define MPCLI_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "../core/mp_base.h"
#include "../service/service.h"

/* The global usage text (memplan --help). */
extern const char cli_usage[];
/* The database a command uses unless --db or MEMPLAN_DB is given. */
#define CLI_DEFAULT_DB "var/memplan.db"
/* The database without --db: $MEMPLAN_DB when set, else CLI_DEFAULT_DB (borrowed). */
const char *cli_default_db(void);
/* "Database: ..." for a subcommand's --help: where it is looked for, now and in general, and the daemon's. */
void cli_print_db_help(FILE *f);
/* mps_open, saying on stderr when it created the database at a path the user did not give (db_given false). */
mp_status cli_open(const char *cmd, const char *db, bool db_given, mps_service **svc, mp_error *err);

/* argv with every "--name=value" split in two ("--name", "value"), so each subcommand takes both spellings.
 * *out is heap (cli_free_options); returns its count, or -1 when out of memory. */
int cli_split_options(int argc, char **argv, char ***out);
void cli_free_options(int argc, char **argv);
/* Whether --help or -h is among the arguments. */
bool cli_wants_help(int argc, char **argv);
/* Each subcommand's --help (stdout). kind: plan's "inference", "training" or "" (both). */
void cli_plan_help(const char *kind);
void cli_roofline_help(void);
void cli_calibrate_help(void);
void cli_db_help(void);
/* memplan models | devices [--json] (cli/cli_list.c); what: "models" or "devices". */
void cli_list_help(const char *what);
int cli_list(const char *what, int argc, char **argv);
void cli_model_help(void);
void cli_types_help(void);

int cli_serve(int argc, char **argv);
int cli_plan(int argc, char **argv);
int cli_roofline(int argc, char **argv);
int cli_calibrate(int argc, char **argv);
int cli_db(int argc, char **argv);
int cli_routes(void);
/* memplan model tensors ... and memplan types [--markdown] (cli/cli_model.c). */
int cli_model(int argc, char **argv);
int cli_types(int argc, char **argv);

/* Reads a whole file ("-" = stdin), NUL-terminated; *len gets its length. NULL when it cannot. Caller frees. */
char *cli_read_file(const char *path, size_t *len);

/* The model member of a request for a path (cli_model_files.c): a .gguf file (every file of a split one) as
 * {"gguf_header": ...}, a checkpoint folder as {"safetensors_headers": [...], "hf_config": ...} (or its .gguf).
 * NULL with why "" when nothing is at path (the caller then takes it as an id), NULL with why set when something is
 * there but cannot be read. Owned by the caller. */
cJSON *cli_model_from_path(const char *path, char *why, size_t wlen);
/* Whether the local Hugging Face cache (hub/hub.h mph_cache_dir) holds repo ("org/name"). */
bool cli_in_hf_cache(const char *repo);
/* Parses a JSON file, saying on stderr what failed ("memplan <cmd>: cannot read <what> <path>"). Caller owns. */
cJSON *cli_parse_file(const char *cmd, const char *path, const char *what);
/* A JSON answer as the writer wrote it (consumed), printed indented with its newline. false when out of memory. */
bool cli_print_json_text(char *json);
/* Prints "memplan <cmd>: <status> at <field>: <message>" on stderr. */
void cli_print_error(const char *cmd, mp_status st, const mp_error *err);
/* The same, and for MP_ENOTFOUND the database it looked in and how to give the daemon's. */
void cli_print_error_db(const char *cmd, mp_status st, const mp_error *err, const char *db);

#endif /* MPCLI_CLI_H */
