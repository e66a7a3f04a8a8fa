/*
 * test_store_http.c: the store over HTTP, in-process on 127.0.0.1 port 0 with a token configured: device and
 * model CRUD round trips, validation errors naming fields, 401/403 on writes, ETag and 304, POST /v1/fit and
 * GET /v1/capacity (JSON and text), and the listen rule for non-loopback addresses.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "../daemon/auth.h"
#include "../model/model.h"
#include "../service/service_int.h"
#include "http_util.h"
#include "refs.h"

#define TOKEN "t0ken-for-tests"
#define AUTH "Authorization: Bearer " TOKEN
#define J "application/json"

typedef struct fixture {
	mpd_daemon d;
	char dir[64];
} fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));

	http_start(&f->d, f->dir, sizeof(f->dir));
	snprintf(f->d.cfg.token, sizeof(f->d.cfg.token), "%s", TOKEN);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	http_stop(&f->d, f->dir);
	free(f);
	return 0;
}

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItem(o, k);

	if (!cJSON_IsNumber(v))
		fail_msg("%s is not a number", k);
	return v->valuedouble;
}

static void expect(fixture *f, const char *method, const char *path, const char *body, const char *hdr, long status,
		   const char *field)
{
	http_resp r;

	http_do(&f->d, method, path, body, body ? J : NULL, hdr, &r);
	if (r.status != status)
		fail_msg("%s %s: %ld, expected %ld: %s", method, path, r.status, status, r.body ? r.body : "");
	if (field && strcmp(http_problem_field(&r), field) != 0)
		fail_msg("%s %s: field '%s', expected '%s' (%s)", method, path, http_problem_field(&r), field, r.body);
	http_resp_free(&r);
}

#define DEV_BODY                                                                                              \
	"{\"name\":\"Lab 4090\",\"vendor\":\"NVIDIA\",\"memory_bytes\":25769803776,\"usable_memory_bytes\":"    \
	"25282281472,\"memory_bandwidth_bytes_per_second\":1008e9,\"peak_flops_per_second\":{\"bf16\":165.2e12},"  \
	"\"interconnect\":{\"host_link\":\"PCIe Gen4 x16\",\"host_link_bytes_per_second\":64e9},"                \
	"\"source_note\":\"our box\"}"

static void test_device_crud(void **state)
{
	fixture *f = *state;
	http_resp r, g;
	char *doc;

	http_do(&f->d, "PUT", "/v1/devices/lab-4090", DEV_BODY, J, AUTH, &r);
	assert_int_equal(r.status, 201);
	assert_string_equal(cJSON_GetObjectItem(r.json, "source")->valuestring, "user");
	assert_true(num(r.json, "usable_memory_bytes") == 25282281472.0);
	http_resp_free(&r);
	/* GET returns what PUT stored; PUT of the GET document replaces with 200 and the same content */
	http_do(&f->d, "GET", "/v1/devices/lab-4090", NULL, NULL, NULL, &g);
	assert_int_equal(g.status, 200);
	assert_true(num(cJSON_GetObjectItem(g.json, "peak_flops_per_second"), "bf16") == 165.2e12);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(g.json, "interconnect"), "host_link")->valuestring,
			    "PCIe Gen4 x16");
	doc = cJSON_PrintUnformatted(g.json);
	http_do(&f->d, "PUT", "/v1/devices/lab-4090", doc, J, AUTH, &r);
	assert_int_equal(r.status, 200);
	assert_true(num(r.json, "memory_bytes") == 25769803776.0);
	free(doc);
	http_resp_free(&r);
	http_resp_free(&g);
	/* PATCH: merge patch, null clears */
	http_do(&f->d, "PATCH", "/v1/devices/lab-4090", "{\"tdp_watts\":450,\"usable_memory_bytes\":null}", J, AUTH, &r);
	assert_int_equal(r.status, 200);
	assert_true(num(r.json, "tdp_watts") == 450);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(r.json, "usable_memory_bytes")));
	assert_true(num(r.json, "memory_bytes") == 25769803776.0);
	http_resp_free(&r);
	/* an object patched into a member that holds null or a scalar (a QA find: it crashed the daemon) */
	http_do(&f->d, "PATCH", "/v1/devices/lab-4090", "{\"interconnect\":{\"gpu_link\":\"PCIe only\"}}", J, AUTH, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(
		cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "interconnect"), "gpu_link")->valuestring, "PCIe only");
	http_resp_free(&r);
	expect(f, "PATCH", "/v1/devices/lab-4090", "{\"tdp_watts\":{\"a\":1}}", AUTH, 422, "/tdp_watts");
	/* filters */
	http_do(&f->d, "GET", "/v1/devices?source=user", NULL, NULL, NULL, &r);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "items")), 1);
	http_resp_free(&r);
	http_do(&f->d, "GET", "/v1/devices?vendor=amd&min_memory_bytes=250000000000", NULL, NULL, NULL, &r);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "items")), 1); /* MI325X */
	http_resp_free(&r);
	expect(f, "GET", "/v1/devices?source=guess", NULL, NULL, 422, "?source");
	/* DELETE, then it is gone */
	expect(f, "DELETE", "/v1/devices/lab-4090", NULL, AUTH, 204, NULL);
	expect(f, "GET", "/v1/devices/lab-4090", NULL, NULL, 404, "/device");
	expect(f, "DELETE", "/v1/devices/lab-4090", NULL, AUTH, 404, NULL);
}

