/*
 * capacity.c: GET /v1/capacity both ways: the query arguments into a request, the rows into the document
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

struct mpc_capacity_doc {
	const mps_capacity_request *rq;
	cJSON *items;
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
	c->items = cJSON_CreateArray();
	if (c->items == NULL) {
		free(c);
		return NULL;
	}
	return c;
}

void mpc_capacity_doc_free(mpc_capacity_doc *c)
{
	if (c == NULL)
		return;
	cJSON_Delete(c->items);
	free(c);
}

mp_status mpc_capacity_row(void *ctx, const mps_capacity_row *row)
{
	mpc_capacity_doc *c = ctx;
	const mp_store_device *d = row->device;
	cJSON *o = cJSON_CreateObject();

	if (o == NULL || !cJSON_AddItemToArray(c->items, o))
		return MP_ENOMEM;
	cJSON_AddStringToObject(o, "device", d->id);
	cJSON_AddStringToObject(o, "name", d->name);
	cJSON_AddStringToObject(o, "source", d->source);
	cJSON_AddStringToObject(o, "kind", d->kind[0] ? d->kind : "gpu");
	mpc_add_u64(o, "capacity_bytes", row->fit.capacity_bytes);
	cJSON_AddStringToObject(o, "capacity_source", d->hw.usable_memory_bytes ? "usable_memory_bytes" : "memory_bytes");
	if (row->plan) {
		cJSON_AddStringToObject(o, "weight_dtype", mp_dtype_name(row->plan->job.req.weight_dtype));
		cJSON_AddStringToObject(o, "kv_cache_dtype", mp_dtype_name(row->plan->job.req.kv_cache_dtype));
		mpc_add_u64(o, "tensor_parallel_size", row->plan->mem.tensor_parallel_size);
	}
	mpc_add_u64(o, "weights_bytes", row->mem.weights_bytes);
	mpc_add_u64(o, "kv_cache_bytes_per_sequence", row->mem.kv_cache_bytes);
	mpc_add_u64(o, "overhead_bytes", row->mem.overhead_bytes);
	mpc_add_u64(o, "replica_bytes", row->mem.total_bytes);
	mpc_add_u64(o, "replicas_per_gpu", row->replicas_per_gpu);
	mpc_add_u64(o, "max_concurrent_sequences", row->max_concurrent_sequences);
	mpc_add_num(o, "memory_bandwidth_bytes_per_second", d->hw.memory_bandwidth_bytes_per_second);
	if (row->fit.fits) {
		mpc_add_num_or_null(o, "decode_tokens_per_second_per_sequence", row->decode_tokens_per_second_per_sequence);
		mpc_add_num_or_null(o, "decode_tokens_per_second_at_max_concurrency",
				    row->decode_tokens_per_second_at_max_concurrency);
		cJSON_AddStringToObject(o, "decode_bound", row->decode_compute_bound ? "compute" : "memory");
	} else {
		cJSON_AddNullToObject(o, "decode_tokens_per_second_per_sequence");
		cJSON_AddNullToObject(o, "decode_tokens_per_second_at_max_concurrency");
		cJSON_AddNullToObject(o, "decode_bound");
	}
	if (row->plan)
		mpc_add_item(o, "warnings", mpc_warnings_json(&row->plan->warnings));
	return MP_OK;
}

cJSON *mpc_capacity_doc_finish(mpc_capacity_doc *c, const mps_model *m)
{
	const mps_capacity_request *r = c->rq;
	cJSON *doc = cJSON_CreateObject(), *o, *notes;

	if (doc == NULL) {
		mpc_capacity_doc_free(c);
		return NULL;
	}
	o = cJSON_AddObjectToObject(doc, "model");
	cJSON_AddStringToObject(o, "id", m->id);
	cJSON_AddStringToObject(o, "model_type", m->arch.model_type);
	mpc_add_u64(o, "parameters", m->params.total);
	o = cJSON_AddObjectToObject(doc, "request");
	mpc_add_u64(o, "sequence_length", r->sequence_length);
	/* as asked ("auto" resolves per device: each row says what it planned) */
	cJSON_AddStringToObject(o, "weight_dtype",
				r->job.weight_dtype_auto ? "auto" : mp_dtype_name(r->job.req.weight_dtype));
	cJSON_AddStringToObject(o, "kv_cache_dtype",
				r->job.kv_cache_dtype_auto ? "auto" : mp_dtype_name(r->job.req.kv_cache_dtype));
	mpc_add_u64_or_null(o, "tensor_parallel_size", r->job.opts.tensor_parallel_size);
	mpc_add_u64_or_null(o, "num_gpus", r->job.req.num_gpus);
	{
		cJSON *k = cJSON_AddArrayToObject(o, "kinds");
		unsigned mask = r->kinds ? r->kinds : MP_STORE_KIND_GPU;

		if (mask & MP_STORE_KIND_GPU)
			mpc_append(k, cJSON_CreateString("gpu"));
		if (mask & MP_STORE_KIND_CPU)
			mpc_append(k, cJSON_CreateString("cpu"));
		if (mask & MP_STORE_KIND_ACCELERATOR)
			mpc_append(k, cJSON_CreateString("accelerator"));
	}
	mpc_add_item(doc, "items", c->items);
	c->items = NULL;
	mpc_add_str_or_null(doc, "next_cursor", c->next_cursor);
	mpc_capacity_doc_free(c);
	notes = cJSON_AddArrayToObject(doc, "notes");
	mpc_append(notes, cJSON_CreateString(
		"replica_bytes = weights + KV cache of one sequence at sequence_length + activations + CUDA context (the "
		"inference plan at batch 1); replicas_per_gpu = floor(capacity_bytes / replica_bytes), each replica "
		"its own process."));
	mpc_append(notes, cJSON_CreateString(
		"max_concurrent_sequences: sequences of sequence_length one replica can hold (per GPU with "
		"tensor_parallel_size): each row is POST /v1/plan/inference of the same inputs at batch_size 1 on that "
		"device, and this is its fit.max_batch_size."));
	mpc_append(notes, cJSON_CreateString(
		"Only devices of the kinds listed in request.kinds are shown (GPUs unless ?kind= says otherwise: "
		"gpu, cpu, accelerator or all)."));
	mpc_append(notes, cJSON_CreateString(
		"decode tokens/s are roofline bounds from the same engine as POST /v1/roofline and the inference plan's "
		"performance block: each operation's floor max(bytes / bandwidth, FLOPs / peak) summed over one decode "
		"step at full length (weights read once per step, each sequence's KV cache once, MoE experts as touched); "
		"decode_bound says whether memory- or compute-bound operations dominate at max concurrency. Real "
		"decoding is slower (a Llama-3-8B GEMM chain on an H200 reached 0.80-0.84 of the bound)."));
	return doc;
}

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	if (cJSON_IsRaw(v))
		return strtod(v->valuestring, NULL);
	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) ? v->valuestring : "";
}

