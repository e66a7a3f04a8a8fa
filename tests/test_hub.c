/*
 * test_hub.c: {"hf_repo": "org/name"} through the decoder, mps_model_ref_fetch and the plan, against a Hugging Face
 * cache the test lays out as huggingface_hub does (models--org--name/refs/main holding a commit,
 * snapshots/<commit>/config.json, the index and the shards; the shards are the llama reference's, cut after their
 * headers, tests/ref/llamacpp/models). The weights equal the checkpoint's tensors; a revision by commit; a repo not
 * in the cache falls back to the preset that stands for it, else a 404 naming the repo; a shard cut inside
 * its header is a 422. And the Hub itself: tests/hub_server.c (started here, on 127.0.0.1) serves the Hub's URL
 * layout (resolve, X-Repo-Commit, a 302 to a CDN host that takes Range requests, 401 for gated and missing
 * repositories); mps_model_ref_fetch with mps_set_hub fetches config.json, the index and the shards' headers only,
 * keeps them in the hub cache (a commit already fetched costs no request), sends the token to the endpoint's host
 * alone, and answers a gated repository, a timeout and a body over the limit with MP_EUPSTREAM (502) naming the
 * repository, a missing one with a 404, nothing cached after a failure.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../codec/codec.h"
#include "../service/service.h"
#include "lib_util.h"
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

/* ----- the Hub ---------------------------------------------------------------------------------------------- */

extern char **environ;

#define HUB_COMMIT "89abcdef0123456789abcdef0123456789abcdef"
#define HUB_TOKEN "hf_test_secret_token_4242"

static pid_t hub_pid;
static FILE *hub_in;
static unsigned hub_port;
static char hub_root[600], hub_cache[600];

static void hub_file(const char *repo, const char *name, const void *data, size_t len)
{
	char path[1400], cmd[3000];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/" HUB_COMMIT, hub_root, repo);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' '%s/%s/refs'", path, hub_root, repo);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/%s/refs/main", hub_root, repo);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(HUB_COMMIT "\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/%s/" HUB_COMMIT "/%s", hub_root, repo, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

static void hub_ref(const char *repo, const char *rel, const char *name)
{
	size_t len;
	char *b = ref_read(ref_path(rel), &len);

	assert_non_null(b);
	hub_file(repo, name, b, len);
	free(b);
}

/* the Hub's repositories: the llama reference (two shards: their headers alone, as a Range request reads them),
 * a gated copy of it, a slow one, one whose config.json is over memplan's 4 MiB limit */
