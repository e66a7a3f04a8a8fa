/*
 * routes.h: the route table. One static array of {method, path pattern, handler, query, flags}; a pattern segment
 * "{id}" matches one non-empty path segment. tests/test_http.c checks the table against openapi.yaml.
 */
#ifndef MPD_ROUTES_H
#define MPD_ROUTES_H

#include "reply.h"

typedef struct mpd_route {
	const char *method;
	const char *pattern;
	mpd_handler handler;
	const char *query;	/* the query arguments it takes, space-separated; NULL = none (others get 422); each
				 * once (twice: 422) unless marked repeatable, "op*" */
	unsigned flags;		/* MPD_ROUTE_* */
} mpd_route;

/* The answer is a function of the request body (POST) or the query arguments (GET) and the store's contents
 * only (no clock, no hardware): server.c may answer a repeat from the response cache (respcache.h). */
#define MPD_ROUTE_PURE 1u
/* The request changes state: it needs the bearer token when the daemon has one (auth.h), and it empties the
 * response cache. */
#define MPD_ROUTE_WRITE 2u
/* The body is a JSON document: server.c checks the media type and parses it strictly (codec/mpc_json.h) before the
 * handler runs; the handler gets the tree in mpd_request.json. */
#define MPD_ROUTE_JSON_BODY 4u
/* A JSON merge patch body (RFC 7396): as JSON_BODY, also taking application/merge-patch+json. */
#define MPD_ROUTE_MERGE_PATCH 8u
/* The body may be as large as --k8s-max-body-bytes instead of --max-body-bytes (kube-scheduler's ExtenderArgs carry
 * every candidate Node object). */
#define MPD_ROUTE_LARGE_BODY 16u
/* The work grows with the request (every job x device x GPU count, every stored device): at most
 * --max-heavy-requests of them compute at once (a cached answer does not count); more get 503 with Retry-After. */
#define MPD_ROUTE_HEAVY 32u
/* The body may carry a model's checkpoint headers (a GGUF header in base64, safetensors headers): as large as
 * --model-max-body-bytes instead of --max-body-bytes. */
#define MPD_ROUTE_MODEL_BODY 64u
/* The body is kube-scheduler's ExtenderArgs, read as it arrives (codec/mpc_k8s_stream.h) and never held whole: the media
 * type is checked with the headers, the decoder's limits are refused as they are passed, and the handler gets the
 * decoded arguments in mpd_request.k8s instead of a tree. */
#define MPD_ROUTE_K8S_STREAM 128u

extern const mpd_route mpd_routes[];
extern const size_t mpd_route_count;

/*
 * Finds the route for method and path. Returns it and sets *id to the {id} segment copied into idbuf
 * (NULL when the pattern has none). When the path matches but the method does not, returns NULL and
 * writes the allowed methods ("GET, PUT") into allow; when nothing matches, returns NULL with allow "".
 */
const mpd_route *mpd_route_find(const char *method, const char *path, char *idbuf, size_t idlen,
				const char **id, char *allow, size_t allowlen);

/* The pattern of the first route path matches whatever the method ("/v1/health" for a DELETE of it), or NULL: the
 * route label of a 405's metrics. */
const char *mpd_route_pattern_of(const char *path);

/* Handlers, each living with its resource. */
mp_status mpd_h_health(mpd_request *req, mpd_reply *rep);
mp_status mpd_h_openapi(mpd_request *req, mpd_reply *rep);
mp_status mpd_h_web(mpd_request *req, mpd_reply *rep);		/* h_web.c: GET /, /ui/... */
mp_status mpd_h_devices_list(mpd_request *req, mpd_reply *rep);
mp_status mpd_h_device_get(mpd_request *req, mpd_reply *rep);
mp_status mpd_h_models_list(mpd_request *req, mpd_reply *rep);
mp_status mpd_h_model_get(mpd_request *req, mpd_reply *rep);
mp_status mpd_h_model_tensors(mpd_request *req, mpd_reply *rep);
mp_status mpd_h_plan_inference(mpd_request *req, mpd_reply *rep);
mp_status mpd_h_plan_training(mpd_request *req, mpd_reply *rep);
mp_status mpd_h_engine_check(mpd_request *req, mpd_reply *rep);	/* h_engine.c */
mp_status mpd_h_roofline(mpd_request *req, mpd_reply *rep);
mp_status mpd_h_device_roofline_svg(mpd_request *req, mpd_reply *rep);
mp_status mpd_h_device_put(mpd_request *req, mpd_reply *rep);
mp_status mpd_h_device_patch(mpd_request *req, mpd_reply *rep);
mp_status mpd_h_device_delete(mpd_request *req, mpd_reply *rep);
mp_status mpd_h_model_put(mpd_request *req, mpd_reply *rep);
mp_status mpd_h_model_patch(mpd_request *req, mpd_reply *rep);
mp_status mpd_h_model_delete(mpd_request *req, mpd_reply *rep);
mp_status mpd_h_fit(mpd_request *req, mpd_reply *rep);
mp_status mpd_h_capacity(mpd_request *req, mpd_reply *rep);
mp_status mpd_h_calibration_create(mpd_request *req, mpd_reply *rep);
mp_status mpd_h_calibration_get(mpd_request *req, mpd_reply *rep);
mp_status mpd_h_calibration_cancel(mpd_request *req, mpd_reply *rep);
mp_status mpd_h_metrics(mpd_request *req, mpd_reply *rep);	/* metrics.c */
mp_status mpd_h_k8s_filter(mpd_request *req, mpd_reply *rep);	/* h_k8s.c */
mp_status mpd_h_k8s_prioritize(mpd_request *req, mpd_reply *rep);
mp_status mpd_h_slurm_fit_table(mpd_request *req, mpd_reply *rep);	/* h_slurm.c */
mp_status mpd_h_nodes_list(mpd_request *req, mpd_reply *rep);		/* h_nodes.c */
mp_status mpd_h_node_get(mpd_request *req, mpd_reply *rep);
mp_status mpd_h_node_put(mpd_request *req, mpd_reply *rep);
mp_status mpd_h_node_delete(mpd_request *req, mpd_reply *rep);
mp_status mpd_h_observation_post(mpd_request *req, mpd_reply *rep);	/* h_observations.c */
mp_status mpd_h_observations_list(mpd_request *req, mpd_reply *rep);
/* The /metrics gauges of memplan's error against the observations and of the observed terms, set again from the
 * store (h_observations.c: at start and after each new observation). */
void mpd_observation_gauges(mpd_daemon *d);

/* If-Match of a write against the stored document it replaces (its JSON text, as a GET sends it without the
 * newline; h_devices.c): MP_OK when absent or matching, else MP_EPRECONDITION (412) naming the current ETag. */
mp_status mpd_check_if_match(const mpd_request *req, const char *stored, mp_error *err);
/*
 * A PUT's or DELETE's preconditions (RFC 9110 section 13.2.2, in its order) against the stored document (its JSON
 * text, as a GET sends it without the newline), NULL when none is stored (h_devices.c): If-Match fails on a missing
 * resource or another tag; If-None-Match fails on an existing resource for "*" (create only) or a matching tag.
 * MP_OK, or MP_EPRECONDITION (412) naming the header.
 */
mp_status mpd_check_preconditions(const mpd_request *req, const char *stored, mp_error *err);

#endif /* MPD_ROUTES_H */
