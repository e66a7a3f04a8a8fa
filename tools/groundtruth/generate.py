#!/usr/bin/env python3
"""
generate.py: the ground truth of memplan's model readers, made by transformers itself (run by hand, never by CI).

For each case (a model type's default config, or a published checkpoint's config.json kept in configs/):
  1. builds the model transformers builds from the config on the meta device (no memory, no weights) and records
     PyTorch's count of its unique parameters, total and per component, with the shape of every parameter
     (layer indices folded: "model.layers.*.self_attn.q_proj.weight": [[4096, 4096], 32]);
  2. builds a tiny copy (the same cache-relevant widths, kinds of layer and layer pattern; few layers, a small
     vocabulary, few experts, windows and chunks shrunk to 8 tokens so that a cap shows) in bf16 on the CPU, runs
     it with use_cache=True at two lengths with batch 2, and records what its cache holds per layer: every tensor
     (keys, values, conv and recurrent states) with its shape, dtype and bytes.

The output (tests/ref/hf/groundtruth.json) also gives, per tiny run, the bytes the engine layout holds (the
convention memplan follows, vLLM's): a sliding-window layer holds min(tokens, window) tokens where transformers
keeps window - 1; a chunked-attention layer holds min(tokens, chunk) tokens; a conv state holds conv_kernel - 1
columns where transformers keeps conv_kernel. Every other tensor counts as transformers holds it.

Usage (from the repository root):
  make -C tools/groundtruth venv         # tools/groundtruth/.venv: CPU is enough (torch, transformers from PyPI)
  tools/groundtruth/.venv/bin/python tools/groundtruth/generate.py [--only TYPE,...] [--no-cache]
"""
import argparse
import copy
import gc
import json
import os
import re
import sys
import time

import torch
import transformers
from transformers import AutoConfig
from transformers.cache_utils import DynamicSlidingWindowLayer

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "tests", "ref", "hf", "groundtruth.json")
CONFIGS = os.path.join(HERE, "configs")

# The model types of the issue, in the order the readers were written. Each gets its default config (the
# transformers configuration class's defaults); published configs in configs/ add real checkpoints.
TYPES = """llama mistral mixtral qwen2 qwen2_moe qwen3 qwen3_moe gemma gemma2 gemma3_text phi3 gpt2 gpt_neox falcon
deepseek_v3 granite olmo olmo2 olmo3 olmoe cohere cohere2 smollm3 arcee apertus ernie4_5 ernie4_5_moe exaone4 glm glm4
glm4_moe starcoder2 stablelm phi gptj gpt_bigcode nemotron seed_oss hunyuan_v1_dense hunyuan_v1_moe deepseek_v2
granitemoe phimoe mamba mamba2 falcon_mamba gpt_oss bitnet dots1 minimax_m2 exaone ministral3 jamba bamba nemotron_h
falcon_h1 lfm2 lfm2_moe qwen3_next gemma3 llama4 mistral3 llava qwen2_vl qwen2_5_vl qwen3_vl qwen3_vl_moe qwen3_5
qwen3_5_moe glm4_moe_lite granitemoehybrid kimi_linear longcat_flash minimax zamba2 gemma3n deepseek_v32 deepseek_v4
gemma4 glm_moe_dsa helium
opt bloom gpt_neo codegen mpt mllama
cwm vaultgemma granite_swa nanochat persimmon xglm biogpt emu3 internlm3 iquestcoder hyperclovax diffllama
ctrl openai-gpt gpt-sw3 gpt_neox_japanese moshi
sarvam_mla minicpm3 youtu sarvam_moe mellum solar_open flex_olmo granitemoeshared granitemoe_swa cohere2_moe
shieldgemma2 llava_next llava_next_video vipllava llava_onevision paligemma lighton_ocr cohere2_vision
ministral apertus1p5_text dbrx
cosmos3_omni idefics3 smolvlm idefics2 internvl
glm4v glm46v glmga glm4v_moe fuyu deepseek_vl jetmoe exaone_moe hy_v3
rwkv recurrent_gemma mistral4 jais2 aria_text kolibri1 flint laguna afmoe axk1 beam
gemma4_unified_text gemma4_unified lfm3
mimo_v2_flash minimax_m3_vl_text cohere_compass_text cohere_compass axk2 hy_v4 hy_v4_vl minimax_m3_vl
blip-2 instructblip instructblipvideo got_ocr2 pp_chart2table deepseek_vl_hybrid qianfan_ocr
video_llama_3 exaone4_5 paddleocr_vl cosmos3_edge kimi_k25
video_llava lfm2_vl aya_vision hyperclovax_vision_v2 qwen2_5_omni_thinker qwen3_omni_moe_thinker
zamba olmo_hybrid lara_mini hrm_text
granite4_vision
minicpmv4_6 minicpmv4_7 minicpm_ocr ovis2 moss_transcribe_diarize git aria glm_ocr
doge modernbert-decoder xlstm dory cpmant
step3p7
lfm3_vl granite_docling
unlimited_ocr deepseek_ocr2 chameleon
inkling_text inkling2_text inkling2_loop_text inkling2 inkling2_loop inkling_mm_model
mistral_large4 dots3_note_text qwen4_exp_text qwen4_exp dots3_note glm5_next
fast_vlm hunyuan_vl molmo2 kosmos-2 kosmos-2.5 perception_lm
nemotron_h_omni phi4_multimodal muse_glimmer muse_spark bailing_hybrid zaya
janus idefics apertus1p5
ernie4_5_vl_moe""".split()

