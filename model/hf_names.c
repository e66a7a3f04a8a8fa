/*
 * hf_names.c: how each family of model types names its tensors in transformers 5.24's state_dict (the modules of
 * its modeling_<type>.py), as the Llama family's names and the fields the family renames. A type's row points at its
 * family's names; the decoder builder (planner/decoder.c) composes every tensor's name from them. Only names: which
 * modules a model has is the reader's business (mp_model's flags).
 */
#include "hf_internal.h"

/* A family is the Llama names with some renamed: a later designated initializer replaces the earlier one. */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Winitializer-overrides"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Woverride-init"
#endif

#define L MP_NAMES_LAYERS

/* Phi-3 (modeling_phi3.py): one qkv_proj, one gate_up_proj. */
const mp_names mpm_names_phi3 = {MP_NAMES_LLAMA_FIELDS, .qkv = {"qkv_proj.weight", "qkv_proj.bias"},
                                 .gate_up = {"gate_up_proj.weight", "gate_up_proj.bias"}};

/* GLM (modeling_glm.py): gate_up_proj; GLM-4 adds post_self_attn_layernorm and post_mlp_layernorm. */
const mp_names mpm_names_glm = {MP_NAMES_LLAMA_FIELDS, .gate_up = {"gate_up_proj.weight", "gate_up_proj.bias"}};
const mp_names mpm_names_glm4 = {MP_NAMES_LLAMA_FIELDS,
                                 .gate_up = {"gate_up_proj.weight", "gate_up_proj.bias"},
                                 .norms = {{"input_layernorm.weight", NULL},
                                           {"post_self_attn_layernorm.weight", NULL},
                                           {"post_attention_layernorm.weight", NULL},
                                           {"post_mlp_layernorm.weight", NULL}}};

/* OLMo-2/3, EXAONE 4 (post-norm blocks): post_attention_layernorm and post_feedforward_layernorm only. */
const mp_names mpm_names_post_norms = {
    MP_NAMES_LLAMA_FIELDS,
    .norms = {{"post_attention_layernorm.weight", NULL}, {"post_feedforward_layernorm.weight", NULL}}};

/* Apertus (modeling_apertus.py): attention_layernorm and feedforward_layernorm. */
const mp_names mpm_names_apertus = {
    MP_NAMES_LLAMA_FIELDS,
    .norms = {{"attention_layernorm.weight", NULL}, {"feedforward_layernorm.weight", NULL}}};

/* BitNet (modeling_bitnet.py): the attention's sub-norm is the layer's third norm. */
const mp_names mpm_names_bitnet = {MP_NAMES_LLAMA_FIELDS,
                                   .norms = {{"input_layernorm.weight", NULL},
                                             {"post_attention_layernorm.weight", NULL},
                                             {"self_attn.attn_sub_norm.weight", NULL}}};

/* Phi (modeling_phi.py): dense, fc1 and fc2, q_layernorm and k_layernorm, final_layernorm. */
const mp_names mpm_names_phi = {MP_NAMES_LLAMA_FIELDS,
                                .o = {"dense.weight", "dense.bias"},
                                .up = {"fc1.weight", "fc1.bias"},
                                .down = {"fc2.weight", "fc2.bias"},
                                .q_norm = {"q_layernorm.weight", "q_layernorm.bias"},
                                .k_norm = {"k_layernorm.weight", "k_layernorm.bias"},
                                .final_norm = {"final_layernorm.weight", "final_layernorm.bias"}};

/* Starcoder2 (modeling_starcoder2.py): c_fc and c_proj. */
const mp_names mpm_names_starcoder2 = {MP_NAMES_LLAMA_FIELDS, .up = {"c_fc.weight", "c_fc.bias"},
                                       .down = {"c_proj.weight", "c_proj.bias"}};

/* HunYuan (modeling_hunyuan_v1_dense.py, _moe.py): query_layernorm and key_layernorm; the MoE's gate.wg and shared_mlp. */
const mp_names mpm_names_hunyuan = {MP_NAMES_LLAMA_FIELDS,
                                    .q_norm = {"query_layernorm.weight", NULL},
                                    .k_norm = {"key_layernorm.weight", NULL},
                                    .router = {"gate.wg.weight", NULL},
                                    .sh_gate = {"shared_mlp.gate_proj.weight", NULL},
                                    .sh_up = {"shared_mlp.up_proj.weight", NULL},
                                    .sh_down = {"shared_mlp.down_proj.weight", NULL}};

/* GPT-2 (modeling_gpt2.py): transformer.wte, wpe, h.{i}.attn.c_attn (Conv1D, in x out), ln_1, ln_2, mlp.c_fc and
 * c_proj, ln_f; a tied head. GPTBigCode (modeling_gpt_bigcode.py) names the same modules as nn.Linear. */
