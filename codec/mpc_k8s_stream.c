/*
 * mpc_k8s_stream.c: ExtenderArgs read as it arrives (mpc_k8s_stream.h), with yajl 2's event parser (Debian libyajl-dev):
 * a stack of frames, one per open object or array, each knowing what its values are for. The Pod becomes a cJSON
 * tree (the job decoders read trees); each node becomes a tree of the few members memplan reads, decoded by
 * mpc_k8s_read_node as soon as the pod is known; everything else only moves counters. A Node object's text is
 * copied, byte for byte as sent, from the chunks it spans. Knows JSON and the extender's shape, not HTTP.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "codec.h"
#include "mpc_json.h"
#include "mpc_k8s_stream.h"

/* Why each default is what it is (mpc_k8s_stream.h): kube-scheduler sends every feasible Node object, 10 to 20 KB each
 * with GFD and NFD labels and the image list (a node's status.images has at most 50 entries, kubelet's
 * --node-status-max-images default; NFD labels a few hundred features); 15,000 nodes is MPS_K8S_MAX_NODES; a Pod is
 * a few KB, a large one with many containers and annotations a few hundred KB. The bounds sit 50 to 100 times above
 * what real objects hold and far below what the memory of a bounded body allows. */
void mpc_k8s_limits_default(mpc_k8s_limits *lim)
{
	lim->max_nodes = MPS_K8S_MAX_NODES;
	lim->max_node_bytes = 1024 * 1024;
	lim->max_node_values = 100000;
	lim->max_labels = 2000;
	lim->max_pod_values = 100000;
	lim->max_other_values = 10000;
	lim->max_depth = 64;
}

/* What a frame's values are for. */
enum role {
	R_TOP,		/* the ExtenderArgs object */
	R_SKIP,		/* a value memplan does not read: counted only */
	R_POD,		/* inside Pod: a tree */
	R_NODES,	/* the NodeList */
	R_ITEMS,	/* Nodes.items */
	R_NODE,		/* a Node object */
	R_META,		/* its metadata */
	R_LABELS,	/* its metadata.labels */
	R_STATUS,	/* its status */
	R_ALLOC,	/* its status.allocatable */
	R_NAMES,	/* NodeNames */
};

/* Which count a value adds to. */
enum counter { C_OTHER, C_POD, C_NODE };

typedef struct frame {
	unsigned char role, counter;
	bool map;
	cJSON *tree;		/* R_POD and a node's frames: the container being built (NULL: not kept) */
	size_t index;		/* an array's next element */
	char *key;		/* a map's current member name (heap, grown as needed) */
	size_t key_len, key_cap;
	unsigned labels;	/* R_LABELS: members seen */
} frame;

/* One node whose pod was not known yet when it ended (Nodes before Pod): decoded at the end. */
struct mpc_k8s_stream {
	mpc_k8s_limits lim;
	bool echo;
	yajl_handle h;
	mp_status st;		/* MP_OK until the first error, then that error forever */
	mp_error err;
	frame *stack;
	unsigned depth;		/* frames in use */
	size_t base;		/* body bytes before the current chunk */
	const char *chunk;	/* the current chunk (echo copies from it) */
	bool top_is_map, top_seen, done;
	/* what was read */
	bool pod_seen, pod_decoded, nodes_given, nodes_seen, names_seen, items_seen;
	mps_k8s_pod pod;
	cJSON *pod_tree;
	size_t pod_values, other_values;
	mps_k8s_node *nodes;
	cJSON **pending;	/* per node, its tree while the pod is unknown (NULL when decoded) */
	size_t nnodes, cap_nodes;
	size_t names;
	/* NodeNames (nodeCacheCapable: true), each NUL-terminated in names_buf at name_at[i], cut to
	 * MPS_K8S_NAME_MAX bytes (longer is refused by its rule, mpc_k8s_node_name): nodes of their own when Nodes is
	 * not given */
	char *names_buf;
	size_t names_len, names_buf_cap, *name_at, name_at_cap;
	/* the node being read */
	cJSON *node_tree;
	size_t node_values, node_start;	/* node_start: its first byte, as a body offset */
	size_t echo_from;		/* the current chunk's first byte not yet copied (inside a node) */
	char *echo_buf;
	size_t echo_len, echo_cap;
	size_t *echo_at, *echo_n;
	size_t pod_bytes;		/* an estimate of the Pod tree's memory */
};

/* ----- errors and the stack ----------------------------------------------------------------------------- */