TINY_WINDOW = 8           # sliding windows and attention chunks of the tiny copies, tokens
LENGTHS = (5, 24)         # prompt lengths of the tiny runs: below and above TINY_WINDOW
BATCH = 2


def text_config(cfg):
    return getattr(cfg, "text_config", None) or cfg


def build(cfg, device):
    """The model transformers builds for text generation from cfg (ForCausalLM, else the image-text-to-text class;
    the image-text-to-text class first for a config with a vision_config)."""
    from transformers import AutoModelForCausalLM, AutoModelForImageTextToText
    errors = []
    # a multimodal config builds its image-text model (tower and projector included), as its checkpoint holds them
    order = (AutoModelForImageTextToText, AutoModelForCausalLM) if getattr(cfg, "vision_config", None) is not None \
        else (AutoModelForCausalLM, AutoModelForImageTextToText)
    for auto in order:
        try:
            with torch.device(device):
                return auto.from_config(cfg), auto.__name__
        except (ValueError, KeyError) as e:
            errors.append(f"{auto.__name__}: {e}")
    raise RuntimeError("; ".join(errors))


VISION = re.compile(r"(^|\.)(vision_tower|video_tower|image_tower|projector|visual|vision_model|vision_embed|vision_embed_tokens|multi_modal_projector|mm_projector|image_newline|vision_encoder|vision_projection|connector|aligner|"
                    r"audio_tower|audio_model|embed_vision|embed_audio|vision|audio|"
                    r"qformer|query_tokens|language_projection|high_res_vision_model|high_res_vision_neck|high_res_vision_proj|"
                    r"high_res_vision_alpha|layerwise_projectors|spatial_projectors|merger|visual_embeddings_table|"
                    r"visual_projection|img_temporal_embedding|density_router|view_separator|image_to_text_projection|"
                    r"vqmodel|generation_embeddings|generation_aligner|generation_head|vision_final_layernorm|"
                    r"embed_tokens_extend|vision_adapter|perceiver_resampler|vision_tokenizer|audio_tokenizer|resampler_model)(\.|$)")
EMBED = re.compile(r"(embed_tokens|wte|wpe|embed_in|word_embeddings|embed_positions|git\.embeddings\.position_embeddings|embed_tokens_per_layer|backbone\.embeddings|model\.embeddings|rwkv\.embeddings|"
                   r"tokens_embed|positions_embed|^transformer\.w|embeddings\.tok_embeddings|^cpmant\.input_embedding|"
                   r"^cpmant\.segment_embedding|embed_tokens\.additional_embedding|^text_model\.model\.segment_emb)\.weight$")


