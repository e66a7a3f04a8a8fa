/*
 * mpc_capacity.c: GET /v1/capacity both ways: the query arguments into a request, the rows into the document
 * dashboards poll, and the same document as an aligned table for people (GiB = 2^30 bytes).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

#define GIB 1073741824.0

/* ?name as an integer in [min, max]. Errors: MP_EINVAL naming "?name". */
static mp_status query_u64(const char *v, const char *name, uint64_t min, uint64_t max, uint64_t *out, mp_error *err)
{
	char *end = NULL;
	unsigned long long x;
	char field[64];

	snprintf(field, sizeof(field), "?%s", name);
	errno = 0;
	x = v && *v >= '0' && *v <= '9' ? strtoull(v, &end, 10) : 0;
	if (v == NULL || end == NULL || end == v || *end || errno || x < min || x > max)
		return mp_fail(err, MP_EINVAL, field, "%s must be an integer between %llu and %llu", name,
			       (unsigned long long)min, (unsigned long long)max);
	*out = x;
	return MP_OK;
}

mp_status mpc_capacity_decode(mpc_query_fn get, void *ctx, mps_capacity_request *r, bool *text, mp_error *err)
{
	const char *model = get(ctx, "model"), *fmt = get(ctx, "format"), *wd = get(ctx, "weight_dtype"),
		   *kd = get(ctx, "kv_cache_dtype"), *vendor = get(ctx, "vendor"), *source = get(ctx, "source"),
		   *kind = get(ctx, "kind");
	mps_inference_job *j = &r->job;
	mp_problems p = MP_PROBLEMS_INIT;

	memset(r, 0, sizeof(*r));
	*text = false;
	/* the plan body's defaults and readers, so each row is the plan of the same inputs */
	mpc_inference_job_init(j);
	j->req.batch_size = 1;
	/* the planner names a problem by the query argument it came from ("?tensor_parallel_size") */
	snprintf(j->pointer, sizeof(j->pointer), "?");
	if (model == NULL || model[0] == '\0' || strlen(model) >= 256) {
		mp_problems_note(&p,
				 mp_fail(err, MP_EINVAL, "?model",
					 "model is required: a stored model id (GET /v1/models) or its Hugging Face repo id"),
				 err);
	} else {
		cJSON *v = cJSON_CreateString(model);

		if (v == NULL)
			return mp_fail(err, MP_ENOMEM, "", "out of memory");
		mp_problems_note(&p, mpc_model_ref_decode(v, "?model", true, &j->model, err), err);
		cJSON_Delete(v);
		snprintf(r->model, sizeof(r->model), "%s", j->model.id);
	}
	if (get(ctx, "sequence_length") == NULL)
		mp_problems_note(&p,
				 mp_fail(err, MP_EINVAL, "?sequence_length",
					 "sequence_length is required (tokens per sequence, prompt + output): an integer "
					 "between 1 and %llu",
					 (unsigned long long)MP_MAX_SEQUENCE_LENGTH),
				 err);
	else
		mp_problems_note(&p,
				 query_u64(get(ctx, "sequence_length"), "sequence_length", 1, MP_MAX_SEQUENCE_LENGTH,
					   &r->sequence_length, err),
				 err);
	j->req.sequence_length = r->sequence_length;
	if (get(ctx, "tensor_parallel_size"))
		mp_problems_note(&p,
				 query_u64(get(ctx, "tensor_parallel_size"), "tensor_parallel_size", 1, MP_MAX_GPUS,
					   &j->opts.tensor_parallel_size, err),
				 err);
	if (get(ctx, "num_gpus"))
		mp_problems_note(&p, query_u64(get(ctx, "num_gpus"), "num_gpus", 1, MP_MAX_GPUS, &j->req.num_gpus, err),
				 err);
	/* the same formats, aliases and "auto", and the same errors, as POST /v1/plan/inference */
	mp_problems_note(&p, mpc_inference_dtypes(wd, kd, "?weight_dtype", "?kv_cache_dtype", j, err), err);
	if (fmt && strcmp(fmt, "json") != 0 && strcmp(fmt, "text") != 0)
		mp_problems_note(&p, mp_fail(err, MP_EINVAL, "?format", "format must be json or text (text: the answer for people)"), err);
	*text = fmt && strcmp(fmt, "text") == 0;
	if (vendor && strlen(vendor) >= sizeof(r->vendor))
		mp_problems_note(&p,
				 mp_fail(err, MP_EINVAL, "?vendor", "vendor must be at most %zu bytes",
					 sizeof(r->vendor) - 1),
				 err);
	if (source && (strlen(source) >= sizeof(r->source) ||
		       (strcmp(source, "datasheet") && strcmp(source, "measured") && strcmp(source, "user"))))
		mp_problems_note(&p, mp_fail(err, MP_EINVAL, "?source", "source must be datasheet, measured or user"), err);
	if (kind)
		mp_problems_note(&p, mpc_kinds(kind, "?kind", &r->kinds, err), err);
	snprintf(r->vendor, sizeof(r->vendor), "%s", vendor && strlen(vendor) < sizeof(r->vendor) ? vendor : "");
	snprintf(r->source, sizeof(r->source), "%s", source && strlen(source) < sizeof(r->source) ? source : "");
	/* a page of the fleet: GET /v1/devices's limit and cursor (a store of 23,588 devices answered 10.8 MB at once) */
	r->limit = MPS_CAPACITY_MAX_LIMIT;
	if (get(ctx, "limit"))
		mp_problems_note(&p, query_u64(get(ctx, "limit"), "limit", 1, MPS_CAPACITY_MAX_LIMIT, &r->limit, err), err);
	if (get(ctx, "cursor")) {
		if (!mp_valid_id(get(ctx, "cursor")))
			mp_problems_note(&p,
					 mp_fail(err, MP_EINVAL, "?cursor",
						 "cursor must be the next_cursor of an earlier answer (a device id)"),
					 err);
		else
			snprintf(r->after, sizeof(r->after), "%s", get(ctx, "cursor"));
	}
	return mp_problems_end(&p, err);
}

