/*
 * text.c: answers as text for people, the verdict first: plan documents (the fit, the binding term, the limits,
 * then the memory terms as a table; every member with --verbose or mpc_doc_text), the fit batch as a table of
 * devices x GPU counts per job, and the roofline table. Figures go through human.c (GB = 1e9 and GiB = 2^30,
 * labelled). Reads plan documents by member name and leaves out what is absent, so members other code adds are
 * never a crash; prints into heap strings (open_memstream).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

/* ----- reading documents ---------------------------------------------------------------------------------- */

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
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

static const cJSON *member(const cJSON *o, const char *k)
{
	return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

/* o[k] as a number; false when absent or not a number (null included). */
static bool num_at(const cJSON *o, const char *k, double *out)
{
	return number_of(member(o, k), out);
}

static const char *str_at(const cJSON *o, const char *k)
{
	const cJSON *v = member(o, k);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* ----- formatting --------------------------------------------------------------------------------------- */

typedef struct num_text {
	char s[96];
} num_text;

static num_text fbytes(double v)
{
	num_text t = { { 0 } };

	mpc_fmt_bytes(t.s, sizeof(t.s), v);
	return t;
}

static num_text fcount(double v)
{
	num_text t = { { 0 } };

	mpc_fmt_count(t.s, sizeof(t.s), v);
	return t;
}

static num_text fsig(double v)
{
	num_text t = { { 0 } };

	mpc_fmt_sig3(t.s, sizeof(t.s), v);
	return t;
}

static num_text fsec(double v)
{
	num_text t = { { 0 } };

	mpc_fmt_seconds(t.s, sizeof(t.s), v);
	return t;
}

static num_text fsi(double v, const char *unit)
{
	num_text t = { { 0 } };

	mpc_fmt_si(t.s, sizeof(t.s), v, unit);
	return t;
}

/* A parameter count: "8,030,261,248 parameters (8.03 billion)". */
static num_text fparams(double v)
{
	num_text t = { { 0 } };
	char a[48], b[32];

	mpc_fmt_count(a, sizeof(a), v);
	if (v >= 1e9)
		snprintf(t.s, sizeof(t.s), "%s parameters (%s billion)", a, mpc_fmt_sig3(b, sizeof(b), v / 1e9));
	else if (v >= 1e6)
		snprintf(t.s, sizeof(t.s), "%s parameters (%s million)", a, mpc_fmt_sig3(b, sizeof(b), v / 1e6));
	else
		snprintf(t.s, sizeof(t.s), "%s parameters", a);
	return t;
}

/* One member's value for people, by the unit its name carries. */
static void print_value(FILE *f, const char *k, const cJSON *v)
{
	double x;

	if (!number_of(v, &x)) {
		if (cJSON_IsString(v))
			fprintf(f, "%s", v->valuestring);
		else if (cJSON_IsBool(v))
			fprintf(f, "%s", cJSON_IsTrue(v) ? "true" : "false");
		else
			fprintf(f, "null");
		return;
	}
	if (ends_with(k, "_bytes_per_second"))
		fprintf(f, "%s", fsi(x, "B/s").s);
	else if (ends_with(k, "_flops_per_second"))
		fprintf(f, "%s", fsi(x, "FLOP/s").s);
	else if (ends_with(k, "_flops_per_byte"))
		fprintf(f, "%s FLOP/B", fsig(x).s);
	else if (ends_with(k, "_seconds"))
		fprintf(f, "%s", fsec(x).s);
	else if (ends_with(k, "_bytes") || strcmp(k, "bytes") == 0 || strstr(k, "_bytes_per_") != NULL) {
		if (fabs(x) < 1000)
			fprintf(f, "%s B", fcount(x).s);
		else
			fprintf(f, "%s B (%s)", fcount(x).s, fbytes(x).s);
	} else if (x == floor(x) && fabs(x) <= (double)MP_MAX_PLAN_BYTES)
		fprintf(f, "%s", fcount(x).s);
	else
		fprintf(f, "%s", fsig(x).s);
}

static bool scalar(const cJSON *v)
{
	return !cJSON_IsObject(v) && !cJSON_IsArray(v);
}

static void print_doc(FILE *f, const cJSON *o, int depth);

static void print_array(FILE *f, const char *k, const cJSON *a, int depth)
{
	const cJSON *e;
	bool all_scalar = true, all_string = cJSON_GetArraySize(a) > 0;
	int i = 0;

	cJSON_ArrayForEach(e, a)
	{
		all_scalar = all_scalar && scalar(e);
		all_string = all_string && cJSON_IsString(e);
	}
	if (all_scalar && !all_string) { /* a short list of values: on one line */
		fprintf(f, "%*s%s: ", depth * 2, "", k);
		if (cJSON_GetArraySize(a) == 0)
			fprintf(f, "(none)");
		cJSON_ArrayForEach(e, a)
		{
			fprintf(f, "%s", i++ ? ", " : "");
			print_value(f, k, e);
		}
		fprintf(f, "\n");
		return;
	}
	fprintf(f, "%*s%s:\n", depth * 2, "", k);
	cJSON_ArrayForEach(e, a)
	{
		if (scalar(e)) {
			fprintf(f, "%*s- ", depth * 2 + 2, "");
			print_value(f, k, e);
			fprintf(f, "\n");
		} else {
			fprintf(f, "%*s- [%d]\n", depth * 2 + 2, "", i);
			if (cJSON_IsObject(e))
				print_doc(f, e, depth + 2);
			else
				print_array(f, "items", e, depth + 2);
		}
		i++;
	}
}

static void print_doc(FILE *f, const cJSON *o, int depth)
{
	const cJSON *v;

	cJSON_ArrayForEach(v, o)
	{
		const char *k = v->string ? v->string : "-";

		if (cJSON_IsObject(v)) {
			fprintf(f, "%*s%s:\n", depth * 2, "", k);
			print_doc(f, v, depth + 1);
		} else if (cJSON_IsArray(v)) {
			print_array(f, k, v, depth);
		} else {
			fprintf(f, "%*s%s: ", depth * 2, "", k);
			print_value(f, k, v);
			fprintf(f, "\n");
		}
	}
}

/* The text of f (opened by open_memstream on *text, which fclose sets), or NULL when out of memory (freed). */
static char *close_text(FILE *f, char **text)
{
	if (fclose(f) != 0) {
		free(*text);
		return NULL;
	}
	return *text;
}

char *mpc_doc_text(const cJSON *doc)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (f == NULL)
		return NULL;
	print_doc(f, doc, 0);
	return close_text(f, &text);
}

/* ----- plans --------------------------------------------------------------------------------------------- */

/* The memory terms of the breakdown table, in the order people read them: member of "memory", label. */
typedef struct term {
	const char *key, *label;
} term;

static const term inference_terms[] = {
	{ "weights_bytes", "weights" },
	{ "kv_cache_bytes", "KV cache" },
	{ "activations_bytes", "activations" },
	{ "overhead_bytes", "overhead" },
};
static const term training_terms[] = {
	{ "weights_bytes", "weights" },
	{ "gradients_bytes", "gradients" },
	{ "master_weights_bytes", "master weights" },
	{ "optimizer_states_bytes", "optimizer states" },
	{ "activations_bytes", "activations" },
	{ "logits_bytes", "logits" },
	{ "overhead_bytes", "overhead" },
};

/* A binding term's name for people: the table's label ("kv_cache" is "KV cache"), else spaces for underscores. */
static void term_label(const char *name, char *out, size_t len)
{
	char key[80];

	snprintf(key, sizeof(key), "%s_bytes", name);
	for (size_t i = 0; i < sizeof(inference_terms) / sizeof(inference_terms[0]); i++)
		if (strcmp(inference_terms[i].key, key) == 0) {
			snprintf(out, len, "%s", inference_terms[i].label);
			return;
		}
	for (size_t i = 0; i < sizeof(training_terms) / sizeof(training_terms[0]); i++)
		if (strcmp(training_terms[i].key, key) == 0) {
			snprintf(out, len, "%s", training_terms[i].label);
			return;
		}
	snprintf(out, len, "%s", name);
	for (char *p = out; *p; p++)
		if (*p == '_')
			*p = ' ';
}

/* The serving engine's launch line and the KV cache it will report, when the plan named an engine. */
static void print_engine(FILE *f, const cJSON *doc)
{
	const cJSON *e = member(doc, "engine"), *pr = member(e, "predicted");
	const char *cmd = str_at(e, "command");
	double tokens, conc;
	char a[48], b[48];

	if (cmd == NULL)
		return;
	fprintf(f, "engine launch:       %s\n", cmd);
	if (num_at(pr, "kv_cache_tokens", &tokens)) {
		fprintf(f, "engine will report:  %s tokens of KV cache", mpc_fmt_count(a, sizeof(a), tokens));
		if (num_at(pr, "max_concurrency", &conc))
			fprintf(f, ", maximum concurrency %sx", mpc_fmt_sig3(b, sizeof(b), conc));
		fprintf(f, "\n");
	}
}

static void print_warnings(FILE *f, const cJSON *doc)
{
	const cJSON *w = member(doc, "warnings"), *e;

	if (!cJSON_IsArray(w) || cJSON_GetArraySize(w) == 0)
		return;
	fprintf(f, "warnings:\n");
	cJSON_ArrayForEach(e, w)
	{
		if (cJSON_IsString(e))
			fprintf(f, "  - %s\n", e->valuestring);
		else if (cJSON_IsObject(e) && str_at(e, "message"))
			fprintf(f, "  - %s\n", str_at(e, "message"));
	}
}

/* The head line: "Inference plan: llama-3-8b (llama, 8,030,261,248 parameters (8.03 billion)) on h200-sxm-141gb". */
static void print_head(FILE *f, const cJSON *doc, bool training)
{
	const cJSON *m = member(doc, "model"), *fit = member(doc, "fit");
	const char *id = str_at(m, "id"), *type = str_at(m, "model_type"), *dev = str_at(fit, "device");
	double params;

	fprintf(f, "%s plan: %s", training ? "Training" : "Inference", id && id[0] ? id : "inline model");
	if (num_at(m, "parameters", &params))
		fprintf(f, " (%s%s%s)", type ? type : "", type ? ", " : "", fparams(params).s);
	if (dev)
		fprintf(f, " on %s", dev);
	fprintf(f, "\n");
}

/* The verdict and the limits: the first lines people read. */
static void print_verdict(FILE *f, const cJSON *doc, bool training)
{
	const cJSON *fit = member(doc, "fit"), *mem = member(doc, "memory"), *rq = member(doc, "request");
	double total = 0, budget = 0, headroom = 0, x, seq = 0, batch = 0;
	const char *binding = str_at(fit, "binding_term");
	bool have_total = num_at(mem, "total_bytes", &total);

	if (!cJSON_IsObject(fit)) {
		if (have_total)
			fprintf(f, "NEEDS %s per GPU (no device given: name one for the fit, the limits and the "
				   "performance)\n",
				fbytes(total).s);
		return;
	}
	if (!num_at(fit, "budget_bytes", &budget))
		num_at(fit, "capacity_bytes", &budget);
	num_at(fit, "headroom_bytes", &headroom);
	if (cJSON_IsTrue(member(fit, "fits")))
		fprintf(f, "FITS: %s per GPU of a %s budget; headroom %s\n", fbytes(total).s, fbytes(budget).s,
			fbytes(headroom).s);
	else
		fprintf(f, "DOES NOT FIT: %s per GPU against a %s budget; %s over\n", fbytes(total).s,
			fbytes(budget).s, fbytes(-headroom).s);
	if (num_at(fit, "capacity_bytes", &x) && x != budget)
		fprintf(f, "  capacity:            %s (%s)\n", fbytes(x).s,
			str_at(fit, "capacity_source") ? str_at(fit, "capacity_source") : "device");
	if (binding) {
		char label[64];
		double term_bytes;
		char key[80];

		term_label(binding, label, sizeof(label));
		snprintf(key, sizeof(key), "%s_bytes", binding);
		if (num_at(mem, key, &term_bytes) && total > 0)
			fprintf(f, "  binding term:        %s: %s, %s of the total\n", label, fbytes(term_bytes).s,
				mpc_fmt_percent((char[16]){ 0 }, 16, term_bytes / total));
		else
			fprintf(f, "  binding term:        %s\n", label);
	}
	num_at(rq, "sequence_length", &seq);
	if (!num_at(rq, training ? "micro_batch_size" : "batch_size", &batch))
		batch = 1;
	if (num_at(fit, "max_batch_size", &x)) {
		fprintf(f, "  largest %s ", training ? "micro-batch:" : "batch:      ");
		if (x > 0)
			fprintf(f, "%s sequence%s of %s tokens\n", fcount(x).s, x == 1 ? "" : "s", fcount(seq).s);
		else
			fprintf(f, "none fits at %s tokens\n", fcount(seq).s);
	}
	if (num_at(fit, "max_sequence_length", &x)) {
		const cJSON *bound = member(fit, "max_sequence_length_bound");

		if (x > 0)
			fprintf(f, "  longest sequence:    %s tokens at %s %s%s\n", fcount(x).s,
				training ? "micro-batch" : "batch", fcount(batch).s,
				cJSON_IsString(bound) && strcmp(bound->valuestring, "context") == 0
					? " (the model's context, max_position_embeddings, not memory; "
					  "allow_beyond_max_position_embeddings lifts it)"
					: "");
		else
			fprintf(f, "  longest sequence:    none fits at %s %s\n", training ? "micro-batch" : "batch",
				fcount(batch).s);
	}
	if (num_at(fit, "min_gpus", &x) || num_at(fit, "min_num_gpus", &x))
		fprintf(f, "  smallest GPU count:  %s\n", x > 0 ? fcount(x).s : "none up to the largest layout tried");
	else if (cJSON_IsNull(member(fit, "min_gpus")) || cJSON_IsNull(member(fit, "min_num_gpus")))
		fprintf(f, "  smallest GPU count:  none up to the largest layout tried\n");
}

static void print_performance(FILE *f, const cJSON *doc)
{
	const cJSON *p = member(doc, "performance"), *rq = member(doc, "request");
	double step, t1, tt, pre, seq;
	const char *bound = str_at(p, "bound"), *pbound = str_at(p, "prefill_bound");

	if (!cJSON_IsObject(p))
		return;
	if (num_at(p, "decode_step_seconds", &step)) {
		fprintf(f, "  decode:              %s per step", fsec(step).s);
		if (num_at(p, "tokens_per_second_per_sequence", &t1))
			fprintf(f, ", %s tokens/s per sequence", fsig(t1).s);
		if (num_at(p, "tokens_per_second_total", &tt))
			fprintf(f, ", %s tokens/s in total", fsig(tt).s);
		fprintf(f, "%s%s%s\n", bound ? " (" : "", bound ? bound : "", bound ? "-bound floor)" : "");
	}
	if (num_at(p, "prefill_seconds", &pre)) {
		fprintf(f, "  prefill:             %s", fsec(pre).s);
		if (num_at(rq, "sequence_length", &seq))
			fprintf(f, " for prompts of %s tokens", fcount(seq).s);
		fprintf(f, "%s%s%s\n", pbound ? " (" : "", pbound ? pbound : "", pbound ? "-bound floor)" : "");
	}
}

/* The request in one line, from the echo the answer carries. */
static void print_request(FILE *f, const cJSON *doc, bool training)
{
	const cJSON *rq = member(doc, "request"), *lay = member(doc, "layout");
	double x;

	if (!cJSON_IsObject(rq))
		return;
	fprintf(f, "request:");
	if (training) {
		const char *rc = str_at(rq, "activation_recomputation");

		if (str_at(rq, "precision"))
			fprintf(f, " %s,", str_at(rq, "precision"));
		if (str_at(rq, "optimizer"))
			fprintf(f, " %s,", str_at(rq, "optimizer"));
		if (num_at(rq, "micro_batch_size", &x))
			fprintf(f, " micro-batch %s", fcount(x).s);
		if (num_at(rq, "sequence_length", &x))
			fprintf(f, " x %s tokens", fcount(x).s);
		if (rc)
			fprintf(f, ", %s recomputation", rc);
		if (num_at(lay, "num_gpus", &x)) {
			double dp = 1, tp = 1, pp = 1;
			const char *sh = str_at(lay, "sharding");

			num_at(lay, "data_parallel_size", &dp);
			num_at(lay, "tensor_parallel_size", &tp);
			num_at(lay, "pipeline_parallel_size", &pp);
			fprintf(f, "; %s GPU%s (data %s x tensor %s x pipeline %s%s%s)", fcount(x).s, x == 1 ? "" : "s",
				fcount(dp).s, fcount(tp).s, fcount(pp).s, sh && strcmp(sh, "none") ? ", " : "",
				sh && strcmp(sh, "none") ? sh : "");
		}
	} else {
		if (str_at(rq, "weight_dtype"))
			fprintf(f, " %s weights,", str_at(rq, "weight_dtype"));
		if (str_at(rq, "kv_cache_dtype"))
			fprintf(f, " %s KV cache,", str_at(rq, "kv_cache_dtype"));
		if (num_at(rq, "batch_size", &x))
			fprintf(f, " batch %s", fcount(x).s);
		if (num_at(rq, "sequence_length", &x))
			fprintf(f, " x %s tokens", fcount(x).s);
		if (num_at(rq, "tensor_parallel_size", &x))
			fprintf(f, ", tensor parallel %s", fcount(x).s);
		if (num_at(rq, "gpu_memory_utilization", &x) && x != 1)
			fprintf(f, ", gpu_memory_utilization %s", fsig(x).s);
	}
	fprintf(f, "\n");
}

/* The memory terms as a table: bytes, GB, GiB and (inference, whose terms add up) the share of the total. */
static void print_breakdown(FILE *f, const cJSON *doc, bool training)
{
	const cJSON *mem = member(doc, "memory");
	const term *terms = training ? training_terms : inference_terms;
	size_t n = training ? sizeof(training_terms) / sizeof(training_terms[0])
			    : sizeof(inference_terms) / sizeof(inference_terms[0]);
	double total = 0, x;
	const char *peak = str_at(doc, "peak_phase");

	if (!cJSON_IsObject(mem))
		return;
	num_at(mem, "total_bytes", &total);
	fprintf(f, "\n%-22s %18s %10s %10s%s\n", "memory per GPU", "bytes", "GB", "GiB", training ? "" : "   share");
	for (size_t i = 0; i < n; i++) {
		if (!num_at(mem, terms[i].key, &x))
			continue;
		fprintf(f, "  %-20s %18s %10s %10s", terms[i].label, fcount(x).s, fsig(x / 1e9).s,
			fsig(x / 1073741824.0).s);
		if (!training && total > 0)
			fprintf(f, " %7s", mpc_fmt_percent((char[16]){ 0 }, 16, x / total));
		fprintf(f, "\n");
	}
	if (num_at(mem, "total_bytes", &x))
		fprintf(f, "  %-20s %18s %10s %10s%s\n", "total", fcount(x).s, fsig(x / 1e9).s,
			fsig(x / 1073741824.0).s, training ? "" : "    100%");
	if (training)
		fprintf(f, "  (the peak of the %s phase; the terms do not all coexist)\n", peak ? peak : "busiest");
}

char *mpc_plan_text(const cJSON *doc, bool verbose, const char *hint)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	bool training = cJSON_IsObject(member(doc, "layout")) || num_at(member(doc, "memory"), "gradients_bytes",
									    &(double){ 0 });

	if (f == NULL)
		return NULL;
	print_head(f, doc, training);
	print_verdict(f, doc, training);
	print_performance(f, doc);
	print_engine(f, doc);
	print_warnings(f, doc);
	print_breakdown(f, doc, training);
	fprintf(f, "\n");
	print_request(f, doc, training);
	fprintf(f, "GB = 1e9 bytes, GiB = 2^30 bytes.%s%s\n", hint ? " " : "", hint ? hint : "");
	if (verbose) {
		fprintf(f, "\nEvery figure of the answer:\n");
		print_doc(f, doc, 1);
	}
	return close_text(f, &text);
}