#define GPT2_FIELDS                                                                                                    \
	MP_NAMES_LLAMA_FIELDS, .root = "transformer.", .embed = {"wte.weight", NULL}, .positions = {"wpe.weight", NULL}, \
	.final_norm = {"ln_f.weight", "ln_f.bias"}, .layer = "h.{i}", .attn = "h.{i}.attn", .mlp = "h.{i}.mlp",        \
	.qkv = {"c_attn.weight", "c_attn.bias"}, .o = {"c_proj.weight", "c_proj.bias"},                               \
	.up = {"c_fc.weight", "c_fc.bias"}, .down = {"c_proj.weight", "c_proj.bias"},                                 \
	.norms = {{"ln_1.weight", "ln_1.bias"}, {"ln_2.weight", "ln_2.bias"}}
const mp_names mpm_names_gpt2 = {GPT2_FIELDS, .conv1d = true};
const mp_names mpm_names_gpt_bigcode = {GPT2_FIELDS};

/* GPT-J (modeling_gptj.py): transformer.h.{i}.attn.{q,k,v,out}_proj, mlp.fc_in and fc_out, one ln_1. */
const mp_names mpm_names_gptj = {MP_NAMES_LLAMA_FIELDS,
                                 .root = "transformer.",
                                 .embed = {"wte.weight", NULL},
                                 .final_norm = {"ln_f.weight", "ln_f.bias"},
                                 .layer = "h.{i}",
                                 .attn = "h.{i}.attn",
                                 .mlp = "h.{i}.mlp",
                                 .o = {"out_proj.weight", "out_proj.bias"},
                                 .up = {"fc_in.weight", "fc_in.bias"},
                                 .down = {"fc_out.weight", "fc_out.bias"},
                                 .norms = {{"ln_1.weight", "ln_1.bias"}}};

/* GPT-NeoX (modeling_gpt_neox.py): gpt_neox.embed_in, layers.{i}.attention.query_key_value and dense,
 * mlp.dense_h_to_4h and dense_4h_to_h, final_layer_norm; the head lm_head (transformers 5; embed_out before). */
const mp_names mpm_names_gpt_neox = {MP_NAMES_LLAMA_FIELDS,
                                     .root = "gpt_neox.",
                                     .embed = {"embed_in.weight", NULL},
                                     .final_norm = {"final_layer_norm.weight", "final_layer_norm.bias"},
                                     .attn = L ".attention",
                                     .qkv = {"query_key_value.weight", "query_key_value.bias"},
                                     .o = {"dense.weight", "dense.bias"},
                                     .up = {"dense_h_to_4h.weight", "dense_h_to_4h.bias"},
                                     .down = {"dense_4h_to_h.weight", "dense_4h_to_h.bias"}};

/* Falcon (modeling_falcon.py): transformer.word_embeddings, h.{i}.self_attention.query_key_value and dense,
 * mlp.dense_h_to_4h and dense_4h_to_h, input_layernorm (or ln_attn and ln_mlp in the new decoder architecture). */
#define FALCON_FIELDS                                                                                                  \
	MP_NAMES_LLAMA_FIELDS, .root = "transformer.", .embed = {"word_embeddings.weight", NULL},                       \
	.final_norm = {"ln_f.weight", "ln_f.bias"}, .layer = "h.{i}", .attn = "h.{i}.self_attention", .mlp = "h.{i}.mlp", \
	.qkv = {"query_key_value.weight", "query_key_value.bias"}, .o = {"dense.weight", "dense.bias"},               \
	.up = {"dense_h_to_4h.weight", "dense_h_to_4h.bias"}, .down = {"dense_4h_to_h.weight", "dense_4h_to_h.bias"}
const mp_names mpm_names_falcon = {FALCON_FIELDS,
                                   .norms = {{"input_layernorm.weight", "input_layernorm.bias"},
                                             {"post_attention_layernorm.weight", "post_attention_layernorm.bias"}}};
const mp_names mpm_names_falcon_two_ln = {FALCON_FIELDS,
                                          .norms = {{"ln_attn.weight", "ln_attn.bias"}, {"ln_mlp.weight", "ln_mlp.bias"}}};

/* gpt-oss (modeling_gpt_oss.py): mlp.router (with a bias), experts [E, h, 2f] and [E, f, h]. */
const mp_names mpm_names_gpt_oss = {MP_NAMES_LLAMA_FIELDS, .router = {"router.weight", "router.bias"},
                                    .experts_t = true};