/* What the text for people shows of a row (read from the row's structs as it comes). */
typedef struct capacity_line {
	char device[MP_STORE_ID_MAX];
	const char *weight_dtype, *kv_cache_dtype;	/* static names; NULL without a plan */
	uint64_t tensor_parallel_size;
	uint64_t capacity_bytes, replica_bytes, kv_cache_bytes_per_sequence, replicas_per_gpu, max_concurrent_sequences;
	double tokens_per_sequence, tokens_at_max;	/* 0 = unknown */
} capacity_line;

struct mpc_capacity_doc {
	const mps_capacity_request *rq;
	mpc_out rows;				/* the items array, written row by row */
	capacity_line *lines;
	size_t nlines, caplines;
	bool failed;				/* out of memory on the way: the answer would be incomplete */
	mps_warnings answer;			/* the answer's own warnings (the rows' latest answer_warnings) */
	char next_cursor[MP_STORE_ID_MAX];	/* set by the caller before finishing ("" = the last page) */
};

char *mpc_capacity_doc_cursor(mpc_capacity_doc *c)
{
	return c->next_cursor;
}

mpc_capacity_doc *mpc_capacity_doc_new(const mps_capacity_request *rq)
{
	mpc_capacity_doc *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->rq = rq;
	mpc_out_init(&c->rows);
	mpc_w_arr(&c->rows, NULL);
	return c;
}

void mpc_capacity_doc_free(mpc_capacity_doc *c)
{
	if (c == NULL)
		return;
	mpc_out_free(&c->rows);
	free(c->lines);
	free(c);
}

