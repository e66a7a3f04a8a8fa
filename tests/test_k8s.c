/*
 * test_k8s.c: the kube-scheduler extender over HTTP (in-process daemon, libcurl). ExtenderArgs are built from real
 * GPU Feature Discovery label sets (tests/ref/k8s/nodes.json) and pods (tests/ref/k8s/pods.json) and replayed
 * through /v1/k8s/filter and /v1/k8s/prioritize. Checked: the exact Go key spelling of the answers
 * (tests/ref/k8s/extender-v1.json), names a subset of those sent and each node answered once, the passing Node
 * objects echoed unchanged, integer scores 0-10, each verdict against the plan endpoint's own figure and the
 * capacity rule (the profile's capacity, at most the gpu.memory label, split among replicas), the reasons, the
 * fail-open setting, the alias table and its memory fallback, the pod errors naming their annotation or argument,
 * the large-body limit of the extender's routes, and the metrics.
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

#include "../codec/mpc_json.h"
#include "../codec/mpc_k8s.h"
#include "../service/mps_k8s.h"
#include "../codec/mpc_slurm.h"
#include "../daemon/config.h"
#include "http_util.h"
#include "refs.h"

typedef http_fixture fixture;

static cJSON *nodes_ref, *pods_ref, *types_ref;

/* ----- building ExtenderArgs from the fixtures ------------------------------------------------------------ */

static const cJSON *node_fixture(const char *name)
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

/* A v1.Node as kube-scheduler sends it: metadata (name, labels), status.allocatable, a condition and an address
 * (which the answer must echo unchanged). */
static cJSON *node_object(const char *name)
{
	const cJSON *fx = node_fixture(name);
	cJSON *n = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(n, "metadata"), *status, *alloc, *c, *cond;

	cJSON_AddStringToObject(meta, "name", name);
	cJSON_AddStringToObject(meta, "uid", "3b1d2c1e-0000-4000-8000-000000000000");
	cJSON_AddItemToObject(meta, "labels", cJSON_Duplicate(cJSON_GetObjectItem(fx, "labels"), true));
	cJSON_AddStringToObject(cJSON_GetObjectItem(meta, "labels"), "kubernetes.io/hostname", name);
	status = cJSON_AddObjectToObject(n, "status");
	alloc = cJSON_AddObjectToObject(status, "allocatable");
	cJSON_AddStringToObject(alloc, "cpu", "96");
	cJSON_AddStringToObject(alloc, "memory", "2113311516Ki");
	if (cJSON_GetObjectItem(fx, "allocatable"))
		cJSON_AddStringToObject(alloc, "nvidia.com/gpu", cJSON_GetObjectItem(fx, "allocatable")->valuestring);
	c = cJSON_AddArrayToObject(status, "conditions");
	cond = cJSON_CreateObject();
	cJSON_AddStringToObject(cond, "type", "Ready");
	cJSON_AddStringToObject(cond, "status", "True");
	cJSON_AddItemToArray(c, cond);
	cJSON_AddItemToObject(status, "images", cJSON_Parse("[{\"names\":[\"nvcr.io/nvidia/k8s/dcgm-exporter\"],\"sizeBytes\":1234567890123}]"));
	return n;
}

static cJSON *args_for(const char *pod, const char *const *nodes, size_t n)
{
	cJSON *a = cJSON_CreateObject(), *list, *items;
	const cJSON *p = cJSON_GetObjectItem(cJSON_GetObjectItem(pods_ref, "pods"), pod);

	if (p == NULL)
		fail_msg("no pod fixture %s", pod);
	cJSON_AddItemToObject(a, "Pod", cJSON_Duplicate(p, true));
	list = cJSON_AddObjectToObject(a, "Nodes");
	cJSON_AddObjectToObject(list, "metadata");
	items = cJSON_AddArrayToObject(list, "items");
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(items, node_object(nodes[i]));
	cJSON_AddNullToObject(a, "NodeNames");
	return a;
}

static void post_json(fixture *f, const char *path, const cJSON *body, http_resp *r)
{
	char *text = cJSON_PrintUnformatted(body);

	http_do(&f->d, "POST", path, text, "application/json", NULL, r);
	cJSON_free(text);
}

static const char *const all_nodes[] = { "h100-sxm-0", "h100-pcie-0", "a100-40-0",   "a100-80-0",   "l40s-0",  "h200-0",
					 "mig-1g10gb-0", "t4-shared-0", "fake-h100-0", "gke-h100-0", "mystery-0" };
#define NALL (sizeof(all_nodes) / sizeof(all_nodes[0]))

/* The answer's keys are exactly the Go field names of the type (tests/ref/k8s/extender-v1.json). */
static void check_keys(const cJSON *o, const char *type)
{
	const cJSON *want = cJSON_GetObjectItem(types_ref, type), *k;
	int n = 0;

	assert_true(cJSON_IsObject(o));
	cJSON_ArrayForEach(k, want)
	{
		assert_non_null(cJSON_GetObjectItemCaseSensitive(o, k->valuestring));
		n++;
	}
	assert_int_equal(cJSON_GetArraySize(o), n);
}