/* PhiMoE (modeling_phimoe.py), GraniteMoE's router: mlp.router. */
const mp_names mpm_names_phimoe = {MP_NAMES_LLAMA_FIELDS, .router = {"router.weight", "router.bias"}};

/* Qwen2-MoE, Qwen3-Next, Qwen3.5-MoE: one shared_expert and its shared_expert_gate. */
const mp_names mpm_names_qwen_moe = {MP_NAMES_LLAMA_FIELDS,
                                     .sh_gate = {"shared_expert.gate_proj.weight", NULL},
                                     .sh_up = {"shared_expert.up_proj.weight", NULL},
                                     .sh_down = {"shared_expert.down_proj.weight", NULL}};

/* MiniMax-M2 (modeling_minimax_m2.py): the correction bias sits on the MoE block. */
const mp_names mpm_names_minimax_m2 = {MP_NAMES_LLAMA_FIELDS, .router_correction = "e_score_correction_bias"};

/* ERNIE 4.5 MoE (modeling_ernie4_5_moe.py): the router's bias is gate.moe_statics.e_score_correction_bias, a [1, E]
 * parameter. */
const mp_names mpm_names_ernie4_5_moe = {MP_NAMES_LLAMA_FIELDS,
                                         .router = {"gate.weight", "gate.moe_statics.e_score_correction_bias"},
                                         .router_bias_row = true};

/* ERNIE-4.5-VL's decoder (modeling_ernie4_5_vl_moe.py Ernie4_5_VLMoeMoeBlock): the text experts and their router
 * under mlp.text_moe, the shared experts under mlp (the vision group, mlp.vision_moe, is the reader's own). */
const mp_names mpm_names_ernie4_5_vl_moe = {MP_NAMES_LLAMA_FIELDS,
                                            .moe = MP_NAMES_LAYERS ".mlp.text_moe",
                                            .shared = MP_NAMES_LAYERS ".mlp",
                                            .router = {"gate.weight", "gate.moe_statics.e_score_correction_bias"},
                                            .router_bias_row = true};

/* GraniteMoE (modeling_granitemoe.py): block_sparse_moe.router and experts; GraniteMoeHybrid's shared_mlp
 * (input_linear: gate and up fused, output_linear). */
const mp_names mpm_names_granitemoe = {MP_NAMES_LLAMA_FIELDS,
                                       .moe = L ".block_sparse_moe",
                                       .shared = L,
                                       .router = {"router.weight", NULL},
                                       .sh_gate_up = {"shared_mlp.input_linear.weight", NULL},
                                       .sh_down = {"shared_mlp.output_linear.weight", NULL}};

/* Llama 4 (modeling_llama4.py): the decoder under language_model.model, its head language_model.lm_head; feed_forward
 * (router, experts [E, h, 2f] and [E, f, h], shared_expert) or a dense feed_forward. */
const mp_names mpm_names_llama4 = {MP_NAMES_LLAMA_FIELDS,
                                   .head_root = "language_model.",
                                   .mlp = L ".feed_forward",
                                   .moe = L ".feed_forward",
                                   .router = {"router.weight", NULL},
                                   .experts_t = true,
                                   .sh_gate = {"shared_expert.gate_proj.weight", NULL},
                                   .sh_up = {"shared_expert.up_proj.weight", NULL},
                                   .sh_down = {"shared_expert.down_proj.weight", NULL}};
/* Llama4ForCausalLM alone (llama4_text): the decoder at the top. */
const mp_names mpm_names_llama4_text = {MP_NAMES_LLAMA_FIELDS,
                                        .mlp = L ".feed_forward",
                                        .moe = L ".feed_forward",
                                        .router = {"router.weight", NULL},
                                        .experts_t = true,
                                        .sh_gate = {"shared_expert.gate_proj.weight", NULL},
                                        .sh_up = {"shared_expert.up_proj.weight", NULL},
                                        .sh_down = {"shared_expert.down_proj.weight", NULL}};

/* Mamba, Falcon-Mamba, Mamba-2 (modeling_mamba.py, modeling_mamba2.py): backbone.embeddings, layers.{i}.norm and
 * mixer, norm_f. */
const mp_names mpm_names_mamba = {MP_NAMES_LLAMA_FIELDS,
                                  .root = "backbone.",
                                  .embed = {"embeddings.weight", NULL},
                                  .final_norm = {"norm_f.weight", NULL},
                                  .mixer = L ".mixer",
                                  .norms = {{"norm.weight", NULL}}};

/* Jamba, Bamba, Falcon-H1 (modeling_jamba.py, modeling_bamba.py, modeling_falcon_h1.py): mamba and feed_forward,
 * input_layernorm and pre_ff_layernorm, final_layernorm; Jamba's MoE feed_forward.router and experts. */