static void test_device_validation(void **state)
{
	fixture *f = *state;

	expect(f, "PUT", "/v1/devices/x1", "{\"name\":\"X\",\"vendor\":\"V\",\"memory_bytes\":1e10}", AUTH, 422,
	       "/memory_bandwidth_bytes_per_second");
	expect(f, "PUT", "/v1/devices/x1", "{\"name\":\"X\",\"vendor\":\"V\",\"memory_bytes\":80,"
					   "\"memory_bandwidth_bytes_per_second\":1e12}", AUTH, 422, "/memory_bytes");
	expect(f, "PUT", "/v1/devices/x1", "{\"name\":\"X\",\"vendor\":\"V\",\"memory_bytes\":1e10,"
					   "\"memory_bandwidth_bytes_per_second\":1e12,\"peak_flops_per_second\":{\"bf17\":1e12}}",
	       AUTH, 422, "/peak_flops_per_second/bf17");
	expect(f, "PUT", "/v1/devices/x1", "{\"name\":\"X\",\"vendor\":\"V\",\"memory_bytes\":1e10,"
					   "\"memory_bandwidth_bytes_per_second\":1e12,\"usable_memory_bytes\":2e10}",
	       AUTH, 422, "/usable_memory_bytes");
	expect(f, "PUT", "/v1/devices/x1", "{\"name\":\"X\",\"vendor\":\"V\",\"memory_bytes\":1e10,"
					   "\"memory_bandwidth_bytes_per_second\":1e12,\"source\":\"measured\"}",
	       AUTH, 422, "/measured_at");
	expect(f, "PUT", "/v1/devices/x1", "{\"name\":\"X\",\"vendor\":\"V\",\"memory_bytes\":1e10,"
					   "\"memory_bandwidth_bytes_per_second\":1e12,\"linked_device_id\":\"nope\"}",
	       AUTH, 422, "/linked_device_id");
	expect(f, "PUT", "/v1/devices/x1", "{\"name\":\"X\",\"vendor\":\"V\",\"memory_bytes\":1e10,"
					   "\"memory_bandwidth_bytes_per_second\":1e12,\"memroy_type\":\"HBM3\"}",
	       AUTH, 422, "/memroy_type");
	expect(f, "PUT", "/v1/devices/x1", "{\"id\":\"x2\",\"name\":\"X\",\"vendor\":\"V\",\"memory_bytes\":1e10,"
					   "\"memory_bandwidth_bytes_per_second\":1e12}", AUTH, 422, "/id");
	expect(f, "PUT", "/v1/devices/Bad%20Id", DEV_BODY, AUTH, 422, "/id");
	expect(f, "PUT", "/v1/devices/x1", "{\"name\":", AUTH, 400, NULL);
	expect(f, "PATCH", "/v1/devices/nope", "{}", AUTH, 404, NULL);
}

static void test_auth(void **state)
{
	fixture *f = *state;
	http_resp r;

	expect(f, "PUT", "/v1/devices/a1", DEV_BODY, NULL, 401, "Authorization");
	expect(f, "PUT", "/v1/devices/a1", DEV_BODY, "Authorization: Bearer wrong", 403, "Authorization");
	expect(f, "PUT", "/v1/devices/a1", DEV_BODY, "Authorization: Bearer " TOKEN "x", 403, NULL);
	expect(f, "PUT", "/v1/devices/a1", DEV_BODY, "Authorization: Basic dXNlcjpwdw==", 401, NULL);
	expect(f, "DELETE", "/v1/devices/h100-sxm5-80gb", NULL, NULL, 401, NULL);
	expect(f, "PUT", "/v1/models/m1", "{\"hf_config\":{}}", NULL, 401, NULL);
	http_do(&f->d, "PUT", "/v1/devices/a1", DEV_BODY, J, NULL, &r);
	assert_int_equal(r.status, 401);
	http_resp_free(&r);
	/* reads and compute-only POSTs need no token */
	expect(f, "GET", "/v1/devices/h100-sxm5-80gb", NULL, NULL, 200, NULL);
	expect(f, "POST", "/v1/fit",
	       "{\"jobs\":[{\"inference\":{\"model\":\"gpt2\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\","
	       "\"batch_size\":1,\"sequence_length\":1024}}],\"devices\":[\"t4-16gb\"]}",
	       NULL, 200, NULL);
	expect(f, "PUT", "/v1/devices/a1", DEV_BODY, AUTH, 201, NULL);
	/* the write rules and the listen rule */
	assert_false(mpd_auth_is_write("GET", "/v1/devices/{id}"));
	assert_false(mpd_auth_is_write("POST", "/v1/plan/inference"));
	assert_true(mpd_auth_is_write("POST", "/v1/calibrations"));
	assert_true(mpd_auth_is_write("PATCH", "/v1/models/{id}"));
	assert_true(mpd_auth_is_loopback("127.0.0.1") && mpd_auth_is_loopback("::1"));
	assert_false(mpd_auth_is_loopback("0.0.0.0") || mpd_auth_is_loopback("10.1.2.3") || mpd_auth_is_loopback("::"));
	{
		mpd_config c;
		mp_error err = MP_ERROR_INIT;

		mpd_config_defaults(&c);
		snprintf(c.listen_host, sizeof(c.listen_host), "0.0.0.0");
		assert_int_equal(mpd_auth_check_listen(&c, &err), MP_EINVAL);
		assert_string_equal(err.field, "--listen");
		c.insecure = true;
		assert_int_equal(mpd_auth_check_listen(&c, &err), MP_OK);
		c.insecure = false;
		snprintf(c.token, sizeof(c.token), "x");
		assert_int_equal(mpd_auth_check_listen(&c, &err), MP_OK);
	}
}

