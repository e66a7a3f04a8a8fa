/*
 * test_hardening.c: the daemon under load and attack (issue 19), each finding reproduced first, in-process on
 * 127.0.0.1 port 0, bounded in time:
 * - POST /v1/fit: a large answer (computed whole since issue 30, sent from its buffer) is byte for byte the answer
 *   the library computes; one small enough is kept by the response cache; heavy requests beyond the bound get
 *   503 with Retry-After; a job no GPU count can plan is a 422; every stored device is fitted past 1,000 of them;
 *   the per-device rebase of a plan equals planning on that device.
 * The HTTP findings (connection limit, slowloris, framing), the database findings (deleted, read-only, full) and
 * PATCH preconditions follow below.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "../codec/codec.h"
#include "../daemon/respcache.h"
#include "../service/service_int.h"
#include "http_util.h"

typedef http_fixture fixture;

/* ----- helpers ------------------------------------------------------------------------------------------ */

typedef struct buf {
	char *p;
	size_t len, cap;
} buf;

static void buf_add(buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		assert_true(n >= 0);
		if (b->p && (size_t)n < b->cap - b->len)
			break;
		b->cap = (b->cap ? b->cap * 2 : 4096) + (size_t)n;
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
	b->len += (size_t)n;
}

/* A fit body: n jobs over stored models (every fifth a training job), the given devices member (or none), and 16
 * GPU counts. */
static char *fit_body(int n, const char *devices)
{
	static const char *const models[] = { "llama-3-8b", "llama-3.1-70b", "qwen2.5-7b", "mixtral-8x7b", "gemma-7b",
					      "qwen2.5-72b-instruct", "mistral-7b-v0.1", "phi-3-mini-4k" };
	buf b = { 0 };

	buf_add(&b, "{\"gpu_counts\":[1,2,3,4,5,6,7,8,10,12,16,24,32,48,64,128],%s%s\"jobs\":[", devices ? devices : "",
		devices ? "," : "");
	for (int i = 0; i < n; i++) {
		const char *m = models[i % 8];

		if (i % 5 == 4)
			buf_add(&b, "%s{\"id\":\"t%d\",\"training\":{\"model\":\"%s\",\"precision\":\"mixed_bf16\","
				    "\"optimizer\":\"adamw\",\"micro_batch_size\":%d,\"sequence_length\":4096}}",
				i ? "," : "", i, m, 1 + i % 3);
		else
			buf_add(&b, "%s{\"id\":\"i%d\",\"inference\":{\"model\":\"%s\",\"weight_dtype\":\"bf16\","
				    "\"kv_cache_dtype\":\"bf16\",\"batch_size\":%d,\"sequence_length\":%d}}",
				i ? "," : "", i, m, 1 << (i % 7), 1024 << (i % 3));
	}
	buf_add(&b, "]}");
	return b.p;
}

/* The fit answer computed whole in process (mps_fit into the writer), as the reference for the streamed one. */
static char *fit_whole(mps_service *svc, const char *body)
{
	cJSON *req = cJSON_Parse(body);
	mps_fit_request rq;
	mpc_fit_writer *w;
	mp_error err;
	char *text;

	assert_non_null(req);
	assert_int_equal(mpc_fit_decode(req, &rq, &err), MP_OK);
	w = mpc_fit_writer_new(&rq);
	if (mps_fit(svc, &rq, mpc_fit_sink(), w, &err) != MP_OK)
		fail_msg("fit: %s: %s", err.field, err.message);
	text = mpc_fit_writer_finish(w);
	mpc_fit_request_free(&rq);
	cJSON_Delete(req);
	return text;
}

/* ----- POST /v1/fit: streamed, bounded ------------------------------------------------------------------- */

/* 60 jobs x 22 stored GPUs (the default fit considers GPUs: the 2 Gaudi presets are accelerators) x 16 GPU counts =
 * 21,120 rows. Issue 19 streamed such an answer while computing it (holding the heavy slot as long as the client
 * read); issue 30 computes it whole first and sends it from its buffer with a Content-Length, byte for byte the
 * same. */
static void test_fit_streamed(void **state)
{
	fixture *f = *state;
	char *body = fit_body(60, NULL), *want = fit_whole(f->d.svc, body), length[32];
	mpd_respcache_stats s0, s1;
	http_resp r;

	http_do(&f->d, "POST", "/v1/fit", body, "application/json", NULL, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.transfer_encoding, ""); /* computed whole: a Content-Length */
	snprintf(length, sizeof(length), "%zu", strlen(want) + 1);
	assert_string_equal(r.content_length, length);
	assert_int_equal(r.len, strlen(want) + 1); /* the library's document and the answer's newline */
	assert_true(memcmp(r.body, want, r.len - 1) == 0 && r.body[r.len - 1] == '\n');
	assert_int_equal((int)cJSON_GetObjectItem(r.json, "pairs")->valuedouble, 60 * 22);
	http_resp_free(&r);
	/* 1.4 MB is within what the cache keeps (an eighth of 32 MiB): the repeat is answered from it, whole */
	mpd_respcache_stats_get(f->d.respcache, &s0);
	http_do(&f->d, "POST", "/v1/fit", body, "application/json", NULL, &r);
	mpd_respcache_stats_get(f->d.respcache, &s1);
	assert_int_equal(r.status, 200);
	assert_true(s1.hits == s0.hits + 1);
	assert_string_equal(r.transfer_encoding, "");
	assert_int_equal(r.len, strlen(want) + 1);
	assert_true(memcmp(r.body, want, r.len - 1) == 0 && r.body[r.len - 1] == '\n');
	http_resp_free(&r);
	free(want);
	free(body);
}

