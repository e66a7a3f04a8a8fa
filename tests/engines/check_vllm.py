"""check_vllm.py CASES.json OUT.json: every vLLM command memplan printed, through vLLM's own code.

Runs inside the vLLM venv (tests/engines/venv.sh vllm), on a machine without a GPU: libcuda.so.1 is CUDA's driver
stub (LD_LIBRARY_PATH, set by run.py), so vLLM's extensions import; the CUDA platform is vLLM's own CudaPlatform
with the device queries (capability, name, total memory) answered for the plan's device. For each case:
  1. the command line is split as a shell would (shlex) and parsed by vLLM's own `vllm serve` parser
     (make_arg_parser), the model argument swapped for a local folder holding the served model's config.json
     (the base config, plus the quantization_config of a quantised checkpoint), as no hub is reachable here;
  2. AsyncEngineArgs.from_cli_args + create_engine_config: vLLM's config checks (quantization lookup and its
     dtype rules, block size, parallel sizes, scheduler limits), then the values it resolved are compared with
     the plan's (a difference fails the case);
  3. attention-backend selection (get_attn_backend) at the printed block size, and at vLLM's own choice with no
     --block-size (the block size it would pick must be the printed one);
  4. the block count: the model's KV cache specs (FullAttentionSpec / MLAAttentionSpec / SlidingWindowSpec, per
     rank) through get_kv_cache_configs with memplan's available KV memory, against memplan's num_gpu_blocks.
Writes one result per case: {"id", "ok", "errors": [...], "resolved": {...}, "num_blocks": n}.
"""
import json
import shlex
import sys
import traceback

CASES = json.load(open(sys.argv[1]))
DEVICE = CASES["device"]

import torch  # noqa: E402
import vllm.platforms as platforms  # noqa: E402
from vllm.platforms.cuda import CudaPlatform  # noqa: E402
from vllm.platforms.interface import DeviceCapability  # noqa: E402


class PlanDevice(CudaPlatform):
    """vLLM's CUDA platform, its device queries answered for the plan's device (no GPU here)."""

    @classmethod
    def get_device_capability(cls, device_id=0):
        return DeviceCapability(*DEVICE["capability"])

    @classmethod
    def has_device_capability(cls, capability, device_id=0):
        cap = DEVICE["capability"][0] * 10 + DEVICE["capability"][1]
        if isinstance(capability, tuple):
            return cap >= capability[0] * 10 + capability[1]
        return cap >= capability

    @classmethod
    def is_device_capability(cls, capability, device_id=0):
        cap = DEVICE["capability"][0] * 10 + DEVICE["capability"][1]
        if isinstance(capability, tuple):
            return cap == capability[0] * 10 + capability[1]
        return cap == capability

    @classmethod
    def get_device_name(cls, device_id=0):
        return DEVICE["name"]

    @classmethod
    def get_device_total_memory(cls, device_id=0):
        return DEVICE["total_memory_bytes"]

    @classmethod
    def is_fully_connected(cls, physical_device_ids):
        return True

    @classmethod
    def device_count(cls):
        return 8


platforms.current_platform = PlanDevice()

# the host's memory: vLLM 0.11 refuses a swap space (4 GiB per rank) beyond 70% of it, a check of the server the
# plan runs on, not of the plan; this build machine has 24 GiB, an 8-GPU server 2 TiB
import psutil  # noqa: E402

_vm = psutil.virtual_memory
psutil.virtual_memory = lambda: _vm()._replace(total=2 << 40)


class _Props:
    major, minor = DEVICE["capability"]
    name = DEVICE["name"]
    total_memory = DEVICE["total_memory_bytes"]
    multi_processor_count = 148


# torch.cuda's own device queries (FlashInfer's and the MLA backends' checks ask torch, not vLLM's platform)
torch.cuda.device_count = lambda: 8
torch.cuda.current_device = lambda: 0
torch.cuda.get_device_capability = lambda d=None: tuple(DEVICE["capability"])
torch.cuda.get_device_properties = lambda d=None: _Props()

if DEVICE["capability"][0] == 10:
    # the CUTLASS MLA backend allocates its 128 MiB SM100 workspace when imported (cutlass_mla.py): on the
    # meta device here, so selection can import it
    _empty = torch.empty

    def _meta_empty(*a, **k):
        if str(k.get("device", "")).startswith("cuda"):
            k["device"] = "meta"
        return _empty(*a, **k)

    torch.empty = _meta_empty
    import vllm.v1.attention.backends.mla.cutlass_mla  # noqa: E402,F401
    torch.empty = _empty