/* Filters pod on nodes; checks the protocol's invariants; returns the answer (owned by r). */
static const cJSON *filter(fixture *f, const char *pod, const char *const *nodes, size_t n, http_resp *r)
{
	cJSON *a = args_for(pod, nodes, n);
	const cJSON *res, *names, *items, *failed, *unres;

	post_json(f, "/v1/k8s/filter", a, r);
	assert_int_equal(r->status, 200);
	assert_string_equal(r->content_type, "application/json");
	res = r->json;
	check_keys(res, "ExtenderFilterResult");
	names = cJSON_GetObjectItemCaseSensitive(res, "NodeNames");
	items = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(res, "Nodes"), "items");
	failed = cJSON_GetObjectItemCaseSensitive(res, "FailedNodes");
	unres = cJSON_GetObjectItemCaseSensitive(res, "FailedAndUnresolvableNodes");
	assert_true(cJSON_IsObject(failed) && cJSON_IsObject(unres));
	assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(res, "Error")));
	if (cJSON_GetObjectItemCaseSensitive(res, "Error")->valuestring[0] == '\0') {
		const cJSON *sent = cJSON_GetObjectItem(cJSON_GetObjectItem(a, "Nodes"), "items");

		assert_true(cJSON_IsArray(names) && cJSON_IsArray(items));
		assert_int_equal(cJSON_GetArraySize(names), cJSON_GetArraySize(items));
		/* every node sent is answered exactly once; the names are a subset of those sent */
		assert_int_equal(cJSON_GetArraySize(names) + cJSON_GetArraySize(failed) + cJSON_GetArraySize(unres), (int)n);
		for (int i = 0; i < cJSON_GetArraySize(names); i++) {
			const char *nm = cJSON_GetArrayItem(names, i)->valuestring;
			const cJSON *obj = cJSON_GetArrayItem(items, i), *s;
			bool found = false;

			assert_null(cJSON_GetObjectItemCaseSensitive(failed, nm));
			assert_null(cJSON_GetObjectItemCaseSensitive(unres, nm));
			cJSON_ArrayForEach(s, sent)
			{
				if (strcmp(cJSON_GetObjectItem(cJSON_GetObjectItem(s, "metadata"), "name")->valuestring, nm) == 0) {
					/* the Node object that passed comes back as it was sent */
					assert_true(cJSON_Compare(s, obj, true));
					found = true;
				}
			}
			assert_true(found);
		}
	} else {
		assert_true(cJSON_IsNull(names));
		assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(res, "Nodes")));
	}
	cJSON_Delete(a);
	return res;
}

enum { PASS, FAILED, UNRES };

static int verdict(const cJSON *res, const char *node)
{
	const cJSON *n;

	cJSON_ArrayForEach(n, cJSON_GetObjectItem(res, "NodeNames"))

	{
		if (strcmp(n->valuestring, node) == 0)
			return PASS;
	}
	if (cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItem(res, "FailedNodes"), node))
		return FAILED;
	if (cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItem(res, "FailedAndUnresolvableNodes"), node))
		return UNRES;
	fail_msg("node %s is not in the answer", node);
	return -1;
}

static const char *reason(const cJSON *res, const char *node)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItem(res, "FailedAndUnresolvableNodes"), node);

	if (v == NULL)
		v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItem(res, "FailedNodes"), node);
	return v ? v->valuestring : "";
}

/* Prioritize: one integer score 0..10 per node sent, in order; returns the answer (owned by r). */
static const cJSON *prioritize(fixture *f, const char *pod, const char *const *nodes, size_t n, http_resp *r)
{
	cJSON *a = args_for(pod, nodes, n);
	const cJSON *h;
	size_t i = 0;

	post_json(f, "/v1/k8s/prioritize", a, r);
	assert_int_equal(r->status, 200);
	assert_true(cJSON_IsArray(r->json));
	assert_int_equal(cJSON_GetArraySize(r->json), (int)n);
	cJSON_ArrayForEach(h, r->json)
	{
		const cJSON *score = cJSON_GetObjectItemCaseSensitive(h, "Score");

		check_keys(h, "HostPriority");
		assert_string_equal(cJSON_GetObjectItemCaseSensitive(h, "Host")->valuestring, nodes[i++]);
		assert_true(cJSON_IsNumber(score) && score->valuedouble == floor(score->valuedouble));
		assert_true(score->valuedouble >= 0 && score->valuedouble <= 10);
	}
	cJSON_Delete(a);
	return r->json;
}

static int score_of(const cJSON *list, const char *node)
{
	const cJSON *h;

	cJSON_ArrayForEach(h, list)

	{
		if (strcmp(cJSON_GetObjectItem(h, "Host")->valuestring, node) == 0)
			return (int)cJSON_GetObjectItem(h, "Score")->valuedouble;
	}
	fail_msg("no score for %s", node);
	return -1;
}

/* ----- the expected figures, from the plan endpoint and the capacity rule ------------------------------------ */

/* POST /v1/plan/inference (or training) on body with device: the per-GPU total and the device's capacity. */
static void plan_total(fixture *f, const char *kind, const char *body_text, const char *device, uint64_t *total,
		       uint64_t *capacity)
{
	cJSON *body = cJSON_Parse(body_text);
	http_resp r;
	char path[64];

	cJSON_AddStringToObject(body, "device", device);
	snprintf(path, sizeof(path), "/v1/plan/%s", kind);
	post_json(f, path, body, &r);
	if (r.status != 200)
		fail_msg("plan %s on %s: %ld %s", body_text, device, r.status, r.body);
	*total = (uint64_t)cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "memory"), "total_bytes")->valuedouble;
	*capacity = (uint64_t)cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "fit"), "capacity_bytes")->valuedouble;
	http_resp_free(&r);
	cJSON_Delete(body);
}

/* The capacity rule of service/mps_k8s.h: the profile's capacity, at most the label's MiB, split among replicas. */
static uint64_t node_capacity(uint64_t profile_capacity, const char *node)
{
	const cJSON *labels = cJSON_GetObjectItem(node_fixture(node), "labels");
	const cJSON *mem = cJSON_GetObjectItem(labels, "nvidia.com/gpu.memory"), *rep = cJSON_GetObjectItem(labels, "nvidia.com/gpu.replicas");
	uint64_t cap = profile_capacity;

	if (mem && (uint64_t)strtoull(mem->valuestring, NULL, 10) * 1048576 < cap)
		cap = (uint64_t)strtoull(mem->valuestring, NULL, 10) * 1048576;
	if (rep && strtoull(rep->valuestring, NULL, 10) > 1)
		cap /= strtoull(rep->valuestring, NULL, 10);
	return cap;
}

/* The value of the first /metrics line holding every one of the fragments; NAN when none. */
static double metric(fixture *f, const char *a, const char *b, const char *c)
{
	http_resp r;
	double v = NAN;

	http_do(&f->d, "GET", "/metrics", NULL, NULL, NULL, &r);
	for (char *line = r.body, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (line[0] != '#' && strstr(line, a) && (!b || strstr(line, b)) && (!c || strstr(line, c))) {
			v = strtod(strrchr(line, ' ') + 1, NULL);
			break;
		}
	}
	http_resp_free(&r);
	return v;
}