/* ----- the fit batch ------------------------------------------------------------------------------------- */

struct mpc_fit_text {
	FILE *f;		/* the whole text */
	char *text;
	size_t len;
	FILE *rows;		/* the job being written: its device rows, printed after its verdict */
	char *rows_text;
	size_t rows_len;
	uint64_t gpu_counts[MPS_FIT_MAX_GPU_COUNTS];
	size_t ngpu_counts;
	char job_id[MP_STORE_ID_MAX], model[MP_STORE_ID_MAX], kind[16];
	double parameters;
	size_t ndevices, nfit;
	uint64_t fewest;	/* the smallest GPU count over the job's devices, 0 = none */
	char fewest_on[160];	/* the devices that reach it */
	bool failed;
};

#define FIT_CELL 15

mpc_fit_text *mpc_fit_text_new(const mps_fit_request *rq)
{
	mpc_fit_text *w = calloc(1, sizeof(*w));

	(void)rq;
	if (w == NULL)
		return NULL;
	w->f = open_memstream(&w->text, &w->len);
	if (w->f == NULL) {
		free(w);
		return NULL;
	}
	return w;
}

void mpc_fit_text_free(mpc_fit_text *w)
{
	if (w == NULL)
		return;
	if (w->rows)
		fclose(w->rows);
	free(w->rows_text);
	if (w->f)
		fclose(w->f);
	free(w->text);
	free(w);
}

