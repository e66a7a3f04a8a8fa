/*
 * fleet_types.h: what the fleet tells memplan about itself. Two kinds of record: a node's GPUs as its node agent
 * reports them (PUT /v1/nodes/{name}: the central catalog's node cache, which the kube-scheduler extender reads when
 * kube-scheduler sends node names only), and an observation (POST /v1/observations): what a running engine reported
 * at start-up (its blocks, tokens, memory terms) beside what memplan predicted for the same launch, with the
 * identity of the launch (engine and version, device, model, settings, pod, time). Plain values; codec/ decodes and
 * renders them, service/ keeps and judges them.
 */
#ifndef MPS_FLEET_TYPES_H
#define MPS_FLEET_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "k8s_types.h"
#include "types.h"

/* ----- the node cache ------------------------------------------------------------------------------------- */

#define MPS_NODE_MAX_MIG 8		/* MIG profiles one node reports (A100/H100 have six) */
#define MPS_NODE_LEASE_MIN_SECONDS 10
#define MPS_NODE_LEASE_MAX_SECONDS 86400
#define MPS_NODE_LEASE_DEFAULT_SECONDS 300	/* an agent renewing every 60 s misses four renewals before aging out */
#define MPS_NODE_CACHE_MAX 50000	/* nodes one catalog keeps (Kubernetes' tested limit is 5,000 a cluster) */

/* One MIG device profile of a node: nvidia.com/mig-<profile> with its slice memory and how many there are. */
typedef struct mps_node_mig {
	char profile[32];		/* "1g.10gb", "3g.40gb" (NVML's profile name, as GFD and the device plugin) */
	uint64_t memory_mib;		/* one slice's memory, MiB (NVML) */
	uint64_t count;			/* slices of that profile on the node */
} mps_node_mig;

/* A node's GPUs as its agent saw them (nvidia-smi / NVML). One kind of GPU a node, as GPU Feature Discovery labels
 * it. Strings "" and numbers 0 mean "not reported". */
typedef struct mps_node_facts {
	char name[MPS_K8S_NAME_MAX];	/* the Kubernetes node name (spec.nodeName) */
	char product[128];		/* NVML's name ("NVIDIA H100 80GB HBM3") or GFD's product label */
	uint64_t memory_mib;		/* NVML total of one GPU, MiB (nvidia-smi memory.total) */
	uint64_t count;			/* GPUs on the node */
	bool count_given;		/* the report stated count (0 included: a node with no GPU to give) */
	char profile[MP_STORE_ID_MAX];	/* the node's measured device profile in this catalog (measured-<node>) */
	uint64_t replicas;		/* time-slicing or MPS replicas of each GPU (1 or 0: not shared) */
	char sharing_strategy[24];	/* "none", "time-slicing", "mps" */
	char mig_strategy[16];		/* "none", "single", "mixed" (the device plugin's MIG strategy) */
	mps_node_mig mig[MPS_NODE_MAX_MIG];
	size_t nmig;
	char agent[64];			/* what reported it ("memplan-node-agent 0.1.0"), "" when not said */
	uint64_t lease_seconds;		/* how long the report holds without a renewal */
	int64_t updated_at;		/* Unix seconds of the last report (set by the cache) */
	int64_t expires_at;		/* updated_at + lease_seconds: the node ages out after it */
} mps_node_facts;

/* ----- observations ----------------------------------------------------------------------------------------- */

/* A stored observation is the store's row (db/rows.h: mp_store_observation): engine and term as their names. */
typedef mp_store_observation mps_observation;

/* POST /v1/observations, decoded (codec/mpc_fleet.h says the two forms). */
typedef struct mps_observation_request {
	bool from_pod;
	mps_k8s_pod pod;		/* from_pod: the launch as read from the pod (codec/mpc_k8s.h: mpc_k8s_read_pod) */
	char node[MPS_K8S_NAME_MAX];	/* from_pod: the node it runs on; its device is the node cache's */
	mps_engine_check_request check;	/* the plan (from_pod: filled by the service) and the engine's report */
	char engine_version[32];	/* "" = from the pod's image tag, else unknown */
	char key[200];
	char observed_at[32];		/* "" = now */
} mps_observation_request;

/* A term taken from observations for (engine, version line, device): their median, and how many. */
typedef struct mps_obs_correction {
	mps_obs_term term;
	bool applies;			/* enough observations, consistently off the model: the plan uses the median */
	int64_t median_bytes;
	uint64_t observations;		/* of this key and term, newest first, at most MPS_OBS_WINDOW */
	uint64_t off_same_side;		/* of them, how many lie beyond their resolution on the median's side */
	char why[200];			/* why it does not apply, "" when it does */
} mps_obs_correction;

#define MPS_OBS_MIN 3			/* observations before a term is taken from them */
#define MPS_OBS_WINDOW 50		/* the newest observations of a key that count */
#define MPS_OBS_AGREE 0.8		/* the share of them that must be off on one side */

/* The error of memplan per (engine, version, device, model): the newest observations' median. */
typedef struct mps_obs_summary {
	mp_engine engine;
	char engine_version[32], device_id[MP_STORE_ID_MAX], model_id[MP_STORE_ID_MAX], figure[40];
	uint64_t observations;
	double median_error_ratio;
	double last_error_ratio;
} mps_obs_summary;

#endif /* MPS_FLEET_TYPES_H */
