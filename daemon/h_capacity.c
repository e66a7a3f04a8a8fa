/*
 * h_capacity.c: GET /v1/capacity?model=...&sequence_length=..., for dashboards: for each stored device, how
 * many replicas of the model fit on one GPU, how many sequences of that length one replica can hold at once,
 * and the memory-bandwidth bound on decode speed. ETag-cached by reply.c; ?format=text gives an aligned table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet.h"
#include "plan.h"
#include "query.h"
#include "routes.h"

#define ADD_U64(obj, key, v) cJSON_AddNumberToObject((obj), (key), (double)(v))
#define GIB 1073741824.0

typedef struct cap_ctx {
	const mpd_model *m;
	const mpd_capacity_req *r;
	cJSON *items;
	mp_error *err;
} cap_ctx;

/*
 * Decode speed bound from the roofline engine (planner/step.c, the same one as the inference plan's
 * `performance` block): one decode step of b sequences, each attending over its own sequence_length - 1
 * cached tokens, every operation's floor max(bytes / bandwidth, FLOPs / peak) summed. Weights are read once
 * per step (the embedding table as a lookup), the KV cache once per sequence (it does not batch), MoE layers
 * the experts the batch touches. Returns tokens/s over all b sequences (0 when the step cannot be analysed)
 * and whether compute-bound operations take most of the step.
 * Worked example: Llama-3-8B bf16 on an H200 (4.8e12 B/s), L = 4096, b = 1: about 308 tokens/s (the
 * memory-only formula (weights + KV) / bandwidth gives 289: it also charges the whole embedding table).
 */
static double decode_tokens_per_second(const mpd_model *m, const mp_device *d, const mpd_capacity_req *r,
				       uint64_t b, bool *compute_bound)
{
	mp_step_req sr;
	mp_step step;
	mp_error e;

	memset(&sr, 0, sizeof(sr));
	sr.weight_dtype = r->weight_dtype;
	sr.kv_cache_dtype = r->kv_cache_dtype;
	sr.batch_size = b;
	sr.context_tokens = r->sequence_length > 1 ? r->sequence_length - 1 : 1;
	sr.prompt_tokens = 1;
	sr.allow_beyond_max_position = true; /* the memory plan has already applied the context rule */
	if (mp_step_analyze(&m->arch, d, MP_PHASE_DECODE, &sr, &step, &e) != MP_OK)
		return 0;
	*compute_bound = step.compute_bound;
	return step.tokens_per_second_total;
}

static mp_status cap_device(const mp_store_device *d, void *ctx)
{
	cap_ctx *c = ctx;
	mp_inference_req req = { c->r->weight_dtype, c->r->kv_cache_dtype, 1, c->r->sequence_length, 1, 0 };
	mp_inference_memory mem;
	mp_fit fit;
	cJSON *o;
	uint64_t replicas;
	mp_status st = mp_plan_inference(&c->m->arch, &c->m->params, &req, &d->hw, &mem, &fit, c->err);

	if (st != MP_OK)
		return st;
	o = cJSON_CreateObject();
	if (o == NULL)
		return MP_ENOMEM;
	cJSON_AddItemToArray(c->items, o);
	replicas = fit.capacity_bytes / mem.total_bytes;
	cJSON_AddStringToObject(o, "device", d->id);
	cJSON_AddStringToObject(o, "name", d->name);
	cJSON_AddStringToObject(o, "source", d->source);
	ADD_U64(o, "capacity_bytes", fit.capacity_bytes);
	ADD_U64(o, "weights_bytes", mem.weights_bytes);
	ADD_U64(o, "kv_cache_bytes_per_sequence", mem.kv_cache_bytes);
	ADD_U64(o, "overhead_bytes", mem.overhead_bytes);
	ADD_U64(o, "replica_bytes", mem.total_bytes);
	ADD_U64(o, "replicas_per_gpu", replicas);
	ADD_U64(o, "max_concurrent_sequences", fit.fits ? fit.max_batch_size : 0);
	cJSON_AddNumberToObject(o, "memory_bandwidth_bytes_per_second", d->hw.memory_bandwidth_bytes_per_second);
	if (fit.fits) {
		bool cb1 = false, cbm = false;
		double t1 = decode_tokens_per_second(c->m, &d->hw, c->r, 1, &cb1);
		double tm = decode_tokens_per_second(c->m, &d->hw, c->r, fit.max_batch_size, &cbm);

		if (t1 > 0)
			cJSON_AddNumberToObject(o, "decode_tokens_per_second_per_sequence", t1);
		else
			cJSON_AddNullToObject(o, "decode_tokens_per_second_per_sequence");
		if (tm > 0)
			cJSON_AddNumberToObject(o, "decode_tokens_per_second_at_max_concurrency", tm);
		else
			cJSON_AddNullToObject(o, "decode_tokens_per_second_at_max_concurrency");
		cJSON_AddStringToObject(o, "decode_bound", cbm ? "compute" : "memory");
	} else {
		cJSON_AddNullToObject(o, "decode_tokens_per_second_per_sequence");
		cJSON_AddNullToObject(o, "decode_tokens_per_second_at_max_concurrency");
		cJSON_AddNullToObject(o, "decode_bound");
	}
	return MP_OK;
}

