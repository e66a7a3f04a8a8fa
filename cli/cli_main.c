/*
 * cli_main.c: the memplan command line's entry: the usage text and the dispatch to one file per subcommand
 * (cli/cli_serve.c, cli_plan.c, cli_roofline.c, cli_calibrate.c, cli_db.c). Starts nothing it does not need: --version and
 * --help touch no database, no library beyond libc.
 */
#include <stdio.h>
#include <string.h>

#include "../planner/memplan.h"
#include "../codec/mpc_json.h"
#include "cli.h"

const char cli_usage[] =
	"memplan " MP_VERSION ": GPU memory and roofline planner for LLM training and inference\n"
	"\n"
	"Usage:\n"
	"  memplan serve [--listen ADDR:PORT] [--db PATH] [--token-file FILE] [--insecure] [--config FILE] ...\n"
	"                                                    start the REST daemon (default 127.0.0.1:8080,\n"
	"                                                    database var/memplan.db, created and seeded); writes\n"
	"                                                    need 'Authorization: Bearer <token>' when a token is\n"
	"                                                    set (--token-file or MEMPLAN_TOKEN); a non-loopback\n"
	"                                                    address needs a token unless --insecure; the web\n"
	"                                                    page is at http://ADDR:PORT/\n"
	"  memplan plan inference|training [--model ID | --config FILE] [--device ID] [--name value ...]\n"
	"              [--request FILE] [--json] [--verbose] [--db PATH]\n"
	"                                                    run a plan locally (no daemon): the verdict first,\n"
	"                                                    then the memory terms; every --name value becomes a\n"
	"                                                    request field (a.b sets a nested one); --config FILE\n"
	"                                                    is model.hf_config; --request FILE a whole body;\n"
	"                                                    --json prints the API's document; --engine\n"
	"                                                    vllm|sglang|trtllm|llamacpp|ollama adds the\n"
	"                                                    engine block,\n"
	"                                                    --print-args prints its command line alone\n"
	"  memplan roofline --device ID [--db PATH] [--json] [--svg FILE] [--model ID [--batch N]\n"
	"                   [--context N] [--prompt N] [--weight_dtype D] [--tensor_parallel_size N] ...]\n"
	"                   [OP...]\n"
	"                                                    roofline table and chart; OP is KIND:key=value,...\n"
	"                                                    e.g. matmul:m=1,k=4096,n=4096,dtype=bf16\n"
	"  memplan calibrate [--cpu | --gpu] [--json] [--db PATH] [--suites a,b,...] [--runs N] ...\n"
	"                                                    measure this machine's GPU 0 (or the CPU), store the\n"
	"                                                    measured profile, print a table\n"
	"  memplan db export [--db PATH]                     print devices and user models as JSON\n"
	"  memplan db import FILE [--db PATH]                import such a file (all or nothing)\n"
	"  memplan models [--json] | memplan devices [--json] what a plan can name: presets and stored ones\n"
	"  memplan model tensors --config FILE | --model ID  the model's tensors: names, shapes, formats, bytes\n"
	"  memplan types [--markdown]                        the model types memplan reads\n"
	"  memplan routes                                    the route table (METHOD PATTERN lines)\n"
	"  memplan --help                                    this text\n"
	"  memplan --version                                 the version\n"
	"\n"
	"Each command takes --help (its options and fields, with the allowed values), and every option both as\n"
	"--name value and as --name=value. Commands other than serve read var/memplan.db under the current folder\n"
	"unless --db PATH or MEMPLAN_DB says otherwise: give the daemon's database to see what was stored through it.\n";

/* Runs the subcommand on args already split (--name=value as two arguments). */
static int dispatch(int argc, char **argv)
{
	const char *cmd = argv[0];

	if (strcmp(cmd, "serve") == 0)
		return cli_serve(argc - 1, argv + 1);
	if (strcmp(cmd, "plan") == 0) {
		if (cli_wants_help(argc - 1, argv + 1)) {
			cli_plan_help(argc > 1 && argv[1][0] != '-' ? argv[1] : "");
			return 0;
		}
		return cli_plan(argc - 1, argv + 1);
	}
	if (strcmp(cmd, "roofline") == 0) {
		if (cli_wants_help(argc - 1, argv + 1)) {
			cli_roofline_help();
			return 0;
		}
		return cli_roofline(argc - 1, argv + 1);
	}
	if (strcmp(cmd, "db") == 0) {
		if (cli_wants_help(argc - 1, argv + 1)) {
			cli_db_help();
			return 0;
		}
		return cli_db(argc - 1, argv + 1);
	}
	if (strcmp(cmd, "calibrate") == 0) {
		if (cli_wants_help(argc - 1, argv + 1)) {
			cli_calibrate_help();
			return 0;
		}
		return cli_calibrate(argc - 1, argv + 1);
	}
	if (strcmp(cmd, "models") == 0 || strcmp(cmd, "devices") == 0) {
		if (cli_wants_help(argc - 1, argv + 1)) {
			cli_list_help(cmd);
			return 0;
		}
		return cli_list(cmd, argc - 1, argv + 1);
	}
	if (strcmp(cmd, "model") == 0) {
		if (cli_wants_help(argc - 1, argv + 1)) {
			cli_model_help();
			return 0;
		}
		return cli_model(argc - 1, argv + 1);
	}
	if (strcmp(cmd, "types") == 0) {
		if (cli_wants_help(argc - 1, argv + 1)) {
			cli_types_help();
			return 0;
		}
		return cli_types(argc - 1, argv + 1);
	}
	if (strcmp(cmd, "routes") == 0) {
		if (cli_wants_help(argc - 1, argv + 1)) {
			printf("Usage: memplan routes\n\nPrints the daemon's route table, one METHOD PATTERN line per route "
			       "(the paths of openapi.yaml).\n");
			return 0;
		}
		/* --db PATH is taken (and ignored: the route table is in the binary), as every command takes it */
		if (argc > 1 && !(argc == 3 && strcmp(argv[1], "--db") == 0)) {
			fprintf(stderr, "memplan routes: takes no arguments (got '%s')\n", argv[1]);
			return 2;
		}
		return cli_routes();
	}
	fprintf(stderr, "memplan: unknown command '%s'\n\n%s", cmd, cli_usage);
	return 2;
}

int main(int argc, char **argv)
{
	char **args = NULL;
	int n, rc;

	mpc_json_init(NULL); /* before any cJSON call: allocation failures are counted (codec/mpc_json.h) */
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		if (argc >= 3 && strcmp(argv[1], "help") == 0) { /* memplan help plan == memplan plan --help */
			char *h[] = { argv[2], (char *)"--help" };

			return dispatch(2, h);
		}
		fputs(cli_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("memplan %s\n", MP_VERSION);
		return 0;
	}
	n = cli_split_options(argc - 1, argv + 1, &args);
	if (n < 0) {
		fprintf(stderr, "memplan: out of memory\n");
		return 1;
	}
	rc = dispatch(n, args);
	cli_free_options(n, args);
	return rc;
}