/* Beyond --max-heavy-requests computations in flight, a fit is refused at once: 503, Retry-After, overloaded. A
 * cached answer does not need a slot. */
static void test_fit_heavy_bound(void **state)
{
	fixture *f = *state;
	char *body = fit_body(3, "\"devices\":[\"h100-sxm5-80gb\"]");
	http_resp r;

	atomic_fetch_add(&f->d.heavy_in_flight, f->d.heavy_limit); /* every slot taken */
	http_do(&f->d, "POST", "/v1/fit", body, "application/json", NULL, &r);
	assert_int_equal(r.status, 503);
	assert_string_equal(r.retry_after, "1");
	assert_string_equal(r.content_type, "application/problem+json");
	assert_string_equal(cJSON_GetObjectItem(r.json, "type")->valuestring, "urn:memplan:problem:overloaded");
	assert_non_null(strstr(cJSON_GetObjectItem(r.json, "detail")->valuestring, "--max-heavy-requests"));
	http_resp_free(&r);
	http_do(&f->d, "GET", "/v1/capacity?model=llama-3-8b", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 503);
	http_resp_free(&r);
	atomic_fetch_sub(&f->d.heavy_in_flight, f->d.heavy_limit);
	http_do(&f->d, "POST", "/v1/fit", body, "application/json", NULL, &r);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	/* the same question again while every slot is taken: answered from the cache */
	atomic_fetch_add(&f->d.heavy_in_flight, f->d.heavy_limit);
	http_do(&f->d, "POST", "/v1/fit", body, "application/json", NULL, &r);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	atomic_fetch_sub(&f->d.heavy_in_flight, f->d.heavy_limit);
	assert_int_equal(atomic_load(&f->d.heavy_in_flight), 0); /* every slot given back at completion */
	free(body);
}

/* A job that no GPU count can plan (its context is past the model's) is the job's 422, not rows of invalid layouts;
 * one that some counts can hold keeps its invalid_layout rows. */
static void test_fit_job_errors(void **state)
{
	fixture *f = *state;
	http_resp r;

	http_do(&f->d, "POST", "/v1/fit",
		"{\"devices\":[\"h100-sxm5-80gb\"],\"gpu_counts\":[1,2],\"jobs\":[{\"id\":\"ok\",\"inference\":{\"model\":"
		"\"llama-3-8b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,"
		"\"sequence_length\":4096}},{\"id\":\"long\",\"inference\":{\"model\":\"llama-3-8b\",\"weight_dtype\":"
		"\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,\"sequence_length\":100000}}]}",
		"application/json", NULL, &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "/jobs/1/inference/sequence_length");
	http_resp_free(&r);
	/* tensor parallelism 3 does not divide Llama-3-8B's heads: that row is invalid_layout, the others plan */
	http_do(&f->d, "POST", "/v1/fit",
		"{\"devices\":[\"h100-sxm5-80gb\"],\"gpu_counts\":[1,3],\"jobs\":[{\"id\":\"ok\",\"inference\":{\"model\":"
		"\"llama-3-8b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,"
		"\"sequence_length\":4096}}]}",
		"application/json", NULL, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, "[3,false,0,0,\"invalid_layout\"]"));
	http_resp_free(&r);
}

/* Without a devices list every stored device is fitted, 1,000 or more of them, as long as the pairs stay within
 * the bound; past it the 413 says how to narrow the request. */