/* ----- tests ------------------------------------------------------------------------------------------------- */

/* The integrations example: vLLM serving Llama-3.1-70B on 4 GPUs at 32768 tokens. Each node's verdict is the plan
 * endpoint's total against the node's capacity x 0.9 (vLLM's default utilization). */
static void test_vllm_pod(void **state)
{
	fixture *f = *state;
	static const struct {
		const char *node, *profile;
	} kinds[] = { { "h100-sxm-0", "h100-sxm5-80gb" }, { "a100-40-0", "a100-sxm4-40gb" }, { "a100-80-0", "a100-sxm4-80gb" },
		      { "l40s-0", "l40s-48gb" },	{ "h200-0", "h200-sxm-141gb" },	     { "gke-h100-0", "h100-sxm5-80gb" } };
	const char *body = "{\"model\":\"llama-3.1-70b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,"
			   "\"sequence_length\":32768,\"tensor_parallel_size\":4,\"num_gpus\":4,\"gpu_memory_utilization\":0.9}";
	http_resp r, p;
	const cJSON *res = filter(f, "vllm-llama70b", all_nodes, NALL, &r);
	const cJSON *pr = prioritize(f, "vllm-llama70b", all_nodes, NALL, &p);
	int fits = 0, not_fits = 0;

	assert_string_equal(cJSON_GetObjectItem(res, "Error")->valuestring, "");
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		uint64_t total, cap;

		plan_total(f, "inference", body, kinds[i].profile, &total, &cap);
		cap = node_capacity(cap, kinds[i].node);
		if (total <= (uint64_t)((double)cap * 0.9)) {
			assert_int_equal(verdict(res, kinds[i].node), PASS);
			assert_in_range(score_of(pr, kinds[i].node), 1, 10);
			fits++;
		} else {
			assert_int_equal(verdict(res, kinds[i].node), UNRES);
			assert_int_equal(score_of(pr, kinds[i].node), 0);
			assert_non_null(strstr(reason(res, kinds[i].node), "llama-3.1-70b"));
			assert_non_null(strstr(reason(res, kinds[i].node), kinds[i].profile));
			not_fits++;
		}
		/* the gauge holds the plan endpoint's exact figure */
		assert_true(metric(f, "memplan_k8s_planned_memory_bytes{", "pod=\"llama70b-0\"", kinds[i].profile) ==
			    (double)total);
	}
	assert_true(fits >= 3 && not_fits >= 1); /* 35 GB of weights per GPU: the 40 GB A100 cannot hold them */
	/* 2 H100 PCIe GPUs for a pod asking for 4: unresolvable, saying so */
	assert_int_equal(verdict(res, "h100-pcie-0"), UNRES);
	assert_non_null(strstr(reason(res, "h100-pcie-0"), "the node has 2 nvidia.com/gpu; the pod asks for 4"));
	/* the tightest fit that keeps the floor scores highest: an H100 above an H200 */
	assert_true(score_of(pr, "h100-sxm-0") > score_of(pr, "h200-0"));
	/* the RTX 3060 workstation has one GPU: the count decides before the (unknown) device does */
	assert_int_equal(verdict(res, "mystery-0"), UNRES);
	assert_int_equal(score_of(pr, "mystery-0"), 0);
	http_resp_free(&r);
	http_resp_free(&p);
	{
		/* the same launch asking for 8 GPUs: still planned at --tensor-parallel-size 4, and the reason says so and
		 * names the degree that fits (it said "needs ... on 8 x ...; it fits on 8") */
		cJSON *limits = cJSON_GetObjectItem(
			cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(
							       cJSON_GetObjectItem(pods_ref, "pods"), "vllm-llama70b"),
						       "spec"),
					       "containers"),
					       0),
					    "resources"),
			"limits");
		static const char *const a100[] = { "a100-40-0" };

		cJSON_ReplaceItemInObject(limits, "nvidia.com/gpu", cJSON_CreateString("8"));
		res = filter(f, "vllm-llama70b", a100, 1, &r);
		assert_int_equal(verdict(res, "a100-40-0"), UNRES);
		assert_non_null(strstr(reason(res, "a100-40-0"), "at tensor_parallel_size 4 (of the pod's 8 GPUs)"));
		assert_non_null(strstr(reason(res, "a100-40-0"), "it fits with tensor_parallel_size 8"));
		http_resp_free(&r);
		cJSON_ReplaceItemInObject(limits, "nvidia.com/gpu", cJSON_CreateString("4"));
	}
}

/* Whole-body annotation on 1 GPU: the MIG slice (9728 MiB) and a T4 replica (15360 / 4 MiB) cannot hold 16 GB of
 * weights; an H100 can. The shared T4's capacity is split among its 4 replicas. */
static void test_annotation_mig_shared(void **state)
{
	fixture *f = *state;
	static const char *const nodes[] = { "h100-sxm-0", "mig-1g10gb-0", "t4-shared-0" };
	const char *body = "{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":16,"
			   "\"sequence_length\":8192}";
	uint64_t total, cap;
	http_resp r;
	const cJSON *res = filter(f, "annotated-inference", nodes, 3, &r);

	plan_total(f, "inference", body, "h100-sxm5-80gb", &total, &cap);
	assert_int_equal(verdict(res, "h100-sxm-0"), total <= node_capacity(cap, "h100-sxm-0") ? PASS : UNRES);
	assert_int_equal(verdict(res, "mig-1g10gb-0"), UNRES);
	assert_non_null(strstr(reason(res, "mig-1g10gb-0"), "NVIDIA-A100-80GB-PCIe-MIG-1g.10gb"));
	assert_non_null(strstr(reason(res, "mig-1g10gb-0"), "9.50 GiB")); /* the slice's 9728 MiB */
	assert_int_equal(verdict(res, "t4-shared-0"), UNRES);
	/* the lower of the profile's CUDA total (15,642,329,088 B, the T4 preset's usable memory) and the node's label
	 * (15360 MiB, NVML's total, which includes what the driver hides), split among 4 replicas */
	assert_true(metric(f, "memplan_k8s_planned_capacity_bytes{", "pod=\"batch-8b-0\"", "profile=\"t4-16gb\"") ==
		    (double)(15642329088ull / 4));
	assert_true(metric(f, "memplan_k8s_planned_capacity_bytes{", "pod=\"batch-8b-0\"", "profile=\"a100-pcie-80gb\"") ==
		    (double)(9728ull * 1048576));
	/* the gauges carry DCGM's modelName (the profile's NVML name) */
	assert_false(isnan(metric(f, "memplan_k8s_planned_memory_bytes{", "modelName=\"NVIDIA H100 80GB HBM3\"",
				  "pod=\"batch-8b-0\"")));
	http_resp_free(&r);
}