# each release's own modules: 0.33's first, then where 0.11 keeps them
from vllm.config import set_current_vllm_config  # noqa: E402
from vllm.engine.arg_utils import AsyncEngineArgs  # noqa: E402
from vllm.v1.kv_cache_interface import FullAttentionSpec, MLAAttentionSpec, SlidingWindowSpec  # noqa: E402

try:
    from vllm.entrypoints.common.cli_args import make_arg_parser  # noqa: E402
except ImportError:
    from vllm.entrypoints.openai.cli_args import make_arg_parser  # noqa: E402
try:
    from vllm.utils.argparse_utils import FlexibleArgumentParser  # noqa: E402
except ImportError:
    from vllm.utils import FlexibleArgumentParser  # noqa: E402
try:
    from vllm.v1.attention.selector import get_attn_backend  # noqa: E402
    from vllm.v1.attention.backends.utils import get_supported_kv_cache_layouts, resolve_kv_cache_layout  # noqa
    from vllm.v1.core import kv_cache_planning  # noqa: E402
    V1_SELECTOR = True
except ImportError:
    from vllm.attention.selector import get_attn_backend  # noqa: E402
    from vllm.v1.core import kv_cache_utils as kv_cache_planning  # noqa: E402
    V1_SELECTOR = False

import vllm  # noqa: E402

TORCH_DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}


def parse(command, model_dir, drop_block_size=False):
    argv = shlex.split(command)
    if argv[:2] != ["vllm", "serve"]:
        raise ValueError("not a vllm serve command: %r" % command[:40])
    argv = argv[2:]
    argv[0] = model_dir  # the served model's config.json, locally
    if drop_block_size and "--block-size" in argv:
        i = argv.index("--block-size")
        del argv[i:i + 2]
    parser = make_arg_parser(FlexibleArgumentParser())
    # --skip-tokenizer-init: the tokenizer is on the hub, which is not reachable here; it sizes nothing
    ns = parser.parse_args(["--model"] + argv[:1] + argv[1:] + ["--skip-tokenizer-init"])
    return AsyncEngineArgs.from_cli_args(ns)


def kv_specs(cfg, block_size):
    """The KV cache spec of every attention layer of one rank, as vLLM's attention layers build them."""
    mc, pc = cfg.model_config, cfg.parallel_config
    dtype = cfg.cache_config.cache_dtype
    kv_dtype = mc.dtype if dtype == "auto" else {"fp8": torch.float8_e4m3fn, "fp8_e4m3": torch.float8_e4m3fn,
                                                 "fp8_e5m2": torch.float8_e5m2}[dtype]
    layers = mc.get_num_layers(pc)
    specs = {}
    hf = mc.hf_text_config
    window = getattr(hf, "sliding_window", None)
    layer_types = getattr(hf, "layer_types", None)
    for i in range(layers):
        name = "model.layers.%d.self_attn.attn" % i
        if mc.use_mla:
            specs[name] = MLAAttentionSpec(block_size=block_size, num_kv_heads=1, head_size=mc.get_head_size(),
                                           dtype=kv_dtype, **({"cache_dtype_str": dtype} if "cache_dtype_str" in
                                                              MLAAttentionSpec.__dataclass_fields__ else {}))
        elif window and layer_types and layer_types[i] == "sliding_attention":
            specs[name] = SlidingWindowSpec(block_size=block_size, num_kv_heads=mc.get_num_kv_heads(pc),
                                            head_size=mc.get_head_size(), dtype=kv_dtype, sliding_window=window)
        else:
            specs[name] = FullAttentionSpec(block_size=block_size, num_kv_heads=mc.get_num_kv_heads(pc),
                                            head_size=mc.get_head_size(), dtype=kv_dtype)
    return specs


def num_blocks(cfg, specs, available, backend):
    if not V1_SELECTOR:  # 0.11: kv_cache_utils.get_kv_cache_configs(config, specs, memory)
        return kv_cache_planning.get_kv_cache_configs(cfg, [specs], [available])[0].num_blocks
    # the engine core resolves one KV cache layout from the backends' lists before sizing (core.py)
    layouts = [layout.name for layout in get_supported_kv_cache_layouts([backend])]
    resolve_kv_cache_layout(cfg, [layouts], list(specs.values()))
    groups = kv_cache_planning.get_global_kv_cache_groups(cfg, [specs])
    configs = kv_cache_planning.get_kv_cache_configs(cfg, [specs], [available], groups)
    return configs[0].num_blocks


