/*
 * cli_serve.c: `memplan serve`: settings (defaults, the config file, MEMPLAN_* variables, flags), the signals,
 * the service and the HTTP daemon, and the graceful stop. The one subcommand that starts daemon/.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../daemon/auth.h"
#include "../daemon/config.h"
#include "../daemon/daemon.h"
#include "../daemon/log.h"
#include "../daemon/routes.h"
#include "cli.h"

/* Finds --config FILE in argv (or MEMPLAN_CONFIG); NULL when neither is given. */
static const char *config_path(int argc, char **argv)
{
	for (int i = 0; i + 1 < argc; i++)
		if (strcmp(argv[i], "--config") == 0)
			return argv[i + 1];
	return getenv("MEMPLAN_CONFIG");
}

/* Defaults, then the config file, then MEMPLAN_* variables, then flags. Returns 0, or 2 after a message. */
static int serve_settings(int argc, char **argv, mpd_config *cfg)
{
	const char *file = config_path(argc, argv);
	mp_error err = { { 0 }, { 0 }, NULL };

	mpd_config_defaults(cfg);
	if (file && mpd_config_load_file(cfg, file, &err) != MP_OK)
		goto bad;
	if (mpd_config_load_env(cfg, &err) != MP_OK)
		goto bad;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			printf("Usage: memplan serve [FLAGS]\n\n");
			mpd_config_usage(stdout);
			exit(0);
		}
		/* --insecure is a switch: alone it means "true" */
		if (strcmp(argv[i], "--insecure") == 0 && (i + 1 >= argc || strncmp(argv[i + 1], "--", 2) == 0)) {
			if (mpd_config_set(cfg, "insecure", "true", &err) != MP_OK)
				goto bad;
			continue;
		}
		if (strncmp(argv[i], "--", 2) != 0 || i + 1 >= argc) {
			fprintf(stderr, "memplan serve: unknown or incomplete option '%s'\n\n%s", argv[i], cli_usage);
			return 2;
		}
		if (strcmp(argv[i], "--config") == 0) {
			i++;
			continue;
		}
		if (mpd_config_set(cfg, argv[i] + 2, argv[i + 1], &err) != MP_OK)
			goto bad;
		i++;
	}
	return 0;
bad:
	fprintf(stderr, "memplan serve: %s\n", err.message);
	return 2;
}

/*
 * SIGINT and SIGTERM reach `serve` through a pipe. The handler writes the signal number to it; the main thread
 * reads it. A signal handler has no way in but a global, so the write end is the one global here.
 * A handler, rather than blocking the signals and calling sigwait: libraries loaded before main() start
 * threads of their own with nothing blocked (OpenBLAS starts its pool in a constructor). The kernel may hand a
 * process-directed SIGTERM to any such thread, and there its default action would kill the daemon mid-request.
 * With a handler, whichever thread takes the signal only writes one byte.
 */
static int stop_pipe_w = -1;

static void on_stop_signal(int sig)
{
	unsigned char b = (unsigned char)sig;
	int saved = errno;
	ssize_t n = write(stop_pipe_w, &b, 1); /* async-signal-safe; a full pipe means a stop is pending anyway */

	(void)n;
	errno = saved;
}

/* Installs on_stop_signal for SIGINT and SIGTERM; *read_fd gets the pipe's read end. Returns 0 or -1. */
static int stop_signals_install(int *read_fd)
{
	struct sigaction sa;
	int fds[2];

	if (pipe(fds) != 0)
		return -1;
	for (int i = 0; i < 2; i++)
		fcntl(fds[i], F_SETFD, FD_CLOEXEC);
	fcntl(fds[1], F_SETFL, O_NONBLOCK);
	stop_pipe_w = fds[1];
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGINT, &sa, NULL) != 0 || sigaction(SIGTERM, &sa, NULL) != 0)
		return -1;
	*read_fd = fds[0];
	return 0;
}

