/*
 * test_vq.c: the early-fusion models of model/hf_vq.c with their worked numbers (Chameleon's VQ-VAE encoder and its
 * decoder's per-head LayerNorms; Janus's tower, VQ-VAE and generation head) and IDEFICS's gated cross-attention
 * decoder (model/hf_mllama.c); totals are tests/ref/hf/groundtruth.json's, transformers 5.24 on the meta device. With
 * the 422s of their bad configs, each naming its key. The ground-truth and variant tests (test_models, test_inventory,
 * test_inference) hold every case and variant name by name; these hold the arithmetic and the refusals.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../model/model.h"
#include "count_util.h"

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

/*
 * Janus (JanusConfig defaults: Llama-2-7B's decoder shapes with vocabulary 32,000, tied; transformers 5.24 counts
 * 7,031,324,299). The understanding side 309,984,256: the tower 303,688,704 (patch convolution 1,024 x 3 x 16 x 16 +
 * bias, 576 positions, 24 blocks of 12,596,224 with projection_layer, post_layernorm) and the aligner 2,048 x 1,024 +
 * 2,048^2 with biases. The VQ-VAE: the encoder as Chameleon's with an attention block after each of the last level's
 * two blocks, an 8 x 16,384 codebook; the decoder from 256 latent channels: the middle, then the levels from last to
 * first with three blocks each (attention after the last level's), upsampling between them, conv_out to 3 channels.
 * The generation side: embeddings 16,384 x 8, the aligner 8 -> 2,048 -> 2,048, the head 2,048 -> 2,048 -> 16,384.
 */
static void test_janus(void **state)
{
	mp_param_count pc;
	mp_model m;
	mp_error err = MP_ERROR_INIT;
	uint64_t tower, aligner, enc, dec, gen;

	(void)state;
	assert_int_equal(count_text("{\"model_type\":\"janus\"}", &pc, &m, &err), MP_OK);
	tower = conv(1024, 3, 16) + 576 * 1024 +
	        24 * (4 * UINT64_C(1024) + 4 * (UINT64_C(1024) * 1024 + 1024) + 2 * UINT64_C(4096) * 1024 + 4096 + 1024) +
	        2 * 1024;
	aligner = 2048 * 1024 + 2048 + UINT64_C(2048) * 2048 + 2048;
	assert_int_equal(tower + aligner, UINT64_C(309984256));
	enc = conv(128, 3, 3) + 2 * (2 * resnet(128, 128) + conv(128, 128, 3)) +
	      (resnet(128, 256) + resnet(256, 256) + conv(256, 256, 3)) + (2 * resnet(256, 256) + conv(256, 256, 3)) +
	      (resnet(256, 512) + resnet(512, 512) + 2 * attn(512)) + 2 * resnet(512, 512) + attn(512) + 2 * 512 +
	      conv(256, 512, 3) + 16384 * 8 + conv(8, 256, 1) + conv(256, 8, 1);
	dec = conv(512, 256, 3) + 2 * resnet(512, 512) + attn(512) + (3 * resnet(512, 512) + 3 * attn(512) +
	                                                               conv(512, 512, 3)) +
	      (resnet(512, 256) + 2 * resnet(256, 256) + conv(256, 256, 3)) + (3 * resnet(256, 256) + conv(256, 256, 3)) +
	      (resnet(256, 128) + 2 * resnet(128, 128) + conv(128, 128, 3)) + 3 * resnet(128, 128) + 2 * 128 +
	      conv(3, 128, 3);
	gen = 16384 * 8 + (2048 * 8 + 2048) + (UINT64_C(2048) * 2048 + 2048) + (UINT64_C(2048) * 2048 + 2048) +
	      (UINT64_C(16384) * 2048 + 16384);
	assert_int_equal(pc.vision, tower + aligner + enc + dec + gen);
	assert_int_equal(pc.vision, UINT64_C(423980683));
	assert_int_equal(pc.lm_head, 0);
	assert_int_equal(pc.total, UINT64_C(7031324299));
}

/*
 * IDEFICS (IdeficsConfig defaults, model/hf_mllama.c; transformers 5.24 counts 12,670,461,504). The tower 328,193,536:
 * CLIP-style, 768 wide, 32 blocks of 10,235,648 (q, k, v, out_proj with biases, fc1 and fc2 of 5,120, two LayerNorms),
 * a patch convolution without bias, class token, 257 positions, pre and post LayerNorms. The decoder: 32 Llama layers
 * (4 x 4,096^2 + 3 x 11,008 x 4,096 + two RMSNorms) and 32 gated cross-attention layers (two gates of 1, q and o
 * 4,096^2, k and v 4,096 x 768, the same MLP, two RMSNorms); embeddings and lm_head 32,000 x 4,096 each.
 */
static void test_idefics(void **state)
{
	mp_param_count pc;
	mp_model m;
	mp_error err = MP_ERROR_INIT;
	uint64_t tower, layer, cross, kv;

	(void)state;
	assert_int_equal(count_text("{\"model_type\":\"idefics\"}", &pc, &m, &err), MP_OK);
	tower = 768 * 3 * 14 * 14 + 768 + 257 * 768 + 2 * 768 +
	        32 * (4 * (UINT64_C(768) * 768 + 768) + 5120 * 768 + 5120 + 768 * 5120 + 768 + 4 * 768) + 2 * 768;
	assert_int_equal(pc.vision, tower);
	assert_int_equal(tower, UINT64_C(328193536));
	layer = 4 * UINT64_C(4096) * 4096 + 3 * UINT64_C(11008) * 4096 + 2 * 4096;
	cross = 2 + 2 * UINT64_C(4096) * 4096 + 2 * UINT64_C(4096) * 768 + 3 * UINT64_C(11008) * 4096 + 2 * 4096;
	assert_int_equal(pc.total, tower + 32 * (layer + cross) + 4096 + 2 * UINT64_C(32000) * 4096);
	assert_int_equal(pc.total, UINT64_C(12670461504));
	/* the self-attention layers' K and V alone: 32 x 2 x 4,096 x 2 bytes a token */
	assert_int_equal(mp_kv_cache_bytes(&m, MP_DTYPE_BF16, 4096, 1, &kv, &err), MP_OK);
	assert_int_equal(kv, UINT64_C(32) * 2 * 4096 * 2 * 4096);
}

