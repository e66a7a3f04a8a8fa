#!/usr/bin/env python3
"""bench/attack/attack.py: the attacks of issue 30 against a memplan binary, each bounded in count and time, on
loopback only, printing the figures bench/RESULTS.md records. Each case starts its own daemon (a fresh database in
a temporary folder, --threads 2), runs the attack, and reads the daemon's own memory and CPU from /proc:

  big-tiny           POST /v1/k8s/filter of 127 MiB (and 16 MiB) of tiny values, {"x":[0,0,...]}: peak RSS above
                     idle, RSS left 2 s after, CPU seconds, the answer
  trickle-extender   40 connections each sending an extender body of real Node objects (--trickle-mib, 32 MiB
                     by default) just short of its end, then one byte a second: the daemon's peak RSS
  slow-body          1,030 connections sending their headers, then one body byte every 25 s (reconnecting when
                     cut), for --seconds: fresh GET /v1/health probes (a new connection each) every 0.25 s
  busy-keepalive     wrk -c1100 of kept-alive GET /v1/health for --seconds, with the same probes
  slow-reader        the largest fit read at 6 KiB per 10 s, and one never read, while 20 small fits are asked for
                     over 40 s: how many of those got 503
  parallel-extender  6 extender bodies of 24 MiB at once, with the probes: the slowest probe
  wal                a deleted -wal then SIGKILL; a replaced database file then SIGKILL and restart
  http               conditional PUT/DELETE, DNS rebinding, framing on the daemon's port, and the smaller findings
  fit-memory         the largest fit as JSON, as ?format=text and as the Slurm table: peak RSS and CPU

Usage: bench/attack/attack.py [--bin build/memplan] [--check] [--seconds N] CASE... (make bench-attack runs all).
With --check each case compares its figures with issue 30's targets and the exit status says whether all held: the
same script fails against the commit before the issue and passes after (bench/RESULTS.md has both).
Needs Python 3 only (wrk for busy-keepalive when installed, else a Python client)."""
import argparse
import json
import os
import random
import resource
import selectors
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MIB = 1024 * 1024
results = []        # (case, figure, value, target, ok)


def note(case, figure, value, target=None, ok=None):
    results.append((case, figure, value, target, ok))
    mark = "" if ok is None else ("  ok" if ok else "  FAIL")
    print("  %-18s %-52s %s%s%s" % (case, figure, value, "   (target %s)" % target if target else "", mark),
          flush=True)


