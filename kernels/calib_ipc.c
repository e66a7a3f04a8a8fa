/*
 * calib_ipc.c: framing of the messages between memplan and its GPU helper (calib_ipc.h): one header, then the
 * payload. Shared by both sides; knows nothing of CUDA, of processes or of what the payloads mean.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "calib_ipc.h"

void mp_calib_ipc_hello_fill(mp_calib_ipc_hello *h, int32_t pid)
{
	memset(h, 0, sizeof(*h));
	h->version = MP_CALIB_IPC_VERSION;
	h->options_size = (uint32_t)sizeof(mp_calib_gpu_options);
	h->info_size = (uint32_t)sizeof(mp_calib_gpu_info);
	h->results_size = (uint32_t)sizeof(mp_calib_gpu_results);
	h->error_size = (uint32_t)sizeof(mp_error);
	h->pid = pid;
}

/* send() on a socket (MSG_NOSIGNAL: a gone peer is EPIPE, not a signal); write() when fd is not one. */
static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);

		if (w < 0 && errno == ENOTSOCK)
			w = write(fd, c, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int mp_calib_ipc_send(int fd, uint32_t kind, const void *payload, uint32_t length)
{
	/* one buffer, one send: a reader never sees a header without its payload for long */
	char buf[sizeof(mp_calib_ipc_header) + MP_CALIB_IPC_MAX_PAYLOAD];
	mp_calib_ipc_header h = { MP_CALIB_IPC_MAGIC, kind, length };

	if (length > MP_CALIB_IPC_MAX_PAYLOAD)
		return EMSGSIZE;
	memcpy(buf, &h, sizeof(h));
	if (length)
		memcpy(buf + sizeof(h), payload, length);
	return write_all(fd, buf, sizeof(h) + length);
}

/* Reads exactly n bytes: 0, -1 at end of file before the first byte, EPIPE at end of file after it. */
static int read_all(int fd, void *p, size_t n)
{
	char *c = p;
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, c + got, n - got);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (r == 0)
			return got == 0 ? -1 : EPIPE;
		got += (size_t)r;
	}
	return 0;
}

int mp_calib_ipc_recv(int fd, mp_calib_ipc_header *h, void *buf, size_t cap)
{
	int rc = read_all(fd, h, sizeof(*h));

	if (rc != 0)
		return rc;
	if (h->magic != MP_CALIB_IPC_MAGIC)
		return EPROTO;
	if (h->length > cap)
		return EMSGSIZE;
	if (h->length == 0)
		return 0;
	rc = read_all(fd, buf, h->length);
	return rc == -1 ? EPIPE : rc;
}
