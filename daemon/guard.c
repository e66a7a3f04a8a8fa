/*
 * guard.c: the connection guard (guard.h): a list of open connections with the deadline of the headers each is
 * sending, and a watchdog thread that cuts those past it. Knows sockets and time, not HTTP.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "guard.h"

#define PRESSURE_AGE_SECONDS 1.0	/* under pressure, headers older than this are cut */
#define WATCH_PERIOD_NS (200 * 1000 * 1000)

typedef struct conn {
	int fd;
	bool waiting;			/* sending the headers of its next request */
	bool cut;			/* shut down by the guard (counted once) */
	double since;			/* when the current wait began, CLOCK_MONOTONIC seconds */
	double deadline;		/* seconds allowed from since */
	struct conn *prev, *next;	/* oldest first */
} conn;

struct mpd_guard {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	bool stop;
	conn *head, *tail;
	unsigned int open;
	unsigned int header_timeout, idle_timeout, limit, threshold;
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

/* One pass: deadlines, then pressure. Caller holds the lock. */
static void watch(mpd_guard *g, double now)
{
	unsigned int live = 0;

	for (conn *c = g->head; c; c = c->next) {
		if (c->cut)
			continue;
		if (c->waiting && now - c->since > c->deadline)
			cut(g, c, MPD_CUT_HEADER_TIMEOUT);
		else
			live++;
	}
	for (conn *c = g->head; c && live > g->threshold; c = c->next)
		if (!c->cut && c->waiting && now - c->since > PRESSURE_AGE_SECONDS) {
			cut(g, c, MPD_CUT_PRESSURE);
			live--;
		}
}

static void *watchdog(void *arg)
{
	mpd_guard *g = arg;

	pthread_mutex_lock(&g->lock);
	while (!g->stop) {
		struct timespec t;

		watch(g, now_seconds());
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_nsec += WATCH_PERIOD_NS;
		if (t.tv_nsec >= 1000000000L) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&g->wake, &g->lock, &t);
	}
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

mpd_guard *mpd_guard_new(unsigned int header_timeout_seconds, unsigned int idle_timeout_seconds, unsigned int limit,
			 mpd_metrics *metrics)
{
	mpd_guard *g = calloc(1, sizeof(*g));
	unsigned int reserve;

	if (g == NULL)
		return NULL;
	g->header_timeout = header_timeout_seconds;
	g->idle_timeout = idle_timeout_seconds;
	g->limit = limit;
	reserve = limit / 8 > 0 ? limit / 8 : 1;
	g->threshold = limit > reserve ? limit - reserve : 0;
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

void mpd_guard_opened(mpd_guard *g, int fd, void **socket_context)
{
	conn *c = calloc(1, sizeof(*c));

	*socket_context = c;
	if (c == NULL)
		return; /* unguarded: libmicrohttpd's idle timeout still applies */
	c->fd = fd;
	c->waiting = true;
	c->since = now_seconds();
	c->deadline = (double)g->header_timeout;
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

void mpd_guard_headers_done(mpd_guard *g, void *socket_context)
{
	conn *c = socket_context;

	if (c == NULL)
		return;
	pthread_mutex_lock(&g->lock);
	c->waiting = false;
	pthread_mutex_unlock(&g->lock);
}

void mpd_guard_request_done(mpd_guard *g, void *socket_context)
{
	conn *c = socket_context;

	if (c == NULL)
		return;
	pthread_mutex_lock(&g->lock);
	c->waiting = true;
	c->since = now_seconds();
	c->deadline = (double)(g->idle_timeout > g->header_timeout ? g->idle_timeout : g->header_timeout);
	pthread_mutex_unlock(&g->lock);
}

unsigned int mpd_guard_open(mpd_guard *g)
{
	unsigned int n;

	pthread_mutex_lock(&g->lock);
	n = g->open;
	pthread_mutex_unlock(&g->lock);
	return n;
}
