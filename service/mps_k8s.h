/*
 * mps_k8s.h: placement for kube-scheduler's extender (k8s.io/kube-scheduler/extender/v1): does the pod's job fit on
 * each candidate node's GPUs? The request arrives decoded (codec/mpc_k8s.c): the pod's job (from its memplan.io
 * annotations or its vLLM / SGLang container's arguments) and, per node, the facts its labels and status carry
 * (NVIDIA GPU Feature Discovery's nvidia.com/gpu.* labels, the allocatable GPU count). This file maps each node to
 * a stored device profile and judges the job there with the fit use case's own planner calls; no JSON, no HTTP.
 *
 * The rules, each one documented where it is applied (mps_k8s.c):
 *   facts of a node: its node agent's report in the node cache (service/mps_nodes.h) while its lease holds, else the
 *     labels of the Node object kube-scheduler sent; with nodeCacheCapable: true kube-scheduler sends names only,
 *     and a name the cache holds no report of is a node of unknown device (the policy says pass or fail);
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
 * The request and result structs are types/k8s_types.h's. Ownership: requests are borrowed; results are
 * caller-owned structs whose arrays the caller frees with mps_k8s_result_free. Thread-safe as the service is.
 */
#ifndef MPS_K8S_H
#define MPS_K8S_H

#include "../types/k8s_types.h"
#include "service.h"

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

/*
 * The extender's rules for one pod or one node, for what observes them (service/mps_observe.c):
 * mps_k8s_pod_model resolves the pod's model as the extender does (its candidate ids in order) into *m, its stored
 * id into id (MP_STORE_ID_MAX bytes); job is the pod's, its model ref set to the id found. Errors: MP_ENOTFOUND (no
 * candidate is stored), those of mps_model_resolve.
 * mps_k8s_node_device maps node's report in the node cache at now to the device profile the extender judges it by
 * (its capacity per GPU for resource, "" = nvidia.com/gpu, applied). Errors: MP_ENOTFOUND naming "/node" (no
 * report, or GPUs no profile matches), MP_EDB, MP_ENOMEM.
 */
struct mps_node_cache;
mp_status mps_k8s_pod_model(mps_service *s, const mps_k8s_pod *pod, mps_fit_job *job, mps_model *m, char *id,
			    mp_error *err);
mp_status mps_k8s_node_device(mps_service *s, struct mps_node_cache *cache, int64_t now, const char *node,
			      const char *resource, mp_store_device *out, mp_error *err);

#endif /* MPS_K8S_H */