def component(name, p):
    """The class of a parameter, for the per-component figures (matches memplan's breakdown where it can)."""
    if VISION.search(name):
        return "vision"
    if re.search(r"(^|\.)(lm_head|embed_out|output_projection)\.", name) or name == "head.weight" \
            or name.startswith("decoder.") or re.match(r"output\.(weight|bias)$", name):
        # RWKV's head, BioGPT's; ModernBERT-decoder's top-level `decoder`; GIT's `output`
        return "lm_head"
    if EMBED.search(name):
        return "embedding"
    return "decoder"


def count(cfg):
    model, cls = build(cfg, "meta")
    seen = set()
    comp = {}
    shapes = {}
    for name, p in model.named_parameters():   # named_parameters() yields a tied tensor once
        if id(p) in seen:
            continue
        seen.add(id(p))
        c = component(name, p)
        comp[c] = comp.get(c, 0) + p.numel()
        key = re.sub(r"\.\d+\.", ".*.", name)
        key = re.sub(r"\.\d+\.", ".*.", key)
        ent = shapes.setdefault(key, [list(p.shape), 0])
        ent[1] += 1
    buffers = {}
    for name, b in model.named_buffers():
        key = re.sub(r"\.\d+\.", ".*.", name)
        key = re.sub(r"\.\d+\.", ".*.", key)
        ent = buffers.setdefault(key, [list(b.shape), str(b.dtype).replace("torch.", ""), 0])
        ent[2] += 1
    total = sum(comp.values())
    del model
    gc.collect()
    return {"class": cls, "total": total, "components": comp, "parameters": shapes, "buffers": buffers}


# ----- tiny copies ----------------------------------------------------------------------------------------------

EXPERT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts", "num_experts_total")
TOPK_KEYS = ("num_experts_per_tok", "moe_k", "top_k", "num_experts_per_token", "moe_topk")
WINDOW_KEYS = ("sliding_window", "attention_chunk_size", "local_window_size", "window_size", "attention_window_size")
# Types whose recurrent state transformers keeps on the modules rather than in the returned cache
# (RecurrentGemmaRecurrentBlock.conv1d_state, RecurrentGemmaRglru.recurrent_states): the tiny run passes a cache
# of its own (the model returns none) and records these attributes too.
MODULE_STATE_TYPES = ("recurrent_gemma",)
MODULE_STATE_ATTRS = ("conv1d_state", "recurrent_states")
# Types whose decoder returns no cache unless given one (Granite4VisionTextModel in 5.24 never creates its
# DynamicCache): the tiny run passes a DynamicCache of its own, as an engine allocates one.
CACHE_PASSED_TYPES = ("granite4_vision_text",)
# Types whose forward needs the modules of _keep_in_fp32_modules_strict in fp32 (Inkling 2's fp32 router and
# convolutions meet fp32 inputs): after the cast to bf16 they are put back, as from_pretrained(dtype=torch.bfloat16)
# keeps them (modeling_utils._get_dtype_plan, matched as a search in each parameter's and buffer's name).
KEEP_FP32_TYPES = ("inkling2_text", "inkling2_loop_text", "inkling2", "inkling2_loop")


def keep_fp32(model, tc):
    """model, with its _keep_in_fp32_modules_strict tensors in fp32 when tc's type needs them so (KEEP_FP32_TYPES)."""
    pats = sorted(getattr(model, "_keep_in_fp32_modules_strict", None) or ())
    if getattr(tc, "model_type", None) not in KEEP_FP32_TYPES or not pats:
        return model
    rx = re.compile("|".join(re.escape(p) for p in pats))
    with torch.no_grad():
        for name, t in list(model.named_parameters()) + list(model.named_buffers()):
            if rx.search(name) and t.dtype != torch.float32:
                t.data = t.data.float()
    return model



def idefics_inputs(cfg, ids):
    """IDEFICS (IdeficsModel.forward) runs no text-only forward (ValueError: "Exactly 1 of pixel_values,
    image_encoder_embeddings or perceiver_embeddings has to be not-None"), and its gated cross-attention layers need
    an image: one blank image per sequence, every token attending it. The cache is the self-attention layers' (the
    cross-attention layers keep none: "Past key value states are not implemented")."""
    vc = cfg.vision_config
    b, n = ids.shape
    return {"pixel_values": torch.zeros(b, 1, vc.num_channels, vc.image_size, vc.image_size, dtype=torch.bfloat16),
            "image_attention_mask": torch.ones(b, n, 1, dtype=torch.long)}


