/*
 * routes.c: the route table and its matcher. Adding an endpoint is one line here plus its handler and
 * its path in openapi.yaml (a test keeps the two in step).
 */
#include <stdio.h>
#include <string.h>

#include "routes.h"

#define PURE MPD_ROUTE_PURE
#define WRITE MPD_ROUTE_WRITE
#define JSON MPD_ROUTE_JSON_BODY
#define PATCH (MPD_ROUTE_JSON_BODY | MPD_ROUTE_MERGE_PATCH)
#define LARGE MPD_ROUTE_LARGE_BODY
#define HEAVY MPD_ROUTE_HEAVY
#define STREAM MPD_ROUTE_K8S_STREAM
#define MODEL MPD_ROUTE_MODEL_BODY

const mpd_route mpd_routes[] = {
	{ "GET", "/", mpd_h_web, NULL, 0 },
	{ "GET", "/ui/style.css", mpd_h_web, NULL, 0 },
	{ "GET", "/ui/app.js", mpd_h_web, NULL, 0 },
	{ "GET", "/v1/health", mpd_h_health, NULL, 0 },
	{ "GET", "/openapi.yaml", mpd_h_openapi, NULL, 0 },
	{ "GET", "/v1/devices", mpd_h_devices_list, "limit cursor vendor source min_memory_bytes kind", 0 },
	{ "GET", "/v1/devices/{id}", mpd_h_device_get, NULL, 0 },
	{ "GET", "/v1/models", mpd_h_models_list, "limit cursor model_type source", 0 },
	{ "GET", "/v1/models/{id}", mpd_h_model_get, NULL, 0 },
	{ "GET", "/v1/models/{id}/tensors", mpd_h_model_tensors, "weight_dtype tensor_parallel_size format", 0 },
	{ "POST", "/v1/plan/inference", mpd_h_plan_inference, "format", PURE | JSON | MODEL },
	{ "POST", "/v1/plan/training", mpd_h_plan_training, "format", PURE | JSON | MODEL },
	{ "POST", "/v1/engine-check", mpd_h_engine_check, NULL, PURE | JSON | MODEL },
	{ "POST", "/v1/roofline", mpd_h_roofline, NULL, PURE | JSON },
	{ "GET", "/v1/devices/{id}/roofline.svg", mpd_h_device_roofline_svg, "op* ridge_dtype model batch_size context_tokens prompt_tokens tensor_parallel_size weight_dtype kv_cache_dtype compute_dtype", 0 },
	{ "PUT", "/v1/devices/{id}", mpd_h_device_put, NULL, WRITE | JSON },
	{ "PATCH", "/v1/devices/{id}", mpd_h_device_patch, NULL, WRITE | PATCH },
	{ "DELETE", "/v1/devices/{id}", mpd_h_device_delete, NULL, WRITE },
	{ "PUT", "/v1/models/{id}", mpd_h_model_put, NULL, WRITE | JSON },
	{ "PATCH", "/v1/models/{id}", mpd_h_model_patch, NULL, WRITE | PATCH },
	{ "DELETE", "/v1/models/{id}", mpd_h_model_delete, NULL, WRITE },
	{ "POST", "/v1/fit", mpd_h_fit, "format", PURE | JSON | HEAVY | MODEL },
	{ "GET", "/v1/capacity", mpd_h_capacity,
	  "model sequence_length weight_dtype kv_cache_dtype vendor source kind tensor_parallel_size num_gpus format limit cursor",
	  PURE | HEAVY },
	{ "POST", "/v1/calibrations", mpd_h_calibration_create, NULL, WRITE | JSON },
	{ "GET", "/v1/calibrations/{id}", mpd_h_calibration_get, NULL, 0 },
	{ "DELETE", "/v1/calibrations/{id}", mpd_h_calibration_cancel, NULL, WRITE },
	{ "GET", "/metrics", mpd_h_metrics, NULL, 0 },
	/* kube-scheduler's extender (urlPrefix .../v1/k8s, filterVerb filter, prioritizeVerb prioritize) */
	{ "POST", "/v1/k8s/filter", mpd_h_k8s_filter, NULL, JSON | LARGE | HEAVY | STREAM },
	{ "POST", "/v1/k8s/prioritize", mpd_h_k8s_prioritize, NULL, JSON | LARGE | HEAVY | STREAM },
	/* the node cache the node agents feed (nodeCacheCapable: true) */
	{ "GET", "/v1/nodes", mpd_h_nodes_list, "limit cursor", 0 },
	{ "GET", "/v1/nodes/{id}", mpd_h_node_get, NULL, 0 },
	{ "PUT", "/v1/nodes/{id}", mpd_h_node_put, NULL, WRITE | JSON },
	{ "DELETE", "/v1/nodes/{id}", mpd_h_node_delete, NULL, WRITE },
	/* what running engines reported, beside memplan's prediction */
	{ "POST", "/v1/observations", mpd_h_observation_post, NULL, WRITE | JSON },
	{ "GET", "/v1/observations", mpd_h_observations_list, "limit cursor engine device model", 0 },
	/* Slurm's job_submit.lua reads this table (deploy/slurm) */
	{ "POST", "/v1/slurm/fit-table", mpd_h_slurm_fit_table, NULL, PURE | JSON | HEAVY },
};
const size_t mpd_route_count = sizeof(mpd_routes) / sizeof(mpd_routes[0]);

