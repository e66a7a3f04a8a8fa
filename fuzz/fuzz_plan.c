/*
 * fuzz_plan.c: libFuzzer harness for the request path of POST /v1/plan/inference, /v1/plan/training and
 * /v1/engine-check:
 * body parsing (mpc_parse_body), field-table decoding, model resolution (stored ids, inline hf_config,
 * bare counts), the planner and the response document. The first byte picks the endpoint (bit 1: engine-check,
 * else bit 0: training, else inference); the rest is the
 * body. A store with the presets is opened once in a temporary folder. Any crash, sanitizer report or
 * leak is a bug; a document returned without an error must print.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../codec/mpc_json.h"
#include "../tests/lib_util.h"

static mps_service *svc;

static void close_store(void)
{
	mps_close(svc);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char dir[] = "/tmp/memplan-fuzz-XXXXXX", path[64];
	mp_error err = MP_ERROR_INIT;

	(void)argc;
	(void)argv;
	if (mkdtemp(dir) == NULL)
		abort();
	snprintf(path, sizeof(path), "%s/fuzz.db", dir);
	if (mps_open(path, &svc, &err) != MP_OK) {
		fprintf(stderr, "fuzz_plan: cannot open the store: %s\n", err.message);
		abort();
	}
	/* the store reads the file it opened; remove its name so runs leave nothing behind */
	unlink(path);
	rmdir(dir);
	atexit(close_store);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *body, *out = NULL;
	cJSON *doc = NULL;
	mp_error err = MP_ERROR_INIT;
	mp_status st;

	if (size < 1)
		return 0;
	body = malloc(size);	/* size - 1 bytes of body and its NUL */
	if (body == NULL)
		return 0;
	memcpy(body, data + 1, size - 1);
	body[size - 1] = '\0';
	memset(&err, 0, sizeof(err));
	st = mpc_parse_body(body, size - 1, &doc, &err);
	if (st == MP_OK)
		st = lib_answer(svc, (data[0] & 2) ? "engine-check" : (data[0] & 1) ? "training" : "inference", doc, &out,
				&err);
	if (st == MP_OK) {
		cJSON *parsed = out ? cJSON_Parse(out) : NULL;

		if (parsed == NULL)
			abort();	/* success must come with a document that parses */
		cJSON_Delete(parsed);
	} else if (err.message[0] == '\0') {
		abort();	/* every error says what is wrong */
	}
	free(out);
	cJSON_Delete(doc);
	free(body);
	return 0;
}