const mp_names mpm_names_jamba = {MP_NAMES_LLAMA_FIELDS,
                                  .final_norm = {"final_layernorm.weight", NULL},
                                  .mlp = L ".feed_forward",
                                  .moe = L ".feed_forward",
                                  .router = {"router.weight", NULL},
                                  .norms = {{"input_layernorm.weight", NULL}, {"pre_ff_layernorm.weight", NULL}}};

/* GraniteMoeHybrid (modeling_granitemoehybrid.py): GraniteMoE's names with mamba mixers. */
const mp_names mpm_names_granitemoehybrid = {MP_NAMES_LLAMA_FIELDS,
                                             .moe = L ".block_sparse_moe",
                                             .shared = L,
                                             .router = {"router.weight", NULL},
                                             .sh_gate_up = {"shared_mlp.input_linear.weight", NULL},
                                             .sh_down = {"shared_mlp.output_linear.weight", NULL}};
/* GraniteMoeHybrid without experts (num_local_experts 0): the shared MLP is the layer's only MLP, under its own name. */
const mp_names mpm_names_granitemoehybrid_dense = {MP_NAMES_LLAMA_FIELDS,
                                                   .mlp = L,
                                                   .gate_up = {"shared_mlp.input_linear.weight", NULL},
                                                   .down = {"shared_mlp.output_linear.weight", NULL}};

/* Nemotron-H (modeling_nemotron_h.py): every layer one mixer (Mamba-2, attention, MLP or MoE) behind one norm;
 * model.embeddings and norm_f. */
const mp_names mpm_names_nemotron_h = {MP_NAMES_LLAMA_FIELDS,
                                       .embed = {"embeddings.weight", NULL},
                                       .final_norm = {"norm_f.weight", NULL},
                                       .attn = L ".mixer",
                                       .mlp = L ".mixer",
                                       .moe = L ".mixer",
                                       .mixer = L ".mixer",
                                       .norms = {{"norm.weight", NULL}}};

/* OLMo-Hybrid (modeling_olmo_hybrid.py): Llama's names, the gated delta net under linear_attn; every layer's
 * post_attention_layernorm (the reader lists the attention layers' post_feedforward_layernorm and the linear layers'
 * input_layernorm). */
const mp_names mpm_names_olmo_hybrid = {MP_NAMES_LLAMA_FIELDS,
                                        .mixer = L ".linear_attn",
                                        .norms = {{"post_attention_layernorm.weight", NULL}}};

/* LFM3 (modeling_lfm3.py): LFM2's conv, feed_forward and embedding_norm with Llama's attention names (q_proj, k_proj,
 * v_proj, o_proj with biases, q_norm, k_norm); operator_norm and ffn_norm, then the sandwich norms post_operator_norm and
 * post_ffn_norm (norms_per_layer 4 with use_sandwich_norm). */
const mp_names mpm_names_lfm3 = {MP_NAMES_LLAMA_FIELDS,
                                 .final_norm = {"embedding_norm.weight", NULL},
                                 .mlp = L ".feed_forward",
                                 .mixer = L ".conv",
                                 .gate = {"w1.weight", NULL},
                                 .up = {"w3.weight", NULL},
                                 .down = {"w2.weight", NULL},
                                 .norms = {{"operator_norm.weight", NULL},
                                           {"ffn_norm.weight", NULL},
                                           {"post_operator_norm.weight", NULL},
                                           {"post_ffn_norm.weight", NULL}}};

/* LFM2 (modeling_lfm2.py): operator_norm and ffn_norm, self_attn.out_proj, q_layernorm and k_layernorm, conv,
 * feed_forward.w1 (gate), w3 (up), w2 (down), the final embedding_norm. */
const mp_names mpm_names_lfm2 = {MP_NAMES_LLAMA_FIELDS,
                                 .final_norm = {"embedding_norm.weight", NULL},
                                 .o = {"out_proj.weight", NULL},
                                 .q_norm = {"q_layernorm.weight", NULL},
                                 .k_norm = {"k_layernorm.weight", NULL},
                                 .mlp = L ".feed_forward",
                                 .moe = L ".feed_forward",
                                 .mixer = L ".conv",
                                 .gate = {"w1.weight", NULL},
                                 .up = {"w3.weight", NULL},
                                 .down = {"w2.weight", NULL},
                                 .router_correction = "expert_bias",
                                 .norms = {{"operator_norm.weight", NULL}, {"ffn_norm.weight", NULL}}};