/* A whole-body annotation that leaves weight_dtype and kv_cache_dtype out: "auto", as the plan endpoint reads them (the
 * model's bf16), not a pod Error ("weight_dtype is not a known format" failed every such pod's scheduling). */
static void test_annotation_auto_dtypes(void **state)
{
	fixture *f = *state;
	static const char *const nodes[] = { "h100-sxm-0", "mig-1g10gb-0" };
	uint64_t total, cap;
	http_resp r;
	const cJSON *res = filter(f, "annotated-inference-auto", nodes, 2, &r);

	assert_string_equal(cJSON_GetObjectItem(res, "Error")->valuestring, "");
	plan_total(f, "inference", "{\"model\":\"llama-3-8b\",\"batch_size\":16,\"sequence_length\":8192}", "h100-sxm5-80gb",
		   &total, &cap);
	assert_true(metric(f, "memplan_k8s_planned_memory_bytes{", "pod=\"auto-8b-0\"", "h100-sxm5-80gb") == (double)total);
	assert_int_equal(verdict(res, "h100-sxm-0"), PASS);
	assert_int_equal(verdict(res, "mig-1g10gb-0"), UNRES);
	http_resp_free(&r);
	{
		/* the same pod re-planned with another model: the gauges hold the latest filter call's plan only (the
		 * first plan's series stayed beside it, and a dashboard's max by (namespace, pod) showed the old one) */
		cJSON *ann = cJSON_GetObjectItem(
			cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(pods_ref, "pods"), "annotated-inference-auto"),
					    "metadata"),
			"annotations");
		cJSON *kept = cJSON_Duplicate(cJSON_GetObjectItem(ann, "memplan.io/inference"), true);

		cJSON_ReplaceItemInObject(ann, "memplan.io/inference",
					  cJSON_CreateString("{\"model\": \"mistral-7b-v0.1\", \"batch_size\": 1, "
							     "\"sequence_length\": 4096}"));
		filter(f, "annotated-inference-auto", nodes, 2, &r);
		http_resp_free(&r);
		cJSON_ReplaceItemInObject(ann, "memplan.io/inference", kept);
		assert_false(isnan(metric(f, "memplan_k8s_planned_memory_bytes{", "pod=\"auto-8b-0\"", "mistral-7b-v0.1")));
		assert_true(isnan(metric(f, "memplan_k8s_planned_memory_bytes{", "pod=\"auto-8b-0\"", "llama-3-8b")));
		assert_true(isnan(metric(f, "memplan_k8s_planned_capacity_bytes{", "pod=\"auto-8b-0\"", "llama-3-8b")));
	}
}

/* memplan.io/model with field annotations; a vLLM launch through sh -c with "8k" (vLLM's 8,000); SGLang; training. */
static void test_other_job_forms(void **state)
{
	fixture *f = *state;
	static const char *const nodes[] = { "h100-sxm-0", "h200-0", "l40s-0" };
	uint64_t total, cap;
	http_resp r;
	const cJSON *res;

	res = filter(f, "annotated-fields", nodes, 3, &r);
	assert_string_equal(cJSON_GetObjectItem(res, "Error")->valuestring, "");
	plan_total(f, "inference",
		   "{\"model\":\"llama-3.1-8b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"fp8\",\"batch_size\":4,"
		   "\"sequence_length\":32768}",
		   "h200-sxm-141gb", &total, &cap);
	assert_true(metric(f, "memplan_k8s_planned_memory_bytes{", "pod=\"long-8b-0\"", "h200-sxm-141gb") == (double)total);
	http_resp_free(&r);

	res = filter(f, "vllm-serve-sh", nodes, 3, &r);
	assert_string_equal(cJSON_GetObjectItem(res, "Error")->valuestring, "");
	plan_total(f, "inference",
		   "{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,"
		   "\"sequence_length\":8000,\"gpu_memory_utilization\":0.95}",
		   "l40s-48gb", &total, &cap);
	assert_true(metric(f, "memplan_k8s_planned_memory_bytes{", "pod=\"chat-8b-0\"", "l40s-48gb") == (double)total);
	assert_int_equal(verdict(res, "l40s-0"), PASS);
	http_resp_free(&r);

	res = filter(f, "sglang-qwen72b", nodes, 3, &r);
	assert_string_equal(cJSON_GetObjectItem(res, "Error")->valuestring, "");
	plan_total(f, "inference",
		   "{\"model\":\"qwen2.5-72b-instruct\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,"
		   "\"sequence_length\":32768,\"tensor_parallel_size\":8,\"num_gpus\":8,\"gpu_memory_utilization\":0.85,"
		   "\"kv_block_size\":1}",
		   "h100-sxm5-80gb", &total, &cap);
	assert_true(metric(f, "memplan_k8s_planned_memory_bytes{", "pod=\"qwen72b-0\"", "h100-sxm5-80gb") == (double)total);
	assert_int_equal(verdict(res, "l40s-0"), UNRES); /* 4 L40S GPUs for a pod asking for 8 */
	http_resp_free(&r);

	/* memplan.io/engine-version "0.11" is the release line (text, not the number 0.11): vLLM 0.11's 0.9 */
	res = filter(f, "annotated-engine-version", nodes, 3, &r);
	assert_string_equal(cJSON_GetObjectItem(res, "Error")->valuestring, "");
	plan_total(f, "inference",
		   "{\"model\":\"llama-3.1-8b\",\"weight_dtype\":\"bf16\",\"batch_size\":4,\"sequence_length\":8192,"
		   "\"engine\":\"vllm\",\"engine_version\":\"0.11\"}",
		   "h200-sxm-141gb", &total, &cap);
	assert_true(metric(f, "memplan_k8s_planned_memory_bytes{", "pod=\"v011-8b-0\"", "h200-sxm-141gb") == (double)total);
	http_resp_free(&r);

	res = filter(f, "annotated-training", nodes, 3, &r);
	assert_string_equal(cJSON_GetObjectItem(res, "Error")->valuestring, "");
	plan_total(f, "training",
		   "{\"model\":\"llama-2-7b\",\"precision\":\"mixed_bf16\",\"optimizer\":\"adamw\",\"micro_batch_size\":1,"
		   "\"sequence_length\":4096,\"activation_recomputation\":\"selective\",\"sharding\":\"zero1\",\"num_gpus\":8}",
		   "h200-sxm-141gb", &total, &cap);
	assert_true(metric(f, "memplan_k8s_planned_memory_bytes{", "pod=\"tune-7b-0\"", "h200-sxm-141gb") == (double)total);
	assert_int_equal(verdict(res, "h200-0"), PASS);
	http_resp_free(&r);
}

