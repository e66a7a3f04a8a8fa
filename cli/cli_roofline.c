/*
 * cli_roofline.c: `memplan roofline`: builds the request POST /v1/roofline takes from the command line, answers it
 * locally and prints a table and a text log-log chart (or the JSON document, or an SVG file).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../codec/codec.h"
#include "cli.h"

/* Writes the chart as SVG to path. */
static bool write_svg(const char *path, const mpc_chart *chart)
{
	FILE *f = fopen(path, "w");
	char *text = mpc_roofline_svg(chart);
	bool ok = f && text && fputs(text, f) >= 0;

	if (f && fclose(f) != 0)
		ok = false;
	free(text);
	if (!ok)
		fprintf(stderr, "memplan roofline: cannot write %s\n", path);
	return ok;
}

/* A step option of --model's (--weight_dtype or --weight-dtype, ...): the transformer member it sets, or NULL. */
static const char *step_option(const char *a)
{
	static const char *const members[] = { "weight_dtype", "kv_cache_dtype", "compute_dtype", "tensor_parallel_size" };

	if (strncmp(a, "--", 2) != 0)
		return NULL;
	for (size_t i = 0; i < sizeof(members) / sizeof(members[0]); i++) {
		size_t n = strlen(members[i]), k;

		for (k = 0; k < n && (a[2 + k] == members[i][k] || (a[2 + k] == '-' && members[i][k] == '_')); k++)
			;
		if (k == n && a[2 + n] == '\0')
			return members[i];
	}
	return NULL;
}

/* Prints the answer: the JSON document, or the table and the text chart. */
static bool print_answer(const mps_roofline_request *rq, const mps_roofline_result *r, const mpc_chart *chart, bool json)
{
	char *text;

	if (json) {
		mpc_out w;

		mpc_out_init(&w);
		mpc_roofline_write(&w, rq, r);
		return cli_print_json_text(mpc_out_finish(&w, NULL));
	}
	text = mpc_roofline_table_text(rq, r);
	if (text == NULL)
		return false;
	printf("%s", text);
	free(text);
	text = mpc_roofline_text(chart);
	if (text && chart->npoints)
		printf("%s", text);
	free(text);
	return true;
}

void cli_roofline_help(void)
{
	char *ops = mpc_request_fields_text("roofline");

	printf("Usage: memplan roofline --device ID [--db PATH] [--json] [--svg FILE] [--ridge-dtype DTYPE]\n"
	       "                        [--model ID [--batch N] [--context N] [--prompt N] [--weight_dtype DTYPE]\n"
	       "                        [--kv_cache_dtype DTYPE] [--compute_dtype DTYPE] [--tensor_parallel_size N]]\n"
	       "                        [OP...]\n\n"
	       "The roofline of operations on a stored device, as POST /v1/roofline answers it: a table (arithmetic\n"
	       "intensity, attainable FLOP/s, fraction of peak, bound, time floor), then a text log-log chart. With\n"
	       "--model, the model's decode and prefill operations are analysed and drawn too.\n\n"
	       "Options:\n"
	       "  --device ID         the device (required; a stored id)\n"
	       "  --model ID          a stored model: its per-layer decode and prefill operations, step times, tokens/s\n"
	       "  --batch N           sequences decoded together (with --model; default 1)\n"
	       "  --context N         tokens already in each sequence's KV cache (with --model; default 4096)\n"
	       "  --prompt N          tokens of the prefill (with --model; default 4096)\n"
	       "  --weight_dtype DTYPE, --kv_cache_dtype DTYPE, --compute_dtype DTYPE\n"
	       "                      the model's formats, as memplan plan inference takes them (with --model;\n"
	       "                      default auto: the config's, as vLLM serves it); also spelt --weight-dtype ...\n"
	       "  --tensor_parallel_size N\n"
	       "                      GPUs each layer is split over: the steps per GPU (with --model; default 1)\n"
	       "  --ridge-dtype DTYPE the compute roof the ridge uses (default bf16)\n"
	       "  --svg FILE          also write the chart as SVG (one roof per data type among the points)\n"
	       "  --json              print the API's JSON document instead\n"
	       "  --db PATH           the database (below)\n\n"
	       "OP is KIND:key=value,... (numbers may use exponents, 1e6); the kinds and their keys:\n%s\n",
	       ops ? ops : "");
	free(ops);
	cli_print_db_help(stdout);
	printf("\nExample:\n  memplan roofline --device h100-sxm5-80gb matmul:m=1,k=4096,n=4096,dtype=bf16,label=gemv "
	       "matmul:m=8192,k=8192,n=8192,dtype=bf16\n");
}