static void test_fit_every_stored_device(void **state)
{
	fixture *f = *state;
	mp_store *st = mps_store(f->d.svc);
	mp_error err;
	char *body;
	http_resp r;

	assert_int_equal(mp_store_begin(st, &err), MP_OK);
	for (int i = 0; i < 1100; i++) {
		mp_store_device d;

		memset(&d, 0, sizeof(d));
		snprintf(d.id, sizeof(d.id), "fleet-%04d", i);
		snprintf(d.name, sizeof(d.name), "Fleet GPU %d", i);
		snprintf(d.vendor, sizeof(d.vendor), "NVIDIA");
		snprintf(d.source, sizeof(d.source), "user");
		d.hw.memory_bytes = (UINT64_C(16) + (uint64_t)(i % 8) * 16) << 30;
		d.hw.memory_bandwidth_bytes_per_second = 2e12;
		d.hw.peak_flops_per_second[MP_DTYPE_BF16] = 500e12;
		assert_int_equal(mps_device_put(f->d.svc, &d, "test", "", NULL, &err), MP_OK);
	}
	assert_int_equal(mp_store_commit(st, &err), MP_OK);
	body = "{\"gpu_counts\":[1],\"jobs\":[{\"id\":\"a\",\"inference\":{\"model\":\"llama-3-8b\",\"weight_dtype\":"
	       "\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,\"sequence_length\":4096}}]}";
	http_do(&f->d, "POST", "/v1/fit", body, "application/json", NULL, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal((int)cJSON_GetObjectItem(r.json, "pairs")->valuedouble, 1122); /* 1,100 + the 22 GPU presets */
	http_resp_free(&r);
	body = fit_body(100, NULL); /* 100 x 1,122 = 112,200 pairs, over 100,000 */
	http_do(&f->d, "POST", "/v1/fit", body, "application/json", NULL, &r);
	assert_int_equal(r.status, 413);
	assert_string_equal(http_problem_field(&r), "/devices");
	assert_non_null(strstr(cJSON_GetObjectItem(r.json, "detail")->valuestring, "list the devices"));
	http_resp_free(&r);
	free(body);
}

/* The fit plans each job once per GPU count and rebases it per device (mp_inference_on_device): every row equals
 * the plan endpoint's own verdict for that job on that device at that GPU count, a device with its own CUDA context
 * figure included. */
static void test_fit_rebase_equals_plan(void **state)
{
	fixture *f = *state;
	static const char *const devices[] = { "h100-sxm5-80gb", "a100-sxm4-40gb", "rtx-4090-24gb", "mi300x-192gb" };
	const char *body = "{\"gpu_counts\":[1,2,4,8],\"devices\":[\"h100-sxm5-80gb\",\"a100-sxm4-40gb\",\"rtx-4090-24gb\","
			   "\"mi300x-192gb\",{\"id\":\"ctx\",\"memory_bytes\":85899345920,\"memory_bandwidth_bytes_per_second\":"
			   "2e12,\"peak_flops_per_second\":{\"bf16\":5e14},\"cuda_context_bytes\":1073741824}],\"jobs\":["
			   "{\"id\":\"a\",\"inference\":{\"model\":\"llama-3.1-70b\",\"weight_dtype\":\"fp8_e4m3\","
			   "\"kv_cache_dtype\":\"fp8\",\"batch_size\":8,\"sequence_length\":8192,\"gpu_memory_utilization\":0.9}},"
			   "{\"id\":\"b\",\"inference\":{\"model\":\"mixtral-8x7b\",\"weight_dtype\":\"bf16\","
			   "\"kv_cache_dtype\":\"bf16\",\"batch_size\":4,\"sequence_length\":4096}}]}";
	cJSON *ans, *job;
	http_resp r;
	int checked = 0;

	http_do(&f->d, "POST", "/v1/fit", body, "application/json", NULL, &r);
	assert_int_equal(r.status, 200);
	ans = r.json;
	cJSON_ArrayForEach(job, cJSON_GetObjectItem(ans, "jobs"))
	{
		const char *model = strcmp(cJSON_GetObjectItem(job, "id")->valuestring, "a") == 0 ? "llama-3.1-70b"
												   : "mixtral-8x7b";
		cJSON *dev;
		int di = 0;

		cJSON_ArrayForEach(dev, cJSON_GetObjectItem(job, "devices"))
		{
			cJSON *row;

			cJSON_ArrayForEach(row, cJSON_GetObjectItem(dev, "results"))
			{
				char plan[1024], device[400];
				int g = (int)cJSON_GetArrayItem(row, 0)->valuedouble;
				http_resp p;

				if (strcmp(cJSON_GetArrayItem(row, 4)->valuestring, "invalid_layout") == 0)
					continue;
				if (di < 4)
					snprintf(device, sizeof(device), "\"%s\"", devices[di]);
				else
					snprintf(device, sizeof(device),
						 "{\"memory_bytes\":85899345920,\"memory_bandwidth_bytes_per_second\":2e12,"
						 "\"peak_flops_per_second\":{\"bf16\":5e14},\"cuda_context_bytes\":1073741824}");
				snprintf(plan, sizeof(plan),
					 "{\"model\":\"%s\",\"weight_dtype\":\"%s\",\"kv_cache_dtype\":\"%s\",\"batch_size\":%d,"
					 "\"sequence_length\":%d,%s\"num_gpus\":%d,\"device\":%s}",
					 model, model[0] == 'l' ? "fp8_e4m3" : "bf16", model[0] == 'l' ? "fp8" : "bf16",
					 model[0] == 'l' ? 8 : 4, model[0] == 'l' ? 8192 : 4096,
					 model[0] == 'l' ? "\"gpu_memory_utilization\":0.9," : "", g, device);
				http_do(&f->d, "POST", "/v1/plan/inference", plan, "application/json", NULL, &p);
				assert_int_equal(p.status, 200);
				assert_true(cJSON_GetArrayItem(row, 2)->valuedouble ==
					    cJSON_GetObjectItem(cJSON_GetObjectItem(p.json, "memory"), "total_bytes")->valuedouble);
				assert_true(cJSON_IsTrue(cJSON_GetArrayItem(row, 1)) ==
					    cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(p.json, "fit"), "fits")));
				assert_true(cJSON_GetArrayItem(row, 3)->valuedouble ==
					    cJSON_GetObjectItem(cJSON_GetObjectItem(p.json, "fit"), "headroom_bytes")->valuedouble);
				assert_string_equal(cJSON_GetArrayItem(row, 4)->valuestring,
						    cJSON_GetObjectItem(cJSON_GetObjectItem(p.json, "fit"), "binding_term")->valuestring);
				http_resp_free(&p);
				checked++;
			}
			di++;
		}
	}
	assert_true(checked >= 25);
	http_resp_free(&r);
}

