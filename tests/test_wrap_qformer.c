/*
 * test_wrap_qformer.c: the wrappers of model/hf_wrap_qformer.c with their worked numbers (BLIP-2's EVA tower and
 * Q-Former, GOT-OCR 2's SAM tower and projector, DeepSeek-VL hybrid's two towers, Unlimited-OCR's and DeepSeek-OCR-2's SAM and second encoders, Qianfan-OCR's InternViT, Granite 4 Vision's Window Q-Formers, MiniCPM-V's mergers, Ovis2's visual table, MOSS transcribe-diarize's audio encoder, GIT's BERT-style decoder; totals are tests/ref/hf/groundtruth.json's, transformers 5.24 on the
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
#include "count_util.h"

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

/*
 * Unlimited-OCR (UnlimitedOcrConfig defaults, untied; transformers 5.24 counts 3,335,504,128). The vision side
 * 400,770,048: the SAM tower as GOT-OCR 2's (89,670,912) and its two strided convolutions 512 x 256 x 9 + 1,024 x
 * 512 x 9 = 5,898,240; the CLIP encoder without its patch convolution or post_layernorm: class token 1,024 + 257
 * positions x 1,024 + pre_layrnorm 2,048 + 24 blocks of 12,596,224 (q, k, v, o 1,024^2 + 1,024 each, fc1 and fc2
 * 4,096 x 1,024 with biases 4,096 and 1,024, two LayerNorms) = 302,575,616; the projector (1,024 + 1,024) -> 1,280
 * with its bias 2,622,720; view_separator and image_newline 1,280 each. The decoder: 12 layers of q, k, v, o 1,280^2,
 * the first dense (3 x 6,848 x 1,280), the other 11 of 64 experts (3 x 896 x 1,280 each), a router 64 x 1,280 and two
 * shared experts as one MLP of 1,792 (3 x 1,792 x 1,280); embeddings and lm_head 129,280 x 1,280 each. Its KV cache:
 * 12 layers x K and V of 10 heads of 128 (every token, the reference sliding-window layers included).
 */
static void test_unlimited_ocr(void **state)
{
	mp_param_count pc;
	mp_model m;
	mp_error err = MP_ERROR_INIT;
	uint64_t kv, clip = 1024 + 257 * 1024 + 2048 + 24 * (4 * (UINT64_C(1024) * 1024 + 1024) + 2 * 4096 * 1024 + 4096 +
	                                                     1024 + 2 * 2048);

	(void)state;
	assert_int_equal(count_text("{\"model_type\":\"unlimited_ocr\"}", &pc, &m, &err), MP_OK);
	assert_int_equal(clip, UINT64_C(302575616));
	assert_int_equal(pc.vision, UINT64_C(89670912) + 512 * 256 * 9 + 1024 * 512 * 9 + clip + 2048 * 1280 + 1280 + 2 * 1280);
	assert_int_equal(pc.vision, UINT64_C(400770048));
	assert_int_equal(pc.embedding, UINT64_C(129280) * 1280);
	assert_int_equal(pc.lm_head, UINT64_C(129280) * 1280);
	assert_int_equal(pc.total - pc.vision - pc.embedding - pc.lm_head,
	                 12 * (4 * UINT64_C(1280) * 1280 + 2 * 1280) + 1280 + 3 * UINT64_C(6848) * 1280 +
	                     11 * (64 * 3 * UINT64_C(896) * 1280 + 64 * 1280 + 3 * UINT64_C(1792) * 1280));
	assert_int_equal(pc.total, UINT64_C(3335504128));
	assert_int_equal(mp_kv_cache_bytes(&m, MP_DTYPE_BF16, 4096, 1, &kv, &err), MP_OK);
	assert_int_equal(kv, UINT64_C(12) * 2 * 1280 * 2 * 4096);
}

