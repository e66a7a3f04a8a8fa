/*
 * test_hub.c: {"hf_repo": "org/name"} through the decoder, mps_model_ref_fetch and the plan, against a Hugging Face
 * cache the test lays out as huggingface_hub does (models--org--name/refs/main holding a commit,
 * snapshots/<commit>/config.json, the index and the shards; the shards are the llama reference's, cut after their
 * headers, tests/ref/llamacpp/models). The weights equal the checkpoint's tensors; a revision by commit; a repo not
 * in the cache falls back to the preset that stands for it, else a 404 naming the repo; a shard cut inside
 * its header is a 422.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "../codec/codec.h"
#include "../service/service.h"
#include "refs.h"

#define COMMIT "0123456789abcdef0123456789abcdef01234567"

static mps_service *svc;
static char dir[] = "/tmp/memplan-hub-XXXXXX";
static char snap[512];

static void copy(const char *rel, const char *to)
{
	size_t len;
	char *b = ref_read(ref_path(rel), &len), path[700];
	FILE *f;

	assert_non_null(b);
	snprintf(path, sizeof(path), "%s/%s", snap, to);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, len, f), len);
	fclose(f);
	free(b);
}

static int setup(void **state)
{
	char path[600];
	mp_error err = MP_ERROR_INIT;
	FILE *f;

	(void)state;
	mpc_json_init(NULL);
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/models--acme--tiny-llama/refs", dir);
	snprintf(snap, sizeof(snap), "%s/models--acme--tiny-llama/snapshots/" COMMIT, dir);
	{
		char cmd[1400];
		snprintf(cmd, sizeof(cmd), "mkdir -p '%s' '%s'", path, snap);
		if (system(cmd) != 0)
			return -1;
	}
	snprintf(path, sizeof(path), "%s/models--acme--tiny-llama/refs/main", dir);
	if ((f = fopen(path, "w")) == NULL)
		return -1;
	fputs(COMMIT, f);
	fclose(f);
	setenv("HF_HUB_CACHE", dir, 1);
	snprintf(path, sizeof(path), "%s/m.db", dir);
	return mps_open(path, &svc, &err) == MP_OK ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[96];

	(void)state;
	mps_close(svc);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static mp_status plan_of(const char *body_text, mps_inference_plan *p, bool *fetched, mp_error *err)
{
	cJSON *body = cJSON_Parse(body_text);
	mps_inference_request *rq = calloc(1, sizeof(*rq));
	mp_status st;

	assert_non_null(body);
	st = mpc_inference_decode(body, "", true, rq, err);
	if (st == MP_OK)
		st = mps_model_ref_fetch(svc, &rq->job.model, fetched, err);
	if (st == MP_OK)
		st = mps_plan_inference(svc, rq, p, err);
	mpc_inference_request_release(rq);
	free(rq);
	cJSON_Delete(body);
	return st;
}

static void test_cache(void **state)
{
	mps_inference_plan *p = malloc(sizeof(*p));
	mp_error err = MP_ERROR_INIT;
	bool fetched;
	(void)state;

	copy("llamacpp/models/llama.config.json", "config.json");
	copy("llamacpp/models/llama.model.safetensors.index.json", "model.safetensors.index.json");
	copy("llamacpp/models/llama.model-00001-of-00002.safetensors.hdr", "model-00001-of-00002.safetensors");
	copy("llamacpp/models/llama.model-00002-of-00002.safetensors.hdr", "model-00002-of-00002.safetensors");
	if (plan_of("{\"model\":{\"hf_repo\":\"acme/tiny-llama\"},\"batch_size\":1,\"sequence_length\":4096}", p, &fetched,
		    &err) != MP_OK)
		fail_msg("%s: %s", err.field, err.message);
	assert_true(fetched);
	assert_int_equal(p->mem.weights_bytes, 8393216); /* the two shards' tensors (test_llamacpp: the plan's bf16) */
	assert_string_equal(p->choice.weight_dtype_from, "checkpoint");
	assert_true(p->weights_from_checkpoint);
	/* by commit */
	assert_int_equal(plan_of("{\"model\":{\"hf_repo\":\"acme/tiny-llama\",\"revision\":\"" COMMIT
				 "\"},\"batch_size\":1,\"sequence_length\":4096}",
				 p, &fetched, &err),
			 MP_OK);
	/* a repo not in the cache: the preset that stands for it, read from the store (nothing fetched) */
	assert_int_equal(plan_of("{\"model\":{\"hf_repo\":\"meta-llama/Llama-3.1-8B\"},\"batch_size\":1,\"sequence_length\":"
				 "4096}",
				 p, &fetched, &err),
			 MP_OK);
	assert_false(fetched);
	assert_string_equal(p->model.id, "llama-3.1-8b");
	/* neither: a 404 naming where it looked */
	assert_int_equal(plan_of("{\"model\":{\"hf_repo\":\"acme/none\"},\"batch_size\":1,\"sequence_length\":4096}", p,
				 &fetched, &err),
			 MP_ENOTFOUND);
	assert_string_equal(err.field, "/model");
	assert_non_null(strstr(err.message, "acme/none"));
	/* a branch the cache has no ref for */
	assert_int_equal(plan_of("{\"model\":{\"hf_repo\":\"acme/tiny-llama\",\"revision\":\"v2\"},\"batch_size\":1,"
				 "\"sequence_length\":4096}",
				 p, &fetched, &err),
			 MP_ENOTFOUND);
	/* a bad revision is the decoder's 422 */
	assert_int_equal(plan_of("{\"model\":{\"hf_repo\":\"acme/tiny-llama\",\"revision\":\"../x\"},\"batch_size\":1,"
				 "\"sequence_length\":4096}",
				 p, &fetched, &err),
			 MP_EINVAL);
	assert_string_equal(err.field, "/model/revision");
	/* a shard cut inside its header */
	{
		char path[700];
		FILE *f;
		snprintf(path, sizeof(path), "%s/model-00002-of-00002.safetensors", snap);
		f = fopen(path, "wb");
		fwrite("\x40\x00\x00\x00\x00\x00\x00\x00{\"a\"", 1, 12, f);
		fclose(f);
	}
	assert_int_equal(plan_of("{\"model\":{\"hf_repo\":\"acme/tiny-llama\"},\"batch_size\":1,\"sequence_length\":4096}", p,
				 &fetched, &err),
			 MP_EINVAL);
	assert_non_null(strstr(err.message, "ends inside its 64-byte header"));
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cache),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
