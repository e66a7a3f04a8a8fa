/*
 * respcache.c: see respcache.h. A uthash table keyed by (route, body bytes) for lookup, and a utlist
 * doubly-linked list in recency order (most recent first) for eviction, under one mutex.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "respcache.h"

/* a failed insertion (out of memory) marks the entry instead of exiting the process, uthash's default */
#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(e) ((e)->not_added = true)
#include <uthash.h>
#include <utlist.h>

#define ROUTE_BYTES sizeof(unsigned)
#define ENTRY_OVERHEAD_BYTES 64		/* what an entry costs beyond its struct: its share of uthash's buckets */
#define KEY_ON_STACK_BYTES 2048		/* keys up to this size are built on the stack for a lookup */

typedef struct entry {
	UT_hash_handle hh;
	struct entry *prev, *next;	/* recency list */
	size_t key_len, value_len, charge;
	bool not_added;
	char *value;			/* into data, after the key; NUL-terminated */
	char data[];			/* key (route, then the body), then the value */
} entry;

struct mpd_respcache {
	pthread_mutex_t mu;
	entry *table;			/* uthash head */
	entry *recent;			/* utlist head: most recently used first; recent->prev is the oldest */
	uint64_t generation;		/* the store generation every entry was computed at */
	mpd_respcache_stats s;
};

mpd_respcache *mpd_respcache_new(size_t max_bytes)
{
	mpd_respcache *c;

	if (max_bytes == 0 || (c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	if (pthread_mutex_init(&c->mu, NULL) != 0) {
		free(c);
		return NULL;
	}
	c->s.max_bytes = max_bytes;
	return c;
}

static void drop(mpd_respcache *c, entry *e)
{
	HASH_DELETE(hh, c->table, e);
	DL_DELETE(c->recent, e);
	c->s.entries--;
	c->s.bytes -= e->charge;
	free(e);
}

static void drop_all(mpd_respcache *c, unsigned long long *counter)
{
	while (c->recent) {
		drop(c, c->recent);
		(*counter)++;
	}
}

void mpd_respcache_free(mpd_respcache *c)
{
	unsigned long long n = 0;

	if (c == NULL)
		return;
	drop_all(c, &n); /* uthash frees its table with the last entry */
	pthread_mutex_destroy(&c->mu);
	free(c);
}

/* The store moved on: nothing held is known to be right any more. Caller holds the lock. */
static void sync_generation(mpd_respcache *c, uint64_t generation)
{
	if (generation != c->generation) {
		drop_all(c, &c->s.invalidations);
		c->generation = generation;
	}
}

/* Writes the key of (route, body) into buf (ROUTE_BYTES + len bytes). */
static void make_key(char *buf, unsigned route, const char *body, size_t len)
{
	memcpy(buf, &route, ROUTE_BYTES);
	if (len)
		memcpy(buf + ROUTE_BYTES, body, len);
}

char *mpd_respcache_get(mpd_respcache *c, unsigned route, const char *body, size_t len, uint64_t generation,
			size_t *value_len)
{
	char stack[KEY_ON_STACK_BYTES], *key = stack, *out = NULL;
	size_t key_len;
	entry *e = NULL;

	if (c == NULL || len > SIZE_MAX - ROUTE_BYTES)
		return NULL;
	key_len = ROUTE_BYTES + len;
	if (key_len > sizeof(stack) && (key = malloc(key_len)) == NULL)
		return NULL;
	make_key(key, route, body, len);
	pthread_mutex_lock(&c->mu);
	sync_generation(c, generation);
	HASH_FIND(hh, c->table, key, (unsigned)key_len, e);
	if (e != NULL && (out = malloc(e->value_len + 1)) != NULL) {
		memcpy(out, e->value, e->value_len + 1);
		if (value_len)
			*value_len = e->value_len;
		DL_DELETE(c->recent, e);
		DL_PREPEND(c->recent, e);
		c->s.hits++;
	} else {
		c->s.misses++;
	}
	pthread_mutex_unlock(&c->mu);
	if (key != stack)
		free(key);
	return out;
}

void mpd_respcache_put(mpd_respcache *c, unsigned route, const char *body, size_t len, uint64_t generation,
		       const char *value, size_t value_len)
{
	entry *e, *old = NULL;
	size_t key_len, charge;

	if (c == NULL || value_len > c->s.max_bytes / 8 || len > UINT32_MAX - ROUTE_BYTES)
		return;
	key_len = ROUTE_BYTES + len;
	charge = sizeof(entry) + key_len + value_len + 1 + ENTRY_OVERHEAD_BYTES;
	if (charge > c->s.max_bytes / 4 || (e = malloc(sizeof(entry) + key_len + value_len + 1)) == NULL)
		return;
	memset(e, 0, sizeof(*e));
	make_key(e->data, route, body, len);
	e->key_len = key_len;
	e->value = e->data + key_len;
	memcpy(e->value, value, value_len);
	e->value[value_len] = '\0';
	e->value_len = value_len;
	e->charge = charge;

	pthread_mutex_lock(&c->mu);
	sync_generation(c, generation);
	HASH_FIND(hh, c->table, e->data, (unsigned)key_len, old);
	if (old)
		drop(c, old);	/* another thread computed the same answer meanwhile: keep the newer copy */
	while (c->recent && c->s.bytes + charge > c->s.max_bytes) {
		drop(c, c->recent->prev);	/* the least recently used */
		c->s.evictions++;
	}
	HASH_ADD_KEYPTR(hh, c->table, e->data, (unsigned)key_len, e);
	if (e->not_added) {
		free(e);
	} else {
		DL_PREPEND(c->recent, e);
		c->s.entries++;
		c->s.bytes += charge;
	}
	pthread_mutex_unlock(&c->mu);
}

void mpd_respcache_sync(mpd_respcache *c, uint64_t generation)
{
	if (c == NULL)
		return;
	pthread_mutex_lock(&c->mu);
	sync_generation(c, generation);
	pthread_mutex_unlock(&c->mu);
}

void mpd_respcache_stats_get(mpd_respcache *c, mpd_respcache_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (c == NULL)
		return;
	pthread_mutex_lock(&c->mu);
	*out = c->s;
	pthread_mutex_unlock(&c->mu);
}
