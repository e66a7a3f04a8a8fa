/*
 * mpc_text.c: answers as text for people, the verdict first, rendered from the result structs as the JSON answer is:
 * plans (the fit, the binding term, the limits, then the memory terms as a table; with --verbose every member of
 * the JSON answer, whatever its name, by the unit its name ends in: mpc_doc_text), the fit batch as a table of
 * devices x GPU counts per job, and the roofline table. Figures go through mpc_human.c (GB = 1e9 and GiB = 2^30,
 * labelled); prints into heap strings (open_memstream).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "mpc_tables.h"

/* ----- reading documents ---------------------------------------------------------------------------------- */

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* A number member, whether cJSON holds it as a number or as the exact digits mpc_json.h wrote. */
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

/* A plan as the text shows it, filled from the inference or the training plan's structs (plan_of_inference,
 * plan_of_training): the one place the text learns where each figure lives. */
typedef struct mem_term {
	const char *key;		/* the memory block's member ("weights_bytes"): how a binding term names it */
	const char *label;		/* for the table, NULL: not a row of it */
	uint64_t bytes;
	bool known;			/* false: null in the answer (training activations without the architecture) */
} mem_term;

#define PLAN_TERMS 10

typedef struct plan_view {
	bool training;
	const mps_model *model;
	/* fit, with a device */
	bool have_fit;
	bool host;			/* the device is a CPU: host memory, no GPU counts */
	const char *device;
	const mp_fit *fit;
	uint64_t min_gpus;		/* 0: none */
	const char *capacity_source;
	/* memory */
	mem_term terms[PLAN_TERMS];
	size_t nterms;
	uint64_t total_bytes;
	const char *peak_phase;		/* training */
	/* the request as planned */
	uint64_t sequence_length, batch_size;
	/* inference with a device */
	const mps_performance *perf;
	/* inference naming an engine */
	const mps_engine_block *engine;
	const mps_inference_plan *iplan;	/* its plan (llama.cpp's and Ollama's placement) */
	const mps_warnings *warnings;
} plan_view;

static void add_term(plan_view *v, const char *key, const char *label, uint64_t bytes, bool known)
{
	if (v->nterms < PLAN_TERMS)
		v->terms[v->nterms++] = (mem_term){ key, label, bytes, known };
}

static const char *capacity_source_of(const mp_store_device *d)
{
	return d->hw.usable_memory_bytes ? "usable_memory_bytes" : "memory_bytes";
}

static void plan_of_inference(const mps_inference_plan *p, plan_view *v)
{
	const mp_inference_memory *m = &p->mem;

	memset(v, 0, sizeof(*v));
	v->model = &p->model;
	v->have_fit = p->have_device;
	v->host = p->have_device && p->device.hw.host_memory;
	v->device = mps_device_label(&p->device);
	v->fit = &p->fit;
	v->min_gpus = p->fit.min_gpus;
	v->capacity_source = capacity_source_of(&p->device);
	/* the memory block's members, the table's in the order people read them */
	add_term(v, "weights_bytes", "weights", m->weights_bytes, true);
	add_term(v, "kv_cache_bytes", "KV cache", m->kv_cache_bytes, true);
	add_term(v, "activations_bytes", "activations", m->activations_bytes, true);
	add_term(v, "overhead_bytes", "overhead", m->overhead_bytes, true);
	add_term(v, "kv_cache_bytes_per_token", NULL, m->kv_cache_bytes_per_token, true);
	add_term(v, "logits_bytes", NULL, m->workspace.logits_bytes, true);
	add_term(v, "kv_plus_logits_bytes", NULL, m->kv_cache_bytes + m->workspace.logits_bytes, true);
	add_term(v, "prefill_peak_over_start_bytes", NULL, m->kv_cache_bytes + m->activations_bytes, true);
	v->total_bytes = m->total_bytes;
	v->sequence_length = p->job.req.sequence_length;
	v->batch_size = p->job.req.batch_size;
	v->perf = p->have_device ? &p->perf : NULL;
	v->engine = p->have_engine ? &p->engine : NULL;
	v->iplan = p;
	v->warnings = &p->warnings;
}

