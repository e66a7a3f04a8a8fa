/*
 * k8s.h: placement for kube-scheduler's extender (k8s.io/kube-scheduler/extender/v1): does the pod's job fit on
 * each candidate node's GPUs? The request arrives decoded (codec/k8s.c): the pod's job (from its memplan.io
 * annotations or its vLLM / SGLang container's arguments) and, per node, the facts its labels and status carry
 * (NVIDIA GPU Feature Discovery's nvidia.com/gpu.* labels, the allocatable GPU count). This file maps each node to
 * a stored device profile and judges the job there with the fit use case's own planner calls; no JSON, no HTTP.
 *
 * The rules, each one documented where it is applied (k8s.c):
 *   device of a node: the profile named by memplan's own node label (feature.node.kubernetes.io/memplan-profile,
 *     written by the memplan node agent), else a profile one of whose aliases is the node's nvidia.com/gpu.product
 *     (without -SHARED and -MIG-<profile>) or cloud.google.com/gke-accelerator, else the profile the node's
 *     nvidia.com/gpu.memory could be (the most conservative of them), else unknown: the policy says pass or fail;
 *   capacity per GPU: the profile's, at most nvidia.com/gpu.memory MiB (a MIG slice's memory), divided by the
 *     replicas of a shared GPU (time-slicing or MPS: the share each replica is guaranteed);
 *   GPU count: the pod's nvidia.com/gpu (or nvidia.com/mig-<profile>) limit; a node with fewer allocatable fails
 *     unresolvably (preemption cannot add GPUs), as does one where even empty GPUs cannot hold the job;
 *   score (prioritize): the tightest fit that keeps the headroom floor scores highest (see mps_k8s_score).
 *
 * Ownership: requests are borrowed; results are caller-owned structs whose arrays the caller frees with
 * mps_k8s_result_free. Thread-safe as the service is.
 */
#ifndef MPS_K8S_H
#define MPS_K8S_H

#include "service.h"

#define MPS_K8S_MAX_NODES 15000		/* kube-scheduler's feasible nodes in one call; Kubernetes' tested limit is 5,000 */
#define MPS_K8S_NAME_MAX 254		/* a node or pod name: a DNS subdomain of at most 253 bytes */
#define MPS_K8S_MAX_CANDIDATES 6	/* stored model ids tried for one model name */
#define MPS_K8S_ERROR_MAX 1344 /* "memplan: " + where (300) + an mp_error message (1024) */

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
	uint64_t replicas;		/* nvidia.com/gpu.replicas */
	char sharing_strategy[24];	/* nvidia.com/gpu.sharing-strategy: "none", "time-slicing", "mps" */
	bool has_allocatable;
	uint64_t allocatable;		/* status.allocatable[pod resource] */
	char bad[200];			/* a label or quantity that is not what GFD writes: the node fails with it */
} mps_k8s_node;

typedef struct mps_k8s_request {
	mps_k8s_pod pod;
	mps_k8s_node *nodes;		/* borrowed; one per node of Nodes.items, in order */
	size_t nnodes;
	bool names_only;		/* NodeNames without Nodes: nodeCacheCapable true, which memplan does not do */
} mps_k8s_request;

/* The operator's settings (memplan serve --k8s-*). */
typedef struct mps_k8s_policy {
	bool unknown_device_fails;	/* false: a node whose GPU maps to no profile passes (fail open) */
	double headroom_floor;		/* fraction of the budget a placement should leave free, [0, 0.9] */
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
	bool shared;			/* time-slicing or MPS replicas of one GPU */
	bool mig;			/* a MIG slice (single or mixed strategy) */
	bool known;			/* a profile was found */
	bool label_no_fit;		/* no profile, but the gpu.memory label alone shows the job cannot fit */
	const char *matched_by;		/* "memplan-profile", "gpu.product", "gke-accelerator", "gpu.memory" */
	mp_store_device device;		/* the profile (known) */
	char model_name_label[MP_STORE_ALIAS_MAX];	/* DCGM's modelName for the profile: its first alias */
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
} mps_k8s_result;

/* "planned", "no_job", "unknown_model", "unsupported", "error". */
const char *mps_k8s_outcome_name(mps_k8s_outcome o);

/*
 * Judges the pod's job on every node (kube-scheduler's filter and prioritize both call this). Problems of the pod
 * (a malformed annotation, a model the annotation names that is not stored, a layout its GPU count cannot take)
 * are not errors of the call: out->error says them, for ExtenderFilterResult.Error. Errors: MP_ENOMEM, MP_EDB,
 * MP_ETOOLARGE (more than MPS_K8S_MAX_NODES nodes). *out is filled either way; release with mps_k8s_result_free.
 */
mp_status mps_k8s_place(mps_service *s, const mps_k8s_request *rq, const mps_k8s_policy *policy, mps_k8s_result *out,
			mp_error *err);
void mps_k8s_result_free(mps_k8s_result *r);

/*
 * The prioritize score of a placement, 0 to 10 (kube-scheduler's MinExtenderPriority to MaxExtenderPriority): a
 * job that does not fit scores 0; one that fits scores by the headroom h = headroom / budget it leaves: h below
 * the floor f scores 1 (it fits, but tighter than wanted), h = f scores 10, and the score falls by one for each
 * tenth of the remaining range (1 - f) the placement leaves unused:
 *   score = 10 - floor(10 (h - f) / (1 - f)), at least 1.
 * So the tightest fit that keeps the floor wins, and a small job is steered away from the GPUs a big one needs
 * (bin packing by memory). Worked example (tests/test_k8s.c): floor 0.1, Llama-3-8B bf16 at 4096 tokens
 * (17,638,465,536 bytes) at utilization 0.9: on an H200 the budget is 135,098,892,288 bytes, h = 0.8694, score
 * 10 - floor(8.55) = 2; on an L40S labelled 46068 MiB it is 43,475,219,251 bytes, h = 0.5943, score 10 - 5 = 5.
 */
int mps_k8s_score(bool fits, int64_t headroom_bytes, uint64_t budget_bytes, double floor);

#endif /* MPS_K8S_H */
