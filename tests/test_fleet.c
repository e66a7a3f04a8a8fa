/*
 * test_fleet.c: the fleet's two loops over HTTP (in-process daemon, libcurl). The node cache: reports from node
 * agents (PUT /v1/nodes/{name}) with their leases, and the extender with nodeCacheCapable: true, sent ExtenderArgs
 * with NodeNames only as kube-scheduler sends them (Nodes null: kubernetes/kubernetes pkg/scheduler/extender.go,
 * tests/ref/k8s/extender-v1.json), answering the same verdicts as with the Node objects of the same GPUs
 * (tests/ref/k8s/nodes.json), names unknown to the cache judged as unknown devices. The observations: vLLM 0.11.0's
 * own vllm:cache_config_info (tests/ref/engines/, the label set of its CacheConfig as prometheus_client prints it)
 * and SGLang 0.5.23's sglang:max_total_num_tokens posted through the API, in both forms (a person's plan, a node
 * agent's pod on a reported node), and the loop they close: a deliberately biased term (vLLM 0.11's engine took
 * 1.125 GiB more beyond the weights and the activation peak than memplan's model of that release has) is taken from
 * the observations of that release once three agree, visible in the plan's engine block (non_torch_bytes_from:
 * "observed", the count, the term that replaced the modelled ones) and its num_gpu_blocks; turned off by the request and
 * by the daemon; never a change to the device preset. The cache and the rule are also tested alone, with their
 * worked examples.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "../codec/mpc_json.h"
#include "../service/mps_nodes.h"
#include "../service/mps_observe.h"
#include "http_util.h"
#include "refs.h"

typedef http_fixture fixture;

static cJSON *nodes_ref, *pods_ref;
static char *vllm_metrics, *sglang_metrics;

static void post_json(fixture *f, const char *path, const cJSON *body, http_resp *r)
{
	char *text = cJSON_PrintUnformatted(body);

	http_do(&f->d, "POST", path, text, "application/json", NULL, r);
	cJSON_free(text);
}

static void put_json(fixture *f, const char *path, const char *body, http_resp *r)
{
	http_do(&f->d, "PUT", path, body, "application/json", NULL, r);
}

/* vLLM 0.11.0's cache_config_info exposition with num_gpu_blocks set. */
static char *vllm_text(unsigned blocks)
{
	const char *at = strstr(vllm_metrics, "NUMBLOCKS");
	size_t n = strlen(vllm_metrics) + 32;
	char *out = malloc(n);

	assert_non_null(at);
	snprintf(out, n, "%.*s%u%s", (int)(at - vllm_metrics), vllm_metrics, blocks, at + strlen("NUMBLOCKS"));
	return out;
}

/* ----- the node cache alone --------------------------------------------------------------------------------- */

static void test_node_cache(void **state)
{
	mps_node_cache *c = mps_node_cache_new(6000);
	mps_node_facts f, got, *rows = malloc(100 * sizeof(*rows));
	mp_error e = MP_ERROR_INIT;
	bool created, more;
	size_t n;

	(void)state;
	memset(&f, 0, sizeof(f));
	snprintf(f.product, sizeof(f.product), "NVIDIA H100 80GB HBM3");
	f.memory_mib = 81559;
	f.count = 8;
	f.lease_seconds = 300;
	/* 5,000 names: every one found again after the table grew, none other */
	for (int i = 0; i < 5000; i++) {
		snprintf(f.name, sizeof(f.name), "gpu-node-%05d", i);
		assert_int_equal(mps_node_cache_put(c, &f, 1000, &created, &e), MP_OK);
		assert_true(created);
	}
	assert_int_equal(mps_node_cache_size(c), 5000);
	for (int i = 0; i < 5000; i++) {
		char name[32];

		snprintf(name, sizeof(name), "gpu-node-%05d", i);
		assert_true(mps_node_cache_get(c, name, 1000, &got));
		assert_string_equal(got.name, name);
	}
	assert_false(mps_node_cache_get(c, "gpu-node-05000", 1000, &got));
	/* a renewal is not a creation; the lease runs from the last report */
	snprintf(f.name, sizeof(f.name), "gpu-node-00007");
	assert_int_equal(mps_node_cache_put(c, &f, 1200, &created, &e), MP_OK);
	assert_false(created);
	assert_true(mps_node_cache_get(c, "gpu-node-00007", 1499, &got));
	assert_int_equal(got.updated_at, 1200);
	assert_int_equal(got.expires_at, 1500);
	/* the others age out at 1300: a lookup at or after expires_at misses, and expire drops them */
	assert_false(mps_node_cache_get(c, "gpu-node-00008", 1300, &got));
	assert_true(mps_node_cache_get(c, "gpu-node-00008", 1299, &got));
	assert_int_equal(mps_node_cache_expire(c, 1300), 4999);
	assert_int_equal(mps_node_cache_size(c), 1);
	assert_true(mps_node_cache_remove(c, "gpu-node-00007"));
	assert_false(mps_node_cache_remove(c, "gpu-node-00007"));
	/* a full cache refuses a new name while no report has aged out */
	for (int i = 0; i < 6000; i++) {
		snprintf(f.name, sizeof(f.name), "n%d", i);
		assert_int_equal(mps_node_cache_put(c, &f, 2000, NULL, &e), MP_OK);
	}
	snprintf(f.name, sizeof(f.name), "one-too-many");
	assert_int_equal(mps_node_cache_put(c, &f, 2000, NULL, &e), MP_ETOOLARGE);
	assert_int_equal(mps_node_cache_put(c, &f, 2300, NULL, &e), MP_OK); /* the others aged out at 2300 */
	/* pages by name */
	assert_int_equal(mps_node_cache_page(c, 2300, NULL, rows, 100, &n, &more, &e), MP_OK);
	assert_int_equal(n, 1);
	assert_false(more);
	assert_string_equal(rows[0].name, "one-too-many");
	free(rows);
	mps_node_cache_free(c);
}