/* A pod that asks memplan nothing passes everywhere with score 0; so does a launch memplan does not model. */
static void test_pass_through(void **state)
{
	fixture *f = *state;
	http_resp r, p;
	const cJSON *res = filter(f, "plain", all_nodes, NALL, &r);
	const cJSON *pr = prioritize(f, "plain", all_nodes, NALL, &p), *h;

	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(res, "NodeNames")), (int)NALL);
	cJSON_ArrayForEach(h, pr)
	{
		assert_int_equal((int)cJSON_GetObjectItem(h, "Score")->valuedouble, 0);
	}
	http_resp_free(&r);
	http_resp_free(&p);
	res = filter(f, "vllm-pipeline", all_nodes, NALL, &r);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(res, "NodeNames")), (int)NALL);
	http_resp_free(&r);
	res = filter(f, "unknown-model-args", all_nodes, NALL, &r); /* a model only the container names: fail open */
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(res, "NodeNames")), (int)NALL);
	http_resp_free(&r);
	assert_true(metric(f, "memplan_k8s_pods_total{", "outcome=\"unknown_model\"", "verb=\"filter\"") >= 1);
	assert_true(metric(f, "memplan_k8s_pods_total{", "outcome=\"unsupported\"", NULL) >= 1);
	assert_true(metric(f, "memplan_k8s_pods_total{", "outcome=\"no_job\"", NULL) >= 1);
}

/* What the pod's owner wrote wrong is the filter's Error, naming the annotation or argument. */
static void test_pod_errors(void **state)
{
	fixture *f = *state;
	static const struct {
		const char *pod, *a, *b;
	} cases[] = {
		{ "bad-annotation", "annotation memplan.io/inference", "/batch_size" },
		{ "bad-json", "annotation memplan.io/inference", "not a JSON object" },
		{ "unknown-model-annotation", "annotation memplan.io/model", "notamodel-7b" },
		{ "bad-vllm-arg", "container vllm: vllm --max-model-len", "'lots' is not an integer" },
		{ "no-gpu", "asks for no GPU", "nvidia.com/gpu" },
	};
	static const char *const nodes[] = { "h100-sxm-0", "l40s-0" };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		http_resp r, p;
		const cJSON *res = filter(f, cases[i].pod, nodes, 2, &r);
		const char *e = cJSON_GetObjectItem(res, "Error")->valuestring;

		if (!strstr(e, cases[i].a) || !strstr(e, cases[i].b))
			fail_msg("%s: Error '%s' does not name '%s' and '%s'", cases[i].pod, e, cases[i].a, cases[i].b);
		assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(res, "FailedNodes")), 0);
		prioritize(f, cases[i].pod, nodes, 2, &p); /* no scores for a broken pod, and no error status */
		assert_int_equal(score_of(p.json, "h100-sxm-0"), 0);
		http_resp_free(&r);
		http_resp_free(&p);
	}
}

/* Two bad annotations: the Error names both, each by its annotation (it named the first only) */
static void test_every_bad_annotation(void **state)
{
	fixture *f = *state;
	cJSON *ann = cJSON_GetObjectItem(
		cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(pods_ref, "pods"), "annotated-fields"), "metadata"),
		"annotations");
	static const char *const nodes[] = { "h100-sxm-0" };
	http_resp r;
	const cJSON *res;
	const char *e;

	cJSON_ReplaceItemInObject(ann, "memplan.io/batch-size", cJSON_CreateString("abc"));
	cJSON_ReplaceItemInObject(ann, "memplan.io/sequence-length", cJSON_CreateString("-1"));
	res = filter(f, "annotated-fields", nodes, 1, &r);
	e = cJSON_GetObjectItem(res, "Error")->valuestring;
	if (!strstr(e, "memplan.io/batch-size") || !strstr(e, "memplan.io/sequence-length"))
		fail_msg("Error '%s' does not name both annotations", e);
	http_resp_free(&r);
	cJSON_ReplaceItemInObject(ann, "memplan.io/batch-size", cJSON_CreateString("4"));
	cJSON_ReplaceItemInObject(ann, "memplan.io/sequence-length", cJSON_CreateString("32768"));
	{
		/* annotations that are not a map (the fuzzer's reproducer, fuzz/regress/k8s/annotations-not-a-map,
		 * read a NULL member name): the pod's Error says what they must be */
		cJSON *meta = cJSON_GetObjectItem(
			cJSON_GetObjectItem(cJSON_GetObjectItem(pods_ref, "pods"), "annotated-fields"), "metadata");
		cJSON *kept = cJSON_DetachItemFromObject(meta, "annotations");

		cJSON_AddItemToObject(meta, "annotations", cJSON_Parse("[{\"name\":\"worker\"}]"));
		res = filter(f, "annotated-fields", nodes, 1, &r);
		assert_non_null(strstr(cJSON_GetObjectItem(res, "Error")->valuestring,
				       "metadata.annotations must be an object of strings"));
		http_resp_free(&r);
		cJSON_DeleteItemFromObject(meta, "annotations");
		cJSON_AddItemToObject(meta, "annotations", kept);
	}
}