static void plan_of_training(const mps_training_request *rq, const mps_training_plan *p, plan_view *v)
{
	const mp_training_memory *m = &p->mem;

	memset(v, 0, sizeof(*v));
	v->training = true;
	v->model = &p->model;
	v->have_fit = p->have_device;
	v->host = p->have_device && p->device.hw.host_memory;
	v->device = mps_device_label(&p->device);
	v->fit = &p->fit.fit;
	v->min_gpus = p->fit.min_num_gpus;
	v->capacity_source = capacity_source_of(&p->device);
	add_term(v, "weights_bytes", "weights", m->weights_bytes, true);
	add_term(v, "gradients_bytes", "gradients", m->gradients_bytes, true);
	add_term(v, "master_weights_bytes", "master weights", m->master_weights_bytes, true);
	add_term(v, "optimizer_states_bytes", "optimizer states", m->optimizer_states_bytes, true);
	add_term(v, "activations_bytes", "activations", m->activations_bytes, m->activations_known);
	add_term(v, "logits_bytes", "logits", m->logits_bytes, m->activations_known);
	add_term(v, "overhead_bytes", "overhead", m->overhead_bytes, true);
	add_term(v, "states_bytes", NULL, m->states_bytes, true);
	v->total_bytes = m->total_bytes;
	v->peak_phase = mpc_training_phase_name(m->peak_phase);
	v->sequence_length = rq->job.req.sequence_length;
	v->batch_size = rq->job.req.micro_batch_size;
	v->warnings = &p->warnings;
}

/* A binding term's name for people: the table's label ("kv_cache" is "KV cache"), else spaces for underscores. */
static void term_label(const char *name, char *out, size_t len)
{
	static const struct {
		const char *name, *label;
	} labels[] = { { "kv_cache", "KV cache" },	     { "master_weights", "master weights" },
		       { "optimizer_states", "optimizer states" } };

	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
		if (strcmp(labels[i].name, name) == 0) {
			snprintf(out, len, "%s", labels[i].label);
			return;
		}
	snprintf(out, len, "%s", name);
	for (char *p = out; *p; p++)
		if (*p == '_')
			*p = ' ';
}

/* The memory term a binding term names ("kv_cache": kv_cache_bytes), or NULL. */
static const mem_term *term_named(const plan_view *v, const char *name)
{
	char key[80];

	snprintf(key, sizeof(key), "%s_bytes", name);
	for (size_t i = 0; i < v->nterms; i++)
		if (strcmp(v->terms[i].key, key) == 0)
			return &v->terms[i];
	return NULL;
}

/* The serving engine's launch line and the KV cache it will report, when the plan named an engine. */
static void print_engine(FILE *f, const plan_view *v)
{
	const mps_engine_block *b = v->engine;
	char *cmd, a[48], c[48];

	if (b == NULL || (cmd = v->iplan ? mpc_plan_engine_command(v->iplan) : mpc_engine_command(b)) == NULL)
		return;
	fprintf(f, "engine launch:       %s\n", cmd);
	free(cmd);
	if (v->iplan && v->iplan->llama) {
		const mps_llamacpp_block *k = v->iplan->llama;
		char g[48], h[48], t[48];

		fprintf(f, "llama.cpp places:    %u of %u layers on the GPU%s (-ngl %d, %s); host buffers %s\n",
			k->plan.gpu_layers, k->params.n_layer + 1, k->params.n_devices > 1 ? "s" : "", k->params.n_gpu_layers,
			k->gpu_layers_from, mpc_fmt_bytes(h, sizeof(h), (double)k->host_bytes));
		for (uint32_t d = 1; d <= k->params.n_devices && k->have_device; d++)
			fprintf(f, "  GPU %u:             %s of a %s budget%s\n", d - 1,
				mpc_fmt_bytes(g, sizeof(g), (double)k->plan.total_bytes[d]),
				mpc_fmt_bytes(t, sizeof(t), (double)k->budget_bytes),
				k->plan.total_bytes[d] <= k->budget_bytes ? "" : " (over)");
		if (k->have_device)
			fprintf(f, "  largest -ngl %d; largest -c at this -ngl %u\n", k->max_gpu_layers, k->max_context);
		if (k->speed.decode.known)
			fprintf(f, "  decode at most %s tokens/s per sequence\n",
				mpc_fmt_sig3(g, sizeof(g), k->speed.decode_tokens_per_second_per_sequence));
		if (k->engine == MP_ENGINE_OLLAMA)
			fprintf(f, "  Ollama options:    num_ctx %u, num_gpu %d, num_batch %u\n", k->ollama.num_ctx,
				k->ollama.num_gpu, k->ollama.num_batch);
	}
	/* vLLM prints its KV cache in tokens and the concurrency they allow (its predicted block has both) */
	if (b->have_prediction && b->engine == MP_ENGINE_VLLM)
		fprintf(f, "engine will report:  %s tokens of KV cache, maximum concurrency %sx\n",
			mpc_fmt_count(a, sizeof(a), (double)b->predicted.kv_cache_tokens),
			mpc_fmt_sig3(c, sizeof(c), b->predicted.max_concurrency));
}