/* Matches path against pattern segment by segment; copies the {id} segment into idbuf. */
static bool match(const char *pattern, const char *path, char *idbuf, size_t idlen, bool *has_id)
{
	*has_id = false;
	while (*pattern && *path) {
		if (strncmp(pattern, "{id}", 4) == 0) {
			size_t n = strcspn(path, "/");

			if (n == 0 || idlen < 2)
				return false;
			if (n >= idlen) {
				/* too long for any id: pass a marked prefix on (a trailing '~' no id holds) so the
				 * handler answers 422 for a malformed id rather than "no such endpoint" */
				memcpy(idbuf, path, idlen - 2);
				idbuf[idlen - 2] = '~';
				idbuf[idlen - 1] = '\0';
			} else {
				memcpy(idbuf, path, n);
				idbuf[n] = '\0';
			}
			*has_id = true;
			pattern += 4;
			path += n;
			continue;
		}
		if (*pattern != *path)
			return false;
		pattern++;
		path++;
	}
	return *pattern == '\0' && *path == '\0';
}

const char *mpd_route_pattern_of(const char *path)
{
	char idbuf[MPD_PATH_ID_MAX];
	bool has_id;

	for (size_t i = 0; i < mpd_route_count; i++)
		if (match(mpd_routes[i].pattern, path, idbuf, sizeof(idbuf), &has_id))
			return mpd_routes[i].pattern;
	return NULL;
}

const mpd_route *mpd_route_find(const char *method, const char *path, char *idbuf, size_t idlen,
				const char **id, char *allow, size_t allowlen)
{
	size_t used = 0, n = strlen(path);
	bool has_id;
	char trimmed[MPD_MAX_URL_BYTES + 1];

	*id = NULL;
	allow[0] = '\0';
	if (strcmp(method, "HEAD") == 0)
		method = "GET";
	/* "/v1/devices/" is "/v1/devices": one trailing slash is dropped ("/" itself is the page) */
	if (n > 1 && path[n - 1] == '/' && n <= MPD_MAX_URL_BYTES) {
		memcpy(trimmed, path, n - 1);
		trimmed[n - 1] = '\0';
		path = trimmed;
	}
	for (size_t i = 0; i < mpd_route_count; i++) {
		if (!match(mpd_routes[i].pattern, path, idbuf, idlen, &has_id))
			continue;
		if (strcmp(mpd_routes[i].method, method) == 0) {
			*id = has_id ? idbuf : NULL;
			return &mpd_routes[i];
		}
		if (used < allowlen) {
			bool get = strcmp(mpd_routes[i].method, "GET") == 0;
			int n = snprintf(allow + used, allowlen - used, "%s%s%s", used ? ", " : "", mpd_routes[i].method,
					 get ? ", HEAD" : "");

			if (n > 0)
				used += (size_t)n;
		}
	}
	return NULL;
}
