/*
 * hub.h: models in the local Hugging Face cache (huggingface_hub's layout: <cache>/models--<org>--<name>/refs/<rev>
 * holding a commit, snapshots/<commit>/<file>), read as the files the model readers take: config.json, the index,
 * and the first bytes of each safetensors shard (its 8-byte length and JSON header, never the weights). Files only;
 * it parses nothing (model/ does). Prefix mph_.
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

#endif /* MPH_HUB_H */