# Types whose forward needs an image: the extra inputs of a run of ids.
IMAGE_INPUT_TYPES = {"idefics": idefics_inputs}


def layer_pattern(tc):
    for key in ("layer_types", "layers_block_type", "hybrid_override_pattern", "layers_block_types"):
        v = getattr(tc, key, None)
        if isinstance(v, (list, str)) and len(v) > 0:
            return key, list(v)
    return None, None


def tiny_layers(tc):
    """How many leading layers keep every kind of layer the model has (at least 2, at most 12)."""
    key, pat = layer_pattern(tc)
    n = getattr(tc, "num_hidden_layers", None) or 2
    want = 2
    if pat:
        kinds = set(pat)
        got = set()
        for i, k in enumerate(pat):
            got.add(k)
            if got == kinds:
                want = max(want, i + 1)
                break
    for k in ("first_k_dense_replace", "first_dense_layers", "moe_layer_start_index"):
        v = getattr(tc, k, None)
        if isinstance(v, int) and v > 0:
            want = max(want, v + 1)
    if getattr(tc, "model_type", None) == "zamba" and pat:
        # ZambaModel ties every hybrid layer's shared_transf to the first one's, and transformers 5.24 refuses a Zamba
        # with a single hybrid layer (its _tied_weights_keys then match no parameter): the tiny copy keeps two
        hybrid = [i for i, k in enumerate(pat) if k == "hybrid"]
        if len(hybrid) >= 2:
            want = max(want, hybrid[1] + 1)
    for k in ("attn_layer_offset", "expert_layer_offset"):
        v = getattr(tc, k, None)
        if isinstance(v, int):
            want = max(want, v + 1)
    for k in ("full_attn_idxs", "cross_attention_layers"):
        v = getattr(tc, k, None)
        if isinstance(v, list) and v:
            want = max(want, min(v) + 1)
    return min(n, max(2, min(want, 12)))