/* ----- the rule and the version names alone ------------------------------------------------------------------ */

static void test_rule(void **state)
{
	/* observe.h's worked example */
	mp_store_term_sample s[5] = { { 1207959552, 0, 2097152 }, { 1208221696, 0, 2097152 }, { 1207697408, 0, 2097152 } };
	mps_obs_correction c;
	char v[32];

	(void)state;
	mps_obs_correct(s, 3, &c);
	assert_true(c.applies);
	assert_int_equal(c.median_bytes, 1207959552);
	assert_int_equal(c.off_same_side, 3);
	mps_obs_correct(s, 2, &c);
	assert_false(c.applies);
	assert_non_null(strstr(c.why, "2 of the 3"));
	/* within a block of the model: not off */
	s[0].observed_bytes = 1048576;
	s[1].observed_bytes = -1048576;
	s[2].observed_bytes = 1900000000;
	mps_obs_correct(s, 3, &c);
	assert_false(c.applies);
	assert_int_equal(c.off_same_side, 1);
	/* four of five beyond on one side: 80%, applies; the median is an observation's */
	s[0].observed_bytes = 1000000000;
	s[1].observed_bytes = 1100000000;
	s[2].observed_bytes = 1200000000;
	s[3] = (mp_store_term_sample){ 1300000000, 0, 2097152 };
	s[4] = (mp_store_term_sample){ 0, 0, 2097152 };
	mps_obs_correct(s, 5, &c);
	assert_true(c.applies);
	assert_int_equal(c.median_bytes, 1100000000);
	mps_version_line("0.11.0", v, sizeof(v));
	assert_string_equal(v, "0.11");
	mps_version_line("v0.5.23.post1", v, sizeof(v));
	assert_string_equal(v, "0.5");
	mps_version_line("latest", v, sizeof(v));
	assert_string_equal(v, "");
	mps_version_line("12", v, sizeof(v));
	assert_string_equal(v, "");
	mps_image_version("vllm/vllm-openai:v0.11.0", v, sizeof(v));
	assert_string_equal(v, "0.11.0");
	mps_image_version("lmsysorg/sglang:v0.5.23-cu126", v, sizeof(v));
	assert_string_equal(v, "0.5.23-cu126");
	mps_image_version("registry:5000/vllm", v, sizeof(v));
	assert_string_equal(v, "");
	mps_image_version("vllm/vllm-openai:latest", v, sizeof(v));
	assert_string_equal(v, "");
}

/* ----- reports over HTTP --------------------------------------------------------------------------------- */

static void test_node_reports(void **state)
{
	fixture *f = *state;
	http_resp r;
	const cJSON *errs;

	put_json(f, "/v1/nodes/gpu-node-07.example",
		 "{\"product\":\"NVIDIA H100 80GB HBM3\",\"memory_mib\":81559,\"count\":8,\"lease_seconds\":120,"
		 "\"agent\":\"test\"}",
		 &r);
	assert_int_equal(r.status, 201);
	assert_string_equal(r.location, "/v1/nodes/gpu-node-07.example");
	assert_string_equal(cJSON_GetObjectItem(r.json, "name")->valuestring, "gpu-node-07.example");
	assert_int_equal(cJSON_GetObjectItem(r.json, "lease_seconds")->valueint, 120);
	assert_string_equal(cJSON_GetObjectItem(r.json, "mig_strategy")->valuestring, "none");
	http_resp_free(&r);
	put_json(f, "/v1/nodes/gpu-node-07.example", "{\"product\":\"NVIDIA H100 80GB HBM3\",\"memory_mib\":81559,\"count\":8}",
		 &r);
	assert_int_equal(r.status, 200); /* a renewal */
	assert_int_equal(cJSON_GetObjectItem(r.json, "lease_seconds")->valueint, MPS_NODE_LEASE_DEFAULT_SECONDS);
	http_resp_free(&r);
	http_do(&f->d, "GET", "/v1/nodes/gpu-node-07.example", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(cJSON_GetObjectItem(r.json, "count")->valueint, 8);
	http_resp_free(&r);
	/* every bad member at once, each named with what it allows */
	put_json(f, "/v1/nodes/n1", "{\"memory_mib\":0,\"count\":-1,\"lease_seconds\":5,\"profile\":\"Bad Id\",\"colour\":1,"
		 "\"mig_strategy\":\"mixed\",\"mig\":[{\"profile\":\"1g.10gb\",\"memory_mib\":9856}]}", &r);
	assert_int_equal(r.status, 422);
	errs = cJSON_GetObjectItem(r.json, "errors");
	assert_true(cJSON_GetArraySize(errs) >= 6);
	{
		const char *want[] = { "/memory_mib", "/count", "/lease_seconds", "/profile", "/colour", "/mig/0/count" };

		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
			const cJSON *e;
			bool seen = false;

			cJSON_ArrayForEach(e, errs)
			{
				seen |= strcmp(cJSON_GetObjectItem(e, "field")->valuestring, want[i]) == 0;
			}
			if (!seen)
				fail_msg("no problem named %s in %s", want[i], r.body);
		}
	}
	http_resp_free(&r);
	put_json(f, "/v1/nodes/n1", "{}", &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "/product");
	http_resp_free(&r);
	http_do(&f->d, "GET", "/v1/nodes?limit=1", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_true(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "items")) == 1);
	http_resp_free(&r);
	http_do(&f->d, "DELETE", "/v1/nodes/gpu-node-07.example", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 204);
	http_resp_free(&r);
	http_do(&f->d, "GET", "/v1/nodes/gpu-node-07.example", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 404);
	http_resp_free(&r);
}

