/*
 * k8s_types.h: kube-scheduler's extender call as memplan holds it: the pod's job and, per node, the GPU facts its
 * labels and status carry (decoded by codec/mpc_k8s.c), the operator's policy, and the verdict per node and per class
 * of alike nodes (filled by service/mps_k8s.c, whose header states the rules). Plain values; the result's arrays are
 * heap (service/mps_k8s.h: mps_k8s_result_free).
 */
#ifndef MPS_K8S_TYPES_H
#define MPS_K8S_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "types.h"

#define MPS_K8S_MAX_NODES 15000		/* kube-scheduler's feasible nodes in one call; Kubernetes' tested limit is 5,000 */
#define MPS_K8S_NAME_MAX 254		/* a node or pod name: a DNS subdomain of at most 253 bytes */
#define MPS_K8S_MAX_CANDIDATES 6	/* stored model ids tried for one model name */
#define MPS_K8S_WHERE_MAX (96 + 2 + MP_POINTER_MAX) /* where a problem sits: the pod's source and the pointer */
/* "memplan: " + where + an mp_error message + "; and N more problems not listed" (others that do not fit) */
#define MPS_K8S_ERROR_MAX (16 + MPS_K8S_WHERE_MAX + MP_MESSAGE_MAX + 64)

/* Where the pod's job came from. */
typedef enum mps_k8s_job_state {
	MPS_K8S_NO_JOB = 0,	/* no memplan annotation and no vLLM / SGLang container: every node passes */
	MPS_K8S_JOB,		/* a job to judge */
	MPS_K8S_BAD_JOB,	/* a malformed annotation or launch: the filter answers Error (pod.error) */
	MPS_K8S_UNSUPPORTED,	/* a launch memplan does not model (pipeline parallelism): every node passes */
} mps_k8s_job_state;

typedef struct mps_k8s_pod {
	char name[MPS_K8S_NAME_MAX];
	char namespace_[64];
	char resource[96];		/* the GPU resource it requests: "nvidia.com/gpu", "nvidia.com/mig-1g.10gb"; "" */
	uint64_t gpus;			/* how many: the containers' limits summed (init containers: the largest) */
	mps_k8s_job_state state;
	char error[MPS_K8S_ERROR_MAX];	/* BAD_JOB: what is wrong, naming the annotation or argument */
	char note[160];			/* UNSUPPORTED: why it is passed through */
	char source[96];		/* "annotation memplan.io/inference", "container vllm: args", ... */
	char engine[16];		/* the serving container's engine ("vllm", "sglang"), "" when annotated */
	char container[64];		/* that container's name */
	char image[256];		/* and its image ("vllm/vllm-openai:v0.11.0"), "" when not given */
	bool explicit_model;		/* the model came from an annotation (an unknown one is an error) */
	char model_from[200];		/* where the model was named: "annotation memplan.io/model", ... */
	mps_fit_job job;		/* the job; its model ref names the first candidate */
	char model_name[256];		/* the model as the pod names it ("meta-llama/Llama-3.1-70B-Instruct") */
	char candidates[MPS_K8S_MAX_CANDIDATES][MP_STORE_ID_MAX];	/* stored ids to try, in order */
	size_t ncandidates;
	bool sequence_from_model;	/* no length given: the model's context, as vLLM's max_model_len default */
	bool num_gpus_given;		/* the job says how many GPUs it uses (an engine's tp x dp); else the pod's */
	char assumption[160];		/* what the job assumed that the pod did not say ("bf16 weights (vLLM --dtype auto)") */
} mps_k8s_pod;

/* What one node's labels and status say. Strings are copied; "" and 0 mean absent. */
typedef struct mps_k8s_node {
	char name[MPS_K8S_NAME_MAX];
	char profile[MP_STORE_ID_MAX];	/* feature.node.kubernetes.io/memplan-profile: a stored device id */
	char product[128];		/* nvidia.com/gpu.product as labelled */
	char gke_accelerator[96];	/* cloud.google.com/gke-accelerator */
	uint64_t memory_mib;		/* nvidia.com/gpu.memory (MIG single: the slice's), or the mixed MIG
					 * profile's nvidia.com/mig-<profile>.memory */
	uint64_t label_count;		/* nvidia.com/gpu.count (or the mixed MIG profile's .count) */
	bool count_stated;		/* a node agent's report stated label_count, 0 included */
	uint64_t replicas;		/* nvidia.com/gpu.replicas */
	char sharing_strategy[24];	/* nvidia.com/gpu.sharing-strategy: "none", "time-slicing", "mps" */
	bool has_allocatable;
	uint64_t allocatable;		/* status.allocatable[pod resource] */
	char bad[200];			/* a label or quantity that is not what GFD writes: the node fails with it */
	bool name_only;			/* kube-scheduler sent the name alone (nodeCacheCapable: true): the facts come
					 * from the node cache, or the node is unknown */
} mps_k8s_node;