int cli_serve(int argc, char **argv)
{
	mpd_daemon d;
	mp_error err = { { 0 }, { 0 }, NULL };
	mp_status st;
	sigset_t stop_set;
	int sig = 0, stop_fd = -1;
	mpd_log_level lvl;
	unsigned long left;
	int rc;

	memset(&d, 0, sizeof(d));
	rc = serve_settings(argc, argv, &d.cfg);
	if (rc != 0)
		return rc;
	if (mpd_auth_load(&d.cfg, d.cfg.token_file[0] ? d.cfg.token_file : NULL, &err) != MP_OK ||
	    mpd_auth_check_listen(&d.cfg, &err) != MP_OK || mpd_hub_token_load(&d.cfg, &err) != MP_OK) {
		fprintf(stderr, "memplan serve: %s\n", err.message);
		return 2;
	}
	lvl = (mpd_log_level)d.cfg.log_level;
	/* a client that goes away mid-response must not kill the daemon */
	signal(SIGPIPE, SIG_IGN);
	if (stop_signals_install(&stop_fd) != 0) {
		mpd_log(lvl, MPD_LOG_ERROR, "memplan serve: cannot install the SIGTERM handler: %s", strerror(errno));
		return 1;
	}
	/* the server's threads start with SIGINT and SIGTERM blocked (they inherit this mask), so their polls are not
	 * interrupted; the main thread unblocks them again once the server runs */
	sigemptyset(&stop_set);
	sigaddset(&stop_set, SIGINT);
	sigaddset(&stop_set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop_set, NULL);
	st = mps_open(d.cfg.db_path, &d.svc, &err);
	if (st != MP_OK) {
		mpd_log(lvl, MPD_LOG_ERROR, "memplan serve: %s", err.message);
		return 1;
	}
	if (d.cfg.hub_endpoint[0]) {
		/* the Hub the operator allows: its answers kept in hub-cache, beside the database by default */
		char cache[600];

		if (d.cfg.hub_cache[0])
			snprintf(cache, sizeof(cache), "%s", d.cfg.hub_cache);
		else {
			const char *slash = strrchr(d.cfg.db_path, '/');
			snprintf(cache, sizeof(cache), "%.*shub-cache", slash ? (int)(slash - d.cfg.db_path + 1) : 0,
				 d.cfg.db_path);
		}
		mps_set_hub(d.svc, d.cfg.hub_endpoint, d.cfg.hub_token, cache, d.cfg.hub_cache_bytes,
			    d.cfg.hub_timeout_seconds);
		mpd_log(lvl, MPD_LOG_INFO, "memplan serve: models given by hf_repo may be fetched from %s (%s; cache %s)",
			d.cfg.hub_endpoint, d.cfg.hub_token[0] ? "with a token" : "no token", cache);
	}
	st = mpd_start(&d, &err);
	if (st != MP_OK) {
		mpd_log(lvl, MPD_LOG_ERROR, "memplan serve: %s", err.message);
		mps_close(d.svc);
		return 1;
	}
	mpd_log(lvl, MPD_LOG_INFO, "memplan %s listening on %s%s%s:%u, database %s, %u thread%s", MP_VERSION,
		strchr(d.cfg.listen_host, ':') ? "[" : "", d.cfg.listen_host, strchr(d.cfg.listen_host, ':') ? "]" : "",
		d.bound_port, d.cfg.db_path, d.cfg.threads, d.cfg.threads == 1 ? "" : "s");
	{
		char why[1400];

		if (!mps_writable(d.svc, why, sizeof(why)))
			mpd_log(lvl, MPD_LOG_WARN, "memplan serve: %s (GET /v1/health says degraded)", why);
		if (mps_open_notice(d.svc)[0]) /* a -wal moved aside: data an operator should look at */
			mpd_log(lvl, MPD_LOG_ERROR, "memplan serve: %s (GET /v1/health shows it in database.notice)",
				mps_open_notice(d.svc));
	}
	pthread_sigmask(SIG_UNBLOCK, &stop_set, NULL);
	for (;;) {
		unsigned char b;
		ssize_t n = read(stop_fd, &b, 1);

		if (n == 1) {
			sig = b;
			break;
		}
		if (n < 0 && errno == EINTR)
			continue;
		sig = SIGTERM; /* the pipe failed: stop rather than run unstoppable */
		break;
	}
	mpd_log(lvl, MPD_LOG_INFO, "%s: shutting down: no new connections, waiting up to %u s for requests in flight",
		sig == SIGINT ? "SIGINT" : "SIGTERM", d.cfg.shutdown_timeout_seconds);
	left = mpd_shutdown(&d);
	if (left > 0)
		mpd_log(lvl, MPD_LOG_WARN, "gave up waiting: %lu request%s still in flight", left,
			left == 1 ? " was" : "s were");
	mps_close(d.svc);
	mpd_log(lvl, MPD_LOG_INFO, "stopped; database closed");
	return 0;
}

/* `memplan routes`: the route table, one "METHOD PATTERN" a line (the contract tests compare it with the spec). */
int cli_routes(void)
{
	for (size_t i = 0; i < mpd_route_count; i++)
		printf("%s %s\n", mpd_routes[i].method, mpd_routes[i].pattern);
	return 0;
}

