/*
 * accept.c: the accept path (accept.h): poll(2) on the listening socket and a pipe that says stop; every connection
 * the kernel has is accepted at once (the socket is non-blocking), room made at the limit, and handed over.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "accept.h"

struct mpd_acceptor {
	int fd, stop[2];
	mpd_accept_targets t;
	pthread_t thread;
};

static void *accept_loop(void *arg)
{
	mpd_acceptor *a = arg;

	for (;;) {
		struct pollfd p[2] = { { a->fd, POLLIN, 0 }, { a->stop[0], POLLIN, 0 } };

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		for (;;) { /* everything waiting, now */
			struct sockaddr_storage addr;
			socklen_t len = sizeof(addr);
			int c = accept(a->fd, (struct sockaddr *)&addr, &len);

			if (c >= 0)
				fcntl(c, F_SETFD, FD_CLOEXEC);
			if (c < 0) {
				if (errno == EINTR || errno == ECONNABORTED)
					continue;
				if (errno == EMFILE || errno == ENFILE) /* out of descriptors: libmicrohttpd frees some */
					usleep(10 * 1000);
				break;
			}
			bool pressed = a->t.g && mpd_guard_pressed(a->t.g);

			if (a->t.g && mpd_guard_open(a->t.g) >= a->t.limit)
				mpd_guard_make_room(a->t.g);
			/* past the hard cap the connection is refused here: libmicrohttpd 0.9.75 must never meet its own
			 * limit with a connection handed over (new_connection_process_ then returns with its
			 * cleanup_connection_mutex still locked, and the worker deadlocks on its next turn) */
			if (a->t.g && mpd_guard_open(a->t.g) >= a->t.hard_limit) {
				close(c);
				continue;
			}
			/* the fresh lane's count is taken here, before libmicrohttpd has the connection, so that a burst
			 * never passes its limit; its end gives it back (server.c) */
			if (pressed && a->t.fresh && atomic_fetch_add(a->t.fresh_open, 1) < a->t.fresh_limit) {
				if (MHD_add_connection(a->t.fresh, c, (const struct sockaddr *)&addr, len) != MHD_YES)
					atomic_fetch_sub(a->t.fresh_open, 1); /* (c is closed) */
				continue;
			}
			if (pressed && a->t.fresh)
				atomic_fetch_sub(a->t.fresh_open, 1);
			MHD_add_connection(a->t.mhd, c, (const struct sockaddr *)&addr, len); /* closes c on failure */
		}
	}
	return NULL;
}

mpd_acceptor *mpd_acceptor_start(int listen_fd, const mpd_accept_targets *t)
{
	mpd_acceptor *a = calloc(1, sizeof(*a));

	if (a == NULL || pipe(a->stop) != 0) {
		free(a);
		close(listen_fd);
		return NULL;
	}
	a->fd = listen_fd;
	a->t = *t;
	fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) | O_NONBLOCK);
	if (pthread_create(&a->thread, NULL, accept_loop, a) != 0) {
		close(a->stop[0]);
		close(a->stop[1]);
		close(listen_fd);
		free(a);
		return NULL;
	}
	return a;
}

void mpd_acceptor_stop(mpd_acceptor *a)
{
	char b = 0;

	if (a == NULL)
		return;
	if (write(a->stop[1], &b, 1) != 1) {
		/* the pipe is ours and empty: a write cannot fail short of a broken process; join would wait forever */
	}
	pthread_join(a->thread, NULL);
	close(a->stop[0]);
	close(a->stop[1]);
	close(a->fd);
	free(a);
}
