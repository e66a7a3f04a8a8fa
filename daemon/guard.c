/*
 * guard.c: the connection guard (guard.h): a list of open connections, each with where its request is and the
 * deadline of that, and a watchdog thread that cuts those past it. Knows sockets, bytes and time, not HTTP.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

/* a failed insertion (out of memory) marks the entry instead of exiting the process, uthash's default */
#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(e) ((e)->not_added = true)
#include <uthash.h>

#include "guard.h"

#define WINDOW_SECONDS 5.0		/* a transfer's rate is judged over windows this long */
#define PRESSURE_AGE_SECONDS 0.25	/* under pressure, a slot held this long without use may be cut */
#define PRESSURE_RATE_FACTOR 64
#define ROOM_AGE_SECONDS 0.01		/* a connection accepted less than this ago is not the one to make room */		/* under pressure, a body slower than 64 x the minimum rate may be cut */
#define WATCH_PERIOD_NS (200 * 1000 * 1000)
#define PRESSED_PERIOD_NS (50 * 1000 * 1000)	/* under pressure the watchdog looks four times as often */

enum phase { P_HEADERS, P_BODY, P_WORK, P_SEND, P_IDLE };

typedef struct conn {
	int fd;
	char address[48];
	unsigned char phase;
	bool cut;			/* shut down by the guard (counted once) */
	bool tracked;			/* P_SEND: the answer's bytes are reported as they go */
	double since;			/* when the phase began, CLOCK_MONOTONIC seconds */
	double deadline;		/* seconds the phase may last from since */
	uint64_t expect;		/* P_BODY: the declared length; P_SEND: the answer's (0: unknown) */
	uint64_t moved;			/* bytes moved in the phase */
	double window_start;
	uint64_t window_moved, moved_at_window;
	struct conn *prev, *next;	/* oldest first */
} conn;

struct mpd_guard {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	bool stop;
	conn *head, *tail;
	unsigned int open;
	mpd_guard_limits lim;
	unsigned int threshold;
	mpd_metrics *metrics;
};

static double now_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void cut(mpd_guard *g, conn *c, mpd_cut_reason why)
{
	shutdown(c->fd, SHUT_RDWR); /* libmicrohttpd reads the end of the stream and closes the connection */
	c->cut = true;
	if (g->metrics)
		mpd_metrics_connection_cut(g->metrics, why);
}

/* Whether a transfer kept its rate over the window now ending (and a new window starts); true inside a window. */
static bool rate_kept(const mpd_guard *g, conn *c, double now)
{
	double span = now - c->window_start;
	uint64_t need, rest;

	if (span < WINDOW_SECONDS)
		return true;
	need = (uint64_t)((double)g->lim.min_transfer_bytes_per_second * span);
	if (c->expect) { /* a known length: the rest of it is all it must send */
		rest = c->expect > c->moved_at_window ? c->expect - c->moved_at_window : 0;
		need = need < rest ? need : rest;
	}
	if (c->window_moved < need)
		return false;
	c->window_start = now;
	c->window_moved = 0;
	c->moved_at_window = c->moved;
	return true;
}

/* Bytes the client sent that libmicrohttpd has not read yet (FIONREAD on the socket, still open: the caller holds
 * the lock, and a connection leaves the list when libmicrohttpd reports its end, before it is closed). */
static int unread(const conn *c)
{
	int n = 0;

	return ioctl(c->fd, FIONREAD, &n) == 0 ? n : 0;
}

/* Whether a connection holds a slot without using it (guard.h: what pressure cuts). A connection whose request
 * waits unread in its socket is not idle but waiting for a busy worker (under load, a kept-alive client's next
 * request can wait longer than PRESSURE_AGE_SECONDS): a request line and its headers are more than 16 bytes. */
static bool idle_slot(const mpd_guard *g, const conn *c, double now)
{
	double age = now - c->since;

	if (c->cut || age <= PRESSURE_AGE_SECONDS)
		return false;
	if (c->phase == P_IDLE)
		return unread(c) == 0;
	if (c->phase == P_HEADERS)
		return unread(c) <= 16;
	return c->phase == P_BODY &&
	       (double)c->moved / age < (double)PRESSURE_RATE_FACTOR * (double)g->lim.min_transfer_bytes_per_second;
}

/* An address and how many live connections it holds (relieve's count). */
typedef struct address_count {
	const char *address;	/* a connection's, borrowed for the pass */
	unsigned n;
	bool not_added;
	UT_hash_handle hh;
} address_count;

/* A slot pressure may cut, with its address's count. */
typedef struct candidate {
	conn *c;
	unsigned n;
} candidate;

/* The address holding the most connections first, then the oldest. */
static int by_address_then_age(const void *a, const void *b)
{
	const candidate *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return x->c->since < y->c->since ? -1 : x->c->since > y->c->since;
}

/* Under pressure: cut idle slots, those of the address with the most connections first, oldest first, until the
 * eighth is free (guard.h). Caller holds the lock. Out of memory: the oldest idle slots, in list order. */
