"""check_sglang.py CASES.json OUT.json: every SGLang command memplan printed, through SGLang's own code.

Runs inside the SGLang venv (tests/engines/venv.sh sglang) without a GPU: libcuda.so.1 is CUDA's driver stub
(LD_LIBRARY_PATH, set by run.py) so sgl_kernel imports, and torch.cuda's device queries (available, count,
capability, properties) and SGLang's nvidia-smi memory query answer for the plan's device. For each case:
  1. the command line is split as a shell would and given to prepare_server_args (SGLang's own parser), the
     --model-path swapped for a local folder with the served model's config.json (plus a quantised checkpoint's
     quantization_config), as no hub is reachable;
  2. resolve_once() (SGLang's argument resolution: its GPU-memory rule, quantization and dtype checks, the
     attention backend) and check_server_args(); the resolved values are compared with the plan's;
  3. the same command without --mem-fraction-static: the fraction SGLang's own rule gives must be the one memplan
     printed as the default;
  4. the KV cell: SGLang's ModelConfig (heads per rank, head dims, layers; MLA's latent width) in the KV dtype,
     against memplan's cell_size_bytes, and max_total_num_tokens = int(rest // cell) from memplan's rest memory.
"""
import json
import shlex
import sys
import traceback

CASES = json.load(open(sys.argv[1]))
DEVICE = CASES["device"]
CAP = tuple(DEVICE["capability"])

import torch  # noqa: E402


class _Props:
    major, minor = CAP
    name = DEVICE["name"]
    total_memory = DEVICE["total_memory_bytes"]
    multi_processor_count = 132


torch.cuda.is_available = lambda: True
torch.cuda.device_count = lambda: 8
torch.cuda.current_device = lambda: 0
torch.cuda.get_device_capability = lambda d=None: CAP
torch.cuda.get_device_name = lambda d=None: DEVICE["name"]
torch.cuda.get_device_properties = lambda d=None: _Props()

import sglang.srt.utils.common as common  # noqa: E402

# nvidia-smi --query-gpu=memory.total, in MiB (the figure SGLang's rule reads)
common.get_nvgpu_memory_capacity = lambda: DEVICE["nvml_memory_bytes"] / (1 << 20)

import sglang  # noqa: E402
from sglang.srt.arg_groups.overrides import resolved_view  # noqa: E402
from sglang.srt.server_args import prepare_server_args  # noqa: E402


def resolve(command, model_dir, drop=None):
    argv = shlex.split(command)
    if argv[:3] != ["python3", "-m", "sglang.launch_server"]:
        raise ValueError("not an sglang.launch_server command: %r" % command[:50])
    argv = argv[3:]
    i = argv.index("--model-path")
    argv[i + 1] = model_dir
    if drop and drop in argv:
        j = argv.index(drop)
        del argv[j:j + 2]
    sa = prepare_server_args(argv)
    sa.resolve_once()
    sa.check_server_args()
    return sa, resolved_view(sa)


KV_BYTES = {"auto": None, "fp8_e4m3": 1, "fp8_e5m2": 1, "bf16": 2, "bfloat16": 2}


def cell_size(cfg, model_dir):
    """Bytes of one token's K and V over all layers of one rank, from SGLang's ModelConfig."""
    from sglang.srt.configs.model_config import ModelConfig
    mc = ModelConfig(model_dir, trust_remote_code=False, context_length=cfg.context_length, dtype=cfg.dtype,
                     quantization=cfg.quantization)
    kv = KV_BYTES.get(cfg.kv_cache_dtype) or mc.dtype.itemsize
    layers = mc.num_hidden_layers
    if mc.attention_arch.name == "MLA":
        return (mc.kv_lora_rank + mc.qk_rope_head_dim) * layers * kv
    heads = mc.get_num_kv_heads(cfg.tp_size)
    return heads * (mc.head_dim + getattr(mc, "v_head_dim", mc.head_dim)) * layers * kv


def check(case):
    errors = []
    plan = case["plan"]
    eng = plan["engine"]
    args = {a["flag"]: a.get("value") for a in eng["args"]}
    sa, cfg = resolve(eng["command"], case["model_dir"])
    want = {
        "tp_size": int(args["--tp"]),
        "dp_size": int(args.get("--dp") or 1),
        "context_length": plan["request"]["sequence_length"],
        "max_running_requests": plan["request"]["batch_size"],
        "chunked_prefill_size": int(args["--chunked-prefill-size"]),
        "mem_fraction_static": float(args["--mem-fraction-static"]),
        "page_size": int(args.get("--page-size") or 1),
        "dtype": args["--dtype"],
        "quantization": eng["quantization"] or None,
    }
    got = {k: getattr(cfg, k) for k in want}
    for k in want:
        w, g = want[k], got[k]
        if isinstance(w, float) and isinstance(g, float) and abs(w - g) < 1e-9:
            continue
        if w != g:
            errors.append("%s: plan %r, SGLang resolved %r" % (k, w, g))
    if "--mem-fraction-static" in args and [a for a in eng["args"] if a["flag"] == "--mem-fraction-static"][0][
            "source"] == "default":
        _, cfg0 = resolve(eng["command"], case["model_dir"], drop="--mem-fraction-static")
        if abs(cfg0.mem_fraction_static - want["mem_fraction_static"]) > 1e-9:
            errors.append("mem_fraction_static default: memplan %r, SGLang's rule %r"
                          % (want["mem_fraction_static"], cfg0.mem_fraction_static))
    result = {"resolved": {k: got[k] for k in ("mem_fraction_static", "chunked_prefill_size", "page_size")},
              "attention_backend": getattr(cfg, "attention_backend", None)}
    pred = eng.get("predicted")
    if pred:
        cell = cell_size(cfg, case["model_dir"])
        result["cell_size"] = cell
        if cell != pred["cell_size_bytes"]:
            errors.append("cell_size: plan %d B, SGLang's ModelConfig %d" % (pred["cell_size_bytes"], cell))
        rest = pred["rest_memory_bytes"]
        tokens = max(rest // cell, 0) // want["page_size"] * want["page_size"]
        result["num_blocks"] = tokens
        if tokens != pred["max_total_num_tokens"]:
            errors.append("max_total_num_tokens: plan %d, %d // %d = %d" % (pred["max_total_num_tokens"], rest,
                                                                             cell, tokens))
    result["ok"] = not errors
    result["errors"] = errors
    return result


def main():
    out = []
    for case in CASES["cases"]:
        try:
            r = check(case)
        except BaseException as e:  # the engine's refusal is the finding
            r = {"ok": False, "errors": ["SGLang refused: %s: %s" % (type(e).__name__, str(e)[:600])],
                 "trace": traceback.format_exc()[-1500:]}
        r["id"] = case["id"]
        out.append(r)
    json.dump({"engine": "sglang", "version": sglang.__version__, "results": out}, open(sys.argv[2], "w"), indent=1)


if __name__ == "__main__":
    main()