/*
 * DeepSeek-OCR-2: transformers 5.24 builds no default (DeepseekOcr2TextConfig's mlp_layer_types and
 * num_experts_per_tok are None), so the default is a 422 naming text_config (and an empty one text_config/mlp_layer_types); with the first layer
 * dense and top-6 (tools/groundtruth/configs/deepseek-ocr2-routing-variant.json) transformers counts 49,422,329,088.
 * Its vision side 10,918,589,696: SAM-B (89,670,912, mlp_dim 768 x mlp_ratio 4) and its convolutions 512 x 256 x 9 +
 * 896 x 512 x 9; the Qwen2 encoder of 32 layers of 4,096 (q, k, v 4,096^2 + 4,096 each, o 4,096^2, a gated MLP of
 * 22,016, two RMSNorms; the final norm), its queries (144 + 256) x 4,096; the projector 4,096^2 + 4,096 and
 * view_separator 4,096.
 */
static void test_deepseek_ocr2(void **state)
{
	mp_param_count pc;
	mp_model m;
	mp_error err = MP_ERROR_INIT;
	char cfg[1024] = "{\"model_type\":\"deepseek_ocr2\",\"text_config\":{\"num_experts_per_tok\":6,"
	                 "\"mlp_layer_types\":[\"dense\"";
	uint64_t enc = 32 * (3 * (UINT64_C(4096) * 4096 + 4096) + UINT64_C(4096) * 4096 + 3 * UINT64_C(22016) * 4096 +
	                     2 * 4096) + 4096 + (144 + 256) * 4096;

	(void)state;
	assert_int_equal(count_text("{\"model_type\":\"deepseek_ocr2\"}", &pc, &m, &err), MP_EINVAL);
	assert_string_equal(err.field, "/model/hf_config/text_config");
	assert_int_equal(count_text("{\"model_type\":\"deepseek_ocr2\",\"text_config\":{}}", &pc, &m, &err), MP_EINVAL);
	assert_string_equal(err.field, "/model/hf_config/text_config/mlp_layer_types");
	for (int i = 1; i < 32; i++)
		strncat(cfg, ",\"sparse\"", sizeof(cfg) - strlen(cfg) - 1);
	strncat(cfg, "]}}", sizeof(cfg) - strlen(cfg) - 1);
	assert_int_equal(count_text(cfg, &pc, &m, &err), MP_OK);
	assert_int_equal(pc.vision, UINT64_C(89670912) + 512 * 256 * 9 + 896 * 512 * 9 + enc + UINT64_C(4096) * 4096 +
	                                4096 + 4096);
	assert_int_equal(pc.vision, UINT64_C(10918589696));
	assert_int_equal(pc.total, UINT64_C(49422329088));
}

/*
 * Granite 4 Vision: transformers 5.24 builds no default (deepstack_layer_map and downsample_rate are None), so the
 * default is a 422 naming deepstack_layer_map; with "1/4" and two pairs (tools/groundtruth/configs/
 * granite4_vision-deepstack-variant.json) transformers counts 6,901,582,080: Granite's 6,607,343,616 (untied), CLIP-B/32
 * 87,456,000, image_newline 4,096 and 6 Window Q-Former downsamplers of 12,617,728 (one layer of 9,451,776 with its
 * cross-attention, the Q-Former's LayerNorm, query 768, image_positions 16 x 768, a LayerNorm and out_linear
 * 768 -> 4,096 with its bias).
 */
static void test_granite4_vision(void **state)
{
	mp_param_count pc;
	mp_model m;
	mp_error err = MP_ERROR_INIT;

	(void)state;
	assert_int_equal(count_text("{\"model_type\":\"granite4_vision\"}", &pc, &m, &err), MP_EINVAL);
	assert_string_equal(err.field, "/model/hf_config/deepstack_layer_map");
	assert_int_equal(count_text("{\"model_type\":\"granite4_vision\",\"downsample_rate\":\"1/4\","
	                            "\"deepstack_layer_map\":[[-19,9],[-13,6]]}",
	                            &pc, &m, &err),
	                 MP_OK);
	assert_int_equal(pc.vision, UINT64_C(87456000) + 4096 + 6 * (UINT64_C(9451776) + 1536 + 768 + 16 * 768 + 1536 +
	                                                              768 * 4096 + 4096));
	assert_int_equal(pc.vision, UINT64_C(87456000) + 4096 + 6 * UINT64_C(12617728));
	assert_int_equal(pc.total, UINT64_C(6901582080));
}