/* Qwen3-Next (modeling_qwen3_next.py): linear_attn mixers, Qwen's shared_expert. */
const mp_names mpm_names_qwen3_next = {MP_NAMES_LLAMA_FIELDS,
                                       .mixer = L ".linear_attn",
                                       .sh_gate = {"shared_expert.gate_proj.weight", NULL},
                                       .sh_up = {"shared_expert.up_proj.weight", NULL},
                                       .sh_down = {"shared_expert.down_proj.weight", NULL}};
/* Qwen3.5 (modeling_qwen3_5.py): the gated delta net's projections apart. */
const mp_names mpm_names_qwen3_5 = {MP_NAMES_LLAMA_FIELDS,
                                    .mixer = L ".linear_attn",
                                    .gdn_split = true,
                                    .sh_gate = {"shared_expert.gate_proj.weight", NULL},
                                    .sh_up = {"shared_expert.up_proj.weight", NULL},
                                    .sh_down = {"shared_expert.down_proj.weight", NULL}};

/* Qwen4-Exp (modeling_qwen4_exp.py): Qwen3.5's names, no layer norms and no final norm (its hyper-connections' hc_norm
 * take their place, listed by the reader). */
const mp_names mpm_names_qwen4_exp = {MP_NAMES_LLAMA_FIELDS,
                                      .mixer = L ".linear_attn",
                                      .gdn_split = true,
                                      .sh_gate = {"shared_expert.gate_proj.weight", NULL},
                                      .sh_up = {"shared_expert.up_proj.weight", NULL},
                                      .sh_down = {"shared_expert.down_proj.weight", NULL},
                                      .final_norm = {NULL, NULL}};

/* LongCat-Flash (modeling_longcat_flash.py): each decoder layer two blocks ({j}: self_attn.{j}, mlps.{j},
 * input_layernorm.{j}, post_attention_layernorm.{j}), planned as two layers; the shortcut MoE's router.classifier and
 * router.e_score_correction_bias. */
const mp_names mpm_names_longcat = {MP_NAMES_LLAMA_FIELDS,
                                    .attn = L ".self_attn.{j}",
                                    .mlp = L ".mlps.{j}",
                                    .router = {"router.classifier.weight", "router.classifier.bias"},
                                    .router_correction = "router.e_score_correction_bias",
                                    .norms = {{"input_layernorm.{j}.weight", NULL},
                                              {"post_attention_layernorm.{j}.weight", NULL}}};

/* Zamba2 (modeling_zamba2.py): Mamba-2 layers (layers.{i}.mamba, input_layernorm) and hybrid layers whose own Mamba-2
 * block is layers.{i}.mamba_decoder; the shared transformer blocks and adapters are the reader's; final_layernorm. */
const mp_names mpm_names_zamba2 = {MP_NAMES_LLAMA_FIELDS,
                                   .final_norm = {"final_layernorm.weight", NULL},
                                   .hybrid_layer = L ".mamba_decoder",
                                   .hybrid_mixer = L ".mamba_decoder.mamba",
                                   .norms = {{"input_layernorm.weight", NULL}}};

/* Gemma 4 (modeling_gemma4.py): four norms per layer, then post_per_layer_input_norm with per-layer inputs and the MoE
 * block's three (post_feedforward_layernorm_1 and _2, pre_feedforward_layernorm_2); the MoE block sits on the layer
 * (router.proj, experts); [0] neither, [1] per-layer inputs, [2] the MoE block, [3] both. */
#define GEMMA4_FIELDS MP_NAMES_LLAMA_FIELDS, .moe = L, .router = {"router.proj.weight", NULL}
#define GEMMA_NORMS                                                                                                   \
	{"input_layernorm.weight", NULL}, {"post_attention_layernorm.weight", NULL},                                    \
	    {"pre_feedforward_layernorm.weight", NULL}, {"post_feedforward_layernorm.weight", NULL}
#define GEMMA_PLE_NORM {"post_per_layer_input_norm.weight", NULL}
#define GEMMA4_MOE_NORMS                                                                                              \
	{"post_feedforward_layernorm_1.weight", NULL}, {"post_feedforward_layernorm_2.weight", NULL},                   \
	    {"pre_feedforward_layernorm_2.weight", NULL}
const mp_names mpm_names_gemma4[4] = {
    {GEMMA4_FIELDS, .norms = {GEMMA_NORMS}},
    {GEMMA4_FIELDS, .norms = {GEMMA_NORMS, GEMMA_PLE_NORM}},
    {GEMMA4_FIELDS, .norms = {GEMMA_NORMS, GEMMA4_MOE_NORMS}},
    {GEMMA4_FIELDS, .norms = {GEMMA_NORMS, GEMMA_PLE_NORM, GEMMA4_MOE_NORMS}},
};

