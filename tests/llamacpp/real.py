#!/usr/bin/env python3
"""real.py: memplan's llama.cpp and Ollama commands run by the real llama.cpp, their buffers against the plan's.

For each case: `memplan plan inference --model FILE.gguf --json` with engine llamacpp (or ollama) plans the launch;
the command of its engine block is run by llama.cpp built from llama-cpp-python 0.3.36's sdist
(the CPU backend, with ggml-rpc-server processes standing in for the GPUs), and
every buffer line llama.cpp prints is set beside the line the plan predicted (engine.predicted.log_lines): the model,
KV and output buffers and the caches' size lines must be equal to the printed digit, the compute buffers within
10% (tests/ref/llamacpp/README.md), reported with their error. Each command is also given to the program's own
argument parser with --help appended (exit 0: every argument parsed).

make llamacpp-real gives it LLAMACPP_BIN and LLAMACPP_MODELS from tests/llamacpp/setup.sh (llama.cpp built from
the pinned sdist and the GGUF files made from the reference headers, in a cache outside the clone); run alone it
defaults to $LLAMACPP_CACHE (/work/cache/gguf: `make llamacpp-groundtruth`), and skips, saying why, where the build
or a model file is absent. --record DIR writes each case's log and plan body there
(tests/data/engines/llamacpp: the logs the C engine-check tests read). Standard library only.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

CACHE = os.environ.get("LLAMACPP_CACHE", "/work/cache/gguf")
BIN = os.environ.get("LLAMACPP_BIN", os.path.join(CACHE, "build-cpu", "bin"))
MODELS = os.environ.get("LLAMACPP_MODELS", os.path.join(CACHE, "models"))
def free_ports(n):
    """n TCP ports free on 127.0.0.1 now, drawn from 20000-29999: below the ephemeral range, where other programs'
    client sockets cannot take them, and at random, so that two runs on one machine (make test beside make asan)
    do not meet on fixed ones."""
    import random
    import socket
    rng, out = random.Random(os.getpid() ^ int(time.time())), []
    while len(out) < n:
        p = rng.randrange(20000, 30000)
        if p in out:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", p))
            except OSError:
                continue
        out.append(p)
    return out


PORTS = free_ports(3)
SERVER_PORT = PORTS.pop()

RPC_DEVICE = {"name": "ggml-rpc-server (CPU backend)", "vendor": "ggml", "kind": "gpu", "memory_bytes": 1 << 36,
              "memory_bandwidth_bytes_per_second": 2e10, "peak_flops_per_second": {"fp16": 1e11, "fp32": 1e11}}
HOST_DEVICE = {"name": "this host", "vendor": "ggml", "kind": "cpu", "memory_bytes": 1 << 34,
               "memory_bandwidth_bytes_per_second": 2e10, "peak_flops_per_second": {"fp32": 1e11}}

# name, model file, request members (merged into the body), RPC servers
CASES = [
    ("host-llama-q4_k_m", "llama/llama-q4_k_m.gguf",
     {"device": HOST_DEVICE, "engine_options": {"program": "llama-completion", "repack": False}}, 0),
    ("host-llama-q4_k_m-repack", "llama/llama-q4_k_m.gguf",
     {"device": HOST_DEVICE, "engine_options": {"program": "llama-completion"}}, 0),
    ("rpc1-llama-f16-ngl2", "llama/llama-f16.gguf",
     {"sequence_length": 2048, "engine_options": {"program": "llama-completion", "gpu_layers": 2, "backend": "cpu",
                                                  "repack": False}}, 1),
    ("rpc1-qwen3-q4_k_m-q8cache", "qwen3/qwen3-q4_k_m.gguf",
     {"engine_options": {"program": "llama-completion", "backend": "cpu", "cache_type_k": "q8_0",
                         "cache_type_v": "q8_0", "flash_attention": "on"}}, 1),
    ("rpc2-llama-q4_k_m-split", "llama/llama-q4_k_m.gguf",
     {"num_gpus": 2, "engine_options": {"program": "llama-completion", "backend": "cpu", "tensor_split": [1, 1]}}, 2),
    ("rpc1-gemma3-q6_k-swa", "gemma3/gemma3-q6_k.gguf",
     {"engine_options": {"program": "llama-completion", "backend": "cpu"}}, 1),
    ("rpc1-mixtral-q4_k_m-ncmoe", "mixtral/mixtral-q4_k_m.gguf",
     {"sequence_length": 2048, "engine_options": {"program": "llama-completion", "backend": "cpu", "n_cpu_moe": 2,
                                                  "repack": False}}, 1),
    ("rpc1-phi3-q8_0-fit", "phi3/phi3-q8_0.gguf",
     {"sequence_length": 2048, "device": dict(RPC_DEVICE, memory_bytes=16 << 20),
      "engine_options": {"program": "llama-completion", "backend": "cpu", "gpu_margin_bytes": 0, "repack": False}}, 1),
    ("rpc1-gpt2-q8_0-nkvo", "gpt2/gpt2-q8_0.gguf",
     {"sequence_length": 2048, "engine_options": {"program": "llama-completion", "backend": "cpu",
                                                  "kv_offload": False}}, 1),
    ("server-qwen2-q4_k_m-np2", "qwen2/qwen2-q4_k_m.gguf",
     {"batch_size": 2, "sequence_length": 2048, "engine_options": {"backend": "cpu"}}, 1),
    ("server-qwen2-q4_k_m-shared", "qwen2/qwen2-q4_k_m.gguf",
     {"batch_size": 4, "sequence_length": 4096, "sequence_length_scope": "shared", "engine_options": {"backend": "cpu"}},
     1),
    # Ollama on a host without a GPU: its command (-ngl 0, no mmap: sched.go disableMmapDefaultReason) run by llama-server
    ("ollama-host-gemma3-q4_k_m", "gemma3/gemma3-q4_k_m.gguf",
     {"engine": "ollama", "batch_size": 2, "sequence_length": 2048, "device": HOST_DEVICE,
      "engine_options": {"cache_type_k": "q8_0"}}, 0),
    ("ollama-host-qwen3-q8_0", "qwen3/qwen3-q8_0.gguf",
     {"engine": "ollama", "batch_size": 1, "sequence_length": 4096, "device": HOST_DEVICE}, 0),
]

BUF_RE = re.compile(r"(\w+):\s+(\S+)\s+(model|KV|compute|output) buffer size =\s+([0-9.]+) MiB")
SIZE_RE = re.compile(r"llama_kv_cache: size =\s+([0-9.]+) MiB \(\s*(\d+) cells,\s+(\d+) layers,\s+(\d+)/(\d+) seqs\), "
                     r"K \((\w+)\):\s+([0-9.]+) MiB, V \((\w+)\):\s+([0-9.]+) MiB")


def log(*a):
    print(*a, flush=True)


def buffers(lines, ports):
    """(kind, slot, cache) -> MiB text, the last printing of each; cache counts the size lines of the current load."""
    out, sizes, cache, kv_seen = {}, {}, 0, False
    for line in lines:
        m = BUF_RE.search(line)
        if m:
            dev, kind = m.group(2), m.group(3)
            if kind == "model" and kv_seen:
                cache, kv_seen = 0, False
            if dev.startswith("CPU") or dev.endswith("_Host") or dev in ("AMX", "BLAS"):
                slot = 0 if dev in ("CPU", "CPU_Mapped", "CUDA_Host") or kind != "model" else dev
            else:
                mm = re.match(r"(RPC|CUDA)(\d+)(?:\[[^:]+:(\d+)\])?", dev)
                slot = (ports.index(int(mm.group(3))) + 1) if mm and mm.group(3) else int(mm.group(2)) + 1 if mm else dev
            out[(kind, slot, cache if kind == "KV" else 0)] = m.group(4)
        m = SIZE_RE.search(line)
        if m:
            sizes[cache] = (m.group(1), m.group(2), m.group(7), m.group(9))
            cache += 1
            kv_seen = True
    return out, sizes


def dry_parse(argv):
    p = subprocess.run(argv + ["--help"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       errors="replace", timeout=60)
    return p.returncode, p.stderr.strip().splitlines()[-3:] if p.returncode else []


def run_completion(argv):
    p = subprocess.run(argv + ["-p", "hi", "-n", "1", "-no-cnv", "--no-warmup", "-t", "2", "-lv", "4", "--no-log-timestamps",
                               "--no-log-prefix"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       errors="replace", timeout=300)  # the one token generated by random weights may be any bytes
    return p.returncode, p.stdout


def run_server(argv, workdir):
    """llama-server until it listens (its start-up allocates every buffer), then stopped by its pid."""
    path = os.path.join(workdir, "server.log")
    with open(path, "w") as f:
        p = subprocess.Popen(argv + ["-t", "2", "--no-warmup", "-lv", "4", "--no-log-timestamps", "--no-log-prefix"],
                             stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        t0, up = time.time(), False
        while time.time() - t0 < 120 and p.poll() is None:
            time.sleep(0.3)
            with open(path, errors="replace") as g:
                if "listening on http" in g.read():
                    up = True
                    break
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    with open(path, errors="replace") as g:
        return (0 if up else 1), g.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--memplan", default=os.environ.get("MEMPLAN_BIN", "build/memplan"))
    ap.add_argument("--record", help="write each case's log and plan body into this folder")
    ap.add_argument("--only", nargs="*")
    a = ap.parse_args()
    need = [os.path.join(BIN, p) for p in ("llama-completion", "llama-server", "ggml-rpc-server")]
    missing = [p for p in need if not os.access(p, os.X_OK)]
    if missing:
        log("llamacpp-real: skipped: %s not built (tools/groundtruth/llamacpp/build.sh builds llama.cpp from "
            "llama-cpp-python 0.3.36's sdist)" % ", ".join(missing))
        return 0
    if not os.path.isdir(MODELS):
        log("llamacpp-real: skipped: no model files under %s (make llamacpp-groundtruth makes them)" % MODELS)
        return 0
    work = tempfile.mkdtemp(prefix="memplan-llamacpp-real-")
    db = os.path.join(work, "m.db")
    failures, checked = 0, 0
    try:
        for name, rel, extra, rpc in CASES:
            if a.only and name not in a.only:
                continue
            model = os.path.join(MODELS, rel)
            if not os.path.exists(model):
                log("  %-30s skipped: %s absent" % (name, model))
                continue
            body = {"batch_size": 1, "sequence_length": 4096, "engine": "llamacpp", "device": RPC_DEVICE,
                    "served_model": model}
            body.update(extra)
            if rpc == 0 and "device" not in extra:
                body.pop("device")
            req = os.path.join(work, name + ".json")
            with open(req, "w") as f:
                json.dump(body, f)
            p = subprocess.run([a.memplan, "plan", "inference", "--model", model, "--request", req, "--json",
                                "--db", db], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if p.returncode != 0:
                log("  %-30s FAILED: memplan: %s" % (name, p.stderr.strip()))
                failures += 1
                continue
            plan = json.loads(p.stdout)
            eng = plan["engine"]
            program = "llama-server" if eng["name"] == "ollama" else eng["program"]
            argv = [os.path.join(BIN, program)]
            for arg in eng["args"]:
                v = arg["value"]
                if arg["flag"] == "--port":
                    v = str(SERVER_PORT)
                argv += [arg["flag"]] + ([v] if v is not None else [])
            argv[1:1] = ["--model" if eng["name"] == "ollama" else "-m", model]
            if program == "llama-server" and "--port" not in argv:
                argv += ["--host", "127.0.0.1", "--port", str(SERVER_PORT)]
            ports = PORTS[:rpc]
            rc, tail = dry_parse(argv)  # memplan's command alone (--rpc connects while it is parsed)
            if rpc:
                argv += ["--rpc", ",".join("127.0.0.1:%d" % q for q in ports)]
            if eng["name"] == "ollama" and "none" in argv:
                # llama-server 0c1e5709 without mmap crashes after loading when the CPU backend repacks the weights
                # into AMX buffers (this machine's CPU has AMX): the weights are kept as the file has them
                argv.append("--no-repack")
            if rc != 0:
                log("  %-30s FAILED: %s --help: exit %d: %s" % (name, program, rc, " | ".join(tail)))
                failures += 1
                continue
            servers = [subprocess.Popen([os.path.join(BIN, "ggml-rpc-server"), "-H", "127.0.0.1", "-p", str(q), "-t",
                                         "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        stdin=subprocess.DEVNULL) for q in ports]
            try:
                time.sleep(0.5 if rpc else 0)
                rc, text = run_server(argv, work) if program == "llama-server" else run_completion(argv)
            finally:
                for s in servers:
                    s.terminate()
                    s.wait()
            if rc != 0:
                log("  %-30s FAILED: %s exited %d: %s" % (name, program, rc, " | ".join(text.splitlines()[-4:])))
                failures += 1
                continue
            got, got_sizes = buffers(text.splitlines(), ports)
            want, want_sizes = buffers(eng["predicted"]["log_lines"], [])
            bad, compute = [], []
            for key, mib in sorted(want.items(), key=str):
                kind, slot, cache = key
                if key not in got:
                    bad.append("%s %s: predicted %s MiB, not printed" % (kind, slot, mib))
                elif kind == "compute":
                    compute.append("%s %s %s/%s" % (kind, slot, got[key], mib))
                    # the bound of tests/ref/llamacpp/README.md: 10% in every class
                    bound = 0.10
                    if float(got[key]) > 0 and abs(float(mib) - float(got[key])) / float(got[key]) > bound:
                        bad.append("compute %s: printed %s MiB, predicted %s: over the %.0f%% bound" %
                                   (slot, got[key], mib, 100 * bound))
                elif kind == "model" and slot == 0 and any(isinstance(k[1], str) for k in got):
                    pass  # the host's weights repacked (REPACK / AMX): its mapped range is not modelled
                elif got[key] != mib:
                    bad.append("%s %s: printed %s MiB, predicted %s" % (kind, slot, got[key], mib))
            for key, mib in got.items():
                if key not in want and not isinstance(key[1], str) and float(mib) > 0:
                    bad.append("%s %s: printed %s MiB, not predicted" % (key[0], key[1], mib))
            if got_sizes != want_sizes:
                bad.append("cache size lines: printed %s, predicted %s" % (got_sizes, want_sizes))
            checked += 1
            log("  %-30s %s  %s%s" % (name, "ok" if not bad else "FAILED", " ".join(a_ for a_ in argv[1:] if a_ != model),
                                    "" if not compute else "  (compute printed/predicted MiB: %s)" % ", ".join(compute)))
            for b in bad:
                log("      " + b)
            failures += bool(bad)
            if a.record:
                os.makedirs(a.record, exist_ok=True)
                with open(os.path.join(a.record, name + ".log"), "w") as f:
                    f.write(text)
                rec = dict(body)
                rec["served_model"] = os.path.basename(model)
                with open(os.path.join(a.record, name + ".json"), "w") as f:
                    json.dump({"model": rel, "plan": rec, "command": argv[:1] + [x if x != model else os.path.basename(model)
                                                                                 for x in argv[1:]]}, f, indent=1)
                    f.write("\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    log("llamacpp-real: %d cases run by llama.cpp, %d failed" % (checked, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
