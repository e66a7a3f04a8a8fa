/*
 * fuzz_safetensors.c: libFuzzer harness for the safetensors header reader (model/safetensors.c): arbitrary bytes as a
 * shard's first bytes (the 8-byte length and the JSON header), read alone and then as a second shard after the first,
 * and the tensor-name match of what it accepts. Any crash, sanitizer report or read past the buffer is a bug; a
 * refusal must say why. The input is copied into a buffer of exactly its size so that ASan sees any read beyond it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../model/model.h"
#include "../model/safetensors.h"
#include "../model/tensor_names.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);
	mpm_st st = { 0 };
	mp_error err = MP_ERROR_INIT;

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	for (uint32_t shard = 0; shard < 2; shard++) {
		mp_status rc = mpm_st_read(buf, size, shard ? (uint64_t)size : 0, shard, "/model/safetensors_headers/0",
					   &st, &err);
		if (rc != MP_OK && err.message[0] == '\0')
			abort();
		memset(&err, 0, sizeof(err));
	}
	if (st.n_tensors > 0) {
		mpm_named_tensor *nt = calloc(st.n_tensors, sizeof(*nt));
		mp_model m;
		mpm_match mt;
		if (nt != NULL &&
		    mpm_from_hf_text("{\"model_type\": \"llama\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
				     "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 256}",
				     "/model", &m, &err) == MP_OK) {
			for (size_t i = 0; i < st.n_tensors; i++) {
				nt[i].name = st.tensors[i].name;
				nt[i].values = st.tensors[i].values;
				nt[i].bytes = st.tensors[i].bytes;
				nt[i].aux = st.tensors[i].aux;
			}
			(void)mpm_match_tensors(nt, st.n_tensors, MPM_NAMING_HF, &m, MP_LAYOUT_PACKED, &mt, &err);
		}
		free(nt);
	}
	mpm_st_free(&st);
	free(buf);
	return 0;
}