# ----- the daemon -------------------------------------------------------------------------------------------------

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Daemon:
    def __init__(self, binary, *flags, db=None, keep=None):
        self.dir = keep or tempfile.mkdtemp(prefix="memplan-attack-")
        self.db = db or os.path.join(self.dir, "memplan.db")
        self.port = free_port()
        self.binary = binary
        self.flags = list(flags)
        self.start()

    def start(self):
        self.log = open(os.path.join(self.dir, "daemon.log"), "ab")
        self.proc = subprocess.Popen([self.binary, "serve", "--listen", "127.0.0.1:%d" % self.port, "--db", self.db,
                                      "--threads", "2", "--log-level", "warn"] + self.flags,
                                     stdout=subprocess.DEVNULL, stderr=self.log)
        for _ in range(200):
            try:
                if http("GET", self.port, "/v1/health", timeout=1)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("the daemon did not start: %s" % open(os.path.join(self.dir, "daemon.log")).read()[-2000:])

    def kib(self, key):
        for line in open("/proc/%d/status" % self.proc.pid):
            if line.startswith(key + ":"):
                return int(line.split()[1])
        return 0

    def cpu(self):
        f = open("/proc/%d/stat" % self.proc.pid).read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")

    def reset_peak(self):
        with open("/proc/%d/clear_refs" % self.proc.pid, "w") as f:
            f.write("5")
        return self.kib("VmRSS")

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()

    def remove(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def http(method, port, path, body=None, headers=None, timeout=30, read=True):
    """One request on a fresh connection; (status, headers text, body bytes)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    head = "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n" % (method, path)
    for k, v in (headers or {}).items():
        head += "%s: %s\r\n" % (k, v)
    if body is not None:
        head += "Content-Length: %d\r\n" % len(body)
    s.sendall(head.encode() + b"\r\n" + (body or b""))
    got = b""
    while read:
        c = s.recv(1 << 16)
        if not c:
            break
        got += c
    s.close()
    head, _, rest = got.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/") else 0
    return status, head.decode("latin-1"), rest


# ----- probes -------------------------------------------------------------------------------------------------------

class Prober(threading.Thread):
    """Fresh GET /v1/health every `every` seconds from 127.0.0.1: each latency (5 s = no answer)."""

    def __init__(self, port, every=0.25):
        super().__init__(daemon=True)
        self.port, self.every, self.times, self.failed, self.stop = port, every, [], 0, False
        self.errors = {}

    def run(self):
        while not self.stop:
            t0 = time.monotonic()
            try:
                st = http("GET", self.port, "/v1/health", timeout=5)[0]
                dt = time.monotonic() - t0
                if st != 200:
                    self.failed += 1
            except OSError as e:
                dt = 5.0
                self.failed += 1
                self.errors[type(e).__name__] = self.errors.get(type(e).__name__, 0) + 1
            self.times.append(dt)
            time.sleep(max(0.0, self.every - dt))

    def summary(self):
        t = sorted(self.times) or [0]
        return {"probes": len(t), "p50_ms": 1e3 * t[len(t) // 2], "p99_ms": 1e3 * t[min(len(t) - 1, int(len(t) * 0.99))],
                "max_ms": 1e3 * t[-1], "failed": self.failed}


def report_probes(case, pr):
    s = pr.summary()
    note(case, "fresh /v1/health probes", "%d, %d failed%s" % (s["probes"], s["failed"], " (%s)" % pr.errors
                                                                 if pr.errors else ""), "0 failed", s["failed"] == 0)
    note(case, "probe p50 / p99 / max", "%.1f / %.1f / %.1f ms" % (s["p50_ms"], s["p99_ms"], s["max_ms"]),
         "p99 < 100 ms", s["p99_ms"] < 100)


def raise_fd_limit(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, max(soft, n))
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


# ----- bodies -------------------------------------------------------------------------------------------------------

KINDS = [("NVIDIA-H100-80GB-HBM3", "hopper", 81559, 8), ("NVIDIA-A100-SXM4-80GB", "ampere", 81920, 8),
         ("NVIDIA-L40S", "ampere", 46068, 4), ("NVIDIA-H200", "hopper", 143771, 8)]


def node(i):
    """One Node object of kube-scheduler's size (bench/bench_k8s.c's: GFD and NFD labels, status, 20 images)."""
    p, fam, mem, cnt = KINDS[0 if i % 10 < 4 else 1 if i % 10 < 7 else 2 if i % 10 < 9 else 3]
    labels = {"kubernetes.io/hostname": "gpu-node-%05d" % i, "kubernetes.io/arch": "amd64",
              "nvidia.com/gpu.product": p, "nvidia.com/gpu.family": fam, "nvidia.com/gpu.memory": str(mem),
              "nvidia.com/gpu.count": str(cnt), "nvidia.com/gpu.replicas": "1",
              "nvidia.com/gpu.sharing-strategy": "none"}
    for c in ("ADX", "AESNI", "AVX", "AVX2", "AVX512BW", "AVX512CD", "AVX512DQ", "AVX512F", "FMA3", "SHA"):
        labels["feature.node.kubernetes.io/cpu-cpuid." + c] = "true"
    return {"metadata": {"name": "gpu-node-%05d" % i, "uid": "6f1c2a3b-%04x" % (i & 0xffff), "labels": labels},
            "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
            "status": {"allocatable": {"cpu": "191450m", "memory": "2102416156Ki", "nvidia.com/gpu": str(cnt)},
                       "conditions": [{"type": t, "status": "True" if t == "Ready" else "False",
                                       "lastHeartbeatTime": "2026-12-01T10:00:00Z", "message": "kubelet " + t}
                                      for t in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")],
                       "images": [{"names": ["nvcr.io/nvidia/image-%02d@sha256:%064d" % (m, m * 7919),
                                             "nvcr.io/nvidia/image-%02d:v%d" % (m, m)], "sizeBytes": 10 ** 8 + m}
                                  for m in range(20)]}}


POD = {"metadata": {"name": "llama70b-0", "namespace": "inference"},
       "spec": {"containers": [{"name": "vllm", "image": "vllm/vllm-openai:v0.10.1",
                                "args": ["--model", "meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "4",
                                         "--max-model-len", "32768"],
                                "resources": {"limits": {"nvidia.com/gpu": "4"}}}]}}


def extender_body(size):
    """ExtenderArgs of real Node objects, about `size` bytes."""
    one = json.dumps(node(0), separators=(",", ":")).encode()
    n = max(1, size // (len(one) + 1))
    items = b",".join(json.dumps(node(i), separators=(",", ":")).encode() for i in range(n))
    return (b'{"Pod":' + json.dumps(POD, separators=(",", ":")).encode() + b',"Nodes":{"metadata":{},"items":['
            + items + b']},"NodeNames":null}')


def fit_body(jobs=4000, extra_device=True):
    """bench/load/fit_rss.sh's largest fit: 4,000 jobs x the presets and an inline profile x 16 GPU counts."""
    ids = [d["id"] for d in json.load(open(os.path.join(ROOT, "db", "presets", "devices.json")))]
    devices = ids + ([{"name": "inline", "memory_bytes": 85899345920, "memory_bandwidth_bytes_per_second": 2e12,
                       "peak_flops_per_second": {"bf16": 5e14}}] if extra_device else [])
    models = ["llama-3-8b", "llama-3.1-70b", "qwen2.5-7b", "mixtral-8x7b", "gemma-7b", "qwen2.5-72b-instruct",
              "mistral-7b-v0.1", "phi-3-mini-4k"]
    js = []
    for i in range(jobs):
        m = models[i % 8]
        if i % 5 == 4:
            js.append({"id": "t%d" % i, "training": {"model": m, "precision": "mixed_bf16", "optimizer": "adamw",
                                                     "micro_batch_size": 1 + i % 4, "sequence_length": 1024 << (i % 3)}})
        else:
            js.append({"id": "i%d" % i, "inference": {"model": m, "weight_dtype": "bf16", "kv_cache_dtype": "bf16",
                                                      "batch_size": 1 << (i % 7), "sequence_length": 1024 << (i % 3)}})
    return json.dumps({"jobs": js, "devices": devices, "gpu_counts": [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 24, 32, 48, 64,
                                                                      128]}, separators=(",", ":")).encode()