static void row_write(mpc_out *w, const mps_capacity_row *row)
{
	const mp_store_device *d = row->device;

	mpc_w_obj(w, NULL);
	mpc_w_str(w, "device", d->id);
	mpc_w_str(w, "name", d->name);
	mpc_w_str(w, "source", d->source);
	mpc_w_str(w, "kind", d->kind[0] ? d->kind : "gpu");
	mpc_w_u64(w, "capacity_bytes", row->fit.capacity_bytes);
	mpc_w_lit(w, "capacity_source", d->hw.usable_memory_bytes ? "usable_memory_bytes" : "memory_bytes");
	if (row->plan) {
		mpc_w_lit(w, "weight_dtype", mp_dtype_name(row->plan->job.req.weight_dtype));
		mpc_w_lit(w, "kv_cache_dtype", mp_dtype_name(row->plan->job.req.kv_cache_dtype));
		mpc_w_u64(w, "tensor_parallel_size", row->plan->mem.tensor_parallel_size);
		/* the prefill chunk the row's activations are of, and whose it is (the answer's warnings say it once) */
		mpc_w_u64_or_null(w, "max_num_batched_tokens", row->plan->prefill.max_num_batched_tokens);
		mpc_w_str(w, "max_num_batched_tokens_source",
			  row->plan->opts.attention == MP_ATTENTION_NONE ? "none"
			  : row->plan->prefill.defaulted                 ? "engine_default"
									 : "request");
	}
	mpc_w_u64(w, "weights_bytes", row->mem.weights_bytes);
	mpc_w_u64(w, "kv_cache_bytes_per_sequence", row->mem.kv_cache_bytes);
	mpc_w_u64(w, "overhead_bytes", row->mem.overhead_bytes);
	mpc_w_u64(w, "replica_bytes", row->mem.total_bytes);
	mpc_w_u64(w, "replicas_per_gpu", row->replicas_per_gpu);
	mpc_w_u64(w, "max_concurrent_sequences", row->max_concurrent_sequences);
	mpc_w_num(w, "memory_bandwidth_bytes_per_second", d->hw.memory_bandwidth_bytes_per_second);
	if (row->fit.fits) {
		mpc_w_num_or_null(w, "decode_tokens_per_second_per_sequence", row->decode_tokens_per_second_per_sequence);
		mpc_w_num_or_null(w, "decode_tokens_per_second_at_max_concurrency",
				  row->decode_tokens_per_second_at_max_concurrency);
		mpc_w_lit(w, "decode_bound", row->decode_compute_bound ? "compute" : "memory");
	} else {
		mpc_w_null(w, "decode_tokens_per_second_per_sequence");
		mpc_w_null(w, "decode_tokens_per_second_at_max_concurrency");
		mpc_w_null(w, "decode_bound");
	}
	if (row->plan)
		mpc_warnings_write(w, &row->plan->warnings);
	mpc_w_end(w);
}

mp_status mpc_capacity_row(void *ctx, const mps_capacity_row *row)
{
	mpc_capacity_doc *c = ctx;
	capacity_line *l;

	if (row->answer_warnings && row->answer_warnings->n != c->answer.n)
		c->answer = *row->answer_warnings;
	if (row->device == NULL) /* the answer's warnings alone (a device left out) */
		return MP_OK;
	row_write(&c->rows, row);
	if (c->nlines == c->caplines) {
		size_t cap = c->caplines ? 2 * c->caplines : 64;
		capacity_line *p = realloc(c->lines, cap * sizeof(*p));

		if (p == NULL)
			return MP_ENOMEM;
		c->lines = p;
		c->caplines = cap;
	}
	l = &c->lines[c->nlines++];
	memset(l, 0, sizeof(*l));
	snprintf(l->device, sizeof(l->device), "%s", row->device->id);
	if (row->plan) {
		l->weight_dtype = mp_dtype_name(row->plan->job.req.weight_dtype);
		l->kv_cache_dtype = mp_dtype_name(row->plan->job.req.kv_cache_dtype);
		l->tensor_parallel_size = row->plan->mem.tensor_parallel_size;
	}
	l->capacity_bytes = row->fit.capacity_bytes;
	l->replica_bytes = row->mem.total_bytes;
	l->kv_cache_bytes_per_sequence = row->mem.kv_cache_bytes;
	l->replicas_per_gpu = row->replicas_per_gpu;
	l->max_concurrent_sequences = row->max_concurrent_sequences;
	if (row->fit.fits) {
		l->tokens_per_sequence = row->decode_tokens_per_second_per_sequence;
		l->tokens_at_max = row->decode_tokens_per_second_at_max_concurrency;
	}
	return c->rows.failed ? MP_ENOMEM : MP_OK;
}