/* An RTX 3060 (no stored profile) with its gpu.memory label of 12,288 MiB: a job of 31.7 GiB per GPU cannot fit
 * there whatever the device is, so the node is unresolvable under either setting, saying why (it passed before).
 * Without the label nothing shows it: --k8s-unknown-device fail fails it with a reason that says how to add it,
 * the default passes it. */
static void test_unknown_device_setting(void **state)
{
	fixture *f = *state;
	static const char *const nodes[] = { "mystery-0", "h100-sxm-0" };
	cJSON *labels = cJSON_GetObjectItem((cJSON *)node_fixture("mystery-0"), "labels"), *mem;
	http_resp r;
	const cJSON *res;

	for (int fails = 0; fails < 2; fails++) {
		f->d.cfg.k8s_unknown_device_fails = fails;
		res = filter(f, "annotated-inference", nodes, 2, &r);
		assert_int_equal(verdict(res, "mystery-0"), UNRES);
		assert_non_null(strstr(reason(res, "mystery-0"), "12288 MiB (nvidia.com/gpu.memory)"));
		assert_non_null(strstr(reason(res, "mystery-0"), "NVIDIA-GeForce-RTX-3060"));
		assert_int_equal(verdict(res, "h100-sxm-0"), PASS);
		http_resp_free(&r);
	}
	mem = cJSON_DetachItemFromObject(labels, "nvidia.com/gpu.memory");
	assert_non_null(mem);
	f->d.cfg.k8s_unknown_device_fails = true;
	res = filter(f, "annotated-inference", nodes, 2, &r);
	f->d.cfg.k8s_unknown_device_fails = false;
	assert_int_equal(verdict(res, "mystery-0"), FAILED);
	assert_non_null(strstr(reason(res, "mystery-0"), "NVIDIA-GeForce-RTX-3060"));
	assert_non_null(strstr(reason(res, "mystery-0"), "aliases"));
	assert_int_equal(verdict(res, "h100-sxm-0"), PASS);
	http_resp_free(&r);
	res = filter(f, "annotated-inference", nodes, 2, &r);
	assert_int_equal(verdict(res, "mystery-0"), PASS);
	http_resp_free(&r);
	cJSON_AddItemToObject(labels, "nvidia.com/gpu.memory", mem);
}

/* A product no real GPU reports maps by memory (the most conservative 80 GiB profile) until it is made an alias; an
 * alias another device goes by is a 409. */
static void test_alias_table(void **state)
{
	fixture *f = *state;
	static const char *const nodes[] = { "fake-h100-0" };
	http_resp r;
	const cJSON *a;

	filter(f, "annotated-inference", nodes, 1, &r);
	http_resp_free(&r);
	assert_false(isnan(metric(f, "memplan_k8s_planned_memory_bytes{", "pod=\"batch-8b-0\"", "profile=\"a100-pcie-80gb\"")));
	http_do(&f->d, "PATCH", "/v1/devices/h100-sxm5-80gb",
		"{\"aliases\":[\"NVIDIA H100 80GB HBM3\",\"nvidia-h100-80gb\",\"nvidia-h100-mega-80gb\",\"NVIDIA-H100-SXM4-80GB\"]}",
		"application/merge-patch+json", NULL, &r);
	assert_int_equal(r.status, 200);
	a = cJSON_GetObjectItem(r.json, "aliases");
	assert_int_equal(cJSON_GetArraySize(a), 4);
	http_resp_free(&r);
	filter(f, "annotated-inference", nodes, 1, &r);
	http_resp_free(&r);
	/* the H100 SXM preset's CUDA total (85,045,477,376 B), below the node's 81559 MiB NVML label */
	assert_true(metric(f, "memplan_k8s_planned_capacity_bytes{", "pod=\"batch-8b-0\"", "profile=\"h100-sxm5-80gb\"") ==
		    (double)85045477376ull);
	/* the same name, spelt as Slurm's AutoDetect would, on another device: a conflict naming the alias */
	http_do(&f->d, "PATCH", "/v1/devices/h100-pcie-80gb", "{\"aliases\":[\"nvidia_h100_sxm4_80gb\"]}",
		"application/merge-patch+json", NULL, &r);
	assert_int_equal(r.status, 409);
	assert_string_equal(http_problem_field(&r), "/aliases/0");
	assert_non_null(strstr(r.body, "h100-sxm5-80gb"));
	http_resp_free(&r);
	/* two spellings of one name in one list */
	http_do(&f->d, "PATCH", "/v1/devices/h100-pcie-80gb", "{\"aliases\":[\"NVIDIA H100 PCIe\",\"nvidia-h100-pcie\"]}",
		"application/merge-patch+json", NULL, &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "/aliases/1");
	http_resp_free(&r);
}

/* Not ExtenderArgs at all: a 422 naming the member; NodeNames only (nodeCacheCapable true) of an unreported node. */
static void test_protocol_errors(void **state)
{
	fixture *f = *state;
	http_resp r;

	http_do(&f->d, "POST", "/v1/k8s/filter", "{\"Nodes\":null}", "application/json", NULL, &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "/Pod");
	http_resp_free(&r);
	http_do(&f->d, "POST", "/v1/k8s/filter", "{\"Pod\":{},\"Nodes\":{\"items\":[{\"metadata\":{}}]}}", "application/json",
		NULL, &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "/Nodes/items/0/metadata/name");
	http_resp_free(&r);
	http_do(&f->d, "POST", "/v1/k8s/prioritize", "{\"Pod\":", "application/json", NULL, &r);
	assert_int_equal(r.status, 400);
	http_resp_free(&r);
	{
		cJSON *a = args_for("annotated-inference", NULL, 0);

		cJSON_ReplaceItemInObject(a, "Nodes", cJSON_CreateNull());
		cJSON_ReplaceItemInObject(a, "NodeNames", cJSON_Parse("[\"h100-sxm-0\"]"));
		post_json(f, "/v1/k8s/filter", a, &r);
		assert_int_equal(r.status, 200);
		/* nodeCacheCapable: true with a node the cache has no report of: a node of unknown device (it passes,
		 * --k8s-unknown-device pass); tests/test_fleet.c covers the cache */
		assert_string_equal(cJSON_GetObjectItem(r.json, "Error")->valuestring, "");
		assert_true(cJSON_IsNull(cJSON_GetObjectItem(r.json, "Nodes")));
		assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(r.json, "NodeNames"), 0)->valuestring,
				    "h100-sxm-0");
		http_resp_free(&r);
		cJSON_Delete(a);
	}
}