def post_head(path, length, ctype="application/json", extra=""):
    return ("POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: %s\r\nContent-Length: %d\r\n%s\r\n"
            % (path, ctype, length, extra)).encode()


# ----- 1: the biggest body of tiny values -------------------------------------------------------------------------

def case_big_tiny(a):
    for mib in (16, 127):
        d = Daemon(a.bin)
        try:
            time.sleep(0.5)
            idle = d.reset_peak()
            c0 = d.cpu()
            size = mib * MIB
            n = (size - 10) // 2
            s = socket.create_connection(("127.0.0.1", d.port))
            s.sendall(post_head("/v1/k8s/filter", 6 + 2 * n + 3, extra="Connection: close\r\n") + b'{"x":[')
            chunk, left, sent_all = b"0," * (1 << 19), n, True
            try:
                while left > 0:
                    k = min(left, 1 << 19)
                    s.sendall(chunk[:2 * k])
                    left -= k
                s.sendall(b"0]}")
            except OSError:
                sent_all = False
            s.settimeout(120)
            got = b""
            try:
                while True:
                    c = s.recv(1 << 16)
                    if not c:
                        break
                    got += c
            except OSError:
                pass
            s.close()
            peak = (d.kib("VmHWM") - idle) / 1024
            cpu = d.cpu() - c0
            time.sleep(2)
            after = (d.kib("VmRSS") - idle) / 1024
            status = got.split(b" ", 2)[1].decode() if got.startswith(b"HTTP/") else "none"
            note("big-tiny", "%d MiB {\"x\":[0,...]}: answer" % mib, status + ("" if sent_all else " (body cut)"))
            note("big-tiny", "%d MiB: peak RSS above idle" % mib, "%+.1f MiB" % peak, "< +100 MiB", peak < 100)
            note("big-tiny", "%d MiB: resident 2 s after" % mib, "%+.1f MiB" % after, "< +8 MiB", after < 8)
            note("big-tiny", "%d MiB: daemon CPU" % mib, "%.2f s" % cpu)
        finally:
            d.stop()
            d.remove()


