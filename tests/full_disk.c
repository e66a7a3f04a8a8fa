/*
 * full_disk.c: a preload library for tests/test_store_proc.c that makes the disk look full: while the file named by
 * MEMPLAN_TEST_DISK_FULL exists, every write(2), pwrite(2) or pwrite64 to a file whose path contains ".db" (the
 * database, its -wal and -shm) fails with ENOSPC, as on a full filesystem. Removing the file ends it. Loaded with
 * LD_PRELOAD into a spawned `memplan serve`; nothing else uses it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static int full_for(int fd)
{
	const char *flag = getenv("MEMPLAN_TEST_DISK_FULL");
	char link[64], path[512];
	ssize_t n;

	if (flag == NULL || access(flag, F_OK) != 0)
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return 0;
	path[n] = '\0';
	return strstr(path, ".db") != NULL;
}

ssize_t write(int fd, const void *buf, size_t n)
{
	static ssize_t (*real)(int, const void *, size_t);

	if (real == NULL)
		real = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	if (full_for(fd)) {
		errno = ENOSPC;
		return -1;
	}
	return real(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	static ssize_t (*real)(int, const void *, size_t, off_t);

	if (real == NULL)
		real = (ssize_t(*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
	if (full_for(fd)) {
		errno = ENOSPC;
		return -1;
	}
	return real(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
	static ssize_t (*real)(int, const void *, size_t, off_t);

	if (real == NULL)
		real = (ssize_t(*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite64");
	if (full_for(fd)) {
		errno = ENOSPC;
		return -1;
	}
	return real(fd, buf, n, off);
}
