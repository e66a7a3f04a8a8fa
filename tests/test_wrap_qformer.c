/*
 * test_wrap_qformer.c: the wrappers of model/hf_wrap_qformer.c with their worked numbers (BLIP-2's EVA tower and
 * Q-Former, GOT-OCR 2's SAM tower and projector, DeepSeek-VL hybrid's two towers, Qianfan-OCR's InternViT; totals are tests/ref/hf/groundtruth.json's, transformers 5.24 on the
 * meta device) and the 422s of their bad configs, each naming its key. The ground-truth and variant tests
 * (test_models, test_inventory, test_inference) hold every case and variant name by name; these hold the arithmetic
 * and the refusals.
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
 * BLIP-2 (Blip2Config defaults: OPT-125m's decoder, tied by its own config). The tower: class token 1,408 + positions
 * 257 x 1,408 + patch convolution 1,408 x 3 x 14 x 14 + bias = 1,192,576; a block 25,250,176 (qkv 4,224 x 1,408 + bias,
 * projection 1,408^2 + bias, fc1 6,144 x 1,408 + bias, fc2 + bias, two LayerNorms) x 39; post_layernorm 2,816. The
 * Q-Former 105,137,664 (its final LayerNorm 1,536), query tokens 32 x 768, language_projection 768 x 768 + 768.
 */
static void test_blip2(void **state)
{
	mp_param_count pc;
	mp_model m;
	mp_error err = MP_ERROR_INIT;
	uint64_t kv;

	(void)state;
	assert_int_equal(count_text("{\"model_type\":\"blip-2\"}", &pc, &m, &err), MP_OK);
	assert_int_equal(pc.vision, UINT64_C(1192576) + UINT64_C(39) * 25250176 + 2816 + 105137664 + 32 * 768 +
	                                768 * 768 + 768);
	assert_int_equal(pc.vision, UINT64_C(1091705088));
	assert_int_equal(pc.total, UINT64_C(1216944384));
	assert_int_equal(pc.lm_head, 0); /* OPTConfig ties */
	/* the decoder's cache alone: 12 layers x K and V of 768 values, bf16, 4,096 tokens */
	assert_int_equal(mp_kv_cache_bytes(&m, MP_DTYPE_BF16, 4096, 1, &kv, &err), MP_OK);
	assert_int_equal(kv, UINT64_C(12) * 2 * 768 * 2 * 4096);
	/* InstructBLIP: the Q-Former's embeddings (30,522 + 512 positions, x 768, a LayerNorm) and text branch
	 * (intermediate and output, 4,723,968 a layer) replace its final LayerNorm */
	assert_int_equal(count_text("{\"model_type\":\"instructblip\"}", &pc, &m, &err), MP_OK);
	assert_int_equal(pc.total, UINT64_C(1216944384) - 1536 + (30522 + 512) * 768 + 1536 + UINT64_C(12) * 4723968);
	assert_int_equal(pc.total, UINT64_C(1297466112));
	/* a Llama decoder (InstructBLIP-Vicuna) under language_model.model., its own head language_model.lm_head */
	assert_int_equal(count_text("{\"model_type\":\"instructblip\",\"text_config\":{\"model_type\":\"llama\","
	                            "\"hidden_size\":64,\"intermediate_size\":128,\"num_hidden_layers\":2,"
	                            "\"num_attention_heads\":4,\"vocab_size\":100}}",
	                            &pc, &m, &err),
	                 MP_OK);
	assert_int_equal(pc.lm_head, 100 * 64);
	{
		char name[256];
		bool head = false;

		for (size_t i = 0; i < mp_inventory_size(&m.inv); i++) {
			mp_tensor_name(&m.inv, mp_inventory_at(&m.inv, i), name, sizeof(name));
			head |= strcmp(name, "language_model.lm_head.weight") == 0;
		}
		assert_true(head);
	}
}

