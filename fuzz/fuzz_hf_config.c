/*
 * fuzz_hf_config.c: libFuzzer harness for the Hugging Face config.json parser (daemon/hf_config.c) and the
 * parameter count behind it: arbitrary bytes -> cJSON -> mpm_from_hf -> mp_count_parameters, plus
 * the store's counting callback on the same text. Any crash or sanitizer report is a bug; an accepted
 * config must count without error or fail with a message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	cJSON *cfg;
	mp_model m;
	mp_param_count pc;
	mp_error err = MP_ERROR_INIT;

	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	cfg = cJSON_ParseWithLength(text, size);
	memset(&err, 0, sizeof(err));
	if (cfg && mpm_from_hf(cfg, "/model/hf_config", &m, &err) == MP_OK) {
		if (mp_count_parameters(&m, &pc, &err) != MP_OK && err.message[0] == '\0')
			abort();
	} else if (cfg && err.message[0] == '\0') {
		abort();
	}
	memset(&err, 0, sizeof(err));
	/* the text path the service reads stored configs through */
	if (mpm_from_hf_text(text, "/model", &m, &err) != MP_OK && err.message[0] == '\0')
		abort();
	cJSON_Delete(cfg);
	free(text);
	return 0;
}