/* ----- the extender with node names ------------------------------------------------------------------------ */

static const char *const all_nodes[] = { "h100-sxm-0", "h100-pcie-0", "a100-40-0",   "a100-80-0",   "l40s-0", "h200-0",
					 "mig-1g10gb-0", "t4-shared-0", "fake-h100-0", "mystery-0" };
#define NALL (sizeof(all_nodes) / sizeof(all_nodes[0]))

static const cJSON *fixture_node(const char *name)
{
	const cJSON *n;

	cJSON_ArrayForEach(n, cJSON_GetObjectItem(nodes_ref, "nodes"))
	{
		if (strcmp(cJSON_GetObjectItem(n, "name")->valuestring, name) == 0)
			return n;
	}
	fail_msg("no node fixture %s", name);
	return NULL;
}

static const char *label(const cJSON *n, const char *key)
{
	const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(n, "labels"), key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* What the node's agent reports of the same GPUs its GFD labels describe. */
static void report_like_labels(fixture *f, const char *name)
{
	const cJSON *n = fixture_node(name);
	cJSON *b = cJSON_CreateObject();
	const char *v;
	char path[300], *text;
	http_resp r;

	if ((v = label(n, "nvidia.com/gpu.product")))
		cJSON_AddStringToObject(b, "product", v);
	if ((v = label(n, "nvidia.com/gpu.memory")))
		cJSON_AddNumberToObject(b, "memory_mib", strtod(v, NULL));
	if ((v = label(n, "nvidia.com/gpu.count")))
		cJSON_AddNumberToObject(b, "count", strtod(v, NULL));
	if ((v = label(n, "nvidia.com/gpu.replicas")))
		cJSON_AddNumberToObject(b, "replicas", strtod(v, NULL));
	if ((v = label(n, "nvidia.com/gpu.sharing-strategy")))
		cJSON_AddStringToObject(b, "sharing_strategy", v);
	snprintf(path, sizeof(path), "/v1/nodes/%s", name);
	text = cJSON_PrintUnformatted(b);
	put_json(f, path, text, &r);
	assert_in_range(r.status, 200, 201);
	http_resp_free(&r);
	cJSON_free(text);
	cJSON_Delete(b);
}

static cJSON *args(const char *pod, bool names)
{
	cJSON *a = cJSON_CreateObject(), *list;
	const cJSON *p = cJSON_GetObjectItem(cJSON_GetObjectItem(pods_ref, "pods"), pod);

	cJSON_AddItemToObject(a, "Pod", cJSON_Duplicate(p, true));
	if (names) {
		/* kube-scheduler with nodeCacheCapable: true: a nil *NodeList marshals as null */
		cJSON_AddNullToObject(a, "Nodes");
		list = cJSON_AddArrayToObject(a, "NodeNames");
		for (size_t i = 0; i < NALL; i++)
			cJSON_AddItemToArray(list, cJSON_CreateString(all_nodes[i]));
		cJSON_AddItemToArray(list, cJSON_CreateString("never-reported"));
	} else {
		cJSON *items;

		list = cJSON_AddObjectToObject(a, "Nodes");
		items = cJSON_AddArrayToObject(list, "items");
		for (size_t i = 0; i < NALL; i++) {
			const cJSON *fx = fixture_node(all_nodes[i]);
			cJSON *n = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(n, "metadata");

			cJSON_AddStringToObject(meta, "name", all_nodes[i]);
			cJSON_AddItemToObject(meta, "labels", cJSON_Duplicate(cJSON_GetObjectItem(fx, "labels"), true));
			cJSON_AddItemToArray(items, n);
		}
		cJSON_AddNullToObject(a, "NodeNames");
	}
	return a;
}

static bool listed(const cJSON *arr, const char *name)
{
	const cJSON *v;

	cJSON_ArrayForEach(v, arr)
	{
		if (cJSON_IsString(v) && strcmp(v->valuestring, name) == 0)
			return true;
	}
	return false;
}

static void test_extender_names(void **state)
{
	fixture *f = *state;
	static const char *const pods[] = { "vllm-llama70b", "annotated-inference", "annotated-training", "plain",
					    "sglang-qwen72b" };

	for (size_t i = 0; i < NALL; i++)
		report_like_labels(f, all_nodes[i]);
	for (size_t p = 0; p < sizeof(pods) / sizeof(pods[0]); p++) {
		cJSON *by_names = args(pods[p], true), *by_labels = args(pods[p], false);
		http_resp rn, rl;
		const cJSON *names, *failed, *unres;
		size_t passed = 0;

		post_json(f, "/v1/k8s/filter", by_names, &rn);
		post_json(f, "/v1/k8s/filter", by_labels, &rl);
		assert_int_equal(rn.status, 200);
		assert_int_equal(rl.status, 200);
		assert_string_equal(cJSON_GetObjectItem(rn.json, "Error")->valuestring, "");
		/* what kube-scheduler takes with nodeCacheCapable: true: NodeNames, each one it sent */
		assert_true(cJSON_IsNull(cJSON_GetObjectItem(rn.json, "Nodes")));
		names = cJSON_GetObjectItem(rn.json, "NodeNames");
		failed = cJSON_GetObjectItem(rn.json, "FailedNodes");
		unres = cJSON_GetObjectItem(rn.json, "FailedAndUnresolvableNodes");
		/* the same verdicts as the labels give, node by node */
		for (size_t i = 0; i < NALL; i++) {
			const char *n = all_nodes[i];
			bool pass = listed(names, n);

			assert_int_equal(pass, listed(cJSON_GetObjectItem(rl.json, "NodeNames"), n));
			assert_int_equal(cJSON_GetObjectItem(failed, n) != NULL,
					 cJSON_GetObjectItem(cJSON_GetObjectItem(rl.json, "FailedNodes"), n) != NULL);
			assert_int_equal(cJSON_GetObjectItem(unres, n) != NULL,
					 cJSON_GetObjectItem(cJSON_GetObjectItem(rl.json, "FailedAndUnresolvableNodes"), n) !=
						 NULL);
			passed += pass;
		}
		/* a name no agent reported: a node of unknown device, which passes (--k8s-unknown-device pass) */
		assert_true(listed(names, "never-reported"));
		assert_int_equal((size_t)cJSON_GetArraySize(names), passed + 1);
		if (strcmp(pods[p], "vllm-llama70b") == 0) {
			/* Llama-3.1-70B at TP 4: not on a node of 2 GPUs, nor on a 10 GB MIG slice */
			assert_non_null(cJSON_GetObjectItem(unres, "h100-pcie-0"));
			assert_non_null(cJSON_GetObjectItem(unres, "mig-1g10gb-0"));
			assert_true(listed(names, "h100-sxm-0"));
		}
		http_resp_free(&rn);
		http_resp_free(&rl);
		/* prioritize: the same scores, each name sent once, in order */
		post_json(f, "/v1/k8s/prioritize", by_names, &rn);
		post_json(f, "/v1/k8s/prioritize", by_labels, &rl);
		assert_int_equal(rn.status, 200);
		assert_int_equal(cJSON_GetArraySize(rn.json), (int)NALL + 1);
		for (size_t i = 0; i < NALL; i++) {
			const cJSON *a = cJSON_GetArrayItem(rn.json, (int)i), *b = cJSON_GetArrayItem(rl.json, (int)i);

			assert_string_equal(cJSON_GetObjectItem(a, "Host")->valuestring, all_nodes[i]);
			assert_int_equal(cJSON_GetObjectItem(a, "Score")->valueint, cJSON_GetObjectItem(b, "Score")->valueint);
		}
		http_resp_free(&rn);
		http_resp_free(&rl);
		cJSON_Delete(by_names);
		cJSON_Delete(by_labels);
	}
	{
		/* the cache wins over stale labels: a node labelled L40S whose agent reports an H100 SXM */
		cJSON *a = args("vllm-llama70b", false);
		http_resp r;

		put_json(f, "/v1/nodes/l40s-0", "{\"product\":\"NVIDIA H100 80GB HBM3\",\"memory_mib\":81559,\"count\":8}", &r);
		http_resp_free(&r);
		post_json(f, "/v1/k8s/filter", a, &r);
		assert_true(listed(cJSON_GetObjectItem(r.json, "NodeNames"), "l40s-0"));
		http_resp_free(&r);
		cJSON_Delete(a);
		report_like_labels(f, "l40s-0");
	}
	{
		/* MIG, mixed strategy: a pod asking for nvidia.com/mig-1g.10gb is judged on that slice's memory, and a
		 * node without that profile has none of it */
		cJSON *a = cJSON_CreateObject(), *names;
		http_resp r;

		put_json(f, "/v1/nodes/mig-mixed-0",
			 "{\"product\":\"NVIDIA A100 80GB PCIe\",\"memory_mib\":81920,\"count\":1,\"mig_strategy\":\"mixed\","
			 "\"mig\":[{\"profile\":\"1g.10gb\",\"memory_mib\":9728,\"count\":7}]}",
			 &r);
		http_resp_free(&r);
		put_json(f, "/v1/nodes/mig-other-0",
			 "{\"product\":\"NVIDIA A100 80GB PCIe\",\"memory_mib\":81920,\"count\":1,\"mig_strategy\":\"mixed\","
			 "\"mig\":[{\"profile\":\"3g.40gb\",\"memory_mib\":40192,\"count\":2}]}",
			 &r);
		http_resp_free(&r);
		cJSON_AddItemToObject(a, "Pod", cJSON_Parse(
			"{\"metadata\":{\"name\":\"small\",\"namespace\":\"x\",\"annotations\":{\"memplan.io/model\":"
			"\"qwen2.5-0.5b\",\"memplan.io/sequence-length\":\"4096\"}},\"spec\":{\"containers\":[{\"name\":\"c\","
			"\"resources\":{\"limits\":{\"nvidia.com/mig-1g.10gb\":\"1\"}}}]}}"));
		cJSON_AddNullToObject(a, "Nodes");
		names = cJSON_AddArrayToObject(a, "NodeNames");
		cJSON_AddItemToArray(names, cJSON_CreateString("mig-mixed-0"));
		cJSON_AddItemToArray(names, cJSON_CreateString("mig-other-0"));
		post_json(f, "/v1/k8s/filter", a, &r);
		assert_int_equal(r.status, 200);
		assert_true(listed(cJSON_GetObjectItem(r.json, "NodeNames"), "mig-mixed-0"));
		assert_non_null(strstr(cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "FailedAndUnresolvableNodes"),
							   "mig-other-0")->valuestring, "the node has 0 nvidia.com/mig-1g.10gb"));
		http_resp_free(&r);
		cJSON_Delete(a);
	}
	{
		/* a report of count 0 has no GPU to give (it passed any pod: 0 read as "not stated"); a report naming a
		 * profile the catalog lacks is refused, naming it (it made the node an unknown device, passed by policy) */
		cJSON *a = cJSON_CreateObject(), *names;
		http_resp r;

		put_json(f, "/v1/nodes/zero-0", "{\"product\":\"NVIDIA L40S\",\"memory_mib\":46068,\"count\":0}", &r);
		assert_in_range(r.status, 200, 201);
		http_resp_free(&r);
		put_json(f, "/v1/nodes/wrong-profile-0", "{\"profile\":\"measured-nope\",\"count\":2}", &r);
		assert_int_equal(r.status, 422);
		assert_string_equal(http_problem_field(&r), "/profile");
		assert_non_null(strstr(r.body, "not a stored device"));
		http_resp_free(&r);
		cJSON_AddItemToObject(a, "Pod", cJSON_Parse(
			"{\"metadata\":{\"name\":\"small\",\"namespace\":\"x\",\"annotations\":{\"memplan.io/model\":"
			"\"qwen2.5-0.5b\",\"memplan.io/sequence-length\":\"4096\"}},\"spec\":{\"containers\":[{\"name\":\"c\","
			"\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}"));
		cJSON_AddNullToObject(a, "Nodes");
		names = cJSON_AddArrayToObject(a, "NodeNames");
		cJSON_AddItemToArray(names, cJSON_CreateString("zero-0"));
		post_json(f, "/v1/k8s/filter", a, &r);
		assert_int_equal(r.status, 200);
		assert_false(listed(cJSON_GetObjectItem(r.json, "NodeNames"), "zero-0"));
		assert_non_null(strstr(cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "FailedAndUnresolvableNodes"),
							   "zero-0")->valuestring, "the node has 0 nvidia.com/gpu"));
		http_resp_free(&r);
		cJSON_Delete(a);
	}
	{
		/* the metrics count the nodes judged by report, and the names no report was held for */
		http_resp r;

		http_do(&f->d, "GET", "/metrics", NULL, NULL, NULL, &r);
		assert_non_null(strstr(r.body, "memplan_k8s_cached_nodes_total"));
		assert_non_null(strstr(r.body, "memplan_k8s_unreported_nodes_total"));
		assert_non_null(strstr(r.body, "memplan_nodes_reported"));
		/* a report's NVML name is DCGM's modelName, whatever profile it matched */
		assert_non_null(strstr(r.body, "modelName=\"NVIDIA H100 80GB HBM3\""));
		http_resp_free(&r);
	}
}