static void test_etag_304(void **state)
{
	fixture *f = *state;
	http_resp a, b;
	char hdr[200];

	http_do(&f->d, "GET", "/v1/models/llama-3-8b", NULL, NULL, NULL, &a);
	assert_int_equal(a.status, 200);
	assert_true(strlen(a.etag) > 2 && a.etag[0] == '"');
	snprintf(hdr, sizeof(hdr), "If-None-Match: %s", a.etag);
	http_do(&f->d, "GET", "/v1/models/llama-3-8b", NULL, NULL, hdr, &b);
	assert_int_equal(b.status, 304);
	assert_int_equal(b.len, 0);
	assert_string_equal(b.etag, a.etag);
	http_resp_free(&b);
	http_do(&f->d, "GET", "/v1/models/llama-3-8b", NULL, NULL, "If-None-Match: \"0000000000000000\"", &b);
	assert_int_equal(b.status, 200);
	http_resp_free(&b);
	/* a list ETag changes when a write changes the list */
	http_resp_free(&a);
	http_do(&f->d, "GET", "/v1/models?limit=1000", NULL, NULL, NULL, &a);
	snprintf(hdr, sizeof(hdr), "If-None-Match: W/%s, \"x\"", a.etag);
	http_do(&f->d, "GET", "/v1/models?limit=1000", NULL, NULL, hdr, &b);
	assert_int_equal(b.status, 304);
	http_resp_free(&b);
	expect(f, "PUT", "/v1/models/tiny",
	       "{\"hf_config\":{\"model_type\":\"llama\",\"hidden_size\":64,\"intermediate_size\":128,"
	       "\"num_hidden_layers\":2,\"num_attention_heads\":4,\"vocab_size\":100}}",
	       AUTH, 201, NULL);
	http_do(&f->d, "GET", "/v1/models?limit=1000", NULL, NULL, hdr, &b);
	assert_int_equal(b.status, 200);
	assert_string_not_equal(b.etag, a.etag);
	http_resp_free(&b);
	http_resp_free(&a);
}

static void test_model_crud(void **state)
{
	fixture *f = *state;
	char *cfg = ref_text("models/llama-3-8b.json"), body[8192];
	http_resp r;

	snprintf(body, sizeof(body), "{\"hf_config\":%s}", cfg);
	http_do(&f->d, "PUT", "/v1/models/my-llama", body, J, AUTH, &r);
	assert_int_equal(r.status, 201);
	assert_true(num(r.json, "parameters") == 8030261248.0);
	assert_string_equal(cJSON_GetObjectItem(r.json, "source")->valuestring, "user");
	http_resp_free(&r);
	/* PATCH the config: 40 layers instead of 32 -> 8 more layers of 218,112,000 parameters */
	http_do(&f->d, "PATCH", "/v1/models/my-llama", "{\"hf_config\":{\"num_hidden_layers\":40}}", J, AUTH, &r);
	assert_int_equal(r.status, 200);
	assert_true(num(r.json, "parameters") == 8030261248.0 + 8 * 218112000.0);
	http_resp_free(&r);
	/* an object patched over a config number is refused, and the stored config is unchanged */
	expect(f, "PATCH", "/v1/models/my-llama", "{\"hf_config\":{\"num_hidden_layers\":{\"x\":1}}}", AUTH, 422,
	       "/hf_config/num_hidden_layers");
	http_do(&f->d, "GET", "/v1/models/my-llama", NULL, NULL, NULL, &r);
	assert_true(num(cJSON_GetObjectItem(r.json, "hf_config"), "num_hidden_layers") == 40);
	http_resp_free(&r);
	http_do(&f->d, "GET", "/v1/models?source=user", NULL, NULL, NULL, &r);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "items")), 1);
	http_resp_free(&r);
	/* the stored model plans like any other */
	http_do(&f->d, "POST", "/v1/plan/inference",
		"{\"model\":\"my-llama\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,"
		"\"sequence_length\":128}",
		J, NULL, &r);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	expect(f, "PUT", "/v1/models/bad", "{\"hf_config\":{\"model_type\":\"bert\"}}", AUTH, 422,
	       "/hf_config/model_type");
	expect(f, "PUT", "/v1/models/bad",
	       "{\"hf_config\":{\"model_type\":\"mistral\",\"num_attention_heads\":7,\"num_key_value_heads\":2,"
	       "\"head_dim\":32}}",
	       AUTH, 422, "/hf_config/num_key_value_heads");
	expect(f, "PUT", "/v1/models/bad", "{\"config\":{}}", AUTH, 422, "/config");
	expect(f, "PUT", "/v1/models/bad", "{}", AUTH, 422, "/hf_config");
	expect(f, "DELETE", "/v1/models/my-llama", NULL, AUTH, 204, NULL);
	expect(f, "GET", "/v1/models/my-llama", NULL, NULL, 404, NULL);
	free(cfg);
}