/* Gemma 3n (modeling_gemma3n.py): the four norms, AltUp's router_norm and LAuReL's post_laurel_norm, then
 * post_per_layer_input_norm with per-layer inputs ([1]) or not ([0]). */
#define GEMMA3N_NORMS GEMMA_NORMS, {"altup.router_norm.weight", NULL}, {"laurel.post_laurel_norm.weight", NULL}
const mp_names mpm_names_gemma3n[2] = {
    {MP_NAMES_LLAMA_FIELDS, .norms = {GEMMA3N_NORMS}},
    {MP_NAMES_LLAMA_FIELDS, .norms = {GEMMA3N_NORMS, GEMMA_PLE_NORM}},
};

/* OPT (modeling_opt.py): model.decoder.embed_tokens and embed_positions (the reader's), layers.{i}.self_attn.
 * {q,k,v,out}_proj, self_attn_layer_norm, fc1, fc2 and final_layer_norm on the layer, the decoder's final_layer_norm;
 * with word_embed_proj_dim narrower than hidden, the reader lists the embeddings and the head itself. */
#define OPT_FIELDS                                                                                                     \
	MP_NAMES_LLAMA_FIELDS, .root = "model.decoder.", .positions = {NULL, NULL},                                     \
	.final_norm = {"final_layer_norm.weight", "final_layer_norm.bias"}, .mlp = L,                                  \
	.o = {"out_proj.weight", "out_proj.bias"}, .up = {"fc1.weight", "fc1.bias"}, .down = {"fc2.weight", "fc2.bias"}, \
	.norms = {{"self_attn_layer_norm.weight", "self_attn_layer_norm.bias"},                                         \
	          {"final_layer_norm.weight", "final_layer_norm.bias"}}
const mp_names mpm_names_opt = {OPT_FIELDS};
const mp_names mpm_names_opt_proj = {OPT_FIELDS, .embed = {NULL, NULL}, .lm_head = {NULL, NULL}};

/* BLOOM (modeling_bloom.py): transformer.word_embeddings, h.{i}.input_layernorm, self_attention.query_key_value and
 * dense, post_attention_layernorm, mlp.dense_h_to_4h and dense_4h_to_h, ln_f (word_embeddings_layernorm: the
 * reader's). */
const mp_names mpm_names_bloom = {FALCON_FIELDS,
                                  .norms = {{"input_layernorm.weight", "input_layernorm.bias"},
                                            {"post_attention_layernorm.weight", "post_attention_layernorm.bias"}}};

/* GPT-Neo (modeling_gpt_neo.py): GPT-2's trunk as nn.Linear, h.{i}.attn.attention.{q,k,v,out}_proj. */
const mp_names mpm_names_gpt_neo = {GPT2_FIELDS, .attn = "h.{i}.attn.attention", .qkv = {NULL, NULL},
                                    .o = {"out_proj.weight", "out_proj.bias"}};

/* CodeGen (modeling_codegen.py): GPT-J's names with one fused h.{i}.attn.qkv_proj. */
const mp_names mpm_names_codegen = {MP_NAMES_LLAMA_FIELDS,
                                    .root = "transformer.",
                                    .embed = {"wte.weight", NULL},
                                    .final_norm = {"ln_f.weight", "ln_f.bias"},
                                    .layer = "h.{i}",
                                    .attn = "h.{i}.attn",
                                    .mlp = "h.{i}.mlp",
                                    .qkv = {"qkv_proj.weight", "qkv_proj.bias"},
                                    .o = {"out_proj.weight", "out_proj.bias"},
                                    .up = {"fc_in.weight", "fc_in.bias"},
                                    .down = {"fc_out.weight", "fc_out.bias"},
                                    .norms = {{"ln_1.weight", "ln_1.bias"}}};

/* MPT (modeling_mpt.py): transformer.wte, blocks.{i}.norm_1, attn.Wqkv and out_proj, norm_2, ffn.up_proj and
 * down_proj, norm_f; the LayerNorms' bias is None (no bias leaf). */
const mp_names mpm_names_mpt = {MP_NAMES_LLAMA_FIELDS,
                                .root = "transformer.",
                                .embed = {"wte.weight", NULL},
                                .final_norm = {"norm_f.weight", NULL},
                                .layer = "blocks.{i}",
                                .attn = "blocks.{i}.attn",
                                .mlp = "blocks.{i}.ffn",
                                .qkv = {"Wqkv.weight", "Wqkv.bias"},
                                .o = {"out_proj.weight", "out_proj.bias"},
                                .norms = {{"norm_1.weight", NULL}, {"norm_2.weight", NULL}}};

/* Llama 3.2 Vision's decoder (modeling_mllama.py MllamaTextModel under model.language_model): Llama's names; the
 * reader lists embed_tokens (8 rows more than the vocabulary) and the cross-attention layers' modules itself. */