static void print_warnings(FILE *f, const mps_warnings *w)
{
	char more[96];

	if (w->n == 0)
		return;
	fprintf(f, "warnings:\n");
	for (size_t i = 0; i < w->n && i < MPS_MAX_WARNINGS; i++)
		fprintf(f, "  - %s\n", w->text[i]);
	if (mps_warnings_left_out(w, more, sizeof(more)))
		fprintf(f, "  - %s\n", more);
}

/* The head line: "Inference plan: llama-3-8b (llama, 8,030,261,248 parameters (8.03 billion)) on h200-sxm-141gb". */
static void print_head(FILE *f, const plan_view *v)
{
	const mps_model *m = v->model;

	fprintf(f, "%s plan: %s (%s, %s)", v->training ? "Training" : "Inference", m->id[0] ? m->id : "inline model",
		m->arch.model_type, fparams((double)m->params.total).s);
	if (v->have_fit)
		fprintf(f, " on %s", v->device);
	fprintf(f, "\n");
}

/* The verdict and the limits: the first lines people read. */
static void print_verdict(FILE *f, const plan_view *v)
{
	const mp_fit *fit = v->fit;
	const char *binding = fit->binding_term ? fit->binding_term : "weights";
	double total = (double)v->total_bytes, budget = (double)fit->budget_bytes, seq = (double)v->sequence_length;
	const mem_term *t;
	char label[64];

	if (!v->have_fit) {
		fprintf(f, "NEEDS %s per GPU (no device given: name one for the fit, the limits and the performance)\n",
			fbytes(total).s);
		return;
	}
	if (fit->fits)
		fprintf(f, "FITS: %s %s of a %s budget; headroom %s\n", fbytes(total).s, v->host ? "in host memory" : "per GPU",
			fbytes(budget).s, fbytes((double)fit->headroom_bytes).s);
	else
		fprintf(f, "DOES NOT FIT: %s %s against a %s budget; %s over\n", fbytes(total).s,
			v->host ? "in host memory" : "per GPU", fbytes(budget).s, fbytes(-(double)fit->headroom_bytes).s);
	if (fit->capacity_bytes != fit->budget_bytes)
		fprintf(f, "  capacity:            %s (%s)\n", fbytes((double)fit->capacity_bytes).s, v->capacity_source);
	term_label(binding, label, sizeof(label));
	t = term_named(v, binding);
	if (t && t->known && total > 0)
		fprintf(f, "  binding term:        %s: %s, %s of the total\n", label, fbytes((double)t->bytes).s,
			mpc_fmt_percent((char[16]){ 0 }, 16, (double)t->bytes / total));
	else
		fprintf(f, "  binding term:        %s\n", label);
	fprintf(f, "  largest %s ", v->training ? "micro-batch:" : "batch:      ");
	if (fit->max_batch_size > 0)
		fprintf(f, "%s sequence%s of %s tokens\n", fcount((double)fit->max_batch_size).s,
			fit->max_batch_size == 1 ? "" : "s", fcount(seq).s);
	else
		fprintf(f, "none fits at %s tokens\n", fcount(seq).s);
	if (fit->max_sequence_length > 0)
		fprintf(f, "  longest sequence:    %s tokens at %s %s%s\n", fcount((double)fit->max_sequence_length).s,
			v->training ? "micro-batch" : "batch", fcount((double)v->batch_size).s,
			fit->max_sequence_length_at_context
				? " (the model's context, max_position_embeddings, not memory; "
				  "allow_beyond_max_position_embeddings lifts it)"
				: "");
	else
		fprintf(f, "  longest sequence:    none fits at %s %s\n", v->training ? "micro-batch" : "batch",
			fcount((double)v->batch_size).s);
	if (!v->host) /* a CPU is one host: no GPU counts */
		fprintf(f, "  smallest GPU count:  %s\n",
			v->min_gpus ? fcount((double)v->min_gpus).s : "none up to the largest layout tried");
}