char *mpc_capacity_json(mpc_capacity_doc *c, const mps_model *m, size_t *len)
{
	const mps_capacity_request *r = c->rq;
	unsigned mask = r->kinds ? r->kinds : MP_STORE_KIND_GPU;
	size_t nrows = 0;
	char *rows;
	mpc_out w;

	mpc_w_end(&c->rows);
	rows = mpc_out_finish(&c->rows, &nrows);
	if (rows == NULL)
		return NULL;
	mpc_out_init(&w);
	mpc_w_obj(&w, NULL);
	mpc_w_obj(&w, "model");
	mpc_w_str(&w, "id", m->id);
	mpc_w_str(&w, "model_type", m->arch.model_type);
	mpc_w_u64(&w, "parameters", m->params.total);
	mpc_w_end(&w);
	mpc_w_obj(&w, "request");
	mpc_w_u64(&w, "sequence_length", r->sequence_length);
	/* as asked ("auto" resolves per device: each row says what it planned) */
	mpc_w_lit(&w, "weight_dtype", r->job.weight_dtype_auto ? "auto" : mp_dtype_name(r->job.req.weight_dtype));
	mpc_w_lit(&w, "kv_cache_dtype", r->job.kv_cache_dtype_auto ? "auto" : mp_dtype_name(r->job.req.kv_cache_dtype));
	mpc_w_u64_or_null(&w, "tensor_parallel_size", r->job.opts.tensor_parallel_size);
	mpc_w_u64_or_null(&w, "num_gpus", r->job.req.num_gpus);
	mpc_w_arr(&w, "kinds");
	if (mask & MP_STORE_KIND_GPU)
		mpc_w_lit(&w, NULL, "gpu");
	if (mask & MP_STORE_KIND_CPU)
		mpc_w_lit(&w, NULL, "cpu");
	if (mask & MP_STORE_KIND_ACCELERATOR)
		mpc_w_lit(&w, NULL, "accelerator");
	mpc_w_end(&w);
	mpc_w_end(&w);
	mpc_w_raw(&w, "items", rows, nrows);
	free(rows);
	mpc_w_str_or_null(&w, "next_cursor", c->next_cursor);
	mpc_warnings_write(&w, &c->answer);
	mpc_w_arr(&w, "notes");
	mpc_w_lit(&w, NULL,
		  "replica_bytes = weights + KV cache of one sequence at sequence_length + activations + CUDA context (the "
		  "inference plan at batch 1); replicas_per_gpu = floor(capacity_bytes / replica_bytes), each replica "
		  "its own process.");
	mpc_w_lit(&w, NULL,
		  "max_concurrent_sequences: sequences of sequence_length one replica can hold (per GPU with "
		  "tensor_parallel_size): each row is POST /v1/plan/inference of the same inputs at batch_size 1 on that "
		  "device, and this is its fit.max_batch_size.");
	mpc_w_lit(&w, NULL, MPC_PREFILL_NOTE);
	mpc_w_lit(&w, NULL,
		  "Only devices of the kinds listed in request.kinds are shown (GPUs unless ?kind= says otherwise: "
		  "gpu, cpu, accelerator or all).");
	mpc_w_lit(&w, NULL,
		  "decode tokens/s are roofline bounds from the same engine as POST /v1/roofline and the inference plan's "
		  "performance block: each operation's floor max(bytes / bandwidth, FLOPs / peak) summed over one decode "
		  "step at full length (weights read once per step, each sequence's KV cache once, MoE experts as touched); "
		  "decode_bound says whether memory- or compute-bound operations dominate at max concurrency. Real "
		  "decoding is slower (a Llama-3-8B GEMM chain on an H200 reached 0.80-0.84 of the bound).");
	mpc_w_end(&w);
	mpc_w_end(&w);
	return mpc_out_finish(&w, len);
}

/* A device fits the model when one replica fits on one GPU. */
static bool line_fits(const capacity_line *l)
{
	return l->replicas_per_gpu >= 1;
}

/* The request's data type for people: "auto" as the rows resolved it when they all agree ("bf16 (auto)"), else
 * "auto (per device)"; a type the request gave, as given. */
static const char *resolved(bool is_auto, mp_dtype asked, const mpc_capacity_doc *c, bool kv, char *buf, size_t len)
{
	const char *first = NULL;

	if (!is_auto)
		return mp_dtype_name(asked);
	for (size_t i = 0; i < c->nlines; i++) {
		const char *t = kv ? c->lines[i].kv_cache_dtype : c->lines[i].weight_dtype;

		if (first == NULL)
			first = t ? t : "";
		else if (strcmp(first, t ? t : "") != 0)
			return "auto (per device)";
	}
	if (first == NULL)
		return "auto";
	snprintf(buf, len, "%s (auto)", first);
	return buf;
}