# ----- 2: trickled extender uploads ---------------------------------------------------------------------------------

def case_trickle(a):
    raise_fd_limit(4096)
    body = extender_body(a.trickle_mib * MIB)
    d = Daemon(a.bin)
    socks, refused = [], 0
    try:
        time.sleep(0.5)
        idle = d.reset_peak()
        for i in range(40):
            s = socket.create_connection(("127.0.0.1", d.port))
            try:
                s.sendall(post_head("/v1/k8s/filter", len(body)) + body[:-1024])
            except OSError:
                refused += 1
            socks.append(s)
        t_end = time.monotonic() + a.seconds / 3
        k = 0
        while time.monotonic() < t_end:
            for s in socks:
                try:
                    s.send(body[len(body) - 1024 + k:len(body) - 1024 + k + 1])
                except OSError:
                    pass
            k = min(k + 1, 1023)
            time.sleep(1)
        peak = (d.kib("VmHWM") - idle) / 1024
        for s in socks:
            s.close()
        time.sleep(2)
        after = (d.kib("VmRSS") - idle) / 1024
        note("trickle-extender", "40 x %d MiB held just short of the end: peak RSS" % a.trickle_mib, "%+.0f MiB" % peak,
             "< +320 MiB (the 256 MiB budget and the daemon's own)", peak < 320)
        note("trickle-extender", "resident 2 s after they close", "%+.1f MiB" % after, "< +16 MiB", after < 16)
    finally:
        d.stop()
        d.remove()


# ----- 3: slow bodies -----------------------------------------------------------------------------------------------

def slow_body_attacker(port, seconds, opened):
    """The slow-body attack, in a process of its own (a thread would take the probes' interpreter lock)."""
    raise_fd_limit(8192)
    stop = threading.Event()
    d = argparse.Namespace(port=port)
    threading.Timer(seconds, stop.set).start()

    def attacker():
        sel, conns = selectors.DefaultSelector(), {}

        def open_one():
            s = socket.socket()
            s.setblocking(False)
            try:
                s.connect_ex(("127.0.0.1", d.port))
            except OSError:
                s.close()
                return
            conns[s] = [time.monotonic(), False]
            sel.register(s, selectors.EVENT_WRITE | selectors.EVENT_READ)
            opened[0] += 1

        for _ in range(1030):
            open_one()
        while not stop.is_set():
            for key, ev in sel.select(timeout=0.2):
                s = key.fileobj
                st = conns.get(s)
                if st is None:
                    continue
                if ev & selectors.EVENT_WRITE and not st[1]:
                    try:
                        s.send(post_head("/v1/plan/inference", 100))
                        st[1] = True
                        sel.modify(s, selectors.EVENT_READ)
                    except OSError:
                        pass
                if ev & selectors.EVENT_READ:
                    try:
                        gone = s.recv(4096) == b""
                    except OSError:
                        gone = True
                    if gone:  # cut: the attack reconnects (bounded by the case's time)
                        sel.unregister(s)
                        s.close()
                        del conns[s]
                        open_one()
            now = time.monotonic()
            for s, st in list(conns.items()):
                if st[1] and now - st[0] >= 25:  # one body byte every 25 s
                    try:
                        s.send(b"{")
                    except OSError:
                        pass
                    st[0] = now
        for s in list(conns):
            s.close()

    attacker()


def case_slow_body(a):
    import multiprocessing

    d = Daemon(a.bin)
    opened = multiprocessing.Value("l", 0)

    class Counter:  # the attacker's count, shared with this process
        def __getitem__(self, i):
            return opened.value

        def __setitem__(self, i, v):
            opened.value = v

    t = multiprocessing.Process(target=slow_body_attacker, args=(d.port, a.seconds + 2, Counter()))
    t.start()
    time.sleep(2)
    pr = Prober(d.port)
    pr.start()
    time.sleep(a.seconds)
    pr.stop = True
    pr.join()
    t.join()
    note("slow-body", "1,030 connections, 1 body byte per 25 s, %d s" % a.seconds, "%d connections opened" %
         opened.value)
    report_probes("slow-body", pr)
    d.stop()
    d.remove()