def shrink_text(tc):
    """Tiny copy of a decoder config, in place: few layers, vocabulary 512, at most 4 experts, windows of 8."""
    n = tiny_layers(tc)
    key, pat = layer_pattern(tc)
    full = getattr(tc, "num_hidden_layers", None)
    shared = getattr(tc, "num_kv_shared_layers", None)
    if isinstance(shared, int) and shared > 0 and full:
        # KV shared across layers (Gemma 3n, Gemma 4): the tiny copy keeps the leading layers (every kind of layer,
        # each producing a cache) and after them as many layers again, which reuse the caches of their kinds
        k = min(shared, n, full - n)
        tc.num_kv_shared_layers = k
        n = n + k
    # per-layer overrides (per_layer_config: Gemma 4's full-attention head widths) of the layers kept; the others
    # would name layers the tiny copy does not have (transformers refuses such a config when it is read back)
    spec = tc.__dict__.get("_heterogeneity_spec")
    tc.num_hidden_layers = n
    if spec is not None:
        tc.per_layer_config = {i: dict(o) for i, o in spec.per_layer_overrides.items() if i < n}
    # every other per-layer list (mlp_layer_types, indexer_types, ...) follows the layers kept; index lists do not
    for k, v in list(vars(tc).items()):
        # per-layer lists of numbers too (Gemma 3n's intermediate_size and activation_sparsity_pattern; Mistral Large
        # 4's kv_source_layers, whose entries never exceed their own index, so its first n stay valid)
        if k != key and isinstance(v, list) and full and len(v) == full and n < full and \
                (all(isinstance(x, str) for x in v) or
                 k in ("intermediate_size", "activation_sparsity_pattern", "num_attention_heads_per_layer",
                       "kv_source_layers")):
            try:
                setattr(tc, k, v[:n])
            except AttributeError:
                pass
    try:
        if pat and key != "hybrid_override_pattern":
            setattr(tc, key, pat[:n])
        elif key == "hybrid_override_pattern":
            tc.hybrid_override_pattern = "".join(pat[:n])
    except AttributeError:
        pass    # a pattern derived from other keys (a read-only property): it follows num_hidden_layers
    # GPT-Neo's attention_types ([[kinds], repeats]) is the compact form of attention_layers: it follows the layers
    # kept, so that the tiny config reads back as transformers built it
    if isinstance(getattr(tc, "attention_types", None), list) and isinstance(getattr(tc, "attention_layers", None), list):
        tc.attention_types = [[list(tc.attention_layers), 1]]
    if hasattr(tc, "vocab_size"):
        tc.vocab_size = 512
    if isinstance(getattr(tc, "output_vocab_size", None), int):   # a pruned head (Apertus 1.5) stays narrower
        tc.output_vocab_size = 256
    for k in ("pad_token_id", "bos_token_id", "eos_token_id"):
        v = getattr(tc, k, None)
        if isinstance(v, int) and v >= 512:
            setattr(tc, k, 0)
    for k in EXPERT_KEYS:
        v = getattr(tc, k, None)
        if isinstance(v, int) and v > 4:
            setattr(tc, k, 4)
    for k in TOPK_KEYS:
        v = getattr(tc, k, None)
        if isinstance(v, int) and v > 2:
            setattr(tc, k, 2)
        elif isinstance(v, list) and v and all(isinstance(x, int) for x in v):   # one top-k per layer (Hunyuan)
            setattr(tc, k, [min(x, 2) for x in v][:n])
    for k in ("n_group", "topk_group"):
        if isinstance(getattr(tc, k, None), int):
            setattr(tc, k, 1)
    for k in WINDOW_KEYS:
        v = getattr(tc, k, None)
        if isinstance(v, int) and v > TINY_WINDOW:
            setattr(tc, k, TINY_WINDOW)
    for k in ("attn_layer_indices", "moe_layers", "cross_attention_layers"):   # indices beyond the layers kept: dropped
        v = getattr(tc, k, None)
        if isinstance(v, list):
            setattr(tc, k, [x for x in v if isinstance(x, int) and x < n])
    for k in ("no_rope_layers", "mlp_only_layers", "moe_layers"):
        v = getattr(tc, k, None)
        if isinstance(v, list) and len(v) > n and all(isinstance(x, int) and x in (0, 1) for x in v):
            setattr(tc, k, v[:n])
    # MLP widths do not reach the cache (unless the config is a state-space model's, whose d_inner is one)
    ssm = any(hasattr(tc, k) for k in ("state_size", "ssm_state_size", "mamba_d_state", "mamba_expand"))
    for k in ("intermediate_size", "moe_intermediate_size", "shared_expert_intermediate_size", "ffn_hidden_size"):
        v = getattr(tc, k, None)
        if isinstance(v, int) and v > 256 and not (ssm and k == "intermediate_size"):
            setattr(tc, k, 256)
        elif isinstance(v, list) and v and all(isinstance(x, int) for x in v) and not ssm:
            setattr(tc, k, [min(x, 256) for x in v])
    if getattr(tc, "model_type", None) == "dory":
        # Dory's input, recurrent and output sections must add up to its layers: the tiny copy keeps one input, two
        # recurrent and one output layer of the leading four (both kinds of attention among them by default)
        tc.n_input_layers, tc.n_recurrent_layers, tc.n_output_layers = 1, tc.num_hidden_layers - 2, 1
    if getattr(tc, "model_type", None) == "xlstm":
        tc.num_blocks = tc.num_hidden_layers   # xLSTMModel builds num_blocks blocks, its cache num_hidden_layers
    if getattr(tc, "model_type", None) == "modernbert-decoder":
        # ModernBertDecoderConfig sets sliding_window to local_attention // 2 whatever it is given: the tiny copy's
        # window is stated as its local_attention, so that the config reads back with the window it ran
        tc.local_attention = 2 * TINY_WINDOW
    if getattr(tc, "model_type", None) == "inkling2_loop_text":
        # Inkling 2 Loop's looped layers (6 to 18) lie beyond the layers kept: the tiny copy loops layers 2 to 5 of its
        # 6 (a full-attention one among them) in residual blocks of 2, so that the later passes' cache layers show
        tc.n_layers_per_attn_res_block = 2
        tc.loop_layer_index_start, tc.loop_layer_index_end = 2, tc.num_hidden_layers
    if getattr(tc, "model_type", None) == "hrm_text":
        # HRM-Text's cache has a layer per run of a stack layer (num_layers_per_stack x H_cycles x (L_cycles + 1)):
        # the tiny copy keeps one layer per stack and every cycle
        tc.num_layers_per_stack = 1
        tc.num_hidden_layers = tc.H_cycles * (tc.L_cycles + 1)
    tc.use_cache = True
    return tc