/*
 * MiniCPM-V 4.6 (MiniCPMV4_6Config defaults: Qwen3.5's text decoder, untied): the SigLIP-style tower with its ViT
 * merger 135,366,144; the merger's one DownsampleMLP over 4 x 768: pre_norm 6,144, linear_1 3,072^2 + 3,072,
 * linear_2 4,096 x 3,072 + 4,096 = 22,033,408. MiniCPM-OCR: the same, tied (no lm_head of 248,320 x 4,096).
 */
static void test_minicpmv(void **state)
{
	mp_param_count pc;
	mp_model m;
	mp_error err = MP_ERROR_INIT;

	(void)state;
	assert_int_equal(count_text("{\"model_type\":\"minicpmv4_6\"}", &pc, &m, &err), MP_OK);
	assert_int_equal(pc.vision, UINT64_C(135366144) + 6144 + 3072 * 3072 + 3072 + 4096 * 3072 + 4096);
	assert_int_equal(pc.total, UINT64_C(9111202816));
	assert_int_equal(count_text("{\"model_type\":\"minicpm_ocr\"}", &pc, &m, &err), MP_OK);
	assert_int_equal(pc.total, UINT64_C(9111202816) - UINT64_C(248320) * 4096);
	assert_int_equal(pc.total, UINT64_C(8094084096));
}

/*
 * Ovis2 (Ovis2Config defaults: Qwen2Config's decoder, tied): the tower with its head 326,002,678 (head_linear 16,379 x
 * 1,024 and head_norm 2 x 16,379 of it) and visual_embeddings_table 16,384 x the wrapper's hidden_size 1,536.
 */
static void test_ovis2(void **state)
{
	mp_param_count pc;
	mp_model m;
	mp_error err = MP_ERROR_INIT;

	(void)state;
	assert_int_equal(count_text("{\"model_type\":\"ovis2\"}", &pc, &m, &err), MP_OK);
	assert_int_equal(pc.vision, UINT64_C(326002678) + 16384 * 1536);
	assert_int_equal(pc.total, UINT64_C(11778684918));
}

/*
 * MOSS transcribe-diarize: the Whisper-style encoder 307,216,384 (conv1 1,024 x 80 x 3, conv2 1,024 x 1,024 x 3,
 * 1,500 positions, 24 layers) and the adaptor 1,024 x 4,096 + 1,024 x 1,024 + biases + a LayerNorm = 5,246,976, under
 * Qwen3-0.6B's decoder (the class's text_config defaults, required), tied.
 */
static void test_moss_transcribe_diarize(void **state)
{
	mp_param_count pc;
	mp_model m;
	mp_error err = MP_ERROR_INIT;

	(void)state;
	assert_int_equal(count_text("{\"model_type\":\"moss_transcribe_diarize\"}", &pc, &m, &err), MP_EINVAL);
	assert_string_equal(err.field, "/model/hf_config/text_config");
	assert_int_equal(count_text("{\"model_type\":\"moss_transcribe_diarize\",\"text_config\":{\"model_type\":"
	                            "\"qwen3\",\"hidden_size\":1024,\"intermediate_size\":3072,\"num_hidden_layers\":28,"
	                            "\"num_attention_heads\":16,\"num_key_value_heads\":8}}",
	                            &pc, &m, &err),
	                 MP_OK);
	assert_int_equal(pc.vision, UINT64_C(307216384) + 1024 * 4096 + 1024 + 1024 * 1024 + 1024 + 2 * 1024);
	assert_int_equal(pc.total, UINT64_C(908513280));
}

/*
 * GIT (GitConfig defaults): the decoder's tokens 30,522 x 768 and positions 1,024 x 768, its untied head output with a
 * bias 30,522 x 768 + 30,522; CLIP-B/16 85,799,424 and visual_projection 768^2 + 768 + a LayerNorm 1,536.
 */
