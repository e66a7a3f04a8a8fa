#!/usr/bin/env python3
"""
variants.py: the differential generator of memplan's model readers (run by hand, never by CI; `make variants`).

For every model type memplan reads (the `.name` of each row of model/mpm_types.c), it draws random valid variants of
the config a user can write: other head and KV-head counts, an explicit head_dim or none, every bias and norm flag
the configuration class has (each a dataclass field typed bool, found in the class itself, not listed by hand),
tie_word_embeddings flipped or left out, sliding windows (null, smaller and larger than the tiny runs' lengths),
layer schedules (layer_types and the lists and indices each family spells its own way), expert, top-k and
shared-expert counts, first dense layers, MLA ranks, conv kernels and state sizes, and vision tower sizes. The
widths are small (a rule must not depend on size) so that every variant runs on the CPU in a second.

Each variant is a config dict; transformers 5.24 builds it (AutoConfig.for_model(model_type, **config)) and
  1. on the meta device (generate.build): PyTorch's count of its unique parameters, total and per component, and its
     state_dict as templates (state_dicts.record: every name with the layer index folded, shape and count);
  2. on the CPU in bf16: a forward with use_cache=True on batch 2 at 5 and 24 tokens, the cache's bytes as
     transformers holds them and in the engine layout memplan follows (generate.engine_bytes: a sliding layer holds
     min(tokens, window) tokens, a conv state conv_kernel - 1 columns).
A variant transformers refuses (its configuration class's validation, the model's constructor, or the forward) is
drawn again from the next seed; the generator also writes, per type, a few configs that break a rule transformers
enforces on purpose (a head count that does not divide, a layer_types list of the wrong length), with transformers'
error, which memplan must refuse with a 422 naming the key.

A variant is stored in one of three forms, in turn: as drawn (the keys a user writes), as save_pretrained writes it
(to_json_string(use_diff=True)), or in full (to_dict(): every key, derived ones included); the reference is always
what transformers builds from the stored form itself.

Seeded: variant i of type t is drawn by random.Random(f"{t}/{i}/{attempt}"), so a run reproduces the same configs
and references with the same transformers and torch (the files differ in their date only).

Output: tests/ref/hf/variants/<model_type>.json (see tests/ref/hf/README.md, "variants/").

Usage (from the repository root; one thread, as the build machines are shared):
  make variants                                                     # every type
  OMP_NUM_THREADS=1 tools/groundtruth/.venv/bin/python tools/groundtruth/variants.py --only llama,gpt2 [-n 12]
"""
import argparse
import copy
import dataclasses
import datetime
import gc
import json
import math
import os
import random
import re
import sys
import time
import typing
import warnings

import torch
import transformers
from transformers import AutoConfig

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate  # noqa: E402  (how a model is built, its cache read and counted)
import state_dicts  # noqa: E402  (the state_dict templates)

ROOT = generate.ROOT
OUT = os.path.join(ROOT, "tests", "ref", "hf", "variants")
TABLE = os.path.join(ROOT, "model", "mpm_types.c")
LENGTHS = (5, 24)
BATCH = 2
ATTEMPTS = 20
DEFAULT_N = 12
# Types whose tiny models are slow to build (Gemma 3n's timm tower and audio conformer: ~50 s each): fewer variants.
N_PER_TYPE = {"gemma3n": 8}
# Types whose variants cannot be checked, and why (tests/ref/hf/README.md)
NO_VARIANTS = {"openai-gpt": "OpenAIGPTLMHeadModel keeps no cache in transformers 5.24: no cache bytes to check"}

# The decoders memplan reads only as a wrapper's text_config (transformers has no causal-LM class for them): their
# variants are the wrapper's.
VIA_WRAPPER = {"qwen2_vl_text": "qwen2_vl", "qwen2_5_vl_text": "qwen2_5_vl", "qwen3_vl_text": "qwen3_vl",
               "qwen3_vl_moe_text": "qwen3_vl_moe", "glm4v_text": "glm4v", "glm4v_moe_text": "glm4v_moe",
               "paddleocr_vl_text": "paddleocr_vl", "cosmos3_edge_text": "cosmos3_edge",
               "qwen2_5_omni_text": "qwen2_5_omni_thinker", "qwen3_omni_moe_text": "qwen3_omni_moe_thinker",
               "glm_ocr_text": "glm_ocr", "hy_v4_vl_text": "hy_v4_vl", "step3p5": "step3p7",
               "granite_docling_text": "granite_docling", "unlimited_ocr_text": "unlimited_ocr",
               "deepseek_ocr2_text": "deepseek_ocr2", "mistral_large4_text": "mistral_large4",
               "hunyuan_vl_text": "hunyuan_vl", "molmo2_text": "molmo2", "muse_glimmer_text": "muse_glimmer",
               "muse_spark_text": "muse_spark", "glm5_next_text": "glm5_next",
               "ernie4_5_vl_moe_text": "ernie4_5_vl_moe"}

# bool fields that change no parameter or cache tensor and that the CPU run cannot take either way (kernels not
# installed, training-only outputs), or that make a decoder an encoder-decoder: left at their defaults.
FIXED_BOOLS = {"use_cache", "use_mamba_kernels", "use_mambapy", "use_associative_scan", "output_router_logits",
               "output_attentions", "output_hidden_states", "return_dict", "is_decoder", "add_cross_attention",
               "use_mem_eff_path", "is_encoder_decoder", "tie_encoder_decoder", "torchscript", "use_return_dict",
               "scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn", "summary_use_proj",
               "summary_proj_to_labels", "do_pooling", "use_bidirectional_attention", "use_long_context",
               "gradient_checkpointing", "moe_shared_expert_overlap", "rescale_prenorm_residual"}
# bool fields left at their defaults for one type, and why:
# - MPT's no_bias: transformers 5.24's MPT never builds a bias whatever it says (modeling_mpt.py), while vLLM's
#   MPTAttention and MPTMLP take bias = not no_bias; a config with no_bias false describes a checkpoint one of the two
#   cannot hold, and memplan refuses it naming the key (model/hf_classic.c mpm_read_mpt)
FIXED_BOOLS_BY_TYPE = {"mpt": {"no_bias"}}


def table_types():
    """The model types memplan reads, in the table's order."""
    with open(TABLE) as fh:
        return re.findall(r'\.name = "([a-z0-9_.-]+)"', fh.read())


def fields(cls):
    """{name: annotation} of a configuration class's dataclass fields."""
    try:
        return {f.name: f.type for f in dataclasses.fields(cls)}
    except TypeError:
        return {}


def is_bool(ann):
    if ann is bool:
        return True
    args = typing.get_args(ann)
    return bool(args) and bool in args and all(a in (bool, type(None)) for a in args)


def own_bools(cls):
    """The bool fields a configuration class adds to PreTrainedConfig's."""
    base = set(fields(transformers.PreTrainedConfig))
    return sorted(k for k, a in fields(cls).items() if is_bool(a) and k not in base and k not in FIXED_BOOLS)


def divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def first(dd, *names):
    """The first spelling of a key the default config has."""
    for n in names:
        if n in dd:
            return n
    return None


# ----- drawing ------------------------------------------------------------------------------------------------------

class Draw:
    """One variant's config being drawn: the dict, the random source, the defaults it is drawn against."""

    def __init__(self, rng, dd, cls):
        self.rng, self.dd, self.cls, self.d = rng, dd, cls, {}

    def has(self, k):
        return k in self.dd

    def set(self, k, v):
        self.d[k] = v

    def maybe(self, k, v, p_absent=0.25):
        """k = v, or k left out (the class default) with probability p_absent."""
        if self.rng.random() >= p_absent:
            self.d[k] = v

    def choice(self, xs):
        return self.rng.choice(list(xs))

    def get(self, k):
        """The value the config will have: drawn, else the default."""
        return self.d[k] if k in self.d else self.dd.get(k)


def draw_bools(w, keys):
    for k in keys:
        if w.has(k) and k not in w.d:
            w.maybe(k, w.rng.random() < 0.5, 0.3)


def draw_window(w, key="sliding_window"):
    if w.has(key):
        v = w.choice([None, None, 3, 4, 8, 16, 64])
        if w.rng.random() < 0.2:
            return   # the class default
        w.set(key, v)


def draw_layer_list(w, key, kinds, n, need=()):
    """A per-layer list of kinds (layer_types, mlp_layer_types, ...), or left out (the class derives it)."""
    if w.rng.random() < 0.5 and not need:
        return
    lst = [w.choice(kinds) for _ in range(n)]
    for i, k in enumerate(need):          # every kind the family needs at least once
        if k not in lst:
            lst[w.rng.randrange(n)] = k
    w.set(key, lst)


def draw_attention(w, hidden_choices=(64, 96, 128), heads_choices=(2, 3, 4, 6, 8), head_dim_key="head_dim",
                   heads_key=None, kv_key=None, derive_only=False, hidden_key=None):
    """Heads, KV heads, head_dim and the hidden width consistent with them (an explicit head_dim lets the heads
    leave hidden_size undivided: the classes that refuse that are redrawn)."""
    heads_key = heads_key or first(w.dd, "num_attention_heads", "n_head", "num_heads", "attention_heads", "n_heads")
    kv_key = kv_key or first(w.dd, "num_key_value_heads", "num_kv_heads", "n_head_kv", "multi_query_group_num")
    hidden_key = hidden_key or first(w.dd, "hidden_size", "n_embd", "d_model")
    h = w.choice(heads_choices)
    hd = "absent"
    if head_dim_key and w.has(head_dim_key) and not derive_only:
        ann = fields(w.cls).get(head_dim_key) if w.cls else None
        nullable = ann is None or type(None) in typing.get_args(ann)
        hd = w.choice(["absent", None, 8, 16, 24, 32] if nullable else ["absent", 8, 16, 24, 32])
        if hd != "absent":
            w.set(head_dim_key, hd)
    divides = [x for x in hidden_choices if x % h == 0] or [h * 16]
    hidden = w.choice(hidden_choices if isinstance(hd, int) and w.rng.random() < 0.3 else divides)
    w.set(hidden_key, hidden)
    w.set(heads_key, h)
    if kv_key:
        kv = w.choice(divisors(h))
        default_kv = w.dd.get(kv_key)
        if default_kv is None or (isinstance(default_kv, int) and h % default_kv == 0 and default_kv <= h):
            w.maybe(kv_key, kv, 0.2)
        else:
            w.set(kv_key, kv)
    return hidden, h


def draw_ffn(w, key=None, choices=(48, 64, 96, 128, 160)):
    key = key or first(w.dd, "intermediate_size", "n_inner", "ffn_hidden_size", "ffn_dim")
    if key:
        w.set(key, w.choice(choices))


def draw_common(w, layers=None, vocab=True):
    """Layers, vocabulary, the special tokens inside it, tie_word_embeddings."""
    n = layers if layers is not None else w.choice([2, 3, 4, 5, 6])
    lk = first(w.dd, "num_hidden_layers", "n_layer", "num_layers", "n_layers")
    if lk:
        w.set(lk, n)
    if vocab and w.has("vocab_size"):
        v = w.choice([256, 320, 384, 512])
        w.set("vocab_size", v)
        fix_tokens(w, v)
    if w.has("tie_word_embeddings"):
        w.maybe("tie_word_embeddings", w.rng.random() < 0.5, 0.3)
    return n


