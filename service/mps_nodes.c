/*
 * mps_nodes.c: the node cache (mps_nodes.h). An open-addressing hash table of node names (FNV-1a, linear probing, a
 * tombstone for a removed slot; rebuilt at twice the size when live and dead slots pass half of it) pointing at
 * heap copies of the reports. One read-write lock: lookups share it, reports take it alone.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mps_nodes.h"

#define TOMBSTONE ((mps_node_facts *)(void *)&tombstone_mark)
static const char tombstone_mark = 0;

struct mps_node_cache {
	pthread_rwlock_t lock;
	mps_node_facts **slots;		/* NULL: never used; TOMBSTONE: removed */
	size_t cap;			/* a power of two */
	size_t live, dead;
	size_t max;
};

/* FNV-1a, 64 bits (Fowler, Noll, Vo): offset basis 14695981039346656037, prime 1099511628211. */
static uint64_t hash(const char *s)
{
	uint64_t h = UINT64_C(14695981039346656037);

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= UINT64_C(1099511628211);
	}
	return h;
}

mps_node_cache *mps_node_cache_new(size_t max)
{
	mps_node_cache *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->cap = 64;
	c->slots = calloc(c->cap, sizeof(*c->slots));
	c->max = max ? max : MPS_NODE_CACHE_MAX;
	if (c->slots == NULL || pthread_rwlock_init(&c->lock, NULL) != 0) {
		free(c->slots);
		free(c);
		return NULL;
	}
	return c;
}

void mps_node_cache_free(mps_node_cache *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->cap; i++)
		if (c->slots[i] && c->slots[i] != TOMBSTONE)
			free(c->slots[i]);
	free(c->slots);
	pthread_rwlock_destroy(&c->lock);
	free(c);
}

/* The slot holding name, or SIZE_MAX. Under either lock. */
static size_t find(const mps_node_cache *c, const char *name)
{
	size_t mask = c->cap - 1;

	for (size_t i = (size_t)hash(name) & mask, k = 0; k < c->cap; i = (i + 1) & mask, k++) {
		const mps_node_facts *f = c->slots[i];

		if (f == NULL)
			return SIZE_MAX;
		if (f != TOMBSTONE && strcmp(f->name, name) == 0)
			return i;
	}
	return SIZE_MAX;
}

/* Where a new name goes: the first tombstone or empty slot on its probe. Under the write lock, with room. */
static size_t free_slot(const mps_node_cache *c, const char *name)
{
	size_t mask = c->cap - 1, i = (size_t)hash(name) & mask;

	while (c->slots[i] != NULL && c->slots[i] != TOMBSTONE)
		i = (i + 1) & mask;
	return i;
}

/* Rebuilds the table at cap slots (dropping tombstones). */
static bool rebuild(mps_node_cache *c, size_t cap)
{
	mps_node_facts **old = c->slots;
	size_t oldcap = c->cap;

	c->slots = calloc(cap, sizeof(*c->slots));
	if (c->slots == NULL) {
		c->slots = old;
		return false;
	}
	c->cap = cap;
	c->dead = 0;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i] && old[i] != TOMBSTONE)
			c->slots[free_slot(c, old[i]->name)] = old[i];
	free(old);
	return true;
}

static size_t expire_locked(mps_node_cache *c, int64_t now)
{
	size_t n = 0;

	for (size_t i = 0; i < c->cap; i++) {
		mps_node_facts *f = c->slots[i];

		if (f && f != TOMBSTONE && f->expires_at <= now) {
			free(f);
			c->slots[i] = TOMBSTONE;
			c->live--;
			c->dead++;
			n++;
		}
	}
	return n;
}

