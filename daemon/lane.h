/*
 * lane.h: the heavy lane, threads of the daemon's own that compute the answers of HEAVY routes (fit, capacity, the
 * extender, the Slurm table) while libmicrohttpd's workers go on serving every other connection: a worker that
 * computed a fit itself could answer none of its hundreds of other connections (health probes among them) for as
 * long as it took. server.c suspends the request's connection (MHD_suspend_connection), hands the computation here
 * and resumes the connection when it is done; the --max-heavy-requests slots (taken before the handoff, 503 when
 * none is free) bound how many computations exist, so a job never waits for a thread. Knows threads and a queue,
 * not HTTP. No globals: one lane hangs off struct mpd_daemon.
 */
#ifndef MPD_LANE_H
#define MPD_LANE_H

#include <stdbool.h>

typedef struct mpd_lane mpd_lane;

/* Starts `threads` threads (at least 1). NULL when out of memory or no thread could start. */
mpd_lane *mpd_lane_new(unsigned threads);
/* Runs fn(job) on one of the lane's threads, as soon as one is free. false when out of memory or stopping (the
 * caller then runs it itself). */
bool mpd_lane_submit(mpd_lane *l, void (*fn)(void *job), void *job);
/* Runs what was submitted to its end, then stops the threads and frees the lane. */
void mpd_lane_free(mpd_lane *l);

#endif /* MPD_LANE_H */