/* Finding 7: GET /v1/capacity pages the fleet (it answered every stored device at once: 23,588 of them in 10.8 MB).
 * Pages of 5 over the 24 presets: each at most 5 items, in id order, next_cursor chaining them to null, together the
 * whole fleet exactly once; a bad cursor is a 422. */
static void test_capacity_pages(void **state)
{
	fixture *f = *state;
	char path[256], cursor[80] = "", last[80] = "";
	int pages = 0, devices = 0;
	http_resp r;

	for (;;) {
		const cJSON *next, *it;

		snprintf(path, sizeof(path), "/v1/capacity?model=llama-3-8b&sequence_length=4096&limit=5%s%s",
			 cursor[0] ? "&cursor=" : "", cursor);
		http_do(&f->d, "GET", path, NULL, NULL, NULL, &r);
		assert_int_equal(r.status, 200);
		assert_true(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "items")) <= 5);
		cJSON_ArrayForEach(it, cJSON_GetObjectItem(r.json, "items"))
		{
			const char *id = cJSON_GetObjectItem(it, "device")->valuestring;

			assert_true(strcmp(id, last) > 0); /* id order, no device twice */
			snprintf(last, sizeof(last), "%s", id);
			devices++;
		}
		pages++;
		next = cJSON_GetObjectItem(r.json, "next_cursor");
		if (cJSON_IsNull(next)) {
			http_resp_free(&r);
			break;
		}
		assert_true(cJSON_IsString(next));
		snprintf(cursor, sizeof(cursor), "%s", next->valuestring);
		http_resp_free(&r);
		assert_true(pages < 10);
	}
	assert_int_equal(devices, 22); /* the GPU presets (capacity lists GPUs unless ?kind says otherwise) */
	assert_int_equal(pages, 5);
	http_do(&f->d, "GET", "/v1/capacity?model=llama-3-8b&sequence_length=4096&cursor=Not%20An%20Id", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "?cursor");
	http_resp_free(&r);
}

/* ----- the database under the daemon ------------------------------------------------------------------------ */

static const char device_body[] = "{\"name\":\"Lab\",\"vendor\":\"ACME\",\"memory_bytes\":25769803776,"
				  "\"memory_bandwidth_bytes_per_second\":1e12,\"peak_flops_per_second\":{\"bf16\":1e14}}";

/*
 * Finding 4: the database file and its -wal/-shm removed while the daemon runs. Before, every PUT still answered
 * 201 into the unlinked file (gone at the next start) and health said ok. Now the write is refused with 503
 * database-unavailable saying why, health says degraded, and reads go on from the open file.
 */
static void test_database_deleted(void **state)
{
	fixture *f = *state;
	static const char *const files[] = { "memplan.db", "memplan.db-wal", "memplan.db-shm" };
	char path[600];
	http_resp r;

	http_do(&f->d, "PUT", "/v1/devices/lab-1", device_body, "application/json", NULL, &r);
	assert_int_equal(r.status, 201);
	http_resp_free(&r);
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", f->dir, files[i]);
		unlink(path);
	}
	http_do(&f->d, "PUT", "/v1/devices/lab-2", device_body, "application/json", NULL, &r);
	assert_int_equal(r.status, 503);
	assert_string_equal(cJSON_GetObjectItem(r.json, "type")->valuestring, "urn:memplan:problem:database-unavailable");
	assert_non_null(strstr(cJSON_GetObjectItem(r.json, "detail")->valuestring, "deleted or replaced"));
	http_resp_free(&r);
	http_do(&f->d, "GET", "/v1/health", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(cJSON_GetObjectItem(r.json, "status")->valuestring, "degraded");
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "database"), "writable")));
	http_resp_free(&r);
	http_do(&f->d, "GET", "/v1/devices/lab-1", NULL, NULL, NULL, &r); /* still readable */
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	http_do(&f->d, "DELETE", "/v1/devices/lab-1", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 503);
	http_resp_free(&r);
}

/* ----- PATCH: one transaction, and If-Match ---------------------------------------------------------------- */

typedef struct patcher {
	fixture *f;
	const char *field;
	double base, step;	/* the i-th patch sets base + i x step (within the field's range) */
	int ok;
} patcher;

static void *patch_loop(void *arg)
{
	patcher *p = arg;

	for (int i = 1; i <= 20; i++) {
		char body[96];
		http_resp r;

		snprintf(body, sizeof(body), "{\"%s\":%.0f}", p->field, p->base + i * p->step);
		http_do(&p->f->d, "PATCH", "/v1/devices/lab-p", body, "application/merge-patch+json", NULL, &r);
		p->ok += r.status == 200;
		http_resp_free(&r);
	}
	return NULL;
}

/* Finding 10: six clients patch six different fields of one device at once, twenty times each: every last value is
 * there at the end (each PATCH reads and writes in one transaction; a lost update would leave an older value). */