static void test_git(void **state)
{
	mp_param_count pc;
	mp_model m;
	mp_error err = MP_ERROR_INIT;

	(void)state;
	assert_int_equal(count_text("{\"model_type\":\"git\"}", &pc, &m, &err), MP_OK);
	assert_int_equal(pc.embedding, UINT64_C(30522) * 768);
	assert_int_equal(pc.position_embedding, UINT64_C(1024) * 768);
	assert_int_equal(pc.lm_head, UINT64_C(30522) * 768 + 30522);
	assert_int_equal(pc.vision, UINT64_C(85799424) + 768 * 768 + 768 + 1536);
	assert_int_equal(pc.total, UINT64_C(176619066));
}

/*
 * Nemotron 3 Nano Omni (NemotronH_Omni_Reasoning_V3_Config defaults): Nemotron-H's default decoder 1,968,355,712 and
 * the RADIO tower: positions 1 x (2048 / 16)^2 x 1,280 = 20,971,520, 10 class and register tokens 12,800, the patch
 * projections 1,280 x 768 and 1,280 x 1,536 (video, 2 frames), 32 blocks of 19,680,000 (two LayerNorms 5,120, q, k, v
 * and o with biases 4 x 1,639,680, two layer scales 2,560, fc1 and fc2 of 5,120 with biases 13,113,600): 653,693,440;
 * the projector's RMSNorm of 1,280 x 2^2 = 5,120, linear_1 5,120 -> 4,096 and linear_2 4,096 -> 4,096 without biases:
 * 37,753,856. Vision 691,447,296, total 2,659,803,008 (transformers 5.24 builds as many). With the Parakeet encoder's
 * defaults and a 4,096-wide embed_audio without biases (as nvidia/Nemotron-3-Nano-Omni-30B-A3B-Reasoning-BF16
 * writes them), 3,288,180,608 (transformers the same).
 */
static void test_nemotron_h_omni(void **state)
{
	mp_param_count pc, legacy;
	mp_model m;
	mp_error err = MP_ERROR_INIT;

	(void)state;
	assert_int_equal(count_text("{\"model_type\":\"nemotron_h_omni\"}", &pc, &m, &err), MP_OK);
	assert_int_equal(pc.vision, UINT64_C(20971520) + 12800 + 1280 * 768 + 1280 * 1536 + 32 * UINT64_C(19680000) +
	                                5120 + 4096 * 5120 + 4096 * 4096);
	assert_int_equal(pc.total, UINT64_C(2659803008));
	assert_int_equal(count_text("{\"model_type\":\"nemotron_h_omni\",\"audio_config\":{\"projection_hidden_size\":"
	                            "4096,\"projection_bias\":false}}",
	                            &pc, &m, &err),
	                 MP_OK);
	assert_int_equal(pc.total, UINT64_C(3288180608));
	/* the released checkpoints' spellings: llm_config, sound_config and vit_hidden_size read as the new keys */
	assert_int_equal(count_text("{\"model_type\":\"nemotron_h_omni\",\"text_config\":{\"vocab_size\":1000},"
	                            "\"audio_config\":{\"projection_hidden_size\":64,\"projection_bias\":true},"
	                            "\"vision_hidden_size\":640,\"vision_config\":{\"hidden_size\":640,\"video_temporal_patch_size\":2}}",
	                            &pc, &m, &err),
	                 MP_OK);
	assert_int_equal(count_text("{\"model_type\":\"nemotron_h_omni\",\"llm_config\":{\"vocab_size\":1000},"
	                            "\"sound_config\":{\"projection_hidden_size\":64,\"projection_bias\":true},"
	                            "\"vit_hidden_size\":640,\"vision_config\":{\"hidden_size\":640,\"video_temporal_patch_size\":2}}",
	                            &legacy, &m, &err),
	                 MP_OK);
	assert_int_equal(legacy.total, pc.total);
	assert_int_equal(legacy.vision, pc.vision);
}

