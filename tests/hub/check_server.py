#!/usr/bin/env python3
"""check_server.py: the Hub test server (tests/hub_server.c) and memplan's Hub fetch, held to the Hub's own client.

huggingface_hub 2.0.0 (pinned, tests/hub/requirements.txt) runs against the test server with HF_ENDPOINT pointing
at it: hf_hub_download reads config.json (and writes refs/main from X-Repo-Commit, as it does against the Hub),
get_safetensors_metadata reads every shard's header by range requests through the 302 to the CDN host, and its
errors for a gated repository, a missing repository, revision and file are the ones it raises against the Hub. So
the layout test_hub's C cases are run against is the one the real client speaks. Then `memplan serve` with
--hub-endpoint and --hub-token-file plans {"hf_repo": ...} through the same server: its weights equal what
huggingface_hub's own parse of the headers gives, a gated repository without the token is a 502 naming it, and the
token never appears in the daemon's log or answers.

Usage: check_server.py BUILD_DIR (build/, holding memplan and tests/hub_server). Standard library and
huggingface_hub only.
"""
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REF = os.path.join(HERE, "..", "ref", "llamacpp", "models")
COMMIT = "89abcdef0123456789abcdef0123456789abcdef"
TOKEN = "hf_check_server_token_0000"


def lay_out(root):
    files = {"config.json": "llama.config.json", "model.safetensors.index.json": "llama.model.safetensors.index.json",
             "model-00001-of-00002.safetensors": "llama.model-00001-of-00002.safetensors.hdr",
             "model-00002-of-00002.safetensors": "llama.model-00002-of-00002.safetensors.hdr"}
    for repo in ("acme/hub-llama", "acme/gated-llama"):
        d = os.path.join(root, repo, COMMIT)
        os.makedirs(d, exist_ok=True)
        os.makedirs(os.path.join(root, repo, "refs"), exist_ok=True)
        with open(os.path.join(root, repo, "refs", "main"), "w") as f:
            f.write(COMMIT + "\n")
        for name, ref in files.items():
            shutil.copy(os.path.join(REF, ref), os.path.join(d, name))
    open(os.path.join(root, "acme/gated-llama", "gated"), "w").close()


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    work = tempfile.mkdtemp(prefix="memplan-hub-check-")
    root = os.path.join(work, "root")
    lay_out(root)
    server = subprocess.Popen([os.path.join(build, "tests", "hub_server"), root, TOKEN], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    daemon = None
    failures = []

    def check(cond, what):
        print("  %-4s %s" % ("ok" if cond else "FAIL", what), flush=True)
        if not cond:
            failures.append(what)

    try:
        port = int(server.stdout.readline().split()[1])
        endpoint = "http://127.0.0.1:%d" % port
        os.environ.update(HF_ENDPOINT=endpoint, HF_HUB_CACHE=os.path.join(work, "hf-cache"), HF_HUB_DISABLE_TELEMETRY="1",
                          HF_HUB_DISABLE_XET="1", HF_HUB_ETAG_TIMEOUT="10", HF_HUB_DOWNLOAD_TIMEOUT="10")
        os.environ.pop("HF_TOKEN", None)
        import huggingface_hub
        from huggingface_hub import HfApi, hf_hub_download
        from huggingface_hub.errors import (EntryNotFoundError, GatedRepoError, RepositoryNotFoundError,
                                            RevisionNotFoundError)

        print("huggingface_hub %s against the test server at %s" % (huggingface_hub.__version__, endpoint))
        path = hf_hub_download("acme/hub-llama", "config.json")
        with open(path) as f, open(os.path.join(REF, "llama.config.json")) as g:
            check(json.load(f) == json.load(g), "hf_hub_download: config.json as the repository holds it")
        with open(os.path.join(work, "hf-cache", "models--acme--hub-llama", "refs", "main")) as f:
            check(f.read().strip() == COMMIT, "hf_hub_download: refs/main from X-Repo-Commit")
        meta = HfApi(token=False).get_safetensors_metadata("acme/hub-llama")
        total = 0
        sizes = {"BF16": 2, "F16": 2, "F32": 4}
        for fm in meta.files_metadata.values():
            for t in fm.tensors.values():
                n = 1
                for d in t.shape:
                    n *= d
                total += n * sizes[t.dtype]
        check(meta.sharded and len(meta.files_metadata) == 2 and total == 8393216,
              "get_safetensors_metadata: 2 shards' headers by range requests, %d bytes of tensors" % total)
        for fn, exc, what in (
                (lambda: hf_hub_download("acme/gated-llama", "config.json", token=False), GatedRepoError, "gated"),
                (lambda: hf_hub_download("acme/none", "config.json", token=False), RepositoryNotFoundError, "missing repo"),
                (lambda: hf_hub_download("acme/hub-llama", "config.json", revision="v9"), RevisionNotFoundError,
                 "missing revision"),
                (lambda: hf_hub_download("acme/hub-llama", "nope.json"), EntryNotFoundError, "missing file")):
            try:
                fn()
                check(False, "%s: %s raised" % (what, exc.__name__))
            except exc:
                check(True, "%s: huggingface_hub raises %s" % (what, exc.__name__))
        p = hf_hub_download("acme/gated-llama", "config.json", token=TOKEN)
        check(os.path.exists(p), "gated: the token opens it")

        # the daemon, fetching through the same server
        tokfile = os.path.join(work, "hub-token")
        with open(tokfile, "w") as f:
            f.write(TOKEN + "\n")
        logp = os.path.join(work, "daemon.log")
        env = dict(os.environ)
        env.pop("HF_HUB_CACHE", None)
        env["HF_HUB_CACHE"] = os.path.join(work, "empty-local-cache")  # the local cache holds nothing
        with open(logp, "w") as log:
            daemon = subprocess.Popen([os.path.join(build, "memplan"), "serve", "--listen", "127.0.0.1:0", "--db",
                                       os.path.join(work, "m.db"), "--hub-endpoint", endpoint, "--hub-token-file",
                                       tokfile, "--log-level", "debug"], stdout=log, stderr=subprocess.STDOUT, env=env)
            url = None
            for _ in range(100):
                time.sleep(0.1)
                with open(logp) as g:
                    for line in g:
                        if "listening on" in line:
                            url = "http://" + line.split("listening on ")[1].split(",")[0]
                if url:
                    break
            check(url is not None, "memplan serve --hub-endpoint --hub-token-file starts")

            def plan(repo):
                body = json.dumps({"model": {"hf_repo": repo}, "batch_size": 1, "sequence_length": 4096}).encode()
                req = urllib.request.Request(url + "/v1/plan/inference", data=body,
                                             headers={"Content-Type": "application/json"})
                try:
                    with urllib.request.urlopen(req, timeout=30) as r:
                        return r.status, json.load(r)
                except urllib.error.HTTPError as e:
                    return e.code, json.load(e)
                except (OSError, http.client.HTTPException):
                    # no answer at all: the daemon died (a sanitizer's report is in its log)
                    daemon.poll()
                    with open(logp, errors="replace") as g:
                        sys.stderr.write("the daemon gave no answer (exit %s); its log:\n%s" % (daemon.returncode,
                                                                                         g.read()[-20000:]))
                    raise

            code, doc = plan("acme/hub-llama")
            check(code == 200 and doc["memory"]["weights_bytes"] == total,
                  "POST /v1/plan/inference {hf_repo}: 200, weights_bytes %s = huggingface_hub's %d" %
                  (doc.get("memory", {}).get("weights_bytes"), total))
            code, doc = plan("acme/gated-llama")
            check(code == 200, "a gated repository with the daemon's token: 200")
            daemon.terminate()
            daemon.wait(timeout=30)
        with open(logp) as g:
            log_text = g.read()
        check(TOKEN not in log_text, "the token is in no line of the daemon's log")
        # without a token: the gated repository is a 502 naming it
        with open(logp, "w") as log:
            env2 = dict(env)
            daemon = subprocess.Popen([os.path.join(build, "memplan"), "serve", "--listen", "127.0.0.1:0", "--db",
                                       os.path.join(work, "m2.db"), "--hub-endpoint", endpoint,
                                       "--hub-cache", os.path.join(work, "cache2")], stdout=log,
                                      stderr=subprocess.STDOUT, env=env2)
            url = None
            for _ in range(100):
                time.sleep(0.1)
                with open(logp) as g:
                    for line in g:
                        if "listening on" in line:
                            url = "http://" + line.split("listening on ")[1].split(",")[0]
                if url:
                    break
            code, doc = plan("acme/gated-llama")
            check(code == 502 and "acme/gated-llama" in doc.get("detail", "") and TOKEN not in json.dumps(doc),
                  "a gated repository without a token: 502 naming it (%s)" % doc.get("type"))
    finally:
        if daemon and daemon.poll() is None:
            daemon.terminate()
            daemon.wait(timeout=30)
        server.stdin.close()
        server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
    print("hub-real: %d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
