/*
 * cli_model_files.c: a model as the command line names it (--model FILE.gguf, a checkpoint folder, org/name) into the
 * model member the API takes, so that a file read here and its header pasted into POST /v1/plan/inference are one
 * request and get one answer: a GGUF file's header bytes (read up to the end of its tensor infos, never the
 * weights; every file of a split model) as gguf_header, a folder's config.json with each safetensors shard's
 * header (its first 8 + N bytes) as safetensors_headers, and a repository id as hf_repo.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/evp.h>

#include "../codec/codec.h"
#include "../hub/hub.h"
#include "../model/gguf.h"
#include "../model/safetensors.h"
#include "cli.h"

#define HEADER_MAX (UINT64_C(64) << 20) /* model/gguf.h MPM_GGUF_MAX_HEADER_BYTES */

/* The first bytes of path up to the end of its GGUF header (read in doubling steps until the reader finds the
 * header whole). NULL with why set on failure. */
static uint8_t *gguf_head(const char *path, size_t *len, char *why, size_t wlen)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t n = 0, want = 1 << 20;

	if (f == NULL) {
		snprintf(why, wlen, "cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		uint8_t *p = realloc(buf, want);
		mpm_gguf g;
		mp_error err = MP_ERROR_INIT;
		bool truncated = false, eof;
		mp_status st;

		if (p == NULL) {
			snprintf(why, wlen, "out of memory reading %s", path);
			break;
		}
		buf = p;
		n += fread(buf + n, 1, want - n, f);
		eof = n < want;
		st = mpm_gguf_read(buf, n, 0, "", &g, &truncated, &err);
		if (st == MP_OK)
			n = (size_t)g.data_offset < n ? (size_t)g.data_offset : n;
		mpm_gguf_free(&g);
		if (st == MP_OK || !truncated || eof || want >= HEADER_MAX) {
			/* a complete header, or the decoder's own error to report (the API's message) */
			fclose(f);
			*len = n;
			return buf;
		}
		want *= 2;
	}
	fclose(f);
	free(buf);
	return NULL;
}

static char *base64_of(const uint8_t *b, size_t n)
{
	char *out = malloc(4 * ((n + 2) / 3) + 1);

	if (out)
		EVP_EncodeBlock((unsigned char *)out, b, (int)n);
	return out;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);
	return a >= b && strcmp(s + a - b, tail) == 0;
}

/* {"gguf_header": "<base64>"} or, for a file of a split model, the list of every file's. */
static cJSON *gguf_model(const char *path, char *why, size_t wlen)
{
	uint32_t no, count;
	cJSON *model = cJSON_CreateObject(), *list = NULL;

	if (mpm_gguf_split_name(path, &no, &count) && count > 1)
		list = cJSON_AddArrayToObject(model, "gguf_header");
	for (uint32_t i = 1; i <= (list ? count : 1); i++) {
		char p[4096];
		size_t len;
		uint8_t *head;
		char *b64;

		if (list)
			snprintf(p, sizeof(p), "%.*s-%05u-of-%05u.gguf", (int)(strlen(path) - 20), path, i, count);
		else
			snprintf(p, sizeof(p), "%s", path);
		head = gguf_head(p, &len, why, wlen);
		b64 = head ? base64_of(head, len) : NULL;
		free(head);
		if (b64 == NULL) {
			cJSON_Delete(model);
			return NULL;
		}
		if (list)
			cJSON_AddItemToArray(list, cJSON_CreateString(b64));
		else
			cJSON_AddStringToObject(model, "gguf_header", b64);
		free(b64);
	}
	return model;
}