/* ----- the observation loop ------------------------------------------------------------------------------- */

#define PLAN "{\"model\":\"llama-3.1-8b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":1," \
	     "\"sequence_length\":8192,\"device\":\"h100-sxm5-80gb\",\"gpu_memory_utilization\":0.9"

/* The engine block's predicted figures of the plan (owned by r), on the release line observed (vLLM 0.11). */
static const cJSON *predicted(fixture *f, const char *extra, http_resp *r)
{
	char body[512];

	snprintf(body, sizeof(body), PLAN ",\"engine\":\"vllm\",\"engine_version\":\"0.11\"%s}", extra);
	http_do(&f->d, "POST", "/v1/plan/inference", body, "application/json", NULL, r);
	assert_int_equal(r->status, 200);
	return cJSON_GetObjectItem(cJSON_GetObjectItem(r->json, "engine"), "predicted");
}

static void observe(fixture *f, const char *key, unsigned blocks, int want, http_resp *r)
{
	cJSON *b = cJSON_Parse("{\"engine\":\"vllm\",\"engine_version\":\"0.11.0\",\"plan\":" PLAN "}}");
	char *text = vllm_text(blocks);

	cJSON_AddStringToObject(b, "key", key);
	cJSON_AddStringToObject(b, "metrics", text);
	post_json(f, "/v1/observations", b, r);
	if (r->status != want)
		fail_msg("POST /v1/observations %s: %ld %s", key, r->status, r->body);
	free(text);
	cJSON_Delete(b);
}