def shrink(cfg):
    cfg = copy.deepcopy(cfg)
    tc = text_config(cfg)
    shrink_text(tc)
    for sub in ("vision_config", "audio_config"):
        vc = getattr(cfg, sub, None)
        # a tower of towers (DeepSeek-OCR's SAM and CLIP or Qwen2 encoders, each a sub-config of vision_config)
        for tower in [vc] + [getattr(vc, s, None) for s in ("sam_config", "encoder_config")] if vc is not None else []:
            for k in ("num_hidden_layers", "depth", "num_layers"):
                if tower is not None and isinstance(getattr(tower, k, None), int):
                    setattr(tower, k, 1)
        if vc is not None and isinstance(getattr(vc, "layer_types", None), list):   # LFM3-VL's tower: one entry per layer kept
            vc.layer_types = vc.layer_types[:1]
        # per-stage lists with one entry per layer (Muse Spark's audio pyramid) keep the first stage, so that the
        # tiny config reads back (MuseSparkAudioConfig.validate_architecture)
        for k in ("patch_sizes", "hidden_sizes", "depths"):
            if vc is not None and isinstance(getattr(vc, k, None), (list, tuple)) and \
                    getattr(vc, "num_hidden_layers", None) == 1:
                setattr(vc, k, list(getattr(vc, k))[:1])
    ac = getattr(cfg, "adapter_config", None)     # Molmo2: the tower layers the adapter reads, now the one kept
    if isinstance(getattr(ac, "vision_feature_layer", None), list):
        ac.vision_feature_layer = [0] * len(ac.vision_feature_layer)
    if isinstance(getattr(cfg, "image_token_offset", None), int) and isinstance(getattr(cfg, "audio_token_offset", None), int):
        # Apertus 1.5: the tokenizers' code ranges follow each other inside the tiny vocabulary, as
        # Apertus1p5Config.validate_architecture requires (so that the tiny config reads back)
        cfg.vision_config.codebook_size = 64
        cfg.audio_config.codebook_size = 64
        cfg.image_token_offset = 128
        cfg.audio_token_offset = 192
    return cfg


def tensors_of(obj, path, out, seen, depth=0):
    if depth > 4 or obj is None:
        return
    if isinstance(obj, torch.Tensor):
        if id(obj) not in seen and obj.numel() > 0 and obj.dim() > 0 and not path.startswith("_"):
            seen.add(id(obj))
            out.append({"tensor": path, "shape": list(obj.shape), "dtype": str(obj.dtype).replace("torch.", ""),
                        "bytes": obj.numel() * obj.element_size()})
        return
    if isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            tensors_of(v, f"{path}[{i}]", out, seen, depth + 1)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            tensors_of(v, f"{path}[{k}]", out, seen, depth + 1)


def cache_layers(cache):
    """Per layer of the cache: its class and every tensor it holds."""
    seen = set()
    layers = []
    if cache is None:
        return layers, []
    for i, layer in enumerate(getattr(cache, "layers", []) or []):
        ts = []
        for k, v in vars(layer).items():
            tensors_of(v, k, ts, seen)
        attrs = {k: v for k, v in vars(layer).items()
                 if isinstance(v, (int, bool)) and k in ("sliding_window", "cumulative_length", "chunk_size")}
        # a window layer whose class name does not say so (DeepSeek-V4's DeepseekV4HCACache / DeepseekV4CSACache
        # derive from DynamicSlidingWindowLayer: their keys slide, their compressor state does not)
        if isinstance(layer, DynamicSlidingWindowLayer) and "Sliding" not in type(layer).__name__:
            attrs["sliding"] = True
        layers.append({"layer": i, "class": type(layer).__name__, "tensors": ts, **attrs})
    rest = []
    for k, v in vars(cache).items():
        if k not in ("layers", "seqlen_offset"):   # xLSTMCache's position counter (one int64), not state
            tensors_of(v, k, rest, seen)
    return layers, rest