static void relieve(mpd_guard *g, double now, unsigned live)
{
	address_count *table = NULL, *a, *tmp, *slab = calloc(live ? live : 1, sizeof(*slab));
	candidate *cand = calloc(live ? live : 1, sizeof(*cand));
	size_t ncand = 0, used = 0;

	if (slab == NULL || cand == NULL) {
		for (conn *c = g->head; c && live > g->threshold; c = c->next)
			if (idle_slot(g, c, now)) {
				cut(g, c, MPD_CUT_PRESSURE);
				live--;
			}
		goto out;
	}
	for (conn *c = g->head; c && used < live; c = c->next) {
		if (c->cut)
			continue;
		HASH_FIND_STR(table, c->address, a);
		if (a == NULL) {
			a = &slab[used++];
			a->address = c->address;
			HASH_ADD_KEYPTR(hh, table, a->address, strlen(a->address), a);
			if (a->not_added)
				continue;
		}
		a->n++;
	}
	for (conn *c = g->head; c; c = c->next) {
		if (ncand >= live || !idle_slot(g, c, now))
			continue;
		HASH_FIND_STR(table, c->address, a);
		cand[ncand].c = c;
		cand[ncand++].n = a ? a->n : 1;
	}
	qsort(cand, ncand, sizeof(*cand), by_address_then_age);
	for (size_t k = 0; k < ncand && live > g->threshold; k++) {
		cut(g, cand[k].c, MPD_CUT_PRESSURE);
		live--;
	}
	HASH_ITER(hh, table, a, tmp)
	{
		HASH_DEL(table, a);
	}
out:
	free(slab);
	free(cand);
}

bool mpd_guard_make_room(mpd_guard *g)
{
	address_count *table = NULL, *a, *tmp, *slab;
	conn *best = NULL;
	unsigned best_n = 0;
	size_t used = 0;
	double now = now_seconds();

	pthread_mutex_lock(&g->lock);
	slab = calloc(g->open ? g->open : 1, sizeof(*slab));
	for (conn *c = g->head; slab && c && used < g->open; c = c->next) {
		if (c->cut)
			continue;
		HASH_FIND_STR(table, c->address, a);
		if (a == NULL) {
			a = &slab[used++];
			a->address = c->address;
			HASH_ADD_KEYPTR(hh, table, a->address, strlen(a->address), a);
			if (a->not_added)
				continue;
		}
		a->n++;
	}
	/* a slot held without use (as pressure cuts them), of the address with the most connections, the oldest */
	for (conn *c = g->head; c; c = c->next) {
		unsigned n;

		if (!idle_slot(g, c, now))
			continue;
		a = NULL;
		if (slab)
			HASH_FIND_STR(table, c->address, a);
		n = a ? a->n : 1;
		if (best == NULL || n > best_n) {
			best = c;
			best_n = n;
		}
	}
	if (best)
		cut(g, best, MPD_CUT_PRESSURE);
	HASH_ITER(hh, table, a, tmp)
	{
		HASH_DEL(table, a);
	}
	free(slab);
	pthread_mutex_unlock(&g->lock);
	return best != NULL;
}

/* One pass: deadlines, then pressure. Caller holds the lock. */
static void watch(mpd_guard *g, double now)
{
	unsigned int live = 0;

	for (conn *c = g->head; c; c = c->next) {
		if (c->cut)
			continue;
		switch (c->phase) {
		case P_HEADERS:
		case P_IDLE:
			if (now - c->since > c->deadline) {
				cut(g, c, MPD_CUT_HEADER_TIMEOUT);
				continue;
			}
			break;
		case P_BODY:
			if (now - c->since > c->deadline || !rate_kept(g, c, now)) {
				cut(g, c, MPD_CUT_BODY);
				continue;
			}
			break;
		case P_SEND:
			if (now - c->since > c->deadline || (c->tracked && !rate_kept(g, c, now))) {
				cut(g, c, MPD_CUT_SEND);
				continue;
			}
			break;
		default:
			break;
		}
		live++;
	}
	if (live > g->threshold)
		relieve(g, now, live);
}

static void *watchdog(void *arg)
{
	mpd_guard *g = arg;

	pthread_mutex_lock(&g->lock);
	while (!g->stop) {
		struct timespec t;
		long period = g->open > g->threshold ? PRESSED_PERIOD_NS : WATCH_PERIOD_NS;

		watch(g, now_seconds());
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_nsec += period;
		if (t.tv_nsec >= 1000000000L) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&g->wake, &g->lock, &t);
	}
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

mpd_guard *mpd_guard_new(const mpd_guard_limits *lim, mpd_metrics *metrics)
{
	mpd_guard *g = calloc(1, sizeof(*g));
	unsigned int reserve;

	if (g == NULL)
		return NULL;
	g->lim = *lim;
	if (g->lim.min_transfer_bytes_per_second == 0)
		g->lim.min_transfer_bytes_per_second = 1;
	reserve = lim->connection_limit / 8 > 0 ? lim->connection_limit / 8 : 1;
	g->threshold = lim->connection_limit > reserve ? lim->connection_limit - reserve : 0;
	g->metrics = metrics;
	if (pthread_mutex_init(&g->lock, NULL) != 0) {
		free(g);
		return NULL;
	}
	pthread_cond_init(&g->wake, NULL);
	if (pthread_create(&g->thread, NULL, watchdog, g) != 0) {
		pthread_cond_destroy(&g->wake);
		pthread_mutex_destroy(&g->lock);
		free(g);
		return NULL;
	}
	return g;
}