static void test_observation_loop(void **state)
{
	fixture *f = *state;
	http_resp r, dev0, dev1;
	const cJSON *p, *o, *c;
	uint64_t model_blocks;
	unsigned engine_blocks;

	http_do(&f->d, "GET", "/v1/devices/h100-sxm5-80gb", NULL, NULL, NULL, &dev0);
	/* the model: Llama-3.1-8B on an H100 SXM5 at 0.9 with vLLM 0.11's terms (160 MiB outside PyTorch in the budget,
	 * the CUDA context outside it) */
	p = predicted(f, "", &r);
	model_blocks = (uint64_t)cJSON_GetObjectItem(p, "num_gpu_blocks")->valuedouble;
	assert_int_equal(model_blocks, 28277);
	assert_null(cJSON_GetObjectItem(p, "non_torch_bytes_from"));
	http_resp_free(&r);
	/* the engine: 576 blocks fewer (1.125 GiB more than the model has beyond the weights and the activation peak) */
	engine_blocks = (unsigned)model_blocks - 576;
	observe(f, "pod-a/vllm/0", engine_blocks, 201, &r);
	o = cJSON_GetObjectItem(r.json, "observation");
	assert_string_equal(cJSON_GetObjectItem(o, "figure")->valuestring, "num_gpu_blocks");
	assert_int_equal(cJSON_GetObjectItem(o, "reported")->valuedouble, engine_blocks);
	assert_int_equal(cJSON_GetObjectItem(o, "predicted")->valuedouble, model_blocks);
	assert_string_equal(cJSON_GetObjectItem(o, "version_line")->valuestring, "0.11");
	/* requested - (blocks + 1/2) x 2 MiB - weights - activation peak: 76,540,929,638 - 27,701.5 x 2,097,152 -
	 * 16,094,076,928 - 977,338,368 */
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "term"), "observed_bytes")->valuedouble, 1375258214);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "term"), "modelled_bytes")->valuedouble, 167772160);
	c = cJSON_GetObjectItem(r.json, "correction");
	assert_false(cJSON_IsTrue(cJSON_GetObjectItem(c, "applies")));
	http_resp_free(&r);
	/* the same key again: the same row, not a second observation */
	observe(f, "pod-a/vllm/0", engine_blocks, 200, &r);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r.json, "stored_before")));
	http_resp_free(&r);
	observe(f, "pod-b/vllm/0", engine_blocks + 1, 201, &r);
	http_resp_free(&r);
	p = predicted(f, "", &r);
	assert_int_equal(cJSON_GetObjectItem(p, "num_gpu_blocks")->valuedouble, model_blocks); /* two: not yet */
	http_resp_free(&r);
	observe(f, "pod-c/vllm/0", engine_blocks - 1, 201, &r);
	c = cJSON_GetObjectItem(r.json, "correction");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(c, "applies")));
	assert_int_equal(cJSON_GetObjectItem(c, "observations")->valueint, 3);
	http_resp_free(&r);
	/* three agree: the plan takes their median for the term, says so, and predicts what the engine got */
	p = predicted(f, "", &r);
	assert_string_equal(cJSON_GetObjectItem(p, "non_torch_bytes_from")->valuestring, "observed");
	assert_int_equal(cJSON_GetObjectItem(p, "non_torch_observations")->valueint, 3);
	assert_int_equal(cJSON_GetObjectItem(p, "non_torch_bytes")->valuedouble, 1375258214);
	assert_int_equal(cJSON_GetObjectItem(p, "non_torch_modelled_bytes")->valuedouble, 167772160);
	assert_int_equal(cJSON_GetObjectItem(p, "num_gpu_blocks")->valuedouble, engine_blocks);
	{
		/* the observed term stands for the modelled ones it covers (non_torch); the profile's peak stays */
		char *t = cJSON_PrintUnformatted(cJSON_GetObjectItem(p, "terms"));

		assert_non_null(strstr(t, "\"term\":\"observed_non_torch\",\"bytes\":1375258214,\"in_budget\":true"));
		assert_null(strstr(t, "\"term\":\"non_torch\""));
		assert_non_null(strstr(t, "\"term\":\"profile_activation\""));
		cJSON_free(t);
	}
	{
		char *w = cJSON_PrintUnformatted(cJSON_GetObjectItem(r.json, "warnings"));

		assert_non_null(strstr(w, "the median of 3 observations of vllm 0.11 on h100-sxm5-80gb"));
		cJSON_free(w);
	}
	http_resp_free(&r);
	/* another release line's plans keep the model's terms: the observations are of 0.11 */
	http_do(&f->d, "POST", "/v1/plan/inference", PLAN ",\"engine\":\"vllm\",\"engine_version\":\"0.33\"}",
		"application/json", NULL, &r);
	assert_int_equal(r.status, 200);
	assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "engine"), "predicted"),
					"non_torch_bytes_from"));
	http_resp_free(&r);
	/* an observation of 0.11.0 cannot be set beside a plan of 0.33 */
	{
		cJSON *b = cJSON_Parse("{\"engine\":\"vllm\",\"engine_version\":\"0.11.0\",\"key\":\"pod-d/vllm/0\",\"plan\":" PLAN
				       ",\"engine_version\":\"0.33\"}}");
		char *text = vllm_text(engine_blocks);

		cJSON_AddStringToObject(b, "metrics", text);
		post_json(f, "/v1/observations", b, &r);
		assert_int_equal(r.status, 422);
		assert_string_equal(http_problem_field(&r), "/plan/engine_version");
		http_resp_free(&r);
		free(text);
		cJSON_Delete(b);
	}
	/* a request can keep the model's terms */
	p = predicted(f, ",\"observed_terms\":false", &r);
	assert_int_equal(cJSON_GetObjectItem(p, "num_gpu_blocks")->valuedouble, model_blocks);
	assert_null(cJSON_GetObjectItem(p, "non_torch_bytes_from"));
	http_resp_free(&r);
	/* and so can the daemon (--observed-terms off, set before it serves: a body not answered before, so the
	 * response cache has none) */
	mps_observed_terms_set(f->d.svc, false);
	p = predicted(f, ",\"chunked_prefill\":true", &r);
	assert_int_equal(cJSON_GetObjectItem(p, "num_gpu_blocks")->valuedouble, model_blocks);
	http_resp_free(&r);
	mps_observed_terms_set(f->d.svc, true);
	/* the preset is the preset */
	http_do(&f->d, "GET", "/v1/devices/h100-sxm5-80gb", NULL, NULL, NULL, &dev1);
	assert_string_equal(dev0.body, dev1.body);
	http_resp_free(&dev0);
	http_resp_free(&dev1);
	/* memplan's own error, in the listing and in /metrics */
	http_do(&f->d, "GET", "/v1/observations?engine=vllm", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "items")), 3);
	o = cJSON_GetArrayItem(cJSON_GetObjectItem(r.json, "errors"), 0);
	assert_string_equal(cJSON_GetObjectItem(o, "model")->valuestring, "llama-3.1-8b");
	assert_int_equal(cJSON_GetObjectItem(o, "observations")->valueint, 3);
	/* (28,277 - 27,701) / 27,701 */
	assert_float_equal(cJSON_GetObjectItem(o, "median_error_ratio")->valuedouble, 576.0 / 27701.0, 1e-12);
	http_resp_free(&r);
	http_do(&f->d, "GET", "/metrics", NULL, NULL, NULL, &r);
	assert_non_null(strstr(r.body, "memplan_observation_error_ratio{engine=\"vllm\",engine_version=\"0.11.0\","
				       "device=\"h100-sxm5-80gb\",model=\"llama-3.1-8b\",figure=\"num_gpu_blocks\"}"));
	assert_non_null(strstr(r.body, "memplan_observed_term_applied{engine=\"vllm\",version_line=\"0.11\","
				       "device=\"h100-sxm5-80gb\",term=\"non_torch_bytes\"} 1"));
	http_resp_free(&r);
}