typedef struct mps_k8s_request {
	mps_k8s_pod pod;
	mps_k8s_node *nodes;		/* borrowed; one per node of Nodes.items (or of NodeNames), in order */
	size_t nnodes;
	bool names_only;		/* NodeNames without Nodes (nodeCacheCapable: true): each node's facts are the
					 * node cache's */
} mps_k8s_request;

struct mps_node_cache;

/* The operator's settings (memplan serve --k8s-*), and the node cache with the time to read it at. */
typedef struct mps_k8s_policy {
	bool unknown_device_fails;	/* false: a node whose GPU maps to no profile passes (fail open) */
	double headroom_floor;		/* fraction of the budget a placement should leave free, [0, 0.9] */
	struct mps_node_cache *cache;	/* the agents' reports (service/mps_nodes.h); NULL: labels only */
	int64_t now;			/* Unix seconds: a report holds while its expires_at is later */
} mps_k8s_policy;

typedef enum mps_k8s_verdict {
	MPS_K8S_PASS = 0,
	MPS_K8S_FAIL,			/* FailedNodes: an unknown device under the fail setting, a bad label */
	MPS_K8S_UNRESOLVABLE,		/* FailedAndUnresolvableNodes: preemption cannot make it fit */
} mps_k8s_verdict;

/* One distinct kind of node in the request (same device facts): judged once, shared by its nodes. */
typedef struct mps_k8s_class {
	char product[128], gke_accelerator[96], profile_label[MP_STORE_ID_MAX];
	uint64_t memory_mib, replicas;
	bool name_only;			/* its nodes were sent by name and the node cache has no report of them */
	bool shared;			/* time-slicing or MPS replicas of one GPU */
	bool mig;			/* a MIG slice (single or mixed strategy) */
	bool known;			/* a profile was found */
	bool label_no_fit;		/* no profile, but the gpu.memory label alone shows the job cannot fit */
	const char *matched_by;		/* "memplan-profile", "gpu.product", "gke-accelerator", "gpu.memory" */
	mp_store_device device;		/* the profile (known) */
	char model_name_label[128];	/* DCGM's modelName: the node's NVML name (as wide as product), or the profile's first alias */
	uint64_t capacity_bytes;	/* per GPU, as judged (see k8s.h's rules) */
	bool fits;
	uint64_t total_bytes;		/* the job per GPU on this device */
	uint64_t budget_bytes;
	int64_t headroom_bytes;
	uint64_t fits_with_gpus;	/* the smallest GPU count the job fits with on this device; 0 = none */
	int score;
	char reason[512];		/* why its nodes fail, "" when they pass */
} mps_k8s_class;

typedef struct mps_k8s_node_result {
	mps_k8s_verdict verdict;
	int score;			/* 0 to 10 */
	const char *reason;		/* borrowed from the result; NULL when it passes */
	size_t cls;			/* the node's class, or SIZE_MAX when it has none (no job, bad labels) */
	char own_reason[320];		/* a reason of this node alone (GPU count, bad label) */
} mps_k8s_node_result;

typedef enum mps_k8s_outcome {
	MPS_K8S_OUT_NO_JOB = 0,		/* passed through: the pod asks memplan nothing */
	MPS_K8S_OUT_PLANNED,		/* the job was judged on each node */
	MPS_K8S_OUT_UNKNOWN_MODEL,	/* passed through: a model inferred from container arguments is not stored */
	MPS_K8S_OUT_UNSUPPORTED,	/* passed through: the launch is not modelled */
	MPS_K8S_OUT_ERROR,		/* Error: the pod's description is wrong */
} mps_k8s_outcome;

typedef struct mps_k8s_result {
	mps_k8s_outcome outcome;
	char error[MPS_K8S_ERROR_MAX];	/* ExtenderFilterResult.Error; "" when none */
	char model_id[MP_STORE_ID_MAX];	/* the stored model judged */
	mps_k8s_node_result *nodes;	/* one per request node (heap) */
	mps_k8s_class *classes;		/* heap */
	size_t nclasses;
	uint64_t passed, failed, unresolvable, unknown_device;
	uint64_t from_cache;		/* nodes judged by their agent's report in the node cache */
	uint64_t unreported;		/* names sent alone that the node cache holds no report for */
} mps_k8s_result;

#endif /* MPS_K8S_TYPES_H */
