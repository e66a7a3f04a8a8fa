/*
 * mps_nodes.h: the catalog's node cache: each node's GPUs as its node agent last reported them (PUT /v1/nodes/{name}),
 * keyed by node name, each report holding for its lease. It is what lets kube-scheduler run the extender with
 * nodeCacheCapable: true, sending node names instead of Node objects (service/mps_k8s.c reads it): a name looked up
 * here costs about 100 ns, where a Node object costs about 80 us to parse and 40 us to echo.
 *
 * Soft state, in memory, on purpose: the agents renew every minute, so a restarted catalog is whole again within one
 * renewal; a node that stops renewing (drained, deleted, its agent gone) ages out when its lease ends, and is then
 * judged by the labels kube-scheduler sends or, with names only, as a device memplan does not know. Keeping it in
 * SQLite would move the store's generation on every renewal (83 a second at 5,000 nodes), emptying the decoded-
 * model memo and the response cache each time.
 *
 * Ownership: the cache is opaque (mps_node_cache_new / _free); lookups copy a node's facts out. Times are Unix
 * seconds given by the caller (the daemon passes the clock, tests their own). Thread-safe: a read-write lock, held
 * only while a record is copied.
 */
#ifndef MPS_NODES_H
#define MPS_NODES_H

#include <stddef.h>
#include <stdint.h>

#include "../types/fleet_types.h"

typedef struct mps_node_cache mps_node_cache;

/* An empty cache holding at most max nodes (0: MPS_NODE_CACHE_MAX). NULL when out of memory. */
mps_node_cache *mps_node_cache_new(size_t max);
void mps_node_cache_free(mps_node_cache *c);

/*
 * Stores f (copied) as node f->name's report at now, holding for f->lease_seconds (MPS_NODE_LEASE_MIN_SECONDS to
 * _MAX_SECONDS; the decoder checked them): updated_at = now, expires_at = now + lease. *created (may be NULL) says
 * whether the name was new (or had aged out). Expired reports are dropped first when the cache is full. Errors:
 * MP_ETOOLARGE (the cache holds max live nodes; err names "/name"), MP_ENOMEM.
 */
mp_status mps_node_cache_put(mps_node_cache *c, const mps_node_facts *f, int64_t now, bool *created, mp_error *err);

/* Copies name's report into *out when one holds at now (expires_at > now). */
bool mps_node_cache_get(mps_node_cache *c, const char *name, int64_t now, mps_node_facts *out);

/* As mps_node_cache_get, giving the report to fn (borrowed, under the read lock: fn copies what it needs and returns
 * quickly) instead of copying it whole; false when none holds (fn not called). The extender's per-node read. */
bool mps_node_cache_read(mps_node_cache *c, const char *name, int64_t now,
			 void (*fn)(const mps_node_facts *f, void *ctx), void *ctx);

/* Forgets name's report; false when there was none. */
bool mps_node_cache_remove(mps_node_cache *c, const char *name);

/* Drops every report whose lease ended at or before now; returns how many. */
size_t mps_node_cache_expire(mps_node_cache *c, int64_t now);

/* Reports that hold at now, in name order after `after` (NULL or "": from the first), at most cap into rows; *n how
 * many, *more whether further ones hold. Errors: MP_ENOMEM. */
mp_status mps_node_cache_page(mps_node_cache *c, int64_t now, const char *after, mps_node_facts *rows, size_t cap,
			      size_t *n, bool *more, mp_error *err);

/* Reports held now (expired ones not yet dropped count too), and the most the cache keeps. */
size_t mps_node_cache_size(mps_node_cache *c);

#endif /* MPS_NODES_H */
