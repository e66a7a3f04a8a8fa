/*
 * hub.h: models in the local Hugging Face cache (huggingface_hub's layout: <cache>/models--<org>--<name>/refs/<rev>
 * holding a commit, snapshots/<commit>/<file>), read as the files the model readers take: config.json, the index,
 * and the first bytes of each safetensors shard (its 8-byte length and JSON header, never the weights); and the
 * Hugging Face Hub itself, over HTTP with libcurl, where the operator lets the daemon reach one (hubclient.c):
 * files and byte ranges of a repository, and a bounded cache of what was fetched in the same layout. Files and
 * HTTP only; it parses nothing (model/ does). Prefix mph_.
 */
#ifndef MPH_HUB_H
#define MPH_HUB_H

#include <stddef.h>
#include <stdint.h>

#include "../core/mp_base.h"

#define MPH_MAX_SHARDS 256
#define MPH_MAX_CONFIG_BYTES (UINT64_C(4) << 20)	/* config.json and the index */
#define MPH_MAX_HEADER_BYTES (UINT64_C(100) << 20)	/* a shard's JSON header (safetensors' own limit) */

/* The cache folder: $HF_HUB_CACHE, else $HF_HOME/hub, else $HOME/.cache/huggingface/hub (huggingface_hub
 * constants.py); "" when none of them is set. */
void mph_cache_dir(char *buf, size_t len);

typedef struct mph_repo_files {
	char commit[96];		/* the snapshot read */
	char *config;			/* config.json, NUL-terminated */
	size_t config_len;
	char *index;			/* model.safetensors.index.json, NULL when the snapshot has none */
	size_t index_len;
	size_t n;			/* safetensors shards, in name order */
	uint8_t *shards[MPH_MAX_SHARDS];	/* each shard's first 8 + N bytes */
	size_t lens[MPH_MAX_SHARDS];
	char *names[MPH_MAX_SHARDS];	/* each shard's file name */
} mph_repo_files;

/*
 * Reads repo ("org/name") at revision (a branch or tag under refs/, or a commit with a snapshot; "" = main) from
 * the cache folder cache_dir. Errors: MP_ENOTFOUND (no such repo, revision or config.json in the cache: the message
 * names the folder looked at), MP_EINVAL (a shard shorter than its header, a file over its limit), MP_ENOMEM.
 * Owned by the caller: *out, freed with mph_repo_files_free (also after an error). Worked example
 * (tests/test_hub.c): a cache laid out by the test with the llama reference's two shards -> commit, config, index,
 * 2 shards.
 */
mp_status mph_cache_read(const char *cache_dir, const char *repo, const char *revision, mph_repo_files *out,
			 mp_error *err);

void mph_repo_files_free(mph_repo_files *f);

/* ----- the Hugging Face Hub (hubclient.c) ------------------------------------------------------------------ */

/* The operator's Hub settings (the daemon's --hub-* settings): nothing is fetched unless endpoint is set. */
typedef struct mph_hub {
	char endpoint[512];		/* "https://huggingface.co" (no trailing '/'); "" = never fetch */
	char token[512];		/* sent as "Authorization: Bearer" to the endpoint's host only; never logged */
	unsigned timeout_seconds;	/* per request, connection included (0 = 30) */
	char cache_dir[1024];		/* where fetched files are kept, the Hugging Face cache's layout; "" = none */
	uint64_t cache_max_bytes;	/* the cache's bound: the oldest snapshots go first */
} mph_hub;

typedef struct mph_blob {
	uint8_t *data;			/* heap (free it); NUL-terminated one byte past len */
	size_t len;
	char commit[96];		/* X-Repo-Commit of the endpoint's answer, "" when it sent none */
} mph_blob;

/*
 * GET {endpoint}/{repo}/resolve/{revision}/{file} (revision "" = main; quoted as huggingface_hub quotes it), bytes
 * [offset, offset + length) by a Range request (length 0: the whole file), at most max_bytes of body. Redirects are
 * followed (5 at most, relative ones against the host that sent them), the token sent only to the endpoint's host.
 * A server that answers a range with 200 has the range cut out of its body. Errors: MP_ENOTFOUND (404: the repo,
 * revision or file, as the Hub's X-Error-Code says), MP_EUPSTREAM (401 / 403: gated or private, with what to do; a
 * timeout or transport failure; another status; a body over max_bytes; a short range), MP_ENOMEM. Messages name the
 * repo and the file, never the token. Owned by the caller: out->data (free).
 */
mp_status mph_hub_get(const mph_hub *h, const char *repo, const char *revision, const char *file, uint64_t offset,
		      uint64_t length, uint64_t max_bytes, mph_blob *out, mp_error *err);

/*
 * Keeps files (f: config, index, shard heads with their names) of repo at commit f->commit in the cache h->cache_dir
 * in the Hugging Face cache's layout, refs/<revision> naming the commit when revision is a branch or tag; written
 * into a temporary folder and renamed, so a failure leaves nothing. Then removes the least recently written
 * snapshots until the cache holds at most h->cache_max_bytes. A no-op without a cache_dir. Errors: MP_EINVAL (a
 * shard name that is not a plain file name), MP_ESTORAGE (the folder cannot be written: the message says why).
 */
mp_status mph_cache_store(const mph_hub *h, const char *repo, const char *revision, const mph_repo_files *f,
			  mp_error *err);

#endif /* MPH_HUB_H */