/* The extender's routes take bodies beyond --max-body-bytes (every candidate Node object), up to
 * --k8s-max-body-bytes; other routes keep their limit. */
static void test_large_body(void **state)
{
	fixture *f = *state;
	const char *names[2000];
	cJSON *a;
	char *text;
	http_resp r;

	for (int i = 0; i < 2000; i++)
		names[i] = "h100-sxm-0";
	a = args_for("annotated-inference", names, 2000);
	text = cJSON_PrintUnformatted(a);
	assert_true(strlen(text) > f->d.cfg.max_body_bytes); /* over the default 1 MiB */
	http_do(&f->d, "POST", "/v1/k8s/filter", text, "application/json", NULL, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "NodeNames")), 2000);
	http_resp_free(&r);
	http_do(&f->d, "POST", "/v1/roofline", text, "application/json", NULL, &r);
	assert_int_equal(r.status, 413);
	http_resp_free(&r);
	f->d.cfg.k8s_max_body_bytes = 4096;
	http_do(&f->d, "POST", "/v1/k8s/filter", text, "application/json", NULL, &r);
	f->d.cfg.k8s_max_body_bytes = MPD_DEFAULT_K8S_MAX_BODY_BYTES;
	assert_int_equal(r.status, 413);
	http_resp_free(&r);
	cJSON_free(text);
	cJSON_Delete(a);
}

/* The score rule's worked examples (service/mps_k8s.h) and the model-name rule's (codec/mpc_k8s.h). */
static void test_rules(void **state)
{
	char out[MPS_K8S_MAX_CANDIDATES][MP_STORE_ID_MAX];
	size_t n;

	(void)state;
	assert_int_equal(mps_k8s_score(false, 5, 10, 0.1), 0);
	assert_int_equal(mps_k8s_score(true, 0, 100, 0.1), 1);	 /* below the floor */
	assert_int_equal(mps_k8s_score(true, 10, 100, 0.1), 10); /* at the floor */
	assert_int_equal(mps_k8s_score(true, 55, 100, 0.1), 5);	 /* 10 - floor(10 x 0.45 / 0.9) */
	assert_int_equal(mps_k8s_score(true, 100, 100, 0.1), 1); /* all unused */
	/* Llama-3-8B, bf16, 4096 tokens (17,638,465,536 B, test_http) at utilization 0.9: on an H200 (150,109,880,320
	 * usable) and on an L40S labelled 46068 MiB */
	assert_int_equal(mps_k8s_score(true, INT64_C(117460426752), UINT64_C(135098892288), 0.1), 2);
	assert_int_equal(mps_k8s_score(true, INT64_C(25836753715), UINT64_C(43475219251), 0.1), 5);
	n = mpc_k8s_model_candidates("meta-llama/Meta-Llama-3-8B-Instruct", out, MPS_K8S_MAX_CANDIDATES);
	assert_int_equal(n, 4);
	assert_string_equal(out[0], "meta-llama-3-8b-instruct");
	assert_string_equal(out[1], "llama-3-8b-instruct");
	assert_string_equal(out[2], "meta-llama-3-8b");
	assert_string_equal(out[3], "llama-3-8b");
	n = mpc_k8s_model_candidates("mistralai/Mixtral-8x7B-Instruct-v0.1", out, MPS_K8S_MAX_CANDIDATES);
	assert_int_equal(n, 2);
	assert_string_equal(out[1], "mixtral-8x7b");
	n = mpc_k8s_model_candidates("/models/qwen2.5-7b", out, MPS_K8S_MAX_CANDIDATES);
	assert_int_equal(n, 1);
	assert_string_equal(out[0], "qwen2.5-7b");
	assert_int_equal(mpc_k8s_model_candidates("/models/", out, MPS_K8S_MAX_CANDIDATES), 0);
}

/* POST /v1/slurm/fit-table: the fit answer's smallest counts as the text table (codec/mpc_slurm.h), "none" where no count
 * fits, the AutoDetect GRES types of the devices' NVML names, a job id with blanks and '%' percent-encoded, and the
 * last line the byte count and Adler-32 of the rest (zlib's figure, checked here against RFC 1950's definition on
 * the worked example "Wikipedia" = 0x11e60398). */