/* One shard's JSON header: the 8-byte little-endian length, then that many bytes of JSON. */
static cJSON *shard_header(const char *path, char *why, size_t wlen)
{
	FILE *f = fopen(path, "rb");
	uint8_t le[8];
	uint64_t n = 0;
	char *text;
	cJSON *doc = NULL;

	if (f == NULL) {
		snprintf(why, wlen, "cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	if (fread(le, 1, 8, f) != 8) {
		snprintf(why, wlen, "%s: shorter than a safetensors header's 8-byte length", path);
		fclose(f);
		return NULL;
	}
	for (int i = 7; i >= 0; i--)
		n = n << 8 | le[i];
	if (n == 0 || n > (UINT64_C(100) << 20)) {
		snprintf(why, wlen, "%s: a header of %llu bytes (safetensors allows 1 to 100 MB)", path, (unsigned long long)n);
		fclose(f);
		return NULL;
	}
	text = malloc((size_t)n);
	if (text && fread(text, 1, (size_t)n, f) == n)
		doc = cJSON_ParseWithLength(text, (size_t)n);
	if (doc == NULL)
		snprintf(why, wlen, "%s: its header is not %llu bytes of JSON", path, (unsigned long long)n);
	free(text);
	fclose(f);
	return doc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A checkpoint folder: config.json and every safetensors shard's header (the index's order when there is one), or
 * the .gguf file(s) it holds when it has no safetensors. */
static cJSON *folder_model(const char *dir, char *why, size_t wlen)
{
	char p[4096];
	cJSON *cfg, *index = NULL, *model = NULL, *list;
	char *names[256];
	size_t n = 0;
	DIR *d;
	struct dirent *e;

	snprintf(p, sizeof(p), "%s/model.safetensors.index.json", dir);
	index = cli_parse_file("plan", p, "index");
	if (index == NULL) {
		if ((d = opendir(dir)) == NULL) {
			snprintf(why, wlen, "cannot read the folder %s: %s", dir, strerror(errno));
			return NULL;
		}
		while ((e = readdir(d)) != NULL && n < 256)
			if (ends_with(e->d_name, ".safetensors") || (ends_with(e->d_name, ".gguf")))
				names[n++] = strdup(e->d_name);
		closedir(d);
		qsort(names, n, sizeof(names[0]), cmp_str);
	} else {
		const char *shards[256];
		int k = mpm_st_index_shards(index, shards, 256);

		for (int i = 0; i < k; i++)
			names[n++] = strdup(shards[i]);
	}
	if (n > 0 && ends_with(names[0], ".gguf")) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[0]);
		model = gguf_model(p, why, wlen);
		goto out;
	}
	snprintf(p, sizeof(p), "%s/config.json", dir);
	cfg = cli_parse_file("plan", p, "config");
	if (cfg == NULL) {
		snprintf(why, wlen, "%s has no config.json (a checkpoint folder holds config.json and its .safetensors "
				    "shards, or a .gguf file)", dir);
		goto out;
	}
	if (n == 0) {
		snprintf(why, wlen, "%s holds no .safetensors shard and no .gguf file", dir);
		cJSON_Delete(cfg);
		goto out;
	}
	model = cJSON_CreateObject();
	list = cJSON_AddArrayToObject(model, "safetensors_headers");
	for (size_t i = 0; i < n; i++) {
		cJSON *h;

		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		if ((h = shard_header(p, why, wlen)) == NULL) {
			cJSON_Delete(model);
			cJSON_Delete(cfg);
			model = NULL;
			goto out;
		}
		cJSON_AddItemToArray(list, h);
	}
	cJSON_AddItemToObject(model, "hf_config", cfg);
	if (index) {
		cJSON_AddItemToObject(model, "safetensors_index", index);
		index = NULL;
	}
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	cJSON_Delete(index);
	return model;
}

cJSON *cli_model_from_path(const char *path, char *why, size_t wlen)
{
	struct stat sb;

	why[0] = '\0';
	if (stat(path, &sb) != 0)
		return NULL;
	if (S_ISDIR(sb.st_mode))
		return folder_model(path, why, wlen);
	if (ends_with(path, ".gguf"))
		return gguf_model(path, why, wlen);
	snprintf(why, wlen, "%s is a file but not a .gguf: give a GGUF file, a checkpoint folder, a stored id or org/name",
		 path);
	return NULL;
}

bool cli_in_hf_cache(const char *repo)
{
	char dir[1024], path[1400];
	const char *slash = strchr(repo, '/');
	struct stat sb;

	mph_cache_dir(dir, sizeof(dir));
	if (dir[0] == '\0' || slash == NULL)
		return false;
	snprintf(path, sizeof(path), "%s/models--%.*s--%s", dir, (int)(slash - repo), repo, slash + 1);
	return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}