/*
 * GOT-OCR 2 (GotOcr2Config: the SAM tower 89,670,912, the projector 512 x 256 x 9 + 1,024 x 512 x 9 + 1,024^2 + 1,024
 * = 6,947,840, Qwen2 of 1,024 wide and 24 layers, tied). text_config is required: the class's own Qwen2 defaults are
 * not Qwen2Config's.
 */
static void test_got_ocr2(void **state)
{
	mp_param_count pc;
	mp_model m;
	mp_error err = MP_ERROR_INIT;
	uint64_t kv;
	static const char cfg[] = "{\"model_type\":\"got_ocr2\",\"text_config\":{\"model_type\":\"qwen2\","
	                          "\"vocab_size\":151860,\"hidden_size\":1024,\"intermediate_size\":2816,"
	                          "\"num_hidden_layers\":24,\"num_attention_heads\":16,\"num_key_value_heads\":16}}";

	(void)state;
	assert_int_equal(count_text(cfg, &pc, &m, &err), MP_OK);
	assert_int_equal(pc.vision, UINT64_C(89670912) + 512 * 256 * 9 + 1024 * 512 * 9 + 1024 * 1024 + 1024);
	assert_int_equal(pc.total, UINT64_C(560528640));
	assert_int_equal(pc.lm_head, 0);
	/* 24 layers x K and V of 16 heads of 64, bf16, 4,096 tokens */
	assert_int_equal(mp_kv_cache_bytes(&m, MP_DTYPE_BF16, 4096, 1, &kv, &err), MP_OK);
	assert_int_equal(kv, UINT64_C(24) * 2 * 1024 * 2 * 4096);
}

/*
 * DeepSeek-VL hybrid (DeepseekVLHybridConfig defaults: Llama-2-7B's decoder, SigLIP-B/16 with its head, SAM-B): the
 * SAM tower as GOT-OCR 2's (89,670,912), its neck again (196,608 + 589,824 + 2 x 512 = 787,456), the projection
 * convolutions 512 x 256 x 9 + 1,024 x 512 x 9 = 5,898,240, alpha 1, SigLIP 92,884,224, the aligner 2,048 x 768 +
 * 2,048 x 1,024 + 4,096^2 + biases = 20,455,424.
 */
static void test_deepseek_vl_hybrid(void **state)
{
	mp_param_count pc;
	mp_model m;
	mp_error err = MP_ERROR_INIT;

	(void)state;
	assert_int_equal(count_text("{\"model_type\":\"deepseek_vl_hybrid\"}", &pc, &m, &err), MP_OK);
	assert_int_equal(pc.vision, UINT64_C(89670912) + 787456 + 5898240 + 1 + 92884224 +
	                                (2048 * 768 + 2048 + 2048 * 1024 + 2048 + 4096 * 4096 + 4096));
	assert_int_equal(pc.total, UINT64_C(6817039873));
}

/*
 * Qianfan-OCR (QianfanOCRConfig defaults: Qwen3Config's decoder, untied): InternViT-300M (cls token 1,024, positions
 * 1,025 x 1,024, patch convolution 1,024 x 3 x 14 x 14 + bias, 24 layers of 12,598,272: q/k/v/projection with biases,
 * fc1 and fc2, two LayerNorms, lambda_1 and lambda_2) = 304,012,288; the projector's LayerNorm over 4 x 1,024, linear_1
 * 4,096 -> 4,096 and linear_2, biased: 33,570,816.
 */
static void test_qianfan_ocr(void **state)
{
	mp_param_count pc;
	mp_model m;
	mp_error err = MP_ERROR_INIT;

	(void)state;
	assert_int_equal(count_text("{\"model_type\":\"qianfan_ocr\"}", &pc, &m, &err), MP_OK);
	assert_int_equal(pc.vision, UINT64_C(1024) + 1025 * 1024 + 1024 * 3 * 14 * 14 + 1024 + UINT64_C(24) * 12598272 +
	                                2 * 4096 + 2 * (4096 * 4096 + 4096));
	assert_int_equal(pc.vision, UINT64_C(304012288) + 33570816);
	assert_int_equal(pc.total, UINT64_C(12387044352));
	assert_int_equal(pc.lm_head, UINT64_C(151936) * 4096);
}

