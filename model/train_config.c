/*
 * train_config.c: dropout and activation details of a Hugging Face config for the training plan (see
 * model.h). Reads keys only; defaults per model type follow transformers' configuration classes.
 */
#include <string.h>

#include "model.h"

/* The first of the alias keys that is a number, or dflt. */
static double number(const cJSON *cfg, const char *const *keys, double dflt)
{
	for (; *keys; keys++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(cfg, *keys);

		if (cJSON_IsNumber(v))
			return v->valuedouble;
	}
	return dflt;
}

static const char *string(const cJSON *cfg, const char *const *keys, const char *dflt)
{
	for (; *keys; keys++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(cfg, *keys);

		if (cJSON_IsString(v))
			return v->valuestring;
	}
	return dflt;
}

#define KEYS(...) ((const char *const[]){ __VA_ARGS__, NULL })

void mpm_training_extras(const cJSON *cfg, mp_model *m)
{
	bool gpt2 = strcmp(m->model_type, "gpt2") == 0;
	double d = gpt2 ? 0.1 : 0.0;
	const char *act;

	m->attention_dropout = number(cfg, KEYS("attn_pdrop", "attention_dropout", "attention_probs_dropout_prob"), d) > 0;
	m->hidden_dropout = number(cfg, KEYS("resid_pdrop", "hidden_dropout", "hidden_dropout_prob", "resid_dropout"), d) > 0;
	m->embedding_dropout = number(cfg, KEYS("embd_pdrop", "embedding_dropout", "embed_dropout"), d) > 0;
	act = string(cfg, KEYS("activation_function", "hidden_act", "hidden_activation"), gpt2 ? "gelu_new" : "silu");
	/* transformers/activations.py: "gelu_new" is NewGELUActivation, written as elementwise tensor ops. */
	m->composite_activation = strcmp(act, "gelu_new") == 0;
}