/* A device fits the model when one replica fits on one GPU. */
static bool row_fits(const cJSON *it)
{
	return num(it, "replicas_per_gpu") >= 1;
}

static double tokens_at_max(const cJSON *it)
{
	return num(it, "decode_tokens_per_second_at_max_concurrency");
}

/* The request's data type for people: "auto" as the rows resolved it when they all agree ("bf16 (auto)"), else
 * "auto (per device)"; a type the request gave, as given. */
static const char *resolved(const cJSON *r, const cJSON *items, const char *key, char *buf, size_t len)
{
	const char *asked = str(r, key), *first = NULL;
	const cJSON *it;

	if (strcmp(asked, "auto") != 0)
		return asked;
	cJSON_ArrayForEach(it, items)
	{
		if (first == NULL)
			first = str(it, key);
		else if (strcmp(first, str(it, key)) != 0)
			return "auto (per device)";
	}
	if (first == NULL)
		return asked;
	snprintf(buf, len, "%s (auto)", first);
	return buf;
}

char *mpc_capacity_text(const cJSON *doc)
{
	const cJSON *m = cJSON_GetObjectItem(doc, "model"), *r = cJSON_GetObjectItem(doc, "request"), *it;
	const cJSON *items = cJSON_GetObjectItem(doc, "items"), *best = NULL;
	char *text = NULL, a[48], b[48], c[48], d[48], e[48], g[48], h[48];
	size_t len = 0, nfit = 0, n = 0;
	int w = 24; /* the device column: as wide as the longest id */
	FILE *f = open_memstream(&text, &len);

	if (f == NULL)
		return NULL;
	cJSON_ArrayForEach(it, items)
	{
		n++;
		nfit += row_fits(it);
		if ((int)strlen(str(it, "device")) > w)
			w = (int)strlen(str(it, "device"));
		/* the device with the most decode throughput at full concurrency */
		if (row_fits(it) && tokens_at_max(it) > 0 && (best == NULL || tokens_at_max(it) > tokens_at_max(best)))
			best = it;
	}
	mpc_fmt_count(a, sizeof(a), num(m, "parameters"));
	mpc_fmt_count(b, sizeof(b), num(r, "sequence_length"));
	fprintf(f, "Capacity of %s (%s parameters), %s weights, %s KV cache, %s tokens per sequence:\n", str(m, "id"), a,
		resolved(r, items, "weight_dtype", e, sizeof(e)), resolved(r, items, "kv_cache_dtype", g, sizeof(g)), b);
	if (n == 0)
		fprintf(f, "no device matches the filters\n");
	else {
		/* every row plans the same layout: a replica on tensor_parallel_size GPUs (from the request or num_gpus) */
		double tp = num(cJSON_GetArrayItem(items, 0), "tensor_parallel_size");
		char on[96];

		if (tp > 1)
			snprintf(on, sizeof(on), "one replica on %.0f GPUs, tensor parallel; bytes per GPU", tp);
		else
			snprintf(on, sizeof(on), "one replica on one GPU");
		fprintf(f, "FITS on %zu of %zu device%s (%s)%s\n", nfit, n, n == 1 ? "" : "s", on,
			nfit < n ? "; - marks those it does not fit" : "");
	}
	if (best)
		fprintf(f, "most decode throughput: %s, %s tokens/s with %s concurrent sequences per replica\n",
			str(best, "device"), mpc_fmt_sig3(c, sizeof(c), tokens_at_max(best)),
			mpc_fmt_count(d, sizeof(d), num(best, "max_concurrent_sequences")));
	fprintf(f, "\n%-*s %20s %20s %20s %9s %9s %11s %11s\n", w, "device", "capacity", "replica (1 seq)", "KV per seq",
		"replicas", "max seqs", "tok/s/seq", "tok/s @max");
	cJSON_ArrayForEach(it, items)
	{
		double t1 = num(it, "decode_tokens_per_second_per_sequence"), tm = tokens_at_max(it);
		bool fits = row_fits(it);

		mpc_fmt_bytes(a, sizeof(a), num(it, "capacity_bytes"));
		mpc_fmt_bytes(b, sizeof(b), num(it, "replica_bytes"));
		mpc_fmt_bytes(c, sizeof(c), num(it, "kv_cache_bytes_per_sequence"));
		snprintf(d, sizeof(d), "-");
		snprintf(e, sizeof(e), "-");
		snprintf(g, sizeof(g), "-");
		snprintf(h, sizeof(h), "-");
		if (t1 > 0)
			mpc_fmt_sig3(d, sizeof(d), t1);
		if (tm > 0)
			mpc_fmt_sig3(e, sizeof(e), tm);
		if (fits) {
			mpc_fmt_count(g, sizeof(g), num(it, "replicas_per_gpu"));
			mpc_fmt_count(h, sizeof(h), num(it, "max_concurrent_sequences"));
		}
		fprintf(f, "%-*s %20s %20s %20s %9s %9s %11s %11s\n", w, str(it, "device"), a, b, c, g, h, d, e);
	}
	fprintf(f, "\nreplica: weights + the KV cache of one sequence + activations + CUDA context; tokens/s: roofline "
		   "bounds on decode at full length (real decoding is slower). GB = 1e9 bytes, GiB = 2^30 bytes.\n");
	if (cJSON_IsString(cJSON_GetObjectItem(doc, "next_cursor")))
		fprintf(f, "\nmore devices follow: ask again with &cursor=%s\n",
			cJSON_GetObjectItem(doc, "next_cursor")->valuestring);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}
