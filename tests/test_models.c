/*
 * test_models.c: the Hugging Face config adapter and the planner together: every config file of
 * ../shared/models gives exactly the parameter count of parameter_counts.json (PyTorch's count of the
 * transformers model built from it), and model-type defaults and key checks behave as transformers does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../daemon/hf_config.h"
#include "refs.h"

static mp_status count_text(const char *json, mp_param_count *pc, mp_model *m, mp_error *err)
{
	cJSON *cfg = cJSON_Parse(json);
	mp_status st;

	assert_non_null(cfg);
	st = mpd_model_from_hf(cfg, "/model/hf_config", m, err);
	if (st == MP_OK)
		st = mp_count_parameters(m, pc, err);
	cJSON_Delete(cfg);
	return st;
}

static void test_every_shared_model_exact(void **state)
{
	cJSON *counts = ref_json("models/parameter_counts.json"), *c;
	int n = 0;

	(void)state;
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(counts, "models"))
	{
		char rel[128];
		char *text;
		mp_param_count pc;
		mp_model m;
		mp_error err;

		snprintf(rel, sizeof(rel), "models/%s.json", c->string);
		text = ref_text(rel);
		if (count_text(text, &pc, &m, &err) != MP_OK)
			fail_msg("%s: %s: %s", c->string, err.field, err.message);
		if ((double)pc.total != cJSON_GetObjectItem(c, "total")->valuedouble)
			fail_msg("%s: counted %llu, reference %.0f", c->string, (unsigned long long)pc.total,
				 cJSON_GetObjectItem(c, "total")->valuedouble);
		assert_true((double)pc.embedding == cJSON_GetObjectItem(c, "embedding")->valuedouble);
		assert_int_equal(m.tie_word_embeddings, cJSON_IsTrue(cJSON_GetObjectItem(c, "tied")));
		assert_int_equal(pc.lm_head == 0, m.tie_word_embeddings);
		free(text);
		n++;
	}
	assert_int_equal(n, 10);
	cJSON_Delete(counts);
}

/* Mixtral: total vs active parameters (top-2 of 8 experts). */
static void test_mixtral_active(void **state)
{
	char *text = ref_text("models/mixtral-8x7b.json");
	mp_param_count pc;
	mp_model m;
	mp_error err;

	(void)state;
	assert_int_equal(count_text(text, &pc, &m, &err), MP_OK);
	/* active = total - 6 of 8 experts per layer: 46,702,792,704 - 32 x 6 x 176,160,768 */
	assert_int_equal(pc.active_per_token, UINT64_C(46702792704) - UINT64_C(32) * 6 * UINT64_C(176160768));
	free(text);
}

/* Keys left out take LlamaConfig's defaults (a bare llama config is Llama-2-7B-shaped but for the
 * 2048-position default): 6,738,415,616 parameters. */
static void test_llama_defaults(void **state)
{
	mp_param_count pc;
	mp_model m;
	mp_error err;

	(void)state;
	assert_int_equal(count_text("{\"model_type\": \"llama\"}", &pc, &m, &err), MP_OK);
	assert_int_equal(pc.total, UINT64_C(6738415616));
	assert_int_equal(m.max_position_embeddings, 2048);
	assert_false(m.tie_word_embeddings);
	/* gemma ties by default, llama does not */
	assert_int_equal(count_text("{\"model_type\": \"gemma\"}", &pc, &m, &err), MP_OK);
	assert_true(m.tie_word_embeddings);
}

static void test_config_errors(void **state)
{
	mp_param_count pc;
	mp_model m;
	mp_error err;

	(void)state;
	/* hidden not divisible by heads with implicit head_dim: rejected, naming the key */
	assert_int_equal(count_text("{\"model_type\":\"llama\",\"hidden_size\":4000,\"num_attention_heads\":48}", &pc,
				    &m, &err),
			 MP_EINVAL);
	assert_string_equal(err.field, "/model/hf_config/num_attention_heads");
	/* ... but accepted when head_dim is explicit */
	assert_int_equal(count_text("{\"model_type\":\"llama\",\"hidden_size\":4000,\"num_attention_heads\":48,"
				    "\"num_key_value_heads\":8,\"head_dim\":128}",
				    &pc, &m, &err),
			 MP_OK);
	assert_int_equal(count_text("{\"model_type\":\"llama\",\"num_key_value_heads\":5}", &pc, &m, &err), MP_EINVAL);
	assert_string_equal(err.field, "/model/num_key_value_heads");
	assert_int_equal(count_text("{\"model_type\":\"llama\",\"vocab_size\":\"big\"}", &pc, &m, &err), MP_EINVAL);
	assert_string_equal(err.field, "/model/hf_config/vocab_size");
	assert_int_equal(count_text("{\"model_type\":\"no_such_type\"}", &pc, &m, &err), MP_EUNSUPPORTED);
	assert_string_equal(err.field, "/model/hf_config/model_type");
	assert_int_equal(count_text("{\"hidden_size\":4096}", &pc, &m, &err), MP_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_shared_model_exact),
		cmocka_unit_test(test_mixtral_active),
		cmocka_unit_test(test_llama_defaults),
		cmocka_unit_test(test_config_errors),
	};

	return cmocka_run_group_tests_name("models", tests, NULL, NULL);
}