const mp_names mpm_names_mllama = {MP_NAMES_LLAMA_FIELDS, .embed = {NULL, NULL}};

/* XGLM (modeling_xglm.py): OPT's layer names under model., the decoder's layer_norm. BioGPT (modeling_biogpt.py):
 * the same under biogpt., its tied head output_projection. */
const mp_names mpm_names_xglm = {OPT_FIELDS, .root = "model.", .final_norm = {"layer_norm.weight", "layer_norm.bias"}};
const mp_names mpm_names_biogpt = {OPT_FIELDS, .root = "biogpt.", .final_norm = {"layer_norm.weight", "layer_norm.bias"},
                                   .lm_head = {"output_projection.weight", NULL}};

/* HyperCLOVAX (modeling_hyperclovax.py): post_norm1 and post_norm2 after the attention and the MLP. */
const mp_names mpm_names_hyperclovax = {MP_NAMES_LLAMA_FIELDS,
                                        .norms = {{"input_layernorm.weight", NULL},
                                                  {"post_attention_layernorm.weight", NULL},
                                                  {"post_norm1.weight", NULL},
                                                  {"post_norm2.weight", NULL}}};

/* VaultGemma (modeling_vaultgemma.py): input_layernorm and pre_feedforward_layernorm. */
const mp_names mpm_names_vaultgemma = {
    MP_NAMES_LLAMA_FIELDS,
    .norms = {{"input_layernorm.weight", NULL}, {"pre_feedforward_layernorm.weight", NULL}}};

/* nanochat (modeling_nanochat.py): mlp.fc1 and fc2 (ReLU^2); its norms hold no weights. */
const mp_names mpm_names_nanochat = {MP_NAMES_LLAMA_FIELDS, .up = {"fc1.weight", "fc1.bias"},
                                     .down = {"fc2.weight", "fc2.bias"}};

/* Persimmon (modeling_persimmon.py): self_attn.query_key_value and dense, q_layernorm and k_layernorm,
 * mlp.dense_h_to_4h and dense_4h_to_h, LayerNorms, final_layernorm. */
const mp_names mpm_names_persimmon = {MP_NAMES_LLAMA_FIELDS,
                                      .final_norm = {"final_layernorm.weight", "final_layernorm.bias"},
                                      .qkv = {"query_key_value.weight", "query_key_value.bias"},
                                      .o = {"dense.weight", "dense.bias"},
                                      .q_norm = {"q_layernorm.weight", "q_layernorm.bias"},
                                      .k_norm = {"k_layernorm.weight", "k_layernorm.bias"},
                                      .up = {"dense_h_to_4h.weight", "dense_h_to_4h.bias"},
                                      .down = {"dense_4h_to_h.weight", "dense_4h_to_h.bias"}};

/* CTRL (modeling_ctrl.py): transformer.w, h.{i}.multi_head_attention.Wq, Wk, Wv and dense, ffn.0 and ffn.2,
 * layernorm1 and layernorm2, the final layernorm; the tied head's bias. */
const mp_names mpm_names_ctrl = {MP_NAMES_LLAMA_FIELDS,
                                 .root = "transformer.",
                                 .embed = {"w.weight", NULL},
                                 .final_norm = {"layernorm.weight", "layernorm.bias"},
                                 .layer = "h.{i}",
                                 .attn = "h.{i}.multi_head_attention",
                                 .mlp = "h.{i}.ffn",
                                 .q = {"Wq.weight", "Wq.bias"},
                                 .k = {"Wk.weight", "Wk.bias"},
                                 .v = {"Wv.weight", "Wv.bias"},
                                 .o = {"dense.weight", "dense.bias"},
                                 .up = {"0.weight", "0.bias"},
                                 .down = {"2.weight", "2.bias"},
                                 .norms = {{"layernorm1.weight", "layernorm1.bias"}, {"layernorm2.weight", "layernorm2.bias"}}};

/* GPT-1 (modeling_openai.py): GPT-2's Conv1D names, transformer.tokens_embed and positions_embed. */
const mp_names mpm_names_openai_gpt = {GPT2_FIELDS, .conv1d = true, .embed = {"tokens_embed.weight", NULL},
                                       .positions = {"positions_embed.weight", NULL}};

