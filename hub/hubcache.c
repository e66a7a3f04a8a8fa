/*
 * hubcache.c: the bounded cache of what the daemon fetched from the Hub (hub.h mph_cache_store), in the Hugging Face
 * cache's layout (models--<org>--<name>/snapshots/<commit>/<file>, refs/<revision>) so that mph_cache_read, the
 * local cache's reader, serves it. A snapshot appears whole or not at all (written aside, then renamed); the oldest
 * snapshots go first when the cache passes its bound. Files only.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hub.h"

/* A file name the cache may hold: letters, digits, '.', '_', '-', not "." or "..". */
static bool plain_name(const char *s)
{
	if (s == NULL || s[0] == '\0' || strcmp(s, ".") == 0 || strcmp(s, "..") == 0 || strlen(s) > 200)
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.' ||
		      *p == '_' || *p == '-'))
			return false;
	return true;
}

static bool mkdirs(const char *path)
{
	char buf[2048];
	size_t n = strlen(path);

	if (n >= sizeof(buf))
		return false;
	memcpy(buf, path, n + 1);
	for (size_t i = 1; i <= n; i++)
		if (buf[i] == '/' || buf[i] == '\0') {
			char c = buf[i];
			buf[i] = '\0';
			if (mkdir(buf, 0755) != 0 && errno != EEXIST)
				return false;
			buf[i] = c;
		}
	return true;
}

static bool write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	bool ok;

	if (f == NULL)
		return false;
	ok = fwrite(data, 1, len, f) == len;
	return fclose(f) == 0 && ok;
}

/* Removes a snapshot folder (plain files only) and the folder. */
static void remove_snapshot(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[2400];

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

typedef struct snap {
	char path[1700];
	time_t mtime;
	uint64_t bytes;
} snap;

static int by_age(const void *a, const void *b)
{
	const snap *x = a, *y = b;

	return x->mtime < y->mtime ? -1 : x->mtime > y->mtime;
}

/* Every snapshot of the cache with its bytes; the oldest removed until the cache holds at most max (keep excepted). */
static void prune(const char *cache_dir, uint64_t max, const char *keep)
{
	DIR *top = opendir(cache_dir);
	struct dirent *r;
	snap *all = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;

	if (top == NULL)
		return;
	while ((r = readdir(top)) != NULL) {
		char sd[1400];
		DIR *snaps;
		struct dirent *s;

		if (strncmp(r->d_name, "models--", 8) != 0)
			continue;
		snprintf(sd, sizeof(sd), "%s/%s/snapshots", cache_dir, r->d_name);
		if ((snaps = opendir(sd)) == NULL)
			continue;
		while ((s = readdir(snaps)) != NULL) {
			snap x;
			struct stat stt;
			DIR *files;
			struct dirent *f;

			if (s->d_name[0] == '.')
				continue;
			memset(&x, 0, sizeof(x));
			snprintf(x.path, sizeof(x.path), "%s/%s", sd, s->d_name);
			if (stat(x.path, &stt) != 0 || !S_ISDIR(stt.st_mode))
				continue;
			x.mtime = stt.st_mtime;
			if ((files = opendir(x.path)) != NULL) {
				while ((f = readdir(files)) != NULL) {
					char fp[2000];
					struct stat fs;
					snprintf(fp, sizeof(fp), "%s/%s", x.path, f->d_name);
					if (f->d_name[0] != '.' && stat(fp, &fs) == 0 && S_ISREG(fs.st_mode))
						x.bytes += (uint64_t)fs.st_size;
				}
				closedir(files);
			}
			if (n == cap) {
				snap *na = realloc(all, (cap ? cap * 2 : 16) * sizeof(*all));
				if (na == NULL)
					break;
				all = na;
				cap = cap ? cap * 2 : 16;
			}
			all[n++] = x;
			total += x.bytes;
		}
		closedir(snaps);
	}
	closedir(top);
	qsort(all, n, sizeof(*all), by_age);
	for (size_t i = 0; i < n && total > max; i++) {
		if (strcmp(all[i].path, keep) == 0)
			continue;
		remove_snapshot(all[i].path);
		total -= all[i].bytes;
	}
	free(all);
}

mp_status mph_cache_store(const mph_hub *h, const char *repo, const char *revision, const mph_repo_files *f,
			  mp_error *err)
{
	char base[1400], final[1600], tmp[1700], p[2400];
	const char *slash = strchr(repo, '/');
	struct stat stt;
	bool ok = true;

	if (h == NULL || h->cache_dir[0] == '\0')
		return MP_OK;
	if (slash == NULL || !plain_name(f->commit))
		return mp_fail(err, MP_EINVAL, "/model/hf_repo", "the Hub's commit '%.60s' of %s is not a plain name",
			       f->commit, repo);
	for (size_t i = 0; i < f->n; i++)
		if (!plain_name(f->names[i]))
			return mp_fail(err, MP_EINVAL, "/model/hf_repo",
				       "shard '%.200s' of %s: memplan keeps shards whose names are plain file names", f->names[i],
				       repo);
	snprintf(base, sizeof(base), "%s/models--%.*s--%s", h->cache_dir, (int)(slash - repo), repo, slash + 1);
	snprintf(final, sizeof(final), "%s/snapshots/%s", base, f->commit);
	if (stat(final, &stt) != 0) {
		snprintf(tmp, sizeof(tmp), "%s/snapshots/.tmp-%s-%ld-%ld", base, f->commit, (long)getpid(), (long)time(NULL));
		if (!mkdirs(tmp))
			return mp_fail(err, MP_ESTORAGE, "/model/hf_repo", "cannot create the hub cache folder %s: %s", tmp,
				       strerror(errno));
		snprintf(p, sizeof(p), "%s/config.json", tmp);
		ok = write_file(p, f->config, f->config_len);
		if (ok && f->index) {
			snprintf(p, sizeof(p), "%s/model.safetensors.index.json", tmp);
			ok = write_file(p, f->index, f->index_len);
		}
		for (size_t i = 0; ok && i < f->n; i++) {
			snprintf(p, sizeof(p), "%s/%s", tmp, f->names[i]);
			ok = write_file(p, f->shards[i], f->lens[i]);
		}
		if (!ok || (rename(tmp, final) != 0 && errno != EEXIST && errno != ENOTEMPTY)) {
			int e = errno;
			remove_snapshot(tmp);
			return mp_fail(err, MP_ESTORAGE, "/model/hf_repo", "cannot write the hub cache under %s: %s", base,
				       strerror(e));
		}
		if (stat(tmp, &stt) == 0)
			remove_snapshot(tmp); /* another request wrote the same snapshot first */
	}
	if (revision == NULL || revision[0] == '\0')
		revision = "main";
	if (strcmp(revision, f->commit) != 0 && strstr(revision, "..") == NULL) {
		char ref[1700], reftmp[1800], *cut;

		snprintf(ref, sizeof(ref), "%s/refs/%s", base, revision);
		snprintf(reftmp, sizeof(reftmp), "%s", ref);
		if ((cut = strrchr(reftmp, '/')) != NULL) {
			*cut = '\0';
			mkdirs(reftmp);
		}
		snprintf(reftmp, sizeof(reftmp), "%s.tmp-%ld", ref, (long)getpid());
		if (!write_file(reftmp, f->commit, strlen(f->commit)) || rename(reftmp, ref) != 0) {
			unlink(reftmp);
			return mp_fail(err, MP_ESTORAGE, "/model/hf_repo", "cannot write %s: %s", ref, strerror(errno));
		}
	}
	prune(h->cache_dir, h->cache_max_bytes, final);
	return MP_OK;
}
