/*
 * lane.c: see lane.h. A mutex, a condition variable and a FIFO of jobs; each thread takes the oldest job and runs
 * it without the lock.
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lane.h"

typedef struct job {
	void (*fn)(void *job);
	void *arg;
	struct job *next;
} job;

struct mpd_lane {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	job *head, *tail;
	bool stop;
	unsigned nthreads;
	pthread_t *threads;
};

/* A lane thread runs at a lower priority than the threads that accept and serve connections (nice + LANE_NICE, Linux:
 * a thread's own nice value), so a computation that takes every core still leaves them the CPU a health probe
 * needs; failing that (another system), at the process's priority. */
#define LANE_NICE 5

static void *worker(void *arg)
{
	mpd_lane *l = arg;

#ifdef SYS_gettid
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), getpriority(PRIO_PROCESS, 0) + LANE_NICE);
#endif
	pthread_mutex_lock(&l->lock);
	for (;;) {
		job *j;

		while (l->head == NULL && !l->stop)
			pthread_cond_wait(&l->wake, &l->lock);
		if (l->head == NULL) /* stopping, nothing left */
			break;
		j = l->head;
		l->head = j->next;
		if (l->head == NULL)
			l->tail = NULL;
		pthread_mutex_unlock(&l->lock);
		j->fn(j->arg);
		free(j);
		pthread_mutex_lock(&l->lock);
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

mpd_lane *mpd_lane_new(unsigned threads)
{
	mpd_lane *l = calloc(1, sizeof(*l));

	if (l == NULL)
		return NULL;
	if (threads == 0)
		threads = 1;
	l->threads = calloc(threads, sizeof(*l->threads));
	if (l->threads == NULL || pthread_mutex_init(&l->lock, NULL) != 0) {
		free(l->threads);
		free(l);
		return NULL;
	}
	pthread_cond_init(&l->wake, NULL);
	for (unsigned i = 0; i < threads; i++) {
		if (pthread_create(&l->threads[i], NULL, worker, l) != 0)
			break;
		l->nthreads++;
	}
	if (l->nthreads == 0) {
		mpd_lane_free(l);
		return NULL;
	}
	return l;
}

bool mpd_lane_submit(mpd_lane *l, void (*fn)(void *job), void *arg)
{
	job *j = malloc(sizeof(*j));

	if (j == NULL)
		return false;
	j->fn = fn;
	j->arg = arg;
	j->next = NULL;
	pthread_mutex_lock(&l->lock);
	if (l->stop) {
		pthread_mutex_unlock(&l->lock);
		free(j);
		return false;
	}
	if (l->tail)
		l->tail->next = j;
	else
		l->head = j;
	l->tail = j;
	pthread_cond_signal(&l->wake);
	pthread_mutex_unlock(&l->lock);
	return true;
}

void mpd_lane_free(mpd_lane *l)
{
	if (l == NULL)
		return;
	pthread_mutex_lock(&l->lock);
	l->stop = true;
	pthread_cond_broadcast(&l->wake);
	pthread_mutex_unlock(&l->lock);
	for (unsigned i = 0; i < l->nthreads; i++)
		pthread_join(l->threads[i], NULL);
	pthread_cond_destroy(&l->wake);
	pthread_mutex_destroy(&l->lock);
	free(l->threads);
	free(l);
}