def engine_bytes(layer, tokens, tc):
    """Bytes of one cache layer in the engine layout (see the file's comment)."""
    total = 0
    window = layer.get("sliding_window")
    conv_k = None
    for k in ("conv_kernel", "mamba_d_conv", "conv_kernel_size", "linear_conv_kernel_dim", "short_conv_kernel",
              "conv_L_cache"):
        v = getattr(tc, k, None)
        if isinstance(v, int):
            conv_k = v
            break
    for t in layer["tensors"]:
        name, shape, b = t["tensor"], t["shape"], t["bytes"]
        if name in ("keys", "values") or name.startswith(("keys", "values")):
            held = shape[-2]
            if window and ("Sliding" in layer["class"] or layer.get("sliding")):
                want = min(tokens, window)
            elif "Chunked" in layer["class"] and window:
                want = min(tokens, window)
            else:
                # a full layer holds every token, and the tokens a model puts before them (CPM-Ant's prompt)
                want = max(tokens, held)
            total += b // held * want if held else 0
        elif name.startswith("conv_states") and conv_k and shape[-1] == conv_k:
            total += b // conv_k * (conv_k - 1)
        else:
            total += b
    return total


def text_model(cfg):
    """The causal LM of cfg, else of its text_config (a wrapper whose own class has no text-only causal LM), in bf16."""
    from transformers import AutoModelForCausalLM
    torch.manual_seed(0)
    try:
        model = AutoModelForCausalLM.from_config(cfg)
    except (ValueError, KeyError):
        model = AutoModelForCausalLM.from_config(text_config(cfg))
    return model.to(torch.bfloat16).eval()


def text_forward(model, cfg, ids, kw):
    """model's forward of ids with use_cache (and kw); an image-text class whose text-only forward fails
    (Llama4ForConditionalGeneration in 5.24), or that requires pixel_values (BLIP-2, InstructBLIP), runs the text model
    of the same config (or of its text_config) instead, as the cache is the decoder's; Kosmos-2 (ValueError: "specify
    either pixel_values or image_embeds") runs its own text_model, a causal LM outside the mapping. Returns the model
    that ran and its output."""
    try:
        return model, model(input_ids=ids, use_cache=True, **kw)
    except (AttributeError, TypeError, ValueError) as e:
        inner = getattr(model, "text_model", None)
        if isinstance(e, ValueError) and inner is None:
            raise
        model = inner if isinstance(e, ValueError) else text_model(cfg)
        return model, model(input_ids=ids, use_cache=True)


def run_tiny(cfg):
    tiny = shrink(cfg)
    tc = text_config(tiny)
    torch.manual_seed(0)
    torch.set_default_dtype(torch.bfloat16)   # built in bf16 at once: a tiny copy keeps the real widths
    try:
        model, cls = build(tiny, "cpu")
    finally:
        torch.set_default_dtype(torch.float32)
    model = keep_fp32(model.to(torch.bfloat16).eval(), tc)
    runs = []
    module_state = getattr(tc, "model_type", None) in MODULE_STATE_TYPES
    for n in LENGTHS:
        ids = torch.randint(1, 500, (BATCH, n))
        kw = {}
        if module_state or getattr(tc, "model_type", None) in CACHE_PASSED_TYPES:
            from transformers import DynamicCache
            kw["cache"] = DynamicCache(config=tc)
        if getattr(tiny, "model_type", None) in IMAGE_INPUT_TYPES:
            kw.update(IMAGE_INPUT_TYPES[tiny.model_type](tiny, ids))
        with torch.no_grad():
            model, out = text_forward(model, tiny, ids, kw)
        cache = kw.get("cache") or getattr(out, "past_key_values", None) or getattr(out, "cache", None)
        layers, rest = cache_layers(cache)
        if getattr(out, "state", None) is not None:   # RWKV: the state is a list of tensors, not a Cache
            tensors_of(out.state, "state", rest, set())
        if module_state:
            seen = set()
            for mname, mod in model.named_modules():
                for a in MODULE_STATE_ATTRS:
                    v = getattr(mod, a, None)
                    if isinstance(v, torch.Tensor):
                        tensors_of(v, f"{mname}.{a}", rest, seen)
        run = {"batch_size": BATCH, "tokens": n, "cache_class": type(cache).__name__, "layers": layers}
        if rest:
            run["other_tensors"] = rest
        run["transformers_bytes"] = sum(t["bytes"] for l in layers for t in l["tensors"]) + \
            sum(t["bytes"] for t in rest)
        run["engine_bytes"] = sum(engine_bytes(l, n, tc) for l in layers) + sum(t["bytes"] for t in rest)
        runs.append(run)
        del out, cache
    del model
    gc.collect()
    return tiny, runs