static void print_performance(FILE *f, const plan_view *v)
{
	const mp_step *dec, *pre;

	if (v->perf == NULL)
		return;
	dec = &v->perf->decode;
	pre = &v->perf->prefill;
	fprintf(f, "  decode:              %s per step, %s tokens/s per sequence, %s tokens/s in total (%s-bound floor)\n",
		fsec(dec->step_seconds).s, fsig(dec->tokens_per_second_per_sequence).s,
		fsig(dec->tokens_per_second_total).s, dec->compute_bound ? "compute" : "memory");
	fprintf(f, "  prefill:             %s for prompts of %s tokens (%s-bound floor)\n", fsec(pre->step_seconds).s,
		fcount((double)v->sequence_length).s, pre->compute_bound ? "compute" : "memory");
}

/* The memory terms as a table: bytes, GB, GiB and (inference, whose terms add up) the share of the total. */
static void print_breakdown(FILE *f, const plan_view *v)
{
	double total = (double)v->total_bytes;

	fprintf(f, "\n%-22s %18s %10s %10s%s\n", v->host ? "host memory" : "memory per GPU", "bytes", "GB", "GiB",
		v->training ? "" : "   share");
	for (size_t i = 0; i < v->nterms; i++) {
		const mem_term *t = &v->terms[i];
		double x = (double)t->bytes;

		if (t->label == NULL || !t->known)
			continue;
		fprintf(f, "  %-20s %18s %10s %10s", t->label, fcount(x).s, fsig(x / 1e9).s, fsig(x / 1073741824.0).s);
		if (!v->training && total > 0)
			fprintf(f, " %7s", mpc_fmt_percent((char[16]){ 0 }, 16, x / total));
		fprintf(f, "\n");
	}
	fprintf(f, "  %-20s %18s %10s %10s%s\n", "total", fcount(total).s, fsig(total / 1e9).s,
		fsig(total / 1073741824.0).s, v->training ? "" : "    100%");
	if (v->training)
		fprintf(f, "  (the peak of the %s phase; the terms do not all coexist)\n", v->peak_phase);
}

/* What follows the breakdown: the hint and, verbose, every member of the JSON answer (doc: its text). */
static char *finish_plan(FILE *f, char **text, const char *hint, char *doc)
{
	fprintf(f, "GB = 1e9 bytes, GiB = 2^30 bytes.%s%s\n", hint ? " " : "", hint ? hint : "");
	if (doc) {
		cJSON *tree = mpc_parse_exact(doc);

		free(doc);
		if (tree == NULL) {
			fclose(f);
			free(*text);
			return NULL;
		}
		fprintf(f, "\nEvery figure of the answer:\n");
		print_doc(f, tree, 1);
		cJSON_Delete(tree);
	}
	return close_text(f, text);
}