/* GPT-NeoX-Japanese (modeling_gpt_neox_japanese.py): GPT-NeoX's names under gpt_neox_japanese., the head embed_out. */
const mp_names mpm_names_gpt_neox_japanese = {MP_NAMES_LLAMA_FIELDS,
                                              .root = "gpt_neox_japanese.",
                                              .embed = {"embed_in.weight", NULL},
                                              .final_norm = {"final_layer_norm.weight", "final_layer_norm.bias"},
                                              .lm_head = {"embed_out.weight", NULL},
                                              .attn = L ".attention",
                                              .qkv = {"query_key_value.weight", "query_key_value.bias"},
                                              .o = {"dense.weight", "dense.bias"},
                                              .up = {"dense_h_to_4h.weight", "dense_h_to_4h.bias"},
                                              .down = {"dense_4h_to_h.weight", "dense_4h_to_h.bias"}};

/* Moshi (modeling_moshi.py): q, k, v and o under .linear, mlp.fc1 (gate and up) and fc2; embed_tokens the reader's. */
const mp_names mpm_names_moshi = {MP_NAMES_LLAMA_FIELDS,
                                  .embed = {NULL, NULL},
                                  .q = {"q_proj.linear.weight", NULL},
                                  .k = {"k_proj.linear.weight", NULL},
                                  .v = {"v_proj.linear.weight", NULL},
                                  .o = {"o_proj.linear.weight", NULL},
                                  .gate_up = {"fc1.weight", NULL},
                                  .down = {"fc2.weight", NULL}};

/* Apertus 1.5 with a pruned head (output_vocab_size): the reader lists lm_head. */
const mp_names mpm_names_apertus_pruned = {
    MP_NAMES_LLAMA_FIELDS,
    .lm_head = {NULL, NULL},
    .norms = {{"attention_layernorm.weight", NULL}, {"feedforward_layernorm.weight", NULL}}};

/* DBRX (modeling_dbrx.py): transformer.wte, blocks.{i}.norm_attn_norm.norm_1, attn.Wqkv and out_proj, norm_2,
 * ffn.router.layer (the experts are the reader's), norm_f; LayerNorms without bias. */
const mp_names mpm_names_dbrx = {MP_NAMES_LLAMA_FIELDS,
                                 .root = "transformer.",
                                 .embed = {"wte.weight", NULL},
                                 .final_norm = {"norm_f.weight", NULL},
                                 .layer = "blocks.{i}.norm_attn_norm",
                                 .attn = "blocks.{i}.norm_attn_norm.attn",
                                 .moe = "blocks.{i}.ffn",
                                 .qkv = {"Wqkv.weight", NULL},
                                 .o = {"out_proj.weight", NULL},
                                 .router = {"router.layer.weight", NULL},
                                 .experts_gate_up = {NULL, NULL},
                                 .experts_down = {NULL, NULL},
                                 .norms = {{"norm_1.weight", NULL}, {"norm_2.weight", NULL}}};

/* JetMoE (modeling_jetmoe.py): its mixture of attention is the reader's (self_attention.kv_proj and experts); the MLP
 * experts mlp.input_linear and output_linear with mlp.router.layer. */
const mp_names mpm_names_jetmoe = {MP_NAMES_LLAMA_FIELDS,
                                   .q = {NULL, NULL},
                                   .k = {NULL, NULL},
                                   .v = {NULL, NULL},
                                   .o = {NULL, NULL},
                                   .router = {"router.layer.weight", NULL},
                                   .experts_gate_up = {"input_linear.weight", NULL},
                                   .experts_down = {"output_linear.weight", NULL}};

/* A.X K2's names (modeling_axk2.py): no q_b_proj (the reader lists q_gate_proj), the input norm a gated RMSNorm
 * (input_layernorm.norm; its gate MLP and the post-attention norms are the reader's). */
const mp_names mpm_names_axk2 = {MP_NAMES_LLAMA_FIELDS, .q_b = {NULL, NULL},
                                 .norms = {{"input_layernorm.norm.weight", NULL}}};

/* Muse Spark (modeling_muse_spark.py): input_layernorm, pre_feedforward_layernorm and post_feedforward_layernorm (its
 * post_attention_layernorm has no weight). */
const mp_names mpm_names_muse_spark = {
    MP_NAMES_LLAMA_FIELDS,
    .norms = {{"input_layernorm.weight", NULL},
              {"pre_feedforward_layernorm.weight", NULL},
              {"post_feedforward_layernorm.weight", NULL}}};

/* ZAYA (modeling_zaya.py): q and k under self_attn.qkv_proj, V in halves and the router the reader's own. */
const mp_names mpm_names_zaya = {MP_NAMES_LLAMA_FIELDS,
                                 .q = {"qkv_proj.q_proj.weight", "qkv_proj.q_proj.bias"},
                                 .k = {"qkv_proj.k_proj.weight", "qkv_proj.k_proj.bias"},
                                 .v = {NULL, NULL},
                                 .router = {NULL, NULL}};
