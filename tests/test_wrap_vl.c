/*
 * test_wrap_vl.c: the wrappers of model/hf_wrap_vl.c with their worked numbers (LFM3-VL's conv and attention tower and
 * projector, Granite-Docling's connector; totals are tests/ref/hf/groundtruth.json's, transformers 5.24 on the meta device) and the 422s of their
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

/*
 * Granite-Docling (GraniteDoclingConfig defaults: its Granite decoder, tied). The SigLIP tower without a head 86,433,024
 * (12 layers of 7,087,872; patch convolution 768 x 3 x 16 x 16 + 768; 1,024 positions x 768; post_layernorm 1,536); the
 * connector 70,364,672: ln_in 1,536, the coarse path (scale 4: 1,024 x 12,288, three mergers of 13,658,112), the fine
 * one (scale 2: 1,024 x 3,072, three of 4,202,496), ln_mid and ln_out 2,048 each, mlp_fc2 1,024^2.
 */
static void test_granite_docling(void **state)
{
	mp_param_count pc;
	mp_model m;
	mp_error err = MP_ERROR_INIT;
	uint64_t kv;

	(void)state;
	assert_int_equal(count_text("{\"model_type\":\"granite_docling\"}", &pc, &m, &err), MP_OK);
	assert_int_equal(UINT64_C(12) * 7087872 + 768 * 3 * 256 + 768 + 1024 * 768 + 1536, UINT64_C(86433024));
	assert_int_equal(UINT64_C(1536) + 1024 * 12288 + 3 * UINT64_C(13658112) + 1024 * 3072 + 3 * UINT64_C(4202496) +
	                     2 * 2048 + 1024 * 1024,
	                 UINT64_C(70364672));
	assert_int_equal(pc.vision, UINT64_C(86433024) + UINT64_C(70364672));
	assert_int_equal(pc.total, UINT64_C(543428352));
	assert_int_equal(pc.embedding, UINT64_C(133800) * 1024);
	/* the decoder's cache alone: 28 layers x K and V of 4 heads x 64, bf16, 4,096 tokens */
	assert_int_equal(mp_kv_cache_bytes(&m, MP_DTYPE_BF16, 4096, 1, &kv, &err), MP_OK);
	assert_int_equal(kv, UINT64_C(28) * 2 * 256 * 2 * 4096);
	/* no fine route, one DeepStack tap: the coarse path alone with one merger */
	assert_int_equal(count_text("{\"model_type\":\"granite_docling\",\"vision_config\":{\"use_fine_route\":false,"
	                            "\"deepstack_visual_indexes\":[5]}}",
	                            &pc, &m, &err),
	                 MP_OK);
	assert_int_equal(pc.vision, UINT64_C(86433024) + 1536 + 1024 * 12288 + 13658112 + 2 * 2048 + 1024 * 1024);
	/* the density router of 64: att 768 + 1, a LayerNorm 1,536, fc1 64 x 768 + 64, fc2 64 + 1 */
	assert_int_equal(count_text("{\"model_type\":\"granite_docling\",\"density_router_hidden_size\":64}", &pc, &m, &err),
	                 MP_OK);
	assert_int_equal(pc.vision, UINT64_C(86433024) + 70364672 + 769 + 1536 + 64 * 768 + 64 + 65);
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
	    /* validate_architecture: the connector's output is the decoder's width */
	    {"{\"model_type\":\"granite_docling\",\"vision_config\":{\"out_hidden_size\":512}}",
	     "/model/hf_config/vision_config/out_hidden_size"},
	    {"{\"model_type\":\"granite_docling\",\"vision_config\":{\"scale_factor\":1}}",
	     "/model/hf_config/vision_config/scale_factor"},
	    {"{\"model_type\":\"granite_docling\",\"vision_config\":{\"num_attention_heads\":7}}",
	     "/model/hf_config/vision_config/num_attention_heads"},
	    {"{\"model_type\":\"granite_docling\",\"vision_config\":{\"use_fine_route\":false},"
	     "\"density_router_hidden_size\":64}",
	     "/model/hf_config/density_router_hidden_size"},
	    {"{\"model_type\":\"granite_docling\",\"vision_config\":{\"deepstack_visual_indexes\":3}}",
	     "/model/hf_config/vision_config/deepstack_visual_indexes"},
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
	    cmocka_unit_test(test_granite_docling),
	    cmocka_unit_test(test_bad_configs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