int cli_roofline(int argc, char **argv)
{
	const char *db = cli_default_db(), *device = NULL, *svg = NULL;
	mps_service *svc = NULL;
	mps_roofline_request *rq = calloc(1, sizeof(*rq));
	mps_roofline_result *r = malloc(sizeof(*r));
	mpc_chart *chart = malloc(sizeof(*chart));
	mp_error err = { { 0 }, { 0 }, NULL };
	cJSON *body = cJSON_CreateObject(), *ops, *tr = NULL;
	bool json = false, db_given = getenv("MEMPLAN_DB") && getenv("MEMPLAN_DB")[0];
	mp_status st = MP_OK;
	int rc = 2;

	if (body == NULL || rq == NULL || r == NULL || chart == NULL) {
		rc = 1;
		goto out;
	}
	ops = cJSON_AddArrayToObject(body, "ops");
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--device") == 0 && v)
			device = argv[++i];
		else if (strcmp(a, "--db") == 0 && v) {
			db = argv[++i];
			db_given = true;
		}
		else if (strcmp(a, "--svg") == 0 && v)
			svg = argv[++i];
		else if (strcmp(a, "--json") == 0)
			json = true;
		else if (strcmp(a, "--ridge-dtype") == 0 && v)
			cJSON_AddStringToObject(body, "ridge_dtype", argv[++i]);
		else if (strcmp(a, "--model") == 0 && v) {
			if (tr == NULL)
				tr = cJSON_AddObjectToObject(body, "transformer");
			cJSON_AddStringToObject(tr, "model", argv[++i]);
		} else if ((strcmp(a, "--batch") == 0 || strcmp(a, "--context") == 0 || strcmp(a, "--prompt") == 0) && v) {
			char *end = NULL;
			double n = strtod(argv[++i], &end);

			if (*end || tr == NULL) {
				fprintf(stderr, "memplan roofline: %s takes a number and needs --model before it\n", a);
				goto out;
			}
			cJSON_AddNumberToObject(tr, a[2] == 'b' ? "batch_size" : a[2] == 'c' ? "context_tokens" : "prompt_tokens",
						n);
		} else if (step_option(a) && v) {
			const char *member = step_option(a);
			char *end = NULL;
			double n = 0;

			if (tr == NULL) {
				fprintf(stderr, "memplan roofline: %s describes --model's steps: give --model before it\n", a);
				goto out;
			}
			i++;
			if (strcmp(member, "tensor_parallel_size") == 0)
				n = strtod(argv[i], &end);
			/* a number as a number, anything else as text: the decoder names what is wrong with it */
			if (end && end != argv[i] && *end == '\0')
				cJSON_AddNumberToObject(tr, member, n);
			else
				cJSON_AddStringToObject(tr, member, argv[i]);
		} else if (a[0] != '-' && strchr(a, ':')) {
			cJSON *op;
			char field[32];

			snprintf(field, sizeof(field), "argv[%d]", i);
			st = mpc_op_spec_json(a, field, &op, &err);
			if (st != MP_OK) {
				fprintf(stderr, "memplan roofline: %s: %s\n", a, err.message);
				goto out;
			}
			mpc_append(ops, op);
		} else {
			fprintf(stderr, "memplan roofline: unknown or incomplete argument '%s' (memplan roofline --help)\n", a);
			goto out;
		}
	}
	if (device == NULL) {
		fprintf(stderr, "memplan roofline: --device ID is required (memplan roofline --help)\n");
		goto out;
	}
	cJSON_AddStringToObject(body, "device", device);
	rc = 1;
	st = mpc_roofline_decode(body, rq, &err);
	if (st == MP_OK)
		st = cli_open("roofline", db, db_given, &svc, &err);
	if (st == MP_OK)
		st = mps_roofline(svc, rq, r, &err);
	if (st != MP_OK) {
		cli_print_error_db("roofline", st, &err, db);
		goto out;
	}
	mpc_chart_from_result(rq, r, chart);
	if (!print_answer(rq, r, chart, json) || (svg && !write_svg(svg, chart)))
		goto out;
	rc = 0;
out:
	cJSON_Delete(body);
	free(chart);
	free(r);
	mpc_roofline_request_release(rq);
	free(rq);
	mps_close(svc);
	return rc;
}
