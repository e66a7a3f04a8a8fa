/*
 * main.c: the memplan command line's entry: the usage text and the dispatch to one file per subcommand
 * (cli/serve.c, plan.c, roofline.c, calibrate.c, db.c). Starts nothing it does not need: --version and
 * --help touch no database, no library beyond libc.
 */
#include <stdio.h>
#include <string.h>

#include "../planner/memplan.h"
#include "../codec/json.h"
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
	"                                                    whole body; --json prints the API's document;\n"
	"                                                    --engine vllm|sglang|trtllm adds the engine block,\n"
	"                                                    --print-args prints its command line alone\n"
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

int main(int argc, char **argv)
{
	mpc_json_init(NULL); /* before any cJSON call: allocation failures are counted (codec/json.h) */
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		fputs(cli_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("memplan %s\n", MP_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "serve") == 0)
		return cli_serve(argc - 2, argv + 2);
	if (strcmp(argv[1], "plan") == 0)
		return cli_plan(argc - 2, argv + 2);
	if (strcmp(argv[1], "roofline") == 0)
		return cli_roofline(argc - 2, argv + 2);
	if (strcmp(argv[1], "db") == 0)
		return cli_db(argc - 2, argv + 2);
	if (strcmp(argv[1], "calibrate") == 0)
		return cli_calibrate(argc - 2, argv + 2);
	if (strcmp(argv[1], "routes") == 0)
		return cli_routes();
	fprintf(stderr, "memplan: unknown command '%s'\n\n%s", argv[1], cli_usage);
	return 2;
}
