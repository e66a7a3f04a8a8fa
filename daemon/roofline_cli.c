/*
 * roofline_cli.c: `memplan roofline`: builds the same request POST /v1/roofline takes from the command line,
 * answers it locally and prints a table and a text log-log chart (or the JSON document, or an SVG file).
 * Argument errors go to stderr with exit status 2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "roofline_doc.h"
#include "reply.h"

static void print_table(const cJSON *doc)
{
	const cJSON *o, *ll = cJSON_GetObjectItemCaseSensitive(doc, "littles_law"), *tr;

	printf("Ridge: %.1f FLOP/B (%s peak / DRAM bandwidth)\n",
	       cJSON_GetObjectItemCaseSensitive(doc, "ridge_flops_per_byte")->valuedouble,
	       cJSON_GetObjectItemCaseSensitive(doc, "ridge_dtype")->valuestring);
	if (ll)
		printf("Little's law: %.0f KiB in flight to saturate the bandwidth\n",
		       cJSON_GetObjectItemCaseSensitive(ll, "bytes_in_flight")->valuedouble / 1024);
	if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "ops")) > 0)
		printf("\n%-24s %-11s %12s %14s %9s %-8s %12s\n", "operation", "kind", "FLOP/B", "TFLOP/s", "% peak",
		       "bound", "floor (us)");
	cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(doc, "ops"))
	{
		printf("%-24.24s %-11s %12.4g %14.4g %8.2f%% %-8s %12.4g\n",
		       cJSON_GetObjectItemCaseSensitive(o, "label")->valuestring,
		       cJSON_GetObjectItemCaseSensitive(o, "op")->valuestring,
		       cJSON_GetObjectItemCaseSensitive(o, "arithmetic_intensity_flops_per_byte")->valuedouble,
		       cJSON_GetObjectItemCaseSensitive(o, "attainable_flops_per_second")->valuedouble / 1e12,
		       100 * cJSON_GetObjectItemCaseSensitive(o, "fraction_of_peak")->valuedouble,
		       cJSON_GetObjectItemCaseSensitive(o, "bound")->valuestring,
		       cJSON_GetObjectItemCaseSensitive(o, "time_seconds")->valuedouble * 1e6);
	}
	tr = cJSON_GetObjectItemCaseSensitive(doc, "transformer");
	for (int ph = 0; tr && ph < 2; ph++) {
		const cJSON *s = cJSON_GetObjectItemCaseSensitive(tr, ph ? "prefill" : "decode");

		printf("\n%s step: %.4g ms, %.4g tokens/s per sequence, %.4g in total, %s-bound\n",
		       ph ? "Prefill" : "Decode",
		       cJSON_GetObjectItemCaseSensitive(s, "step_seconds")->valuedouble * 1e3,
		       cJSON_GetObjectItemCaseSensitive(s, "tokens_per_second_per_sequence")->valuedouble,
		       cJSON_GetObjectItemCaseSensitive(s, "tokens_per_second_total")->valuedouble,
		       cJSON_GetObjectItemCaseSensitive(s, "bound")->valuestring);
		printf("  %-18s %6s %12s %-8s %12s\n", "op", "count", "FLOP/B", "bound", "total (us)");
		for (o = cJSON_GetObjectItemCaseSensitive(s, "ops") ? cJSON_GetObjectItemCaseSensitive(s, "ops")->child
								      : NULL;
		     o != NULL; o = o->next)
			printf("  %-18s %6.0f %12.4g %-8s %12.4g\n",
			       cJSON_GetObjectItemCaseSensitive(o, "name")->valuestring,
			       cJSON_GetObjectItemCaseSensitive(o, "count")->valuedouble,
			       cJSON_GetObjectItemCaseSensitive(o, "arithmetic_intensity_flops_per_byte")->valuedouble,
			       cJSON_GetObjectItemCaseSensitive(o, "bound")->valuestring,
			       cJSON_GetObjectItemCaseSensitive(o, "total_seconds")->valuedouble * 1e6);
	}
	if (tr) {
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(tr, "decode_compute_bound_batch");

		if (cJSON_IsNumber(b))
			printf("\nDecode turns compute-bound at batch %.0f\n", b->valuedouble);
		else
			printf("\nDecode stays memory-bound at every batch (KV reads grow with it)\n");
	}
	printf("\n");
}

int mpd_roofline_cli(int argc, char **argv, const char *usage)
{
	mpd_daemon d;
	mp_error err = {{0}, {0}};
	cJSON *body = cJSON_CreateObject(), *ops, *doc = NULL, *tr = NULL;
	const char *device = NULL, *svg = NULL;
	bool json = false;
	mp_status st = MP_OK;
	int rc = 2;

	memset(&d, 0, sizeof(d));
	mpd_config_defaults(&d.cfg);
	if (body == NULL)
		return 1;
	ops = cJSON_AddArrayToObject(body, "ops");
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--device") == 0 && v)
			device = argv[++i];
		else if (strcmp(a, "--db") == 0 && v)
			snprintf(d.cfg.db_path, sizeof(d.cfg.db_path), "%s", argv[++i]);
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
		} else if ((strcmp(a, "--batch") == 0 || strcmp(a, "--context") == 0 || strcmp(a, "--prompt") == 0) &&
		           v) {
			char *end = NULL;
			double n = strtod(argv[++i], &end);

			if (*end || tr == NULL) {
				fprintf(stderr, "memplan roofline: %s takes a number and needs --model before it\n", a);
				goto out;
			}
			cJSON_AddNumberToObject(tr,
			                        a[2] == 'b'   ? "batch_size"
			                        : a[2] == 'c' ? "context_tokens"
			                                      : "prompt_tokens",
			                        n);
		} else if (a[0] != '-' && strchr(a, ':')) {
			cJSON *op;
			char field[32];

			snprintf(field, sizeof(field), "argv[%d]", i);
			st = mpd_op_spec_json(a, field, &op, &err);
			if (st != MP_OK) {
				fprintf(stderr, "memplan roofline: %s: %s\n", a, err.message);
				goto out;
			}
			cJSON_AddItemToArray(ops, op);
		} else {
			fprintf(stderr, "memplan roofline: unknown or incomplete argument '%s'\n\n%s", a, usage);
			goto out;
		}
	}
	if (device == NULL) {
		fprintf(stderr, "memplan roofline: --device ID is required\n\n%s", usage);
		goto out;
	}
	cJSON_AddStringToObject(body, "device", device);
	rc = 1;
	st = mpd_open_store(&d, &err);
	if (st == MP_OK)
		st = mpd_roofline(d.store, body, &doc, &err);
	if (st != MP_OK) {
		fprintf(stderr, "memplan roofline: %s%s%s: %s\n", mp_status_str(st), err.field[0] ? " at " : "",
		        err.field, err.message);
		goto out;
	}
	{
		mpd_chart *chart = calloc(1, sizeof(*chart));
		char *text = NULL, *printed = NULL;

		if (chart == NULL)
			goto out;
		mpd_chart_from_doc(doc, chart);
		if (json) {
			printed = mpd_json_print(doc, true);
			if (printed)
				printf("%s\n", printed);
			cJSON_free(printed);
		} else {
			print_table(doc);
			text = mpd_roofline_text(chart);
			if (text && chart->npoints)
				printf("%s", text);
			free(text);
		}
		if (svg) {
			FILE *f = fopen(svg, "w");

			text = mpd_roofline_svg(chart);
			if (f == NULL || text == NULL || fputs(text, f) < 0) {
				fprintf(stderr, "memplan roofline: cannot write %s\n", svg);
				free(text);
				free(chart);
				if (f)
					fclose(f);
				goto out;
			}
			fclose(f);
			free(text);
		}
		free(chart);
	}
	rc = 0;
out:
	cJSON_Delete(doc);
	cJSON_Delete(body);
	mp_store_close(d.store);
	return rc;
}
