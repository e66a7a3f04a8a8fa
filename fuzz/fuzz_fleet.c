/*
 * fuzz_fleet.c: libFuzzer harness for what the fleet sends the catalog: a node agent's report (PUT /v1/nodes/{name}:
 * mpc_node_decode into the node cache) and an observation (POST /v1/observations: mpc_observation_decode, the pod's
 * launch as the extender reads it, the engine's metrics or log, then mps_observation_evaluate against a store with
 * the presets and a cache holding one reported H100 node), both forms, stored when they pass, the answer written.
 * The first byte picks: even a report, odd an observation. Any crash, sanitizer report or leak is a bug; an error
 * must say what is wrong.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../codec/mpc_fleet.h"
#include "../codec/mpc_json.h"
#include "../service/mps_observe.h"

static mps_service *svc;
static mps_node_cache *cache;

static void close_store(void)
{
	mps_node_cache_free(cache);
	mps_close(svc);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char dir[] = "/tmp/memplan-fuzz-XXXXXX", path[64];
	mp_error err = MP_ERROR_INIT;
	mps_node_facts f;

	(void)argc;
	(void)argv;
	mpc_json_init(NULL);
	if (mkdtemp(dir) == NULL)
		abort();
	snprintf(path, sizeof(path), "%s/fuzz.db", dir);
	if (mps_open(path, &svc, &err) != MP_OK) {
		fprintf(stderr, "fuzz_fleet: cannot open the store: %s\n", err.message);
		abort();
	}
	unlink(path);
	rmdir(dir);
	cache = mps_node_cache_new(1000);
	memset(&f, 0, sizeof(f));
	snprintf(f.name, sizeof(f.name), "gpu-node-08");
	snprintf(f.product, sizeof(f.product), "NVIDIA H100 80GB HBM3");
	f.memory_mib = 81559;
	f.count = 8;
	f.lease_seconds = 86400;
	if (cache == NULL || mps_node_cache_put(cache, &f, 1000, NULL, &err) != MP_OK)
		abort();
	atexit(close_store);
	return 0;
}

static void observation(const cJSON *doc)
{
	mpc_observation_request *rq = calloc(1, sizeof(*rq));
	mps_engine_check *check = malloc(sizeof(*check));
	mps_observation *o = malloc(sizeof(*o));
	mp_error err = MP_ERROR_INIT;
	bool existed;
	mp_status st = rq && check && o ? mpc_observation_decode(doc, rq, &err) : MP_ENOMEM;

	if (st == MP_OK && rq->rq.from_pod && rq->rq.pod.engine[0])
		st = mpc_observation_report(rq, mp_engine_from_name(rq->rq.pod.engine), &err);
	if (st == MP_OK)
		st = mps_observation_evaluate(svc, cache, 1000, &rq->rq, check, o, &err);
	if (st == MP_OK) {
		mpc_out w;
		char *text;

		mpc_observation_settings(&check->plan, o->settings_json, sizeof(o->settings_json));
		st = mps_observation_store(svc, o, &existed, &err);
		mpc_out_init(&w);
		mpc_observation_write(&w, NULL, o);
		text = mpc_out_finish(&w, NULL);
		if (text == NULL)
			abort(); /* success must come with an answer */
		free(text);
	}
	if (st != MP_OK && st != MP_ENOMEM && err.message[0] == '\0')
		abort(); /* every error says what is wrong */
	if (rq)
		mpc_observation_request_release(rq);
	free(rq);
	free(check);
	free(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *body;
	cJSON *doc = NULL;
	mp_error err = MP_ERROR_INIT;
	mp_status st;

	if (size < 1)
		return 0;
	body = malloc(size);
	if (body == NULL)
		return 0;
	memcpy(body, data + 1, size - 1);
	body[size - 1] = '\0';
	st = mpc_parse_body(body, size - 1, &doc, &err);
	if (st == MP_OK && (data[0] & 1)) {
		observation(doc);
	} else if (st == MP_OK) {
		mps_node_facts f;
		mpc_out w;
		char *text;

		st = mpc_node_decode(doc, "fuzz-node", &f, &err);
		if (st == MP_OK && mps_node_cache_put(cache, &f, 1000, NULL, &err) == MP_OK) {
			mpc_out_init(&w);
			mpc_node_write(&w, NULL, &f);
			text = mpc_out_finish(&w, NULL);
			if (text == NULL)
				abort();
			free(text);
		} else if (st != MP_OK && err.message[0] == '\0') {
			abort();
		}
	} else if (err.message[0] == '\0') {
		abort();
	}
	cJSON_Delete(doc);
	free(body);
	return 0;
}