/* The parameters of a plan of stored model id through the daemon, or -(HTTP status) when it fails. */
static double planned_parameters(fixture *f, const char *id)
{
	char body[256];
	http_resp r;
	double p;

	snprintf(body, sizeof(body),
		 "{\"model\":\"%s\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,"
		 "\"sequence_length\":128,\"device\":\"h200-sxm-141gb\"}",
		 id);
	http_do(&f->d, "POST", "/v1/plan/inference", body, J, NULL, &r);
	p = r.status == 200 ? num(cJSON_GetObjectItem(r.json, "model"), "parameters") : -(double)r.status;
	http_resp_free(&r);
	return p;
}

/* Writes model id with config text through a second store handle (another connection, as another process would). */
static void write_elsewhere(fixture *f, const char *id, const char *config)
{
	mp_store *s;
	mp_store_model m;
	mp_error err = MP_ERROR_INIT;

	assert_int_equal(mp_store_open(f->d.cfg.db_path, mps_presets(), &s, &err), MP_OK);
	memset(&m, 0, sizeof(m));
	snprintf(m.id, sizeof(m.id), "%s", id);
	snprintf(m.model_type, sizeof(m.model_type), "llama");
	snprintf(m.source, sizeof(m.source), "user");
	m.config_json = (char *)config;
	{
		mp_model arch;
		mp_param_count pc;

		assert_int_equal(mpm_from_hf_text(config, "", &arch, &err), MP_OK);
		assert_int_equal(mp_count_parameters(&arch, &pc, &err), MP_OK);
		m.parameters = pc.total;
	}
	assert_int_equal(mp_store_model_write(s, &m, "test", NULL, &err), MP_OK);
	mp_store_close(s);
}

/* Plans of a stored model follow every change to it: PUT, PATCH and DELETE through the daemon, and writes by
 * another connection to the same database (the daemon keeps decoded models between requests; none may be stale). */
static void test_plan_sees_model_writes(void **state)
{
	fixture *f = *state;
	char *cfg = ref_text("models/llama-3-8b.json"), body[8192], *p;
	const double base = 8030261248.0, layer = 218112000.0;
	http_resp r;

	snprintf(body, sizeof(body), "{\"hf_config\":%s}", cfg);
	expect(f, "PUT", "/v1/models/cached-llama", body, AUTH, 201, NULL);
	assert_true(planned_parameters(f, "cached-llama") == base);
	assert_true(planned_parameters(f, "cached-llama") == base);
	http_do(&f->d, "PATCH", "/v1/models/cached-llama", "{\"hf_config\":{\"num_hidden_layers\":40}}", J, AUTH, &r);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	assert_true(planned_parameters(f, "cached-llama") == base + 8 * layer);
	expect(f, "PUT", "/v1/models/cached-llama", body, AUTH, 200, NULL);
	assert_true(planned_parameters(f, "cached-llama") == base);

	/* another connection rewrites it with 24 layers, then with the original 32 */
	p = strstr(cfg, "\"num_hidden_layers\": 32");
	assert_non_null(p);
	memcpy(p + strlen("\"num_hidden_layers\": "), "24", 2);
	write_elsewhere(f, "cached-llama", cfg);
	assert_true(planned_parameters(f, "cached-llama") == base - 8 * layer);
	memcpy(p + strlen("\"num_hidden_layers\": "), "32", 2);
	write_elsewhere(f, "cached-llama", cfg);
	assert_true(planned_parameters(f, "cached-llama") == base);

	expect(f, "DELETE", "/v1/models/cached-llama", NULL, AUTH, 204, NULL);
	assert_true(planned_parameters(f, "cached-llama") == -404.0);
	/* created elsewhere after the daemon answered 404 for it */
	write_elsewhere(f, "cached-llama", cfg);
	assert_true(planned_parameters(f, "cached-llama") == base);
	free(cfg);
}

/* A counter or gauge of GET /metrics (a line "name value"); -1 when absent. */
static double metric(fixture *f, const char *name)
{
	http_resp r;
	double v = -1;
	size_t n = strlen(name);

	http_do(&f->d, "GET", "/metrics", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	for (const char *p = r.body; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, name, n) == 0 && p[n] == ' ')
			v = strtod(p + n + 1, NULL);
	http_resp_free(&r);
	return v;
}

/* The decode step of an inference plan on device h200-sxm-141gb; the body text into *text (owned) when asked. */
#define H200_PLAN                                                                                             \
	"{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,"     \
	"\"sequence_length\":4096,\"device\":\"h200-sxm-141gb\"}"
static double decode_step(fixture *f, char **text)
{
	http_resp r;
	double v;

	http_do(&f->d, "POST", "/v1/plan/inference", H200_PLAN, J, NULL, &r);
	assert_int_equal(r.status, 200);
	v = num(cJSON_GetObjectItem(r.json, "performance"), "decode_step_seconds");
	if (text) {
		*text = r.body;
		r.body = NULL;
	}
	http_resp_free(&r);
	return v;
}

/* Sets the H200's bandwidth through a second store handle (as another process would). */
static void bandwidth_elsewhere(fixture *f, double bytes_per_second)
{
	mp_store *s;
	mp_store_device dev;
	mp_error err = MP_ERROR_INIT;

	assert_int_equal(mp_store_open(f->d.cfg.db_path, mps_presets(), &s, &err), MP_OK);
	assert_int_equal(mp_store_device_get(s, "h200-sxm-141gb", &dev, &err), MP_OK);
	dev.hw.memory_bandwidth_bytes_per_second = bytes_per_second;
	assert_int_equal(mp_store_device_write(s, &dev, "test", NULL, &err), MP_OK);
	mp_store_close(s);
}

