#!/usr/bin/env python3
"""generate.py: llama.cpp's own figures for memplan's llama.cpp arithmetic (tests/ref/llamacpp/).

For each reference architecture: a transformers model built from a small config with random weights (torch seed 0),
saved as safetensors, with a byte-level BPE tokenizer trained here (the tokenizer only sets the vocabulary's tokens;
the config's vocab_size pads it, as convert_hf_to_gguf.py pads with [PAD<i>] tokens); converted with llama.cpp's own
convert_hf_to_gguf.py (the source llama-cpp-python's sdist vendors; build.sh built it) and quantised with its
llama-quantize. Then llama-completion loads each file over a grid of launch options (context, KV cache types, flash
attention, parallel slots, batch sizes, mmap, offloaded layers on RPC devices) and the lines llama.cpp prints about its
buffers are saved with the options, the versions and the files' headers:

  tests/ref/llamacpp/runs.json       every run: the arguments, the printed buffer lines (device, kind, MiB)
  tests/ref/llamacpp/models/*.gguf.hdr  each GGUF's header bytes (the file up to its tensor data: no weights)
  tests/ref/llamacpp/models/*.safetensors.hdr  each safetensors shard's 8-byte length and JSON header
  tests/ref/llamacpp/models/*.config.json      the config.json transformers saved
  tests/ref/llamacpp/ggml_types.tsv  ggml's type table from that build

Run by hand (make llamacpp-groundtruth); the C tests read what it saved. Needs torch and transformers (the
tools/groundtruth venv: python tools/groundtruth/llamacpp/generate.py) and the build of build.sh.
"""
import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
REF = os.path.join(ROOT, "tests", "ref", "llamacpp")
CACHE = os.environ.get("LLAMACPP_CACHE", "/work/cache/gguf")
VERSION = os.environ.get("LLAMA_CPP_PYTHON_VERSION", "0.3.36")
SRC = os.path.join(CACHE, "llama_cpp_python-%s" % VERSION, "vendor", "llama.cpp")
BUILD = os.path.join(CACHE, "build-cpu")
WORK = os.path.join(CACHE, "models")

# Small configs of real architectures: every matrix row a multiple of 256 values (the K-quants' block), so
# llama-quantize keeps the type asked for instead of falling back.
COMMON = dict(hidden_size=256, intermediate_size=768, num_hidden_layers=4, num_attention_heads=4,
              num_key_value_heads=2, vocab_size=2048, max_position_embeddings=4096, tie_word_embeddings=False)