def finite(v):
    """JSON has no infinity (Mamba-2's time_step_limit default is (0, inf)): such values are left out."""
    if isinstance(v, float):
        return v == v and v not in (float("inf"), float("-inf"))
    if isinstance(v, (list, tuple)):
        return all(finite(x) for x in v)
    if isinstance(v, dict):
        return all(finite(x) for x in v.values())
    return True


def config_dict(cfg):
    d = cfg.to_dict()
    for k in ("transformers_version", "_name_or_path", "architectures"):
        d.pop(k, None)
    for k in [k for k, v in d.items() if not finite(v)]:
        d.pop(k)
    for sub in ("text_config", "vision_config", "audio_config"):
        if isinstance(d.get(sub), dict):
            for k in [k for k, v in d[sub].items() if not finite(v)]:
                d[sub].pop(k)
    return d


def cases(only):
    out = []
    for t in TYPES:
        if only and t not in only:
            continue
        out.append((f"{t}-default", t, None))
    for f in sorted(os.listdir(CONFIGS)) if os.path.isdir(CONFIGS) else []:
        if not f.endswith(".json"):
            continue
        with open(os.path.join(CONFIGS, f)) as fh:
            d = json.load(fh)
        t = d.get("model_type")
        if only and t not in only:
            continue
        out.append((f[:-5], t, d))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--no-cache", action="store_true")
    ap.add_argument("--out", default=OUT)
    a = ap.parse_args()
    only = set(x for x in a.only.split(",") if x)
    doc = {"about": "Made by tools/groundtruth/generate.py (see its docstring and tests/ref/hf/README.md).",
           "transformers": transformers.__version__, "torch": torch.__version__, "cases": {}}
    if os.path.exists(a.out):
        with open(a.out) as fh:
            old = json.load(fh)
        doc["cases"] = old.get("cases", {})
    for name, t, d in cases(only):
        t0 = time.time()
        entry = {"model_type": t}
        try:
            if d is None:
                cfg = AutoConfig.for_model(t)
            else:
                entry["source"] = d.pop("_source", None)
                cfg = AutoConfig.for_model(t, **{k: v for k, v in d.items() if k != "model_type"})
            entry["config"] = config_dict(cfg) if d is None else dict(d, model_type=t)
            entry["count"] = count(cfg)
            if not a.no_cache:
                tiny, runs = run_tiny(cfg)
                entry["tiny_config"] = config_dict(tiny)
                entry["cache"] = runs
        except Exception as e:  # recorded, so the README can say which types transformers itself cannot build
            entry["error"] = f"{type(e).__name__}: {e}"[:600]
        entry["seconds"] = round(time.time() - t0, 1)
        doc["cases"][name] = entry
        print(f"{name:32s} {entry.get('count', {}).get('total', '-')!s:>14} "
              f"{[r['engine_bytes'] for r in entry.get('cache', [])]} {entry.get('error', '')[:120]} "
              f"({entry['seconds']} s)", flush=True)
        os.makedirs(os.path.dirname(a.out), exist_ok=True)
        with open(a.out, "w") as fh:
            json.dump(doc, fh, indent=1, sort_keys=True)
            fh.write("\n")


if __name__ == "__main__":
    sys.exit(main())