def fix_tokens(w, v, dd=None, d=None):
    """Special tokens inside the vocabulary, and out of the range the runs' inputs are drawn from."""
    dd = dd if dd is not None else w.dd
    d = d if d is not None else w.d
    top = v - 1
    for k, x in sorted(dd.items()):
        if (k.endswith("_token_id") or k.endswith("_token_index") or k in ("eod_token_id", "sep_token_id")) \
                and isinstance(x, int) and not isinstance(x, bool):
            if k in ("pad_token_id", "bos_token_id", "eos_token_id"):
                d[k] = {"pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2}[k]
            else:
                d[k] = top
                top -= 1
        elif k == "eos_token_id" and isinstance(x, list):
            d[k] = [2]


def draw_moe(w, experts_key, topk_key, experts=(2, 3, 4, 6, 8), topk_max=4):
    e = w.choice(experts)
    w.set(experts_key, e)
    if topk_key:
        w.set(topk_key, w.choice(range(1, min(topk_max, e) + 1)))
    for k in ("moe_intermediate_size", "expert_ffn_hidden_size", "shared_expert_intermediate_size",
              "moe_shared_expert_intermediate_size", "shared_intermediate_size"):
        if w.has(k):
            w.set(k, w.choice([16, 32, 48, 64]))
    return e


def draw_mla(w):
    w.set("kv_lora_rank", w.choice([16, 24, 32]))
    if w.has("q_lora_rank"):
        w.set("q_lora_rank", w.choice([None, 16, 24, 48]))
    w.set("qk_rope_head_dim", w.choice([8, 16]))
    w.set("qk_nope_head_dim", w.choice([8, 16, 24]))
    w.set("v_head_dim", w.choice([8, 16, 32]))


# ----- the families ---------------------------------------------------------------------------------------------------
# Each takes a Draw over the decoder's defaults and fills w.d; the generic parts (bools) are added by draw_text.

def fam_dbrx(w, t):
    """DBRX: the attention and the experts under attn_config and ffn_config; transformers 5.24 builds DbrxConfig only
    with attn_config's rope_theta given (its DbrxAttentionConfig default has none) and never tied."""
    draw_common(w)
    w.set("tie_word_embeddings", False)
    _, h = draw_attention(w, kv_key="none")
    w.d.pop("none", None)
    attn = {"kv_n_heads": w.choice(divisors(h)), "rope_theta": w.choice([10000, 500000])}
    if w.rng.random() < 0.5:
        attn["clip_qkv"] = w.choice([4, 8])
    w.set("attn_config", attn)
    e = w.choice([2, 4, 6])
    w.set("ffn_config", {"ffn_hidden_size": w.choice([32, 48, 64]), "moe_num_experts": e,
                         "moe_top_k": w.choice(range(1, min(3, e) + 1))})


def fam_rwkv(w, t):
    """RWKV: no heads; hidden_size, intermediate_size and attention_hidden_size (which RwkvModel's cached state
    requires to equal hidden_size: drawn equal or left out)."""
    draw_common(w)
    h = w.choice([32, 64, 96])
    w.set("hidden_size", h)
    w.maybe("attention_hidden_size", h, 0.5)
    w.maybe("intermediate_size", w.choice([64, 128, 160]), 0.4)


def fam_gpt_neo(w, t):
    """GPT-Neo: attention_types ([[kinds, repeats], ...]) must expand to num_layers entries (GPTNeoConfig)."""
    fam_dense(w, t)
    n = w.get("num_layers")
    w.set("attention_types", [[[w.choice(["global", "local"]) for _ in range(n)], 1]])
    w.maybe("window_size", w.choice([4, 8, 16]))


def fam_dense(w, t):
    n = draw_common(w)
    draw_attention(w)
    draw_ffn(w)
    draw_window(w)
    if w.has("use_sliding_window"):
        w.maybe("use_sliding_window", w.rng.random() < 0.6)
    if w.has("max_window_layers"):
        w.maybe("max_window_layers", w.choice(range(0, n + 1)))
    lt = w.dd.get("layer_types")
    if isinstance(lt, list) and lt:
        kinds = set(lt) | ({"sliding_attention"} if w.has("sliding_window") else set())
        if w.get("sliding_window") is None:
            kinds.discard("sliding_attention")      # a sliding layer without a window: transformers cannot run it
        kinds = sorted(kinds or {"full_attention"})
        draw_layer_list(w, "layer_types", kinds, n)
    # the pattern of the derived layer_types: Gemma 3 and Cohere 2 read it as the key sliding_window_pattern (their
    # to_dict writes _sliding_window_pattern, which they do not read back), EXAONE 4 as a field
    if (w.has("sliding_window_pattern") or w.has("_sliding_window_pattern")) and "layer_types" not in w.d:
        w.maybe("sliding_window_pattern", w.choice([1, 2, 3, 4]))
        if w.has("_sliding_window_pattern") and w.rng.random() < 0.3:
            w.set("_sliding_window_pattern", w.choice([2, 3, 5]))
    if w.has("no_rope_layers"):
        if w.rng.random() < 0.5:
            w.set("no_rope_layers", [w.choice([0, 1]) for _ in range(n)])
        elif w.has("no_rope_layer_interval"):
            w.maybe("no_rope_layer_interval", w.choice([1, 2, 3, 4]))
    if w.has("partial_rotary_factor"):
        w.maybe("partial_rotary_factor", w.choice([0.25, 0.5, 1.0]), 0.5)
    if w.has("max_position_embeddings") and w.rng.random() < 0.3:
        w.set("max_position_embeddings", w.choice([64, 128, 4096]))


def fam_gpt2(w, t):
    draw_common(w)
    draw_attention(w, heads_key="n_head")
    w.maybe("n_inner", w.choice([None, 48, 96, 160]), 0.3)
    w.set("n_positions", w.choice([32, 64, 100]))


def fam_kosmos(w, t):
    """Kosmos-2's and Kosmos-2.5's decoder, under its own key names (embed_dim, layers, attention_heads, ffn_dim)."""
    draw_common(w)
    w.set("layers", w.choice([2, 3, 4]))
    draw_attention(w, heads_key="attention_heads", hidden_key="embed_dim")
    w.set("ffn_dim", w.choice([48, 96, 160]))


def fam_gptj(w, t):
    draw_common(w)
    hidden, h = draw_attention(w, heads_key="n_head")
    w.maybe("n_inner", w.choice([None, 48, 96, 160]), 0.3)
    w.set("n_positions", w.choice([32, 64, 100]))
    w.maybe("rotary_dim", w.choice([x for x in (4, 8, 16) if x <= hidden // h]), 0.3)


def fam_gpt_bigcode(w, t):
    fam_gpt2(w, t)


def fam_falcon(w, t):
    draw_common(w)
    hidden, h = draw_attention(w, kv_key="num_kv_heads")
    w.maybe("ffn_hidden_size", w.choice([None, 48, 128]), 0.3)
    for k in ("new_decoder_architecture", "multi_query", "parallel_attn", "bias", "alibi"):
        w.maybe(k, w.rng.random() < 0.5, 0.3)
    if w.get("new_decoder_architecture"):
        w.maybe("num_ln_in_parallel_attn", w.choice([None, 1, 2]), 0.3)
    if w.get("alibi"):
        w.set("max_position_embeddings", w.choice([64, 128]))


def fam_gpt_neox(w, t):
    draw_common(w)
    draw_attention(w)
    draw_ffn(w)
    w.set("max_position_embeddings", w.choice([64, 128, 2048]))
    w.maybe("rotary_pct", w.choice([0.25, 0.5, 1.0]), 0.5)


def fam_mamba(w, t):
    draw_common(w)
    w.set("hidden_size", w.choice([32, 48, 64]))
    w.set("state_size", w.choice([4, 8, 16]))
    w.set("expand", w.choice([1, 2]))
    w.set("conv_kernel", w.choice([2, 3, 4]))
    w.maybe("time_step_rank", w.choice(["auto", 4, 8]), 0.3)
    if w.has("intermediate_size"):
        w.maybe("intermediate_size", w.get("hidden_size") * w.get("expand"), 0.5)


def fam_mamba2(w, t):
    draw_common(w)
    hidden = w.choice([32, 48, 64])
    expand = w.choice([1, 2])
    w.set("hidden_size", hidden)
    w.set("expand", expand)
    inner = hidden * expand
    hd = w.choice([x for x in (8, 16, 32) if inner % x == 0])
    w.set("head_dim", hd)
    nh = inner // hd
    w.set("num_heads", nh)
    w.set("n_groups", w.choice(divisors(nh)[:3]))
    w.set("state_size", w.choice([4, 8, 16]))
    w.set("conv_kernel", w.choice([2, 3, 4]))
    w.set("chunk_size", w.choice([4, 8, 256]))
    w.maybe("time_step_rank", w.choice(["auto", 4, 8]), 0.3)


def fam_moe(w, t):
    """A Mixtral-style or Qwen-style MoE decoder (the attention of fam_dense)."""
    fam_dense(w, t)
    n = w.get(first(w.dd, "num_hidden_layers", "num_layers"))
    ek = first(w.dd, "num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts")
    tk = first(w.dd, "num_experts_per_tok", "moe_k", "moe_topk", "num_experts_per_token", "top_k_experts")
    e = draw_moe(w, ek, tk)
    for k in ("n_shared_experts", "num_shared_experts", "moe_num_shared_experts"):
        if w.has(k):
            w.maybe(k, w.choice([0, 1, 2]) if w.dd.get(k) is not None else w.choice([None, 1, 2]), 0.2)
    for k in ("first_k_dense_replace", "num_dense_layers", "moe_layer_start_index"):
        if w.has(k):
            w.maybe(k, w.choice(range(0, n)), 0.2)
    if w.has("moe_layer_end_index"):
        w.maybe("moe_layer_end_index", w.choice([-1, n - 1, max(0, n - 2)]), 0.3)
    if w.has("moe_layer_interval"):
        w.maybe("moe_layer_interval", w.choice([1, 2]), 0.3)
    if w.has("decoder_sparse_step"):
        w.maybe("decoder_sparse_step", w.choice([1, 2, 3]), 0.3)
    if w.has("mlp_only_layers"):
        w.maybe("mlp_only_layers", sorted(w.rng.sample(range(n), w.choice([0, 1, 2]))), 0.3)
    if w.has("n_group"):
        g = w.choice([x for x in divisors(e) if x <= 4])
        w.set("n_group", g)
        w.set("topk_group", w.choice(range(1, g + 1)))
    if w.has("mlp_layer_types"):
        draw_layer_list(w, "mlp_layer_types", ["dense", "sparse"], n)
    if w.has("zero_expert_num"):
        w.set("zero_expert_num", w.choice([0, 1, 2, 3]))


# Multi-head latent attention: K and V are num_attention_heads wide whatever num_key_value_heads says, and
# transformers' sdpa path repeats them num_attention_heads // num_key_value_heads times when it does not take the GQA
# kernel, so a num_key_value_heads other than num_attention_heads runs or fails by the path taken (left out of the
# variants; tests/ref/hf/README.md)
MLA_TYPES = {"deepseek_v2", "deepseek_v3", "deepseek_v32", "glm4_moe_lite", "glm_moe_dsa", "kimi_linear", "youtu",
             "sarvam_mla", "mistral4", "axk1", "axk2", "hy_v4", "hy_v4_vl_text", "minicpm3",
             "longcat_flash", "mistral_large4_text", "dots3_note_text", "glm5_next_text"}


def fam_mla(w, t):
    fam_moe(w, t)
    w.d.pop("num_key_value_heads", None)
    draw_mla(w)
    for k in ("index_n_heads", "index_head_dim", "index_topk"):
        if w.has(k):
            w.set(k, w.choice({"index_n_heads": [1, 2, 4], "index_head_dim": [8, 16, 32],
                               "index_topk": [2, 4, 16]}[k]))
    n = w.get("num_hidden_layers")
    if w.has("indexer_types"):
        draw_layer_list(w, "indexer_types", sorted(set(w.dd["indexer_types"]) | {"full", "shared"}), n)
    if "layer_types" in w.d and isinstance(w.dd.get("layer_types"), list):
        w.d.pop("layer_types")     # only indexed_attention: its one kind
    w.d.pop("head_dim", None)


def fam_mla_dense(w, t):
    """An MLA decoder without experts (MiniCPM3, Youtu): fam_dense's widths and flags with the MLA ranks drawn."""
    fam_dense(w, t)
    w.d.pop("num_key_value_heads", None)
    draw_mla(w)
    w.d.pop("head_dim", None)


def fam_hunyuan_moe(w, t):
    fam_dense(w, t)
    n = w.get("num_hidden_layers")
    e = w.choice([1, 2, 4])
    w.set("num_experts", e)
    k = w.choice(range(1, min(2, e) + 1))
    w.set("moe_topk", k if w.rng.random() < 0.6 else [k] * n)
    if w.has("num_shared_expert"):
        w.maybe("num_shared_expert", w.choice([0, 1, 2]) if w.rng.random() < 0.6 else [1] * n)
    if w.has("moe_intermediate_size"):
        w.maybe("moe_intermediate_size", w.choice([32, 64]), 0.3)


def fam_longcat(w, t):
    draw_common(w)
    draw_attention(w, derive_only=True)
    w.d.pop("num_key_value_heads", None)
    draw_mla(w)
    w.set("ffn_hidden_size", w.choice([48, 96]))
    w.set("expert_ffn_hidden_size", w.choice([16, 32]))
    e = w.choice([2, 4, 6])
    w.set("n_routed_experts", e)
    w.set("zero_expert_num", w.choice([0, 1, 2]))
    w.set("moe_topk", w.choice(range(1, min(3, e) + 1)))
    w.set("head_dim", w.get("qk_rope_head_dim"))     # the rotary width (LongcatFlashConfig keeps both keys)


def fam_gpt_oss(w, t):
    n = draw_common(w)
    draw_attention(w)
    draw_ffn(w)
    draw_moe(w, "num_local_experts", "num_experts_per_tok")
    draw_window(w)
    draw_layer_list(w, "layer_types", ["full_attention", "sliding_attention"], n)


def fam_llama4(w, t):
    n = draw_common(w)
    draw_attention(w)
    draw_ffn(w)
    w.set("intermediate_size_mlp", w.choice([48, 96]))
    draw_moe(w, "num_local_experts", "num_experts_per_tok", topk_max=1)
    w.maybe("interleave_moe_layer_step", w.choice([1, 2]), 0.4)
    if w.rng.random() < 0.4:
        w.set("moe_layers", sorted(w.rng.sample(range(n), w.choice(range(0, n + 1)))))
    w.maybe("attention_chunk_size", w.choice([None, 4, 8, 16]), 0.3)
    if w.rng.random() < 0.4:
        w.set("no_rope_layers", [w.choice([0, 1]) for _ in range(n)])
    elif w.rng.random() < 0.5:
        w.set("no_rope_layer_interval", w.choice([1, 2, 4]))
    if w.rng.random() < 0.3:
        draw_layer_list(w, "layer_types", ["full_attention", "chunked_attention"], n)


def fam_linear(w, t):
    """Gated delta net + attention (Qwen3-Next, Qwen3.5 and its MoE)."""
    n = draw_common(w)
    draw_attention(w)
    draw_ffn(w)
    kh = w.choice([1, 2, 4])
    w.set("linear_num_key_heads", kh)
    w.set("linear_num_value_heads", kh * w.choice([1, 2]))
    w.set("linear_key_head_dim", w.choice([8, 16]))
    w.set("linear_value_head_dim", w.choice([8, 16, 32]))
    w.set("linear_conv_kernel_dim", w.choice([2, 3, 4]))
    if w.has("num_experts"):
        e = draw_moe(w, "num_experts", "num_experts_per_tok")
        if w.has("decoder_sparse_step"):
            w.maybe("decoder_sparse_step", w.choice([1, 2]), 0.3)
        if w.has("mlp_only_layers"):
            w.maybe("mlp_only_layers", sorted(w.rng.sample(range(n), w.choice([0, 1]))), 0.3)
    draw_layer_list(w, "layer_types", ["full_attention", "linear_attention"], n, need=("full_attention",))
    if w.has("partial_rotary_factor"):
        w.maybe("partial_rotary_factor", w.choice([0.25, 0.5]), 0.5)


def fam_olmo_hybrid(w, t):
    """OLMo-Hybrid: gated delta net + attention with the linear heads and head widths drawn or derived (the key head
    dim from 0.75 x hidden), layer_types (both kinds: transformers refuses one alone) or the class's every fourth."""
    n = draw_common(w)
    draw_attention(w)
    draw_ffn(w)
    if w.rng.random() < 0.7:
        kh = w.choice([1, 2, 4])
        w.set("linear_num_key_heads", kh)
        w.set("linear_num_value_heads", kh * w.choice([1, 2]))
        w.maybe("linear_key_head_dim", w.choice([8, 16]), 0.7)
        w.maybe("linear_value_head_dim", w.choice([8, 16, 32]), 0.7)
    w.set("linear_conv_kernel_dim", w.choice([2, 3, 4]))
    if w.rng.random() < 0.6:
        lst = [w.choice(["full_attention", "linear_attention"]) for _ in range(n)]
        for k in ("full_attention", "linear_attention"):
            if k not in lst:
                lst[w.rng.randrange(n)] = k
        if len(set(lst)) == 2:
            w.set("layer_types", lst)
    elif n < 4:
        w.set("num_hidden_layers", w.choice([4, 5, 8]))


def fam_lara_mini(w, t):
    """Lara-Mini: Qwen3.5's gated delta net, sliding and full attention layers (the three kinds in layer_types, or the
    class's period-5 pattern), the MoE block in every layer with a shared expert (width 0 drops it), windows; the
    value heads a multiple of the key heads (transformers refuses others)."""
    n = draw_common(w)
    draw_attention(w)
    kh = w.choice([1, 2, 4])
    w.set("linear_num_key_heads", kh)
    w.set("linear_num_value_heads", kh * w.choice([1, 2]))
    w.set("linear_key_head_dim", w.choice([8, 16]))
    w.set("linear_value_head_dim", w.choice([8, 16, 32]))
    w.set("linear_conv_kernel_dim", w.choice([2, 3, 4]))
    draw_moe(w, "num_experts", "num_experts_per_tok")
    w.maybe("shared_expert_intermediate_size", 0, 0.2)
    w.set("sliding_window", w.choice([3, 4, 8, 16, 64]))
    if w.rng.random() < 0.6:
        draw_layer_list(w, "layer_types", ["linear_attention", "sliding_attention", "full_attention"], n,
                        need=("sliding_attention",))
    elif n < 5:
        w.set("num_hidden_layers", w.choice([5, 6]))


def fam_hrm_text(w, t):
    """HRM-Text: the stacks' depth (num_hidden_layers before the class multiplies it out, or num_layers_per_stack
    with the product stated), H_cycles and L_cycles, heads and head_dim (heads dividing hidden_size, as the class
    requires)."""
    n = draw_common(w, layers=w.choice([1, 2, 3]))
    draw_attention(w)
    draw_ffn(w)
    w.set("H_cycles", w.choice([1, 2, 3]))
    w.set("L_cycles", w.choice([1, 2, 3]))
    if w.rng.random() < 0.3:
        w.set("num_layers_per_stack", n)
        w.set("num_hidden_layers", n * w.get("H_cycles") * (w.get("L_cycles") + 1))


def fam_doge(w, t):
    """Doge: a dense decoder (heads, KV heads, head widths, windows, biases) whose is_moe (drawn with the bools) swaps
    the MLP for DogeCDMoE: the retrieval experts' count (a square or not: the router takes floor(sqrt)) and top-k."""
    fam_dense(w, t)
    w.set("is_moe", w.rng.random() < 0.5)
    e = w.choice([4, 9, 16, 20, 64])
    w.set("num_experts", e)
    w.set("num_experts_per_tok", w.choice([1, 2, 4]))
    w.maybe("keep_window_size", w.choice([4, 16, 2048]), 0.3)


def fam_modernbert_decoder(w, t):
    """ModernBERT's decoder: heads dividing hidden_size (MHA), the window as local_attention (the class halves it), the
    full layers every global_attn_every_n_layers or a layer_types list; the bias and norm flags drawn with the bools."""
    n = draw_common(w)
    h = w.choice([2, 4, 8])
    w.set("num_attention_heads", h)
    w.set("hidden_size", h * w.choice([8, 16, 32]))
    w.set("intermediate_size", w.choice([48, 64, 96]))
    w.set("local_attention", w.choice([4, 7, 16, 32, 128]))
    r = w.rng.random()
    if r < 0.4:
        draw_layer_list(w, "layer_types", ["full_attention", "sliding_attention"], n, need=("sliding_attention",))
    elif r < 0.7:
        w.d["global_attn_every_n_layers"] = w.choice([1, 2, 4])


def fam_xlstm(w, t):
    """xLSTM: widths whose q/k and v factors land on multiples of 64 (xLSTMCache rounds them up, the layer does not),
    heads dividing them, the FFN factor and its rounding, weight_mode single, the layer and width keys
    under either spelling (num_blocks, embedding_dim)."""
    n = w.choice([1, 2, 3])
    h = w.choice([64, 128, 256])
    w.set("num_hidden_layers", n)
    w.set("hidden_size", h)
    if w.rng.random() < 0.3:     # the other spellings, stated alike (their defaults follow the two above)
        w.set("num_blocks", n)
    if w.rng.random() < 0.3:
        w.set("embedding_dim", h)
    v = w.choice([256, 320, 384, 512])
    w.set("vocab_size", v)
    fix_tokens(w, v)
    w.maybe("tie_word_embeddings", w.rng.random() < 0.5, 0.3)
    qf = w.choice([f for f in (0.25, 0.5, 1.0) if (h * f) % 64 == 0])
    vf = w.choice([f for f in (0.5, 1.0, 2.0) if (h * f) % 64 == 0])
    w.set("qk_dim_factor", qf)
    w.set("v_dim_factor", vf)
    w.set("num_heads", w.choice([x for x in (1, 2, 4) if int(h * qf) % x == 0 and int(h * vf) % x == 0]))
    w.set("ffn_proj_factor", w.choice([1.5, 2.0, 2.667]))
    w.set("ffn_round_up_to_multiple_of", w.choice([16, 64]))
    w.set("weight_mode", "single")   # "fused": transformers 5.24 cannot build it (_init_weights' ifgate slice)
    w.set("chunk_size", w.choice([8, 64]))


def fam_dory(w, t):
    """Dory: input, recurrent and output sections (the recurrent count given or derived), loops, the cache mode
    (per_loop copies or last_loop), layer_types in the collapsed form or the released one (each layer followed by
    "mlp", the counts doubled), windows, heads and head widths."""
    n = w.choice([3, 4, 5, 6])
    draw_attention(w)
    draw_ffn(w)
    v = w.choice([256, 320, 384, 512])
    w.set("vocab_size", v)
    fix_tokens(w, v)
    w.maybe("tie_word_embeddings", w.rng.random() < 0.5, 0.3)
    a = w.choice(range(0, n))
    b = w.choice(range(0, n - a + 1))
    rec = n - a - b
    w.set("sliding_window", w.choice([3, 4, 8, 16, 64]))
    w.set("n_recurrent_loops", w.choice([1, 2, 3]))
    w.set("recurrent_kv_cache_mode", w.choice(["per_loop", "last_loop"]))
    lst = [w.choice(["sliding_attention", "full_attention"]) for _ in range(n)]
    released = w.rng.random() < 0.4
    k = 2 if released else 1
    w.set("num_hidden_layers", k * n)
    w.set("n_input_layers", k * a)
    w.set("n_output_layers", k * b)
    if w.rng.random() < 0.5:
        w.set("n_recurrent_layers", k * rec)
    if released:
        w.set("layer_types", [x for lt in lst for x in (lt, "mlp")])
    elif w.rng.random() < 0.7:
        w.set("layer_types", lst)


def fam_cpmant(w, t):
    """CPM-Ant: heads and dim_head (MHA), dim_ff, the prompt (types x length: the cache holds prompt_length tokens
    more), segment types, position-bias buckets."""
    n = draw_common(w)
    h = w.choice([2, 4, 8])
    w.set("num_attention_heads", h)
    w.set("hidden_size", w.choice([32, 64, 128]))
    w.set("dim_head", w.choice([8, 16, 32]))
    w.set("dim_ff", w.choice([48, 64, 96]))
    w.set("prompt_types", w.choice([1, 2, 4, 32]))
    w.set("prompt_length", w.choice([1, 3, 8, 32]))
    w.set("segment_types", w.choice([3, 8, 32]))
    w.set("position_bias_num_buckets", w.choice([8, 32, 512]))
    w.set("position_bias_max_distance", w.choice([16, 128, 2048]))


def fam_kimi(w, t):
    n = draw_common(w)
    draw_attention(w, derive_only=True)
    draw_ffn(w)
    w.d.pop("num_key_value_heads", None)
    draw_mla(w)
    w.set("linear_num_heads", w.choice([1, 2, 4]))
    w.set("linear_head_dim", w.choice([8, 16]))
    w.set("linear_conv_kernel_dim", w.choice([2, 3, 4]))
    e = draw_moe(w, "num_experts", "num_experts_per_token")
    w.maybe("num_shared_experts", w.choice([0, 1, 2]), 0.3)
    g = w.choice([x for x in divisors(e) if x <= 2])
    w.set("num_expert_group", g)
    w.set("topk_group", w.choice(range(1, g + 1)))
    draw_layer_list(w, "layer_types", ["full_attention", "linear_attention"], n, need=("full_attention",))
    draw_layer_list(w, "mlp_layer_types", ["dense", "sparse"], n)
    w.d.pop("head_dim", None)


def fam_bailing_hybrid(w, t):
    """Ring/Ling linear hybrids: MLA ranks (q_lora_rank None or set), KDA heads and head_dim (head_dim, which the class
    copies into linear_head_dim), the fused conv's kernel, experts (count, top-k, width, shared blocks, groups), the
    layer schedule by layer_group_size or layer_types, dense layers by first_k_dense_replace or mlp_layer_types."""
    n = draw_common(w)
    draw_attention(w, derive_only=True)
    draw_ffn(w)
    w.d.pop("num_key_value_heads", None)
    draw_mla(w)
    w.set("head_dim", w.choice([8, 16]))
    w.set("short_conv_kernel_size", w.choice([2, 3, 4]))
    e = draw_moe(w, "num_local_experts", "num_experts_per_tok")
    w.maybe("n_shared_experts", w.choice([0, 1, 2]), 0.5)
    g = w.choice([x for x in divisors(e) if x <= 2])
    w.set("n_group", g)
    w.set("topk_group", w.choice(range(1, g + 1)))
    w.set("layer_group_size", w.choice([1, 2, 3, 6]))
    if w.rng.random() < 0.5:
        draw_layer_list(w, "layer_types", ["full_attention", "linear_attention"], n, need=("full_attention",))
    if w.rng.random() < 0.5:
        draw_layer_list(w, "mlp_layer_types", ["dense", "sparse"], n)
    else:
        w.set("first_k_dense_replace", w.choice(range(0, n + 1)))
    for k in ("linear_head_dim", "linear_num_heads", "linear_conv_kernel_dim", "qk_head_dim"):
        w.d.pop(k, None)


def fam_minimax(w, t):
    n = draw_common(w)
    draw_attention(w)
    draw_ffn(w)
    draw_moe(w, "num_local_experts", "num_experts_per_tok")
    draw_window(w)
    draw_layer_list(w, "layer_types", ["full_attention", "linear_attention"], n, need=("full_attention",))
    w.maybe("block_size", w.choice([4, 8, 256]), 0.3)


def fam_lfm2(w, t):
    n = draw_common(w)
    draw_attention(w, derive_only=True)
    draw_ffn(w, choices=(64, 96, 128, 200))
    w.set("conv_L_cache", w.choice([2, 3, 4]))
    w.maybe("block_multiple_of", w.choice([16, 32, 256]), 0.3)
    w.maybe("block_ffn_dim_multiplier", w.choice([None, 1.0, 1.5]), 0.3)
    if w.has("moe_intermediate_size"):
        draw_moe(w, "num_experts", "num_experts_per_tok")
        w.maybe("num_dense_layers", w.choice(range(0, n)), 0.3)
    if w.rng.random() < 0.5:
        draw_layer_list(w, "layer_types", ["full_attention", "conv"], n, need=("full_attention",))
    elif w.has("full_attn_idxs"):
        w.set("full_attn_idxs", sorted(w.rng.sample(range(n), w.choice(range(1, n + 1)))))


def fam_lfm3(w, t):
    """LFM3: conv, sliding and full attention layers (layer_types of the three kinds, or the class's derivation), the
    window (a positive one: a sliding layer needs it), conv kernels, head widths; the bools (attention gate, sandwich
    norms, biases) are drawn with every type's."""
    n = draw_common(w)
    draw_attention(w)
    draw_ffn(w, choices=(64, 96, 128, 200))
    w.set("conv_L_cache", w.choice([2, 3, 4, 7]))
    w.set("sliding_window", w.choice([3, 4, 8, 16, 64]))
    if w.rng.random() < 0.6:
        draw_layer_list(w, "layer_types", ["full_attention", "sliding_attention", "conv"], n,
                        need=("sliding_attention",) if w.rng.random() < 0.7 else ())


def mamba_keys(w, hidden, heads_key="mamba_n_heads", head_key="mamba_d_head", groups_key="mamba_n_groups",
               expand_key="mamba_expand"):
    expand = w.choice([1, 2])
    w.set(expand_key, expand)
    inner = hidden * expand
    hd = w.choice([x for x in (8, 16, 32) if inner % x == 0])
    nh = inner // hd
    if head_key:
        w.set(head_key, hd)
    if heads_key:
        w.set(heads_key, nh)
    if groups_key:
        w.set(groups_key, w.choice(divisors(nh)[:3]))
    return nh


def fam_jamba(w, t):
    n = draw_common(w, layers=w.choice([2, 3, 4, 6]))
    draw_attention(w, derive_only=True)
    draw_ffn(w)
    draw_moe(w, "num_experts", "num_experts_per_tok")
    w.set("attn_layer_period", w.choice([1, 2, 3]))
    w.set("attn_layer_offset", w.choice(range(0, w.get("attn_layer_period"))))
    w.set("expert_layer_period", w.choice([1, 2, 3]))
    w.set("expert_layer_offset", w.choice(range(0, w.get("expert_layer_period"))))
    w.set("mamba_d_state", w.choice([4, 8, 16]))
    w.set("mamba_d_conv", w.choice([2, 3, 4]))
    w.set("mamba_expand", w.choice([1, 2]))
    w.maybe("mamba_dt_rank", w.choice(["auto", 4, 8]), 0.3)
    w.set("use_mamba_kernels", False)


def fam_bamba(w, t):
    n = draw_common(w)
    hidden, h = draw_attention(w, derive_only=True)
    draw_ffn(w)
    mamba_keys(w, hidden)
    w.set("mamba_d_state", w.choice([4, 8, 16]))
    w.set("mamba_d_conv", w.choice([2, 3, 4]))
    w.set("mamba_chunk_size", w.choice([4, 8, 256]))
    w.set("attn_layer_indices", sorted(w.rng.sample(range(n), w.choice(range(1, n + 1)))))


def fam_granitemoehybrid(w, t):
    n = draw_common(w)
    hidden, h = draw_attention(w, derive_only=True)
    draw_ffn(w)
    mamba_keys(w, hidden)
    w.set("mamba_d_state", w.choice([4, 8, 16]))
    w.set("mamba_d_conv", w.choice([2, 3, 4]))
    w.set("mamba_chunk_size", w.choice([4, 8, 256]))
    w.set("num_local_experts", w.choice([0, 2, 4]))
    w.set("num_experts_per_tok", w.choice([1, 2]))
    w.set("shared_intermediate_size", w.choice([0, 32, 64]))
    w.maybe("position_embedding_type", w.choice([None, "rope"]), 0.3)
    draw_layer_list(w, "layer_types", ["full_attention", "linear_attention"], n, need=("full_attention",))


def fam_nemotron_h(w, t):
    n = w.choice([2, 3, 4, 5, 6])
    draw_common(w, layers=n)
    w.d.pop("num_hidden_layers", None)
    hidden, h = draw_attention(w)
    draw_ffn(w)
    mamba_keys(w, hidden, heads_key="mamba_num_heads", head_key="mamba_head_dim", groups_key="n_groups",
               expand_key="expand")
    w.set("ssm_state_size", w.choice([4, 8, 16]))
    w.set("conv_kernel", w.choice([2, 3, 4]))
    w.set("chunk_size", w.choice([4, 8, 128]))
    draw_moe(w, "n_routed_experts", "num_experts_per_tok")
    w.maybe("n_shared_experts", w.choice([0, 1, 2]), 0.3)
    w.set("n_group", 1)
    w.set("topk_group", 1)
    kinds = ["linear_attention", "moe", "full_attention", "mlp"]
    lst = [w.choice(kinds) for _ in range(n)]
    if "full_attention" not in lst:
        lst[w.rng.randrange(n)] = "full_attention"
    w.set("layers_block_type", lst)
    w.set("use_mamba_kernels", False)


def fam_falcon_h1(w, t):
    n = draw_common(w)
    hidden, h = draw_attention(w, derive_only=True)
    draw_ffn(w)
    nh = mamba_keys(w, hidden)
    w.set("mamba_d_ssm", w.choice([None, hidden * w.get("mamba_expand")]))
    w.set("mamba_d_state", w.choice([4, 8, 16]))
    w.set("mamba_d_conv", w.choice([2, 3, 4]))
    w.set("mamba_chunk_size", w.choice([4, 8, 256]))
    if w.has("head_dim"):
        w.maybe("head_dim", w.choice([8, 16, 32]), 0.5)


def fam_zamba2(w, t):
    n = w.choice([2, 3, 4, 6])
    draw_common(w, layers=n)
    hidden = w.choice([32, 64])
    w.set("hidden_size", hidden)
    h = w.choice([2, 4])
    w.set("num_attention_heads", h)
    w.maybe("num_key_value_heads", w.choice(divisors(h)), 0.3)
    w.set("intermediate_size", w.choice([48, 64, 128]))
    w.set("mamba_expand", w.choice([1, 2]))
    inner = hidden * w.get("mamba_expand")
    w.set("n_mamba_heads", w.choice([x for x in (1, 2, 4) if inner % x == 0]))
    w.set("mamba_ngroups", w.choice(divisors(w.get("n_mamba_heads"))[:2]))
    w.set("mamba_d_state", w.choice([4, 8, 16]))
    w.set("mamba_d_conv", w.choice([2, 3, 4]))
    w.set("chunk_size", w.choice([4, 8, 256]))
    w.set("num_mem_blocks", w.choice([1, 2]))
    w.maybe("use_shared_attention_adapter", w.rng.random() < 0.5, 0.3)
    w.set("adapter_rank", w.choice([4, 8]))
    lst = [w.choice(["linear_attention", "hybrid"]) for _ in range(n)]
    if "hybrid" not in lst:
        lst[w.rng.randrange(n)] = "hybrid"
    w.set("layers_block_type", lst)
    w.set("use_mamba_kernels", False)


def fam_zamba(w, t):
    """Zamba: Mamba layers split into n_mamba_heads heads, hybrid layers running the shared transformer (at least two
    when any: transformers 5.24 refuses a single hybrid layer, whose tied shared_transf keys match nothing), an
    explicit or derived attention width and head_dim, dt_rank "auto" or given, the period/offset schedule or a list."""
    n = w.choice([3, 4, 6, 8])
    draw_common(w, layers=n)
    hidden = w.choice([32, 64])
    w.set("hidden_size", hidden)
    h = w.choice([2, 4])
    w.set("num_attention_heads", h)
    w.set("num_key_value_heads", w.choice(divisors(h)))
    w.maybe("attention_hidden_size", w.choice([32, 64, 128]), 0.3)
    w.maybe("attention_head_dim", w.choice([8, 16, 32]), 0.3)
    w.set("intermediate_size", w.choice([48, 64, 128]))
    w.set("mamba_expand", w.choice([1, 2]))
    inner = hidden * w.get("mamba_expand")
    w.set("n_mamba_heads", w.choice([x for x in (1, 2, 4) if inner % x == 0]))
    w.set("mamba_d_state", w.choice([4, 8, 16]))
    w.set("mamba_d_conv", w.choice([2, 3, 4]))
    w.maybe("mamba_dt_rank", w.choice(["auto", 4, 8]), 0.4)
    if w.rng.random() < 0.6:
        lst = [w.choice(["mamba", "hybrid"]) for _ in range(n)]
        while lst.count("hybrid") == 1:
            lst[w.rng.randrange(n)] = "hybrid"
        w.set("layers_block_type", lst)
    else:
        w.set("num_hidden_layers", w.choice([8, 10]))
        w.set("attn_layer_period", w.choice([2, 3]))
        w.set("attn_layer_offset", w.choice([0, 1]))
    w.set("use_mamba_kernels", False)


def fam_gemma3n(w, t):
    n = w.choice([4, 6, 8])
    draw_common(w, layers=n)
    hidden, h = draw_attention(w, hidden_choices=(64, 128))
    if w.d.get("head_dim") in (None,) or "head_dim" not in w.d:
        w.set("head_dim", w.choice([16, 32]))
    w.set("intermediate_size", w.choice([64, 96]) if w.rng.random() < 0.5 else
          [w.choice([64, 96]) for _ in range(n)])
    draw_window(w)
    if w.d.get("sliding_window") is None:
        w.set("sliding_window", w.choice([4, 8, 16]))
    lst = [w.choice(["sliding_attention", "full_attention"]) for _ in range(n)]
    lst[-1] = "full_attention"
    w.set("layer_types", lst)
    w.set("vocab_size_per_layer_input", w.get("vocab_size"))
    w.set("hidden_size_per_layer_input", w.choice([8, 16]))
    w.set("num_kv_shared_layers", w.choice([0, n // 2]))
    w.set("laurel_rank", w.choice([4, 8]))
    w.set("altup_num_inputs", w.choice([2, 4]))
    w.set("activation_sparsity_pattern", [w.choice([0.0, 0.95]) for _ in range(n)])


def fam_gemma4(w, t):
    n = w.choice([3, 4, 6])
    draw_common(w, layers=n)
    hidden, h = draw_attention(w, hidden_choices=(64, 128))
    if "head_dim" not in w.d or w.d["head_dim"] is None:
        w.set("head_dim", w.choice([16, 32]))
    draw_ffn(w)
    w.set("sliding_window", w.choice([4, 8, 16]))
    lst = [w.choice(["sliding_attention", "full_attention"]) for _ in range(n)]
    lst[-1] = "full_attention"
    w.set("layer_types", lst)
    ple = w.rng.random() < 0.5
    w.set("hidden_size_per_layer_input", w.choice([8, 16]) if ple else 0)
    w.set("vocab_size_per_layer_input", w.get("vocab_size"))
    w.maybe("num_kv_shared_layers", w.choice([0, 0, n // 2]), 0.2)
    w.set("enable_moe_block", False)
    w.set("attention_k_eq_v", False)
    if w.rng.random() < 0.4:
        w.set("enable_moe_block", True)
        w.set("num_experts", w.choice([2, 4]))
        w.set("top_k_experts", w.choice([1, 2]))
        w.set("moe_intermediate_size", w.choice([16, 32]))
    if w.rng.random() < 0.4:
        w.set("attention_k_eq_v", True)
        w.set("num_global_key_value_heads", w.choice(divisors(h)))
    if w.rng.random() < 0.4:
        w.set("global_head_dim", w.choice([32, 64]))


def fam_gemma4_unified(w, t):
    """Gemma 4 unified's decoder: Gemma 4's layers without per-layer embeddings or the MoE block (the class has
    neither key): layer schedules, windows, KV sharing, k_eq_v with its global KV heads, global head widths, the
    double-wide MLP of the shared layers, bidirectional attention."""
    n = w.choice([3, 4, 6])
    draw_common(w, layers=n)
    hidden, h = draw_attention(w, hidden_choices=(64, 128))
    if "head_dim" not in w.d or w.d["head_dim"] is None:
        w.set("head_dim", w.choice([16, 32]))
    draw_ffn(w)
    w.set("sliding_window", w.choice([4, 8, 16]))
    lst = [w.choice(["sliding_attention", "full_attention"]) for _ in range(n)]
    lst[-1] = "full_attention"
    w.set("layer_types", lst)
    w.maybe("num_kv_shared_layers", w.choice([0, 0, n // 2]), 0.2)
    w.set("attention_k_eq_v", False)
    if w.rng.random() < 0.4:
        w.set("attention_k_eq_v", True)
        w.set("num_global_key_value_heads", w.choice(divisors(h)))
    if w.rng.random() < 0.4:
        w.set("global_head_dim", w.choice([32, 64]))
    w.maybe("use_bidirectional_attention", w.choice(["all", "vision", None]), 0.4)


def fam_deepseek_v4(w, t):
    """DeepSeek-V4: MQA over a window, compressed layers (CSA with an indexer, HCA), hash-routed and routed MoE
    layers, hyper-connections; some keys under their legacy spellings (compress_ratios, compress_rate_csa/hca,
    num_hash_layers, qk_rope_head_dim), which DeepseekV4Config still reads."""
    n = draw_common(w, layers=w.choice([2, 3, 4, 5]))
    h = w.choice([2, 4, 8])
    w.set("hidden_size", w.choice([64, 128]))
    w.set("num_attention_heads", h)
    w.set("head_dim", w.choice([16, 32, 64]))
    w.set("q_lora_rank", w.choice([16, 32]))
    w.set("o_groups", w.choice([g for g in (1, 2, 4) if h % g == 0]))
    w.set("o_lora_rank", w.choice([8, 16]))
    w.set("moe_intermediate_size", w.choice([16, 32, 48]))
    e = w.choice([2, 4, 6, 8])
    w.set("n_routed_experts", e)
    w.set("num_experts_per_tok", w.choice(range(1, min(3, e) + 1)))
    w.set("sliding_window", w.choice([4, 8, 16]))
    csa, hca = w.choice([2, 4]), w.choice([4, 8, 16])
    kinds = ["sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention"]
    form = w.choice(["new", "new", "legacy", "default"])
    if form == "new":
        w.set("compress_rates", {"compressed_sparse_attention": csa, "heavily_compressed_attention": hca})
        w.set("layer_types", [w.choice(kinds) for _ in range(n)])
    elif form == "legacy":
        w.set("compress_rate_csa", csa)
        w.set("compress_rate_hca", hca)
        w.set("compress_ratios", [w.choice([0, csa, hca]) for _ in range(n)] + [0])   # one more: the MTP layer's
    if w.rng.random() < 0.5:
        w.set("mlp_layer_types", [w.choice(["hash_moe", "moe"]) for _ in range(n)])
    else:
        w.maybe("num_hash_layers", w.choice(range(0, n + 1)), 0.3)
    w.set("hc_mult", w.choice([1, 2, 4]))
    w.set("index_n_heads", w.choice([1, 2, 4]))
    w.set("index_head_dim", w.choice([8, 16]))
    w.set("index_topk", w.choice([2, 4, 8]))
    if w.rng.random() < 0.5:
        w.set("partial_rotary_factor", w.choice([0.25, 0.5]))
    else:
        w.maybe("qk_rope_head_dim", w.choice([4, 8]), 0.5)


def fam_mimo_v2_flash(w, t):
    """MiMo-V2-Flash: fam_moe, with V's own head width, twice the KV heads on the sliding layers (2 x kv must divide
    the heads, or the forward fails: mostly drawn so), and the window sometimes as sliding_window_size (the window
    less one)."""
    fam_moe(w, t)
    h = w.get("num_attention_heads")
    if h % 2 == 0 and w.rng.random() < 0.8:
        w.set("num_key_value_heads", w.choice(divisors(h // 2)))
    w.maybe("v_head_dim", w.choice([8, 16, 24, 32]), 0.2)
    if w.rng.random() < 0.25:
        w.d.pop("sliding_window", None)
        w.set("sliding_window_size", w.choice([3, 7, 15]))


def fam_minimax_m3(w, t):
    """MiniMax-M3's decoder: fam_moe, with the dense layers' own width, the sparse-attention layers of layer_types
    (an indexer each) and the indexer's widths; sometimes the legacy spellings (moe_layer_freq,
    sparse_attention_config) the published checkpoint writes."""
    fam_moe(w, t)
    n = w.get("num_hidden_layers")
    w.set("dense_intermediate_size", w.choice([48, 64, 96]))
    draw_layer_list(w, "layer_types", ["full_attention", "minimax_m3_sparse"], n)
    w.set("index_n_heads", w.choice([1, 2, 4]))
    w.set("index_head_dim", w.choice([8, 16, 32]))
    w.set("index_block_size", w.choice([2, 4]))
    w.set("index_topk_blocks", w.choice([1, 2]))
    hd = w.get("head_dim") or 128
    w.maybe("rotary_dim", w.choice([x for x in (4, 8, 16) if x <= hd]), 0.4)
    if w.rng.random() < 0.3 and "layer_types" in w.d:
        lt = w.d.pop("layer_types")
        w.set("sparse_attention_config", {"sparse_attention_freq": [int(k != "full_attention") for k in lt],
                                          "sparse_index_dim": w.d.pop("index_head_dim"),
                                          "sparse_num_index_heads": w.d.pop("index_n_heads")})
    if w.rng.random() < 0.3 and "mlp_layer_types" in w.d:
        w.set("moe_layer_freq", [int(k == "sparse") for k in w.d.pop("mlp_layer_types")])


def fam_cohere_compass(w, t):
    """Cohere Compass's decoder: fam_dense, with rope_parameters keyed by each layer type present (its rotary
    module reads rope_parameters[layer_type]; the class's flat default fails), one of them sometimes null (no RoPE
    on those layers)."""
    fam_dense(w, t)
    n = w.get("num_hidden_layers")
    kinds = sorted(set(w.d.get("layer_types") or ["full_attention"] * n))
    rp = {k: {"rope_type": "default", "rope_theta": w.choice([10000.0, 50000.0])} for k in kinds}
    if len(kinds) > 1 and w.rng.random() < 0.3:
        rp[w.choice(kinds)] = None
    w.set("rope_parameters", rp)


def fam_axk2(w, t):
    """A.X K2: fam_mla with a positive q_lora_rank (AXK2Config refuses none: its q_gate_proj reads the query LoRA),
    the gated norms' rank, and sometimes moe_layer_freq for the derived mlp_layer_types."""
    fam_mla(w, t)
    w.set("q_lora_rank", w.choice([16, 24, 48]))
    w.set("gated_norm_rank", w.choice([4, 8, 16]))
    if "mlp_layer_types" not in w.d and w.rng.random() < 0.4:
        w.set("moe_layer_freq", w.choice([1, 2, 3]))


def fam_hy_v4(w, t):
    """Hunyuan V4: fam_mla (indexer_types drawn, its first layer always "full": a shared layer reuses the previous
    layer's selection) and the hyper-connections' streams."""
    fam_mla(w, t)
    if "indexer_types" in w.d:
        w.d["indexer_types"][0] = "full"
    w.set("hc_mult", w.choice([1, 2, 3, 4]))
    if isinstance(w.dd.get("rope_parameters"), dict) and "mrope_section" in w.dd["rope_parameters"]:
        # Hunyuan V4 VL's decoder: mrope_section must sum to qk_rope_head_dim // 2 (its validate_architecture)
        half = w.get("qk_rope_head_dim") // 2
        rp = dict(w.dd["rope_parameters"])
        rp["mrope_section"] = [half - 2 * (half // 3), half // 3, half // 3]
        w.set("rope_parameters", rp)


def fam_step3p5(w, t):
    """Step 3.5 (Step-3.7-Flash's decoder, Step3p7TextConfig): fam_moe's attention and experts; a window always set
    (Step3p7TextModel builds the sliding mask in every forward and fails without one); layer_types with sliding layers
    whose query heads are num_sliding_attention_heads, attention_other_setting's or an explicit per_layer_config (a
    multiple of the KV heads); the MoE layers by mlp_layer_types or the legacy moe_layers_enum (a string or a list);
    the shared expert's width; gating per head or per value; and MTP layers (num_nextn_predict_layers) with the lists
    padded to them as the checkpoints write them."""
    fam_moe(w, t)
    n = w.get("num_hidden_layers")
    w.set("sliding_window", w.choice([3, 4, 8, 16, 64]))
    if "layer_types" not in w.d or w.rng.random() < 0.3:
        lt = [w.choice(["full_attention", "sliding_attention"]) for _ in range(n)]
        if w.rng.random() < 0.8:
            lt[w.rng.randrange(n)] = "sliding_attention"
        w.set("layer_types", lt)
    kv = w.get("num_key_value_heads")
    sh = kv * w.choice([1, 2, 3])
    form = w.rng.random()
    if form < 0.5:
        w.set("num_sliding_attention_heads", sh)
    elif form < 0.65:
        w.set("attention_other_setting", {"num_attention_heads": sh})
    elif form < 0.8:
        w.set("per_layer_config", {str(i): {"num_attention_heads": w.choice([sh, kv])}
                                   for i, k in enumerate(w.d["layer_types"]) if k == "sliding_attention"})
    w.set("share_expert_dim", w.choice([16, 32, 48]))
    if "mlp_layer_types" not in w.d and w.rng.random() < 0.4:
        moe = sorted(w.rng.sample(range(n), w.choice(range(0, n + 1))))
        w.set("moe_layers_enum", ",".join(str(i) for i in moe) if w.rng.random() < 0.5 else moe)
    g = w.rng.random()
    if g < 0.3:
        w.set("gating", "per-element")
    elif g < 0.45:
        w.set("gating", "per-head")
    if w.rng.random() < 0.3:
        mtp = w.choice([1, 2])
        w.set("num_nextn_predict_layers", mtp)
        for k, kinds in (("layer_types", ["full_attention", "sliding_attention"]), ("mlp_layer_types",
                                                                                   ["dense", "sparse"])):
            if k in w.d and w.rng.random() < 0.7:
                w.d[k] = w.d[k] + [w.choice(kinds) for _ in range(mtp)]


def inkling_trunk(w, local_ids):
    """The Inkling families' trunk: the full-attention layers' heads, KV heads and head_dim and the sliding ones'
    (swa_*) drawn apart, with the window (the sliding layers' relative-bias extent too), rel_extent, d_rel and the
    conv kernel; the layer kinds as layer_types ("hybrid", "hybrid_sliding"), as local_layer_ids (Inkling's), or the
    class's rule; routed and top-k expert counts. Returns the layers."""
    n = draw_common(w, layers=w.choice([2, 3, 4, 6, 7]))
    w.set("hidden_size", w.choice([48, 64, 96, 128]))
    for heads_key, kv_key, hd_key in (("num_attention_heads", "num_key_value_heads", "head_dim"),
                                      ("swa_num_attention_heads", "swa_num_key_value_heads", "swa_head_dim")):
        h = w.choice([2, 3, 4, 6, 8])
        w.set(heads_key, h)
        w.set(kv_key, w.choice(divisors(h)))
        w.set(hd_key, w.choice([8, 16, 24, 32]))
    w.set("sliding_window_size", w.choice([3, 4, 8, 16, 64]))
    w.maybe("rel_extent", w.choice([4, 8, 16, 32]), 0.2)
    w.maybe("d_rel", w.choice([2, 4, 8, 16]), 0.2)
    w.maybe("conv_kernel_size", w.choice([2, 3, 4, 5]), 0.3)
    r = w.rng.random()
    if r < 0.4:
        w.set("layer_types", [w.choice(["hybrid", "hybrid_sliding"]) for _ in range(n)])
    elif r < 0.7 and local_ids:
        w.set("local_layer_ids", sorted(w.rng.sample(range(n), w.rng.randrange(n + 1))))
    e = w.choice([2, 3, 4, 6])
    w.set("n_routed_experts", e)
    w.set("num_experts_per_tok", w.choice(range(1, e + 1)))
    return n


def fam_inkling_text(w, t):
    """Inkling: inkling_trunk, with dense and sparse layers as mlp_layer_types or dense_mlp_idx, the dense width
    sometimes as dense_intermediate_size (intermediate_size then the experts' width, as the checkpoints write it), and
    the shared experts' count."""
    n = inkling_trunk(w, True)
    r = w.rng.random()
    if r < 0.4:
        w.set("mlp_layer_types", [w.choice(["dense", "sparse"]) for _ in range(n)])
    elif r < 0.6:
        w.set("dense_mlp_idx", w.choice(range(n + 1)))
    if w.rng.random() < 0.5:
        w.set("dense_intermediate_size", w.choice([48, 64, 96]))
        w.set("intermediate_size", w.choice([16, 32, 48]))
    else:
        w.set("intermediate_size", w.choice([48, 64, 96]))
        w.set("moe_intermediate_size", w.choice([16, 32, 48]))
    w.set("n_shared_experts", w.choice([1, 2, 3]))


def fam_inkling2_text(w, t):
    """Inkling 2: inkling_trunk, with the experts' width (sometimes under its alias intermediate_size), the head's
    unpadded_vocab_size (below, at or above vocab_size) and the residual blocks' length."""
    inkling_trunk(w, False)
    w.set(w.choice(["moe_intermediate_size", "intermediate_size"]), w.choice([16, 32, 48]))
    v = w.get("vocab_size")
    w.set("unpadded_vocab_size", w.choice([v - 7, v, v + 5]))
    w.maybe("n_layers_per_attn_res_block", w.choice([1, 2, 3, 6]), 0.3)


def fam_inkling2_loop_text(w, t):
    """Inkling 2 Loop: fam_inkling2_text, with the looped range (multiples of the residual blocks' length, mostly
    inside the layers, sometimes past them), the passes and the message gates' rank, sometimes as the checkpoints'
    loop_config."""
    fam_inkling2_text(w, t)
    n = w.get("num_hidden_layers")
    b = w.choice([1, 2, 3])
    w.set("n_layers_per_attn_res_block", b)
    start = b * w.choice(range(1, max(1, (n - 1) // b) + 1))
    end = start + b * w.choice([1, 1, 2, 3])
    passes, rank = w.choice([1, 2, 3]), w.choice([4, 8, 16])
    if w.rng.random() < 0.25:
        w.set("loop_config", {"core_start": start, "core_end": end, "num_passes": passes, "gate_rank": rank})
    else:
        w.set("loop_layer_index_start", start)
        w.set("loop_layer_index_end", end)
        w.maybe("loop_num_passes", passes, 0.2)
        w.maybe("loop_gate_rank", rank, 0.2)


def fam_mistral_large4(w, t):
    """Mistral Large 4's decoder: fam_mla (no query LoRA: MistralLarge4TextConfig has none) with the NoPE layers
    (no_rope_layers, or the no_rope_layer_interval it is derived from), KV shared with earlier layers of the same RoPE
    kind (kv_source_layers), the indexer's pattern (its first layer "full": a shared layer reuses the previous
    selection), the experts under num_experts (which wins over n_routed_experts) and the logit soft-capping."""
    fam_mla(w, t)
    n = w.get("num_hidden_layers")
    if "no_rope_layers" not in w.d and w.rng.random() < 0.6:
        w.set("no_rope_layer_interval", w.choice([1, 2, 3, 4]))
    every = w.d.get("no_rope_layer_interval", 4)
    rope = w.d.get("no_rope_layers") or [int((i + 1) % every != 0) for i in range(n)]
    if w.rng.random() < 0.7:
        src = []
        for i in range(n):
            own = [j for j in range(i) if src[j] == j and rope[j] == rope[i]]
            src.append(w.choice(own) if own and w.rng.random() < 0.45 else i)
        w.set("kv_source_layers", src)
    if "indexer_types" in w.d:
        w.d["indexer_types"][0] = "full"
    elif w.rng.random() < 0.3:
        w.set("index_topk_pattern", "F" + "".join(w.choice("FS") for _ in range(n - 1)))
    ek = first(w.d, "n_routed_experts", "num_local_experts")
    if ek and w.rng.random() < 0.25:
        w.set("num_experts", w.d.pop(ek))
    if w.rng.random() < 0.4:
        w.set("final_logit_softcapping", w.choice([15.0, 30.0]))


def fam_dots3(w, t):
    """dots.llm3 Note's decoder: fam_mla's ranks and experts (KV heads = heads, a query LoRA always: the class refuses
    otherwise) with its three kinds of layer (layer_types, or the use_sliding_window / use_dsa rule), the sliding
    layers' own widths (the swa_* keys, or an explicit per_layer_config), the window (sliding_window, null: 512, or
    sliding_window_size), the MoE schedule (first_k_dense_replace, moe_layer_freq a number or a list) and the shared
    experts (n_shared_experts, shared_experts_intermediate_size or moe_shared_expert_intermediate_size)."""
    fam_mla(w, t)
    n = w.get("num_hidden_layers")
    w.set("num_key_value_heads", w.get("num_attention_heads"))
    if w.get("q_lora_rank") is None:
        w.set("q_lora_rank", w.choice([16, 24, 48]))
    w.set("index_head_dim", w.choice([16, 32]))
    kinds = None
    r = w.rng.random()
    if r < 0.45:
        kinds = [w.choice(["indexed_attention", "sliding_attention", "full_attention"]) for _ in range(n)]
        kinds[w.rng.randrange(n)] = "sliding_attention"
        w.set("layer_types", kinds)
    elif r < 0.6:
        w.set("use_sliding_window", w.rng.random() < 0.5)
    if w.rng.random() < 0.3:
        w.set("use_dsa", w.rng.random() < 0.5)
    sh, nope, rope = w.choice([2, 4]), w.choice([8, 16]), w.choice([4, 8])
    swa = {"num_attention_heads": sh, "num_key_value_heads": sh, "q_lora_rank": w.choice([16, 32]),
           "kv_lora_rank": w.choice([16, 24, 32]), "head_dim": nope + rope, "qk_nope_head_dim": nope,
           "v_head_dim": w.choice([8, 16])}
    if kinds is not None and w.rng.random() < 0.3:
        w.set("per_layer_config", {str(i): dict(swa, qk_rope_head_dim=rope)
                                   for i, k in enumerate(kinds) if k == "sliding_attention"})
    else:
        for k, v in swa.items():
            w.set("swa_" + k, v)
        if w.rng.random() < 0.5:
            w.set("swa_qk_rope_head_dim", rope)
    win = w.rng.random()
    if win < 0.6:
        w.set("sliding_window", w.choice([3, 4, 8, 16]))
    elif win < 0.8:
        w.set("sliding_window", None)
        w.set("sliding_window_size", w.choice([4, 8]))
    w.d.pop("first_k_dense_replace", None)
    if "mlp_layer_types" not in w.d and w.rng.random() < 0.6:
        w.set("first_k_dense_replace", w.choice(range(0, n)))
        if w.rng.random() < 0.5:
            w.set("moe_layer_freq", w.choice([1, 2]) if w.rng.random() < 0.5 else
                  [w.choice([0, 1]) for _ in range(n)])
    w.set("n_shared_experts", w.choice([1, 2]))
    w.set("moe_shared_expert_intermediate_size" if w.rng.random() < 0.25 else "shared_experts_intermediate_size",
          w.choice([16, 32]))


def fam_qwen4_exp(w, t):
    """Qwen4-Exp's decoder: fam_linear's gated delta net, attention and experts with its own layer kinds
    ("indexed_attention", "full_attention" read as indexed, "linear_attention"; or full_attention_interval), the QSA
    indexer's fields (always given: transformers cannot build an attention layer without them; the rotary part of
    head_dim at most indexer_head_dim), the hyper-connections' hc_count and hc_lowrank."""
    fam_linear(w, t)
    n = w.get("num_hidden_layers")
    if w.rng.random() < 0.3:
        w.d.pop("layer_types", None)
        w.set("full_attention_interval", w.choice([1, 2, 3]))
    else:
        lt = [w.choice(["indexed_attention", "full_attention", "linear_attention"]) for _ in range(n)]
        lt[w.rng.randrange(n)] = w.choice(["indexed_attention", "full_attention"])
        w.set("layer_types", lt)
    hd = w.get("head_dim") or w.get("hidden_size") // w.get("num_attention_heads")
    idim = w.choice([8, 16, 32])
    w.set("rope_parameters", {"rope_type": "default", "rope_theta": 10000.0,
                              "partial_rotary_factor": w.choice([x for x in (0.25, 0.5, 1.0) if int(hd * x) <= idim]
                                                                or [0.25])})
    ratio = w.choice([2, 4])
    w.set("indexer_n_heads", w.choice([1, 2, 4]))
    w.set("indexer_kv_heads", 1)
    w.set("indexer_head_dim", idim)
    w.set("indexer_compress_ratio", ratio)
    w.set("indexer_budget", ratio * w.choice([1, 2, 4]))
    w.set("hc_count", w.choice([2, 3, 4]))
    w.set("hc_lowrank", w.choice([4, 8, 16]))


def fam_glm5_next(w, t):
    """GLM-5.3-Flash's decoder: fam_mla's ranks and experts without RoPE (qk_rope_head_dim 0, a query LoRA always, KV
    heads = heads: the class refuses otherwise), its layer kinds ("linear_attention" Kimi delta attention,
    "indexed_attention" or "full_attention" MLA; or the every-fourth default), the delta attention's heads, head_dim
    and conv (or linear_attn_config), the indexer's pattern (its first MLA layer "full") and pool (index_kpool
    dividing index_topk), hc_mult."""
    fam_mla(w, t)
    n = w.get("num_hidden_layers")
    w.set("qk_rope_head_dim", 0)
    w.set("num_key_value_heads", w.get("num_attention_heads"))
    if w.get("q_lora_rank") is None:
        w.set("q_lora_rank", w.choice([16, 24, 48]))
    kinds = None
    if w.rng.random() < 0.7:
        kinds = [w.choice(["linear_attention", "indexed_attention", "full_attention"]) for _ in range(n)]
        kinds[w.rng.randrange(n)] = "indexed_attention"
        w.set("layer_types", kinds)
    kinds = kinds or ["indexed_attention" if i % 4 == 3 else "linear_attention" for i in range(n)]
    if "indexer_types" in w.d or w.rng.random() < 0.4:
        it = [w.choice(["full", "shared"]) for _ in range(n)]
        first_mla = next((i for i, k in enumerate(kinds) if k != "linear_attention"), 0)
        it[first_mla] = "full"
        w.set("indexer_types", it)
    pool = w.choice([1, 2, 4])
    w.set("index_kpool", pool)
    w.set("index_topk", pool * w.choice([1, 2, 4]))
    heads, hd, conv = w.choice([1, 2, 4]), w.choice([8, 16]), w.choice([2, 3, 4])
    if w.rng.random() < 0.3:
        w.set("linear_attn_config", {"num_heads": heads, "head_dim": hd, "short_conv_kernel_size": conv})
    else:
        w.set("linear_num_heads", heads)
        w.set("linear_head_dim", hd)
        w.set("linear_conv_kernel_dim", conv)
    w.set("hc_mult", w.choice([1, 2, 3, 4]))


FAMILIES = {
    "gpt2": fam_gpt2, "gptj": fam_gptj, "gpt_bigcode": fam_gpt_bigcode, "falcon": fam_falcon,
    "gpt_neox": fam_gpt_neox, "mamba": fam_mamba, "falcon_mamba": fam_mamba, "mamba2": fam_mamba2,
    "mixtral": fam_moe, "qwen2_moe": fam_moe, "qwen3_moe": fam_moe, "olmoe": fam_moe, "granitemoe": fam_moe,
    "phimoe": fam_moe, "ernie4_5_moe": fam_moe, "minimax_m2": fam_moe, "dots1": fam_moe, "glm4_moe": fam_moe,
    "qwen3_vl_moe_text": fam_moe, "deepseek_v3": fam_mla, "deepseek_v2": fam_mla, "deepseek_v32": fam_mla,
    "glm4_moe_lite": fam_mla, "glm_moe_dsa": fam_mla, "hunyuan_v1_moe": fam_hunyuan_moe,
    "longcat_flash": fam_longcat, "gpt_oss": fam_gpt_oss, "llama4_text": fam_llama4,
    "qwen3_next": fam_linear, "olmo_hybrid": fam_olmo_hybrid, "lara_mini": fam_lara_mini, "hrm_text": fam_hrm_text, "doge": fam_doge, "xlstm": fam_xlstm, "dory": fam_dory, "cpmant": fam_cpmant, "modernbert-decoder": fam_modernbert_decoder, "qwen3_5_text": fam_linear, "qwen3_5_moe_text": fam_linear, "kimi_linear": fam_kimi,
    "minimax": fam_minimax, "lfm2": fam_lfm2, "lfm3": fam_lfm3, "lfm2_moe": fam_lfm2, "jamba": fam_jamba, "bamba": fam_bamba,
    "granitemoehybrid": fam_granitemoehybrid, "nemotron_h": fam_nemotron_h, "falcon_h1": fam_falcon_h1,
    "zamba2": fam_zamba2, "zamba": fam_zamba, "gpt_neo": fam_gpt_neo, "dbrx": fam_dbrx, "rwkv": fam_rwkv,
    "mistral4": fam_mla, "axk1": fam_mla, "aria_text": fam_moe, "kolibri1": fam_moe, "flint": fam_moe,
    "laguna": fam_moe, "afmoe": fam_moe, "beam": fam_moe, "jetmoe": fam_moe, "exaone_moe": fam_moe, "hy_v3": fam_moe, "gemma3n_text": fam_gemma3n, "gemma4_text": fam_gemma4, "deepseek_v4": fam_deepseek_v4,
    "gemma4_unified_text": fam_gemma4_unified,
    "mimo_v2_flash": fam_mimo_v2_flash, "minimax_m3_vl_text": fam_minimax_m3,
    "cohere_compass_text": fam_cohere_compass, "axk2": fam_axk2, "hy_v4": fam_hy_v4, "hy_v4_vl_text": fam_hy_v4,
    # MLA and MoE types of the enumeration drawn with their own knobs (expert counts, MLA ranks) rather than as plain
    # decoders
    "sarvam_mla": fam_mla, "youtu": fam_mla_dense, "minicpm3": fam_mla_dense, "sarvam_moe": fam_moe,
    "solar_open": fam_moe, "flex_olmo": fam_moe, "granitemoeshared": fam_moe, "granitemoe_swa": fam_moe,
    "cohere2_moe": fam_moe, "inkling_text": fam_inkling_text, "inkling2_text": fam_inkling2_text,
    "inkling2_loop_text": fam_inkling2_loop_text,
}
FAMILIES["kosmos_2_text_model"] = FAMILIES["kosmos_2_5_text_model"] = fam_kosmos
FAMILIES["qwen3_omni_moe_text"] = fam_moe   # Qwen3-Omni's Thinker decoder: Qwen3-MoE's keys
FAMILIES["step3p5"] = fam_step3p5
FAMILIES["mistral_large4_text"] = fam_mistral_large4
FAMILIES["dots3_note_text"] = fam_dots3
FAMILIES["qwen4_exp_text"] = fam_qwen4_exp
FAMILIES["glm5_next_text"] = fam_glm5_next


def fam_ernie_vl(w, t):
    """ERNIE-4.5-VL's decoder: an ERNIE 4.5 MoE (fam_moe: experts, top-k, shared experts, mlp_layer_types) whose
    moe_intermediate_size lists two widths, the text experts' and the vision experts' (each drawn)."""
    fam_moe(w, t)
    w.set("moe_intermediate_size", [w.choice([16, 32, 48, 64]), w.choice([8, 16, 24, 32])])


FAMILIES["ernie4_5_vl_moe_text"] = fam_ernie_vl


def fam_deepseek_ocr(w, t):
    """The decoders of Unlimited-OCR and DeepSeek-OCR-2 (DeepSeek-V2's MoE behind Llama's attention): fam_moe, with
    mlp_layer_types always drawn for DeepSeek-OCR-2 (its None builds nothing) and, for Unlimited-OCR, either drawn or
    derived from first_k_dense_replace (the kwarg its __post_init__ pops), a window never null (validate_architecture)
    and layer_types of its two kinds."""
    fam_moe(w, t)
    n = w.get("num_hidden_layers")
    if t == "deepseek_ocr2_text":
        if "mlp_layer_types" not in w.d:
            draw_layer_list(w, "mlp_layer_types", ["dense", "sparse"], n, need=("sparse",))
        return
    if "mlp_layer_types" not in w.d and w.rng.random() < 0.6:
        w.set("first_k_dense_replace", w.choice(range(0, n + 1)))
    w.set("sliding_window", w.choice([3, 4, 8, 16, 64]))
    draw_layer_list(w, "layer_types", ["reference_sliding_attention", "full_attention"], n)


FAMILIES["unlimited_ocr_text"] = FAMILIES["deepseek_ocr2_text"] = fam_deepseek_ocr


def draw_vq(w, key="vq_config"):
    """A VQ-VAE (ChameleonVQVAEConfig, JanusVQVAEConfig): channels (multiples of 32, its GroupNorms' groups), one to
    four levels of multipliers, blocks a level, latent and codebook sizes, double_latent, and Chameleon's attention
    blocks (attn_resolutions among the levels' resolutions, attn_type)."""
    rng = w.rng
    res = rng.choice([32, 64, 128])
    levels = rng.choice([1, 2, 3, 4])
    vq = {"base_channels": rng.choice([32, 64]), "channel_multiplier": [rng.choice([1, 2, 3]) for _ in range(levels)],
          "num_res_blocks": rng.choice([1, 2]), "latent_channels": rng.choice([8, 16, 32]),
          "embed_dim": rng.choice([4, 8, 16]), "num_embeddings": rng.choice([16, 64]),
          "in_channels": rng.choice([1, 3]), "double_latent": rng.random() < 0.5}
    if "resolution" in w.dd.get(key, {}):
        vq["resolution"] = res
        if rng.random() < 0.7:
            # some of the levels' resolutions (res halved per level), sometimes one no level has
            vq["attn_resolutions"] = sorted(rng.sample([res >> l for l in range(levels)], rng.choice(range(1, levels + 1)))
                                            + ([res * 2] if rng.random() < 0.3 else []))
        if rng.random() < 0.25:
            vq["attn_type"] = "none"
    w.set(key, vq)


def draw_janus(rng, d, cfg0):
    """Janus: the tower's own keys (mlp_ratio, attention_bias, use_qk_norm, the aligner's projection_dim and depth),
    the VQ-VAE (draw_vq) and its generation side (projection_dim, num_hidden_layers, image_token_embed_dim,
    out_channels)."""
    vc = d["vision_config"]
    vc["mlp_ratio"] = rng.choice([1.5, 2, 4.0])
    vc["projection_dim"] = rng.choice([16, 32, 48])
    vc["depth"] = rng.choice([1, 2, 3])
    for k in ("attention_bias", "use_qk_norm"):
        if rng.random() < 0.7:
            vc[k] = rng.random() < 0.5
    vc.pop("intermediate_size", None)          # not a JanusVisionConfig key: the MLP is hidden x mlp_ratio
    w = Draw(rng, cfg0.to_dict(), None)
    draw_vq(w)
    vq = w.d["vq_config"]
    vq.update({"projection_dim": rng.choice([16, 32]), "num_hidden_layers": rng.choice([1, 2, 3]),
               "image_token_embed_dim": rng.choice([16, 24, 32]), "out_channels": rng.choice([1, 3])})
    d["vq_config"] = vq


def fam_chameleon(w, t):
    """Chameleon: a Llama decoder (fam_dense), the vocabulary_map it cannot be built without, and the VQ-VAE."""
    fam_dense(w, t)
    w.set("vocabulary_map", {"<image>": 3, **{f"IMGIMG{chr(65 + i)}Z": 4 + i for i in range(8)}})
    draw_vq(w)


FAMILIES["chameleon"] = fam_chameleon


def fam_muse_spark(w, t):
    """Muse Spark's decoder: Muse Glimmer's attention and windows (fam_dense), the experts (count, top-k, width), the
    width they run at (moe_hidden_size) and, in some, mlp_layer_types with dense layers among the sparse ones."""
    fam_dense(w, t)
    draw_moe(w, "num_local_experts", "num_experts_per_tok")
    w.set("moe_hidden_size", w.choice([16, 24, 48]))
    n = w.get("num_hidden_layers")
    if isinstance(n, int) and w.rng.random() < 0.5:
        w.set("mlp_layer_types", [w.choice(["dense", "sparse"]) for _ in range(n)])


FAMILIES["muse_spark_text"] = fam_muse_spark
FAMILIES["bailing_hybrid"] = fam_bailing_hybrid


def fam_zaya(w, t):
    """ZAYA: heads, KV heads and head_dim, the CCA convolutions' kernels (cca_time0, cca_time1), the experts (count
    and width; top-1 is the only one ZayaConfig takes), the router's width, and the layer kinds ("hybrid",
    "hybrid_sliding" with a window) or none stated."""
    n = draw_common(w)
    draw_attention(w)
    draw_moe(w, "num_experts", None)
    w.set("router_hidden_size", w.choice([8, 16, 24]))
    w.set("cca_time0", w.choice([1, 2, 3]))
    w.set("cca_time1", w.choice([1, 2, 3]))
    if w.rng.random() < 0.6:
        w.set("sliding_window", w.choice([3, 4, 8, 16]))
        draw_layer_list(w, "layer_types", ["hybrid", "hybrid_sliding"], n)
    if w.has("max_position_embeddings") and w.rng.random() < 0.3:
        w.set("max_position_embeddings", w.choice([64, 128, 4096]))


FAMILIES["zaya"] = fam_zaya


def draw_text(rng, t, cls, dd):
    """A decoder config of type t (class cls, defaults dd)."""
    w = Draw(rng, dd, cls)
    FAMILIES.get(t, fam_dense)(w, t)
    draw_bools(w, [k for k in own_bools(cls) if k not in FIXED_BOOLS_BY_TYPE.get(t, ())])
    return spell(rng, cls, w.d)


def spell(rng, cls, d):
    """Some keys under the other spelling the configuration class reads (its attribute_map: num_local_experts for
    Qwen3-MoE's num_experts, n_embd for GPT-2's hidden_size, ...), as checkpoints of other versions write them."""
    aliases = {}
    for alias, field in (getattr(cls, "attribute_map", None) or {}).items():
        aliases.setdefault(field, []).append(alias)
    out = {}
    for k, v in d.items():
        if k in aliases and rng.random() < 0.35:
            k = rng.choice(sorted(aliases[k]))
        out[k] = v
    return out


# ----- vision towers -------------------------------------------------------------------------------------------------

def draw_vision(rng, vd, text_hidden):
    """A small vision tower of the defaults vd (a vision_config's to_dict())."""
    w = Draw(rng, vd, None)
    mt = vd.get("model_type", "")
    d = w.d
    if mt == "lfm3_vl_vision":
        return draw_lfm3_vl_vision(w, rng, vd)
    if mt == "ernie4_5_vl_moe_vision":
        return draw_ernie_vl_vision(w, rng, vd)
    if mt.startswith("qwen") or mt == "exaone4_5_vision":     # EXAONE 4.5: Qwen2.5-VL's tower and keys
        w.set("depth", w.choice([1, 2, 3]))
        h = w.choice([2, 4])
        w.set("num_heads", h)
        hid = w.choice([32, 64])
        if "embed_dim" in vd:                       # Qwen2-VL: embed_dim wide, hidden_size the output
            w.set("embed_dim", hid)
            w.set("hidden_size", text_hidden)
            w.maybe("mlp_ratio", w.choice([2, 4]), 0.3)
        else:
            w.set("hidden_size", hid)
            w.set("intermediate_size", w.choice([48, 64, 96]))
            w.set("out_hidden_size", text_hidden)
        w.set("patch_size", w.choice([4, 8, 14]))
        w.maybe("temporal_patch_size", w.choice([1, 2]), 0.3)
        w.maybe("spatial_merge_size", w.choice([1, 2]), 0.3)
        if "num_position_embeddings" in vd:
            w.maybe("num_position_embeddings", w.choice([16, 64, 144]), 0.3)
        if "deepstack_visual_indexes" in vd:
            w.maybe("deepstack_visual_indexes", sorted(rng.sample(range(w.get("depth")),
                                                              rng.choice(range(0, w.get("depth") + 1)))), 0.3)
        if "fullatt_block_indexes" in vd:
            w.maybe("fullatt_block_indexes", sorted(rng.sample(range(w.get("depth")), 1)), 0.3)
        if "window_size" in vd:
            w.maybe("window_size", w.choice([16, 32, 112]), 0.3)
    else:
        h = w.choice([2, 4])
        w.set("num_attention_heads", h)
        w.set("hidden_size", w.choice([32, 64]))
        w.set("intermediate_size", w.choice([48, 64, 96]))
        w.set("num_hidden_layers", w.choice([1, 2, 3]))
        patch = w.choice([4, 8, 14])
        w.set("patch_size", patch)
        if "num_patches" in vd:                     # SigLIP 2: a table of num_patches positions, no image_size
            w.set("num_patches", w.choice([4, 9, 16, 64]))
        else:
            w.set("image_size", patch * w.choice([2, 3, 4]))
        if "vision_use_head" in vd:
            w.maybe("vision_use_head", rng.random() < 0.5, 0.3)
        if "projection_dim" in vd:
            w.maybe("projection_dim", w.choice([16, 32]), 0.3)
        if "head_dim" in vd:
            w.set("head_dim", w.get("hidden_size") // h)
        if mt == "llama4_vision_model":
            w.set("vision_output_dim", w.choice([32, 64]))
            w.set("projector_input_dim", w.choice([32, 64]))
            w.set("projector_output_dim", w.choice([32, 64]))
            w.maybe("multi_modal_projector_bias", rng.random() < 0.5, 0.3)
    d["model_type"] = mt
    return d


def draw_ernie_vl_vision(w, rng, vd):
    """ERNIE-4.5-VL's tower: width, heads dividing it, MLP, depth, patch, channels, and the resampler's spatial and
    temporal merges; depth and heads under either spelling (its attribute_map)."""
    h = w.choice([2, 4])
    w.set("num_heads" if rng.random() < 0.7 else "num_attention_heads", h)
    w.set("hidden_size", w.choice([32, 64]))
    w.set("intermediate_size", w.choice([48, 64, 96]))
    w.set("depth" if rng.random() < 0.7 else "num_hidden_layers", w.choice([1, 2, 3]))
    w.set("patch_size", w.choice([4, 8, 14]))
    w.maybe("in_channels", w.choice([1, 3, 4]), 0.4)
    w.maybe("spatial_merge_size", w.choice([1, 2, 3]), 0.4)
    w.maybe("temporal_merge_size", w.choice([1, 2, 3]), 0.4)
    w.d["model_type"] = vd["model_type"]
    return w.d


def draw_lfm3_vl_vision(w, rng, vd):
    """LFM3-VL's tower: GQA heads (the KV heads dividing them; the width not always a multiple of the heads), the
    layer schedule of conv and attention layers (layer_types drawn, or absent: __post_init__'s), the patch, temporal
    patch, merge and depthwise kernel sizes, the channels."""
    heads = w.choice([2, 3, 4])
    w.set("num_attention_heads", heads)
    w.set("num_key_value_heads", w.choice(divisors(heads)))
    w.set("hidden_size", w.choice([32, 48, 64]))
    w.set("intermediate_size", w.choice([48, 64, 96]))
    L = w.choice([1, 2, 3, 4, 5])
    w.set("num_hidden_layers", L)
    if rng.random() < 0.6:
        w.set("layer_types", [rng.choice(["conv", "full_attention"]) for _ in range(L)])
    w.set("patch_size", w.choice([2, 4, 8]))
    w.maybe("temporal_patch_size", w.choice([1, 2, 3]), 0.3)
    w.maybe("spatial_merge_size", w.choice([1, 2, 3]), 0.3)
    w.maybe("conv_kernel_size", w.choice([1, 3, 5]), 0.3)
    w.maybe("in_channels", w.choice([1, 3, 4]), 0.5)
    w.d["model_type"] = vd["model_type"]
    return w.d


WRAPPER_KEYS = {"multimodal_projector_bias", "vision_feature_layer", "spatial_merge_size", "mm_tokens_per_image"}


def draw_wrapper(rng, t, cfg0):
    """A multimodal wrapper: its decoder and tower drawn, its own keys too."""
    tc, vc = cfg0.text_config, getattr(cfg0, "vision_config", None)
    td = tc.to_dict()
    text = draw_text(rng, tc.model_type, type(tc), td)
    text["model_type"] = tc.model_type
    mrope(text, td)
    d = {"model_type": t, "text_config": text}
    hidden = text.get("hidden_size", td.get("hidden_size"))
    if vc is not None:
        d["vision_config"] = draw_vision(rng, vc.to_dict(), hidden)
    top = cfg0.to_dict()
    v = text.get("vocab_size", td.get("vocab_size"))
    fix_tokens(None, v, dd=top, d=d)
    # the outer tie_word_embeddings is stated whenever text_config states its own: transformers ties from the
    # wrapper's key (its class default when absent), a checkpoint saved with only the inner key is read as that key
    # by memplan (tests/ref/hf/README.md), and the variants compare like with like
    if "tie_word_embeddings" in top and (rng.random() < 0.7 or "tie_word_embeddings" in text):
        d["tie_word_embeddings"] = rng.random() < 0.5
    if "multimodal_projector_bias" in top:
        if rng.random() < 0.7:
            d["multimodal_projector_bias"] = rng.random() < 0.5
    if "vision_feature_layer" in top and rng.random() < 0.5:
        d["vision_feature_layer"] = rng.choice([-1, -2, [-2, -1]])
    if "spatial_merge_size" in top and rng.random() < 0.5:
        d["spatial_merge_size"] = rng.choice([1, 2])
    if t == "gemma4":
        # Gemma 4's towers are null by default: half the variants draw each (small, every flag either way)
        if rng.random() < 0.5:
            h = rng.choice([2, 4])
            hid = rng.choice([32, 64])
            d["vision_config"] = {"model_type": "gemma4_vision", "hidden_size": hid, "num_attention_heads": h,
                                  "num_key_value_heads": rng.choice(divisors(h)), "head_dim": hid // h,
                                  "intermediate_size": rng.choice([48, 64, 96]),
                                  "num_hidden_layers": rng.choice([1, 2]), "patch_size": rng.choice([4, 8]),
                                  "position_embedding_size": rng.choice([64, 256]),
                                  "pooling_kernel_size": rng.choice([1, 2, 3]),
                                  "use_clipped_linears": rng.random() < 0.5, "standardize": rng.random() < 0.5}
        if rng.random() < 0.5:
            d["audio_config"] = {"model_type": "gemma4_audio", "hidden_size": rng.choice([32, 64]),
                                 "num_attention_heads": rng.choice([2, 4]), "num_hidden_layers": rng.choice([1, 2]),
                                 "subsampling_conv_channels": [rng.choice([8, 16]), rng.choice([4, 8])],
                                 "conv_kernel_size": rng.choice([3, 5]), "output_proj_dims": rng.choice([32, 48]),
                                 "use_clipped_linears": rng.random() < 0.5}
    draw_wrapper_v1(rng, t, d, hidden)
    if t == "gemma4_unified":
        # Gemma 4 unified's encoder-free embedders are null by default: half the variants draw each
        if rng.random() < 0.5:
            d["vision_config"] = {"model_type": "gemma4_unified_vision", "patch_size": rng.choice([2, 4, 8]),
                                  "pooling_kernel_size": rng.choice([1, 2, 3]),
                                  "mm_embed_dim": rng.choice([16, 32, 48]), "mm_posemb_size": rng.choice([8, 64]),
                                  "output_proj_dims": rng.choice([16, 32, 48])}
        if rng.random() < 0.5:
            d["audio_config"] = {"model_type": "gemma4_unified_audio", "audio_embed_dim": rng.choice([16, 40, 64])}
    if t in ("blip-2", "instructblip", "instructblipvideo"):
        draw_blip(rng, t, d)
    if t in ("got_ocr2", "pp_chart2table"):
        draw_sam(rng, d)
    if t == "deepseek_vl_hybrid":
        draw_sam(rng, d, "high_res_vision_config", sam_class=True)
    if t in ("unlimited_ocr", "deepseek_ocr2"):
        draw_ocr_towers(rng, t, d, cfg0.vision_config)
    if t == "janus":
        draw_janus(rng, d, cfg0)
    if t == "granite4_vision":
        # the CLIP tower at least 64 wide (the Window Q-Former takes hidden / 64 heads), the downsamplers' windows,
        # deepstack_layer_map pairs (none to three), the Q-Former absent (its SubConfigSpec defaults) or partial
        vc = d["vision_config"]
        vc["hidden_size"] = rng.choice([64, 128])
        vc["num_attention_heads"] = rng.choice([2, 4])
        d["downsample_rate"] = rng.choice(["1/2", "1/4", "2/4", "3/8"])
        d["deepstack_layer_map"] = [[-rng.choice([1, 2]), rng.choice(range(2))] for _ in range(rng.choice([0, 1, 2, 3]))]
        if rng.random() < 0.6:
            qc = {}
            for k, vals in (("num_hidden_layers", [1, 2, 3]), ("intermediate_size", [48, 64]),
                            ("cross_attention_frequency", [1, 2]), ("use_qformer_text_input", [False, True])):
                if rng.random() < 0.7:
                    qc[k] = rng.choice(vals)
            d["qformer_config"] = qc
    if t == "moss_transcribe_diarize":
        # the Whisper-style encoder (some keys under Whisper's spellings), the adaptor's packing and biases
        h = rng.choice([2, 4])
        ac = {"num_attention_heads": h, "hidden_size": rng.choice([32, 64]), "num_hidden_layers": rng.choice([1, 2, 3]),
              "intermediate_size": rng.choice([48, 64, 96]), "num_mel_bins": rng.choice([8, 16, 80]),
              "max_source_positions": rng.choice([16, 64, 1500])}
        for k, alias in (("hidden_size", "d_model"), ("num_hidden_layers", "encoder_layers"),
                         ("num_attention_heads", "encoder_attention_heads"), ("intermediate_size", "encoder_ffn_dim")):
            if rng.random() < 0.3:
                ac[alias] = ac.pop(k)
        d["audio_config"] = ac
        if rng.random() < 0.7:
            d["audio_merge_size"] = rng.choice([1, 2, 4])
        if rng.random() < 0.7:
            d["projector_bias"] = rng.random() < 0.5
    if t == "ovis2":
        # the tower's bias flags, visual vocabulary, indicator tokens and stride; the wrapper's hidden_size and
        # vocab_size (the head's and the visual table's) the decoder's, or left at theirs with the head tied
        vc = d["vision_config"]
        for k in ("qkv_bias", "mlp_bias"):
            if rng.random() < 0.7:
                vc[k] = rng.random() < 0.5
        vc["vocab_size"] = rng.choice([64, 100, 160])
        if rng.random() < 0.7:
            vc["num_visual_indicator_tokens"] = rng.choice([1, 3, 5])
        if rng.random() < 0.5:
            vc["hidden_stride"] = rng.choice([1, 2, 3])
        if rng.random() < 0.75:
            d["hidden_size"] = hidden
            d["vocab_size"] = d["text_config"].get("vocab_size", 151936)
        else:
            d["tie_word_embeddings"] = True
            d["hidden_size"] = rng.choice([24, 40])
    if t in ("minicpmv4_6", "minicpmv4_7", "minicpm_ocr"):
        # the ViT merger's window kernel and the merger's rounds (0 builds one, as 1)
        if rng.random() < 0.6:
            d["vision_config"]["window_kernel_size"] = [rng.choice([1, 2, 3]), rng.choice([1, 2])]
        if rng.random() < 0.6:
            d["merger_times"] = rng.choice([0, 1, 2, 3])
    if t == "qianfan_ocr":
        # InternViT's flags, the norm kind, a (height, width) image, the pixel shuffle's ratio
        vc = d["vision_config"]
        for k in ("attention_bias", "use_qk_norm", "use_mask_token", "use_absolute_position_embeddings",
                  "use_mean_pooling"):
            if rng.random() < 0.7:
                vc[k] = rng.random() < 0.5
        if rng.random() < 0.6:
            vc["norm_type"] = rng.choice(["layer_norm", "rms_norm"])
        if rng.random() < 0.4:
            vc["image_size"] = [vc["image_size"], vc["image_size"]]
            vc["patch_size"] = [vc["patch_size"], vc["patch_size"]]
        if rng.random() < 0.5:
            d["downsample_ratio"] = rng.choice([0.5, 0.25, 1.0])
    if t == "minimax_m3_vl":
        # MiniMax-M3's projector width and its tower's merge and temporal patch sizes
        d["projector_hidden_size"] = rng.choice([32, 64, 96])
        vd = d.setdefault("vision_config", {})
        vd["spatial_merge_size"] = rng.choice([1, 2, 3])
        vd["temporal_patch_size"] = rng.choice([1, 2])
    if t == "hy_v4_vl":
        # Hunyuan V4 VL's tower: its merger's size, the position table's image size, its output width
        vd = d.setdefault("vision_config", {})
        vd["spatial_merge_size"] = rng.choice([1, 2, 3])
        vd["max_image_size"] = rng.choice([64, 128, 256])
        vd["out_hidden_size"] = rng.choice([hidden, 48, 96])
    if "mm_tokens_per_image" in top:
        # Gemma 3: the projector pools the patches to mm_tokens_per_image (a square that divides the patch grid)
        side = d["vision_config"]["image_size"] // d["vision_config"]["patch_size"]
        d["mm_tokens_per_image"] = rng.choice([x * x for x in divisors(side)])
    return d


def draw_wrapper_v1(rng, t, d, text_hidden):
    """The projector keys of the wrappers of issue 24's second batch (model/hf_wrap.c wrap_projector_v1)."""
    if t == "inkling_mm_model":
        # Inkling's hierarchical-MLP tower: its widths follow from the patch's prime factors, frames and channels
        # (kept small: the last scales hold side^2 x channels x frames x 64 channels) and the layers (fewer than the
        # scales: linear_sum_assignment places them); the audio embedding's bins and levels
        d["vision_config"] = {"model_type": "inkling_vision", "patch_size": rng.choice([2, 3, 4, 6]),
                              "temporal_patch_size": rng.choice([1, 2, 3]), "num_channels": rng.choice([1, 2, 3]),
                              rng.choice(["num_hidden_layers", "n_layers"]): rng.choice([1, 2, 3, 4, 6, 8])}
        d["audio_config"] = {"model_type": "inkling_audio", "n_mel_bins": rng.choice([2, 4, 8]),
                             "mel_vocab_size": rng.choice([4, 16, 32])}
    elif t in ("inkling2", "inkling2_loop"):
        # Inkling 2's tower: a ViT with a learned position grid and a merger to the decoder's width
        # (text_hidden_size must be it: Inkling2Config.validate_architecture), sizes drawn small
        h = rng.choice([2, 4])
        vc = {"model_type": "inkling2_vision", "hidden_size": rng.choice([32, 64]), "num_attention_heads": h,
              "num_hidden_layers": rng.choice([1, 2, 3]), "patch_size": rng.choice([2, 4, 8]),
              "posemb_grid_size": rng.choice([2, 4, 8]), "spatial_merge_size": rng.choice([1, 2, 3]),
              "projection_hidden_dim": rng.choice([16, 48]), "projector_bias": rng.random() < 0.5,
              "text_hidden_size": text_hidden}
        if rng.random() < 0.5:
            vc["intermediate_size"] = rng.choice([48, 64, 96])
        elif rng.random() < 0.5:
            vc["mlp_ratio"] = rng.choice([2.0, 3.0])
        if rng.random() < 0.3:
            vc["num_channels"] = rng.choice([1, 4])
        d["vision_config"] = vc
    elif t == "lfm2_vl":
        for k in ("projector_bias", "projector_use_layernorm"):
            if rng.random() < 0.7:
                d[k] = rng.random() < 0.5
        if rng.random() < 0.7:
            d["projector_hidden_size"] = rng.choice([24, 48, 80])
        if rng.random() < 0.6:
            d["downsample_factor"] = rng.choice([1, 2, 3])
        if rng.random() < 0.3:                      # Lfm2VlConfig.__post_init__: tie_embedding is the tie
            d["tie_embedding"] = rng.random() < 0.5
    elif t == "exaone4_5" and "vision_config" in d:  # GQA in the tower: num_key_value_heads divides num_heads
        vc = d["vision_config"]
        vc["num_key_value_heads"] = rng.choice(divisors(vc.get("num_heads", 16)))
    elif t in ("paddleocr_vl", "cosmos3_edge") and "vision_config" in d:   # the merger's side (vision_config)
        if rng.random() < 0.6:
            d["vision_config"]["spatial_merge_size"] = rng.choice([1, 2, 3])
        if t == "cosmos3_edge" and rng.random() < 0.7:
            d["projector_hidden_size"] = rng.choice([24, 48, 80])
    elif t == "kimi_k25" and "vision_config" in d:   # MoonViT: its position grid and merge kernel
        vc = d["vision_config"]
        vc.pop("image_size", None)
        vc["pos_emb_height"] = rng.choice([4, 8, 16])
        if rng.random() < 0.7:
            vc["pos_emb_width"] = rng.choice([4, 8, 16])
        if rng.random() < 0.6:
            vc["merge_kernel_size"] = [rng.choice([1, 2, 3]), rng.choice([1, 2])]
        # pre_norm is a LayerNorm of projection_hidden_size over the tower's output (its width, as published)
        d["projection_hidden_size"] = vc.get("hidden_size", 1152) if rng.random() < 0.7 else rng.choice([16, 48])
    elif t in ("qwen2_5_omni_thinker", "qwen3_omni_moe_thinker"):   # the audio encoder, small, every size moved
        h = rng.choice([2, 4])
        a = {"model_type": t.replace("_thinker", "_audio_encoder"), "d_model": h * rng.choice([8, 16]),
             "encoder_attention_heads": h, "encoder_layers": rng.choice([1, 2]),
             "encoder_ffn_dim": rng.choice([32, 48]), "num_mel_bins": rng.choice([16, 32])}
        if rng.random() < 0.7:
            a["output_dim"] = text_hidden
        if t == "qwen3_omni_moe_thinker":
            a["downsample_hidden_size"] = rng.choice([8, 12, 16])
        d["audio_config"] = a
    elif t == "aria":                                   # the projector's queries: the dict's largest value
        if rng.random() < 0.7:
            d["projector_patch_to_query_dict"] = {str(rng.choice([4, 9, 16])): rng.choice([2, 4]),
                                                  str(rng.choice([25, 36])): rng.choice([4, 8, 12])}
    elif t == "glm_ocr":                                # its multimodal RoPE splits the rotary half in three
        mrope(d["text_config"], {"model_type": "glm_ocr_text", "rope_parameters": {
            "rope_type": "default", "rope_theta": 10000.0, "mrope_section": [8, 12, 12]}})
        vc = d.get("vision_config")
        if vc is not None:                              # the tower's own knobs: biases, widths, the merge
            vc["out_hidden_size"] = rng.choice([16, 32, 48])
            if rng.random() < 0.7:
                vc["attention_bias"] = rng.random() < 0.5
            if rng.random() < 0.5:
                vc["spatial_merge_size"] = rng.choice([1, 2, 3])
            if rng.random() < 0.4:
                vc["in_channels"] = rng.choice([1, 3, 4])
    elif t == "step3p7":
        # no tie_word_embeddings field: only the wrapper's key ties (stated whenever text_config states its own, as
        # the other wrappers'); the projector's bias; the tower's mlp_ratio (intermediate_size is always
        # int(hidden_size x mlp_ratio)) and its legacy spellings (width, layers)
        if "tie_word_embeddings" in d["text_config"] or rng.random() < 0.5:
            d["tie_word_embeddings"] = rng.random() < 0.5
        if rng.random() < 0.7:
            d["projector_bias"] = rng.random() < 0.5
        vc = d["vision_config"]
        if rng.random() < 0.6:
            vc["mlp_ratio"] = rng.choice([1.5, 2.0, 8960 / 1536, 3.7])
        for k, alias in (("hidden_size", "width"), ("num_hidden_layers", "layers")):
            if rng.random() < 0.3:
                vc[alias] = vc.pop(k)
    elif t == "lfm3_vl":                               # the projector's width and biases
        if rng.random() < 0.7:
            d["projector_hidden_size"] = rng.choice([24, 48, 80])
        if rng.random() < 0.7:
            d["projector_bias"] = rng.random() < 0.5
    elif t == "granite_docling":                       # the connector: its factor, routes, DeepStack taps, router
        vc = d["vision_config"]
        vc["out_hidden_size"] = text_hidden           # validate_architecture: the decoder's width
        vc["image_size"] = vc["patch_size"] * rng.choice([4, 8])
        if rng.random() < 0.7:
            vc["use_fine_route"] = rng.random() < 0.6
        fine = vc.get("use_fine_route", True)
        vc["scale_factor"] = rng.choice([2, 4] if fine else [1, 2, 4])
        if rng.random() < 0.7:
            vc["deepstack_visual_indexes"] = sorted(rng.sample(range(vc["num_hidden_layers"]),
                                                               rng.choice(range(vc["num_hidden_layers"] + 1))))
        if fine and rng.random() < 0.5:
            d["density_router_hidden_size"] = rng.choice([8, 16])
    elif t == "fast_vlm":                              # the timm tower is fixed (fastvit_mci3): its stated width
        d.pop("vision_feature_layer", None)           # validate_architecture: -1 only
        if rng.random() < 0.3:
            d.pop("vision_config", None)              # absent: the SubConfigSpec's init_kwargs
        else:
            d["vision_config"] = {"model_type": "timm_wrapper", "architecture": "fastvit_mci3", "do_pooling": True,
                                  "global_pool": "avg", "model_args": {"inference_mode": True},
                                  "hidden_size": rng.choice([3072, 48, 96])}
    elif t == "perception_lm":                         # the timm tower is fixed (vit_pe_core_large_patch14_336,
        d["vision_config"] = {"model_type": "timm_wrapper",  # configs/perception-lm-pe-core-large-variant.json):
                              "architecture": "vit_pe_core_large_patch14_336",  # the projector's pooling and the CLS
                              "model_args": {"embed_dim": 1024}}                # token drop hold no parameters
        if rng.random() < 0.7:
            d["projector_pooling_ratio"] = rng.choice([1, 2, 3, 4])
        if rng.random() < 0.7:
            d["vision_use_cls_token"] = rng.random() < 0.5
    elif t == "hunyuan_vl":                            # head_dim stated and an mrope split (both needed to build
        text = d["text_config"]                       # and run), the tower's position grid, merge and channels
        text["head_dim"] = text.get("head_dim") or text.get("hidden_size", 4096) // text.get("num_attention_heads", 32)
        hunyuan_mrope(d)
        vc = d["vision_config"]
        vc.pop("image_size", None)
        vc["max_image_size"] = vc["patch_size"] * rng.choice([2, 4, 8])
        if rng.random() < 0.6:
            vc["spatial_merge_size"] = rng.choice([1, 2, 3])
        if rng.random() < 0.4:
            vc["num_channels"] = rng.choice([1, 3])
        if rng.random() < 0.3:
            vc["attention_heads"] = vc.pop("num_attention_heads")
        if rng.random() < 0.3:                        # a flat checkpoint: the decoder's keys at the top
            top = {k: v for k, v in d.pop("text_config").items() if k != "model_type"}
            top.pop("tie_word_embeddings", None)      # the wrapper's own field: it stays the wrapper's
            d.update(top)
    elif t == "molmo2":                                # the decoder's q/k norm kind and extra vocabulary; the
        text = d["text_config"]                       # tower's GQA, image and positions (checkpoint spellings
        if rng.random() < 0.6:                        # too); the adapter whole; a third under vit_config
            text["qk_norm_type"] = rng.choice(["qwen3", "olmo"])
        if rng.random() < 0.6:
            text["additional_vocab_size"] = rng.choice([0, 16, 128])
        vc = d["vision_config"]
        h = vc["num_attention_heads"]
        vc["num_key_value_heads"] = rng.choice(divisors(h))
        vc["head_dim"] = rng.choice([vc["hidden_size"] // h, 8, 12])
        side = [vc["patch_size"] * rng.choice([2, 3]), vc["patch_size"] * rng.choice([2, 4])]
        vc["image_size"] = side
        if rng.random() < 0.3:
            vc["image_default_input_size"] = vc.pop("image_size")
        if rng.random() < 0.3:
            vc["num_position_embeddings"] = rng.choice([4, 16, 36])
        if rng.random() < 0.3:
            vc["image_patch_size"] = vc.pop("patch_size")
        if rng.random() < 0.6:
            vc["attention_bias"] = rng.random() < 0.5
        L = vc["num_hidden_layers"]
        ah = rng.choice([2, 4])
        ac = {"hidden_size": rng.choice([32, 48, 64]), "num_attention_heads": ah,
              "num_key_value_heads": rng.choice(divisors(ah)), "head_dim": rng.choice([8, 16]),
              "intermediate_size": rng.choice([48, 96]), "text_hidden_size": rng.choice([text_hidden, 40]),
              "vision_feature_layer": [rng.choice(range(-L, L)) for _ in range(rng.choice([1, 2, 3]))]}
        for k in ("attention_bias", "mlp_bias"):
            if rng.random() < 0.7:
                ac[k] = rng.random() < 0.5
        if rng.random() < 0.3:
            ac["vit_layers"] = ac.pop("vision_feature_layer")
        d["adapter_config"] = ac
        if rng.random() < 0.3:                        # an old checkpoint: trimmed to the deepest layer read
            d["vit_config"] = d.pop("vision_config")
    elif t == "glm5_next":
        # the tower's own widths and flags: its output width (the downsample's and the merger's), the merger's MLP, the
        # merge and temporal patch, the attention's biases
        vc = d["vision_config"]
        vc["out_hidden_size"] = rng.choice([text_hidden, 24, 48])
        vc["projection_intermediate_size"] = rng.choice([16, 40])
        vc["spatial_merge_size"] = rng.choice([1, 2])
        vc["temporal_patch_size"] = rng.choice([1, 2])
        if rng.random() < 0.6:
            vc["attention_bias"] = rng.random() < 0.5
    elif t == "dots3_note":
        # the tower's adapter widths (they must match the tower's and the decoder's), its MoE schedule (the pyramid of
        # expert counts, or mlp_layer_types with per_layer_config's counts), the merge; a small audio encoder
        vc = d["vision_config"]
        vh, L = vc["hidden_size"], vc["num_hidden_layers"]
        vc["adapter_in_dim"] = vh
        vc["adapter_out_dim"] = text_hidden
        vc["moe_intermediate_size"] = rng.choice([16, 32])
        m = rng.choice([1, 2])
        vc["spatial_merge_size"] = vc["adapter_merge_size"] = m
        r = rng.random()
        if r < 0.4:
            vc["pyramid_num_routed"] = [rng.choice([-1, 2, 4]) for _ in range(L)]
        elif r < 0.8:
            kinds = [rng.choice(["dense", "sparse"]) for _ in range(L)]
            vc["mlp_layer_types"] = kinds
            vc["num_local_experts"] = rng.choice([2, 3])
            if rng.random() < 0.5:
                vc["per_layer_config"] = {str(i): {"num_local_experts": rng.choice([2, 4])}
                                          for i, k in enumerate(kinds) if k == "sparse"}
        if rng.random() < 0.5:
            vc["attention_bias"] = rng.random() < 0.5
        h = rng.choice([2, 4])
        ah = h * rng.choice([8, 16])
        d["audio_config"] = {"hidden_size": ah, "num_attention_heads": h, "num_hidden_layers": rng.choice([1, 2]),
                             "intermediate_size": rng.choice([32, 48]), "downsample_hidden_size": rng.choice([8, 16]),
                             "feature_size": rng.choice([16, 20, 128]), "adapter_input_size": ah,
                             "adapter_out_dim": text_hidden, "attention_bias": rng.random() < 0.5}
    elif t in ("kosmos-2", "kosmos-2.5"):              # the projection's latent queries; Kosmos-2.5's Pix2Struct
        if rng.random() < 0.7:                        # tower: the flattened patch width, the row and column
            d["latent_query_num"] = rng.choice([1, 4, 16])   # tables, a head_dim of its own
        vc = d["vision_config"]
        if t == "kosmos-2.5":
            vc.pop("image_size", None)
            vc.pop("patch_size", None)
            vc["patch_embed_hidden_size"] = rng.choice([12, 48, 768])
            vc["max_num_patches"] = rng.choice([16, 64])
            if rng.random() < 0.5:
                vc["head_dim"] = rng.choice([8, 12, 16])
    elif t == "aya_vision":
        if rng.random() < 0.6:
            d["downsample_factor"] = rng.choice([1, 2, 3])
        if rng.random() < 0.6:                      # getattr's default: the decoder's hidden_size
            d["alignment_intermediate_size"] = rng.choice([32, 48, 96])
    elif t == "nemotron_h_omni":
        draw_nemotron_h_omni(rng, d, text_hidden)
    elif t == "apertus1p5":
        draw_apertus1p5(rng, d)
    elif t in ("muse_glimmer", "muse_spark"):   # the tower's grid, frames and merge; the adapter's widths
        if t == "muse_spark":                      # the audio pyramid: 1 to 3 stages, every width its own
            L = rng.choice([1, 2, 3])
            d["audio_config"] = {"num_hidden_layers": L, "patch_sizes": [rng.choice([2, 4, 5]) for _ in range(L)],
                                 "hidden_sizes": [rng.choice([8, 16, 24]) for _ in range(L)],
                                 "depths": [rng.choice([1, 2]) for _ in range(L)],
                                 "conv_kernel_size": rng.choice([3, 7]), "out_hidden_size": text_hidden}
            if rng.random() < 0.5:
                d["audio_config"]["mlp_ratio"] = rng.choice([1.5, 2.0, 4.0])
        vc = d["vision_config"]
        vc.pop("image_size", None)
        vc["pos_emb_height"] = rng.choice([4, 8, 32])
        vc["pos_emb_width"] = rng.choice([4, 8, 32])
        for k, vals in (("patch_temporal", [1, 2, 3]), ("merge_size", [1, 2])):
            if rng.random() < 0.6:
                vc[k] = rng.choice(vals)
        d["out_hidden_size"] = vc["hidden_size"] * vc.get("merge_size", 2) ** 2
        if rng.random() < 0.7:
            d["projector_hidden_size"] = rng.choice([24, 48, 80])


def draw_apertus1p5(rng, d):
    """Apertus 1.5's two tokenizers, small: the VQGAN encoder (channels a multiple of 32, one to three stages of
    multipliers, blocks a stage, latent and codebook sizes, attn_resolutions among the stages' resolutions) and the
    WavTokenizer encoder (filters, one to three ratios, residual layers, compress, the shortcut, kernels, LSTM layers,
    its width and codebook, either norm_type); the token offsets so that both code ranges follow each other inside
    the drawn vocabulary (Apertus1p5Config.validate_architecture)."""
    res = rng.choice([32, 64])
    levels = rng.choice([1, 2, 3])
    vc = {"base_channels": rng.choice([32, 64]), "channel_multiplier": [rng.choice([1, 2]) for _ in range(levels)],
          "num_res_blocks": rng.choice([1, 2]), "latent_channels": rng.choice([8, 16]),
          "embed_dim": rng.choice([4, 8]), "codebook_size": rng.choice([16, 32]), "resolution": res}
    if rng.random() < 0.7:
        vc["attn_resolutions"] = sorted(rng.sample([res >> l for l in range(levels)], rng.choice(range(0, levels + 1))))
    h = rng.choice([8, 16])
    ac = {"model_type": "wavtokenizer_encoder", "num_filters": rng.choice([2, 4]),
          "upsampling_ratios": [rng.choice([2, 3]) for _ in range(rng.choice([1, 2, 3]))],
          "num_residual_layers": rng.choice([0, 1, 2]), "compress": rng.choice([1, 2]),
          "use_conv_shortcut": rng.random() < 0.5, "kernel_size": rng.choice([3, 7]),
          "last_kernel_size": rng.choice([3, 7]), "residual_kernel_size": rng.choice([1, 3]),
          "num_lstm_layers": rng.choice([1, 2]), "hidden_size": h, "codebook_dim": h,
          "codebook_size": rng.choice([8, 16]), "norm_type": rng.choice(["weight_norm", "time_group_norm"])}
    d["vision_config"] = vc
    d["audio_config"] = ac
    v = d["text_config"].get("vocab_size", 256)
    ioff = rng.choice(range(0, v - vc["codebook_size"] - ac["codebook_size"] + 1))
    d["image_token_offset"] = ioff
    d["audio_token_offset"] = ioff + vc["codebook_size"]
    d["image_token_id"] = d["audio_token_id"] = 0


def draw_nemotron_h_omni(rng, d, text_hidden):
    """Nemotron 3 Nano Omni: the RADIO tower (width, heads, head_dim left out or not, layers, mlp_ratio, GELU or
    SwiGLU MLP, qkv_bias, patch and max_img_size, class and register tokens, summary_idxs, the video patch's frames,
    the wrapper's copy equal), vision_hidden_size its width, the projector's width and downsample_ratio, MTP layers
    in the decoder (vision_final_layernorm), and half the time the Parakeet audio encoder and its embed_audio (every
    size, both biases, the projection's width and bias) as the published checkpoint has."""
    h = rng.choice([2, 4])
    hid = rng.choice([32, 64])
    patch = rng.choice([4, 8, 16])
    video = rng.choice([2, 3])
    vc = {"model_type": "radio", "hidden_size": hid, "num_attention_heads": h,
          "num_hidden_layers": rng.choice([1, 2, 3]), "patch_size": patch,
          "max_img_size": patch * rng.choice([2, 4, 8]), "video_temporal_patch_size": video}
    for k, vals in (("mlp_ratio", [1.5, 2.0, 4.0]), ("num_cls_tokens", [1, 2, 3]), ("num_registers", [0, 4, 7]),
                    ("qkv_bias", [False, True]), ("use_swiglu_ffn", [False, True]), ("num_channels", [1, 3]),
                    ("summary_idxs", [[0], [0, 1, 2]])):
        if rng.random() < 0.6:
            vc[k] = rng.choice(vals)
    d["vision_config"] = vc
    d["vision_hidden_size"] = hid
    d["video_temporal_patch_size"] = video
    if rng.random() < 0.7:
        d["projector_hidden_size"] = rng.choice([24, 48, 80])
    if rng.random() < 0.6:
        d["downsample_ratio"] = rng.choice([0.25, 0.5, 1.0])
    if rng.random() < 0.4:
        d["text_config"]["num_nextn_predict_layers"] = 1
    if rng.random() < 0.5:
        ah = rng.choice([2, 4])
        a = {"hidden_size": ah * rng.choice([8, 16]), "num_attention_heads": ah,
             "num_hidden_layers": rng.choice([1, 2]), "intermediate_size": rng.choice([32, 48]),
             "conv_kernel_size": rng.choice([3, 5, 9]), "subsampling_factor": rng.choice([2, 4, 8]),
             "subsampling_conv_channels": rng.choice([4, 8]), "num_mel_bins": rng.choice([16, 32, 80]),
             "projection_hidden_size": rng.choice([24, 48]), "projection_bias": rng.random() < 0.5}
        for k in ("attention_bias", "convolution_bias"):
            if rng.random() < 0.6:
                a[k] = rng.random() < 0.5
        if rng.random() < 0.4:
            a["subsampling_conv_kernel_size"] = rng.choice([3, 5])
        d["audio_config"] = a


def draw_phi4_multimodal(rng, d):
    """Phi-4-multimodal keeps its decoder's keys at the top and builds both towers always: a small SigLIP-style
    vision_config (width, heads dividing it, layers, MLP, image and patch) and a small conformer audio_config (every
    width apart: MLP, ext_pw_out_channel, depthwise_separable_out_channel, depthwise_multiplier, kernel_size,
    input_size, time_reduction, the relative bias table's distance and symmetry, nemo_conv_channels,
    downsample_rate); a partial rotary factor of 0.75 (the published checkpoint's) in some."""
    h = rng.choice([2, 4])
    patch = rng.choice([4, 7, 14])
    d["vision_config"] = {"model_type": "phi4_multimodal_vision", "hidden_size": h * rng.choice([8, 16]),
                          "num_attention_heads": h, "num_hidden_layers": rng.choice([1, 2, 3]),
                          "intermediate_size": rng.choice([24, 48, 64]), "patch_size": patch,
                          "image_size": patch * rng.choice([2, 3, 4]), "crop_size": patch * 4}
    ah = rng.choice([2, 4])
    a = {"model_type": "phi4_multimodal_audio", "hidden_size": ah * rng.choice([8, 16]), "num_attention_heads": ah,
         "num_blocks": rng.choice([1, 2]), "intermediate_size": rng.choice([24, 48]),
         "ext_pw_out_channel": rng.choice([16, 32]), "depthwise_separable_out_channel": rng.choice([16, 32]),
         "nemo_conv_channels": rng.choice([4, 8]), "input_size": rng.choice([16, 20, 80]),
         "bias_max_distance": rng.choice([8, 50]), "time_reduction": rng.choice([2, 4, 6, 8])}
    for k, vals in (("depthwise_multiplier", [1, 2]), ("kernel_size", [1, 3, 5]), ("bias_symmetric", [False, True]),
                    ("downsample_rate", [1, 2])):
        if rng.random() < 0.6:
            a[k] = rng.choice(vals)
    d["audio_config"] = a
    if rng.random() < 0.4:      # the published checkpoint rotates 3/4 of each head
        d["rope_parameters"] = {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.75}


def hunyuan_mrope(d):
    """HunyuanOCR's four-axis mrope split of half its head_dim (HunYuanVLTextConfig._validate_mrope_section), in
    text_config or, flat, at the top: drawn with the config, and again after a break moves the heads."""
    text = d.get("text_config", d)
    hd = text.get("head_dim") or text.get("hidden_size", 4096) // text.get("num_attention_heads", 32)
    text["rope_parameters"] = {"rope_type": "default", "rope_theta": 10000.0,
                               "mrope_section": [hd // 2 - 3 * (hd // 8)] + [hd // 8] * 3}


# Keys derived from others that a break (refused()) must follow, per type: the break tests its own rule only.
AFTER_BREAK = {"hunyuan_vl": hunyuan_mrope}


def draw_blip(rng, t, d):
    """BLIP-2, InstructBLIP(-Video): the EVA tower's qkv_bias, the Q-Former (width, heads, layers, MLP,
    cross_attention_frequency, its text branch, InstructBLIP's embeddings), num_query_tokens; a third of the variants
    take a Llama text_config (InstructBLIP's Vicuna checkpoints) instead of OPT."""
    vc = d["vision_config"]
    vc["qkv_bias"] = rng.random() < 0.5
    h = rng.choice([2, 4])
    qc = {"hidden_size": rng.choice([32, 64]), "num_attention_heads": h, "num_hidden_layers": rng.choice([1, 2, 3, 4, 5]),
          "intermediate_size": rng.choice([48, 64, 96]), "cross_attention_frequency": rng.choice([1, 2, 3])}
    if rng.random() < 0.7:
        qc["vocab_size"] = rng.choice([64, 100])
        qc["max_position_embeddings"] = rng.choice([16, 32])
        qc["pad_token_id"] = 0
    if t == "blip-2" and rng.random() < 0.5:
        qc["use_qformer_text_input"] = rng.random() < 0.5
    d["qformer_config"] = qc
    if rng.random() < 0.7:
        d["num_query_tokens"] = rng.choice([1, 4, 8])
    if rng.random() < 0.33:
        from transformers import LlamaConfig
        text = draw_text(rng, "llama", LlamaConfig, LlamaConfig().to_dict())
        text["model_type"] = "llama"
        d["text_config"] = text
    d.pop("tie_word_embeddings", None)   # the wrapper's key ties nothing (the decoder's own does)
    if rng.random() < 0.5:
        d["tie_word_embeddings"] = rng.random() < 0.5


def draw_sam(rng, d, key="vision_config", sam_class=False):
    """GOT-OCR 2's SAM tower (DeepSeek-VL hybrid's high_res_vision_config, SamVisionConfig: mlp_dim or mlp_ratio):
    width, heads (not always dividing it), layers, mlp_dim, output_channels, the image and patch, window_size (0:
    every layer global), global_attn_indexes (some past the layers), its flags."""
    h = rng.choice([2, 3, 4])
    L = rng.choice([1, 2, 3, 4])
    patch = rng.choice([4, 8, 16])
    vc = {"hidden_size": rng.choice([32, 48, 64]), "num_attention_heads": h, "num_hidden_layers": L,
          "mlp_dim": rng.choice([48, 64, 96]), "output_channels": rng.choice([8, 16, 24]),
          "patch_size": patch, "image_size": patch * rng.choice([2, 4, 6]), "window_size": rng.choice([0, 1, 2, 3]),
          "global_attn_indexes": sorted(rng.sample(range(L + 2), rng.choice(range(0, min(3, L + 2) + 1))))}
    for k in ("qkv_bias", "use_abs_pos", "use_rel_pos"):
        if rng.random() < 0.7:
            vc[k] = rng.random() < 0.5
    if rng.random() < 0.5:
        vc["num_channels"] = rng.choice([1, 3])
    if sam_class:
        if not vc["global_attn_indexes"] and rng.random() < 0.8:   # the wrapper reads its first entry
            vc["global_attn_indexes"] = [rng.choice(range(L))]
        if rng.random() < 0.5:
            del vc["mlp_dim"]
            if rng.random() < 0.6:
                vc["mlp_ratio"] = rng.choice([1.5, 2.0, 3.0])
        d[key] = {**vc, "model_type": "sam_vision_model"}
        return
    d[key] = {**vc, "model_type": d[key]["model_type"]}


def draw_ocr_towers(rng, t, d, vc0):
    """Unlimited-OCR's and DeepSeek-OCR-2's vision_config: sam_config as draw_sam (DeepSeek-OCR-2's mlp_dim or
    mlp_ratio) with downsample_channels (sometimes three entries: the projector reads the last), and encoder_config:
    Unlimited-OCR's CLIP encoder (width, heads dividing it, MLP, layers, image and patch), DeepSeek-OCR-2's Qwen2
    encoder (width, heads, KV heads, an explicit head_dim or none, MLP, layers)."""
    ocr2 = t == "deepseek_ocr2"
    tmp = {"sam_config": {"model_type": vc0.sam_config.model_type}}
    draw_sam(rng, tmp, "sam_config", sam_class=ocr2)
    sam = dict(tmp["sam_config"], model_type=vc0.sam_config.model_type)
    if rng.random() < 0.8:
        sam["downsample_channels"] = [rng.choice([8, 16, 24]) for _ in range(rng.choice([2, 2, 3]))]
    h = rng.choice([2, 4])
    enc = {"model_type": vc0.encoder_config.model_type, "hidden_size": h * rng.choice([8, 16]),
           "num_attention_heads": h, "intermediate_size": rng.choice([48, 64, 96]),
           "num_hidden_layers": rng.choice([1, 2, 3])}
    if ocr2:
        enc["num_key_value_heads"] = rng.choice(divisors(h))
        if rng.random() < 0.3:
            enc["head_dim"] = rng.choice([8, 16])
    else:
        patch = rng.choice([4, 7, 14])
        enc["patch_size"] = patch
        enc["image_size"] = patch * rng.choice([2, 3, 4])
    d["vision_config"] = {"model_type": vc0.model_type, "sam_config": sam, "encoder_config": enc}


def mrope(text, td):
    """Multimodal RoPE (Qwen-VL): mrope_section splits the rotary half of head_dim in three (temporal, height, width);
    its default fits head_dim 128, so it is scaled to the head_dim drawn."""
    rp = td.get("rope_parameters")
    ernie = td.get("model_type") == "ernie4_5_vl_moe_text"
    if not isinstance(rp, dict) or ("mrope_section" not in rp and not td.get("model_type", "").startswith("qwen")
                                    and not ernie):
        return
    d = dict(text)
    d.pop("model_type")
    c = AutoConfig.for_model(text["model_type"], **d)
    hd = getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads
    half = hd // 2
    rp = dict(rp)
    # ERNIE-4.5-VL interleaves its height and width sections (Ernie4_5_VLMoeTextRotaryEmbedding: they must be equal)
    # and keeps the temporal one last ([22, 22, 20] for head_dim 128)
    rp["mrope_section"] = ([half // 3, half // 3, half - 2 * (half // 3)] if ernie
                           else [half - 2 * (half // 3), half // 3, half // 3])
    text["rope_parameters"] = rp


def draw(t, rng):
    cfg0 = AutoConfig.for_model(t)
    if getattr(cfg0, "text_config", None) is not None and t not in ("gemma3n_text", "gemma4_text"):
        return draw_wrapper(rng, t, cfg0)
    d = draw_text(rng, t, type(cfg0), cfg0.to_dict())
    d["model_type"] = t
    if t == "phi4_multimodal":
        draw_phi4_multimodal(rng, d)
    if t == "idefics":
        # IDEFICS keeps its decoder's keys at the top: its tower, the Perceiver and the gated cross-attention keys
        d["vision_config"] = draw_vision(rng, cfg0.vision_config.to_dict(), d.get("hidden_size"))
        d["cross_layer_interval"] = rng.choice([1, 1, 2, 3])
        d["alpha_type"] = rng.choice(["float", "vector"])
        d["alpha_initializer"] = rng.choice(["zeros", "ones", "normal"])
        if rng.random() < 0.5:
            d["additional_vocab_size"] = rng.choice([2, 5])
        d["use_resampler"] = rng.random() < 0.5
        if d["use_resampler"] or rng.random() < 0.3:
            d["perceiver_config"] = {"resampler_n_latents": rng.choice([4, 8]), "resampler_depth": rng.choice([1, 2]),
                                     "resampler_n_heads": rng.choice([2, 4]),
                                     "resampler_head_dim": rng.choice([8, 16]),
                                     "qk_layer_norms_perceiver": rng.random() < 0.5}
    if t == "git":
        # GIT keeps its decoder's keys at the top: its CLIP tower and temporal image embeddings drawn beside them
        d["vision_config"] = draw_vision(rng, cfg0.vision_config.to_dict(), d.get("hidden_size"))
        if rng.random() < 0.4:
            d["num_image_with_embedding"] = rng.choice([1, 2, 4])
    return d


# ----- references ----------------------------------------------------------------------------------------------------

def build_config(d):
    d = copy.deepcopy(d)
    t = d.pop("model_type")
    return AutoConfig.for_model(t, **d)


def stored_form(d, cfg, form):
    """The config as stored: drawn, saved (save_pretrained's diff), or in full (to_dict)."""
    if form == "drawn":
        return d
    out = json.loads(cfg.to_json_string(use_diff=(form == "saved")))
    for k in ("transformers_version", "_name_or_path", "architectures", "dtype"):
        out.pop(k, None)
    out["model_type"] = d["model_type"]
    return finite_only(out)


def finite_only(v):
    """JSON has no infinity: to_json_string writes one as {"__float__": "Infinity"}, which is left out (the keys that
    hold one, Mamba-2's time_step_limit (0, inf), keep their defaults)."""
    def ok(x):
        if isinstance(x, dict):
            return "__float__" not in x and all(ok(y) for y in x.values())
        if isinstance(x, list):
            return all(ok(y) for y in x)
        return generate.finite(x)
    if isinstance(v, dict):
        return {k: finite_only(x) for k, x in v.items() if ok(x) or isinstance(x, dict) and "__float__" not in x}
    return v


def engine_layer_bytes(layer, tokens, tc):
    """generate.engine_bytes, and Falcon's grouped KV heads: FalconAttention caches num_attention_heads heads in the
    new decoder architecture (it expands num_kv_heads before the cache), where vLLM keeps num_kv_heads."""
    b = generate.engine_bytes(layer, tokens, tc)
    if getattr(tc, "model_type", "") == "falcon" and getattr(tc, "new_decoder_architecture", False):
        h, kv = tc.num_attention_heads, tc.num_kv_heads
        kvb = sum(t["bytes"] for t in layer["tensors"] if t["tensor"] in ("keys", "values") and t["shape"][1] == h)
        b -= kvb - kvb // h * kv
    return b


def cache_runs(cfg):
    """The forward at each length on the CPU in bf16, as generate.run_tiny (the config is already small)."""
    tc = generate.text_config(cfg)
    torch.manual_seed(0)
    torch.set_default_dtype(torch.bfloat16)
    try:
        model, _ = generate.build(cfg, "cpu")
    finally:
        torch.set_default_dtype(torch.float32)
    model = generate.keep_fp32(model.to(torch.bfloat16).eval(), tc)
    vocab = getattr(tc, "vocab_size", 256)
    runs = []
    # as generate.run_tiny: RecurrentGemma keeps its state on the modules (a cache of our own is passed and the
    # modules' attributes read), RWKV returns its state as a list of tensors
    module_state = getattr(tc, "model_type", None) in generate.MODULE_STATE_TYPES
    for n in LENGTHS:
        ids = torch.randint(3, max(4, vocab - 16), (BATCH, n))
        kw = {}
        if module_state or getattr(tc, "model_type", None) in generate.CACHE_PASSED_TYPES:
            from transformers import DynamicCache
            kw["cache"] = DynamicCache(config=tc)
        if getattr(cfg, "model_type", None) in generate.IMAGE_INPUT_TYPES:
            kw.update(generate.IMAGE_INPUT_TYPES[cfg.model_type](cfg, ids))
        with torch.no_grad():
            model, out = generate.text_forward(model, cfg, ids, kw)   # as generate.run_tiny (Llama 4, BLIP-2)
        cache = kw.get("cache") or getattr(out, "past_key_values", None)
        layers, rest = generate.cache_layers(cache)
        if getattr(out, "state", None) is not None:
            generate.tensors_of(out.state, "state", rest, set())
        if module_state:
            seen = set()
            for mname, mod in model.named_modules():
                for a in generate.MODULE_STATE_ATTRS:
                    v = getattr(mod, a, None)
                    if isinstance(v, torch.Tensor):
                        generate.tensors_of(v, f"{mname}.{a}", rest, seen)
        per_layer = [[l["class"], engine_layer_bytes(l, n, tc)] for l in layers]
        runs.append({"tokens": n, "batch_size": BATCH, "cache_class": type(cache).__name__,
                     "transformers_bytes": sum(t["bytes"] for l in layers for t in l["tensors"]) +
                     sum(t["bytes"] for t in rest),
                     "engine_bytes": sum(b for _, b in per_layer) + sum(t["bytes"] for t in rest),
                     "layers": per_layer})
        del out
    del model
    gc.collect()
    return runs


def reference(d):
    """Count, state_dict and cache of config d (the dict memplan is given)."""
    cfg = build_config(d)
    count = generate.count(cfg)
    sd = state_dicts.record(cfg)
    runs = cache_runs(cfg)
    return {"class": sd["class"], "count": {"total": count["total"], "components": count["components"]},
            "parameters": sd["parameters"], "buffers": sd["buffers"], **({"tied": sd["tied"]} if "tied" in sd
                                                                           else {}),
            "cache": runs}


FORMS = ("drawn", "saved", "full")


def one_variant(t, i):
    """Variant i of type t: the first draw transformers builds and runs."""
    errors = []
    for attempt in range(ATTEMPTS):
        rng = random.Random(f"{t}/{i}/{attempt}")
        try:
            d = draw(t, rng)
            cfg = build_config(d)
            form = FORMS[i % len(FORMS)]
            stored = stored_form(d, cfg, form)
            ref = reference(stored)
            return {"name": f"{t}-v{i:02d}", "seed": f"{t}/{i}/{attempt}", "form": form, "config": stored,
                    **ref}, errors
        except Exception as e:   # drawn again: a config transformers refuses is no variant
            errors.append(f"{type(e).__name__}: {str(e)[:200]}")
    return None, errors


# Configs that break a rule transformers enforces: (the rule, how to break a drawn config: returns the key memplan
# must name, or None when the config has no such key). Each is kept only when transformers refuses it.
def _heads(tc):
    return first(tc, "num_attention_heads", "n_head", "num_heads", "attention_heads", "n_heads"), \
        first(tc, "hidden_size", "n_embd", "d_model"), \
        first(tc, "num_key_value_heads", "num_kv_heads")


def _undivided(tc, hk, hid, kk):
    """Heads a multiple of the KV heads (so that only the rule broken is broken) that do not divide hidden_size; a KV
    head count the config leaves to its default is stated (1), so that the default cannot break the other rule."""
    kv = tc.get(kk) if kk and isinstance(tc.get(kk), int) else 1
    if kk is None and KV_FIELD[0]:
        tc[KV_FIELD[0]] = 1
    for m in range(2, 64):
        h = kv * m
        if tc[hid] % h and h <= tc[hid]:
            return h
    return None


# the KV-heads field of the type being broken (refused() sets it; None for a class without one)
KV_FIELD = [None]


def break_heads_derived(d):
    tc = d.get("text_config", d)
    if tc.get("model_type", d.get("model_type")) in MLA_TYPES:
        return None       # MLA's widths are its ranks and head dims: hidden_size need not split into heads
    hk, hid, kk = _heads(tc)
    if hk is None or hid is None or hid not in tc:
        return None
    h = _undivided(tc, hk, hid, kk)
    if h is None:
        return None
    tc[hk] = h
    tc.pop("head_dim", None)
    if kk or KV_FIELD[0]:
        tc[kk or KV_FIELD[0]] = h     # as many KV heads as heads: only the rule on hidden_size is broken
    return hk


def break_heads_explicit(d):
    tc = d.get("text_config", d)
    if tc.get("model_type", d.get("model_type")) in MLA_TYPES:
        return None
    hk, hid, kk = _heads(tc)
    if hk is None or hid is None or hid not in tc or "head_dim" not in tc:
        return None
    h = _undivided(tc, hk, hid, kk)
    if h is None:
        return None
    tc[hk] = h
    tc["head_dim"] = 16
    if kk or KV_FIELD[0]:
        tc[kk or KV_FIELD[0]] = h
    return hk


def break_kv(d):
    tc = d.get("text_config", d)
    if tc.get("model_type", d.get("model_type")) in MLA_TYPES:
        return None
    hk, hid, kk = _heads(tc)
    if hk is None or kk is None or hk not in tc:
        return None
    h = tc[hk]
    bad = [k for k in range(2, h) if h % k]
    if not bad:
        return None
    tc[kk] = bad[0]
    return kk


def break_layer_types(d):
    tc = d.get("text_config", d)
    if not isinstance(tc.get("layer_types"), list):
        return None
    tc["layer_types"] = tc["layer_types"] + tc["layer_types"][:1]
    return "layer_types"


BREAKS = (("hidden_size not a multiple of the heads, head_dim derived", break_heads_derived),
          ("hidden_size not a multiple of the heads, head_dim given", break_heads_explicit),
          ("the heads not a multiple of the KV heads", break_kv),
          ("layer_types of another length than num_hidden_layers", break_layer_types))


# Step 3.5's keys that give its sliding layers other query heads: dropped from a config broken on purpose, so that only
# the rule broken is broken (heads drawn for the old KV heads would break the other rule too); so is
# num_attention_groups beside a num_key_value_heads the break sets (the alias wins in PreTrainedConfig)
LAYER_HEADS_TYPES = ("step3p7",)
# Types whose head_dim default is a width of its own, not hidden_size / heads (Qwen4-Exp's 256), which the drawn rotary
# part must fit (the QSA index head): a broken config keeps the drawn head_dim, so that only the rule broken is broken
HEAD_DIM_KEPT_TYPES = ("qwen4_exp_text", "qwen4_exp")
LAYER_HEAD_KEYS = ("num_sliding_attention_heads", "attention_other_setting", "per_layer_config")


def refused(t, variants):
    """Per rule, a drawn variant broken on purpose, kept when transformers refuses it (config, model or forward)."""
    out = []
    cfg0 = AutoConfig.for_model(t)
    KV_FIELD[0] = first(generate.text_config(cfg0).to_dict(), "num_key_value_heads", "num_kv_heads")
    drawn = [v for v in variants if v["form"] == "drawn"] + [v for v in variants if v["form"] != "drawn"]
    for r, (what, fn) in enumerate(BREAKS):
        for v in drawn:
            d = copy.deepcopy(v["config"])
            key = fn(d)
            if key is None:
                continue
            if t in AFTER_BREAK:
                AFTER_BREAK[t](d)
            if t in HEAD_DIM_KEPT_TYPES and "head_dim" in v["config"].get("text_config", v["config"]):
                d.get("text_config", d)["head_dim"] = v["config"].get("text_config", v["config"])["head_dim"]
            if t in LAYER_HEADS_TYPES:
                tc = d.get("text_config", d)
                for k in LAYER_HEAD_KEYS:
                    tc.pop(k, None)
                if "num_key_value_heads" in tc:
                    tc.pop("num_attention_groups", None)   # its alias, which would win over the KV heads set
            try:
                cfg = build_config(d)
                generate.build(cfg, "meta")
                cache_runs(cfg)
            except Exception as e:
                out.append({"name": f"{v['name']}-refused-{r}", "rule": what, "key": key, "config": d,
                            "error": f"{type(e).__name__}: {str(e)[:300]}"})
            break
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("-n", type=int, default=DEFAULT_N, help="variants per type")
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--from", dest="start", default="", help="start at this type of the table (a run resumed)")
    a = ap.parse_args()
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    transformers.logging.set_verbosity_error()
    only = [x for x in a.only.split(",") if x]
    types = [t for t in table_types() if not only or t in only]
    if a.start:
        types = types[types.index(a.start):]
    os.makedirs(a.out, exist_ok=True)
    for t in types:
        t0 = time.time()
        if t in VIA_WRAPPER:
            print(f"{t:20s} via {VIA_WRAPPER[t]}", flush=True)
            continue
        if t in NO_VARIANTS:
            print(f"{t:20s} none: {NO_VARIANTS[t]}", flush=True)
            continue
        variants, failures = [], []
        for i in range(min(a.n, N_PER_TYPE.get(t, a.n))):
            v, errors = one_variant(t, i)
            if v is None:
                failures.append({"variant": i, "errors": errors[-3:]})
            else:
                variants.append(v)
        doc = {"about": "Made by tools/groundtruth/variants.py (see its docstring and tests/ref/hf/README.md).",
               "model_type": t, "transformers": transformers.__version__, "torch": torch.__version__,
               "date": datetime.date.today().isoformat(), "variants": variants, "refused": refused(t, variants)}
        if failures:
            doc["not_drawn"] = failures
        with open(os.path.join(a.out, f"{t}.json"), "w") as fh:
            json.dump(doc, fh, indent=None, sort_keys=True, separators=(",", ":"))
            fh.write("\n")
        print(f"{t:20s} {len(variants):3d} variants {len(doc['refused'])} refused "
              f"{len(failures)} not drawn ({time.time() - t0:.0f} s)", flush=True)
        for f in failures:
            print("    ", f["errors"][-1][:200], flush=True)


if __name__ == "__main__":
    sys.exit(main())