ARCHS = {
    "llama": dict(COMMON, model_type="llama", architectures=["LlamaForCausalLM"]),
    "qwen2": dict(COMMON, model_type="qwen2", architectures=["Qwen2ForCausalLM"], tie_word_embeddings=True),
    "qwen3": dict(COMMON, model_type="qwen3", architectures=["Qwen3ForCausalLM"], head_dim=64),
    "mixtral": dict(COMMON, model_type="mixtral", architectures=["MixtralForCausalLM"], num_local_experts=4,
                    num_experts_per_tok=2, intermediate_size=512),
    "qwen3_moe": dict(COMMON, model_type="qwen3_moe", architectures=["Qwen3MoeForCausalLM"], head_dim=64,
                      num_experts=4, num_experts_per_tok=2, moe_intermediate_size=256, decoder_sparse_step=1,
                      mlp_only_layers=[]),
    "gemma3": dict(COMMON, model_type="gemma3_text", architectures=["Gemma3ForCausalLM"], head_dim=64,
                   sliding_window=512, num_hidden_layers=6, tie_word_embeddings=True, vocab_size=1003,
                   layer_types=["sliding_attention"] * 5 + ["full_attention"]),
    "phi3": dict(COMMON, model_type="phi3", architectures=["Phi3ForCausalLM"], num_key_value_heads=4,
                 bos_token_id=0, eos_token_id=1, pad_token_id=1),
    "gpt2": dict(model_type="gpt2", architectures=["GPT2LMHeadModel"], n_embd=256, n_layer=4, n_head=4,
                 n_inner=1024, n_positions=2048, n_ctx=2048, vocab_size=2048),
}
QUANTS = ["Q8_0", "Q4_K_M", "Q4_0", "Q6_K", "IQ4_XS", "Q5_1"]
# More tensor-override launches (every layer on one RPC device, FFN weights or experts on the host), over the batch,
# the context, flash attention and the slots, run by --overrides-only on the GGUF files an earlier run made; the
# experts-only ones (-ot exps, -ncmoe) on the MoE architectures.
OVERRIDE_GRID = [
    ["-c", "4096", "-ngl", "99", "-ot", "ffn_.*=CPU"],
    ["-c", "2048", "-ngl", "99", "-ot", "ffn_.*=CPU", "-ub", "256"],
    ["-c", "2048", "-ngl", "99", "-ot", "ffn_.*=CPU", "-fa", "off"],
    ["-c", "4096", "-ngl", "99", "-ot", "ffn_.*=CPU", "-np", "2"],
    ["-c", "2048", "-ngl", "99", "-ot", "exps=CPU"],
    ["-c", "4096", "-ngl", "99", "-ncmoe", "3", "-ub", "1024", "-b", "1024"],
]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def tokenizer_dir(path):
    """A byte-level BPE tokenizer of 1,000 tokens (tokenizers' trainer on a fixed text), saved as transformers saves one."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import PreTrainedTokenizerFast
    text = [open(os.path.join(SRC, "README.md"), encoding="utf-8").read()] * 2
    tok = ByteLevelBPETokenizer()
    tok.train_from_iterator(text, vocab_size=1000, min_frequency=1, special_tokens=["<s>", "</s>", "<unk>"])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok._tokenizer, bos_token="<s>", eos_token="</s>",
                                   unk_token="<unk>")
    fast.save_pretrained(path)


def make_hf(name, cfg):
    import torch
    import transformers
    out = os.path.join(WORK, name, "hf")
    if os.path.exists(os.path.join(out, "config.json")):
        return out
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    conf = transformers.AutoConfig.for_model(**{k: v for k, v in cfg.items() if k != "architectures"})
    conf.architectures = cfg["architectures"]
    model = transformers.AutoModelForCausalLM.from_config(conf, dtype=torch.bfloat16)
    model.save_pretrained(out, max_shard_size="8MB" if name == "llama" else "2GB")
    tokenizer_dir(out)
    if name == "phi3":
        # Phi3MiniModel.set_vocab reads a sentencepiece model only: one trained here on the same text
        sys.path.append(os.path.join(CACHE, "pylib"))
        import sentencepiece as spm
        spm.SentencePieceTrainer.train(input=os.path.join(SRC, "README.md"), model_prefix=os.path.join(out, "tokenizer"),
                                       vocab_size=1000, model_type="bpe", bos_id=0, eos_id=1, unk_id=2, pad_id=-1)
        os.remove(os.path.join(out, "tokenizer.vocab"))
    return out


def convert(name, hf, outtype):
    """convert_hf_to_gguf.py, in-process: its module with the BPE pre-tokenizer check answered 'gpt-2' (our trained
    tokenizer's hash is in no table; the pre-tokenizer changes no buffer)."""
    out = os.path.join(WORK, name, "%s-%s.gguf" % (name, outtype))
    if os.path.exists(out):
        return out
    cmd = [sys.executable, "-c",
           "import sys; sys.path.insert(0, %r); sys.path.append(%r); sys.argv = sys.argv[1:]\n"
           "import conversion.base as b\n"
           "b.TextModel.get_vocab_base_pre = lambda self, tok: 'gpt-2'\n"
           "import convert_hf_to_gguf as c; c.main()" % (SRC, os.path.join(CACHE, "pylib")),
           "convert_hf_to_gguf.py", hf, "--outfile", out, "--outtype", outtype]
    subprocess.run(cmd, check=True, cwd=SRC, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return out


def quantize(name, f16, qtype):
    out = os.path.join(WORK, name, "%s-%s.gguf" % (name, qtype.lower()))
    if not os.path.exists(out):
        subprocess.run([os.path.join(BUILD, "bin", "llama-quantize"), f16, out, qtype], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return out


def gguf_header(path):
    """The file's bytes up to the start of its tensor data, and what gguf-py's reader says of the file: where the data
    starts, how many tensors, their bytes (the reference memplan's reader is checked against)."""
    sys.path.insert(0, os.path.join(SRC, "gguf-py"))
    import gguf
    r = gguf.GGUFReader(path)
    facts = {"data_offset": int(r.data_offset), "n_tensors": len(r.tensors),
             "tensor_bytes": int(sum(int(t.n_bytes) for t in r.tensors)),
             "types": sorted({t.tensor_type.name for t in r.tensors})}
    with open(path, "rb") as f:
        return f.read(r.data_offset), facts


def st_header(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        return struct.pack("<Q", n) + f.read(n)


BUF_RE = re.compile(r"^(?P<fn>\w+):\s+(?P<dev>\S+)\s+(?P<kind>model|KV|compute|output|RS) buffer size =\s+(?P<mib>[0-9.]+) MiB")
# printed when the context is freed, with four decimals: "~llama_context: CPU compute buffer size is 8.5137 MiB, ..."
END_RE = re.compile(r"^~llama_context:\s+(?P<dev>\S+) compute buffer size is\s+(?P<mib>[0-9.]+) MiB")
KV_RE = re.compile(r"^llama_kv_cache: size =\s+(?P<mib>[0-9.]+) MiB \(\s*(?P<cells>\d+) cells,\s+(?P<layers>\d+) layers,\s+"
                   r"(?P<seqs>\d+)/(?P<streams>\d+) seqs\), K \((?P<kt>\w+)\):\s+(?P<k>[0-9.]+) MiB, V \((?P<vt>\w+)\):\s+(?P<v>[0-9.]+) MiB")


def run(model, args, rpc=None):
    cmd = [os.path.join(BUILD, "bin", "llama-completion"), "-m", model, "-p", "hi", "-n", "1", "-no-cnv",
           "--temp", "0", "-t", "2", "--fit", "off", "--no-warmup", "-nr", "-v", "--no-log-timestamps", "--no-log-prefix"] + args
    servers = []
    if rpc:
        cmd += ["--rpc", ",".join(rpc)]
        # one RPC server per device, started for this run and stopped after it
        for port in rpc:
            host, pn = port.split(":")
            servers.append(subprocess.Popen([os.path.join(BUILD, "bin", "ggml-rpc-server"), "-H", host, "-p", pn, "-t", "1"],
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL))
        time.sleep(0.5)
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    finally:
        for srv in servers:
            srv.terminate()
            srv.wait()
    return parse(p.stdout.splitlines(), args, len(rpc or []), p.returncode, "llama-completion")


def parse(text_lines, args, rpc, returncode, program):
    lines, kv = [], []
    for line in text_lines:
        m = BUF_RE.match(line.strip())
        if m:
            lines.append(dict(function=m["fn"], device=m["dev"], kind=m["kind"], mib=m["mib"]))
        m = END_RE.match(line.strip())
        if m:
            lines.append(dict(function="~llama_context", device=m["dev"], kind="compute_final", mib=m["mib"]))
        m = KV_RE.match(line.strip())
        if m:
            kv.append(m.groupdict())
        m = re.search(r"Flash Attention was auto, set to (\w+)", line)
        if m:
            lines.append(dict(function="llama_context", key="flash_attn_resolved", value=m.group(1)))
        for key in ("n_ctx", "n_ctx_seq", "n_batch", "n_ubatch", "n_seq_max", "flash_attn", "kv_unified"):
            m2 = re.match(r"^llama_context: %s\s+= (\S+)" % key, line.strip())
            if m2:
                lines.append(dict(function="llama_context", key=key, value=m2.group(1)))
    if returncode != 0:
        return dict(args=args, rpc=rpc, program=program, returncode=returncode, tail=text_lines[-8:])
    return dict(args=args, rpc=rpc, program=program, returncode=0, buffers=[l for l in lines if "kind" in l],
                context={l["key"]: l["value"] for l in lines if "key" in l}, kv_cache=kv)


GRID = [
    [],
    ["-c", "4096"],
    ["-c", "1000"],
    ["-c", "4096", "-fa", "on"],
    ["-c", "4096", "-fa", "off"],
    ["-c", "2048", "-ctk", "q8_0", "-ctv", "q8_0", "-fa", "on"],
    ["-c", "2048", "-ctk", "q4_0", "-ctv", "q4_0", "-fa", "on"],
    ["-c", "2048", "-ctk", "q5_1", "-ctv", "iq4_nl", "-fa", "on"],
    ["-c", "2048", "-ctk", "bf16", "-ctv", "bf16"],
    ["-c", "4096", "-np", "4"],
    ["-c", "2048", "-b", "512", "-ub", "128"],
    ["-c", "2048", "-b", "4096", "-ub", "1024"],
    ["-c", "2048", "-lm", "none"],
    ["-c", "2048", "--repack"],
]


# llama-server's own defaults: auto slots (-np 4 with a unified KV cache, tools/server/server.cpp), then slots asked for
SERVER_GRID = [
    ["-c", "8192"],
    ["-c", "4096", "-np", "2"],
    ["-c", "4096", "-np", "4", "-kvu"],
    ["-c", "4096", "-np", "4", "-kvu", "-fa", "off"],
]


def run_server(model, args, port="127.0.0.1:27160"):
    """llama-server until it listens (its start-up allocates every buffer), then stopped."""
    host, pn = port.split(":")
    cmd = [os.path.join(BUILD, "bin", "llama-server"), "-m", model, "--host", host, "--port", pn, "-t", "2", "--fit", "off",
           "-nr", "-v", "--no-log-timestamps", "--no-log-prefix", "--no-warmup"] + args
    # its output to a file, polled: a pipe would be block-buffered and hold the line back
    logp = os.path.join(WORK, "server.log")
    with open(logp, "w") as logf:
        p = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        t0 = time.time()
        up = False
        while time.time() - t0 < 120 and p.poll() is None:
            time.sleep(0.5)
            with open(logp, errors="replace") as f:
                if "listening on http" in f.read():
                    up = True
                    break
        p.terminate()
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    with open(logp, errors="replace") as f:
        text = f.read()
    return parse(text.splitlines(), args, 0, 0 if up else (p.returncode or 1), "llama-server")


def overrides_only(a):
    runs_path = os.path.join(REF, "runs.json")
    doc = json.load(open(runs_path))
    mode = "tools/groundtruth/llamacpp/generate.py --overrides-only"
    doc["runs"] = [r for r in doc["runs"] if r.get("generator") != mode or (a.only and r["arch"] not in a.only)]
    for name in ARCHS:
        if a.only and name not in a.only:
            continue
        log("==", name, "overrides")
        for q in ("f16", "q4_k_m"):
            path = os.path.join(WORK, name, "%s-%s.gguf" % (name, q))
            for args in OVERRIDE_GRID:
                if name not in ("mixtral", "qwen3_moe") and ("-ncmoe" in args or "exps=CPU" in args):
                    continue
                r = run(path, args, ["127.0.0.1:27152"])
                r.update(arch=name, model="%s-%s" % (name, q), generator=mode, date=time.strftime("%Y-%m-%d"))
                doc["runs"].append(r)
    with open(runs_path, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    log("wrote", runs_path, len(doc["runs"]), "runs")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*", help="architectures to run (default all)")
    ap.add_argument("--quick", action="store_true", help="one quantisation and the first three grid points")
    ap.add_argument("--server-only", action="store_true", help="only the llama-server runs, added to runs.json")
    ap.add_argument("--overrides-only", action="store_true",
                    help="only OVERRIDE_GRID's runs of the GGUF files already made, added to runs.json (each run "
                         "says so in its 'generator'; needs neither torch nor transformers)")
    a = ap.parse_args()
    if a.overrides_only:
        overrides_only(a)
        return
    os.makedirs(os.path.join(REF, "models"), exist_ok=True)
    import torch
    import transformers
    runs_path = os.path.join(REF, "runs.json")
    doc = {"_source": {}, "models": {}, "runs": []}
    if (a.only or a.server_only) and os.path.exists(runs_path):
        doc = json.load(open(runs_path))
        if not a.server_only:
            doc["runs"] = [r for r in doc["runs"] if r["arch"] not in a.only]
    commit = open(os.path.join(SRC, ".git", "HEAD")).read().strip() if os.path.exists(os.path.join(SRC, ".git", "HEAD")) else ""
    try:
        commit = subprocess.run(["git", "-C", SRC, "rev-parse", "HEAD"], stdout=subprocess.PIPE, text=True).stdout.strip()
    except OSError:
        pass
    doc["_source"] = {
        "llama_cpp_python_sdist": VERSION, "llama_cpp_commit": commit, "backend": "CPU (+ RPC servers on 127.0.0.1)",
        "torch": torch.__version__, "transformers": transformers.__version__,
        "generator": "tools/groundtruth/llamacpp/generate.py", "date": time.strftime("%Y-%m-%d"),
        "cpu": subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"], stdout=subprocess.PIPE,
                              text=True).stdout.strip(),
    }
    with open(os.path.join(REF, "ggml_types.tsv"), "w") as f:
        f.write(subprocess.run([os.path.join(BUILD, "ggml_types")], stdout=subprocess.PIPE, text=True, check=True).stdout)
    # below the ephemeral range (32768-60999 on Linux), where other programs' client sockets cannot take them
    ports = ["127.0.0.1:27152", "127.0.0.1:27153"]
    try:
        for name, cfg in ARCHS.items():
            if a.only and name not in a.only:
                continue
            log("==", name)
            hf = make_hf(name, cfg)
            if a.server_only:
                doc["runs"] = [r for r in doc["runs"] if not (r["arch"] == name and r.get("program") == "llama-server")]
                for q in ("f16", "q4_k_m"):
                    path = os.path.join(WORK, name, "%s-%s.gguf" % (name, q))
                    for args in SERVER_GRID:
                        r = run_server(path, args)
                        r.update(arch=name, model="%s-%s" % (name, q))
                        doc["runs"].append(r)
                with open(runs_path, "w") as f:
                    json.dump(doc, f, indent=1, sort_keys=True)
                    f.write("\n")
                continue
            shutil.copy(os.path.join(hf, "config.json"), os.path.join(REF, "models", "%s.config.json" % name))
            for fn in sorted(os.listdir(hf)):
                if fn.endswith(".safetensors"):
                    with open(os.path.join(REF, "models", "%s.%s.hdr" % (name, fn)), "wb") as f:
                        f.write(st_header(os.path.join(hf, fn)))
                if fn == "model.safetensors.index.json":
                    shutil.copy(os.path.join(hf, fn), os.path.join(REF, "models", "%s.%s" % (name, fn)))
            f16 = convert(name, hf, "f16")
            files = {"f16": f16}
            for q in (QUANTS[:1] if a.quick else QUANTS):
                files[q.lower()] = quantize(name, f16, q)
            for q, path in files.items():
                hdr, facts = gguf_header(path)
                key = "%s-%s" % (name, q)
                with open(os.path.join(REF, "models", "%s.gguf.hdr" % key), "wb") as f:
                    f.write(hdr)
                doc["models"][key] = dict(facts, file_bytes=os.path.getsize(path), header_bytes=len(hdr))
                grid = GRID[:3] if (a.quick or q not in ("f16", "q4_k_m")) else GRID
                for args in grid:
                    r = run(path, args)
                    r.update(arch=name, model=key)
                    doc["runs"].append(r)
                # layers on other devices: two RPC servers stand in for GPUs (their buffers are the CPU backend's)
                if q in ("f16", "q4_k_m"):
                    for args, rpc in ((["-c", "2048", "-ngl", "2"], ports[:1]), (["-c", "2048", "-ngl", "99"], ports[:1]),
                                      (["-c", "2048", "-ngl", "99", "-nkvo"], ports[:1]),
                                      (["-c", "2048", "-ngl", "99", "-ts", "1,1"], ports),
                                      (["-c", "2048", "-ngl", "3", "-ts", "3,1"], ports),
                                      (["-c", "2048", "-ngl", "99", "-fa", "on", "-ctk", "q8_0", "-ctv", "q8_0"], ports[:1]),
                                      (["-c", "2048", "-ngl", "99", "-ncmoe", "2"], ports[:1]),
                                      (["-c", "2048", "-ngl", "99", "-ot", "ffn_.*=CPU"], ports[:1])):
                        if name not in ("mixtral", "qwen3_moe") and "-ncmoe" in args:
                            continue
                        r = run(path, args, rpc)
                        r.update(arch=name, model=key)
                        doc["runs"].append(r)
            with open(runs_path, "w") as f:
                json.dump(doc, f, indent=1, sort_keys=True)
                f.write("\n")
    finally:
        pass
    log("wrote", runs_path, len(doc["runs"]), "runs")


if __name__ == "__main__":
    main()