mp_status mpd_capacity(mp_store *store, const mpd_capacity_req *r, cJSON **out, mp_error *err)
{
	mp_store_device_filter f = { r->vendor, r->source, 0 };
	cJSON *model = cJSON_CreateString(r->model), *doc = NULL, *o, *notes;
	char after[MP_STORE_ID_MAX] = "";
	mpd_model m;
	cap_ctx c;
	int more = 1;
	mp_status st;

	*out = NULL;
	if (model == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	st = mpd_resolve_model(store, model, &m, err);
	cJSON_Delete(model);
	if (st != MP_OK) {
		snprintf(err->field, sizeof(err->field), "?model");
		return st;
	}
	doc = cJSON_CreateObject();
	if (doc == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	o = cJSON_AddObjectToObject(doc, "model");
	cJSON_AddStringToObject(o, "id", m.id);
	cJSON_AddStringToObject(o, "model_type", m.arch.model_type);
	ADD_U64(o, "parameters", m.params.total);
	o = cJSON_AddObjectToObject(doc, "request");
	ADD_U64(o, "sequence_length", r->sequence_length);
	cJSON_AddStringToObject(o, "weight_dtype", mp_dtype_name(r->weight_dtype));
	cJSON_AddStringToObject(o, "kv_cache_dtype", mp_dtype_name(r->kv_cache_dtype));
	c.m = &m;
	c.r = r;
	c.err = err;
	c.items = cJSON_AddArrayToObject(doc, "items");
	while (st == MP_OK && more) {
		int n = cJSON_GetArraySize(c.items);

		st = mp_store_device_find(store, &f, after, 1000, cap_device, &c, &more, err);
		if (st == MP_OK && cJSON_GetArraySize(c.items) > n)
			snprintf(after, sizeof(after), "%s",
				 cJSON_GetObjectItem(cJSON_GetArrayItem(c.items, cJSON_GetArraySize(c.items) - 1),
						     "device")->valuestring);
	}
	if (st != MP_OK) {
		cJSON_Delete(doc);
		return st == MP_ENOMEM ? mp_fail(err, st, "", "out of memory") : st;
	}
	notes = cJSON_AddArrayToObject(doc, "notes");
	cJSON_AddItemToArray(notes, cJSON_CreateString(
		"replica_bytes = weights + KV cache of one sequence at sequence_length + activations + CUDA context (the "
		"inference plan at batch 1); replicas_per_gpu = floor(capacity_bytes / replica_bytes), each replica "
		"its own process."));
	cJSON_AddItemToArray(notes, cJSON_CreateString(
		"max_concurrent_sequences: sequences of sequence_length one replica can hold on one GPU (the plan's "
		"max_batch_size)."));
	cJSON_AddItemToArray(notes, cJSON_CreateString(
		"decode tokens/s are roofline bounds from the same engine as POST /v1/roofline and the inference plan's "
		"performance block: each operation's floor max(bytes / bandwidth, FLOPs / peak) summed over one decode "
		"step at full length (weights read once per step, each sequence's KV cache once, MoE experts as touched); "
		"decode_bound says whether memory- or compute-bound operations dominate at max concurrency. Real "
		"decoding is slower (a Llama-3-8B GEMM chain on an H200 reached 0.80-0.84 of the bound)."));
	*out = doc;
	return MP_OK;
}

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

char *mpd_capacity_text(const cJSON *doc)
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
		     cJSON_GetObjectItem(m, "id")->valuestring, num(m, "parameters") / 1e9,
		     cJSON_GetObjectItem(r, "weight_dtype")->valuestring, cJSON_GetObjectItem(r, "kv_cache_dtype")->valuestring,
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
			     cJSON_GetObjectItem(it, "device")->valuestring, num(it, "capacity_bytes") / GIB,
			     num(it, "weights_bytes") / GIB, num(it, "kv_cache_bytes_per_sequence") / GIB,
			     num(it, "replicas_per_gpu"), num(it, "max_concurrent_sequences"), a, b);
		if (n < 0 || (size_t)n >= cap - used)
			break;
		used += (size_t)n;
	}
	return buf;
}