static mp_status t_begin(void *ctx, const mps_fit_request *rq, size_t ndevices)
{
	mpc_fit_text *w = ctx;

	w->ngpu_counts = rq->ngpu_counts;
	memcpy(w->gpu_counts, rq->gpu_counts, sizeof(w->gpu_counts));
	fprintf(w->f, "Fit: %zu job%s x %zu device%s x GPU counts", rq->njobs, rq->njobs == 1 ? "" : "s", ndevices,
		ndevices == 1 ? "" : "s");
	for (size_t g = 0; g < rq->ngpu_counts; g++)
		fprintf(w->f, "%s %llu", g ? "," : "", (unsigned long long)rq->gpu_counts[g]);
	fprintf(w->f, "\n(totals are per GPU: the step's peak with the CUDA context; GB = 1e9 bytes, GiB = 2^30 "
		      "bytes)\n");
	return MP_OK;
}

static mp_status t_job_begin(void *ctx, const mps_fit_job *job, const mps_model *model)
{
	mpc_fit_text *w = ctx;

	snprintf(w->job_id, sizeof(w->job_id), "%s", job->id);
	snprintf(w->model, sizeof(w->model), "%s", model->id[0] ? model->id : "inline model");
	snprintf(w->kind, sizeof(w->kind), "%s", job->training ? "training" : "inference");
	w->parameters = (double)model->params.total;
	w->ndevices = w->nfit = 0;
	w->fewest = 0;
	w->fewest_on[0] = '\0';
	w->rows = open_memstream(&w->rows_text, &w->rows_len);
	if (w->rows == NULL)
		return MP_ENOMEM;
	fprintf(w->rows, "  %-24s %-9s", "device", "fewest");
	for (size_t g = 0; g < w->ngpu_counts; g++) {
		char h[32];

		snprintf(h, sizeof(h), "%llu GPU%s", (unsigned long long)w->gpu_counts[g], w->gpu_counts[g] == 1 ? "" : "s");
		fprintf(w->rows, " %-*s", g + 1 < w->ngpu_counts ? FIT_CELL : 0, h);
	}
	fprintf(w->rows, "\n");
	return MP_OK;
}