/* The response cache: a repeated plan, fit or roofline body is answered with the same bytes from the cache
 * (counted in /metrics), and never after the store changed: a PATCH through the daemon and a write by another
 * connection each show at once in the next answer. Errors are not kept. */
static void test_response_cache(void **state)
{
	fixture *f = *state;
	char *first, *again, *after;
	double hits = metric(f, "memplan_response_cache_hits_total"), step, step2, misses;
	http_resp r;
	static const char fit[] = "{\"jobs\":[{\"id\":\"j\",\"inference\":{\"model\":\"llama-3-8b\",\"weight_dtype\":"
				  "\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,\"sequence_length\":4096}}],"
				  "\"devices\":[\"h200-sxm-141gb\"],\"gpu_counts\":[1]}";
	static const char roof[] = "{\"device\":\"h200-sxm-141gb\",\"ops\":[{\"op\":\"matmul\",\"m\":4096,"
				   "\"k\":4096,\"n\":4096,\"dtype\":\"bf16\"}]}";

	assert_true(hits >= 0);
	assert_true(metric(f, "memplan_response_cache_max_bytes") == (double)MPD_DEFAULT_RESPONSE_CACHE_BYTES);
	step = decode_step(f, &first);
	assert_true(decode_step(f, &again) == step);
	assert_string_equal(again, first);
	assert_true(metric(f, "memplan_response_cache_hits_total") == hits + 1);
	free(again);
	/* a write that fails (no such device) changes nothing: the next repeat is still a hit */
	expect(f, "DELETE", "/v1/devices/no-such-device", NULL, AUTH, 404, NULL);
	assert_true(metric(f, "memplan_response_cache_entries") == 1);
	decode_step(f, NULL);
	assert_true(metric(f, "memplan_response_cache_hits_total") == hits + 2);

	/* the H200's datasheet bandwidth halved through the API: the memory-bound decode step doubles */
	http_do(&f->d, "PATCH", "/v1/devices/h200-sxm-141gb", "{\"memory_bandwidth_bytes_per_second\":2.4e12}", J,
		AUTH, &r);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	assert_true(metric(f, "memplan_response_cache_entries") == 0); /* emptied by the write, not later */
	step2 = decode_step(f, &after);
	assert_true(fabs(step2 / step - 2.0) < 1e-12);
	assert_string_not_equal(after, first);
	assert_true(metric(f, "memplan_response_cache_invalidations_total") >= 1);
	free(after);
	/* and back to 4.8e12 by another connection: the next answer is the first one again, byte for byte */
	bandwidth_elsewhere(f, 4.8e12);
	assert_true(metric(f, "memplan_response_cache_entries") == 0); /* noticed by the next /metrics */
	assert_true(decode_step(f, &after) == step);
	assert_string_equal(after, first);
	free(after);
	free(first);

	/* fit and roofline answers are kept the same way */
	hits = metric(f, "memplan_response_cache_hits_total");
	for (int i = 0; i < 2; i++) {
		http_do(&f->d, "POST", "/v1/fit", fit, J, NULL, &r);
		assert_int_equal(r.status, 200);
		http_resp_free(&r);
		http_do(&f->d, "POST", "/v1/roofline", roof, J, NULL, &r);
		assert_int_equal(r.status, 200);
		http_resp_free(&r);
	}
	assert_true(metric(f, "memplan_response_cache_hits_total") == hits + 2);

	/* GET /v1/capacity (what dashboards poll) is kept by its query arguments; ?format=text never is */
	{
		static const char cap[] = "/v1/capacity?model=llama-3-8b&sequence_length=4096";
		static const char cap_text[] = "/v1/capacity?model=llama-3-8b&sequence_length=4096&format=text";
		http_resp a, b;

		hits = metric(f, "memplan_response_cache_hits_total");
		http_do(&f->d, "GET", cap, NULL, NULL, NULL, &a);
		http_do(&f->d, "GET", cap, NULL, NULL, NULL, &b);
		assert_int_equal(b.status, 200);
		assert_string_equal(b.body, a.body);
		assert_string_equal(b.etag, a.etag);
		assert_string_equal(b.content_type, "application/json");
		assert_true(metric(f, "memplan_response_cache_hits_total") == hits + 1);
		http_resp_free(&a);
		http_resp_free(&b);
		for (int i = 0; i < 2; i++) {
			http_do(&f->d, "GET", cap_text, NULL, NULL, NULL, &a);
			assert_int_equal(a.status, 200);
			assert_non_null(strstr(a.content_type, "text/plain"));
			assert_true(strncmp(a.body, "Capacity of llama-3-8b", 22) == 0);
			http_resp_free(&a);
		}
		assert_true(metric(f, "memplan_response_cache_hits_total") == hits + 1);
	}

	/* a 422 is computed each time, never kept */
	misses = metric(f, "memplan_response_cache_misses_total");
	for (int i = 0; i < 2; i++)
		expect(f, "POST", "/v1/plan/inference",
		       "{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\","
		       "\"batch_size\":0,\"sequence_length\":4096}", NULL, 422, "/batch_size");
	assert_true(metric(f, "memplan_response_cache_misses_total") == misses + 2);
	assert_true(metric(f, "memplan_response_cache_entries") >= 3);
	assert_true(metric(f, "memplan_response_cache_bytes") <= (double)MPD_DEFAULT_RESPONSE_CACHE_BYTES);
}

