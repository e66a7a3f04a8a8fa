/*
 * budget.c: see budget.h. A total under one mutex and a uthash table of the addresses that hold bytes now (an
 * address's entry goes when it gives its last byte back, so the table holds at most one entry per connection).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* a failed insertion (out of memory) marks the entry instead of exiting the process, uthash's default */
#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(e) ((e)->not_added = true)
#include <uthash.h>

#include "budget.h"

#define ADDRESS_MAX 48	/* INET6_ADDRSTRLEN and a NUL */

typedef struct holder {
	char address[ADDRESS_MAX];
	size_t used;
	bool not_added;
	UT_hash_handle hh;
} holder;

struct mpd_budget {
	pthread_mutex_t lock;
	size_t total, per_address, used;
	holder *table;
};

mpd_budget *mpd_budget_new(size_t total, size_t per_address)
{
	mpd_budget *b = calloc(1, sizeof(*b));

	if (b == NULL)
		return NULL;
	if (pthread_mutex_init(&b->lock, NULL) != 0) {
		free(b);
		return NULL;
	}
	b->total = total;
	b->per_address = per_address;
	return b;
}

void mpd_budget_free(mpd_budget *b)
{
	holder *h, *tmp;

	if (b == NULL)
		return;
	HASH_ITER(hh, b->table, h, tmp)
	{
		HASH_DEL(b->table, h);
		free(h);
	}
	pthread_mutex_destroy(&b->lock);
	free(b);
}

static holder *find(mpd_budget *b, const char *address)
{
	holder *h = NULL;
	size_t n = strnlen(address, ADDRESS_MAX - 1);

	HASH_FIND(hh, b->table, address, (unsigned)n, h);
	return h;
}

mpd_budget_bound mpd_budget_take(mpd_budget *b, const char *address, size_t n)
{
	mpd_budget_bound why = MPD_BUDGET_OK;
	holder *h;

	if (n == 0)
		return MPD_BUDGET_OK;
	pthread_mutex_lock(&b->lock);
	h = find(b, address);
	if (n > b->total - b->used) {
		why = MPD_BUDGET_TOTAL;
	} else if (n > b->per_address - (h ? h->used : 0)) {
		why = MPD_BUDGET_ADDRESS;
	} else {
		if (h == NULL && (h = calloc(1, sizeof(*h))) != NULL) {
			size_t len = strnlen(address, ADDRESS_MAX - 1);

			memcpy(h->address, address, len);
			HASH_ADD(hh, b->table, address, (unsigned)len, h);
			if (h->not_added) { /* no memory for the table: counted in the total only */
				free(h);
				h = NULL;
			}
		}
		if (h)
			h->used += n;
		b->used += n;
	}
	pthread_mutex_unlock(&b->lock);
	return why;
}

void mpd_budget_give(mpd_budget *b, const char *address, size_t n)
{
	holder *h;

	if (n == 0)
		return;
	pthread_mutex_lock(&b->lock);
	b->used -= n < b->used ? n : b->used;
	h = find(b, address);
	if (h) {
		h->used -= n < h->used ? n : h->used;
		if (h->used == 0) {
			HASH_DEL(b->table, h);
			free(h);
		}
	}
	pthread_mutex_unlock(&b->lock);
}

size_t mpd_budget_used(mpd_budget *b)
{
	size_t n;

	pthread_mutex_lock(&b->lock);
	n = b->used;
	pthread_mutex_unlock(&b->lock);
	return n;
}

size_t mpd_budget_used_by(mpd_budget *b, const char *address)
{
	holder *h;
	size_t n;

	pthread_mutex_lock(&b->lock);
	h = find(b, address);
	n = h ? h->used : 0;
	pthread_mutex_unlock(&b->lock);
	return n;
}

size_t mpd_budget_total(const mpd_budget *b)
{
	return b->total;
}

size_t mpd_budget_per_address(const mpd_budget *b)
{
	return b->per_address;
}
