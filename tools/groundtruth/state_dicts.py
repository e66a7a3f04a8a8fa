#!/usr/bin/env python3
"""
state_dicts.py: the tensor templates transformers builds, the reference of memplan's tensor inventory (run by hand,
never by CI; `make state-dicts`).

For every case generate.py knows (each model type's default config, and the published configs in configs/), and for
every variant a differential generator may add later (tests/ref/hf/variants/, when present), it builds the model
transformers builds for text generation on the meta device (no memory, no weights: generate.build) and records
every entry of its state_dict as a template:
  - the first numeric path component (the decoder layer, or a tower's block) becomes "{i}", later ones "{j}", "{k}"
    ("model.layers.3.mlp.experts.down_proj" -> "model.layers.{i}.mlp.experts.down_proj");
  - per template, one row per distinct shape, with how many tensors have it and, for templates with "{i}", the
    indices of "{i}" they occur at (layers whose shapes differ, Gemma 4's full-attention layers say, are told
    apart);
  - parameters and persistent buffers separately (state_dict holds both; named_buffers() with persistent=False
    ones are listed under "nonpersistent_buffers", as the RoPE tables: memplan's PyTorch layout counts them);
  - a tied weight (lm_head.weight sharing embed_tokens.weight) is listed once, under the name
    model.named_parameters() yields first, with "tied" naming the other names.

Output: tests/ref/hf/state_dicts.json, {"about", "transformers", "torch", "cases": {name: {"class", "model_type",
"parameters": {template: [{"shape", "count", "layers"?}]}, "buffers": {...}, "nonpersistent_buffers": {...},
"tied": {name: [other names]}}}}. A case transformers cannot build keeps its error.

Usage (from the repository root):
  make state-dicts
  tools/groundtruth/.venv/bin/python tools/groundtruth/state_dicts.py [--only TYPE,...]
"""
import argparse
import gc
import json
import os
import re
import sys
import time

import torch
import transformers
from transformers import AutoConfig

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate  # noqa: E402  (the cases and how a model is built)

OUT = os.path.join(generate.ROOT, "tests", "ref", "hf", "state_dicts.json")
NUM = re.compile(r"(?<=\.)\d+(?=\.|$)")
LETTERS = "ijklmn"


def template(name):
    """The template of a state_dict name and the values of its numeric components, in order."""
    idx = []

    def sub(mo):
        idx.append(int(mo.group(0)))
        return "{" + LETTERS[min(len(idx) - 1, len(LETTERS) - 1)] + "}"
    return NUM.sub(sub, name), idx


def add(table, name, shape, dtype=None):
    t, idx = template(name)
    rows = table.setdefault(t, [])
    for r in rows:
        if r["shape"] == shape and r.get("dtype") == dtype:
            break
    else:
        r = {"shape": shape, "count": 0}
        if dtype is not None:
            r["dtype"] = dtype
        if idx:
            r["layers"] = []
        rows.append(r)
    r["count"] += 1
    if idx:
        r["layers"].append(idx[0])


def record(cfg):
    model, cls = generate.build(cfg, "meta")
    params, tied, first = {}, {}, {}
    for name, p in model.named_parameters(remove_duplicate=False):
        if id(p) in first:
            tied.setdefault(first[id(p)], []).append(name)
            continue
        first[id(p)] = name
        add(params, name, list(p.shape))
    persistent, nonpersistent = {}, {}
    sd = set(model.state_dict().keys())
    for name, b in model.named_buffers():
        add(persistent if name in sd else nonpersistent, name, list(b.shape), str(b.dtype).replace("torch.", ""))
    for rows in list(params.values()) + list(persistent.values()) + list(nonpersistent.values()):
        for r in rows:
            if "layers" in r:
                r["layers"] = sorted(set(r["layers"])) if len(set(r["layers"])) == len(r["layers"]) else r["layers"]
    out = {"class": cls, "parameters": params, "buffers": persistent, "nonpersistent_buffers": nonpersistent}
    if tied:
        out["tied"] = tied
    del model
    gc.collect()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default=OUT)
    a = ap.parse_args()
    only = set(x for x in a.only.split(",") if x)
    doc = {"about": "Made by tools/groundtruth/state_dicts.py (see its docstring and tests/ref/hf/README.md).",
           "transformers": transformers.__version__, "torch": torch.__version__, "cases": {}}
    if os.path.exists(a.out):
        with open(a.out) as fh:
            doc["cases"] = json.load(fh).get("cases", {})
    for name, t, d in generate.cases(only):
        t0 = time.time()
        entry = {"model_type": t}
        try:
            if d is None:
                cfg = AutoConfig.for_model(t)
            else:
                d = dict(d)
                d.pop("_source", None)
                cfg = AutoConfig.for_model(t, **{k: v for k, v in d.items() if k != "model_type"})
            entry.update(record(cfg))
        except Exception as e:  # recorded, as generate.py does
            entry["error"] = f"{type(e).__name__}: {e}"[:600]
        entry["seconds"] = round(time.time() - t0, 1)
        doc["cases"][name] = entry
        print(f"{name:36s} {len(entry.get('parameters', {})):4d} templates {entry.get('error', '')[:100]} "
              f"({entry['seconds']} s)", flush=True)
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as fh:
        json.dump(doc, fh, indent=1, sort_keys=True)
        fh.write("\n")


if __name__ == "__main__":
    sys.exit(main())