char *mpc_inference_plan_text(const mps_inference_request *rq, const mps_inference_plan *p, bool verbose,
			      const char *hint)
{
	const mp_inference_req *r = &p->job.req;
	const mp_inference_opts *o = &p->opts;
	double utilization = o->gpu_memory_utilization > 0 ? o->gpu_memory_utilization : 1.0;
	char *text = NULL, *doc = NULL;
	size_t len = 0;
	plan_view v;
	FILE *f;

	if (verbose && (doc = mpc_inference_plan_print(rq, p, NULL)) == NULL)
		return NULL;
	if ((f = open_memstream(&text, &len)) == NULL) {
		free(doc);
		return NULL;
	}
	plan_of_inference(p, &v);
	print_head(f, &v);
	print_verdict(f, &v);
	print_performance(f, &v);
	print_engine(f, &v);
	print_warnings(f, v.warnings);
	print_breakdown(f, &v);
	/* the request in one line, as it was planned */
	fprintf(f, "\nrequest: %s weights, %s KV cache, batch %s x %s tokens, tensor parallel %s",
		mp_dtype_name(r->weight_dtype), mp_dtype_name(r->kv_cache_dtype), fcount((double)r->batch_size).s,
		fcount((double)r->sequence_length).s, fcount((double)p->mem.tensor_parallel_size).s);
	if (utilization != 1)
		fprintf(f, ", gpu_memory_utilization %s", fsig(utilization).s);
	fprintf(f, "\n");
	return finish_plan(f, &text, hint, doc);
}

char *mpc_training_plan_text(const mps_training_request *rq, const mps_training_plan *p, bool verbose,
			     const char *hint)
{
	const mp_training_req *r = &p->req; /* as planned: its defaults resolved */
	const char *sharding = mpc_training_sharding_name(r->sharding);
	const char *from = p->recompute_from ? p->recompute_from : "request";
	uint64_t gpus = r->num_gpus ? r->num_gpus : 1;
	char *text = NULL, *doc = NULL;
	size_t len = 0;
	plan_view v;
	FILE *f;

	if (verbose && (doc = mpc_training_plan_print(rq, p, NULL)) == NULL)
		return NULL;
	if ((f = open_memstream(&text, &len)) == NULL) {
		free(doc);
		return NULL;
	}
	plan_of_training(rq, p, &v);
	print_head(f, &v);
	print_verdict(f, &v);
	print_warnings(f, v.warnings);
	print_breakdown(f, &v);
	fprintf(f, "\nrequest: %s, %s, micro-batch %s x %s tokens, %s recomputation%s; %s GPU%s (data %s x tensor %s x "
		   "pipeline %s%s%s)\n",
		mpc_training_precision_name(r->precision), mpc_training_optimizer_name(r->optimizer),
		fcount((double)r->micro_batch_size).s, fcount((double)r->sequence_length).s,
		r->recompute == MP_RECOMPUTE_NONE ? "no activation" : mpc_training_recompute_name(r->recompute),
		strcmp(from, "finetune") == 0 ? " (QLoRA's default)" : strcmp(from, "default") == 0 ? " (the default)" : "",
		fcount((double)gpus).s, gpus == 1 ? "" : "s",
		fcount((double)p->mem.data_parallel_size).s,
		fcount((double)(r->tensor_parallel_size ? r->tensor_parallel_size : 1)).s,
		fcount((double)(r->pipeline_parallel_size ? r->pipeline_parallel_size : 1)).s,
		strcmp(sharding, "none") ? ", " : "", strcmp(sharding, "none") ? sharding : "");
	return finish_plan(f, &text, hint, doc);
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
	mps_warnings warnings;	/* the job's, printed under its verdict */
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

static mp_status t_job_begin(void *ctx, const mps_fit_job *job, const mps_model *model, const mps_warnings *warnings)
{
	mpc_fit_text *w = ctx;

	w->warnings = *warnings;
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
			note_fewest(w, dev->id[0] ? dev->id : dev->name);
	}
	fprintf(w->rows, "  %-24s %-9s", dev->id[0] ? dev->id : dev->name, smallest ? fcount((double)smallest).s : "-");
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
	for (size_t i = 0; i < w->warnings.n && i < MPS_MAX_WARNINGS; i++)
		fprintf(w->f, "  warning: %s\n", w->warnings.text[i]);
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
