#!/usr/bin/env python3
"""run.py MEMPLAN [ENGINE...]: memplan's engine commands through the engines' own code (make engines-real).

For a grid of plans (dense, GQA, MLA, MoE, quantised AWQ/GPTQ/fp8/int8, TP 1/2/4/8, DP, long context, vision,
fp8 KV), asks memplan (the CLI, `plan inference --json`: the same decoder and planner as POST
/v1/plan/inference) for the engine block, then runs every printed command through the pinned engine release in
its own venv (tests/engines/venv.sh: cached outside the clone), with check_vllm.py / check_sglang.py. A command
the engine's code refuses, a value it resolves otherwise than the plan, or a block count its sizing code computes
otherwise from memplan's available KV memory fails the case. Prints one line per case and the closing
"N passed, N failed" line; exits non-zero on any failure.

Needs no GPU: CUDA's driver stub (the toolkit's lib64/stubs/libcuda.so, found beside nvcc or under
/usr/local/cuda) is linked as libcuda.so.1 into a folder put first on LD_LIBRARY_PATH, which is all the engines'
extensions need to import. ENGINES_REAL_SKIP=1 skips (saying so) where the venvs cannot be made.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MEMPLAN = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(ROOT, "build", "memplan")
ONLY = sys.argv[2:]

# the devices the checkers answer for: capability, the name CUDA reports, torch's total memory (the presets')
DEVICES = {
    "h100-sxm5-80gb": {"capability": [9, 0], "name": "NVIDIA H100 80GB HBM3"},
    "b200-180gb": {"capability": [10, 0], "name": "NVIDIA B200"},
}

PRESETS = os.path.join(ROOT, "db", "presets", "models")
CONFIGS = os.path.join(ROOT, "tests", "ref", "hf", "configs")


def preset(mid):
    return {"model": mid, "config": os.path.join(PRESETS, mid + ".json")}


def config_file(name):
    return {"config": os.path.join(CONFIGS, name + ".json")}


# one plan per row: what it exercises, the model, the request's fields
GRID = [
    ("dense-tp1", preset("llama-3.1-8b"), {"batch_size": 16, "sequence_length": 32768}),
    ("dense-tp2", preset("llama-3.1-8b"), {"batch_size": 16, "sequence_length": 32768, "num_gpus": 2}),
    ("dense-70b-tp4", preset("llama-3.1-70b"), {"batch_size": 32, "sequence_length": 8192, "num_gpus": 4}),
    ("dense-70b-tp8", preset("llama-3.1-70b"), {"batch_size": 64, "sequence_length": 16384, "num_gpus": 8}),
    ("dp2-tp2", preset("llama-3.1-8b"),
     {"batch_size": 16, "sequence_length": 8192, "num_gpus": 4, "tensor_parallel_size": 2}),
    ("long-131k", preset("llama-3.1-8b"), {"batch_size": 1, "sequence_length": 131072}),
    ("gqa-qwen2.5-7b", preset("qwen2.5-7b"), {"batch_size": 32, "sequence_length": 16384}),
    ("awq", preset("llama-3.1-8b"), {"batch_size": 16, "sequence_length": 8192, "weight_dtype": "awq"}),
    ("gptq", preset("llama-3.1-8b"), {"batch_size": 16, "sequence_length": 8192, "weight_dtype": "gptq"}),
    ("fp8", preset("llama-3.1-8b"), {"batch_size": 16, "sequence_length": 8192, "weight_dtype": "fp8"}),
    ("int8", preset("llama-3.1-8b"), {"batch_size": 16, "sequence_length": 8192, "weight_dtype": "int8"}),
    ("nvfp4", preset("llama-3.1-8b"), {"batch_size": 16, "sequence_length": 8192, "weight_dtype": "nvfp4"}),
    ("fp8-kv", preset("llama-3.1-8b"), {"batch_size": 16, "sequence_length": 32768, "kv_cache_dtype": "fp8"}),
    ("moe-mixtral-tp2", preset("mixtral-8x7b"), {"batch_size": 16, "sequence_length": 16384, "num_gpus": 2}),
    ("mla-deepseek-v2-lite", config_file("deepseek-v2-lite"), {"batch_size": 16, "sequence_length": 16384}),
    ("vision-qwen2.5-vl", config_file("qwen2.5-vl-7b-instruct"), {"batch_size": 8, "sequence_length": 16384}),
    ("mla-b200", config_file("deepseek-v2-lite"), {"batch_size": 16, "sequence_length": 16384},
     "b200-180gb"),
    # an fp8 cache narrows the MLA backends a release can pick (vLLM 0.33 on sm90: FLASH_ATTN_MLA takes no fp8)
    ("mla-fp8-kv", config_file("deepseek-v2-lite"),
     {"batch_size": 16, "sequence_length": 16384, "kv_cache_dtype": "fp8"}),
    # sliding-window and chunked-local layers: the releases' hybrid KV managers (vLLM 0.11 turns its off for
    # chunked local attention; SGLang keeps a separate pool for sliding-window layers)
    ("swa-ministral", config_file("ministral-8b-instruct-2410"), {"batch_size": 16, "sequence_length": 32768}),
    ("swa-gpt-oss-20b", config_file("gpt-oss-20b"), {"batch_size": 16, "sequence_length": 32768}),
    ("swa-gemma3-27b", config_file("gemma-3-27b-it"), {"batch_size": 8, "sequence_length": 32768}),
    ("chunked-llama4-tp4", config_file("llama-4-scout-17b-16e-instruct"),
     {"batch_size": 8, "sequence_length": 32768, "num_gpus": 4}),
    # what a release cannot express is a 422 naming the field, never a command that fails (keyed by the venv:
    # "vllm" is 0.33)
    ("nf4", preset("llama-3.1-8b"), {"batch_size": 16, "sequence_length": 8192, "weight_dtype": "nf4"},
     None, {"vllm": "/weight_dtype"}),
    ("block-size-1", preset("llama-3.1-8b"), {"batch_size": 16, "sequence_length": 8192, "kv_block_size": 1},
     None, {"vllm": "/kv_block_size"}),
    # MXFP4 is a format of MoE experts only in every engine (vLLM mxfp4.py: no linear layer), fp8 weights e4m3 only
    ("mxfp4", preset("llama-3.1-8b"), {"batch_size": 16, "sequence_length": 8192, "weight_dtype": "mxfp4"},
     None, {"vllm": "/weight_dtype", "vllm-0.11": "/weight_dtype", "sglang": "/weight_dtype"}),
    ("mla-fp8-e5m2-kv", config_file("deepseek-v2-lite"),
     {"batch_size": 16, "sequence_length": 16384, "kv_cache_dtype": "fp8_e5m2"}, None,
     {"vllm": "/kv_cache_dtype", "trtllm": "/kv_cache_dtype"}),
    ("fp8-e5m2", preset("llama-3.1-8b"), {"batch_size": 16, "sequence_length": 8192, "weight_dtype": "fp8_e5m2"},
     None, {"vllm": "/weight_dtype", "vllm-0.11": "/weight_dtype", "sglang": "/weight_dtype"}),
]

# the engine releases: (engine, engine_version, venv name, checker)
ENGINES = [
    ("vllm", "0.33", "vllm", "check_vllm.py"),
    ("vllm", "0.11", "vllm-0.11", "check_vllm.py"),
    ("sglang", "0.5", "sglang", "check_sglang.py"),
]

# what a quantised checkpoint's config.json carries (the served model of a "checkpoint" plan)
QUANT_CONFIGS = {
    "awq": {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"},
    "gptq": {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True,
             "damp_percent": 0.01, "static_groups": False, "true_sequential": True},
    "auto_awq": {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"},
    "auto_gptq": {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True,
                  "damp_percent": 0.01, "static_groups": False, "true_sequential": True},
    "gptq_marlin": {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True},
    "w8a8_int8": {"quant_method": "w8a8_int8"},
    # a ModelOpt NVFP4 checkpoint: the keys vLLM's and SGLang's override_quantization_method read
    "modelopt_fp4": {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16,
                     "kv_cache_quant_algo": None, "exclude_modules": ["lm_head"]},
}


# TensorRT-LLM 1.2: its wheel is not on PyPI (the package there fetches it from NVIDIA's index, not reachable
# here), so its commands are held to the options trtllm-serve declares, read from its source
# (tensorrt_llm/commands/serve.py, NVIDIA/TensorRT-LLM at 00209af1: click options of `serve`), and to the rule
# that the options file replaces the KvCacheConfig the flags built (update_llm_args_with_extra_dict): a
# kv_cache_config in it must carry free_gpu_memory_fraction. A reading of the source, not the engine's code.
TRTLLM_SERVE_OPTIONS = {
    "--tokenizer", "--custom_tokenizer", "--host", "--port", "--backend", "--custom_module_dirs", "--log_level",
    "--max_beam_width", "--max_batch_size", "--max_num_tokens", "--max_seq_len", "--tensor_parallel_size",
    "--tp_size", "--pipeline_parallel_size", "--pp_size", "--context_parallel_size", "--cp_size",
    "--moe_expert_parallel_size", "--ep_size", "--moe_cluster_parallel_size", "--cluster_size", "--gpus_per_node",
    "--free_gpu_memory_fraction", "--kv_cache_free_gpu_memory_fraction", "--num_postprocess_workers",
    "--trust_remote_code", "--revision", "--config", "--extra_llm_api_options", "--reasoning_parser",
    "--tool_parser", "--metadata_server_config_file", "--server_role", "--fail_fast_on_attention_window_too_large",
    "--otlp_traces_endpoint", "--disagg_cluster_uri", "--enable_chunked_prefill", "--media_io_kwargs",
    "--chat_template",
}
TRTLLM_FLAGS = {"--trust_remote_code", "--enable_chunked_prefill", "--fail_fast_on_attention_window_too_large"}


def check_trtllm(doc):
    """The errors of one trtllm-serve command against the options its source declares."""
    eng = doc["engine"]
    errors = []
    for a in eng["args"]:
        if a["flag"] not in TRTLLM_SERVE_OPTIONS:
            errors.append("%s: not an option of trtllm-serve 1.2" % a["flag"])
        elif (a["flag"] in TRTLLM_FLAGS) != (a.get("value") is None):
            errors.append("%s: %s" % (a["flag"], "a switch takes no value" if a["flag"] in TRTLLM_FLAGS
                                      else "needs a value"))
    yaml_text = eng.get("extra_llm_api_options_yaml", "")
    flags = {a["flag"] for a in eng["args"]}
    if yaml_text:
        if "--extra_llm_api_options" not in flags:
            errors.append("an options file with no --extra_llm_api_options")
        if "kv_cache_config:" in yaml_text and "free_gpu_memory_fraction:" not in yaml_text:
            errors.append("kv_cache_config replaces the flags' KvCacheConfig: free_gpu_memory_fraction lost")
    req = doc["request"]
    if req.get("max_num_batched_tokens") and req["max_num_batched_tokens"] < req["sequence_length"] and \
            "--enable_chunked_prefill" not in flags:
        errors.append("max_num_tokens %d below max_seq_len %d without --enable_chunked_prefill"
                      % (req["max_num_batched_tokens"], req["sequence_length"]))
    return errors


def stub_dir(tmp):
    """A folder with libcuda.so.1 -> the CUDA toolkit's driver stub."""
    nvcc = shutil.which("nvcc")
    roots = [os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))] if nvcc else []
    roots.append("/usr/local/cuda")
    for r in roots:
        for sub in ("lib64/stubs/libcuda.so", "targets/x86_64-linux/lib/stubs/libcuda.so"):
            p = os.path.join(r, sub)
            if os.path.exists(p):
                d = os.path.join(tmp, "cuda-stub")
                os.makedirs(d, exist_ok=True)
                os.symlink(p, os.path.join(d, "libcuda.so.1"))
                return d
    raise SystemExit("run.py: no CUDA driver stub (lib64/stubs/libcuda.so) under %s" % roots)