/*
 * Apertus 1.5 (Apertus1p5Config defaults): the Apertus 1.5 decoder 8,091,086,912 and two tokenizers. The vision one
 * (EMU3.5's VQGAN encoder as in Chameleon's, under model.vision_tokenizer.): conv_in 3 -> 256; stages of multipliers
 * (1, 1, 2, 2, 4) x 256, four blocks each, the last stage's blocks (resolution 256 / 16 = 16, in attn_resolutions)
 * each followed by an attention block, a strided downsample but after the last; the middle's two blocks of 1,024
 * around an attention block; norm_out, conv_out 1,024 -> 256; the codebook 131,072 x 256 as a linear and quant_conv
 * (no post_quant_conv): 218,153,984. The audio one (the WavTokenizer encoder under model.audio_tokenizer.): 8,303,104
 * parameters of weight-normed convolutions and a 2-layer LSTM of 512, and its codebook's buffers. Vision
 * 226,457,088, total 8,317,544,000 (transformers 5.24 builds as many).
 */
static void test_apertus1p5(void **state)
{
	mp_param_count pc;
	mp_model m;
	mp_error err = MP_ERROR_INIT;
	uint64_t vq;

	(void)state;
	assert_int_equal(count_text("{\"model_type\":\"apertus1p5\"}", &pc, &m, &err), MP_OK);
	vq = conv(256, 3, 3) + 2 * (4 * resnet(256, 256) + conv(256, 256, 3)) +
	     (resnet(256, 512) + 3 * resnet(512, 512) + conv(512, 512, 3)) + (4 * resnet(512, 512) + conv(512, 512, 3)) +
	     (resnet(512, 1024) + 3 * resnet(1024, 1024) + 4 * attn(1024)) + 2 * resnet(1024, 1024) + attn(1024) +
	     2 * 1024 + conv(256, 1024, 3) + UINT64_C(131072) * 256 + conv(256, 256, 1);
	assert_int_equal(vq, UINT64_C(218153984));
	assert_int_equal(pc.vision, vq + 8303104);
	assert_int_equal(pc.total, UINT64_C(8317544000));
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
	    /* the two code ranges follow each other inside the vocabulary (Apertus1p5Config.validate_architecture) */
	    {"{\"model_type\":\"apertus1p5\",\"image_token_offset\":0}", "/model/hf_config/audio_token_offset"},
	    {"{\"model_type\":\"apertus1p5\",\"text_config\":{\"vocab_size\":262400}}",
	     "/model/hf_config/audio_token_offset"},
	    {"{\"model_type\":\"apertus1p5\",\"audio_config\":{\"codebook_dim\":256}}",
	     "/model/hf_config/audio_config/codebook_dim"},
	    {"{\"model_type\":\"apertus1p5\",\"audio_config\":{\"model_type\":\"encodec\"}}",
	     "/model/hf_config/audio_config/model_type"},
	    {"{\"model_type\":\"janus\",\"vision_config\":{\"num_attention_heads\":3}}",
	     "/model/hf_config/vision_config/num_attention_heads"},
	    {"{\"model_type\":\"janus\",\"vision_config\":{\"image_size\":[384,384]}}",
	     "/model/hf_config/vision_config/image_size"},
	    {"{\"model_type\":\"janus\",\"vision_config\":{\"depth\":0}}", "/model/hf_config/vision_config/depth"},
	    {"{\"model_type\":\"idefics\",\"cross_layer_interval\":0}", "/model/hf_config/cross_layer_interval"},
	    {"{\"model_type\":\"idefics\",\"alpha_type\":\"matrix\"}", "/model/hf_config/alpha_type"},
	    {"{\"model_type\":\"idefics\",\"alpha_initializer\":\"xavier\"}", "/model/hf_config/alpha_initializer"},
	    {"{\"model_type\":\"idefics\",\"num_attention_heads\":5}", "/model/hf_config/num_attention_heads"},
	    {"{\"model_type\":\"idefics\",\"vision_config\":{\"embed_dim\":100}}",
	     "/model/hf_config/vision_config/num_attention_heads"},
	    {"{\"model_type\":\"idefics\",\"use_resampler\":true,\"perceiver_config\":{\"resampler_depth\":0}}",
	     "/model/hf_config/perceiver_config/resampler_depth"},
	    {"{\"model_type\":\"janus\",\"vq_config\":{\"base_channels\":100}}",
	     "/model/hf_config/vq_config/base_channels"},
	    {"{\"model_type\":\"janus\",\"vq_config\":{\"num_hidden_layers\":0}}",
	     "/model/hf_config/vq_config/num_hidden_layers"},
	    {"{\"model_type\":\"janus\",\"text_config\":{\"model_type\":\"llama\",\"num_attention_heads\":7}}",
	     "/model/hf_config/text_config/num_attention_heads"},
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
	    cmocka_unit_test(test_apertus1p5),
	    cmocka_unit_test(test_janus),
	    cmocka_unit_test(test_idefics),
	    cmocka_unit_test(test_bad_configs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
