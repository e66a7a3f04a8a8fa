/*
 * fuzz_gguf.c: libFuzzer harness for the GGUF header reader (model/gguf.c) and what is built on it: arbitrary bytes
 * -> mpm_gguf_read (with and without a file size) -> mpm_gguf_to_model -> mpm_gguf_llamacpp -> llama.cpp's buffer
 * arithmetic. Any crash, sanitizer report or read past the buffer is a bug; a refusal must say why. The input is
 * copied into a buffer of exactly its size so that ASan sees any read beyond it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../model/gguf.h"
#include "../model/gguf_llamacpp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);
	mpm_gguf g;
	mp_error err = MP_ERROR_INIT;
	bool truncated;

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	for (int pass = 0; pass < 2; pass++) {
		mp_status st = mpm_gguf_read(buf, size, pass ? (uint64_t)size + 4096 : 0, "/model/gguf_header", &g,
					     &truncated, &err);
		if (st != MP_OK && err.message[0] == '\0')
			abort();
		if (st == MP_OK) {
			mp_model m;
			mp_llamacpp_params *p = calloc(1, sizeof(*p));
			mp_llamacpp_plan *pl = calloc(1, sizeof(*pl));
			mp_llamacpp_tensor *t = NULL;
			size_t nt = 0;
			memset(&err, 0, sizeof(err));
			if (mpm_gguf_to_model(&g, "/model/gguf_header", &m, &err) != MP_OK && err.message[0] == '\0')
				abort();
			memset(&err, 0, sizeof(err));
			if (p && pl && mpm_gguf_llamacpp(&g, "/model", p, &t, &nt, &err) == MP_OK) {
				p->n_ctx = 4096;
				p->n_seq_max = 1;
				p->type_k = p->type_v = MP_GGML_F16;
				p->mmap = true;
				p->kv_offload = true;
				p->n_devices = 1;
				p->n_gpu_layers = (int32_t)(size % 7);
				p->tensor_split[0] = 1;
				(void)mp_llamacpp_plan_buffers(p, t, nt, pl, &err);
			}
			free(t);
			free(p);
			free(pl);
		}
		mpm_gguf_free(&g);
		memset(&err, 0, sizeof(err));
	}
	free(buf);
	return 0;
}