char *mpc_capacity_text(const mpc_capacity_doc *c, const mps_model *m)
{
	const mps_capacity_request *r = c->rq;
	const capacity_line *best = NULL;
	char *text = NULL, a[48], b[48], cc[48], d[48], e[48], g[48], h[48];
	size_t len = 0, nfit = 0, n = c->nlines;
	int w = 24; /* the device column: as wide as the longest id */
	FILE *f = open_memstream(&text, &len);

	if (f == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const capacity_line *l = &c->lines[i];

		nfit += line_fits(l);
		if ((int)strlen(l->device) > w)
			w = (int)strlen(l->device);
		/* the device with the most decode throughput at full concurrency */
		if (line_fits(l) && l->tokens_at_max > 0 && (best == NULL || l->tokens_at_max > best->tokens_at_max))
			best = l;
	}
	mpc_fmt_count(a, sizeof(a), (double)m->params.total);
	mpc_fmt_count(b, sizeof(b), (double)r->sequence_length);
	fprintf(f, "Capacity of %s (%s parameters), %s weights, %s KV cache, %s tokens per sequence:\n", m->id, a,
		resolved(r->job.weight_dtype_auto, r->job.req.weight_dtype, c, false, e, sizeof(e)),
		resolved(r->job.kv_cache_dtype_auto, r->job.req.kv_cache_dtype, c, true, g, sizeof(g)), b);
	if (n == 0)
		fprintf(f, "no device matches the filters\n");
	else {
		/* every row plans the same layout: a replica on tensor_parallel_size GPUs (from the request or num_gpus) */
		uint64_t tp = c->lines[0].tensor_parallel_size;
		char on[96];

		if (tp > 1)
			snprintf(on, sizeof(on), "one replica on %llu GPUs, tensor parallel; bytes per GPU",
				 (unsigned long long)tp);
		else
			snprintf(on, sizeof(on), "one replica on one GPU");
		fprintf(f, "FITS on %zu of %zu device%s (%s)%s\n", nfit, n, n == 1 ? "" : "s", on,
			nfit < n ? "; - marks those it does not fit" : "");
	}
	if (best)
		fprintf(f, "most decode throughput: %s, %s tokens/s with %s concurrent sequences per replica\n", best->device,
			mpc_fmt_sig3(cc, sizeof(cc), best->tokens_at_max),
			mpc_fmt_count(d, sizeof(d), (double)best->max_concurrent_sequences));
	fprintf(f, "\n%-*s %20s %20s %20s %9s %9s %11s %11s\n", w, "device", "capacity", "replica (1 seq)", "KV per seq",
		"replicas", "max seqs", "tok/s/seq", "tok/s @max");
	for (size_t i = 0; i < n; i++) {
		const capacity_line *l = &c->lines[i];

		mpc_fmt_bytes(a, sizeof(a), (double)l->capacity_bytes);
		mpc_fmt_bytes(b, sizeof(b), (double)l->replica_bytes);
		mpc_fmt_bytes(cc, sizeof(cc), (double)l->kv_cache_bytes_per_sequence);
		snprintf(d, sizeof(d), "-");
		snprintf(e, sizeof(e), "-");
		snprintf(g, sizeof(g), "-");
		snprintf(h, sizeof(h), "-");
		if (l->tokens_per_sequence > 0)
			mpc_fmt_sig3(d, sizeof(d), l->tokens_per_sequence);
		if (l->tokens_at_max > 0)
			mpc_fmt_sig3(e, sizeof(e), l->tokens_at_max);
		if (line_fits(l)) {
			mpc_fmt_count(g, sizeof(g), (double)l->replicas_per_gpu);
			mpc_fmt_count(h, sizeof(h), (double)l->max_concurrent_sequences);
		}
		fprintf(f, "%-*s %20s %20s %20s %9s %9s %11s %11s\n", w, l->device, a, b, cc, g, h, d, e);
	}
	fprintf(f, "\nreplica: weights + the KV cache of one sequence + activations + CUDA context; tokens/s: roofline "
		   "bounds on decode at full length (real decoding is slower). GB = 1e9 bytes, GiB = 2^30 bytes.\n");
	for (size_t i = 0; i < c->answer.n && i < MPS_MAX_WARNINGS; i++)
		fprintf(f, "%s- %s\n", i ? "" : "\nwarnings:\n", c->answer.text[i]);
	if (c->next_cursor[0])
		fprintf(f, "\nmore devices follow: ask again with &cursor=%s\n", c->next_cursor);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}