/* Adds id to the list of devices reaching the fewest GPUs (cut with "..." when long). */
static void note_fewest(mpc_fit_text *w, const char *id)
{
	size_t n = strlen(w->fewest_on);

	if (n + strlen(id) + 8 >= sizeof(w->fewest_on)) {
		if (n + 5 < sizeof(w->fewest_on) && !ends_with(w->fewest_on, ", ..."))
			snprintf(w->fewest_on + n, sizeof(w->fewest_on) - n, ", ...");
		return;
	}
	snprintf(w->fewest_on + n, sizeof(w->fewest_on) - n, "%s%s", n ? ", " : "", id);
}

static mp_status t_device(void *ctx, const mps_fit_device *dev, const mps_fit_row *rows, size_t nrows,
			  uint64_t smallest)
{
	mpc_fit_text *w = ctx;

	w->ndevices++;
	if (smallest) {
		w->nfit++;
		if (w->fewest == 0 || smallest < w->fewest) {
			w->fewest = smallest;
			w->fewest_on[0] = '\0';
		}
		if (smallest == w->fewest)
			note_fewest(w, dev->id);
	}
	fprintf(w->rows, "  %-24s %-9s", dev->id, smallest ? fcount((double)smallest).s : "-");
	for (size_t i = 0; i < nrows; i++) {
		char cell[48], b[32];

		if (strcmp(rows[i].binding_term, "invalid_layout") == 0)
			snprintf(cell, sizeof(cell), "bad layout");
		else {
			mpc_fmt_si(b, sizeof(b), (double)rows[i].total_bytes, "B");
			snprintf(cell, sizeof(cell), "%s %s", rows[i].fits ? "yes" : "no ", b);
		}
		fprintf(w->rows, " %-*s", i + 1 < nrows ? FIT_CELL : 0, cell);
	}
	fprintf(w->rows, "\n");
	return MP_OK;
}

