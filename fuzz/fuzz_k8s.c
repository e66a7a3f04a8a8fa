/*
 * fuzz_k8s.c: libFuzzer harness for kube-scheduler's extender: ExtenderArgs parsing (mpc_parse_body), decoding (the
 * pod's annotations, a serving container's launch flags, the nodes' labels: text any pod owner writes), placement
 * against a store with the presets, and both answers printed. The same body is also read as the daemon reads it, as
 * it streams (codec/mpc_k8s_stream.h), in chunks whose size the first byte picks: what the tree decoder takes the stream
 * decoder takes too (or refuses past a limit), with the same nodes and the same pod. The first byte picks filter or
 * prioritize; the rest is the body. Any crash, sanitizer report or leak is a bug; an error must say what is wrong.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../codec/mpc_json.h"
#include "../codec/mpc_k8s.h"
#include "../codec/mpc_k8s_stream.h"
#include "../service/mps_k8s.h"

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
	{ /* the stream decoder, fed in chunks of 1 to 64 bytes */
		mpc_k8s_limits lim;
		mpc_k8s_stream *ks;
		mpc_k8s_args b;
		mp_error e2 = MP_ERROR_INIT;
		size_t chunk = 1 + (data[0] >> 2), len = size - 1;
		mp_status s2 = MP_OK;
		bool tree_ok = doc && a.rq.nodes != NULL;

		mpc_k8s_limits_default(&lim);
		ks = mpc_k8s_stream_new(&lim, (data[0] & 1) == 0);
		if (ks == NULL)
			abort();
		for (size_t at = 0; at < len && s2 == MP_OK; at += chunk)
			s2 = mpc_k8s_stream_feed(ks, body + at, len - at < chunk ? len - at : chunk, &e2);
		if (s2 == MP_OK)
			s2 = mpc_k8s_stream_finish(ks, &b, &e2);
		mpc_k8s_stream_free(ks);
		if (s2 != MP_OK && e2.message[0] == '\0')
			abort(); /* every error says what is wrong */
		/* a body the tree decoder takes, the stream decoder takes, but where cJSON is lenient about JSON's syntax
		 * (a raw control character in a string, numbers such as 01, +1 or 1.) and yajl is not (400), or past a
		 * limit (413) */
		if (tree_ok && s2 != MP_OK && s2 != MP_ETOOLARGE && s2 != MP_ENOMEM && s2 != MP_EPARSE)
			abort();
		if (tree_ok && s2 == MP_OK) {
			if (b.rq.nnodes != a.rq.nnodes || b.nodes_given != a.nodes_given || b.rq.names_only != a.rq.names_only ||
			    b.rq.pod.state != a.rq.pod.state || b.rq.pod.gpus != a.rq.pod.gpus ||
			    strcmp(b.rq.pod.error, a.rq.pod.error) != 0)
				abort();
			for (size_t i = 0; i < a.rq.nnodes; i++)
				if (memcmp(&a.rq.nodes[i], &b.rq.nodes[i], sizeof(a.rq.nodes[i])) != 0)
					abort(); /* the same node, byte for byte */
		}
		if (s2 == MP_OK)
			mpc_k8s_args_free(&b);
	}
	cJSON_Delete(out);
	mps_k8s_result_free(&r);
	mpc_k8s_args_free(&a);
	cJSON_Delete(doc);
	free(body);
	return 0;
}
