/*
 * fuzz_engine_log.c: libFuzzer harness for the readers of pasted engine logs and metrics (codec/mpc_engine_log.c, and
 * codec/mpc_llamacpp_log.c for llama.cpp's and Ollama's): the first byte picks the engine and log or metrics, the rest
 * is the text. Any crash or sanitizer report is a bug;
 * a text the reader refuses must say why (a message), and every figure it keeps must name a known figure and a
 * line of the text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../codec/codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static mps_engine_report r;
	static mps_llama_report lr;
	mp_engine e;
	bool metrics;
	char *text;
	mp_error err = MP_ERROR_INIT;
	mp_status st;

	if (size == 0)
		return 0;
	e = (mp_engine)(1 + (data[0] & 3) % 3); /* 0 vllm, 1 sglang, 2 trtllm */
	metrics = (data[0] & 0x80) != 0;
	text = malloc(size);
	if (text == NULL)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	memset(&err, 0, sizeof(err));
	st = mpc_engine_report_parse(e, text, metrics, "/log", &r, &err);
	if (st != MP_OK && err.message[0] == '\0')
		abort();
	for (size_t i = 0; st == MP_OK && i < r.nfigures; i++)
		if (r.figures[i].kind >= MPS_FIG_COUNT || r.figures[i].line == 0 || r.figures[i].line > r.lines)
			abort();
	/* the same text as llama.cpp's (or, bit 6, Ollama's) log */
	memset(&err, 0, sizeof(err));
	st = mpc_llama_report_parse((data[0] & 0x40) ? MP_ENGINE_OLLAMA : MP_ENGINE_LLAMACPP, text, "/log", &lr, &err);
	if (st != MP_OK && err.message[0] == '\0')
		abort();
	for (size_t i = 0; st == MP_OK && i < lr.n; i++)
		if (lr.figures[i].kind >= MPS_LF_COUNT || lr.figures[i].line == 0 || lr.figures[i].line > lr.lines ||
		    lr.figures[i].slot > MP_LLAMACPP_MAX_DEVICES)
			abort();
	free(text);
	return 0;
}
