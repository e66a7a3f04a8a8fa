/*
 * test_vq.c: the early-fusion models of model/hf_vq.c with their worked numbers (Chameleon's VQ-VAE encoder and its
 * decoder's per-head LayerNorms; totals are tests/ref/hf/groundtruth.json's, transformers 5.24 on the meta device)
 * and the 422s of their bad configs, each naming its key. The ground-truth and variant tests (test_models,
 * test_inventory, test_inference) hold every case and variant name by name; these hold the arithmetic and the
 * refusals.
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

/* A 3x3 (or k x k) convolution in -> out with its bias; a ResNet block (two GroupNorms, two 3x3 convolutions, a 1x1
 * shortcut when the widths differ); an attention block (a GroupNorm, q, k, v, proj_out 1x1). */
static uint64_t conv(uint64_t out, uint64_t in, uint64_t k)
{
	return out * in * k * k + out;
}

static uint64_t resnet(uint64_t in, uint64_t out)
{
	return 2 * in + conv(out, in, 3) + 2 * out + conv(out, out, 3) + (in != out ? conv(out, in, 1) : 0);
}

static uint64_t attn(uint64_t c)
{
	return 2 * c + 4 * conv(c, c, 1);
}

/*
 * Chameleon with a vocabulary_map (tools/groundtruth/configs/chameleon-vocabulary-map-variant.json; transformers 5.24
 * counts 7,043,090,432; without the map it builds nothing and memplan answers a 422 naming vocabulary_map). The
 * VQ-VAE encoder 29,423,616: conv_in 3 -> 128; levels of multipliers (1, 1, 2, 2, 4) x 128, two blocks each and a
 * strided 3x3 downsample but after the last; the middle's two blocks of 512 around an attention block; norm_out,
 * conv_out 512 -> 256; the codebook 8,192 x 256 and the two 1x1 quant convolutions. The decoder: Llama-2-7B's shapes
 * (vocabulary 65,536, untied) with q_norm and k_norm of [32, 128] weights and biases: 16,384 a layer.
 */
static void test_chameleon(void **state)
{
	mp_param_count pc;
	mp_model m;
	mp_error err = MP_ERROR_INIT;
	uint64_t vq, kv;
	static const char cfg[] = "{\"model_type\":\"chameleon\",\"vocabulary_map\":{\"<image>\":8711,\"IMGIMGAZ\":4}}";

	(void)state;
	assert_int_equal(count_text("{\"model_type\":\"chameleon\"}", &pc, &m, &err), MP_EINVAL);
	assert_string_equal(err.field, "/model/hf_config/vocabulary_map");
	assert_int_equal(count_text(cfg, &pc, &m, &err), MP_OK);
	vq = conv(128, 3, 3) + 2 * (2 * resnet(128, 128) + conv(128, 128, 3)) +
	     (resnet(128, 256) + resnet(256, 256) + conv(256, 256, 3)) + (2 * resnet(256, 256) + conv(256, 256, 3)) +
	     (resnet(256, 512) + resnet(512, 512)) + 2 * resnet(512, 512) + attn(512) + 2 * 512 + conv(256, 512, 3) +
	     8192 * 256 + 2 * conv(256, 256, 1);
	assert_int_equal(vq, UINT64_C(29423616));
	assert_int_equal(pc.vision, vq);
	assert_int_equal(pc.attention, 32 * (4 * UINT64_C(4096) * 4096 + 4 * 32 * 128));
	assert_int_equal(pc.total, UINT64_C(7043090432));
	/* 32 layers x K and V of 32 heads of 128, bf16, 4,096 tokens */
	assert_int_equal(mp_kv_cache_bytes(&m, MP_DTYPE_BF16, 4096, 1, &kv, &err), MP_OK);
	assert_int_equal(kv, UINT64_C(32) * 2 * 4096 * 2 * 4096);
}

static void test_bad_configs(void **state)
{
	static const struct {
		const char *json, *field;
	} bad[] = {
	    {"{\"model_type\":\"chameleon\",\"vocabulary_map\":[1]}", "/model/hf_config/vocabulary_map"},
	    {"{\"model_type\":\"chameleon\",\"vocabulary_map\":{},\"num_attention_heads\":24}",
	     "/model/hf_config/num_attention_heads"},
	    {"{\"model_type\":\"chameleon\",\"vocabulary_map\":{},\"vq_config\":{\"base_channels\":48}}",
	     "/model/hf_config/vq_config/base_channels"},
	    {"{\"model_type\":\"chameleon\",\"vocabulary_map\":{},\"vq_config\":{\"channel_multiplier\":[]}}",
	     "/model/hf_config/vq_config/channel_multiplier"},
	    {"{\"model_type\":\"chameleon\",\"vocabulary_map\":{},\"vq_config\":{\"attn_resolutions\":32}}",
	     "/model/hf_config/vq_config/attn_resolutions"},
	    {"{\"model_type\":\"chameleon\",\"vocabulary_map\":{},\"vq_config\":{\"num_res_blocks\":0}}",
	     "/model/hf_config/vq_config/num_res_blocks"},
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
	    cmocka_unit_test(test_chameleon),
	    cmocka_unit_test(test_bad_configs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
