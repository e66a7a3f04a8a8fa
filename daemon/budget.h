/*
 * budget.h: the bytes the daemon holds for requests in flight (bodies being read, what an extender body keeps, answers
 * waiting to be sent), bounded daemon-wide and per client address (--max-request-memory-bytes and its -per-ip), so
 * that forty clients each trickling a 127 MiB body hold at most the budget, not forty bodies. A request takes bytes
 * as its buffers grow and gives all of them back when it ends; one that would pass a bound is refused at once
 * (503, Retry-After). Thread-safe; no globals: one budget hangs off struct mpd_daemon. Knows addresses as text,
 * not sockets or HTTP.
 */
#ifndef MPD_BUDGET_H
#define MPD_BUDGET_H

#include <stdbool.h>
#include <stddef.h>

typedef struct mpd_budget mpd_budget;

/* A budget of total bytes, per_address of them for one address. NULL when out of memory. */
mpd_budget *mpd_budget_new(size_t total, size_t per_address);
void mpd_budget_free(mpd_budget *b);

/* Which bound a refused take would have passed. */
typedef enum mpd_budget_bound { MPD_BUDGET_OK = 0, MPD_BUDGET_TOTAL, MPD_BUDGET_ADDRESS } mpd_budget_bound;

/* Takes n more bytes for address (a numeric address as text; "" counts as one address). MPD_BUDGET_OK, or the bound
 * it would pass (nothing is taken then). */
mpd_budget_bound mpd_budget_take(mpd_budget *b, const char *address, size_t n);
/* Gives back n bytes address took. */
void mpd_budget_give(mpd_budget *b, const char *address, size_t n);

/* Bytes taken now, in all and by address (0 for an address holding none). */
size_t mpd_budget_used(mpd_budget *b);
size_t mpd_budget_used_by(mpd_budget *b, const char *address);
size_t mpd_budget_total(const mpd_budget *b);
size_t mpd_budget_per_address(const mpd_budget *b);

#endif /* MPD_BUDGET_H */
