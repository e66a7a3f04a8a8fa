#!/usr/bin/env python3
"""
deepseek_v4_cache.py: DeepSeek-V4's cache beyond generate.py's two lengths (run by hand, never by CI).

generate.py's deepseek_v4-default tiny copy has 3 HCA layers (rate 128, which no run closes) and 1 CSA layer, run
once per length. This builds a second tiny copy of DeepseekV4Config (generate.py's shrink, then one layer of each
kind: sliding_attention, HCA, CSA, HCA, with the HCA rate lowered to 16 so that its windows close) and runs it at
lengths on both sides of the rates and the window, in one prefill and as a prefill followed by decode steps, and
records every cache tensor as generate.py does (with its engine_bytes: the keys of a window layer held over
min(tokens, window)). Output: tests/ref/hf/deepseek_v4_cache.json (tests/test_inference.c
test_deepseek_v4_cache_lengths).

Usage (from the repository root, with the generator's venv):
  tools/groundtruth/.venv/bin/python tools/groundtruth/deepseek_v4_cache.py
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate as g  # noqa: E402
from transformers import AutoConfig  # noqa: E402

OUT = os.path.join(g.ROOT, "tests", "ref", "hf", "deepseek_v4_cache.json")
STEPS = ([3], [4], [9], [17], [33], [40], [10, 1, 1, 1], [30, 5])


def main():
    tiny = g.shrink(AutoConfig.for_model("deepseek_v4"))
    tiny.compress_rates = {"compressed_sparse_attention": 4, "heavily_compressed_attention": 16}
    tiny.layer_types = ["sliding_attention", "heavily_compressed_attention", "compressed_sparse_attention",
                        "heavily_compressed_attention"]
    torch.manual_seed(0)
    torch.set_default_dtype(torch.bfloat16)
    try:
        model, _ = g.build(tiny, "cpu")
    finally:
        torch.set_default_dtype(torch.float32)
    model = model.to(torch.bfloat16).eval()
    doc = {"about": "Made by tools/groundtruth/deepseek_v4_cache.py (see its docstring and tests/ref/hf/README.md).",
           "transformers": g.transformers.__version__, "torch": torch.__version__,
           "tiny_config": g.config_dict(tiny), "runs": []}
    for steps in STEPS:
        ids = torch.randint(1, 500, (g.BATCH, sum(steps)))
        cache, pos = None, 0
        with torch.no_grad():
            for s in steps:
                out = model(input_ids=ids[:, pos:pos + s], past_key_values=cache, use_cache=True)
                cache, pos = out.past_key_values, pos + s
        layers, rest = g.cache_layers(cache)
        n = sum(steps)
        doc["runs"].append({"steps": list(steps), "tokens": n, "batch_size": g.BATCH, "layers": layers,
                            "transformers_bytes": sum(t["bytes"] for l in layers for t in l["tensors"]) +
                            sum(t["bytes"] for t in rest),
                            "engine_bytes": sum(g.engine_bytes(l, n, tiny) for l in layers) +
                            sum(t["bytes"] for t in rest)})
        print(steps, doc["runs"][-1]["transformers_bytes"], doc["runs"][-1]["engine_bytes"], flush=True)
    with open(OUT, "w") as fh:
        json.dump(doc, fh, indent=1, sort_keys=True)
        fh.write("\n")


if __name__ == "__main__":
    sys.exit(main())