static void test_bad_configs(void **state)
{
	static const struct {
		const char *json, *field;
	} bad[] = {
	    /* Flan-T5 checkpoints: an encoder-decoder, not a decoder memplan reads */
	    {"{\"model_type\":\"blip-2\",\"text_config\":{\"model_type\":\"t5\"}}", "/model/hf_config/text_config/model_type"},
	    {"{\"model_type\":\"blip-2\",\"text_config\":5}", "/model/hf_config/text_config"},
	    {"{\"model_type\":\"blip-2\",\"vision_config\":{\"num_attention_heads\":7}}",
	     "/model/hf_config/vision_config/num_attention_heads"},
	    {"{\"model_type\":\"blip-2\",\"vision_config\":{\"patch_size\":300}}", "/model/hf_config/vision_config/patch_size"},
	    {"{\"model_type\":\"instructblip\",\"qformer_config\":{\"cross_attention_frequency\":0}}",
	     "/model/hf_config/qformer_config/cross_attention_frequency"},
	    {"{\"model_type\":\"instructblipvideo\",\"qformer_config\":{\"num_attention_heads\":5}}",
	     "/model/hf_config/qformer_config/num_attention_heads"},
	    {"{\"model_type\":\"blip-2\",\"qformer_config\":[1]}", "/model/hf_config/qformer_config"},
	    {"{\"model_type\":\"blip-2\",\"num_query_tokens\":0}", "/model/hf_config/num_query_tokens"},
	    {"{\"model_type\":\"got_ocr2\"}", "/model/hf_config/text_config"},
	    {"{\"model_type\":\"pp_chart2table\",\"text_config\":{\"model_type\":\"qwen2\"},"
	     "\"vision_config\":{\"global_attn_indexes\":\"all\"}}",
	     "/model/hf_config/vision_config/global_attn_indexes"},
	    {"{\"model_type\":\"got_ocr2\",\"text_config\":{\"model_type\":\"qwen2\"},\"vision_config\":{\"patch_size\":0}}",
	     "/model/hf_config/vision_config/patch_size"},
	    {"{\"model_type\":\"deepseek_vl_hybrid\",\"high_res_vision_config\":{\"global_attn_indexes\":[]}}",
	     "/model/hf_config/high_res_vision_config/global_attn_indexes"},
	    {"{\"model_type\":\"deepseek_vl_hybrid\",\"vision_config\":{\"model_type\":\"clip_vision_model\"}}",
	     "/model/hf_config/vision_config/model_type"},
	    {"{\"model_type\":\"deepseek_vl_hybrid\",\"high_res_vision_config\":{\"mlp_ratio\":0}}",
	     "/model/hf_config/high_res_vision_config/mlp_ratio"},
	    {"{\"model_type\":\"qianfan_ocr\",\"vision_config\":{\"norm_type\":\"batch_norm\"}}",
	     "/model/hf_config/vision_config/norm_type"},
	    {"{\"model_type\":\"qianfan_ocr\",\"vision_config\":{\"image_size\":[448]}}",
	     "/model/hf_config/vision_config/image_size"},
	    {"{\"model_type\":\"qianfan_ocr\",\"downsample_ratio\":2}", "/model/hf_config/downsample_ratio"},
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
	    cmocka_unit_test(test_blip2),
	    cmocka_unit_test(test_got_ocr2),
	    cmocka_unit_test(test_deepseek_vl_hybrid),
	    cmocka_unit_test(test_qianfan_ocr),
	    cmocka_unit_test(test_bad_configs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
