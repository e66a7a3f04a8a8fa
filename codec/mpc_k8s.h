/*
 * mpc_k8s.h: kube-scheduler's extender v1 protocol both ways (k8s.io/kube-scheduler/extender/v1 types.go; a copy of
 * the types in tests/ref/k8s/). The extender's structs carry no json tags, so their keys are the Go field names
 * (Pod, Nodes, NodeNames; Nodes, NodeNames, FailedNodes, FailedAndUnresolvableNodes, Error; Host, Score), while
 * the Pod and Node objects inside are Kubernetes' own JSON (metadata, spec, status). Decodes ExtenderArgs into the
 * service's placement request: the pod's job from its annotations or its serving container's
 * arguments, each node's GPU facts from its labels and status (types/k8s_types.h); encodes ExtenderFilterResult and HostPriorityList.
 * Calls nothing: model names become candidate ids here, the store is asked by service/.
 *
 * With nodeCacheCapable: true kube-scheduler sends NodeNames alone: each name becomes a node of name_only facts,
 * which the node cache fills (service/mps_k8s.c).
 *
 * Ownership: the decoded arguments borrow the body (each node's object is echoed back by the filter answer, as
 * kube-scheduler with nodeCacheCapable: false takes the Node objects that passed); free them with
 * mpc_k8s_args_free before the body. Encoders write into the caller's writer (mpc_json.h).
 */
#ifndef MPC_K8S_H
#define MPC_K8S_H

#include <cjson/cJSON.h>

#include "../types/k8s_types.h"
#include "mpc_json.h"

typedef struct mpc_k8s_args {
	mps_k8s_request rq;		/* rq.nodes: heap */
	const cJSON **items;		/* per node, its object in the body (borrowed); NULL when read as a stream */
	bool nodes_given;		/* Nodes was a NodeList (not null) */
	/* read as a stream (mpc_k8s_stream.h): each node's object as its text, echo + echo_at[i], echo_len[i] bytes
	 * (owned, NULL when not kept), and the Pod's tree (owned) */
	char *echo;
	size_t *echo_at, *echo_len;
	cJSON *pod_tree;
} mpc_k8s_args;

/*
 * ExtenderArgs (body, borrowed) into *out. What kube-scheduler could not have sent is a 422 naming the member
 * ("/Pod", "/Nodes/items/3/metadata/name"); what the pod's owner wrote wrong (a malformed memplan.io annotation, a
 * vLLM argument that is not a number) is not an error here: the pod's state says BAD_JOB with the message naming
 * the annotation or argument, and the filter answers it in Error. Unknown members are ignored, as Go's decoder
 * does. Errors: MP_EINVAL, MP_ETOOLARGE (more than MPS_K8S_MAX_NODES nodes), MP_ENOMEM.
 */
mp_status mpc_k8s_args_decode(const cJSON *body, mpc_k8s_args *out, mp_error *err);
/* Releases what *a holds (the nodes, the stream's texts and Pod tree); *a is then empty. */
void mpc_k8s_args_free(mpc_k8s_args *a);

/* The rules one Pod object and one Node object are read by (mpc_k8s_args_decode, the stream decoder and POST
 * /v1/observations call them): the pod's GPU request and job into *pod (its problems in pod->state and pod->error;
 * the job's model ref names the first candidate id); node i's name, labels and allocatable count into *n, for the
 * pod's GPU resource. A node without a valid name is MP_EINVAL naming "/Nodes/items/<i>/metadata/name"; a bad
 * label is the node's own (n->bad). */
void mpc_k8s_read_pod(const cJSON *p, mps_k8s_pod *pod);
mp_status mpc_k8s_read_node(const cJSON *item, size_t i, const mps_k8s_pod *pod, mps_k8s_node *n, mp_error *err);
/* A node's name (NUL-terminated) into n->name: 1 to 253 bytes of printable ASCII without '"' (what kube-scheduler
 * sends is echoed, so only what could break the answer is refused). The error, MP_EINVAL, names where it sits:
 * "/NodeNames/<i>" (from_names) or "/Nodes/items/<i>/metadata/name". */
mp_status mpc_k8s_node_name(const char *name, size_t i, bool from_names, mps_k8s_node *n, mp_error *err);

/*
 * The stored model ids a model name may mean, in the order tried: a Hugging Face id or path is lowercased and taken
 * after its last '/'; then without a "meta-" prefix; then each of those cut before the first "-instruct", "-chat",
 * "-it", "-hf" or "-base" token (the tuned and converted variants of a base model share its architecture).
 * Only valid ids are kept, without repeats. Returns how many (at most MPS_K8S_MAX_CANDIDATES).
 * Worked example (tests/test_k8s.c): "meta-llama/Meta-Llama-3-8B-Instruct" -> meta-llama-3-8b-instruct,
 * llama-3-8b-instruct, meta-llama-3-8b, llama-3-8b.
 */
size_t mpc_k8s_model_candidates(const char *name, char out[][MP_STORE_ID_MAX], size_t cap);

/* ExtenderFilterResult: the nodes that passed (Nodes echoing their objects when Nodes was sent, NodeNames with
 * their names), FailedNodes and FailedAndUnresolvableNodes with a reason each, Error. */
void mpc_k8s_filter_write(mpc_out *w, const mpc_k8s_args *a, const mps_k8s_result *r);
/* HostPriorityList: [{"Host": name, "Score": 0..10}] for every node sent, in order. */
void mpc_k8s_prioritize_write(mpc_out *w, const mpc_k8s_args *a, const mps_k8s_result *r);

#endif /* MPC_K8S_H */