static int hub_setup(void **state)
{
	int fds[2], out[2];
	posix_spawn_file_actions_t fa;
	char *argv[4], line[64];
	FILE *from;
	(void)state;

	snprintf(hub_root, sizeof(hub_root), "%s/hub-root", dir);
	snprintf(hub_cache, sizeof(hub_cache), "%s/hub-cache", dir);
	for (int r = 0; r < 3; r++) {
		const char *repo = r == 0 ? "acme/hub-llama" : r == 1 ? "acme/gated-llama" : "slow/hub-llama";
		hub_ref(repo, "llamacpp/models/llama.config.json", "config.json");
		hub_ref(repo, "llamacpp/models/llama.model.safetensors.index.json", "model.safetensors.index.json");
		hub_ref(repo, "llamacpp/models/llama.model-00001-of-00002.safetensors.hdr", "model-00001-of-00002.safetensors");
		hub_ref(repo, "llamacpp/models/llama.model-00002-of-00002.safetensors.hdr", "model-00002-of-00002.safetensors");
	}
	{
		char gp[700];
		FILE *g;
		snprintf(gp, sizeof(gp), "%s/acme/gated-llama/gated", hub_root);
		g = fopen(gp, "w");
		assert_non_null(g);
		fclose(g);
	}
	{
		size_t n = (size_t)5 << 20;
		char *big = malloc(n);
		assert_non_null(big);
		memset(big, ' ', n);
		big[0] = '{';
		big[n - 1] = '}';
		hub_file("acme/big-config", "config.json", big, n);
		free(big);
	}
	if (pipe(fds) != 0 || pipe(out) != 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_addclose(&fa, fds[1]);
	posix_spawn_file_actions_addclose(&fa, out[0]);
	argv[0] = MP_TEST_HUB_SERVER;
	argv[1] = hub_root;
	argv[2] = HUB_TOKEN;
	argv[3] = NULL;
	if (posix_spawn(&hub_pid, argv[0], &fa, NULL, argv, environ) != 0)
		return -1;
	posix_spawn_file_actions_destroy(&fa);
	close(fds[0]);
	close(out[1]);
	hub_in = fdopen(fds[1], "w");
	from = fdopen(out[0], "r");
	if (hub_in == NULL || from == NULL || fgets(line, sizeof(line), from) == NULL ||
	    sscanf(line, "port %u", &hub_port) != 1)
		return -1;
	fclose(from);
	return 0;
}

static int hub_teardown(void **state)
{
	int status;
	(void)state;

	fclose(hub_in); /* the server stops when its stdin closes */
	waitpid(hub_pid, &status, 0);
	mps_set_hub(svc, NULL, NULL, NULL, 0, 0);
	return 0;
}

static void hub_on(const char *token, unsigned timeout)
{
	char endpoint[64];

	snprintf(endpoint, sizeof(endpoint), "http://127.0.0.1:%u", hub_port);
	mps_set_hub(svc, endpoint, token, hub_cache, UINT64_C(64) << 20, timeout);
}

/* "resolve N cdn M ranges R" of the server so far */
static void hub_stats(unsigned long *resolve, unsigned long *cdn, unsigned long *ranges)
{
	char cmd[128], buf[128];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "curl -s http://127.0.0.1:%u/_stats", hub_port);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(buf, sizeof(buf), p));
	pclose(p);
	assert_int_equal(sscanf(buf, "resolve %lu cdn %lu ranges %lu", resolve, cdn, ranges), 3);
}

static bool in_cache(const char *repo_dir)
{
	char path[1400];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", hub_cache, repo_dir);
	return stat(path, &st) == 0;
}