def plan(model, fields, engine, version, device):
    """memplan's answer (the JSON document), or None and the 422's field; any other failure stops the run."""
    cmd = [MEMPLAN, "plan", "inference", "--json", "--device", device, "--engine", engine,
           "--engine_version", version, "--db", os.path.join(TMP, "memplan.db")]
    if "model" in model:
        cmd += ["--model", model["model"]]
    else:
        cmd += ["--config", model["config"]]
    for k, v in fields.items():
        cmd += ["--" + k, str(v)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        err = (r.stderr or r.stdout).strip()
        if "invalid value at " not in err:
            raise SystemExit("run.py: memplan failed (exit %d): %s" % (r.returncode, err[-2000:]))
        return None, err
    return json.loads(r.stdout), None


def model_dir(model, doc, name):
    """The served model locally: its config.json (and a quantised checkpoint's quantization_config)."""
    d = os.path.join(TMP, "models", name)
    os.makedirs(d, exist_ok=True)
    cfg = json.load(open(model["config"]))
    cfg = {k: v for k, v in cfg.items() if not k.startswith("_")}
    eng = doc["engine"]
    q = eng.get("quantization") or ""
    if eng.get("quantization_from") == "checkpoint" and q in QUANT_CONFIGS:
        cfg["quantization_config"] = QUANT_CONFIGS[q]
    json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
    return d


def main():
    global TMP
    TMP = tempfile.mkdtemp(prefix="memplan-engines-")
    stub = stub_dir(TMP)
    passed = failed = 0
    lines = []
    for engine, version, venv_name, checker in ENGINES:
        if ONLY and venv_name not in ONLY and (engine not in ONLY or venv_name != engine):
            continue
        r = subprocess.run([os.path.join(HERE, "venv.sh"), venv_name], capture_output=True, text=True)
        if r.returncode != 0:
            if os.environ.get("ENGINES_REAL_SKIP") == "1":
                print("SKIP %s %s: no venv (%s)" % (engine, version, r.stderr.strip()[-300:]))
                continue
            sys.stderr.write(r.stderr)
            raise SystemExit("run.py: could not make the %s venv" % venv_name)
        py = os.path.join(r.stdout.strip(), "bin", "python")
        by_device = {}
        for row in GRID:
            cid, model, fields = row[0], row[1], row[2]
            if os.environ.get("ENGINES_REAL_CASES") and cid not in os.environ["ENGINES_REAL_CASES"].split(","):
                continue
            device = (row[3] if len(row) > 3 else None) or "h100-sxm5-80gb"
            expect = (row[4] if len(row) > 4 else {}).get(venv_name)
            doc, err = plan(model, fields, engine, version, device)
            if expect or doc is None:
                # a plan the release cannot express is a 422 naming the field, never a command that fails
                ok = doc is None and expect is not None and ("invalid value at %s:" % expect) in err
                passed += ok
                failed += not ok
                lines.append("%s %s %s %-22s %s" % ("ok  " if ok else "FAIL", engine, version, cid,
                                                    ("422: " + err[:200]) if doc is None else
                                                    "printed a command, expected a 422 at %s" % expect))
                continue
            by_device.setdefault(device, []).append(
                {"id": cid, "plan": doc, "model_dir": model_dir(model, doc, "%s-%s-%s" % (engine, cid, device))})
        if os.environ.get("ENGINES_REAL_PLANS_ONLY") == "1":
            # make asan: memplan's side of every case under the sanitizers; the engines' code is the plain tier's
            lines.append("skip %s %s: %d commands planned, not run through the engine (ENGINES_REAL_PLANS_ONLY=1)"
                         % (engine, version, sum(len(c) for c in by_device.values())))
            continue
        for device, cases in by_device.items():
            spec = dict(DEVICES[device])
            spec["total_memory_bytes"] = cases[0]["plan"]["engine"]["predicted"]["total_memory_bytes"]
            spec["nvml_memory_bytes"] = cases[0]["plan"]["engine"]["defaults"]["device_memory_bytes"]
            inp = os.path.join(TMP, "%s-%s.json" % (engine, device))
            out = os.path.join(TMP, "%s-%s.out.json" % (engine, device))
            json.dump({"device": spec, "cases": cases}, open(inp, "w"))
            env = dict(os.environ, LD_LIBRARY_PATH=stub + ":" + os.environ.get("LD_LIBRARY_PATH", ""),
                       HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", VLLM_NO_USAGE_STATS="1",
                       DO_NOT_TRACK="1", TOKENIZERS_PARALLELISM="false")
            r = subprocess.run([py, os.path.join(HERE, checker), inp, out], capture_output=True, text=True,
                               env=env, cwd=TMP)
            if r.returncode != 0 or not os.path.exists(out):
                sys.stderr.write(r.stderr[-4000:])
                raise SystemExit("run.py: %s exited %d" % (checker, r.returncode))
            res = json.load(open(out))
            for x in res["results"]:
                tag = "ok  " if x["ok"] else "FAIL"
                passed += x["ok"]
                failed += not x["ok"]
                detail = "; ".join(x["errors"]) if x["errors"] else \
                    "blocks %s, %s" % (x.get("num_blocks", "-"), x.get("backend", x.get("resolved", "")))
                lines.append("%s %s %s %-22s %s" % (tag, engine, res["version"], x["id"], detail[:400]))
                if not x["ok"] and os.environ.get("ENGINES_REAL_VERBOSE") == "1" and x.get("trace"):
                    lines.append(x["trace"])
    if not ONLY or "trtllm" in ONLY:
        for row in GRID:
            cid, model, fields = row[0], row[1], row[2]
            if os.environ.get("ENGINES_REAL_CASES") and cid not in os.environ["ENGINES_REAL_CASES"].split(","):
                continue
            doc, err = plan(model, fields, "trtllm", "1.2", (row[3] if len(row) > 3 else None) or "h100-sxm5-80gb")
            if doc is None:
                # nf4, mxfp4, fp8_e5m2 weights: TensorRT-LLM has none; else the row names the field
                expect = (row[4] if len(row) > 4 else {}).get("trtllm", "/weight_dtype")
                ok = ("invalid value at %s:" % expect) in err
                lines.append("%s trtllm 1.2 (source) %-22s 422: %s" % ("ok  " if ok else "FAIL", cid, err[:160]))
            else:
                errs = check_trtllm(doc)
                ok = not errs
                lines.append("%s trtllm 1.2 (source) %-22s %s" % ("ok  " if ok else "FAIL", cid,
                                                                   "; ".join(errs) or "options and KV file as "
                                                                   "serve.py declares them"))
            passed += ok
            failed += not ok
    print("\n".join(lines))
    if os.environ.get("KEEP") != "1":
        shutil.rmtree(TMP, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
