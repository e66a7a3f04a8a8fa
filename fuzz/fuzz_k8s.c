/*
 * fuzz_k8s.c: libFuzzer harness for kube-scheduler's extender: ExtenderArgs parsing (mpc_parse_body), decoding (the
 * pod's annotations, a serving container's launch flags, the nodes' labels: text any pod owner writes), placement
 * against a store with the presets, and both answers printed. The first byte picks filter or prioritize; the rest
 * is the body. Any crash, sanitizer report or leak is a bug; an error must say what is wrong.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../codec/json.h"
#include "../codec/k8s.h"
#include "../service/k8s.h"

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
	mpc_json_init(NULL);
	if (mkdtemp(dir) == NULL)
		abort();
	snprintf(path, sizeof(path), "%s/fuzz.db", dir);
	if (mps_open(path, &svc, &err) != MP_OK) {
		fprintf(stderr, "fuzz_k8s: cannot open the store: %s\n", err.message);
		abort();
	}
	unlink(path);
	rmdir(dir);
	atexit(close_store);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	mps_k8s_policy policy = { (size & 2) != 0, 0.1, NULL, 0 };
	char *body;
	cJSON *doc = NULL, *out = NULL;
	mpc_k8s_args a;
	mps_k8s_result r;
	mp_error err = MP_ERROR_INIT;
	mp_status st;

	if (size < 1)
		return 0;
	body = malloc(size);
	if (body == NULL)
		return 0;
	memcpy(body, data + 1, size - 1);
	body[size - 1] = '\0';
	memset(&err, 0, sizeof(err));
	memset(&r, 0, sizeof(r));
	memset(&a, 0, sizeof(a));
	st = mpc_parse_body(body, size - 1, &doc, &err);
	if (st == MP_OK)
		st = mpc_k8s_args_decode(doc, &a, &err);
	if (st == MP_OK)
		st = mps_k8s_place(svc, &a.rq, &policy, &r, &err);
	if (st == MP_OK) {
		mpc_out w;

		mpc_out_init(&w);
		if (data[0] & 1)
			mpc_k8s_prioritize_write(&w, &a, &r);
		else
			mpc_k8s_filter_write(&w, &a, &r);
		out = mpc_out_parse(&w);
		if (out == NULL)
			abort(); /* success must come with an answer that parses */
	} else if (err.message[0] == '\0') {
		abort(); /* every error says what is wrong */
	}
	cJSON_Delete(out);
	mps_k8s_result_free(&r);
	mpc_k8s_args_free(&a);
	cJSON_Delete(doc);
	free(body);
	return 0;
}
