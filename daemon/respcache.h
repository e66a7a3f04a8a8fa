/*
 * respcache.h: the response cache of the pure endpoints (POST /v1/plan/inference, /v1/plan/training, /v1/fit,
 * /v1/roofline; GET /v1/capacity). Their answer is a function of two things only: the request (the body, or a
 * GET's query arguments) and what the store holds. So a request seen before, while the store has not changed,
 * gets the bytes it got last time, without parsing, planning or printing again. The "body" below is whatever
 * bytes the caller uses as the request's key. Schedulers ask the same "does job J fit on device D" questions
 * every cycle, and dashboards poll capacity: this is what makes those repeats cheap.
 *
 * Correctness rests on mp_store_generation (db/store.h): it moves on every write through the daemon's handle and
 * on every commit by another connection or process (PRAGMA data_version). Every call passes the generation it
 * read; when it differs from the one the entries were made at, every entry is dropped first. The caller reads the
 * generation before computing and again after, and stores the answer only when the two agree, so an answer is
 * never kept under a generation older than the data it was computed from.
 *
 * Bounded: entries are charged their key, value and bookkeeping bytes; past max_bytes the least recently used go
 * first. An answer larger than max_bytes / 8, or an entry (body, answer and bookkeeping) charged more than
 * max_bytes / 4, is not kept, so that one request cannot empty the cache. Only 200 answers are kept (errors are
 * cheap already).
 *
 * Thread-safe (one mutex; the hash table is uthash's, the recency list utlist's). No globals: one cache hangs
 * off struct mpd_daemon. It never touches HTTP or the store.
 */
#ifndef MPD_RESPCACHE_H
#define MPD_RESPCACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct mpd_respcache mpd_respcache;	/* opaque */

typedef struct mpd_respcache_stats {
	unsigned long long hits;		/* lookups answered from the cache */
	unsigned long long misses;		/* lookups that were not */
	unsigned long long evictions;		/* entries dropped for room (least recently used) */
	unsigned long long invalidations;	/* entries dropped because the store changed */
	size_t entries;				/* entries held now */
	size_t bytes;				/* bytes charged to them now (<= max_bytes) */
	size_t max_bytes;			/* the bound */
} mpd_respcache_stats;

/* Creates an empty cache bounded to max_bytes (> 0). Returns NULL when out of memory. Free with
 * mpd_respcache_free (NULL is fine). */
mpd_respcache *mpd_respcache_new(size_t max_bytes);
void mpd_respcache_free(mpd_respcache *c);

/*
 * The answer kept for (route, body) at store generation `generation`, or NULL (a miss). route is a small number
 * naming the endpoint (its index in the route table); body is len bytes, not necessarily NUL-terminated. On a hit
 * returns a NUL-terminated copy the caller owns (free()) and sets *value_len (may be NULL); NULL also when out
 * of memory (counted as a miss).
 */
char *mpd_respcache_get(mpd_respcache *c, unsigned route, const char *body, size_t len, uint64_t generation,
			size_t *value_len);

/*
 * Keeps value (value_len bytes, copied) as the answer for (route, body) computed at store generation
 * `generation`. Replaces an older answer for the same key. Does nothing when the value is over max_bytes / 8 or
 * memory runs out: the cache is an optimisation, never a source of errors. Borrows nothing after returning.
 */
void mpd_respcache_put(mpd_respcache *c, unsigned route, const char *body, size_t len, uint64_t generation,
		       const char *value, size_t value_len);

/* Drops every entry unless generation is the one they were made at, as get and put do first. For callers that
 * know the store may have moved without a lookup following: after a write, before reading the counters. */
void mpd_respcache_sync(mpd_respcache *c, uint64_t generation);

/* A consistent snapshot of the counters. */
void mpd_respcache_stats_get(mpd_respcache *c, mpd_respcache_stats *out);

#endif /* MPD_RESPCACHE_H */
