/*
 * hfcache.c: the local Hugging Face cache (hub.h). Resolves a revision through refs/, reads config.json and the
 * index whole (bounded), and of each shard only its 8-byte length and the header that follows.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hub.h"

void mph_cache_dir(char *buf, size_t len)
{
	const char *v;

	buf[0] = '\0';
	if ((v = getenv("HF_HUB_CACHE")) != NULL && v[0])
		snprintf(buf, len, "%s", v);
	else if ((v = getenv("HF_HOME")) != NULL && v[0])
		snprintf(buf, len, "%s/hub", v);
	else if ((v = getenv("HOME")) != NULL && v[0])
		snprintf(buf, len, "%s/.cache/huggingface/hub", v);
}

void mph_repo_files_free(mph_repo_files *f)
{
	if (f == NULL)
		return;
	free(f->config);
	free(f->index);
	for (size_t i = 0; i < f->n; i++) {
		free(f->shards[i]);
		free(f->names[i]);
	}
	memset(f, 0, sizeof(*f));
}

/* A whole small file, NUL-terminated; NULL when absent. *too_big set when over max. */
static char *read_small(const char *path, uint64_t max, size_t *len, bool *too_big)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	*too_big = false;
	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fclose(f);
		return NULL;
	}
	if ((uint64_t)n > max) {
		*too_big = true;
		fclose(f);
		return NULL;
	}
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf) {
		buf[n] = '\0';
		*len = (size_t)n;
	}
	return buf;
}

static mp_status shard_head(const char *path, uint8_t **out, size_t *len, mp_error *err)
{
	FILE *f = fopen(path, "rb");
	uint8_t le[8];
	uint64_t n = 0;

	*out = NULL;
	if (f == NULL)
		return mp_fail(err, MP_ENOTFOUND, "/model/hf_repo", "cannot open %s: %s", path, strerror(errno));
	if (fread(le, 1, 8, f) != 8) {
		fclose(f);
		return mp_fail(err, MP_EINVAL, "/model/hf_repo", "%s: shorter than a safetensors header's 8-byte length",
			       path);
	}
	for (int i = 7; i >= 0; i--)
		n = n << 8 | le[i];
	if (n > MPH_MAX_HEADER_BYTES) {
		fclose(f);
		return mp_fail(err, MP_EINVAL, "/model/hf_repo", "%s: a header of %llu bytes (at most %llu)", path,
			       (unsigned long long)n, (unsigned long long)MPH_MAX_HEADER_BYTES);
	}
	*out = malloc((size_t)n + 8);
	if (*out == NULL) {
		fclose(f);
		return mp_fail(err, MP_ENOMEM, "/model/hf_repo", "out of memory");
	}
	memcpy(*out, le, 8);
	if (fread(*out + 8, 1, (size_t)n, f) != n) {
		fclose(f);
		free(*out);
		*out = NULL;
		return mp_fail(err, MP_EINVAL, "/model/hf_repo", "%s: the file ends inside its %llu-byte header", path,
			       (unsigned long long)n);
	}
	fclose(f);
	*len = (size_t)n + 8;
	return MP_OK;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

mp_status mph_cache_read(const char *cache_dir, const char *repo, const char *revision, mph_repo_files *out,
			 mp_error *err)
{
	char base[1024], path[2048], *names[MPH_MAX_SHARDS];
	const char *slash = strchr(repo, '/'), *rev = revision && revision[0] ? revision : "main";
	size_t nn = 0, len;
	bool big;
	char *ref;
	DIR *d;
	struct dirent *e;
	mp_status st = MP_OK;

	memset(out, 0, sizeof(*out));
	if (cache_dir == NULL || cache_dir[0] == '\0' || slash == NULL)
		return mp_fail(err, MP_ENOTFOUND, "/model/hf_repo", "no Hugging Face cache folder (HF_HUB_CACHE, HF_HOME, HOME)");
	snprintf(base, sizeof(base), "%s/models--%.*s--%s", cache_dir, (int)(slash - repo), repo, slash + 1);
	snprintf(path, sizeof(path), "%s/refs/%s", base, rev);
	ref = read_small(path, 256, &len, &big);
	if (ref) {
		while (len > 0 && (ref[len - 1] == '\n' || ref[len - 1] == '\r' || ref[len - 1] == ' '))
			ref[--len] = '\0';
		snprintf(out->commit, sizeof(out->commit), "%s", ref);
		free(ref);
	} else {
		snprintf(out->commit, sizeof(out->commit), "%s", rev); /* a commit given as the revision */
	}
	if (strchr(out->commit, '/') || strstr(out->commit, ".."))
		return mp_fail(err, MP_EINVAL, "/model/hf_repo", "%s: refs/%s does not hold a commit", base, rev);
	snprintf(path, sizeof(path), "%s/snapshots/%s/config.json", base, out->commit);
	out->config = read_small(path, MPH_MAX_CONFIG_BYTES, &out->config_len, &big);
	if (out->config == NULL)
		return mp_fail(err, big ? MP_EINVAL : MP_ENOTFOUND, "/model/hf_repo",
			       big ? "%s is over 4 MiB" : "%s is not in the Hugging Face cache (looked for %s)", repo, path);
	snprintf(path, sizeof(path), "%s/snapshots/%s/model.safetensors.index.json", base, out->commit);
	out->index = read_small(path, MPH_MAX_CONFIG_BYTES, &out->index_len, &big);
	snprintf(path, sizeof(path), "%s/snapshots/%s", base, out->commit);
	if ((d = opendir(path)) == NULL)
		return mp_fail(err, MP_ENOTFOUND, "/model/hf_repo", "cannot read %s", path);
	while ((e = readdir(d)) != NULL) {
		size_t k = strlen(e->d_name);

		if (k > 12 && strcmp(e->d_name + k - 12, ".safetensors") == 0) {
			if (nn == MPH_MAX_SHARDS) {
				st = mp_fail(err, MP_EINVAL, "/model/hf_repo", "%s has more than %d shards", repo,
					     MPH_MAX_SHARDS);
				break;
			}
			if ((names[nn] = strdup(e->d_name)) == NULL) {
				st = mp_fail(err, MP_ENOMEM, "/model/hf_repo", "out of memory");
				break;
			}
			nn++;
		}
	}
	closedir(d);
	if (st == MP_OK && nn == 0)
		st = mp_fail(err, MP_ENOTFOUND, "/model/hf_repo",
			     "%s@%s in the Hugging Face cache has config.json but no .safetensors shard", repo, out->commit);
	qsort(names, nn, sizeof(names[0]), cmp_str);
	for (size_t i = 0; i < nn && st == MP_OK; i++) {
		char sp[2400];

		snprintf(sp, sizeof(sp), "%s/%s", path, names[i]);
		st = shard_head(sp, &out->shards[i], &out->lens[i], err);
		if (st == MP_OK) {
			out->names[i] = names[i];
			names[i] = NULL;
			out->n++;
		}
	}
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	return st;
}