/* --response-cache-bytes 0 turns the cache off: answers are the same, the cache's metrics are absent. */
static void test_response_cache_off(void **state)
{
	fixture *f = *state;
	char *a, *b;

	mpd_stop(&f->d);
	f->d.cfg.response_cache_bytes = 0;
	f->d.cfg.listen_port = 0;
	assert_int_equal(mpd_start(&f->d, &(mp_error){ 0 }), MP_OK);
	decode_step(f, &a);
	decode_step(f, &b);
	assert_string_equal(a, b);
	assert_true(metric(f, "memplan_response_cache_hits_total") == -1);
	free(a);
	free(b);
}

static const cJSON *job_device(const cJSON *job, const char *id)
{
	const cJSON *d;

	cJSON_ArrayForEach(d, cJSON_GetObjectItem(job, "devices"))
	if (strcmp(cJSON_GetObjectItem(d, "device")->valuestring, id) == 0)
		return d;
	fail_msg("device %s missing", id);
	return NULL;
}

/* How many devices the store holds (every preset plus nothing else in a fresh database). */
/* Stored devices of a kind ("gpu", ...; NULL: every kind). */
static int stored_devices(fixture *f, const char *kind)
{
	http_resp r;
	char path[96];
	int n;

	snprintf(path, sizeof(path), "/v1/devices?limit=1000%s%s", kind ? "&kind=" : "", kind ? kind : "");
	http_do(&f->d, "GET", path, NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	n = cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "items"));
	http_resp_free(&r);
	return n;
}

static void test_fit(void **state)
{
	fixture *f = *state;
	http_resp r, p;
	const cJSON *job, *d, *row;

	/* a device whose capacity is its marketed memory: the job's warnings name it, as a plan on it would say */
	{
		const cJSON *w;
		bool said = false;

		http_do(&f->d, "PUT", "/v1/devices/marketed-1",
			"{\"name\":\"Marketed\",\"vendor\":\"NVIDIA\",\"memory_bytes\":25769803776,"
			"\"memory_bandwidth_bytes_per_second\":1e12,\"peak_flops_per_second\":{\"bf16\":1e14}}",
			J, AUTH, &p);
		assert_int_equal(p.status, 201);
		http_resp_free(&p);
		http_do(&f->d, "POST", "/v1/fit",
			"{\"jobs\":[{\"id\":\"a\",\"inference\":{\"model\":\"llama-3-8b\",\"batch_size\":1,"
			"\"sequence_length\":4096}}],\"devices\":[\"marketed-1\",\"h100-sxm5-80gb\"],\"gpu_counts\":[1]}",
			J, NULL, &p);
		assert_int_equal(p.status, 200);
		cJSON_ArrayForEach(w, cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(p.json, "jobs"), 0), "warnings"))
		{
			said |= strstr(w->valuestring, "capacity_bytes of marketed-1 is the marketed memory_bytes") != NULL;
			assert_null(strstr(w->valuestring, "h100-sxm5-80gb")); /* its profile gives usable_memory_bytes */
		}
		assert_true(said);
		http_resp_free(&p);
		http_do(&f->d, "DELETE", "/v1/devices/marketed-1", NULL, NULL, AUTH, &p);
		http_resp_free(&p);
	}

	http_do(&f->d, "POST", "/v1/fit",
		"{\"jobs\":[{\"id\":\"chat\",\"inference\":{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\","
		"\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,\"sequence_length\":4096}},"
		"{\"id\":\"same-model\",\"inference\":{\"model\":\"llama-3-8b\",\"weight_dtype\":\"fp8_e4m3\","
		"\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,\"sequence_length\":4096}},"
		"{\"id\":\"tune\",\"training\":{\"model\":\"llama-2-7b\",\"precision\":\"mixed_bf16\",\"optimizer\":"
		"\"adamw\",\"micro_batch_size\":1,\"sequence_length\":4096}}],\"gpu_counts\":[1,2]}",
		J, NULL, &r);
	assert_int_equal(r.status, 200);
	/* default: every stored GPU (issue 15: the Gaudi presets are accelerators, a CPU profile a cpu) */
	assert_true(num(r.json, "pairs") == 3 * stored_devices(f, "gpu"));
	assert_true(stored_devices(f, NULL) >= 24); /* 23 datasheet presets + the measured H200 */
	assert_true(stored_devices(f, "gpu") == stored_devices(f, NULL) - stored_devices(f, "accelerator,cpu"));
	assert_true(stored_devices(f, "accelerator") >= 2);
	job = cJSON_GetArrayItem(cJSON_GetObjectItem(r.json, "jobs"), 0);
	assert_string_equal(cJSON_GetObjectItem(job, "id")->valuestring, "chat");
	/* the same numbers as the plan endpoint for the same request and device */
	http_do(&f->d, "POST", "/v1/plan/inference",
		"{\"model\":\"llama-3-8b\",\"device\":\"t4-16gb\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":"
		"\"bf16\",\"batch_size\":1,\"sequence_length\":4096}",
		J, NULL, &p);
	d = job_device(job, "t4-16gb");
	row = cJSON_GetArrayItem(cJSON_GetObjectItem(d, "results"), 0);
	assert_true(cJSON_GetArrayItem(row, 0)->valuedouble == 1);
	assert_int_equal(cJSON_IsTrue(cJSON_GetArrayItem(row, 1)),
			 cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(p.json, "fit"), "fits")));
	assert_true(cJSON_GetArrayItem(row, 2)->valuedouble ==
		    num(cJSON_GetObjectItem(p.json, "memory"), "total_bytes"));
	assert_true(cJSON_GetArrayItem(row, 3)->valuedouble ==
		    num(cJSON_GetObjectItem(p.json, "fit"), "headroom_bytes"));
	/* weights 16,060,522,496 + KV 536,870,912 + prefill workspace + CUDA context exceed the T4's 16 GiB
	 * (17,179,869,184 B) on one GPU; split over two (tensor parallel 2) they fit */
	assert_false(cJSON_IsTrue(cJSON_GetArrayItem(row, 1)));
	assert_true(cJSON_GetArrayItem(row, 2)->valuedouble > 17179869184.0);
	assert_true(num(d, "smallest_gpu_count") == 2);
	http_resp_free(&p);
	d = job_device(job, "h200-sxm-141gb");
	assert_true(num(d, "smallest_gpu_count") == 1);
	/* training: 16 bytes per parameter of Llama-2-7B plus activations; the optimizer state binds */
	job = cJSON_GetArrayItem(cJSON_GetObjectItem(r.json, "jobs"), 2);
	row = cJSON_GetArrayItem(cJSON_GetObjectItem(job_device(job, "h100-sxm5-80gb"), "results"), 0);
	assert_true(cJSON_GetArrayItem(row, 2)->valuedouble >= 6738415616.0 * 16);
	assert_string_equal(cJSON_GetArrayItem(row, 4)->valuestring, "optimizer_states");
	http_resp_free(&r);

	expect(f, "POST", "/v1/fit", "{\"jobs\":[]}", NULL, 422, "/jobs");
	/* a job that is not an object (found by Schemathesis: it crashed the daemon once) */
	expect(f, "POST", "/v1/fit", "{\"jobs\":[1]}", NULL, 422, "/jobs/0");
	/* two jobs with one id could not be told apart in the answer */
	expect(f, "POST", "/v1/fit",
	       "{\"jobs\":[{\"id\":\"a\",\"inference\":{\"model\":\"gpt2\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":"
	       "\"bf16\",\"batch_size\":1,\"sequence_length\":16}},{\"id\":\"a\",\"inference\":{\"model\":\"gpt2\","
	       "\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,\"sequence_length\":16}}]}",
	       NULL, 422, "/jobs/1/id");
	expect(f, "POST", "/v1/fit", "{\"jobs\":[\"chat\"]}", NULL, 422, "/jobs/0");
	/* the dtypes may be left out ("auto"); batch_size and sequence_length may not, and both are named */
	expect(f, "POST", "/v1/fit", "{\"jobs\":[{\"inference\":{\"model\":\"gpt2\"}}]}", NULL, 422,
	       "/jobs/0/inference/batch_size");
	expect(f, "POST", "/v1/fit",
	       "{\"jobs\":[{\"inference\":{\"model\":\"gpt2\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\","
	       "\"batch_size\":0,\"sequence_length\":1}}]}",
	       NULL, 422, "/jobs/0/inference/batch_size");
	expect(f, "POST", "/v1/fit",
	       "{\"jobs\":[{\"training\":{\"model\":\"nope\",\"precision\":\"mixed_bf16\",\"optimizer\":\"adamw\","
	       "\"micro_batch_size\":1,\"sequence_length\":1}}]}",
	       NULL, 404, "/jobs/0/training/model");
	expect(f, "POST", "/v1/fit",
	       "{\"jobs\":[{\"inference\":{\"model\":\"gpt2\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\","
	       "\"batch_size\":1,\"sequence_length\":1}}],\"devices\":[\"t4-16gb\",\"nope\"]}",
	       NULL, 404, "/devices/1");
	expect(f, "POST", "/v1/fit", "{\"jobs\":[{\"x\":1}]}", NULL, 422, "/jobs/0");
	expect(f, "POST", "/v1/fit",
	       "{\"jobs\":[{\"inference\":{\"model\":\"gpt2\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\","
	       "\"batch_size\":1,\"sequence_length\":1}}],\"gpu_counts\":[2,1]}",
	       NULL, 422, "/gpu_counts/1");
}

