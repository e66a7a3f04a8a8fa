/*
 * text.c: documents as text for people: a plan document member by member (byte figures in B, GB = 1e9 and
 * GiB = 2^30), and the roofline table. Reads only what it is given; prints into a heap string.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

/* n bytes as "16,060,522,496 B = 16.061 GB = 14.958 GiB". */
static void print_bytes(FILE *f, double n)
{
	char digits[32], grouped[48];
	size_t len, j = 0;
	bool neg = n < 0;

	snprintf(digits, sizeof(digits), "%.0f", neg ? -n : n);
	len = strlen(digits);
	if (neg)
		grouped[j++] = '-';
	for (size_t i = 0; i < len; i++) {
		grouped[j++] = digits[i];
		if ((len - i - 1) % 3 == 0 && i + 1 < len)
			grouped[j++] = ',';
	}
	grouped[j] = '\0';
	fprintf(f, "%s B = %.3f GB = %.3f GiB", grouped, n / 1e9, n / 1073741824.0);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* A figure for humans: whole numbers as integers, others to 4 significant digits (the JSON output keeps all). */
static void print_figure(FILE *f, double v)
{
	if (v == floor(v) && fabs(v) <= (double)MP_MAX_PLAN_BYTES)
		fprintf(f, "%.0f", v);
	else
		fprintf(f, "%.4g", v);
}

/* A number member, whether cJSON holds it as a number or as the exact digits json.h wrote. */
static bool number_of(const cJSON *v, double *out)
{
	if (cJSON_IsNumber(v)) {
		*out = v->valuedouble;
		return true;
	}
	if (cJSON_IsRaw(v) && v->valuestring) {
		char *end = NULL;

		*out = strtod(v->valuestring, &end);
		return end && *end == '\0' && end != v->valuestring;
	}
	return false;
}

static void print_doc(FILE *f, const cJSON *o, int depth)
{
	const cJSON *v;

	cJSON_ArrayForEach(v, o)
	{
		const char *k = v->string ? v->string : "-";
		double x;

		if (strcmp(k, "notes") == 0 && cJSON_IsArray(v)) {
			const cJSON *n;

			fprintf(f, "%*snotes:\n", depth * 2, "");
			cJSON_ArrayForEach(n, v)
			{
				fprintf(f, "%*s- %s\n", depth * 2 + 2, "", cJSON_IsString(n) ? n->valuestring : "");
			}
			continue;
		}
		fprintf(f, "%*s%s: ", depth * 2, "", k);
		if (cJSON_IsObject(v)) {
			fprintf(f, "\n");
			print_doc(f, v, depth + 1);
		} else if (cJSON_IsArray(v)) {
			char *t = mpc_print(v, false);

			fprintf(f, "%s\n", t ? t : "[]");
			cJSON_free(t);
		} else if (number_of(v, &x) && (ends_with(k, "_bytes") || strcmp(k, "bytes") == 0)) {
			print_bytes(f, x);
			fprintf(f, "\n");
		} else if (number_of(v, &x)) {
			print_figure(f, x);
			fprintf(f, "\n");
		} else if (cJSON_IsString(v)) {
			fprintf(f, "%s\n", v->valuestring);
		} else if (cJSON_IsBool(v)) {
			fprintf(f, "%s\n", cJSON_IsTrue(v) ? "true" : "false");
		} else {
			fprintf(f, "null\n");
		}
	}
}

char *mpc_doc_text(const cJSON *doc)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (f == NULL)
		return NULL;
	print_doc(f, doc, 0);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

char *mpc_roofline_table_text(const mps_roofline_request *rq, const mps_roofline_result *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (f == NULL)
		return NULL;
	fprintf(f, "Ridge: %.1f FLOP/B (%s peak / DRAM bandwidth)\n", r->ridge_flops_per_byte,
		mp_dtype_name(r->ridge_dtype));
	if (r->have_littles_law)
		fprintf(f, "Little's law: %.0f KiB in flight to saturate the bandwidth\n",
			r->littles_law.bytes_in_flight / 1024);
	if (r->nops > 0)
		fprintf(f, "\n%-24s %-11s %12s %14s %9s %-8s %12s\n", "operation", "kind", "FLOP/B", "TFLOP/s", "% peak",
			"bound", "floor (us)");
	for (size_t i = 0; i < r->nops; i++) {
		const mp_roof *ro = &r->ops[i].roof;

		fprintf(f, "%-24.24s %-11s %12.4g %14.4g %8.2f%% %-8s %12.4g\n", rq->ops[i].label, rq->ops[i].kind,
			ro->intensity_flops_per_byte, ro->attainable_flops_per_second / 1e12,
			100 * ro->fraction_of_peak, ro->compute_bound ? "compute" : "memory", ro->time_seconds * 1e6);
	}
	for (int ph = 0; r->have_transformer && ph < 2; ph++) {
		const mp_step *s = ph ? &r->prefill : &r->decode;

		fprintf(f, "\n%s step: %.4g ms, %.4g tokens/s per sequence, %.4g in total, %s-bound\n",
			ph ? "Prefill" : "Decode", s->step_seconds * 1e3, s->tokens_per_second_per_sequence,
			s->tokens_per_second_total, s->compute_bound ? "compute" : "memory");
		fprintf(f, "  %-18s %6s %12s %-8s %12s\n", "op", "count", "FLOP/B", "bound", "total (us)");
		for (size_t i = 0; i < s->nops; i++)
			fprintf(f, "  %-18s %6.0f %12.4g %-8s %12.4g\n", s->ops[i].name, (double)s->ops[i].count,
				s->ops[i].roof.intensity_flops_per_byte, s->ops[i].roof.compute_bound ? "compute" : "memory",
				s->ops[i].time_seconds * 1e6);
	}
	if (r->have_transformer) {
		if (r->decode_compute_bound_batch)
			fprintf(f, "\nDecode turns compute-bound at batch %.0f\n", (double)r->decode_compute_bound_batch);
		else
			fprintf(f, "\nDecode stays memory-bound at every batch (KV reads grow with it)\n");
	}
	fprintf(f, "\n");
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}
