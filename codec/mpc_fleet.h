/*
 * mpc_fleet.h: the fleet's documents both ways: a node agent's report of its node's GPUs (PUT /v1/nodes/{name}, the GET
 * of it and the listing), and an observation of a running engine (POST /v1/observations, its answer, the listing
 * with memplan's error per engine, version, device and model, and the terms taken from observations). Field tables
 * (model/fields.h) name every bad member; calls nothing above codec/.
 *
 * Ownership: decoders fill caller-owned structs (an observation request holds a model ref and a pod object the
 * caller releases with mpc_observation_request_release); writers write into the caller's mpc_out.
 */
#ifndef MPC_FLEET_H
#define MPC_FLEET_H

#include <cjson/cJSON.h>

#include "../types/fleet_types.h"
#include "mpc_json.h"

/*
 * A report body (PUT /v1/nodes/{name}): product, memory_mib, count, profile, replicas, sharing_strategy,
 * mig_strategy, mig [{profile, memory_mib, count}], agent, lease_seconds (MPS_NODE_LEASE_MIN_SECONDS to _MAX; absent:
 * MPS_NODE_LEASE_DEFAULT_SECONDS). At least one of product, memory_mib and profile. name is the path's (checked
 * here: 1 to 253 bytes of a DNS subdomain's characters). Errors: MP_EINVAL naming every bad member ("/mig/2/count").
 */
mp_status mpc_node_decode(const cJSON *body, const char *name, mps_node_facts *out, mp_error *err);
/* Whether name is a DNS subdomain as Kubernetes names nodes (1 to 253 of a-z 0-9 '-' '.', a letter or digit at both
 * ends); mpc_node_name_check is the 422 naming "/name" when not. */
bool mpc_node_name_ok(const char *name);
mp_status mpc_node_name_check(const char *name, mp_error *err);
/* The node document: the report with updated_at and expires_at as ISO 8601 UTC, as member key. */
void mpc_node_write(mpc_out *w, const char *key, const mps_node_facts *f);
/* Unix seconds as "2026-12-01T10:00:00Z" into out (at least 21 bytes). */
void mpc_iso8601(int64_t t, char *out, size_t len);

/* ----- observations ----------------------------------------------------------------------------------------- */

/*
 * POST /v1/observations in one of two forms:
 *   the agent's: {"pod": <the Pod object, as the kubelet lists it>, "node": "<name>", "metrics": "<its /metrics
 *     text>" | "log": "<its start-up log>", "engine_version": "0.11.0", "key": "<uid>/<container>/<restarts>"}:
 *     the launch is read from the pod as the extender reads it (codec/mpc_k8s.h), the device from the node;
 *   a person's: {"engine": "vllm", "engine_version": "0.11.0", "plan": <a POST /v1/plan/inference body with the
 *     device>, "metrics" | "log": "...", "key": "..."}: the plan is the launch.
 * Either may add "observed_at" (ISO 8601 UTC; absent: now). Errors: MP_EINVAL naming every bad member, MP_ENOMEM.
 */
typedef struct mpc_observation_request {
	mps_observation_request rq;	/* what the service takes */
	char *text;			/* the report's text (heap, owned), read once the engine is known */
	bool metrics;			/* text is a metrics exposition */
} mpc_observation_request;

mp_status mpc_observation_decode(const cJSON *body, mpc_observation_request *out, mp_error *err);
void mpc_observation_request_release(mpc_observation_request *rq);
/* The report's text read for engine e into rq->check.report (pointer "/metrics" or "/log"). */
mp_status mpc_observation_report(mpc_observation_request *rq, mp_engine e, mp_error *err);

/* The launch an observation stands for (the plan's model, device, engine and the engine's inputs), compact JSON
 * into out (len bytes; "" when it does not fit). */
void mpc_observation_settings(const mps_inference_plan *p, char *out, size_t len);
/* One stored observation, as member key. */
void mpc_observation_write(mpc_out *w, const char *key, const mps_observation *o);
/* A correction (a term taken from observations, or why not), as member key. */
void mpc_obs_correction_write(mpc_out *w, const char *key, const mps_obs_correction *c);
/* One error summary row, as member key. */
void mpc_obs_summary_write(mpc_out *w, const char *key, const mps_obs_summary *s);

#endif /* MPC_FLEET_H */