/* The node agent's form: the pod as the kubelet lists it, on a reported node. */
static void test_observation_from_pod(void **state)
{
	fixture *f = *state;
	http_resp r;
	cJSON *b;
	char *text = vllm_text(27781);
	static const char pod[] =
		"{\"metadata\":{\"name\":\"llama8b-0\",\"namespace\":\"inference\",\"uid\":\"9f1c\"},\"spec\":{\"nodeName\":"
		"\"gpu-node-08\",\"containers\":[{\"name\":\"vllm\",\"image\":\"vllm/vllm-openai:v0.11.0\",\"args\":["
		"\"--model\",\"meta-llama/Llama-3.1-8B-Instruct\",\"--max-model-len\",\"8192\"],\"resources\":{\"limits\":"
		"{\"nvidia.com/gpu\":\"1\"}}}]}}";

	put_json(f, "/v1/nodes/gpu-node-08", "{\"product\":\"NVIDIA H100 80GB HBM3\",\"memory_mib\":81559,\"count\":8}", &r);
	http_resp_free(&r);
	b = cJSON_CreateObject();
	cJSON_AddItemToObject(b, "pod", cJSON_Parse(pod));
	cJSON_AddStringToObject(b, "node", "gpu-node-08");
	cJSON_AddStringToObject(b, "metrics", text);
	cJSON_AddStringToObject(b, "key", "9f1c/vllm/0");
	post_json(f, "/v1/observations", b, &r);
	if (r.status != 201)
		fail_msg("%ld %s", r.status, r.body);
	{
		const cJSON *o = cJSON_GetObjectItem(r.json, "observation");

		assert_string_equal(cJSON_GetObjectItem(o, "model")->valuestring, "llama-3.1-8b");
		assert_string_equal(cJSON_GetObjectItem(o, "device")->valuestring, "h100-sxm5-80gb");
		assert_string_equal(cJSON_GetObjectItem(o, "engine_version")->valuestring, "0.11.0"); /* the image tag */
		assert_string_equal(cJSON_GetObjectItem(o, "pod")->valuestring, "llama8b-0");
		assert_string_equal(cJSON_GetObjectItem(o, "namespace")->valuestring, "inference");
		assert_string_equal(cJSON_GetObjectItem(o, "node")->valuestring, "gpu-node-08");
		assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "settings"), "sequence_length")->valueint,
				 8192);
	}
	http_resp_free(&r);
	/* a node no agent reported, a pod that serves nothing memplan reads, a text without the figure */
	cJSON_ReplaceItemInObject(b, "node", cJSON_CreateString("gpu-node-99"));
	cJSON_ReplaceItemInObject(b, "key", cJSON_CreateString("other"));
	post_json(f, "/v1/observations", b, &r);
	assert_int_equal(r.status, 404);
	assert_string_equal(http_problem_field(&r), "/node");
	http_resp_free(&r);
	cJSON_ReplaceItemInObject(b, "node", cJSON_CreateString("gpu-node-08"));
	cJSON_ReplaceItemInObject(b, "pod", cJSON_Parse("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[{"
							 "\"name\":\"app\",\"image\":\"nginx:1\"}]}}"));
	post_json(f, "/v1/observations", b, &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "/pod");
	http_resp_free(&r);
	cJSON_ReplaceItemInObject(b, "pod", cJSON_Parse(pod));
	cJSON_ReplaceItemInObject(b, "metrics", cJSON_CreateString("# HELP vllm:num_requests_running x\n"));
	post_json(f, "/v1/observations", b, &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "/metrics");
	http_resp_free(&r);
	cJSON_DeleteItemFromObject(b, "node");
	post_json(f, "/v1/observations", b, &r);
	assert_int_equal(r.status, 422);
	http_resp_free(&r);
	cJSON_Delete(b);
	free(text);
}