mp_status mps_node_cache_put(mps_node_cache *c, const mps_node_facts *f, int64_t now, bool *created, mp_error *err)
{
	size_t i;
	mps_node_facts *copy;
	mp_status st = MP_OK;

	pthread_rwlock_wrlock(&c->lock);
	i = find(c, f->name);
	if (created)
		*created = i == SIZE_MAX || c->slots[i]->expires_at <= now;
	if (i == SIZE_MAX) {
		if (c->live >= c->max && expire_locked(c, now) == 0) {
			st = mp_fail(err, MP_ETOOLARGE, "/name", "the catalog holds %zu nodes, its most: a node is dropped "
				     "when its lease ends", c->max);
			goto out;
		}
		if ((c->live + c->dead + 1) * 2 > c->cap &&
		    !rebuild(c, (c->live + 1) * 2 > c->cap / 2 ? c->cap * 2 : c->cap)) {
			st = mp_fail(err, MP_ENOMEM, "", "out of memory");
			goto out;
		}
		copy = malloc(sizeof(*copy));
		if (copy == NULL) {
			st = mp_fail(err, MP_ENOMEM, "", "out of memory");
			goto out;
		}
		i = free_slot(c, f->name);
		if (c->slots[i] == TOMBSTONE)
			c->dead--;
		c->slots[i] = copy;
		c->live++;
	}
	copy = c->slots[i];
	*copy = *f;
	copy->updated_at = now;
	copy->expires_at = now + (int64_t)f->lease_seconds;
out:
	pthread_rwlock_unlock(&c->lock);
	return st;
}

bool mps_node_cache_get(mps_node_cache *c, const char *name, int64_t now, mps_node_facts *out)
{
	bool found = false;
	size_t i;

	pthread_rwlock_rdlock(&c->lock);
	i = find(c, name);
	if (i != SIZE_MAX && c->slots[i]->expires_at > now) {
		*out = *c->slots[i];
		found = true;
	}
	pthread_rwlock_unlock(&c->lock);
	return found;
}

bool mps_node_cache_read(mps_node_cache *c, const char *name, int64_t now,
			 void (*fn)(const mps_node_facts *f, void *ctx), void *ctx)
{
	bool found = false;
	size_t i;

	pthread_rwlock_rdlock(&c->lock);
	i = find(c, name);
	if (i != SIZE_MAX && c->slots[i]->expires_at > now) {
		fn(c->slots[i], ctx);
		found = true;
	}
	pthread_rwlock_unlock(&c->lock);
	return found;
}

bool mps_node_cache_remove(mps_node_cache *c, const char *name)
{
	size_t i;

	pthread_rwlock_wrlock(&c->lock);
	i = find(c, name);
	if (i != SIZE_MAX) {
		free(c->slots[i]);
		c->slots[i] = TOMBSTONE;
		c->live--;
		c->dead++;
	}
	pthread_rwlock_unlock(&c->lock);
	return i != SIZE_MAX;
}

size_t mps_node_cache_expire(mps_node_cache *c, int64_t now)
{
	size_t n;

	pthread_rwlock_wrlock(&c->lock);
	n = expire_locked(c, now);
	pthread_rwlock_unlock(&c->lock);
	return n;
}

static int by_name(const void *a, const void *b)
{
	return strcmp((*(const mps_node_facts *const *)a)->name, (*(const mps_node_facts *const *)b)->name);
}

mp_status mps_node_cache_page(mps_node_cache *c, int64_t now, const char *after, mps_node_facts *rows, size_t cap,
			      size_t *n, bool *more, mp_error *err)
{
	const mps_node_facts **all;
	size_t k = 0;

	*n = 0;
	*more = false;
	pthread_rwlock_rdlock(&c->lock);
	all = malloc((c->live ? c->live : 1) * sizeof(*all));
	if (all == NULL) {
		pthread_rwlock_unlock(&c->lock);
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	}
	for (size_t i = 0; i < c->cap; i++) {
		const mps_node_facts *f = c->slots[i];

		if (f && f != TOMBSTONE && f->expires_at > now && (after == NULL || strcmp(f->name, after) > 0))
			all[k++] = f;
	}
	qsort(all, k, sizeof(*all), by_name);
	for (size_t i = 0; i < k && i < cap; i++)
		rows[(*n)++] = *all[i];
	*more = k > cap;
	pthread_rwlock_unlock(&c->lock);
	free(all);
	return MP_OK;
}

size_t mps_node_cache_size(mps_node_cache *c)
{
	size_t n;

	pthread_rwlock_rdlock(&c->lock);
	n = c->live;
	pthread_rwlock_unlock(&c->lock);
	return n;
}