/*
 * Phi-4-multimodal (Phi4MultimodalConfig defaults): the Phi-3 decoder 3,072 wide, 32 layers, 8 KV heads, 200,064
 * tokens, untied; the SigLIP tower of 1,152 (27 blocks of 15,239,504, patches 14 px of 448 px images: 1,024 positions,
 * post_layernorm, the pooling head 15,238,352): 428,565,440; img_projection_up and _down with biases and the two
 * feature extensors: 12,984,576; the conformer of 24 blocks of 17,858,560 after its subsampling (three stride-2 stages
 * of 1,024 channels, 80 mel bins to 10) and out linear 10,486,784 and the relative bias table 2,000 x 16: 441,254,144;
 * the four speech projections 25,178,112. Vision 907,982,272, total 5,308,268,992 (transformers 5.24 builds as many).
 */
static void test_phi4_multimodal(void **state)
{
	mp_param_count pc;
	mp_model m;
	mp_error err = MP_ERROR_INIT;

	(void)state;
	assert_int_equal(count_text("{\"model_type\":\"phi4_multimodal\"}", &pc, &m, &err), MP_OK);
	assert_int_equal(pc.vision, UINT64_C(428565440) + 12984576 + 441254144 + 25178112);
	assert_int_equal(pc.embedding, UINT64_C(200064) * 3072);
	assert_int_equal(pc.lm_head, UINT64_C(200064) * 3072);
	assert_int_equal(pc.total, UINT64_C(5308268992));
}

/*
 * Muse Glimmer (MuseGlimmerConfig defaults): the decoder 6,656 wide, 52 layers of 32 heads of 128 (2 KV heads) with a
 * gate_proj each, a gated MLP of 19,968, 202,048 tokens, untied; the tower 1,852,639,744 (patches 1,536 x 1,176,
 * positions 1,024 x 1,536, ln_pre and ln_post, 50 layers of 36,985,088), vision_adapter 6,144 -> 4,096 -> 4,096
 * (41,943,040) and vision_projection 4,096 -> 6,656 (27,262,976): vision 1,921,845,760, total 29,776,626,688
 * (transformers 5.24 builds as many). 39 of the 52 layers slide over 2,048 tokens: the full ones are every 4th
 * counted back from the last (layer 51, 47, ..., 3), so at 4,096 tokens the bf16 cache holds 2 x 2 x 128 x 2 bytes
 * per token per layer: 1,024 x (13 x 4,096 + 39 x 2,048) = 136,314,880 bytes.
 */
static void test_muse_glimmer(void **state)
{
	mp_param_count pc;
	mp_model m;
	mp_error err = MP_ERROR_INIT;
	uint64_t kv;

	(void)state;
	assert_int_equal(count_text("{\"model_type\":\"muse_glimmer\"}", &pc, &m, &err), MP_OK);
	assert_int_equal(pc.vision, UINT64_C(1852639744) + 41943040 + 27262976);
	assert_int_equal(pc.lm_head, UINT64_C(202048) * 6656);
	assert_int_equal(pc.total, UINT64_C(29776626688));
	assert_int_equal(m.sliding_window_layers, 39);
	assert_int_equal(mp_kv_cache_bytes(&m, MP_DTYPE_BF16, 4096, 1, &kv, &err), MP_OK);
	assert_int_equal(kv, UINT64_C(1024) * (13 * 4096 + 39 * 2048));
}

/*
 * Muse Spark (MuseSparkConfig defaults): 62 MoE layers of 256 experts at 4,096 (gate_up 8,192 x 4,096 and down
 * 4,096 x 4,096 each), top 8; the Muse vision tower 1,852,639,744, its adapter 41,943,040 and vision_projection
 * 4,096 -> 8,192 (33,554,432); the audio pyramid 117,840,384 (stages of 256, 512, 1,024 and 2,048 channels, patches
 * 16, 6, 5, 4, two conv blocks each: 4,608 + 2 x 527,872, 787,456 + 2 x 2,104,320, 2,623,488 + 2 x 8,402,944,
 * 8,392,704 + 2 x 33,583,104; then norm, proj to 8,192 and post_proj_norm 16,787,456). Vision 2,045,977,600, total
 * 822,036,513,792 (transformers 5.24 builds as many). The cache at 4,096 tokens in bf16: 16 KV heads of 64, K and V,
 * 4,096 bytes per token per layer, the 16 full layers every token and the 46 sliding ones 2,048: 654,311,424.
 */
