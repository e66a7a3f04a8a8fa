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
		   *kd = get(ctx, "kv_cache_dtype"), *vendor = get(ctx, "vendor"), *source = get(ctx, "source");
	mp_status st;

	memset(r, 0, sizeof(*r));
	*text = false;
	if (model == NULL || model[0] == '\0' || strlen(model) >= sizeof(r->model))
		return mp_fail(err, MP_EINVAL, "?model", "model is required: a stored model id (GET /v1/models)");
	snprintf(r->model, sizeof(r->model), "%s", model);
	if (get(ctx, "sequence_length") == NULL)
		return mp_fail(err, MP_EINVAL, "?sequence_length",
			       "sequence_length is required (tokens per sequence, prompt + output)");
	st = query_u64(get(ctx, "sequence_length"), "sequence_length", 1, MP_MAX_SEQUENCE_LENGTH, &r->sequence_length,
		       err);
	if (st != MP_OK)
		return st;
	/* the same formats, and the same errors, as POST /v1/plan/inference */
	r->weight_dtype = MP_DTYPE_BF16;
	r->kv_cache_dtype = MP_DTYPE_BF16;
	if (wd && (st = mpc_weight_dtype(wd, "?weight_dtype", &r->weight_dtype, err)) != MP_OK)
		return st;
	if (kd && (st = mpc_kv_dtype(kd, "?kv_cache_dtype", &r->kv_cache_dtype, err)) != MP_OK)
		return st;
	if (fmt && strcmp(fmt, "json") != 0 && strcmp(fmt, "text") != 0)
		return mp_fail(err, MP_EINVAL, "?format", "format must be json or text");
	*text = fmt && strcmp(fmt, "text") == 0;
	if (vendor && strlen(vendor) >= sizeof(r->vendor))
		return mp_fail(err, MP_EINVAL, "?vendor", "vendor must be at most %zu bytes", sizeof(r->vendor) - 1);
	if (source && strlen(source) >= sizeof(r->source))
		return mp_fail(err, MP_EINVAL, "?source", "source must be datasheet, measured or user");
	snprintf(r->vendor, sizeof(r->vendor), "%s", vendor ? vendor : "");
	snprintf(r->source, sizeof(r->source), "%s", source ? source : "");
	/* a page of the fleet: GET /v1/devices's limit and cursor (a store of 23,588 devices answered 10.8 MB at once) */
	r->limit = MPS_CAPACITY_MAX_LIMIT;
	if (get(ctx, "limit") &&
	    (st = query_u64(get(ctx, "limit"), "limit", 1, MPS_CAPACITY_MAX_LIMIT, &r->limit, err)) != MP_OK)
		return st;
	if (get(ctx, "cursor")) {
		if (!mp_valid_id(get(ctx, "cursor")))
			return mp_fail(err, MP_EINVAL, "?cursor", "cursor must be the next_cursor of an earlier answer (a device id)");
		snprintf(r->after, sizeof(r->after), "%s", get(ctx, "cursor"));
	}
	return MP_OK;
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
	mpc_add_u64(o, "capacity_bytes", row->fit.capacity_bytes);
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
	cJSON_AddStringToObject(o, "weight_dtype", mp_dtype_name(r->weight_dtype));
	cJSON_AddStringToObject(o, "kv_cache_dtype", mp_dtype_name(r->kv_cache_dtype));
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
		"max_concurrent_sequences: sequences of sequence_length one replica can hold on one GPU (the plan's "
		"max_batch_size)."));
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

char *mpc_capacity_text(const cJSON *doc)
{
	const cJSON *m = cJSON_GetObjectItem(doc, "model"), *r = cJSON_GetObjectItem(doc, "request"), *it;
	size_t cap = 4096 + 160 * (size_t)cJSON_GetArraySize(cJSON_GetObjectItem(doc, "items")), used = 0;
	char *buf = malloc(cap);
	int n;

	if (buf == NULL)
		return NULL;
	n = snprintf(buf, cap,
		     "capacity of %s (%.3f billion parameters), %s weights, %s KV cache, %.0f tokens per sequence\n"
		     "(GiB = 2^30 bytes; tokens/s = roofline bound on decode at full length)\n\n"
		     "%-26s %12s %11s %11s %9s %9s %10s %11s\n",
		     str(m, "id"), num(m, "parameters") / 1e9, str(r, "weight_dtype"), str(r, "kv_cache_dtype"),
		     num(r, "sequence_length"), "device", "capacity GiB", "weights GiB", "KV/seq GiB", "replicas",
		     "max seqs", "tok/s/seq", "tok/s @max");
	used = n > 0 ? (size_t)n : 0;
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(doc, "items"))
	{
		double t1 = num(it, "decode_tokens_per_second_per_sequence");
		double tm = num(it, "decode_tokens_per_second_at_max_concurrency");
		char a[32], b[32];

		snprintf(a, sizeof(a), t1 < 0 ? "-" : "%.1f", t1);
		snprintf(b, sizeof(b), tm < 0 ? "-" : "%.0f", tm);
		n = snprintf(buf + used, cap - used, "%-26s %12.2f %11.2f %11.3f %9.0f %9.0f %10s %11s\n",
			     str(it, "device"), num(it, "capacity_bytes") / GIB, num(it, "weights_bytes") / GIB,
			     num(it, "kv_cache_bytes_per_sequence") / GIB, num(it, "replicas_per_gpu"),
			     num(it, "max_concurrent_sequences"), a, b);
		if (n < 0 || (size_t)n >= cap - used)
			break;
		used += (size_t)n;
	}
	if (cJSON_IsString(cJSON_GetObjectItem(doc, "next_cursor")) && used < cap)
		snprintf(buf + used, cap - used, "\nmore devices follow: ask again with &cursor=%s\n",
			 cJSON_GetObjectItem(doc, "next_cursor")->valuestring);
	return buf;
}
