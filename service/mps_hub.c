/*
 * mps_hub.c: a model by Hugging Face repository fetched from the Hub, where the operator lets the daemon reach one
 * (--hub-endpoint): config.json (whose answer names the commit), model.safetensors.index.json when the repository
 * has one, and of each safetensors shard only its first 8 + N bytes (the length, then the header) by two range
 * requests; kept in the daemon's bounded hub cache and read back from it for a commit already fetched. The files are
 * read by model/ as a cached repository's are (service.c). Nothing is kept when any step fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mps_hub_fetch.h"

/* A commit id as the Hub names them: 40 hex digits. */
static bool is_commit(const char *s)
{
	size_t n = 0;

	for (; s && s[n]; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
			return false;
	return n == 40;
}

mp_status mps_hub_fetch_repo(const mph_hub *h, const char *repo, const char *revision, mph_repo_files *out,
			     bool *from_cache, mp_error *err)
{
	char (*shard)[MPM_SHARD_NAME_MAX] = NULL;
	mph_blob config, index, b;
	size_t n = 0;
	mp_status st;
	mp_error e = MP_ERROR_INIT;

	memset(out, 0, sizeof(*out));
	memset(&config, 0, sizeof(config));
	memset(&index, 0, sizeof(index));
	*from_cache = false;
	/* a commit already fetched: the cache alone */
	if (is_commit(revision) && h->cache_dir[0] && mph_cache_read(h->cache_dir, repo, revision, out, &e) == MP_OK) {
		*from_cache = true;
		return MP_OK;
	}
	mph_repo_files_free(out);
	st = mph_hub_get(h, repo, revision, "config.json", 0, 0, MPH_MAX_CONFIG_BYTES, &config, err);
	if (st != MP_OK)
		return st;
	if (!is_commit(config.commit)) {
		free(config.data);
		return mp_fail(err, MP_EUPSTREAM, "/model/hf_repo",
			       "the Hub's answer for %s/config.json named no commit (X-Repo-Commit): is %s a Hub?", repo,
			       h->endpoint);
	}
	if (h->cache_dir[0] && mph_cache_read(h->cache_dir, repo, config.commit, out, &e) == MP_OK) {
		free(config.data);
		*from_cache = true;
		if (revision && revision[0] && strcmp(revision, out->commit) != 0) {
			/* the branch now names this commit */
			mph_cache_store(h, repo, revision, out, &e);
		}
		return MP_OK;
	}
	mph_repo_files_free(out);
	snprintf(out->commit, sizeof(out->commit), "%s", config.commit);
	out->config = (char *)config.data;
	out->config_len = config.len;
	/* the rest at the commit config.json came from, so that the files agree */
	st = mph_hub_get(h, repo, out->commit, "model.safetensors.index.json", 0, 0, MPH_MAX_CONFIG_BYTES, &index, err);
	if (st == MP_OK) {
		out->index = (char *)index.data;
		out->index_len = index.len;
	} else if (st == MP_ENOTFOUND) {
		st = MP_OK; /* one shard, model.safetensors */
	}
	if (st == MP_OK && (shard = calloc(MPH_MAX_SHARDS, sizeof(*shard))) == NULL)
		st = mp_fail(err, MP_ENOMEM, "/model/hf_repo", "out of memory");
	if (st == MP_OK && out->index)
		st = mpm_checkpoint_index_shards(out->index, "/model/hf_repo", shard, MPH_MAX_SHARDS, &n, err);
	else if (st == MP_OK) {
		snprintf(shard[0], sizeof(shard[0]), "model.safetensors");
		n = 1;
	}
	for (size_t i = 0; st == MP_OK && i < n; i++) {
		uint64_t len = 0;

		/* the 8-byte length, then the header: the weights are never asked for */
		st = mph_hub_get(h, repo, out->commit, shard[i], 0, 8, 8, &b, err);
		if (st != MP_OK)
			break;
		for (int k = 7; k >= 0; k--)
			len = len << 8 | b.data[k];
		free(b.data);
		if (len == 0 || len > MPH_MAX_HEADER_BYTES) {
			st = mp_fail(err, MP_EUPSTREAM, "/model/hf_repo",
				     "%s/%s declares a safetensors header of %llu bytes (memplan reads at most %llu)", repo,
				     shard[i], (unsigned long long)len, (unsigned long long)MPH_MAX_HEADER_BYTES);
			break;
		}
		st = mph_hub_get(h, repo, out->commit, shard[i], 8, len, len, &b, err);
		if (st != MP_OK)
			break;
		if ((out->shards[i] = malloc((size_t)len + 8)) == NULL || (out->names[i] = strdup(shard[i])) == NULL) {
			free(b.data);
			free(out->shards[i]);
			out->shards[i] = NULL;
			st = mp_fail(err, MP_ENOMEM, "/model/hf_repo", "out of memory");
			break;
		}
		for (int k = 0; k < 8; k++)
			out->shards[i][k] = (uint8_t)(len >> (8 * k));
		memcpy(out->shards[i] + 8, b.data, (size_t)len);
		out->lens[i] = (size_t)len + 8;
		free(b.data);
		out->n++;
	}
	free(shard);
	if (st == MP_OK)
		(void)mph_cache_store(h, repo, revision, out, &e); /* a cache that cannot be written costs a refetch only */
	if (st != MP_OK)
		mph_repo_files_free(out);
	return st;
}
