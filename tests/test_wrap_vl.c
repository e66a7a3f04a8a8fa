/*
 * test_wrap_vl.c: the wrappers of model/hf_wrap_vl.c with their worked numbers (LFM3-VL's conv and attention tower and
 * projector, Granite-Docling's connector, FastVLM's timm tower and projector, HunyuanOCR's tower and merger, Molmo2's
 * tower and adapter, Kosmos-2's and Kosmos-2.5's decoders, towers and projections; totals are tests/ref/hf/groundtruth.json's, transformers 5.24 on the meta device) and the 422s of their
 * bad configs, each naming its key. The ground-truth and variant tests (test_models, test_inventory, test_inference)
 * hold every case and variant name by name; these hold the arithmetic and the refusals.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../model/model.h"
#include "count_util.h"

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

/*
 * FastVLM (FastVlmConfig defaults: Qwen2 of the SubConfigSpec's init_kwargs, 3,584 wide over 152,128 tokens, untied):
 * timm's fastvit_mci3 122,714,208 (the generated table) and the projector 3,584 x 3,072 + 3,584^2 + 2 x 3,584 =
 * 23,862,272.
 */
static void test_fast_vlm(void **state)
{
	mp_param_count pc;
	mp_model m;
	mp_error err = MP_ERROR_INIT;

	(void)state;
	assert_int_equal(count_text("{\"model_type\":\"fast_vlm\"}", &pc, &m, &err), MP_OK);
	assert_int_equal(pc.vision, UINT64_C(122714208) + 3584 * 3072 + 3584 * 3584 + 2 * 3584);
	assert_int_equal(pc.total, UINT64_C(7762651744));
	assert_int_equal(pc.lm_head, UINT64_C(152128) * 3584);
	/* a text_config of its own takes Qwen2Config's defaults for what it leaves out (4,096 wide, 151,936 tokens); a
	 * text_config that ties ties the wrapper (__post_init__); no projector biases */
	assert_int_equal(count_text("{\"model_type\":\"fast_vlm\",\"multimodal_projector_bias\":false,"
	                            "\"text_config\":{\"model_type\":\"qwen2\",\"tie_word_embeddings\":true}}",
	                            &pc, &m, &err),
	                 MP_OK);
	assert_int_equal(pc.lm_head, 0);
	assert_int_equal(pc.embedding, UINT64_C(151936) * 4096);
	assert_int_equal(pc.vision, UINT64_C(122714208) + 4096 * 3072 + 4096 * 4096);
}

/*
 * Perception LM (tools/groundtruth/configs/perception-lm-pe-core-large-variant.json: PerceptionLMConfig's defaults,
 * Llama's 4,096-wide decoder over 32,000 tokens, untied, with timm's vit_pe_core_large_patch14_336 and model_args
 * {"embed_dim": 1024}): the tower 316,102,656 (the generated table) and the projector 4,096 x 1,024 + 4,096^2 +
 * 2 x 4,096 = 20,979,712; 7,075,497,984 in all (transformers 5.24, tests/ref/hf/groundtruth.json).
 */
static void test_perception_lm(void **state)
{
	mp_param_count pc;
	mp_model m;
	mp_error err = MP_ERROR_INIT;
	const char *tower = "\"vision_config\":{\"model_type\":\"timm_wrapper\",\"architecture\":"
	                    "\"vit_pe_core_large_patch14_336\",\"model_args\":{\"embed_dim\":1024}}";
	char cfg[512];

	(void)state;
	snprintf(cfg, sizeof(cfg), "{\"model_type\":\"perception_lm\",%s}", tower);
	assert_int_equal(count_text(cfg, &pc, &m, &err), MP_OK);
	assert_int_equal(pc.vision, UINT64_C(316102656) + 4096 * 1024 + 4096 * 4096 + 2 * 4096);
	assert_int_equal(pc.total, UINT64_C(7075497984));
	assert_int_equal(pc.lm_head, UINT64_C(32000) * 4096);
	/* a text_config that ties ties the wrapper when the wrapper says nothing (__post_init__); pooling holds nothing */
	snprintf(cfg, sizeof(cfg),
	         "{\"model_type\":\"perception_lm\",\"projector_pooling_ratio\":2,\"text_config\":{\"model_type\":"
	         "\"llama\",\"hidden_size\":2048,\"tie_word_embeddings\":true},%s}",
	         tower);
	assert_int_equal(count_text(cfg, &pc, &m, &err), MP_OK);
	assert_int_equal(pc.lm_head, 0);
	assert_int_equal(pc.vision, UINT64_C(316102656) + 2048 * 1024 + 2048 * 2048 + 2 * 2048);
}