static void test_capacity(void **state)
{
	fixture *f = *state;
	http_resp r, t;
	const cJSON *it, *h200 = NULL;
	char hdr[200];

	http_do(&f->d, "GET", "/v1/capacity?model=llama-3-8b&sequence_length=4096", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	/* the plan endpoint's format rules: int4 is no KV cache format, "fp8" is fp8_e4m3 */
	expect(f, "GET", "/v1/capacity?model=llama-3-8b&sequence_length=4096&kv_cache_dtype=int4", NULL, NULL, 422,
	       "?kv_cache_dtype");
	expect(f, "GET", "/v1/capacity?model=llama-3-8b&sequence_length=4096&weight_dtype=fp64", NULL, NULL, 422,
	       "?weight_dtype");
	expect(f, "GET", "/v1/capacity?model=llama-3-8b&sequence_length=4096&kv_cache_dtype=fp8", NULL, NULL, 200, NULL);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "items")), stored_devices(f, "gpu"));
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(r.json, "items"))
	if (strcmp(cJSON_GetObjectItem(it, "device")->valuestring, "h200-sxm-141gb") == 0)
		h200 = it;
	assert_non_null(h200);
	/* weights 16,060,522,496 + KV 536,870,912 + context 552,402,944 per replica on 150,109,880,320 usable bytes */
	assert_true(num(h200, "weights_bytes") == 16060522496.0);
	assert_true(num(h200, "kv_cache_bytes_per_sequence") == 536870912.0);
	assert_true(num(h200, "replicas_per_gpu") == 8);
	/* one story (issue 15): the plan's max_batch_size for the same inputs, prefill workspace included; below the
	 * weights + KV + context count (150,109,880,320 - 16,060,522,496 - 552,402,944) / 536,870,912 = 248 */
	{
		http_resp p;

		http_do(&f->d, "POST", "/v1/plan/inference",
			"{\"model\":\"llama-3-8b\",\"device\":\"h200-sxm-141gb\",\"batch_size\":1,\"sequence_length\":4096}",
			J, NULL, &p);
		assert_int_equal(p.status, 200);
		assert_true(num(h200, "max_concurrent_sequences") ==
			    num(cJSON_GetObjectItem(p.json, "fit"), "max_batch_size"));
		http_resp_free(&p);
	}
	assert_true(num(h200, "max_concurrent_sequences") <
		    (double)((150109880320ULL - 16060522496ULL - 552402944ULL) / 536870912ULL));
	/* the decode bound comes from the roofline engine: the same figure as the inference plan's performance
	 * block, and above the memory-only formula 4.8e12 / (16,060,522,496 + 536,870,912) = 289.2 tokens/s,
	 * which also charges a full read of the embedding table (a lookup reads one row per token) */
	{
		http_resp p;

		http_do(&f->d, "POST", "/v1/plan/inference",
			"{\"model\":\"llama-3-8b\",\"device\":\"h200-sxm-141gb\",\"weight_dtype\":\"bf16\","
			"\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,\"sequence_length\":4096}",
			J, NULL, &p);
		assert_int_equal(p.status, 200);
		assert_true(ref_close(num(h200, "decode_tokens_per_second_per_sequence"),
				      num(cJSON_GetObjectItem(p.json, "performance"), "tokens_per_second_per_sequence"),
				      1e-12));
		http_resp_free(&p);
	}
	assert_true(num(h200, "decode_tokens_per_second_per_sequence") > 4.8e12 / (16060522496.0 + 536870912.0));
	assert_true(num(h200, "decode_tokens_per_second_per_sequence") < 4.8e12 / (16060522496.0 - 1050673152.0));
	assert_string_equal(cJSON_GetObjectItem(h200, "decode_bound")->valuestring, "memory");
	snprintf(hdr, sizeof(hdr), "If-None-Match: %s", r.etag);
	http_do(&f->d, "GET", "/v1/capacity?model=llama-3-8b&sequence_length=4096", NULL, NULL, hdr, &t);
	assert_int_equal(t.status, 304);
	http_resp_free(&t);
	http_resp_free(&r);
	http_do(&f->d, "GET", "/v1/capacity?model=llama-3-8b&sequence_length=4096&format=text&vendor=nvidia", NULL,
		NULL, NULL, &t);
	assert_int_equal(t.status, 200);
	assert_non_null(strstr(t.content_type, "text/plain"));
	/* the verdict first, then the table with GB and GiB labelled */
	assert_non_null(strstr(t.body, "\nFITS on "));
	assert_non_null(strstr(t.body, "capacity      replica (1 seq)"));
	assert_non_null(strstr(t.body, "h200-sxm-141gb               150 GB (140 GiB)"));
	assert_null(strstr(t.body, "mi300x"));
	http_resp_free(&t);
	/* a profile that cannot answer the plan (no peak for bf16) is left out, named, and the fleet still answers;
	 * the budget every row takes is said once */
	{
		http_resp p;
		const cJSON *w;
		bool said = false, budget = false;

		http_do(&f->d, "PUT", "/v1/devices/no-peak",
			"{\"name\":\"No peak\",\"vendor\":\"NVIDIA\",\"memory_bytes\":25769803776,"
			"\"memory_bandwidth_bytes_per_second\":1e12,\"peak_flops_per_second\":{\"int8\":1e14}}",
			J, AUTH, &p);
		assert_int_equal(p.status, 201);
		http_resp_free(&p);
		http_do(&f->d, "GET", "/v1/capacity?model=llama-3-8b&sequence_length=4096&limit=1000", NULL, NULL, NULL, &p);
		assert_int_equal(p.status, 200);
		assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(p.json, "items")), stored_devices(f, "gpu") - 1);
		cJSON_ArrayForEach(w, cJSON_GetObjectItem(p.json, "warnings"))
		{
			said |= strstr(w->valuestring, "device no-peak left out") != NULL;
			budget |= strstr(w->valuestring, "budget: each row's fit takes the whole capacity") != NULL;
		}
		assert_true(said);
		assert_true(budget);
		http_resp_free(&p);
	}
	expect(f, "GET", "/v1/capacity?sequence_length=4096", NULL, NULL, 422, "?model");
	expect(f, "GET", "/v1/capacity?model=llama-3-8b", NULL, NULL, 422, "?sequence_length");
	expect(f, "GET", "/v1/capacity?model=nope&sequence_length=1", NULL, NULL, 404, "?model");
	expect(f, "GET", "/v1/capacity?model=gpt2&sequence_length=1&format=xml", NULL, NULL, 422, "?format");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_device_crud, setup, teardown),
		cmocka_unit_test_setup_teardown(test_device_validation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_auth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_etag_304, setup, teardown),
		cmocka_unit_test_setup_teardown(test_model_crud, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plan_sees_model_writes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_capacity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_response_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(test_response_cache_off, setup, teardown),
	};
	int rc;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = cmocka_run_group_tests_name("store_http", tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}