static mp_status t_job_end(void *ctx)
{
	mpc_fit_text *w = ctx;

	if (fclose(w->rows) != 0) {
		w->rows = NULL;
		return MP_ENOMEM;
	}
	w->rows = NULL;
	fprintf(w->f, "\njob %s (%s, %s, %s): ", w->job_id, w->kind, w->model, fparams(w->parameters).s);
	if (w->nfit == 0)
		fprintf(w->f, "DOES NOT FIT on any of the %zu devices at these GPU counts\n", w->ndevices);
	else
		fprintf(w->f, "FITS on %zu of %zu device%s; fewest GPUs: %llu (%s)\n", w->nfit, w->ndevices,
			w->ndevices == 1 ? "" : "s", (unsigned long long)w->fewest, w->fewest_on);
	fputs(w->rows_text ? w->rows_text : "", w->f);
	free(w->rows_text);
	w->rows_text = NULL;
	return MP_OK;
}

const mps_fit_sink *mpc_fit_text_sink(void)
{
	static const mps_fit_sink sink = { t_begin, t_job_begin, t_device, t_job_end };

	return &sink;
}

char *mpc_fit_text_finish(mpc_fit_text *w)
{
	char *text;

	fprintf(w->f, "\nyes/no: fits at that GPU count, with the total per GPU (B = bytes, k M G T = 1e3 1e6 1e9 "
		      "1e12); bad layout: the job's parallel layout cannot use that many GPUs.\n");
	if (fclose(w->f) != 0) {
		w->f = NULL;
		mpc_fit_text_free(w);
		return NULL;
	}
	w->f = NULL;
	text = w->text;
	w->text = NULL;
	mpc_fit_text_free(w);
	return text;
}