/*
 * HunyuanOCR (HunYuanVLConfig defaults with head_dim 128, tests/ref/hf/configs/hunyuan-vl-head-dim-variant.json): the
 * tower 27 layers of 15,239,504, the patch convolution 1,152 x 3 x 16 x 16 + 1,152, 16,385 positions x 1,152:
 * 431,228,016; the merger 40,141,184 (proj_conv 2,304 x 1,152 x 2 x 2 + 2,304, proj_out 4,608 x 2,304 + 4,608, mlp
 * 4,096 x 4,608 + 4,096, image_newline 4,608, three markers and after_rms of 4,096, before_rms 1,152); tied.
 */
static void test_hunyuan_vl(void **state)
{
	mp_param_count pc;
	mp_model m;
	mp_error err = MP_ERROR_INIT;

	(void)state;
	assert_int_equal(count_text("{\"model_type\":\"hunyuan_vl\",\"text_config\":{\"head_dim\":128}}", &pc, &m, &err),
	                 MP_OK);
	assert_int_equal(UINT64_C(27) * 15239504 + 1152 * 3 * 256 + 1152 + 16385 * 1152, UINT64_C(431228016));
	assert_int_equal(pc.vision, UINT64_C(431228016) + 2304 * 1152 * 4 + 2304 + 4608 * 2304 + 4608 + 4096 * 4608 + 4096 +
	                                4608 + 4 * 4096 + 1152);
	assert_int_equal(pc.total, UINT64_C(8139351536));
	assert_int_equal(pc.lm_head, 0);
	/* a flat checkpoint (the decoder's keys at the top, attention_head_dim head_dim's other spelling) reads the same;
	 * its top tie_word_embeddings is the wrapper's, and the decoder's default ties */
	assert_int_equal(count_text("{\"model_type\":\"hunyuan_vl\",\"attention_head_dim\":128,\"tie_word_embeddings\":false}",
	                            &pc, &m, &err),
	                 MP_OK);
	assert_int_equal(pc.total, UINT64_C(8139351536));
}

/*
 * Molmo2 (Molmo2Config defaults, never tied): the decoder's embed_tokens (151,936 + 128) x 4,096 and lm_head 151,936 x
 * 4,096; the tower 729 positions x 1,152, patch_embedding 1,152 x 588 + 1,152, 25 layers of 15,239,504 (LayerNorms 4 x
 * 1,152, q/k/v/o 1,152^2 + 1,152 each, fc1 and fc2 4,304 x 1,152 + biases): 382,505,936; the adapter 120,836,608.
 */
static void test_molmo2(void **state)
{
	mp_param_count pc;
	mp_model m;
	mp_error err = MP_ERROR_INIT;

	(void)state;
	assert_int_equal(count_text("{\"model_type\":\"molmo2\"}", &pc, &m, &err), MP_OK);
	assert_int_equal(pc.embedding, UINT64_C(152064) * 4096);
	assert_int_equal(pc.lm_head, UINT64_C(151936) * 4096);
	assert_int_equal(UINT64_C(4) * 1152 + 4 * (1152 * 1152 + 1152) + 2 * 4304 * 1152 + 4304 + 1152, UINT64_C(15239504));
	assert_int_equal(UINT64_C(729) * 1152 + 1152 * 588 + 1152 + 25 * UINT64_C(15239504), UINT64_C(382505936));
	assert_int_equal(UINT64_C(3) * (1152 * 2304 + 1152) + 1152 * 1152 + 1152 + 2 * 18944 * 1152 + 3584 * 18944,
	                 UINT64_C(120836608));
	assert_int_equal(pc.vision, UINT64_C(382505936) + 120836608);
	assert_int_equal(pc.total, UINT64_C(8694602192));
	/* an old checkpoint's vit_config of 27 layers keeps those up to the deepest vit_layers reads (-3 -> 24: 25) */
	assert_int_equal(count_text("{\"model_type\":\"molmo2\",\"vit_config\":{\"num_hidden_layers\":27},"
	                            "\"adapter_config\":{\"vit_layers\":[-3,-9]}}",
	                            &pc, &m, &err),
	                 MP_OK);
	assert_int_equal(pc.total, UINT64_C(8694602192));
}