def backend_for(cfg):
    mc, cc = cfg.model_config, cfg.cache_config
    with set_current_vllm_config(cfg):
        if not V1_SELECTOR:
            return get_attn_backend(mc.get_head_size(), mc.dtype, cc.cache_dtype, cc.block_size, use_mla=mc.use_mla)
        return get_attn_backend(mc.get_head_size(), mc.dtype, cc.cache_dtype, use_mla=mc.use_mla,
                                num_heads=mc.get_num_attention_heads(cfg.parallel_config))


def preferred_block_size(cfg0, backend0):
    """The block size vLLM itself takes with no --block-size: 0.33 asks the backend it picked; 0.11 resolved it
    in the config (the platform's check_and_update_config sets the MLA backends' size)."""
    if hasattr(backend0, "get_preferred_block_size"):
        with set_current_vllm_config(cfg0):
            return backend0.get_preferred_block_size(cfg0.cache_config.block_size)
    return cfg0.cache_config.block_size


def check(case):
    errors = []
    plan = case["plan"]
    eng = plan["engine"]
    ea = parse(eng["command"], case["model_dir"])
    cfg = ea.create_engine_config()
    cc, pc, sc, mc = cfg.cache_config, cfg.parallel_config, cfg.scheduler_config, cfg.model_config
    args = {a["flag"]: a["value"] for a in eng["args"]}
    want = {
        "tensor_parallel_size": int(args["--tensor-parallel-size"]),
        "data_parallel_size": int(args.get("--data-parallel-size", 1)),
        "max_model_len": plan["request"]["sequence_length"],
        "max_num_seqs": plan["request"]["batch_size"],
        "max_num_batched_tokens": plan["request"]["max_num_batched_tokens"],
        "gpu_memory_utilization": plan["request"]["gpu_memory_utilization"],
        "block_size": int(args["--block-size"]),
        "quantization": eng["quantization"] or None,
    }
    got = {
        "tensor_parallel_size": pc.tensor_parallel_size,
        "data_parallel_size": pc.data_parallel_size,
        "max_model_len": mc.max_model_len,
        "max_num_seqs": sc.max_num_seqs,
        "max_num_batched_tokens": sc.max_num_batched_tokens,
        "gpu_memory_utilization": cc.gpu_memory_utilization,
        "block_size": cc.block_size,
        "quantization": mc.quantization,
    }
    for k in want:
        w, g = want[k], got[k]
        if isinstance(w, float) and isinstance(g, float) and abs(w - g) < 1e-9:
            continue
        if w != g:
            errors.append("%s: plan %r, vLLM resolved %r" % (k, w, g))
    backend = backend_for(cfg)
    if hasattr(backend, "supports_block_size") and not backend.supports_block_size(cc.block_size):
        errors.append("block_size %d: the selected backend %s does not take it" % (cc.block_size, backend.get_name()))
    # vLLM's own block size with no --block-size: the backend it picks and that backend's preferred size
    cfg0 = parse(eng["command"], case["model_dir"], drop_block_size=True).create_engine_config()
    backend0 = backend_for(cfg0)
    preferred = preferred_block_size(cfg0, backend0)
    bs_source = [a for a in eng["args"] if a["flag"] == "--block-size"][0]["source"]
    if preferred != cc.block_size and bs_source == "default":
        errors.append("block_size: plan %d, vLLM picks %d (%s) when --block-size is left out"
                      % (cc.block_size, preferred, backend0.get_name()))
    result = {"backend": backend.get_name(), "backend_default": backend0.get_name(), "resolved": got}
    pred = eng.get("predicted")
    if pred:
        avail = pred["available_kv_cache_bytes"]
        specs = kv_specs(cfg, cc.block_size)
        page = next(iter(specs.values())).page_size_bytes
        if page != pred["block_bytes_per_layer"]:
            errors.append("page: plan %d B per block and layer, vLLM's spec %d" % (pred["block_bytes_per_layer"], page))
        if avail > 0:
            n = num_blocks(cfg, specs, avail, backend)
            result["num_blocks"] = n
            if n != pred["num_gpu_blocks"]:
                errors.append("num_gpu_blocks: plan %d, get_kv_cache_configs %d from %d B"
                              % (pred["num_gpu_blocks"], n, avail))
    result["ok"] = not errors
    result["errors"] = errors
    return result


def main():
    out = []
    for case in CASES["cases"]:
        try:
            r = check(case)
        except BaseException as e:  # the engine's refusal is the finding
            r = {"ok": False, "errors": ["vLLM refused: %s: %s" % (type(e).__name__, str(e)[:600])],
                 "trace": traceback.format_exc()[-1500:]}
        r["id"] = case["id"]
        out.append(r)
    json.dump({"engine": "vllm", "version": vllm.__version__, "results": out}, open(sys.argv[2], "w"), indent=1)


if __name__ == "__main__":
    main()