# ----- 4: busy keep-alive connections -------------------------------------------------------------------------------

def case_busy(a):
    raise_fd_limit(8192)
    d = Daemon(a.bin)
    wrk = shutil.which("wrk")
    try:
        if wrk:
            w = subprocess.Popen([wrk, "-t%d" % a.wrk_threads, "-c1100", "-d%ds" % (a.seconds + 4), "--timeout", "10s",
                                  "http://127.0.0.1:%d/v1/health" % d.port], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
        else:
            raise RuntimeError("busy-keepalive needs wrk (scripts/install-deps dev)")
        time.sleep(2)
        pr = Prober(d.port)
        pr.start()
        time.sleep(a.seconds)
        pr.stop = True
        pr.join()
        out = w.communicate()[0]
        rps = [l for l in out.splitlines() if "Requests/sec" in l]
        note("busy-keepalive", "wrk -c1100 kept-alive GET /v1/health", rps[0].split()[-1] + " requests/s" if rps else "?")
        report_probes("busy-keepalive", pr)
    finally:
        d.stop()
        d.remove()


# ----- 5: a slow reader of the largest fit --------------------------------------------------------------------------

def case_slow_reader(a):
    big = fit_body()
    small = fit_body(jobs=20, extra_device=False)
    for mode in ("reads 6 KiB per 10 s", "never reads"):
        d = Daemon(a.bin)
        try:
            s = socket.create_connection(("127.0.0.1", d.port))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
            s.sendall(post_head("/v1/fit", len(big)) + big)
            s.settimeout(60)
            first = s.recv(6144)  # the answer has begun: computed (streamed, before issue 30: begun only)
            stop = threading.Event()

            def reader():
                while not stop.is_set():
                    if mode.startswith("reads"):
                        try:
                            s.settimeout(1)
                            s.recv(6144)
                        except OSError:
                            pass
                    stop.wait(10)

            r = threading.Thread(target=reader, daemon=True)
            r.start()
            codes = []
            t_end = time.monotonic() + 40
            while time.monotonic() < t_end and len(codes) < 20:
                codes.append(http("POST", d.port, "/v1/fit", small, {"Content-Type": "application/json"})[0])
                time.sleep(2)
            stop.set()
            s.close()
            n503 = codes.count(503)
            note("slow-reader", "largest fit (answer begun: %s), client %s: small fits answered 503 over 40 s"
                 % (first.split(b"\r\n", 1)[0].decode("latin-1"), mode), "%d of %d" % (n503, len(codes)), "0",
                 n503 == 0)
        finally:
            d.stop()
            d.remove()


# ----- 7: parallel extender parses ----------------------------------------------------------------------------------

def parallel_posts(port, body, n, codes):
    """n extender calls at once, in a process of its own (its threads would take the probes' interpreter lock)."""
    got = []

    def one():
        try:
            got.append(http("POST", port, "/v1/k8s/filter", body, {"Content-Type": "application/json"}, timeout=120)[0])
        except OSError:
            got.append(0)

    ts = [threading.Thread(target=one) for _ in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for i, c in enumerate(got):
        codes[i] = c


def case_parallel(a):
    import multiprocessing

    body = extender_body(24 * MIB)
    d = Daemon(a.bin)
    try:
        pr = Prober(d.port, every=0.05)
        pr.start()
        time.sleep(0.5)
        codes = multiprocessing.Array("i", 6)
        t0 = time.monotonic()
        p = multiprocessing.Process(target=parallel_posts, args=(d.port, body, 6, codes))
        p.start()
        p.join()
        wall = time.monotonic() - t0
        time.sleep(0.5)
        pr.stop = True
        pr.join()
        note("parallel-extender", "6 x 24 MiB extender bodies at once", "answers %s in %.1f s" %
             (",".join(str(c) for c in sorted(codes[:])), wall))
        report_probes("parallel-extender", pr)
    finally:
        d.stop()
        d.remove()


# ----- 6, 8: the database -------------------------------------------------------------------------------------------

DEVICE = '{"name":"GPU %d","vendor":"ACME","memory_bytes":%d,"memory_bandwidth_bytes_per_second":1e12,' \
         '"peak_flops_per_second":{"bf16":1e14}}'


def put_device(port, ident, n):
    return http("PUT", port, "/v1/devices/" + ident, (DEVICE % (n, (n + 1) << 30)).encode(),
                {"Content-Type": "application/json"}, timeout=10)[0]


def writers(port, prefix, seconds, acked):
    """Two writers creating prefix-T-i and updating prefix-T-0; acked[id] = the last acknowledged value."""
    def loop(t):
        i, t_end = 0, time.monotonic() + seconds
        while time.monotonic() < t_end:
            ident = "%s-%d-%d" % (prefix, t, i)
            try:
                if put_device(port, ident, i) == 201:
                    acked[ident] = i
                if i % 2 == 0 and put_device(port, "%s-%d-0" % (prefix, t), 10000 + i) in (200, 201):
                    acked["%s-%d-0" % (prefix, t)] = 10000 + i
            except OSError:
                pass
            i += 1
    ts = [threading.Thread(target=loop, args=(t,)) for t in range(2)]
    for t in ts:
        t.start()
    return ts


def lost_writes(db, acked):
    c = sqlite3.connect(db)
    ok = c.execute("PRAGMA integrity_check").fetchone()[0]
    lost = 0
    for ident, n in acked.items():
        row = c.execute("SELECT memory_bytes FROM devices WHERE id = ?", (ident,)).fetchone()
        if row is None or row[0] < (n + 1) << 30:
            lost += 1
    c.close()
    return ok, lost


def case_wal(a):
    # a deleted -wal, then SIGKILL
    d = Daemon(a.bin)
    acked = {}
    ts = writers(d.port, "w", 3, acked)
    time.sleep(1.2)
    os.unlink(d.db + "-wal")
    health = http("GET", d.port, "/v1/health")[2]
    for t in ts:
        t.join()
    d.stop(signal.SIGKILL)
    ok, lost = lost_writes(d.db, acked)
    note("wal", "-wal deleted, then SIGKILL: health after the delete",
         json.loads(health)["status"], "degraded", json.loads(health)["status"] == "degraded")
    note("wal", "acknowledged writes lost (of %d)" % len(acked), str(lost), "0", lost == 0)
    note("wal", "integrity_check after", ok, "ok", ok == "ok")
    d.remove()
    # the database file replaced by another database, then SIGKILL and a restart
    d = Daemon(a.bin)
    other = Daemon(a.bin, keep=tempfile.mkdtemp(prefix="memplan-attack-other-"))
    for i in range(40):
        put_device(other.port, "other-%d" % i, i)
    other.stop()
    acked = {}
    for t in writers(d.port, "r", 1, acked):
        t.join()
    os.rename(other.db, d.db)
    refused = put_device(d.port, "after", 1)
    d.stop(signal.SIGKILL)
    d.start()
    models = http("GET", d.port, "/v1/models")[0]
    health = json.loads(http("GET", d.port, "/v1/health")[2])
    d.stop()
    c = sqlite3.connect(d.db)
    ok = c.execute("PRAGMA integrity_check").fetchone()[0]
    c.close()
    note("wal", "file replaced: a write while running", str(refused), "503", refused == 503)
    note("wal", "after SIGKILL and restart: integrity_check", ok.split("\n")[0][:90] +
         (" (and %d more lines)" % ok.count("\n") if "\n" in ok else ""), "ok", ok == "ok")
    note("wal", "after restart: GET /v1/models", str(models), "200", models == 200)
    note("wal", "after restart: health", "%s, notice: %s" % (health["status"], "yes" if
                                                             health["database"].get("notice") else "no"))
    d.remove()
    other.remove()


# ----- 9-13: HTTP ---------------------------------------------------------------------------------------------------

def raw(port, data, wait=3.0):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(wait)
    try:
        s.sendall(data)
        got = b""
        while True:
            c = s.recv(1 << 16)
            if not c:
                break
            got += c
    except OSError:
        got = locals().get("got", b"")
    s.close()
    return got


def case_http(a):
    d = Daemon(a.bin)
    p = d.port
    J = {"Content-Type": "application/json"}
    try:
        # 9: conditionals
        put_device(p, "cond", 1)
        tag = [l.split(":", 1)[1].strip() for l in http("GET", p, "/v1/devices/cond")[1].split("\r\n")
               if l.lower().startswith("etag:")][0]
        put_device(p, "cond", 2)  # the tag is stale now
        body = (DEVICE % (3, 4 << 30)).encode()
        got = [http("PUT", p, "/v1/devices/cond", body, dict(J, **{"If-Match": tag}))[0],
               http("DELETE", p, "/v1/devices/cond", None, {"If-Match": tag})[0],
               http("PUT", p, "/v1/devices/cond-new", body, dict(J, **{"If-Match": tag}))[0],
               http("PUT", p, "/v1/devices/cond", body, dict(J, **{"If-None-Match": "*"}))[0]]
        note("http", "stale If-Match PUT, DELETE; If-Match missing; INM * existing", ",".join(map(str, got)),
             "412,412,412,412", got == [412] * 4)
        # 10: DNS rebinding (no token)
        s1 = raw(p, post_head("/v1/devices/rebound", len(body)).replace(b"Host: localhost",
                                                                       b"Host: attacker.example").replace(
            b"POST", b"PUT", 1) + body)
        s2 = raw(p, b"DELETE /v1/devices/h100-sxm5-80gb HTTP/1.1\r\nHost: attacker.example\r\nConnection: close\r\n\r\n")
        got = [s1[9:12].decode(), s2[9:12].decode()]
        note("http", "Host: attacker.example PUT, DELETE of a preset", ",".join(got), "403,403", got == ["403", "403"])
        # 11, 12: framing on the daemon's own port
        cases = {
            "two Content-Length": b"POST /v1/roofline HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                                  b"Content-Length: 2\r\nContent-Length: 40\r\n\r\n{}GET /v1/health HTTP/1.1\r\nHost: "
                                  b"localhost\r\n\r\n",
            "Transfer-Encoding : chunked": b"POST /v1/roofline HTTP/1.1\r\nHost: localhost\r\nContent-Type: "
                                           b"application/json\r\nContent-Length: 5\r\nTransfer-Encoding : chunked\r\n"
                                           b"\r\n0\r\n\r\n",
            "folded Transfer-Encoding": b"POST /v1/roofline HTTP/1.1\r\nHost: localhost\r\nContent-Type: "
                                        b"application/json\r\nContent-Length: 5\r\nTransfer-Encoding:\r\n chunked\r\n"
                                        b"\r\n0\r\n\r\n",
            "Bearer <token>\\0junk": b"GET /v1/health HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer x\x00junk"
                                     b"\r\nConnection: close\r\n\r\n",
            "two Host": b"GET /v1/health HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n",
            "bare CR": b"GET /v1/health HTTP/1.1\r\nHost: localhost\rX: y\r\nConnection: close\r\n\r\n",
        }
        refused = 0
        for name, req in cases.items():
            got = raw(p, req)
            ok = got.startswith(b"HTTP/1.1 400") and b"application/problem+json" in got and got.count(b"HTTP/1.") == 1
            refused += ok
            note("http", "framing: " + name, got.split(b"\r\n", 1)[0].decode("latin-1") or "(nothing)")
        note("http", "framing cases refused in problem+json, one answer", "%d of %d" % (refused, len(cases)),
             "all", refused == len(cases))
        only_mhd = {"malformed request line": b"GET /v1/health HTTP/1.1 x\r\nHost: localhost\r\n\r\n",
                    "header line without a colon": b"GET /v1/health HTTP/1.1\r\nHost: localhost\r\nNoColon\r\n\r\n",
                    "request line too long": b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\nHost: localhost\r\n\r\n"}
        html = 0
        for name, req in only_mhd.items():
            html += b"<html>" in raw(p, req)
        note("http", "cases only libmicrohttpd sees, still its HTML (README)", "%d of %d" % (html, len(only_mhd)))
        # 13: the smaller ones
        got = raw(p, b"GET /v1/health?" + b"&".join(b"a%d=1" % i for i in range(300)) +
                  b" HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        note("http", "300 query arguments", got.split(b"\r\n", 1)[0].decode("latin-1") or "(no answer)",
             "414 problem+json", got.startswith(b"HTTP/1.1 414") and b"problem+json" in got)
        got = http("GET", p, "/v1/health?pretty=")[0]
        note("http", "?pretty= (empty)", str(got), "422", got == 422)
    finally:
        d.stop()
        log = open(os.path.join(d.dir, "daemon.log"), "rb").read()
        d.remove()
    tok = tempfile.NamedTemporaryFile("w", delete=False)
    tok.write("sekrit\n")
    tok.close()
    d = Daemon(a.bin, "--token-file", tok.name, "--log-level", "info")
    try:
        got = raw(d.port, b"PUT /v1/devices/x HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                          b"Content-Length: 100\r\nExpect: 100-continue\r\n\r\n", wait=2)
        first = got.split(b"\r\n", 1)[0].decode("latin-1")
        note("http", "write without the token, Expect: 100-continue: first answer", first, "HTTP/1.1 401 ...",
             first.startswith("HTTP/1.1 401"))
        http("GET", d.port, "/v1/devices/%FF%FEx")
    finally:
        d.stop()
        log = open(os.path.join(d.dir, "daemon.log"), "rb").read()
        d.remove()
        os.unlink(tok.name)
    try:
        log.decode("utf-8")
        valid = True
    except UnicodeDecodeError:
        valid = False
    note("http", "access log with a target of invalid UTF-8: valid UTF-8", str(valid), "True", valid)
    conf = open(os.path.join(ROOT, "deploy", "nginx", "memplan.conf")).read()
    k8s = "location /v1/k8s/" in conf and "client_max_body_size 128m" in conf
    note("http", "deploy/nginx: /v1/k8s/ body limit sized for the extender", str(k8s), "True", k8s)


# ----- 13: the largest fit's memory ---------------------------------------------------------------------------------

def case_fit_memory(a):
    body = fit_body()
    for path, limit in (("/v1/fit", None), ("/v1/fit?format=text", 64), ("/v1/slurm/fit-table", 64)):
        d = Daemon(a.bin)
        try:
            time.sleep(0.3)
            idle = d.reset_peak()
            c0 = d.cpu()
            st, _, got = http("POST", d.port, path, body, {"Content-Type": "application/json"}, timeout=120)
            peak = (d.kib("VmHWM") - idle) / 1024
            note("fit-memory", "largest fit %s: answer" % path, "%d, %d bytes" % (st, len(got)))
            note("fit-memory", "largest fit %s: peak RSS, CPU" % path, "%+.1f MiB, %.2f s" % (peak, d.cpu() - c0),
                 "< +%d MiB" % limit if limit else None, peak < limit if limit else None)
        finally:
            d.stop()
            d.remove()


CASES = {"big-tiny": case_big_tiny, "trickle-extender": case_trickle, "slow-body": case_slow_body,
         "busy-keepalive": case_busy, "slow-reader": case_slow_reader, "parallel-extender": case_parallel,
         "wal": case_wal, "http": case_http, "fit-memory": case_fit_memory}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "memplan"))
    ap.add_argument("--check", action="store_true", help="exit 1 unless every target held")
    ap.add_argument("--seconds", type=int, default=30, help="length of the slow and busy attacks (default 30)")
    ap.add_argument("--trickle-mib", type=int, default=32)
    ap.add_argument("--wrk-threads", type=int, default=1, help="wrk's threads in busy-keepalive (default 1: on a "
                    "small machine a second one takes the CPU the daemon and the probes need)")
    ap.add_argument("cases", nargs="*", default=list(CASES))
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    print("bench/attack/attack.py: %s, %s, %d CPUs" % (a.bin, time.strftime("%Y-%m-%d"), os.cpu_count()))
    for c in a.cases:
        print("== " + c, flush=True)
        try:
            CASES[c](a)
        except Exception as e:  # a case that cannot run says so and counts as failed
            note(c, "could not run", repr(e)[:200], "runs", False)
    failed = [r for r in results if r[4] is False]
    print("%d figures, %d with a target, %d missed" % (len(results), sum(r[4] is not None for r in results),
                                                        len(failed)))
    sys.exit(1 if a.check and failed else 0)


if __name__ == "__main__":
    main()