static void test_muse_spark(void **state)
{
	mp_param_count pc;
	mp_model m;
	mp_error err = MP_ERROR_INIT;
	uint64_t kv;

	(void)state;
	assert_int_equal(count_text("{\"model_type\":\"muse_spark\"}", &pc, &m, &err), MP_OK);
	assert_int_equal(pc.vision, UINT64_C(1852639744) + 41943040 + 33554432 + 117840384);
	assert_int_equal(pc.total, UINT64_C(822036513792));
	assert_int_equal(mp_kv_cache_bytes(&m, MP_DTYPE_BF16, 4096, 1, &kv, &err), MP_OK);
	assert_int_equal(kv, UINT64_C(4096) * (16 * 4096 + 46 * 2048));
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
	    {"{\"model_type\":\"granite4_vision\",\"deepstack_layer_map\":[],\"downsample_rate\":\"1:4\"}",
	     "/model/hf_config/downsample_rate"},
	    {"{\"model_type\":\"granite4_vision\",\"deepstack_layer_map\":[[1]],\"downsample_rate\":\"1/4\"}",
	     "/model/hf_config/deepstack_layer_map"},
	    {"{\"model_type\":\"minicpmv4_6\",\"vision_config\":{\"window_kernel_size\":[2]}}",
	     "/model/hf_config/vision_config/window_kernel_size"},
	    {"{\"model_type\":\"minicpmv4_7\",\"merger_times\":1000}", "/model/hf_config/merger_times"},
	    /* untied, lm_head is the wrapper's hidden_size (1536 by default) wide, not the decoder's 4096 */
	    {"{\"model_type\":\"ovis2\",\"tie_word_embeddings\":false}", "/model/hf_config/hidden_size"},
	    {"{\"model_type\":\"ovis2\",\"vision_config\":{\"vocab_size\":5}}", "/model/hf_config/vision_config/vocab_size"},
	    {"{\"model_type\":\"moss_transcribe_diarize\",\"text_config\":{\"model_type\":\"qwen3\"},"
	     "\"audio_config\":{\"encoder_attention_heads\":7}}",
	     "/model/hf_config/audio_config/encoder_attention_heads"},
	    {"{\"model_type\":\"git\",\"num_attention_heads\":7}", "/model/hf_config/num_attention_heads"},
	    /* embed_audio's width and bias have no default: transformers 5.24 raises AttributeError */
	    {"{\"model_type\":\"nemotron_h_omni\",\"audio_config\":{}}",
	     "/model/hf_config/audio_config/projection_hidden_size"},
	    {"{\"model_type\":\"nemotron_h_omni\",\"vision_hidden_size\":1024}", "/model/hf_config/vision_hidden_size"},
	    {"{\"model_type\":\"nemotron_h_omni\",\"vision_config\":{\"video_temporal_patch_size\":3}}",
	     "/model/hf_config/vision_config/video_temporal_patch_size"},
	    {"{\"model_type\":\"nemotron_h_omni\",\"downsample_ratio\":0}", "/model/hf_config/downsample_ratio"},
	    /* the derived layer_types slide where the window is null: transformers 5.24 cannot build that cache */
	    {"{\"model_type\":\"muse_glimmer\",\"text_config\":{\"sliding_window\":null}}",
	     "/model/hf_config/text_config/sliding_window"},
	    /* the audio encoder's output goes onto the text embeddings, so it must be their width */
	    {"{\"model_type\":\"muse_spark\",\"audio_config\":{\"out_hidden_size\":4096}}",
	     "/model/hf_config/audio_config/out_hidden_size"},
	    {"{\"model_type\":\"muse_spark\",\"audio_config\":{\"num_hidden_layers\":3}}",
	     "/model/hf_config/audio_config/num_hidden_layers"},
	    {"{\"model_type\":\"muse_spark\",\"text_config\":{\"num_hidden_layers\":2,\"mlp_layer_types\":[\"dense\"]}}",
	     "/model/hf_config/text_config/mlp_layer_types"},
	    {"{\"model_type\":\"phi4_multimodal\",\"audio_config\":{\"time_reduction\":3}}",
	     "/model/hf_config/audio_config/time_reduction"},
	    {"{\"model_type\":\"phi4_multimodal\",\"vision_config\":{\"num_attention_heads\":5}}",
	     "/model/hf_config/vision_config/num_attention_heads"},
	    /* a vision_config of its own leaves video_temporal_patch_size None, which the wrapper's check refuses */
	    {"{\"model_type\":\"nemotron_h_omni\",\"vision_config\":{\"hidden_size\":1280}}",
	     "/model/hf_config/vision_config/video_temporal_patch_size"},
	    {"{\"model_type\":\"git\",\"num_image_with_embedding\":5000}", "/model/hf_config/num_image_with_embedding"},
	    {"{\"model_type\":\"granite4_vision\",\"deepstack_layer_map\":[],\"downsample_rate\":\"1/4\","
	     "\"vision_config\":{\"hidden_size\":32,\"num_attention_heads\":2}}",
	     "/model/hf_config/vision_config/hidden_size"},
	    {"{\"model_type\":\"unlimited_ocr\",\"text_config\":{\"sliding_window\":null}}",
	     "/model/hf_config/text_config/sliding_window"},
	    {"{\"model_type\":\"unlimited_ocr\",\"text_config\":{\"num_hidden_layers\":1,"
	     "\"layer_types\":[\"sliding_attention\"]}}",
	     "/model/hf_config/text_config/layer_types"},
	    {"{\"model_type\":\"unlimited_ocr\",\"text_config\":{\"num_attention_heads\":3}}",
	     "/model/hf_config/text_config/num_attention_heads"},
	    {"{\"model_type\":\"unlimited_ocr\",\"vision_config\":{\"sam_config\":{\"downsample_channels\":[512]}}}",
	     "/model/hf_config/vision_config/sam_config/downsample_channels"},
	    {"{\"model_type\":\"unlimited_ocr\",\"vision_config\":{\"sam_config\":{\"downsample_channels\":null}}}",
	     "/model/hf_config/vision_config/sam_config/downsample_channels"},
	    {"{\"model_type\":\"unlimited_ocr\",\"vision_config\":{\"encoder_config\":{\"num_attention_heads\":7}}}",
	     "/model/hf_config/vision_config/encoder_config/num_attention_heads"},
	    {"{\"model_type\":\"deepseek_ocr2\",\"text_config\":{\"num_hidden_layers\":2,"
	     "\"mlp_layer_types\":[\"dense\",\"sparse\"]}}",
	     "/model/hf_config/text_config/num_experts_per_tok"},
	    {"{\"model_type\":\"deepseek_ocr2\",\"text_config\":{\"num_hidden_layers\":2,\"num_experts_per_tok\":2,"
	     "\"mlp_layer_types\":[\"dense\",\"sparse\"]},\"vision_config\":{\"encoder_config\":"
	     "{\"num_key_value_heads\":64}}}",
	     "/model/hf_config/vision_config/encoder_config/num_key_value_heads"},
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
	    cmocka_unit_test(test_unlimited_ocr),
	    cmocka_unit_test(test_deepseek_ocr2),
	    cmocka_unit_test(test_qianfan_ocr),
	    cmocka_unit_test(test_granite4_vision),
	    cmocka_unit_test(test_minicpmv),
	    cmocka_unit_test(test_ovis2),
	    cmocka_unit_test(test_moss_transcribe_diarize),
	    cmocka_unit_test(test_nemotron_h_omni),
	    cmocka_unit_test(test_phi4_multimodal),
	    cmocka_unit_test(test_muse_glimmer),
	    cmocka_unit_test(test_muse_spark),
	    cmocka_unit_test(test_git),
	    cmocka_unit_test(test_bad_configs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