void mpd_guard_free(mpd_guard *g)
{
	conn *c, *next;

	if (g == NULL)
		return;
	pthread_mutex_lock(&g->lock);
	g->stop = true;
	pthread_cond_signal(&g->wake);
	pthread_mutex_unlock(&g->lock);
	pthread_join(g->thread, NULL);
	for (c = g->head; c; c = next) {
		next = c->next;
		free(c);
	}
	pthread_cond_destroy(&g->wake);
	pthread_mutex_destroy(&g->lock);
	free(g);
}

/* A new phase for c, from now (caller holds the lock). */
static void enter(conn *c, unsigned char phase, double deadline, uint64_t expect)
{
	double now = now_seconds();

	c->phase = phase;
	c->since = now;
	c->deadline = deadline;
	c->expect = expect;
	c->moved = 0;
	c->tracked = false;
	c->window_start = now;
	c->window_moved = 0;
	c->moved_at_window = 0;
}

void mpd_guard_opened(mpd_guard *g, int fd, const char *address, void **socket_context)
{
	conn *c = calloc(1, sizeof(*c));

	*socket_context = c;
	if (c == NULL)
		return; /* unguarded: libmicrohttpd's idle timeout still applies */
	c->fd = fd;
	if (address)
		strncpy(c->address, address, sizeof(c->address) - 1);
	enter(c, P_HEADERS, (double)g->lim.header_timeout_seconds, 0);
	pthread_mutex_lock(&g->lock);
	c->prev = g->tail;
	if (g->tail)
		g->tail->next = c;
	else
		g->head = c;
	g->tail = c;
	g->open++;
	if (g->metrics)
		mpd_metrics_connections_open(g->metrics, g->open);
	if (g->open > g->threshold) /* act on pressure now, not at the next period */
		pthread_cond_signal(&g->wake);
	pthread_mutex_unlock(&g->lock);
}

void mpd_guard_closed(mpd_guard *g, void **socket_context)
{
	conn *c = *socket_context;

	if (c == NULL)
		return;
	pthread_mutex_lock(&g->lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		g->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		g->tail = c->prev;
	g->open--;
	if (g->metrics)
		mpd_metrics_connections_open(g->metrics, g->open);
	pthread_mutex_unlock(&g->lock);
	free(c);
	*socket_context = NULL;
}

void mpd_guard_headers_done(mpd_guard *g, void *socket_context, uint64_t declared)
{
	conn *c = socket_context;

	if (c == NULL)
		return;
	pthread_mutex_lock(&g->lock);
	enter(c, P_BODY, (double)g->lim.body_timeout_seconds, declared);
	pthread_mutex_unlock(&g->lock);
}

void mpd_guard_moved(mpd_guard *g, void *socket_context, size_t n)
{
	conn *c = socket_context;

	if (c == NULL)
		return;
	pthread_mutex_lock(&g->lock);
	c->moved += n;
	c->window_moved += n;
	if (c->phase == P_SEND)
		c->tracked = true;
	pthread_mutex_unlock(&g->lock);
}

void mpd_guard_working(mpd_guard *g, void *socket_context)
{
	conn *c = socket_context;

	if (c == NULL)
		return;
	pthread_mutex_lock(&g->lock);
	enter(c, P_WORK, 0, 0);
	pthread_mutex_unlock(&g->lock);
}

void mpd_guard_sending(mpd_guard *g, void *socket_context, uint64_t bytes)
{
	conn *c = socket_context;

	if (c == NULL)
		return;
	pthread_mutex_lock(&g->lock);
	enter(c, P_SEND,
	      (double)g->lim.send_timeout_seconds + (double)bytes / (double)g->lim.min_transfer_bytes_per_second, bytes);
	pthread_mutex_unlock(&g->lock);
}

void mpd_guard_request_done(mpd_guard *g, void *socket_context)
{
	conn *c = socket_context;

	if (c == NULL)
		return;
	pthread_mutex_lock(&g->lock);
	enter(c, P_IDLE,
	      (double)(g->lim.idle_timeout_seconds > g->lim.header_timeout_seconds ? g->lim.idle_timeout_seconds
										 : g->lim.header_timeout_seconds),
	      0);
	pthread_mutex_unlock(&g->lock);
}

bool mpd_guard_pressed(mpd_guard *g)
{
	return mpd_guard_open(g) > g->threshold;
}

unsigned int mpd_guard_open(mpd_guard *g)
{
	unsigned int n;

	pthread_mutex_lock(&g->lock);
	n = g->open;
	pthread_mutex_unlock(&g->lock);
	return n;
}