/* Records the stream's first error (later ones are not looked at); returns 0, yajl's "stop". */
static int fail(mpc_k8s_stream *s, mp_status st, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(mpc_k8s_stream *s, mp_status st, const char *field, const char *fmt, ...)
{
	if (s->st == MP_OK) {
		char msg[400];
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		s->st = mp_fail(&s->err, st, field, "%s", msg);
	}
	return 0;
}

static int oom(mpc_k8s_stream *s)
{
	return fail(s, MP_ENOMEM, "", "out of memory");
}

/* The JSON pointer of the current position (the open frames' keys and indexes), cut to cap. */
static void where(const mpc_k8s_stream *s, char *out, size_t cap)
{
	size_t o = 0;

	out[0] = '\0';
	for (unsigned i = 0; i < s->depth && o + 2 < cap; i++) {
		const frame *f = &s->stack[i];

		if (f->map && f->key_len) {
			out[o++] = '/';
			for (size_t k = 0; k < f->key_len && o + 3 < cap; k++) {
				if (f->key[k] == '~' || f->key[k] == '/') {
					out[o++] = '~';
					out[o++] = f->key[k] == '~' ? '0' : '1';
				} else {
					out[o++] = f->key[k];
				}
			}
		} else if (!f->map && f->index > 0) {
			o += (size_t)snprintf(out + o, cap - o, "/%zu", f->index - 1);
			if (o >= cap)
				o = cap - 1;
		}
		out[o] = '\0';
	}
}

static frame *top(mpc_k8s_stream *s)
{
	return s->depth ? &s->stack[s->depth - 1] : NULL;
}

static int push(mpc_k8s_stream *s, unsigned char role, unsigned char counter, bool map, cJSON *tree)
{
	frame *f;

	if (s->depth >= s->lim.max_depth) {
		char at[200];

		where(s, at, sizeof(at));
		return fail(s, MP_ETOOLARGE, at, "the body nests objects and arrays deeper than %zu levels",
			    (size_t)s->lim.max_depth);
	}
	f = &s->stack[s->depth++];
	f->role = role;
	f->counter = counter;
	f->map = map;
	f->tree = tree;
	f->index = 0;
	f->key_len = 0;
	f->labels = 0;
	return 1;
}

/* ----- counting ------------------------------------------------------------------------------------------ */

/* A value begins under the current frame: it is counted, and the limit of its kind checked. */
static int count_value(mpc_k8s_stream *s)
{
	frame *f = top(s);
	unsigned c = f ? f->counter : C_OTHER;
	char at[200];

	if (f && !f->map)
		f->index++;
	if (c == C_NODE && ++s->node_values > s->lim.max_node_values) {
		where(s, at, sizeof(at));
		return fail(s, MP_ETOOLARGE, at, "a Node object holds more than %zu JSON values",
			    s->lim.max_node_values);
	}
	if (c == C_POD && ++s->pod_values > s->lim.max_pod_values) {
		where(s, at, sizeof(at));
		return fail(s, MP_ETOOLARGE, at, "the Pod holds more than %zu JSON values", s->lim.max_pod_values);
	}
	if (c == C_OTHER && ++s->other_values > s->lim.max_other_values) {
		where(s, at, sizeof(at));
		return fail(s, MP_ETOOLARGE, at,
			    "the body holds more than %zu JSON values outside Pod, Nodes.items and NodeNames (members "
			    "kube-scheduler does not send)",
			    s->lim.max_other_values);
	}
	return 1;
}

/* ----- building trees ------------------------------------------------------------------------------------ */

/* Adds item to the frame's tree under its current key (a map) or at its end (an array); item NULL: no memory. */
static int add_to_tree(mpc_k8s_stream *s, frame *f, cJSON *item)
{
	if (item == NULL)
		return oom(s);
	if (f->map) {
		char *k = malloc(f->key_len + 1);
		bool ok;

		if (k == NULL) {
			cJSON_Delete(item);
			return oom(s);
		}
		memcpy(k, f->key, f->key_len);
		k[f->key_len] = '\0';
		ok = cJSON_AddItemToObject(f->tree, k, item);
		free(k);
		if (!ok) {
			cJSON_Delete(item);
			return oom(s);
		}
	} else if (!cJSON_AddItemToArray(f->tree, item)) {
		cJSON_Delete(item);
		return oom(s);
	}
	if (f->counter == C_POD)
		s->pod_bytes += 64 + f->key_len;
	return 1;
}

/* A string as a cJSON string (it may not hold U+0000: the tree decoder refuses that too). */
static cJSON *string_item(mpc_k8s_stream *s, const unsigned char *v, size_t n)
{
	char *c;
	cJSON *item;

	if (memchr(v, '\0', n)) {
		char at[200];

		where(s, at, sizeof(at));
		fail(s, MP_EINVAL, at, "strings must not contain U+0000 (\\u0000): it would end the value early");
		return NULL;
	}
	c = malloc(n + 1);
	if (c == NULL)
		return NULL;
	memcpy(c, v, n);
	c[n] = '\0';
	item = cJSON_CreateString(c);
	free(c);
	if (s->depth && top(s)->counter == C_POD)
		s->pod_bytes += n;
	return item;
}

/* A number's text as cJSON reads it (strtod, as cJSON_Parse does). */
static cJSON *number_item(const char *v, size_t n)
{
	char small[64], *buf = n < sizeof(small) ? small : malloc(n + 1);
	cJSON *item;

	if (buf == NULL)
		return NULL;
	memcpy(buf, v, n);
	buf[n] = '\0';
	item = cJSON_CreateNumber(strtod(buf, NULL));
	if (buf != small)
		free(buf);
	return item;
}

/* Whether a node's labels member is one memplan reads (mpc_k8s.h: GFD's nvidia.com/..., memplan's profile, GKE's). */
static bool label_read(const char *k, size_t n)
{
	static const char nv[] = "nvidia.com/", prof[] = "feature.node.kubernetes.io/memplan-profile",
			  gke[] = "cloud.google.com/gke-accelerator";

	return (n > sizeof(nv) - 1 && memcmp(k, nv, sizeof(nv) - 1) == 0) ||
	       (n == sizeof(prof) - 1 && memcmp(k, prof, n) == 0) || (n == sizeof(gke) - 1 && memcmp(k, gke, n) == 0);
}

/* Whether an allocatable member is a GPU resource (the pod's is nvidia.com/gpu or nvidia.com/mig-<profile>). */
static bool alloc_read(const char *k, size_t n)
{
	return (n == 14 && memcmp(k, "nvidia.com/gpu", 14) == 0) || (n > 15 && memcmp(k, "nvidia.com/mig-", 15) == 0);
}

static bool key_is(const frame *f, const char *name)
{
	return f->key_len == strlen(name) && memcmp(f->key, name, f->key_len) == 0;
}

/* ----- nodes --------------------------------------------------------------------------------------------- */

static int grow_nodes(mpc_k8s_stream *s)
{
	size_t cap = s->cap_nodes ? s->cap_nodes * 2 : 64;
	mps_k8s_node *n;
	cJSON **p;
	size_t *a, *l;

	if (cap > s->lim.max_nodes)
		cap = s->lim.max_nodes;
	if ((n = realloc(s->nodes, cap * sizeof(*n))) == NULL)
		return oom(s);
	s->nodes = n;
	if ((p = realloc(s->pending, cap * sizeof(*p))) == NULL)
		return oom(s);
	s->pending = p;
	if ((a = realloc(s->echo_at, cap * sizeof(*a))) == NULL)
		return oom(s);
	s->echo_at = a;
	if ((l = realloc(s->echo_n, cap * sizeof(*l))) == NULL)
		return oom(s);
	s->echo_n = l;
	s->cap_nodes = cap;
	return 1;
}

/* Appends bytes of the current chunk to the echoed texts. */
static int echo_copy(mpc_k8s_stream *s, const char *p, size_t n)
{
	if (n == 0)
		return 1;
	if (s->echo_len + n > s->echo_cap) {
		size_t cap = s->echo_cap ? s->echo_cap : 65536;
		char *b;

		while (cap < s->echo_len + n)
			cap *= 2;
		if ((b = realloc(s->echo_buf, cap)) == NULL)
			return oom(s);
		s->echo_buf = b;
		s->echo_cap = cap;
	}
	memcpy(s->echo_buf + s->echo_len, p, n);
	s->echo_len += n;
	return 1;
}

static int node_begin(mpc_k8s_stream *s)
{
	frame *items = top(s);
	char at[64];

	if (s->nnodes >= s->lim.max_nodes) {
		snprintf(at, sizeof(at), "/Nodes/items/%zu", s->nnodes);
		return fail(s, MP_ETOOLARGE, at, "more than the %zu nodes one call may carry", s->lim.max_nodes);
	}
	if (s->nnodes == s->cap_nodes && !grow_nodes(s))
		return 0;
	items->index++;
	s->node_tree = cJSON_CreateObject();
	if (s->node_tree == NULL)
		return oom(s);
	s->node_values = 0;
	s->node_start = s->base + yajl_get_bytes_consumed(s->h) - 1; /* the '{' just read */
	s->echo_from = yajl_get_bytes_consumed(s->h) - 1;
	s->echo_at[s->nnodes] = s->echo_len;
	return push(s, R_NODE, C_NODE, true, s->node_tree);
}

static int node_end(mpc_k8s_stream *s)
{
	size_t i = s->nnodes, end = s->base + yajl_get_bytes_consumed(s->h);
	mps_k8s_pod none;
	mp_error e = MP_ERROR_INIT;
	char at[64];

	if (end - s->node_start > s->lim.max_node_bytes) {
		snprintf(at, sizeof(at), "/Nodes/items/%zu", i);
		return fail(s, MP_ETOOLARGE, at, "a Node object is larger than %zu bytes", s->lim.max_node_bytes);
	}
	if (s->echo) {
		if (!echo_copy(s, s->chunk + s->echo_from, yajl_get_bytes_consumed(s->h) - s->echo_from))
			return 0;
		s->echo_n[i] = s->echo_len - s->echo_at[i];
	}
	/* the name is judged now whatever the pod; the rest once the pod is known */
	memset(&none, 0, sizeof(none));
	{
		char ptr[sizeof(e.field)];
		mp_status st = MP_OK;

		snprintf(ptr, sizeof(ptr), "/Nodes/items/%zu", i);
		if (mpc_find_duplicate(s->node_tree, ptr, sizeof(ptr), &st)) /* a label or resource given twice */
			return st == MP_ENOMEM ? oom(s) : fail(s, MP_EINVAL, ptr, "a member appears twice in one object; give each once");
		st = mpc_k8s_read_node(s->node_tree, i, s->pod_decoded ? &s->pod : &none, &s->nodes[i], &e);
		if (st != MP_OK) {
			s->st = st;
			s->err = e;
			return 0;
		}
	}
	if (s->pod_decoded) {
		cJSON_Delete(s->node_tree);
		s->pending[i] = NULL;
	} else {
		s->pending[i] = s->node_tree;
	}
	s->node_tree = NULL;
	s->nnodes++;
	return 1;
}

/* One NodeNames entry (n bytes at v) kept, cut to MPS_K8S_NAME_MAX bytes. */
static int keep_name(mpc_k8s_stream *s, const char *v, size_t n)
{
	size_t take = n < MPS_K8S_NAME_MAX ? n : MPS_K8S_NAME_MAX;

	if (s->names > s->name_at_cap) {
		size_t cap = s->name_at_cap ? 2 * s->name_at_cap : 64;
		size_t *p = realloc(s->name_at, cap * sizeof(*p));

		if (p == NULL)
			return oom(s);
		s->name_at = p;
		s->name_at_cap = cap;
	}
	if (s->names_len + take + 1 > s->names_buf_cap) {
		size_t cap = s->names_buf_cap ? s->names_buf_cap : 4096;
		char *p;

		while (cap < s->names_len + take + 1)
			cap *= 2;
		if ((p = realloc(s->names_buf, cap)) == NULL)
			return oom(s);
		s->names_buf = p;
		s->names_buf_cap = cap;
	}
	s->name_at[s->names - 1] = s->names_len;
	memcpy(s->names_buf + s->names_len, v, take);
	s->names_len += take;
	s->names_buf[s->names_len++] = '\0';
	return 1;
}

/* ----- yajl's events ------------------------------------------------------------------------------------- */

/* A scalar value (kind: 'n' null, 'b' boolean, '#' number, 's' string) under the current frame. */
static int scalar(mpc_k8s_stream *s, char kind, const char *v, size_t n, int b)
{
	frame *f = top(s);
	char at[200];

	if (f == NULL) { /* the whole body is a scalar */
		s->top_seen = true;
		return 1;
	}
	if (!count_value(s))
		return 0;
	if (kind == 's' && memchr(v, '\0', n)) {
		where(s, at, sizeof(at));
		return fail(s, MP_EINVAL, at, "strings must not contain U+0000 (\\u0000): it would end the value early");
	}
	switch (f->role) {
	case R_TOP:
		if (key_is(f, "Pod")) {
			s->pod_seen = true; /* not an object: judged at the end, as the tree decoder does */
		} else if (key_is(f, "Nodes")) {
			if (kind != 'n')
				return fail(s, MP_EINVAL, "/Nodes", "Nodes is a NodeList ({\"items\": [...]}) or null");
		} else if (key_is(f, "NodeNames")) {
			if (kind != 'n')
				return fail(s, MP_EINVAL, "/NodeNames", "NodeNames is a list of node names or null");
		}
		return 1;
	case R_NODES:
		if (key_is(f, "items") && kind != 'n')
			return fail(s, MP_EINVAL, "/Nodes/items", "Nodes.items is a list of Node objects");
		return 1;
	case R_ITEMS:
		snprintf(at, sizeof(at), "/Nodes/items/%zu/metadata/name", f->index - 1);
		return fail(s, MP_EINVAL, at, "a node is a Kubernetes Node object");
	case R_NAMES:
		if (kind != 's')
			return fail(s, MP_EINVAL, "/NodeNames", "NodeNames[%zu] is not a node name (a string)",
				    f->index - 1);
		if (++s->names > s->lim.max_nodes)
			return fail(s, MP_ETOOLARGE, "/NodeNames", "more than the %zu node names one call may carry",
				    s->lim.max_nodes);
		return keep_name(s, v, n);
	case R_POD:
		return add_to_tree(s, f, kind == 'n'   ? cJSON_CreateNull()
					 : kind == 'b' ? cJSON_CreateBool(b)
					 : kind == '#' ? number_item(v, n)
						       : string_item(s, (const unsigned char *)v, n));
	case R_NODE:
		/* metadata or status that is not an object: kept as a value that is not one (read as absent) */
		if (key_is(f, "metadata") || key_is(f, "status"))
			return add_to_tree(s, f, cJSON_CreateNull());
		return 1;
	case R_META:
		if (key_is(f, "name"))
			return add_to_tree(s, f, kind == 's' ? string_item(s, (const unsigned char *)v, n) : cJSON_CreateNull());
		if (key_is(f, "labels"))
			return add_to_tree(s, f, cJSON_CreateNull());
		return 1;
	case R_LABELS:
		if (!label_read(f->key, f->key_len))
			return 1;
		return add_to_tree(s, f, kind == 's' ? string_item(s, (const unsigned char *)v, n) : cJSON_CreateNull());
	case R_STATUS:
		if (key_is(f, "allocatable"))
			return add_to_tree(s, f, cJSON_CreateNull());
		return 1;
	case R_ALLOC:
		if (!alloc_read(f->key, f->key_len))
			return 1;
		return add_to_tree(s, f, kind == 's'   ? string_item(s, (const unsigned char *)v, n)
					 : kind == '#' ? number_item(v, n)
						       : cJSON_CreateNull());
	default:
		return 1;
	}
}

static int on_null(void *ctx)
{
	return scalar(ctx, 'n', "", 0, 0);
}

static int on_bool(void *ctx, int b)
{
	return scalar(ctx, 'b', "", 0, b);
}

static int on_number(void *ctx, const char *v, size_t n)
{
	return scalar(ctx, '#', v, n, 0);
}

static int on_string(void *ctx, const unsigned char *v, size_t n)
{
	return scalar(ctx, 's', (const char *)v, n, 0);
}

/* A container opens under the current frame (map: an object). */
static int open_container(mpc_k8s_stream *s, bool map)
{
	frame *f = top(s);
	cJSON *t;

	if (f == NULL) {
		s->top_seen = true;
		s->top_is_map = map;
		return push(s, map ? R_TOP : R_SKIP, C_OTHER, map, NULL);
	}
	if (f->role == R_ITEMS) {
		if (!map) {
			char at[64];

			snprintf(at, sizeof(at), "/Nodes/items/%zu/metadata/name", f->index);
			return fail(s, MP_EINVAL, at, "a node is a Kubernetes Node object");
		}
		return node_begin(s);
	}
	if (!count_value(s))
		return 0;
	switch (f->role) {
	case R_TOP:
		if (key_is(f, "Pod")) {
			s->pod_seen = true;
			if (!map)
				return push(s, R_SKIP, C_POD, false, NULL);
			if ((s->pod_tree = cJSON_CreateObject()) == NULL)
				return oom(s);
			return push(s, R_POD, C_POD, true, s->pod_tree);
		}
		if (key_is(f, "Nodes")) {
			if (!map)
				return fail(s, MP_EINVAL, "/Nodes", "Nodes is a NodeList ({\"items\": [...]}) or null");
			s->nodes_given = true;
			return push(s, R_NODES, C_OTHER, true, NULL);
		}
		if (key_is(f, "NodeNames")) {
			if (map)
				return fail(s, MP_EINVAL, "/NodeNames", "NodeNames is a list of node names or null");
			s->names_seen = true;
			return push(s, R_NAMES, C_OTHER, false, NULL);
		}
		return push(s, R_SKIP, C_OTHER, map, NULL);
	case R_NODES:
		if (key_is(f, "items")) {
			if (map)
				return fail(s, MP_EINVAL, "/Nodes/items", "Nodes.items is a list of Node objects");
			s->items_seen = true;
			return push(s, R_ITEMS, C_OTHER, false, NULL);
		}
		return push(s, R_SKIP, C_OTHER, map, NULL);
	case R_NAMES:
		return fail(s, MP_EINVAL, "/NodeNames", "NodeNames[%zu] is not a node name (a string)", f->index - 1);
	case R_POD:
		t = map ? cJSON_CreateObject() : cJSON_CreateArray();
		if (!add_to_tree(s, f, t))
			return 0;
		return push(s, R_POD, C_POD, map, t);
	case R_NODE:
	case R_META:
	case R_STATUS: {
		unsigned char role = f->role == R_NODE	 ? (key_is(f, "metadata") ? R_META : key_is(f, "status") ? R_STATUS : R_SKIP)
				     : f->role == R_META ? (key_is(f, "labels") ? R_LABELS : R_SKIP)
							 : (key_is(f, "allocatable") ? R_ALLOC : R_SKIP);

		if (f->role == R_META && key_is(f, "name")) { /* a name that is an object or a list: not a name */
			if (!add_to_tree(s, f, cJSON_CreateNull()))
				return 0;
			return push(s, R_SKIP, C_NODE, map, NULL);
		}
		if (role == R_SKIP)
			return push(s, R_SKIP, C_NODE, map, NULL);
		if (!map) { /* metadata, labels, status or allocatable that is a list: not an object, read as absent */
			if (!add_to_tree(s, f, cJSON_CreateNull()))
				return 0;
			return push(s, R_SKIP, C_NODE, false, NULL);
		}
		t = cJSON_CreateObject();
		if (!add_to_tree(s, f, t))
			return 0;
		return push(s, role, C_NODE, true, t);
	}
	case R_LABELS:
	case R_ALLOC:
		if ((f->role == R_LABELS && label_read(f->key, f->key_len)) ||
		    (f->role == R_ALLOC && alloc_read(f->key, f->key_len))) { /* a value that is not a string */
			if (!add_to_tree(s, f, cJSON_CreateNull()))
				return 0;
		}
		return push(s, R_SKIP, C_NODE, map, NULL);
	default:
		return push(s, R_SKIP, f->counter, map, NULL);
	}
}

static int on_start_map(void *ctx)
{
	return open_container(ctx, true);
}

static int on_start_array(void *ctx)
{
	return open_container(ctx, false);
}

/* A member name in a frame whose members memplan reads: given twice is refused (the tree decoder refuses every
 * repeat; these are the ones whose meaning would be in doubt here). */
static bool repeated(const frame *f, const unsigned char *k, size_t n)
{
	const cJSON *c;

	if (f->tree == NULL)
		return false;
	cJSON_ArrayForEach(c, f->tree)
	{
		if (c->string && strlen(c->string) == n && memcmp(c->string, k, n) == 0)
			return true;
	}
	return false;
}

static int on_key(void *ctx, const unsigned char *k, size_t n)
{
	mpc_k8s_stream *s = ctx;
	frame *f = top(s);
	char at[200];

	if (memchr(k, '\0', n)) {
		where(s, at, sizeof(at));
		return fail(s, MP_EINVAL, at, "member names must not contain U+0000 (\\u0000)");
	}
	if (n + 1 > f->key_cap) {
		size_t cap = f->key_cap ? f->key_cap : 64;
		char *p;

		while (cap < n + 1)
			cap *= 2;
		if ((p = realloc(f->key, cap)) == NULL)
			return oom(s);
		f->key = p;
		f->key_cap = cap;
	}
	if (f->role == R_TOP || f->role == R_NODES) {
		static const char *const names[] = { "Pod", "Nodes", "NodeNames", "items", "metadata" };

		for (unsigned i = 0; i < 5; i++)
			if (strlen(names[i]) == n && memcmp(names[i], k, n) == 0) {
				if (f->labels & (1u << i)) { /* (labels holds the names seen in these two frames) */
					memcpy(f->key, k, n);
					f->key_len = n;
					where(s, at, sizeof(at));
					return fail(s, MP_EINVAL, at, "a member appears twice in one object; give each once");
				}
				f->labels |= 1u << i;
			}
	} else if (f->role == R_NODE || f->role == R_META || f->role == R_STATUS || f->role == R_LABELS) {
		/* (the Pod's and the labels' and allocatable's repeats are found when they end, sorted: mpc_find_duplicate;
		 * these frames keep two members at most) */
		if (f->role != R_LABELS && repeated(f, k, n)) {
			memcpy(f->key, k, n);
			f->key_len = n;
			where(s, at, sizeof(at));
			return fail(s, MP_EINVAL, at, "a member appears twice in one object; give each once");
		}
		if (f->role == R_LABELS && ++f->labels > s->lim.max_labels) {
			where(s, at, sizeof(at));
			return fail(s, MP_ETOOLARGE, at, "a node has more than %zu labels", s->lim.max_labels);
		}
	}
	memcpy(f->key, k, n);
	f->key[n] = '\0';
	f->key_len = n;
	return 1;
}

static int close_container(mpc_k8s_stream *s)
{
	frame *f = top(s);

	if (f == NULL)
		return 1;
	s->depth--;
	switch (f->role) {
	case R_NODE:
		return node_end(s);
	case R_POD:
		if (s->depth == 1) { /* the Pod itself ends: its repeats, then its job */
			char ptr[sizeof(s->err.field)] = "/Pod";
			mp_status st = MP_OK;

			if (mpc_find_duplicate(s->pod_tree, ptr, sizeof(ptr), &st))
				return st == MP_ENOMEM ? oom(s)
						       : fail(s, MP_EINVAL, ptr,
							      "a member appears twice in one object; give each once");
			mpc_k8s_read_pod(s->pod_tree, &s->pod);
			s->pod_decoded = true;
		}
		return 1;
	default:
		return 1;
	}
}

static int on_end(void *ctx)
{
	return close_container(ctx);
}

static const yajl_callbacks callbacks = {
	on_null, on_bool, NULL, NULL, on_number, on_string, on_start_map, on_key, on_end, on_start_array, on_end,
};

/* ----- the stream ---------------------------------------------------------------------------------------- */

mpc_k8s_stream *mpc_k8s_stream_new(const mpc_k8s_limits *lim, bool echo)
{
	mpc_k8s_stream *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->lim = *lim;
	if (s->lim.max_depth < 8)
		s->lim.max_depth = 8; /* Pod.spec.containers[i].resources.limits sits at depth 6 */
	s->echo = echo;
	s->stack = calloc(s->lim.max_depth, sizeof(*s->stack));
	s->h = s->stack ? yajl_alloc(&callbacks, NULL, s) : NULL;
	if (s->h == NULL) {
		free(s->stack);
		free(s);
		return NULL;
	}
	return s;
}

void mpc_k8s_stream_free(mpc_k8s_stream *s)
{
	if (s == NULL)
		return;
	yajl_free(s->h);
	for (unsigned i = 0; i < s->lim.max_depth; i++)
		free(s->stack[i].key);
	free(s->stack);
	for (size_t i = 0; s->pending && i < s->nnodes; i++)
		cJSON_Delete(s->pending[i]);
	cJSON_Delete(s->node_tree);
	cJSON_Delete(s->pod_tree);
	free(s->pending);
	free(s->nodes);
	free(s->echo_buf);
	free(s->echo_at);
	free(s->echo_n);
	free(s->names_buf);
	free(s->name_at);
	if (s->pod_decoded) /* (not moved out by mpc_k8s_stream_finish) */
		mpc_model_ref_release(s->pod.job.training ? &s->pod.job.u.train.model : &s->pod.job.u.inference.model);
	free(s);
}

/* yajl's error as ours: where it stopped, as a body offset. */
static mp_status parse_error(mpc_k8s_stream *s, const char *data, size_t n)
{
	unsigned char *msg = yajl_get_error(s->h, 0, (const unsigned char *)data, n);
	size_t at = s->base + yajl_get_bytes_consumed(s->h);
	bool utf8 = msg && strstr((const char *)msg, "UTF8") != NULL;

	s->st = mp_fail(&s->err, MP_EPARSE, "", utf8 ? "the request body is not valid UTF-8 (near byte %zu)"
						      : "the request body is not valid JSON (error near byte %zu)",
			at);
	if (msg)
		yajl_free_error(s->h, msg);
	return s->st;
}

mp_status mpc_k8s_stream_feed(mpc_k8s_stream *s, const char *data, size_t n, mp_error *err)
{
	yajl_status ys;

	if (s->st == MP_OK && n) {
		s->chunk = data;
		s->echo_from = 0;
		ys = yajl_parse(s->h, (const unsigned char *)data, n);
		if (ys == yajl_status_error && s->st == MP_OK)
			parse_error(s, data, n);
		else if (s->st == MP_OK && s->node_tree && s->echo) /* inside a node at the chunk's end */
			echo_copy(s, data + s->echo_from, n - s->echo_from);
		if (s->st == MP_OK && s->node_tree && s->base + n - s->node_start > s->lim.max_node_bytes) {
			char at[64];

			snprintf(at, sizeof(at), "/Nodes/items/%zu", s->nnodes);
			fail(s, MP_ETOOLARGE, at, "a Node object is larger than %zu bytes", s->lim.max_node_bytes);
		}
		s->base += n;
		s->chunk = NULL;
	}
	if (s->st != MP_OK && err)
		*err = s->err;
	return s->st;
}

size_t mpc_k8s_stream_held(const mpc_k8s_stream *s)
{
	return s->echo_cap + s->cap_nodes * (sizeof(*s->nodes) + sizeof(*s->pending) + 2 * sizeof(size_t)) +
	       s->pod_bytes + (s->pod_decoded ? 0 : s->nnodes * 512) + s->names_buf_cap +
	       s->name_at_cap * sizeof(size_t);
}

mp_status mpc_k8s_stream_finish(mpc_k8s_stream *s, mpc_k8s_args *out, mp_error *err)
{
	memset(out, 0, sizeof(*out));
	if (s->st == MP_OK && s->base == 0)
		s->st = mp_fail(&s->err, MP_EPARSE, "", "the request body is empty; send a JSON object");
	if (s->st == MP_OK && yajl_complete_parse(s->h) != yajl_status_ok && s->st == MP_OK)
		parse_error(s, "", 0);
	if (s->st == MP_OK && !s->top_is_map)
		s->st = mp_fail(&s->err, MP_EINVAL, "", "the request body must be a JSON object");
	if (s->st == MP_OK && s->pod_tree == NULL)
		s->st = mp_fail(&s->err, MP_EINVAL, "/Pod",
				"ExtenderArgs needs Pod, the pod being scheduled (kube-scheduler's extender v1 protocol: "
				"{\"Pod\": {...}, \"Nodes\": {\"items\": [...]}, \"NodeNames\": null})");
	/* nodes read before the pod: judged now that it is known */
	for (size_t i = 0; s->st == MP_OK && i < s->nnodes; i++) {
		if (s->pending[i] == NULL)
			continue;
		s->st = mpc_k8s_read_node(s->pending[i], i, &s->pod, &s->nodes[i], &s->err);
		cJSON_Delete(s->pending[i]);
		s->pending[i] = NULL;
	}
	if (s->st == MP_OK && !s->nodes_given && s->names_seen) {
		/* nodeCacheCapable: true: names alone, their facts are the node cache's (service/mps_k8s.c) */
		mps_k8s_node *nodes = calloc(s->names ? s->names : 1, sizeof(*nodes));

		if (nodes == NULL)
			s->st = mp_fail(&s->err, MP_ENOMEM, "", "out of memory");
		for (size_t i = 0; s->st == MP_OK && i < s->names; i++) {
			s->st = mpc_k8s_node_name(s->names_buf + s->name_at[i], i, true, &nodes[i], &s->err);
			nodes[i].name_only = true;
		}
		free(s->nodes); /* (none: Nodes was not given) */
		s->nodes = nodes;
		s->nnodes = s->st == MP_OK ? s->names : 0;
		s->cap_nodes = s->names;
	}
	if (s->st != MP_OK) {
		if (err)
			*err = s->err;
		return s->st;
	}
	out->rq.pod = s->pod;
	s->pod_decoded = false; /* (the pod's model is out's now) */
	out->rq.nodes = s->nodes ? s->nodes : calloc(1, sizeof(*out->rq.nodes));
	out->rq.nnodes = s->nnodes;
	out->nodes_given = s->nodes_given;
	out->rq.names_only = !s->nodes_given && s->names_seen;
	out->pod_tree = s->pod_tree;
	s->nodes = NULL;
	s->pod_tree = NULL;
	s->nnodes = 0;
	if (s->echo && s->nodes_given) { /* (NodeNames alone: no texts to echo) */
		out->echo = s->echo_buf ? s->echo_buf : malloc(1);
		out->echo_at = s->echo_at;
		out->echo_len = s->echo_n;
		s->echo_buf = NULL;
		s->echo_at = s->echo_n = NULL;
	}
	if (out->rq.nodes == NULL || (s->echo && s->nodes_given && out->echo == NULL)) {
		mpc_k8s_args_free(out);
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	}
	return MP_OK;
}

/* ----- the filter's answer around echoed texts ----------------------------------------------------------- */

/* The reason with the job's assumptions (as mpc_k8s.c's reason_text). */
static void reason_into(const mpc_k8s_args *a, const char *reason, char *buf, size_t len)
{
	const char *as = a->rq.pod.assumption;

	if (as[0] && strncmp(reason, "memplan: the node has", 21) != 0)
		snprintf(buf, len, "%s (assumed: %s)", reason, as);
	else
		snprintf(buf, len, "%s", reason);
}

mp_status mpc_k8s_filter_pieces(const mpc_k8s_args *a, const mps_k8s_result *r, char **head, size_t *head_len,
				char **tail, size_t *tail_len)
{
	bool error = r->error[0] != '\0', echo = a->nodes_given && !error && a->echo;
	mpc_out o;
	char buf[900];

	*head = *tail = NULL;
	*head_len = *tail_len = 0;
	mpc_out_init(&o);
	mpc_w_obj(&o, NULL);
	if (echo) {
		mpc_w_obj(&o, "Nodes");
		mpc_w_obj(&o, "metadata");
		mpc_w_end(&o);
		mpc_w_arr(&o, "items");
		*head = mpc_out_take(&o, head_len);
		if (*head == NULL) {
			mpc_out_free(&o);
			return MP_ENOMEM;
		}
		mpc_w_end(&o);
		mpc_w_end(&o);
	} else {
		mpc_w_null(&o, "Nodes");
		if ((*head = calloc(1, 1)) == NULL) {
			mpc_out_free(&o);
			return MP_ENOMEM;
		}
	}
	if (error) {
		mpc_w_null(&o, "NodeNames");
	} else {
		mpc_w_arr(&o, "NodeNames");
		for (size_t i = 0; i < a->rq.nnodes; i++)
			if (r->nodes[i].verdict == MPS_K8S_PASS)
				mpc_w_str(&o, NULL, a->rq.nodes[i].name);
		mpc_w_end(&o);
	}
	for (int v = MPS_K8S_FAIL; v <= MPS_K8S_UNRESOLVABLE; v++) {
		mpc_w_obj(&o, v == MPS_K8S_FAIL ? "FailedNodes" : "FailedAndUnresolvableNodes");
		for (size_t i = 0; i < a->rq.nnodes && !error; i++) {
			if ((int)r->nodes[i].verdict != v)
				continue;
			reason_into(a, r->nodes[i].reason ? r->nodes[i].reason : "memplan: does not fit", buf, sizeof(buf));
			mpc_w_str(&o, a->rq.nodes[i].name, buf);
		}
		mpc_w_end(&o);
	}
	mpc_w_str(&o, "Error", r->error);
	mpc_w_end(&o);
	*tail = mpc_out_finish(&o, tail_len);
	if (*tail == NULL) {
		free(*head);
		*head = NULL;
		return MP_ENOMEM;
	}
	return MP_OK;
}