static void test_patch_no_lost_update(void **state)
{
	fixture *f = *state;
	static const char *const fields[] = { "tdp_watts", "sm_count", "l2_cache_bytes", "boost_clock_hz",
					      "base_clock_hz", "memory_clock_hz" };
	static const double base[] = { 100, 10, 1e6, 1e9, 1e9, 1e9 }, step[] = { 10, 1, 1e6, 1e6, 1e6, 1e6 };
	patcher p[6];
	pthread_t t[6];
	http_resp r;

	http_do(&f->d, "PUT", "/v1/devices/lab-p", device_body, "application/json", NULL, &r);
	assert_int_equal(r.status, 201);
	http_resp_free(&r);
	for (int i = 0; i < 6; i++) {
		p[i] = (patcher){ f, fields[i], base[i], step[i], 0 };
		assert_int_equal(pthread_create(&t[i], NULL, patch_loop, &p[i]), 0);
	}
	for (int i = 0; i < 6; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(p[i].ok, 20);
	}
	http_do(&f->d, "GET", "/v1/devices/lab-p", NULL, NULL, NULL, &r);
	for (int i = 0; i < 6; i++) {
		const cJSON *v = cJSON_GetObjectItem(r.json, fields[i]);

		if (!cJSON_IsNumber(v) || v->valuedouble != base[i] + 20 * step[i])
			fail_msg("%s is %s after the concurrent patches, want %.0f", fields[i],
				 cJSON_IsNumber(v) ? "another value" : "missing", base[i] + 20 * step[i]);
	}
	http_resp_free(&r);
}

/* The read-modify-write of mps_device_update with a slow change: A reads, holds its copy 300 ms, then writes its
 * field; B starts 100 ms later and writes another field, without waiting for A (no lock is held while a change
 * computes). A's write finds the row changed since it read it, so A reads B's result and changes that: neither
 * field is lost. Read and written blindly in two store calls, one of the two fields would be. */
typedef struct slow_change {
	mps_service *svc;
	bool slow;
	double tdp;		/* A sets tdp_watts */
	uint32_t sm;		/* B sets sm_count */
	mp_status st;
} slow_change;

static mp_status set_field(void *ctx, mp_store_device *d, mp_error *err)
{
	slow_change *c = ctx;

	(void)err;
	if (c->slow) {
		usleep(300 * 1000);
		d->tdp_watts = c->tdp;
	} else {
		d->hw.sm_count = c->sm;
	}
	return MP_OK;
}

static void *update_thread(void *arg)
{
	slow_change *c = arg;
	mp_error err;

	c->st = mps_device_update(c->svc, "lab-t", "test", set_field, c, &err);
	return NULL;
}