/* SGLang 0.5.23's pool gauge measures the memory taken before the weights. */
static void test_observation_sglang(void **state)
{
	fixture *f = *state;
	http_resp r;
	cJSON *b = cJSON_Parse("{\"engine\":\"sglang\",\"engine_version\":\"0.5.23\",\"plan\":{\"model\":\"llama-3.1-8b\","
			       "\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,\"sequence_length\":8192,"
			       "\"device\":\"h100-sxm5-80gb\",\"mem_fraction_static\":0.85}}");
	const cJSON *o, *t;

	cJSON_AddStringToObject(b, "metrics", sglang_metrics);
	post_json(f, "/v1/observations", b, &r);
	if (r.status != 201)
		fail_msg("%ld %s", r.status, r.body);
	o = cJSON_GetObjectItem(r.json, "observation");
	assert_string_equal(cJSON_GetObjectItem(o, "figure")->valuestring, "kv_cache_tokens");
	assert_int_equal(cJSON_GetObjectItem(o, "reported")->valuedouble, 123456);
	t = cJSON_GetObjectItem(o, "term");
	assert_string_equal(cJSON_GetObjectItem(t, "name")->valuestring, "context_bytes");
	/* one token of all 32 layers is 131,072 bytes; at 0.85 a token is 154,202 bytes of the memory before them */
	assert_int_equal(cJSON_GetObjectItem(t, "resolution_bytes")->valuedouble, 154202);
	http_resp_free(&r);
	cJSON_Delete(b);
}

static int setup(void **state)
{
	nodes_ref = ref_json("k8s/nodes.json");
	pods_ref = ref_json("k8s/pods.json");
	vllm_metrics = ref_text("engines/vllm-0.11.0-cache-config-info.prom");
	sglang_metrics = ref_text("engines/sglang-0.5.23-max-total-num-tokens.prom");
	return http_fixture_setup(state);
}

static int teardown(void **state)
{
	cJSON_Delete(nodes_ref);
	cJSON_Delete(pods_ref);
	free(vllm_metrics);
	free(sglang_metrics);
	return http_fixture_teardown(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_node_cache),	     cmocka_unit_test(test_rule),
		cmocka_unit_test(test_node_reports),	     cmocka_unit_test(test_extender_names),
		cmocka_unit_test(test_observation_loop),     cmocka_unit_test(test_observation_from_pod),
		cmocka_unit_test(test_observation_sglang),
	};
	int rc;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = cmocka_run_group_tests_name("fleet", tests, setup, teardown);
	curl_global_cleanup();
	return rc;
}
