/*
 * accept.h: the daemon's own accept path. libmicrohttpd 0.9.75 accepts one connection per turn of a worker's poll
 * loop and none at all while a worker is at its share of --max-connections, so with a thousand busy or slow clients
 * connected a new client waits in the kernel's accept queue behind them (19 s in issue 30's test). Here a thread of
 * its own accepts every connection as it comes; at the limit it first makes room (mpd_guard_make_room: an idle or
 * slow slot, the client address holding the most connections first), then hands the socket to libmicrohttpd
 * (MHD_add_connection), which serves it like one it accepted. While the daemon is under pressure (guard.h), a new
 * connection goes to the fresh lane instead, a second libmicrohttpd daemon of its own thread that serves each
 * connection's first request and closes it (server.c): a thousand busy keep-alive connections make every turn of
 * the main workers' poll loops long (each serves one request of each), and a newcomer's first answer would wait
 * for two or three such turns. Knows sockets, not HTTP.
 */
#ifndef MPD_ACCEPT_H
#define MPD_ACCEPT_H

#include <stdatomic.h>

#include "guard.h"

typedef struct mpd_acceptor mpd_acceptor;

/* Where accepted connections go. */
typedef struct mpd_accept_targets {
	void *mhd;			/* the main daemon (struct MHD_Daemon *, MHD_USE_NO_LISTEN_SOCKET and MHD_USE_ITC) */
	void *fresh;			/* the fresh lane (the same kind), or NULL */
	atomic_uint *fresh_open;	/* connections the fresh lane holds now (taken here, given back by server.c) */
	unsigned fresh_limit;		/* at most this many there; more go to the main daemon */
	mpd_guard *g;			/* counts the connections, judges pressure, makes room (may be NULL) */
	unsigned limit;			/* --max-connections */
	unsigned hard_limit;		/* connections open past which a new one is closed at once (above limit: the
					 * ones just cut to make room are still being closed); far below the limit given
					 * to libmicrohttpd, which must never be reached (accept.c) */
} mpd_accept_targets;

/* Accepts on listen_fd (bound and listening; owned from now: closed by mpd_acceptor_stop) for t (copied). NULL
 * when no thread could start (listen_fd is then closed). */
mpd_acceptor *mpd_acceptor_start(int listen_fd, const mpd_accept_targets *t);
/* Stops accepting, joins the thread and closes the listening socket; the connections go on. */
void mpd_acceptor_stop(mpd_acceptor *a);

#endif /* MPD_ACCEPT_H */