static void test_hub_fetch(void **state)
{
	mps_inference_plan *p = calloc(1, sizeof(*p));
	mp_error err = MP_ERROR_INIT;
	unsigned long r0, c0, g0, r1, c1, g1;
	bool fetched;
	(void)state;

	/* off by default: the daemon reaches no Hub */
	mps_set_hub(svc, NULL, NULL, NULL, 0, 0);
	assert_int_equal(plan_of("{\"model\":{\"hf_repo\":\"acme/hub-llama\"},\"batch_size\":1,\"sequence_length\":4096}",
				 p, &fetched, &err),
			 MP_ENOTFOUND);
	assert_non_null(strstr(err.message, "acme/hub-llama"));
	hub_stats(&r0, &c0, &g0);
	assert_int_equal(r0 + c0, 0);

	hub_on(HUB_TOKEN, 10);
	if (plan_of("{\"model\":{\"hf_repo\":\"acme/hub-llama\"},\"batch_size\":1,\"sequence_length\":4096}", p,
		    &fetched, &err) != MP_OK)
		fail_msg("%s: %s", err.field, err.message);
	assert_true(fetched);
	assert_int_equal(p->mem.weights_bytes, 8393216); /* the two shards' tensors, as from the local cache */
	assert_string_equal(p->model.source, "hub:acme/hub-llama@" HUB_COMMIT);
	/* config.json, the index, and per shard the length and the header: 2 + 2 x 2 resolves, 4 ranges at the CDN
	 * (which refuses any request carrying the token) */
	hub_stats(&r1, &c1, &g1);
	assert_int_equal(r1 - r0, 6);
	assert_int_equal(c1 - c0, 4);
	assert_int_equal(g1 - g0, 4);
	assert_true(in_cache("models--acme--hub-llama/snapshots/" HUB_COMMIT "/model-00001-of-00002.safetensors"));
	assert_true(in_cache("models--acme--hub-llama/refs/main"));
	/* again by branch: one request (config.json names the commit), the rest from the hub cache */
	assert_int_equal(plan_of("{\"model\":{\"hf_repo\":\"acme/hub-llama\"},\"batch_size\":1,\"sequence_length\":4096}",
				 p, &fetched, &err),
			 MP_OK);
	assert_string_equal(p->model.source, "hub_cache:acme/hub-llama@" HUB_COMMIT);
	hub_stats(&r0, &c0, &g0);
	assert_int_equal(r0 - r1, 1);
	assert_int_equal(c0 - c1, 0);
	/* by commit: none */
	assert_int_equal(plan_of("{\"model\":{\"hf_repo\":\"acme/hub-llama\",\"revision\":\"" HUB_COMMIT
				 "\"},\"batch_size\":1,\"sequence_length\":4096}",
				 p, &fetched, &err),
			 MP_OK);
	hub_stats(&r1, &c1, &g1);
	assert_int_equal(r1 - r0, 0);
	assert_int_equal(p->mem.weights_bytes, 8393216);

	/* gated: the token opens it; without one, a 502-style refusal naming the repository and what to do */
	assert_int_equal(plan_of("{\"model\":{\"hf_repo\":\"acme/gated-llama\"},\"batch_size\":1,\"sequence_length\":"
				 "4096}",
				 p, &fetched, &err),
			 MP_OK);
	hub_on(NULL, 10);
	assert_int_equal(plan_of("{\"model\":{\"hf_repo\":\"acme/gated-llama\",\"revision\":\"v2\"},\"batch_size\":1,"
				 "\"sequence_length\":4096}",
				 p, &fetched, &err),
			 MP_EUPSTREAM);
	assert_string_equal(err.field, "/model");
	assert_non_null(strstr(err.message, "acme/gated-llama"));
	assert_non_null(strstr(err.message, "GatedRepo"));
	assert_non_null(strstr(err.message, "--hub-token-file"));
	/* a repository the Hub does not have: 404 naming it; one a preset stands for: the preset */
	hub_on(HUB_TOKEN, 10);
	assert_int_equal(plan_of("{\"model\":{\"hf_repo\":\"acme/none\"},\"batch_size\":1,\"sequence_length\":4096}", p,
				 &fetched, &err),
			 MP_ENOTFOUND);
	assert_non_null(strstr(err.message, "acme/none"));
	assert_null(strstr(err.message, HUB_TOKEN));
	assert_int_equal(plan_of("{\"model\":{\"hf_repo\":\"meta-llama/Llama-3.1-8B\"},\"batch_size\":1,"
				 "\"sequence_length\":4096}",
				 p, &fetched, &err),
			 MP_OK);
	assert_false(fetched);
	assert_string_equal(p->model.id, "llama-3.1-8b");
	/* a revision it does not have */
	assert_int_equal(plan_of("{\"model\":{\"hf_repo\":\"acme/hub-llama\",\"revision\":\"v9\"},\"batch_size\":1,"
				 "\"sequence_length\":4096}",
				 p, &fetched, &err),
			 MP_ENOTFOUND);
	assert_non_null(strstr(err.message, "RevisionNotFound"));
	/* a body over memplan's limit (a 5 MiB config.json), and a Hub slower than the timeout: 502, nothing cached */
	assert_int_equal(plan_of("{\"model\":{\"hf_repo\":\"acme/big-config\"},\"batch_size\":1,\"sequence_length\":"
				 "4096}",
				 p, &fetched, &err),
			 MP_EUPSTREAM);
	assert_non_null(strstr(err.message, "more than 4194304 bytes"));
	assert_false(in_cache("models--acme--big-config"));
	hub_on(HUB_TOKEN, 1);
	assert_int_equal(plan_of("{\"model\":{\"hf_repo\":\"slow/hub-llama\"},\"batch_size\":1,\"sequence_length\":"
				 "4096}",
				 p, &fetched, &err),
			 MP_EUPSTREAM);
	assert_non_null(strstr(err.message, "slow/hub-llama"));
	assert_non_null(strstr(err.message, "did not answer"));
	assert_false(in_cache("models--slow--hub-llama"));
	mps_inference_plan_release(p);
	free(p);
}