/* ----- the roofline table --------------------------------------------------------------------------------- */

char *mpc_roofline_table_text(const mps_roofline_request *rq, const mps_roofline_result *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int w = 9; /* the operation column: as wide as the longest label, never cut */

	if (f == NULL)
		return NULL;
	fprintf(f, "Ridge: %s FLOP/B (%s peak %s / DRAM bandwidth %s)\n", fsig(r->ridge_flops_per_byte).s,
		mp_dtype_name(r->ridge_dtype), fsi(r->peak_flops_per_second, "FLOP/s").s,
		fsi(r->device.hw.memory_bandwidth_bytes_per_second, "B/s").s);
	if (r->have_littles_law)
		fprintf(f, "Little's law: %s in flight to saturate the bandwidth\n",
			fbytes(r->littles_law.bytes_in_flight).s);
	for (size_t i = 0; i < r->nops; i++)
		if ((int)strlen(rq->ops[i].label) > w)
			w = (int)strlen(rq->ops[i].label);
	if (r->nops > 0)
		fprintf(f, "\n%-*s  %-11s %10s %14s %8s %-8s %10s\n", w, "operation", "kind", "FLOP/B", "attainable",
			"of peak", "bound", "floor");
	for (size_t i = 0; i < r->nops; i++) {
		const mp_roof *ro = &r->ops[i].roof;

		fprintf(f, "%-*s  %-11s %10s %14s %8s %-8s %10s\n", w, rq->ops[i].label, rq->ops[i].kind,
			fsig(ro->intensity_flops_per_byte).s, fsi(ro->attainable_flops_per_second, "FLOP/s").s,
			mpc_fmt_percent((char[16]){ 0 }, 16, ro->fraction_of_peak), ro->compute_bound ? "compute" : "memory",
			fsec(ro->time_seconds).s);
	}
	for (int ph = 0; r->have_transformer && ph < 2; ph++) {
		const mp_step *s = ph ? &r->prefill : &r->decode;
		int ow = 18;

		for (size_t i = 0; i < s->nops; i++)
			if ((int)strlen(s->ops[i].name) > ow)
				ow = (int)strlen(s->ops[i].name);
		fprintf(f, "\n%s step: %s, %s tokens/s per sequence, %s tokens/s in total, %s-bound\n",
			ph ? "Prefill" : "Decode", fsec(s->step_seconds).s, fsig(s->tokens_per_second_per_sequence).s,
			fsig(s->tokens_per_second_total).s, s->compute_bound ? "compute" : "memory");
		fprintf(f, "  %-*s %6s %10s %-8s %10s\n", ow, "op", "count", "FLOP/B", "bound", "total");
		for (size_t i = 0; i < s->nops; i++)
			fprintf(f, "  %-*s %6s %10s %-8s %10s\n", ow, s->ops[i].name, fcount((double)s->ops[i].count).s,
				fsig(s->ops[i].roof.intensity_flops_per_byte).s,
				s->ops[i].roof.compute_bound ? "compute" : "memory", fsec(s->ops[i].time_seconds).s);
	}
	if (r->have_transformer) {
		if (r->decode_compute_bound_batch)
			fprintf(f, "\nDecode turns compute-bound at batch %s\n",
				fcount((double)r->decode_compute_bound_batch).s);
		else
			fprintf(f, "\nDecode stays memory-bound at every batch (KV reads grow with it)\n");
		/* what the steps ran with, and where the values the request left out came from */
		fprintf(f, "\nrequest: %s weights (%s), %s KV cache (%s), batch %s (%s), context %s (%s), prompt %s (%s)\n",
			mp_dtype_name(r->step.weight_dtype), r->choice.weight_dtype_from ? r->choice.weight_dtype_from : "request",
			mp_dtype_name(r->step.kv_cache_dtype),
			r->choice.kv_cache_dtype_from ? r->choice.kv_cache_dtype_from : "request",
			fcount((double)r->step.batch_size).s, r->batch_size_from, fcount((double)r->step.context_tokens).s,
			r->context_tokens_from, fcount((double)r->step.prompt_tokens).s, r->prompt_tokens_from);
	}
	if (r->warnings.n > 0) {
		char more[96];

		fprintf(f, "\nwarnings:\n");
		for (size_t i = 0; i < r->warnings.n && i < MPS_MAX_WARNINGS; i++)
			fprintf(f, "  - %s\n", r->warnings.text[i]);
		if (mps_warnings_left_out(&r->warnings, more, sizeof(more)))
			fprintf(f, "  - %s\n", more);
	}
	fprintf(f, "\n");
	return close_text(f, &text);
}