static void test_update_is_one_transaction(void **state)
{
	fixture *f = *state;
	slow_change a = { f->d.svc, true, 333, 0, MP_OK }, b = { f->d.svc, false, 0, 77, MP_OK };
	mp_store_device d;
	pthread_t ta, tb;
	mp_error err;
	http_resp r;

	http_do(&f->d, "PUT", "/v1/devices/lab-t", device_body, "application/json", NULL, &r);
	assert_int_equal(r.status, 201);
	http_resp_free(&r);
	assert_int_equal(pthread_create(&ta, NULL, update_thread, &a), 0);
	usleep(100 * 1000);
	assert_int_equal(pthread_create(&tb, NULL, update_thread, &b), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	assert_int_equal(a.st, MP_OK);
	assert_int_equal(b.st, MP_OK);
	assert_int_equal(mps_device_get(f->d.svc, "lab-t", &d, &err), MP_OK);
	assert_true(d.tdp_watts == 333); /* A's write survived B's */
	assert_int_equal(d.hw.sm_count, 77);
}

/* If-Match on PATCH (devices and models): the ETag a GET gave is taken; a stale one, or a weak one, is 412
 * precondition-failed naming the current tag, and nothing is written; "*" matches any stored version. */
static void test_patch_if_match(void **state)
{
	fixture *f = *state;
	char first[128], header[160];
	http_resp r;

	http_do(&f->d, "PUT", "/v1/devices/lab-m", device_body, "application/json", NULL, &r);
	assert_int_equal(r.status, 201);
	http_resp_free(&r);
	http_do(&f->d, "GET", "/v1/devices/lab-m", NULL, NULL, NULL, &r);
	snprintf(first, sizeof(first), "%s", r.etag);
	assert_true(first[0] == '"');
	http_resp_free(&r);
	snprintf(header, sizeof(header), "If-Match: %s", first);
	http_do(&f->d, "PATCH", "/v1/devices/lab-m", "{\"tdp_watts\":300}", "application/merge-patch+json", header, &r);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	/* the same tag again: the device has changed since */
	http_do(&f->d, "PATCH", "/v1/devices/lab-m", "{\"tdp_watts\":999}", "application/merge-patch+json", header, &r);
	assert_int_equal(r.status, 412);
	assert_string_equal(cJSON_GetObjectItem(r.json, "type")->valuestring, "urn:memplan:problem:precondition-failed");
	assert_string_equal(http_problem_field(&r), "If-Match");
	http_resp_free(&r);
	http_do(&f->d, "GET", "/v1/devices/lab-m", NULL, NULL, NULL, &r);
	assert_true(cJSON_GetObjectItem(r.json, "tdp_watts")->valuedouble == 300); /* the stale patch wrote nothing */
	snprintf(header, sizeof(header), "If-Match: W/%s", r.etag);
	http_resp_free(&r);
	http_do(&f->d, "PATCH", "/v1/devices/lab-m", "{\"tdp_watts\":400}", "application/merge-patch+json", header, &r);
	assert_int_equal(r.status, 412); /* If-Match compares strongly */
	http_resp_free(&r);
	http_do(&f->d, "PATCH", "/v1/devices/lab-m", "{\"tdp_watts\":500}", "application/merge-patch+json", "If-Match: *", &r);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	/* a model: its ETag from GET, then stale */
	http_do(&f->d, "PUT", "/v1/models/tiny-m",
		"{\"hf_config\":{\"model_type\":\"llama\",\"hidden_size\":64,\"intermediate_size\":128,"
		"\"num_hidden_layers\":2,\"num_attention_heads\":4,\"vocab_size\":100}}",
		"application/json", NULL, &r);
	assert_int_equal(r.status, 201);
	http_resp_free(&r);
	http_do(&f->d, "GET", "/v1/models/tiny-m", NULL, NULL, NULL, &r);
	snprintf(header, sizeof(header), "If-Match: %s", r.etag);
	http_resp_free(&r);
	http_do(&f->d, "PATCH", "/v1/models/tiny-m", "{\"hf_config\":{\"num_hidden_layers\":3}}",
		"application/merge-patch+json", header, &r);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	http_do(&f->d, "PATCH", "/v1/models/tiny-m", "{\"hf_config\":{\"num_hidden_layers\":4}}",
		"application/merge-patch+json", header, &r);
	assert_int_equal(r.status, 412);
	http_resp_free(&r);
}

/* ----- errors name the field that is wrong ---------------------------------------------------------------- */

/* Finding 8: num_local_experts 0 was reported as /model/hf_config/intermediate_size, hidden_size 2^40 as
 * /sequence_length ("the prefill workspace overflows 64 bits"); a dimension past the workspace's bound as well. */
static void test_error_fields(void **state)
{
	fixture *f = *state;
	static const struct {
		const char *config, *field;
	} cases[] = {
		{ "{\"model_type\":\"mixtral\",\"num_local_experts\":0}", "/model/hf_config/num_local_experts" },
		{ "{\"model_type\":\"qwen2_moe\",\"num_experts\":0}", "/model/hf_config/num_experts" },
		{ "{\"model_type\":\"llama\",\"hidden_size\":1099511627776}", "/model/hf_config/hidden_size" },
		{ "{\"model_type\":\"llama\",\"hidden_size\":33554432,\"intermediate_size\":64,\"num_hidden_layers\":1,"
		  "\"vocab_size\":100}",
		  "/model/hf_config/hidden_size" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char body[512];
		http_resp r;

		snprintf(body, sizeof(body),
			 "{\"model\":{\"hf_config\":%s},\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,"
			 "\"sequence_length\":16}",
			 cases[i].config);
		http_do(&f->d, "POST", "/v1/plan/inference", body, "application/json", NULL, &r);
		assert_int_equal(r.status, 422);
		if (strcmp(http_problem_field(&r), cases[i].field) != 0)
			fail_msg("%s: field %s, want %s", cases[i].config, http_problem_field(&r), cases[i].field);
		http_resp_free(&r);
	}
}

/* ----- HTTP: the connection limit, slowloris, framing ------------------------------------------------------ */

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int connect_to(uint16_t port)
{
	struct sockaddr_in a;
	int s = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(s >= 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(s, (struct sockaddr *)&a, sizeof(a)), 0);
	return s;
}

/* Reads until the daemon closes the connection or `wait_s` passes; the bytes in *out (NUL-terminated, caller frees).
 * Returns seconds until the close, -1 when it stayed open. */
static double read_until_close(int s, double wait_s, char **out)
{
	buf b = { 0 };
	double t0 = now_s();

	buf_add(&b, "%s", "");
	for (;;) {
		struct pollfd p = { .fd = s, .events = POLLIN };
		double left = wait_s - (now_s() - t0);
		char chunk[4096];
		ssize_t n;

		if (left <= 0)
			break;
		if (poll(&p, 1, (int)(left * 1000) + 1) <= 0)
			continue;
		n = recv(s, chunk, sizeof(chunk), 0);
		if (n <= 0) {
			if (out)
				*out = b.p;
			else
				free(b.p);
			return now_s() - t0;
		}
		buf_add(&b, "%.*s", (int)n, chunk);
	}
	if (out)
		*out = b.p;
	else
		free(b.p);
	return -1;
}

/* One raw exchange: sends `request` (len bytes), returns what came back before the daemon closed the connection
 * (or 5 s passed: *closed false). */
static char *exchange(uint16_t port, const char *request, size_t len, bool *closed)
{
	int s = connect_to(port);
	char *got = NULL;

	assert_int_equal(send(s, request, len, MSG_NOSIGNAL), (ssize_t)len);
	*closed = read_until_close(s, 5, &got) >= 0;
	close(s);
	return got;
}

static void limit_256(mpd_config *cfg)
{
	cfg->threads = 1;
	cfg->connection_limit = 256; /* a multiple of libmicrohttpd's 128 epoll events */
	cfg->connection_timeout_seconds = 10;
}

/*
 * Finding 1: at the connection limit, when a multiple of 128 connections closed at once, libmicrohttpd's epoll loop
 * waited out --connection-timeout before it accepted again (wrk -c1024 against the default limit). Fill the limit
 * with kept-alive connections that each made a request, close them all at once, then ask: the answer must come at
 * once, not after the 10 s timeout.
 */
static void test_connection_limit_no_stall(void **state)
{
	static const char req[] = "GET /v1/health HTTP/1.1\r\nHost: localhost\r\n\r\n";
	mpd_daemon d;
	char dir[64];
	int socks[256];
	double t0, took;
	http_resp r;

	(void)state;
	http_start_with(&d, dir, sizeof(dir), limit_256);
	for (int i = 0; i < 256; i++) {
		char got[512];
		ssize_t n;

		socks[i] = connect_to(d.bound_port);
		assert_int_equal(send(socks[i], req, sizeof(req) - 1, MSG_NOSIGNAL), (ssize_t)(sizeof(req) - 1));
		n = recv(socks[i], got, sizeof(got), 0); /* the answer's first bytes: the connection is being served */
		assert_true(n > 12 && strncmp(got, "HTTP/1.1 200", 12) == 0);
	}
	for (int i = 0; i < 256; i++)
		close(socks[i]);
	t0 = now_s();
	http_do(&d, "GET", "/v1/health", NULL, NULL, NULL, &r);
	took = now_s() - t0;
	assert_int_equal(r.status, 200);
	if (took > 3)
		fail_msg("GET /v1/health took %.1f s after the limit's connections closed (a stall)", took);
	http_resp_free(&r);
	http_stop(&d, dir);
}

static void header_deadline_2s(mpd_config *cfg)
{
	cfg->header_timeout_seconds = 2;
	cfg->connection_timeout_seconds = 10;
}

/* Finding 2, one client: a connection trickling a header byte every 300 ms (each byte restarts the idle timeout) is
 * closed when its headers pass --header-timeout (2 s here), not left open. */
static void test_header_deadline(void **state)
{
	static const char part[] = "GET /v1/health HTTP/1.1\r\nHost: localhost\r\nX-Slow: ";
	mpd_daemon d;
	char dir[64];
	int s;
	double t0, closed_at = -1;

	(void)state;
	http_start_with(&d, dir, sizeof(dir), header_deadline_2s);
	s = connect_to(d.bound_port);
	t0 = now_s();
	for (size_t i = 0; i < 40 && closed_at < 0; i++) { /* 12 s of trickling at most */
		struct pollfd p = { .fd = s, .events = POLLIN };
		char c;

		if (send(s, &part[i % (sizeof(part) - 1)], 1, MSG_NOSIGNAL) != 1 ||
		    (poll(&p, 1, 300) == 1 && recv(s, &c, 1, 0) <= 0))
			closed_at = now_s() - t0;
	}
	close(s);
	if (!(closed_at >= 1.8 && closed_at <= 4.0))
		fail_msg("the trickling connection closed at %.1f s (want about 2 s, the header timeout)", closed_at);
	http_stop(&d, dir);
}

static void slowloris_setting(mpd_config *cfg)
{
	cfg->connection_limit = 64;
	cfg->header_timeout_seconds = 8;
	cfg->connection_timeout_seconds = 20;
}

/*
 * Finding 2, the attack: more trickling connections than the limit (80 against 64, one byte every 500 ms each).
 * Near the limit the guard frees slots from connections that have sent headers for over a second, so ordinary
 * requests are answered within a few seconds, while the attack goes on, well before the 8 s header timeout.
 */
static void test_slowloris(void **state)
{
	mpd_daemon d;
	char dir[64];
	int slow[80], answered = 0;
	double t_end;

	(void)state;
	http_start_with(&d, dir, sizeof(dir), slowloris_setting);
	for (int i = 0; i < 80; i++) {
		int fl;

		slow[i] = socket(AF_INET, SOCK_STREAM, 0);
		fl = fcntl(slow[i], F_GETFL);
		fcntl(slow[i], F_SETFL, fl | O_NONBLOCK); /* beyond the limit they wait in the accept queue */
		{
			struct sockaddr_in a;

			memset(&a, 0, sizeof(a));
			a.sin_family = AF_INET;
			a.sin_port = htons(d.bound_port);
			a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			connect(slow[i], (struct sockaddr *)&a, sizeof(a));
		}
	}
	t_end = now_s() + 1.0;
	while (now_s() < t_end) { /* the attack gets going: every connection sends a first byte */
		for (int i = 0; i < 80; i++)
			send(slow[i], "G", 1, MSG_NOSIGNAL);
		usleep(500 * 1000);
	}
	for (int k = 0; k < 5; k++) {
		double t0 = now_s(), took;
		http_resp r;

		for (int i = 0; i < 80; i++) /* keep trickling */
			send(slow[i], "E", 1, MSG_NOSIGNAL);
		http_do(&d, "GET", "/v1/health", NULL, NULL, NULL, &r);
		took = now_s() - t0;
		if (r.status == 200 && took < 5)
			answered++;
		else
			print_message("request %d: %ld after %.1f s\n", k, r.status, took);
		http_resp_free(&r);
	}
	assert_int_equal(answered, 5);
	{
		http_resp m;

		http_do(&d, "GET", "/metrics", NULL, NULL, NULL, &m);
		assert_non_null(strstr(m.body, "memplan_http_connections_cut_total{reason=\"pressure\"}"));
		assert_null(strstr(m.body, "memplan_http_connections_cut_total{reason=\"pressure\"} 0\n"));
		http_resp_free(&m);
	}
	for (int i = 0; i < 80; i++)
		close(slow[i]);
	http_stop(&d, dir);
}

/* The status line, the media type and whether the connection was closed, of a raw request. */
static void expect_raw(uint16_t port, const char *request, size_t len, const char *status, const char *type)
{
	bool closed;
	char *got = exchange(port, request, len, &closed);

	if (strncmp(got, status, strlen(status)) != 0)
		fail_msg("%.60s...: got \"%.80s\", want \"%s\"", request, got, status);
	if (type && strstr(got, type) == NULL)
		fail_msg("%.60s...: no \"%s\" in \"%.300s\"", request, type, got);
	if (!closed)
		fail_msg("%.60s...: the connection stayed open", request);
	/* one answer only: no second status line after the first */
	if (strstr(got + 5, "\r\nHTTP/1.") != NULL)
		fail_msg("%.60s...: two answers: %.300s", request, got);
	free(got);
}

/*
 * Finding 5: framing the daemon checks itself, each answered in problem+json and the connection closed: both
 * Content-Length and Transfer-Encoding (the bytes after the chunked body must not be served as a second request),
 * an unknown transfer coding (was: no answer until the timeout), HTTP/1.1 without Host, an HTTP version other than
 * 1.0 and 1.1 (was: 1.9 served as 1.1).
 */
static void test_framing(void **state)
{
	fixture *f = *state;
	uint16_t p = f->d.bound_port;
	static const char smuggle[] = "POST /v1/roofline HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
				      "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
				      "GET /v1/health HTTP/1.1\r\nHost: localhost\r\n\r\n";
	static const char xchunked[] = "POST /v1/roofline HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
				       "Transfer-Encoding: xchunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n";
	static const char gzip[] = "POST /v1/roofline HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
				   "Transfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n";
	static const char nohost[] = "GET /v1/health HTTP/1.1\r\n\r\n";
	static const char v19[] = "GET /v1/health HTTP/1.9\r\nHost: localhost\r\n\r\n";
	static const char ok10[] = "GET /v1/health HTTP/1.0\r\n\r\n";
	static const char chunked_ok[] = "POST /v1/roofline HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
					 "Transfer-Encoding: Chunked\r\nConnection: close\r\n\r\n"
					 "b\r\n{\"device\":\"\r\n11\r\nh100-sxm5-80gb\",\"\r\n8\r\nops\":[]}\r\n0\r\n\r\n";

	expect_raw(p, smuggle, sizeof(smuggle) - 1, "HTTP/1.1 400", "application/problem+json");
	expect_raw(p, xchunked, sizeof(xchunked) - 1, "HTTP/1.1 501", "application/problem+json");
	expect_raw(p, gzip, sizeof(gzip) - 1, "HTTP/1.1 501", "application/problem+json");
	expect_raw(p, nohost, sizeof(nohost) - 1, "HTTP/1.1 400", "\"field\":\"Host\"");
	expect_raw(p, v19, sizeof(v19) - 1, "HTTP/1.1 505", "application/problem+json");
	/* still served: HTTP/1.0 without Host, and a chunked body (any case) */
	expect_raw(p, ok10, sizeof(ok10) - 1, "HTTP/1.1 200", "application/json");
	expect_raw(p, chunked_ok, sizeof(chunked_ok) - 1, "HTTP/1.1 200", "ridge_flops_per_byte");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fit_streamed, http_fixture_setup, http_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_fit_heavy_bound, http_fixture_setup, http_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_fit_job_errors, http_fixture_setup, http_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_fit_every_stored_device, http_fixture_setup, http_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_fit_rebase_equals_plan, http_fixture_setup, http_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_capacity_pages, http_fixture_setup, http_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_database_deleted, http_fixture_setup, http_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_patch_no_lost_update, http_fixture_setup, http_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_update_is_one_transaction, http_fixture_setup, http_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_patch_if_match, http_fixture_setup, http_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_error_fields, http_fixture_setup, http_fixture_teardown),
		cmocka_unit_test(test_connection_limit_no_stall),
		cmocka_unit_test(test_header_deadline),
		cmocka_unit_test(test_slowloris),
		cmocka_unit_test_setup_teardown(test_framing, http_fixture_setup, http_fixture_teardown),
	};

	curl_global_init(CURL_GLOBAL_DEFAULT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