/* POST /v1/fit with jobs naming repositories: each fetched (the Hub's, the local cache's), one named twice fetched
 * once, one the Hub lacks a 404 naming its job */
static void test_fit_hf_repo(void **state)
{
	const char *body_text =
		"{\"jobs\": [{\"inference\": {\"model\": {\"hf_repo\": \"acme/hub-llama\"}, \"batch_size\": 1, "
		"\"sequence_length\": 4096}}, {\"inference\": {\"model\": {\"hf_repo\": \"acme/hub-llama\"}, "
		"\"batch_size\": 8, \"sequence_length\": 4096}}, {\"inference\": {\"model\": {\"hf_repo\": "
		"\"acme/tiny-llama\"}, \"batch_size\": 1, \"sequence_length\": 4096}}], \"devices\": [\"rtx-4090-24gb\"]}";
	cJSON *body = cJSON_Parse(body_text), *doc;
	mp_error err = MP_ERROR_INIT;
	unsigned long r0, c0, g0, r1, c1, g1;
	char *out = NULL;
	mp_status st;
	(void)state;

	assert_non_null(body);
	/* the local cache's repository whole again (test_cache cut its second shard) */
	copy("llamacpp/models/llama.model-00002-of-00002.safetensors.hdr", "model-00002-of-00002.safetensors");
	hub_on(HUB_TOKEN, 10);
	hub_stats(&r0, &c0, &g0);
	st = lib_answer(svc, "fit", body, &out, &err);
	if (st != MP_OK)
		fail_msg("%s: %s", err.field, err.message);
	doc = cJSON_Parse(out);
	assert_non_null(doc);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "jobs")), 3);
	/* the hub cache had the commit from test_hub_fetch: one request (config.json names the commit) for two jobs */
	hub_stats(&r1, &c1, &g1);
	assert_int_equal(r1 - r0, 1);
	free(out);
	cJSON_Delete(doc);
	cJSON_Delete(body);
	/* a repository nobody has: the job is named */
	body = cJSON_Parse("{\"jobs\": [{\"inference\": {\"model\": \"llama-3-8b\", \"batch_size\": 1, \"sequence_length\": "
			   "1024}}, {\"inference\": {\"model\": {\"hf_repo\": \"acme/none\"}, \"batch_size\": 1, "
			   "\"sequence_length\": 1024}}], \"devices\": [\"rtx-4090-24gb\"]}");
	assert_int_equal(lib_answer(svc, "fit", body, &out, &err), MP_ENOTFOUND);
	assert_string_equal(err.field, "/jobs/1/inference/model");
	assert_non_null(strstr(err.message, "acme/none"));
	cJSON_Delete(body);
	/* without a Hub and outside the local cache: the same 404, nothing fetched */
	mps_set_hub(svc, NULL, NULL, NULL, 0, 0);
	body = cJSON_Parse("{\"jobs\": [{\"inference\": {\"model\": {\"hf_repo\": \"acme/hub-llama2\"}, \"batch_size\": 1, "
			   "\"sequence_length\": 1024}}], \"devices\": [\"rtx-4090-24gb\"]}");
	assert_int_equal(lib_answer(svc, "fit", body, &out, &err), MP_ENOTFOUND);
	assert_string_equal(err.field, "/jobs/0/inference/model");
	cJSON_Delete(body);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cache),
		cmocka_unit_test_setup(test_hub_fetch, hub_setup),
		cmocka_unit_test_teardown(test_fit_hf_repo, hub_teardown),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
