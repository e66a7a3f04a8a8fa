/*
 * test_wrap_vl.c: the wrappers of model/hf_wrap_vl.c with their worked numbers (LFM3-VL's conv and attention tower and
 * projector; totals are tests/ref/hf/groundtruth.json's, transformers 5.24 on the meta device) and the 422s of their
 * bad configs, each naming its key. The ground-truth and variant tests (test_models, test_inventory, test_inference)
 * hold every case and variant name by name; these hold the arithmetic and the refusals.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../model/model.h"

static mp_status count_text(const char *json, mp_param_count *pc, mp_model *m, mp_error *err)
{
	cJSON *cfg = cJSON_Parse(json);
	mp_status st;

	assert_non_null(cfg);
	st = mpm_from_hf(cfg, "/model/hf_config", m, err);
	if (st == MP_OK)
		st = mp_count_parameters(m, pc, err);
	cJSON_Delete(cfg);
	return st;
}

/*
 * LFM3-VL (Lfm3VlConfig defaults: LFM3's decoder, tied). The tower: 14 layers of norms 2 x 1,024 and SwiGLU 3 x 2,560 x
 * 1,024; 8 conv layers (0, 1 and the odd ones) of in_proj 3,072 x 1,024, out_proj 1,024^2 and a 3 x 3 depthwise kernel;
 * 6 attention layers of q and out 1,024^2, k and v 512 x 1,024, q_norm and k_norm of 64; patch_embed 1,536 x 1,024 and
 * embedding_norm 1,024: 164,206,336. The projector: a LayerNorm 2 x 1,024, linear_1 4,096 x 4,096 + 4,096, linear_2
 * 2,048 x 4,096 + 2,048: 25,174,016.
 */
static void test_lfm3_vl(void **state)
{
	mp_param_count pc;
	mp_model m;
	mp_error err = MP_ERROR_INIT;

	(void)state;
	assert_int_equal(count_text("{\"model_type\":\"lfm3_vl\"}", &pc, &m, &err), MP_OK);
	assert_int_equal(pc.vision, UINT64_C(14) * (2 * 1024 + 3 * 2560 * 1024) + UINT64_C(8) * (4 * 1024 * 1024 + 9 * 1024) +
	                                UINT64_C(6) * (2 * 1024 * 1024 + 2 * 512 * 1024 + 2 * 64) + 1536 * 1024 + 1024 +
	                                2 * 1024 + 4096 * 4096 + 4096 + 2048 * 4096 + 2048);
	assert_int_equal(pc.vision, UINT64_C(164206336) + UINT64_C(25174016));
	assert_int_equal(pc.total, UINT64_C(1918181888));
	assert_int_equal(pc.lm_head, 0);
	/* two attention layers, no projector biases, untied (lm_head 128,000 x 2,048) */
	assert_int_equal(count_text("{\"model_type\":\"lfm3_vl\",\"projector_bias\":false,\"tie_word_embeddings\":false,"
	                            "\"vision_config\":{\"layer_types\":[\"full_attention\",\"full_attention\"],"
	                            "\"num_hidden_layers\":2}}",
	                            &pc, &m, &err),
	                 MP_OK);
	assert_int_equal(pc.vision, UINT64_C(2) * (2 * 1024 + 3 * 2560 * 1024 + 2 * 1024 * 1024 + 2 * 512 * 1024 + 2 * 64) +
	                                1536 * 1024 + 1024 + 2 * 1024 + 4096 * 4096 + 2048 * 4096);
	assert_int_equal(pc.lm_head, UINT64_C(128000) * 2048);
}

static void test_bad_configs(void **state)
{
	static const struct {
		const char *json, *field;
	} bad[] = {
	    {"{\"model_type\":\"lfm3_vl\",\"vision_config\":{\"num_key_value_heads\":3}}",
	     "/model/hf_config/vision_config/num_key_value_heads"},
	    {"{\"model_type\":\"lfm3_vl\",\"vision_config\":{\"layer_types\":[\"conv\"]}}",
	     "/model/hf_config/vision_config/layer_types"},
	    {"{\"model_type\":\"lfm3_vl\",\"vision_config\":{\"num_hidden_layers\":1,\"layer_types\":[\"mamba\"]}}",
	     "/model/hf_config/vision_config/layer_types"},
	    {"{\"model_type\":\"lfm3_vl\",\"vision_config\":{\"num_attention_heads\":0}}",
	     "/model/hf_config/vision_config/num_attention_heads"},
	    {"{\"model_type\":\"lfm3_vl\",\"vision_config\":{\"conv_kernel_size\":0}}",
	     "/model/hf_config/vision_config/conv_kernel_size"},
	    {"{\"model_type\":\"lfm3_vl\",\"projector_hidden_size\":0}", "/model/hf_config/projector_hidden_size"},
	    {"{\"model_type\":\"lfm3_vl\",\"text_config\":{\"model_type\":\"t5\"}}", "/model/hf_config/text_config/model_type"},
	};
	mp_param_count pc;
	mp_model m;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		mp_error e = MP_ERROR_INIT;

		assert_int_equal(count_text(bad[i].json, &pc, &m, &e), MP_EINVAL);
		if (strcmp(e.field, bad[i].field) != 0)
			fail_msg("%s: error names %s (%s), want %s", bad[i].json, e.field, e.message, bad[i].field);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lfm3_vl),
	    cmocka_unit_test(test_bad_configs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