mp_status mpd_h_capacity(mpd_request *req, mpd_reply *rep)
{
	mpd_capacity_req r;
	const char *model = mpd_query(req, "model"), *fmt = mpd_query(req, "format"), *wd = mpd_query(req, "weight_dtype"),
		   *kd = mpd_query(req, "kv_cache_dtype");
	mp_status st;

	memset(&r, 0, sizeof(r));
	if (model == NULL || model[0] == '\0' || strlen(model) >= sizeof(r.model))
		return mp_fail(&rep->err, MP_EINVAL, "?model", "model is required: a stored model id (GET /v1/models)");
	snprintf(r.model, sizeof(r.model), "%s", model);
	if (mpd_query(req, "sequence_length") == NULL)
		return mp_fail(&rep->err, MP_EINVAL, "?sequence_length", "sequence_length is required (tokens per "
			       "sequence, prompt + output)");
	st = mpd_query_u64(req, "sequence_length", 1, MP_MAX_SEQUENCE_LENGTH, 0, &r.sequence_length, &rep->err);
	if (st != MP_OK)
		return st;
	/* the same formats, and the same errors, as POST /v1/plan/inference */
	r.weight_dtype = MP_DTYPE_BF16;
	r.kv_cache_dtype = MP_DTYPE_BF16;
	if (wd && (st = mpd_weight_dtype(wd, "?weight_dtype", &r.weight_dtype, &rep->err)) != MP_OK)
		return st;
	if (kd && (st = mpd_kv_dtype(kd, "?kv_cache_dtype", &r.kv_cache_dtype, &rep->err)) != MP_OK)
		return st;
	if (fmt && strcmp(fmt, "json") != 0 && strcmp(fmt, "text") != 0)
		return mp_fail(&rep->err, MP_EINVAL, "?format", "format must be json or text");
	r.vendor = mpd_query(req, "vendor");
	r.source = mpd_query(req, "source");
	st = mpd_capacity(req->d->store, &r, &rep->json, &rep->err);
	if (st == MP_OK && fmt && strcmp(fmt, "text") == 0) {
		rep->text = mpd_capacity_text(rep->json);
		if (rep->text == NULL)
			return mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
		rep->text_type = "text/plain; charset=utf-8";
	}
	return st;
}