/*
 * Kosmos-2 (Kosmos2Config defaults, tied): CLIP-L/14 at 224 px 303,179,776 under vision_model.model.; the projection
 * 64 x 2,048 latent queries, dense 2,048 x 1,024 + 2,048, x_attn 4 x (2,048^2 + 2,048): 19,015,680; the decoder's
 * embed_tokens 65,037 x 2,048 and 24 layers with ffn_layernorm (2 x 8,192) and inner_attn_ln (2 x 2,048).
 */
static void test_kosmos2(void **state)
{
	mp_param_count pc;
	mp_model m;
	mp_error err = MP_ERROR_INIT;
	uint64_t kv;

	(void)state;
	assert_int_equal(count_text("{\"model_type\":\"kosmos-2\"}", &pc, &m, &err), MP_OK);
	assert_int_equal(pc.vision, UINT64_C(303179776) + 64 * 2048 + 2048 * 1024 + 2048 + 4 * (2048 * 2048 + 2048));
	assert_int_equal(pc.embedding, UINT64_C(65037) * 2048);
	assert_int_equal(pc.lm_head, 0);
	assert_int_equal(pc.total, UINT64_C(1664485376));
	/* multi-head attention over 24 layers: K and V of 2,048 values, bf16, 2,048 tokens */
	assert_int_equal(mp_kv_cache_bytes(&m, MP_DTYPE_BF16, 2048, 1, &kv, &err), MP_OK);
	assert_int_equal(kv, UINT64_C(24) * 2 * 2048 * 2 * 2048);
	/* text_config's tie alone ties (the wrapper's false does not untie it); both false: lm_head of its own */
	assert_int_equal(count_text("{\"model_type\":\"kosmos-2\",\"tie_word_embeddings\":false}", &pc, &m, &err), MP_OK);
	assert_int_equal(pc.lm_head, 0);
	assert_int_equal(count_text("{\"model_type\":\"kosmos-2\",\"tie_word_embeddings\":false,"
	                            "\"text_config\":{\"tie_word_embeddings\":false}}",
	                            &pc, &m, &err),
	                 MP_OK);
	assert_int_equal(pc.lm_head, UINT64_C(65037) * 2048);
}

/*
 * Kosmos-2.5 (Kosmos2_5Config defaults, tied by text_config): the Pix2Struct-style tower 512,812,032 (patch_projection
 * 1,536 x 768 + 1,536, row and column tables 2 x 4,096 x 1,536, 18 layers of 27,724,800, layernorm 1,536), the
 * projection 2,048 latent queries x 1,536 + dense 1,536^2 + 1,536 + x_attn 4 x (1,536^2 + 1,536) = 14,949,888; the
 * decoder's embedding 108,481 x 1,536 and segment_emb 2 x 1,536.
 */