static void test_slurm_fit_table(void **state)
{
	fixture *f = *state;
	const char *body = "{\"jobs\":[{\"id\":\"big \\\"70b\\\" 5%\",\"inference\":{\"model\":\"llama-3.1-70b\",\"weight_dtype\":"
			   "\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,\"sequence_length\":32768}}],"
			   "\"devices\":[\"h100-sxm5-80gb\",\"t4-16gb\"],\"gpu_counts\":[1,2,4,8]}";
	http_resp r, j;
	char line[160], q[64];
	double smallest;
	const char *end;
	unsigned long a = 1, b = 0, sum;
	size_t bytes;

	http_do(&f->d, "POST", "/v1/fit", body, "application/json", NULL, &j);
	assert_int_equal(j.status, 200);
	smallest = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(
						   cJSON_GetObjectItem(j.json, "jobs"), 0), "devices"), 0),
				       "smallest_gpu_count")->valuedouble;
	assert_true(smallest >= 2);
	http_do(&f->d, "POST", "/v1/slurm/fit-table", body, "application/json", NULL, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.content_type, "text/plain; charset=utf-8");
	assert_memory_equal(r.body, "memplan-slurm-fit-table 2\n", 26);
	assert_non_null(strstr(r.body, "\ngpu_counts 1 2 4 8\n"));
	assert_non_null(strstr(r.body, "\njob big%20\"70b\"%205%25 inference llama-3.1-70b\n"));
	snprintf(line, sizeof(line), "\nmin_gpus big%%20\"70b\"%%205%%25 h100-sxm5-80gb %.0f\n", smallest);
	assert_non_null(strstr(r.body, line));
	assert_non_null(strstr(r.body, "\nmin_gpus big%20\"70b\"%205%25 t4-16gb none\n"));
	assert_non_null(strstr(r.body, "\ngres_type nvidia_h100_80gb_hbm3 h100-sxm5-80gb\n"));
	assert_non_null(strstr(r.body, "\ngres_type tesla_t4 t4-16gb\n"));
	/* the end record: the bytes before it and their Adler-32, summed here by RFC 1950's definition */
	end = strstr(r.body, "\nend ");
	assert_non_null(end);
	end++;
	bytes = (size_t)(end - r.body);
	for (size_t i = 0; i < bytes; i++) {
		a = (a + (unsigned char)r.body[i]) % 65521;
		b = (b + a) % 65521;
	}
	sum = (b << 16) | a;
	snprintf(line, sizeof(line), "end %zu %08lx\n", bytes, sum);
	assert_string_equal(end, line);
	a = 1, b = 0;
	for (const char *p = "Wikipedia"; *p; p++) {
		a = (a + (unsigned char)*p) % 65521;
		b = (b + a) % 65521;
	}
	assert_int_equal((b << 16) | a, 0x11e60398);
	http_resp_free(&r);
	http_resp_free(&j);
	assert_true(mpc_slurm_field("a b%c\n\x7f\xc3\xa9", q, sizeof(q)));
	assert_string_equal(q, "a%20b%25c%0A%7F\xc3\xa9");
	assert_false(mpc_slurm_field("a b", q, 5));
	assert_string_equal(q, "");
	assert_true(mpc_slurm_field("a b", q, 6));
}

/* The extender's settings, each refused with its name when out of range. */
static void test_settings(void **state)
{
	mpd_config cfg;
	mp_error e = MP_ERROR_INIT;

	(void)state;
	mpd_config_defaults(&cfg);
	assert_false(cfg.k8s_unknown_device_fails);
	assert_int_equal(cfg.k8s_headroom_floor_percent, 10);
	assert_int_equal(cfg.k8s_max_body_bytes, MPD_DEFAULT_K8S_MAX_BODY_BYTES);
	assert_int_equal(mpd_config_set(&cfg, "k8s-unknown-device", "fail", &e), MP_OK);
	assert_true(cfg.k8s_unknown_device_fails);
	assert_int_equal(mpd_config_set(&cfg, "k8s-unknown-device", "maybe", &e), MP_EINVAL);
	assert_string_equal(e.field, "k8s-unknown-device");
	assert_int_equal(mpd_config_set(&cfg, "k8s-headroom-floor-percent", "95", &e), MP_EINVAL);
	assert_int_equal(mpd_config_set(&cfg, "k8s-headroom-floor-percent", "20", &e), MP_OK);
	assert_int_equal(cfg.k8s_headroom_floor_percent, 20);
	assert_int_equal(mpd_config_set(&cfg, "k8s-max-body-bytes", "268435456", &e), MP_OK);
	assert_int_equal(cfg.k8s_max_body_bytes, 268435456);
	assert_int_equal(mpd_config_set(&cfg, "node-labels", "Hostname=n1,gpu=0,modelName=NVIDIA H200", &e), MP_OK);
	assert_string_equal(cfg.node_labels, "Hostname=n1,gpu=0,modelName=NVIDIA H200");
	assert_int_equal(mpd_config_set(&cfg, "node-labels", "0gpu=1", &e), MP_EINVAL);
	assert_int_equal(mpd_config_set(&cfg, "node-labels", "Host name=x", &e), MP_EINVAL);
	assert_int_equal(mpd_config_set(&cfg, "node-labels", "__name__=x", &e), MP_EINVAL);
}

/* The extender's counters, next to the request metrics. */
static void test_metrics(void **state)
{
	fixture *f = *state;

	assert_true(metric(f, "memplan_k8s_pods_total{", "verb=\"filter\"", "outcome=\"planned\"") >= 1);
	assert_true(metric(f, "memplan_k8s_pods_total{", "verb=\"prioritize\"", NULL) >= 1);
	assert_true(metric(f, "memplan_k8s_filter_nodes_total{", "result=\"unresolvable\"", NULL) >= 1);
	assert_true(metric(f, "memplan_k8s_unknown_device_nodes_total", NULL, NULL) >= 1);
}

static int setup(void **state)
{
	nodes_ref = ref_json("k8s/nodes.json");
	pods_ref = ref_json("k8s/pods.json");
	types_ref = ref_json("k8s/extender-v1.json");
	return http_fixture_setup(state);
}

static int teardown(void **state)
{
	cJSON_Delete(nodes_ref);
	cJSON_Delete(pods_ref);
	cJSON_Delete(types_ref);
	return http_fixture_teardown(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_vllm_pod),
		cmocka_unit_test(test_annotation_mig_shared), cmocka_unit_test(test_annotation_auto_dtypes),
		cmocka_unit_test(test_other_job_forms),
		cmocka_unit_test(test_pass_through),
		cmocka_unit_test(test_pod_errors),
		cmocka_unit_test(test_every_bad_annotation),
		cmocka_unit_test(test_unknown_device_setting),
		cmocka_unit_test(test_alias_table),
		cmocka_unit_test(test_protocol_errors),
		cmocka_unit_test(test_large_body),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_settings),
		cmocka_unit_test(test_slurm_fit_table),
	};
	int rc;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = cmocka_run_group_tests_name("k8s", tests, setup, teardown);
	curl_global_cleanup();
	return rc;
}
