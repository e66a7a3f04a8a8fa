/*
 * mpc_k8s_stream.h: kube-scheduler's ExtenderArgs read as the body arrives (yajl's event parser), into the same decoded
 * arguments codec/mpc_k8s.h gives, keeping only what placement needs: the Pod object (a tree, bounded), each node's
 * name, the labels memplan reads (nvidia.com/..., the memplan profile, the GKE accelerator) and its GPU allocatable,
 * and, for the filter, each Node object's text to echo back. Everything else is counted and dropped as it passes:
 * a body is bounded by what a request may cost (nodes, labels, values, nesting, an echoed object's size), not by
 * its bytes, and the first limit passed is refused at once. The tree decoder (mpc_k8s_args_decode) stays for
 * ordinary callers; the rules a node and the pod are judged by are its own (mpc_k8s_read_pod, mpc_k8s_read_node),
 * so the two read every body alike (fuzz/fuzz_k8s.c compares them). Calls nothing above codec/.
 *
 * Differences from the tree decoder, by design: member names given twice are refused where memplan reads them (the
 * top level, the NodeList, a node's metadata, name, labels, status and allocatable, all of the Pod), not inside the
 * parts it skips; a body past a limit is a 413 where the tree decoder would have parsed it whole first; JSON's
 * syntax is yajl's, RFC 8259's (a raw control character in a string, or a number such as 01, +1 or 1., is a 400),
 * where cJSON lets those through.
 *
 * Ownership: the stream is the caller's (mpc_k8s_stream_new, mpc_k8s_stream_free). mpc_k8s_stream_finish moves
 * what it read into *out, which then owns it (mpc_k8s_args_free).
 */
#ifndef MPC_K8S_STREAM_H
#define MPC_K8S_STREAM_H

#include "mpc_k8s.h"

/* What one ExtenderArgs body may hold. */
typedef struct mpc_k8s_limits {
	size_t max_nodes;		/* Nodes.items and NodeNames entries (MPS_K8S_MAX_NODES) */
	size_t max_node_bytes;		/* the text of one Node object (kept to be echoed) */
	size_t max_node_values;		/* JSON values inside one Node object */
	size_t max_labels;		/* metadata.labels members of one node */
	size_t max_pod_values;		/* JSON values inside the Pod */
	size_t max_other_values;	/* JSON values of members memplan does not read (Go's decoder ignores them) */
	unsigned max_depth;		/* nesting of objects and arrays */
} mpc_k8s_limits;

/*
 * The limits a kube-scheduler body stays within (mpc_k8s_stream.c says why each): 15,000 nodes, 1 MiB and 100,000
 * values per Node object (about 20 KB and 1,000 values with GPU Feature Discovery's and Node Feature Discovery's
 * labels and an image list), 2,000 labels per node, 100,000 values in the Pod, 10,000 values of members memplan
 * does not read, nesting 64 deep.
 */
void mpc_k8s_limits_default(mpc_k8s_limits *lim);

typedef struct mpc_k8s_stream mpc_k8s_stream;

/* A stream for one body; echo: keep each Node object's text (the filter echoes the nodes that pass; prioritize
 * needs only their names). NULL when out of memory. */
mpc_k8s_stream *mpc_k8s_stream_new(const mpc_k8s_limits *lim, bool echo);
void mpc_k8s_stream_free(mpc_k8s_stream *s);

/*
 * The next n bytes of the body. Errors, each final (later calls return it again): MP_EPARSE (not JSON, or not
 * UTF-8: 400, near which byte), MP_ETOOLARGE (a limit passed: 413, naming it and where: "/Nodes/items/15000"),
 * MP_EINVAL (a shape kube-scheduler could not have sent, as the tree decoder says it: "/Pod", "/Nodes/items/3/
 * metadata/name"; a member given twice; a string holding U+0000), MP_ENOMEM.
 */
mp_status mpc_k8s_stream_feed(mpc_k8s_stream *s, const char *data, size_t n, mp_error *err);

/* The body is complete: the decoded arguments into *out (as mpc_k8s_args_decode fills them, with out->echo the
 * nodes' texts when the stream keeps them, out->items NULL). Errors: those of feed (an empty or truncated body is
 * MP_EPARSE), and those of mpc_k8s_args_decode. *out is empty on error. */
mp_status mpc_k8s_stream_finish(mpc_k8s_stream *s, mpc_k8s_args *out, mp_error *err);

/* Bytes the stream holds now (kept texts, nodes, the Pod's tree), for the daemon's budget of bytes in flight. */
size_t mpc_k8s_stream_held(const mpc_k8s_stream *s);

/*
 * ExtenderFilterResult around echoed Node texts (out->echo), written as pieces so the nodes' texts are sent from
 * where they were kept, never copied: *head (everything up to the first echoed node), then the texts of the nodes
 * that passed separated by ',', then *tail. Both heap (free()), with their lengths; NULL when out of memory. The
 * members and their order are mpc_k8s_filter_write's. For arguments without echoed texts, or an answer with an
 * Error (no Nodes), *head is "" and *tail the whole answer.
 */
mp_status mpc_k8s_filter_pieces(const mpc_k8s_args *a, const mps_k8s_result *r, char **head, size_t *head_len,
				char **tail, size_t *tail_len);

#endif /* MPC_K8S_STREAM_H */