static void test_kosmos2_5(void **state)
{
	mp_param_count pc;
	mp_model m;
	mp_error err = MP_ERROR_INIT;

	(void)state;
	assert_int_equal(count_text("{\"model_type\":\"kosmos-2.5\"}", &pc, &m, &err), MP_OK);
	assert_int_equal(UINT64_C(1536) * 768 + 1536 + 2 * 4096 * 1536 + 18 * UINT64_C(27724800) + 1536, UINT64_C(512812032));
	assert_int_equal(UINT64_C(2048) * 1536 + 1536 * 1536 + 1536 + 4 * (1536 * 1536 + 1536), UINT64_C(14949888));
	assert_int_equal(pc.vision, UINT64_C(512812032) + 14949888);
	assert_int_equal(pc.embedding, UINT64_C(108481) * 1536 + 2 * 1536);
	assert_int_equal(pc.total, UINT64_C(1374646272));
	/* the wrapper's tie_word_embeddings false unties nothing; text_config's does */
	assert_int_equal(count_text("{\"model_type\":\"kosmos-2.5\",\"tie_word_embeddings\":false}", &pc, &m, &err), MP_OK);
	assert_int_equal(pc.lm_head, 0);
	assert_int_equal(count_text("{\"model_type\":\"kosmos-2.5\",\"text_config\":{\"tie_word_embeddings\":false}}", &pc,
	                            &m, &err),
	                 MP_OK);
	assert_int_equal(pc.lm_head, UINT64_C(108481) * 1536);
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
	    {"{\"model_type\":\"fast_vlm\",\"vision_config\":{\"model_type\":\"timm_wrapper\",\"architecture\":\"resnet50\","
	     "\"hidden_size\":2048}}",
	     "/model/hf_config/vision_config/architecture"},
	    {"{\"model_type\":\"fast_vlm\",\"vision_config\":{\"architecture\":\"fastvit_mci3\",\"hidden_size\":3072}}",
	     "/model/hf_config/vision_config/model_args"},
	    {"{\"model_type\":\"fast_vlm\",\"vision_config\":{\"architecture\":\"fastvit_mci3\","
	     "\"model_args\":{\"inference_mode\":true}}}",
	     "/model/hf_config/vision_config/hidden_size"},
	    {"{\"model_type\":\"fast_vlm\",\"vision_feature_layer\":-2}", "/model/hf_config/vision_feature_layer"},
	    {"{\"model_type\":\"fast_vlm\",\"vision_feature_select_strategy\":\"default\"}",
	     "/model/hf_config/vision_feature_select_strategy"},
	    /* PerceptionLMConfig's default timm_wrapper has no model_args: transformers 5.24 raises TypeError */
	    {"{\"model_type\":\"perception_lm\"}", "/model/hf_config/vision_config/model_args"},
	    {"{\"model_type\":\"perception_lm\",\"vision_config\":{\"model_type\":\"timm_wrapper\",\"architecture\":"
	     "\"vit_pe_core_large_patch14_336\",\"model_args\":{\"embed_dim\":768}}}",
	     "/model/hf_config/vision_config/model_args"},
	    {"{\"model_type\":\"perception_lm\",\"vision_config\":{\"model_type\":\"timm_wrapper\",\"architecture\":"
	     "\"vit_pe_core_base_patch16_224\",\"model_args\":{\"embed_dim\":1024}}}",
	     "/model/hf_config/vision_config/architecture"},
	    {"{\"model_type\":\"perception_lm\",\"projector_pooling_ratio\":-1}", "/model/hf_config/projector_pooling_ratio"},
	    /* HunYuanVLTextConfig's default head_dim None: transformers 5.24 cannot build it */
	    {"{\"model_type\":\"hunyuan_vl\"}", "/model/hf_config/head_dim"},
	    {"{\"model_type\":\"hunyuan_vl\",\"text_config\":{\"num_attention_heads\":16}}",
	     "/model/hf_config/text_config/head_dim"},
	    {"{\"model_type\":\"hunyuan_vl\",\"text_config\":{\"head_dim\":128,\"rope_parameters\":{\"rope_type\":"
	     "\"default\",\"mrope_section\":[16,16,16]}}}",
	     "/model/hf_config/text_config/rope_parameters"},
	    {"{\"model_type\":\"hunyuan_vl\",\"text_config\":{\"head_dim\":128},\"vision_config\":{\"attention_heads\":0}}",
	     "/model/hf_config/vision_config/attention_heads"},
	    {"{\"model_type\":\"molmo2\",\"adapter_config\":{\"vision_feature_layer\":[25]}}",
	     "/model/hf_config/adapter_config/vision_feature_layer"},
	    {"{\"model_type\":\"molmo2\",\"text_config\":{\"qk_norm_type\":\"layer\"}}",
	     "/model/hf_config/text_config/qk_norm_type"},
	    {"{\"model_type\":\"molmo2\",\"vision_config\":{\"num_key_value_heads\":5}}",
	     "/model/hf_config/vision_config/num_key_value_heads"},
	    {"{\"model_type\":\"molmo2\",\"vision_config\":{\"image_size\":378}}",
	     "/model/hf_config/vision_config/image_size"},
	    {"{\"model_type\":\"kosmos-2\",\"text_config\":{\"add_cross_attention\":true}}",
	     "/model/hf_config/text_config/add_cross_attention"},
	    {"{\"model_type\":\"kosmos-2\",\"text_config\":{\"attention_heads\":7}}",
	     "/model/hf_config/text_config/attention_heads"},
	    {"{\"model_type\":\"kosmos-2\",\"latent_query_num\":0}", "/model/hf_config/latent_query_num"},
	    {"{\"model_type\":\"kosmos-2.5\",\"vision_config\":{\"max_num_patches\":0}}",
	     "/model/hf_config/vision_config/max_num_patches"},
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
	    cmocka_unit_test(test_fast_vlm),
	    cmocka_unit_test(test_perception_lm),
	    cmocka_unit_test(test_hunyuan_vl),
	    cmocka_unit_test(test_molmo2),
	    cmocka_unit_test(test_kosmos2),
	    cmocka_unit_test(test_kosmos2_5),
	    cmocka_unit_test(test_bad_configs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
