"""test_lifecycle.py: the daemon as a process. SIGTERM finishes the request in flight and closes the
database; settings come from --config, MEMPLAN_* variables and flags (flags win); the access log is JSON
lines; GET /metrics passes `promtool check metrics`; and a start/stop under valgrind is clean."""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request

import pytest

from daemon import BIN, Daemon

PLAN = json.dumps({"model": "llama-3-8b", "weight_dtype": "bf16", "kv_cache_dtype": "bf16",
                   "batch_size": 1, "sequence_length": 4096}).encode()


def get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.status, r.headers.get("Content-Type"), r.read().decode()


def test_sigterm_finishes_the_request_in_flight():
    d = Daemon()
    s = socket.create_connection(("127.0.0.1", d.port), timeout=10)
    head = ("POST /v1/plan/inference HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            "Content-Length: %d\r\n\r\n" % len(PLAN)).encode()
    s.sendall(head + PLAN[:10])
    time.sleep(0.3)  # the daemon has the headers: the request is in flight
    d.proc.send_signal(15)
    time.sleep(0.3)
    assert d.proc.poll() is None, "exited with a request in flight"
    # new connections are refused while it drains
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", d.port), timeout=2).close()
    s.sendall(PLAN[10:])
    reply = b""
    while b"\r\n\r\n" not in reply or not reply.rstrip().endswith(b"}"):
        chunk = s.recv(65536)
        if not chunk:
            break
        reply += chunk
    s.close()
    assert reply.startswith(b"HTTP/1.1 200"), reply[:200]
    assert b'"total_bytes"' in reply
    assert d.proc.wait(15) == 0
    time.sleep(0.05)
    msgs = [x.get("msg", "") for x in d.json_lines()]
    assert any("shutting down" in m for m in msgs)
    assert msgs[-1] == "stopped; database closed", msgs
    access = [x for x in d.json_lines() if x.get("msg") == "access"]
    assert access and access[-1]["status"] == 200 and access[-1]["route"] == "/v1/plan/inference"


def _sigterm_takers(pid):
    """The daemon's threads that do not block SIGTERM, other threads first, the main thread last."""
    out = []
    for tid in sorted(int(t) for t in os.listdir("/proc/%d/task" % pid)):
        with open("/proc/%d/task/%d/status" % (pid, tid)) as f:
            blocked = int(next(x for x in f if x.startswith("SigBlk:")).split()[1], 16)
        if not blocked & (1 << (15 - 1)):
            out.append(tid)
    return sorted(out, key=lambda t: t == pid)


def test_sigterm_on_any_thread_stops_gracefully():
    """The kernel may hand a process-directed SIGTERM to any thread that does not block it, including the
    threads a library starts before main() (OpenBLAS's pool). Sent to such a thread, it must still be a graceful
    stop (exit 0, database closed), never the default action that kills the process."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    SYS_tgkill = 234  # x86-64
    d = Daemon()
    get(d.url + "/v1/health")
    takers = _sigterm_takers(d.proc.pid)
    assert takers, "no thread takes SIGTERM: the daemon could not be stopped"
    assert libc.syscall(SYS_tgkill, d.proc.pid, takers[0], 15) == 0
    assert d.proc.wait(15) == 0, "thread %d (of %s) took SIGTERM: exit %s" % (takers[0], takers, d.proc.returncode)
    time.sleep(0.05)
    msgs = [x.get("msg", "") for x in d.json_lines()]
    assert msgs[-1] == "stopped; database closed", msgs


def test_beyond_1024_connections():
    """--max-connections holds past select()'s FD_SETSIZE (1024): with 1,200 keep-alive connections open, the
    first and the last one opened are both answered. (The daemon polls with epoll, and raises its soft open-file
    limit to what --max-connections needs.)"""
    import resource
    need = 1300
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < need:
        pytest.skip("the hard open-file limit (%d) is below the %d descriptors this test needs" % (hard, need))
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
    d = Daemon(args=["--max-connections", "2000"])
    socks = []
    try:
        for _ in range(1200):
            socks.append(socket.create_connection(("127.0.0.1", d.port), timeout=10))
        for s in (socks[0], socks[-1]):
            s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: localhost\r\n\r\n")
            head = b""
            while len(head) < 12:
                chunk = s.recv(12 - len(head))
                assert chunk, "connection closed without a reply"
                head += chunk
            assert head == b"HTTP/1.1 200", head
    except BaseException:
        d.kill()
        raise
    finally:
        for s in socks:
            s.close()
    assert d.stop() == 0
    assert not any("FD_SETSIZE" in line for line in d.lines), d.lines[-3:]


def test_settings_file_env_and_flags():
    tmp = tempfile.mkdtemp(prefix="memplan-cfg-")
    cfg = os.path.join(tmp, "memplan.conf")
    with open(cfg, "w") as f:
        f.write("# test\nmax-body-bytes = 2048\nlog-level = debug\nthreads = 1\n")
    # the file says 2048 bytes, the environment 4096: a 3000-byte body is read; the file's threads = 1 loses to
    # the --threads 2 flag that Daemon passes. POST /v1/roofline takes the ordinary limit (the routes a model file's
    # header may be posted to take --model-max-body-bytes)
    d = Daemon(args=["--config", cfg, "--log-level", "info"], env={"MEMPLAN_MAX_BODY_BYTES": "4096"})
    body = PLAN[:-1] + b',"device":"' + b"x" * 2900 + b'"}'
    req = urllib.request.Request(d.url + "/v1/roofline", data=body,
                                 headers={"Content-Type": "application/json"})
    try:
        urllib.request.urlopen(req, timeout=10)
        status = 200
    except urllib.error.HTTPError as e:
        status = e.code
    assert status == 422, status  # read in full (not 413) and refused for the too-long device id
    body = PLAN[:-1] + b',"device":"' + b"x" * 5000 + b'"}'
    req = urllib.request.Request(d.url + "/v1/roofline", data=body,
                                 headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=10)
    assert e.value.code == 413
    assert d.stop() == 0
    assert "2 threads" in "".join(d.lines)
    # every line the daemon wrote is a JSON object with ts and level
    for line in d.lines:
        x = json.loads(line)
        assert "ts" in x and x["level"] in ("debug", "info", "warn", "error")
    shutil.rmtree(tmp)


def test_bad_settings_exit_2():
    r = subprocess.run([BIN, "serve", "--threads", "0"], capture_output=True, text=True)
    assert r.returncode == 2 and "threads must be an integer" in r.stderr
    r = subprocess.run([BIN, "serve"], capture_output=True, text=True, env=dict(os.environ, MEMPLAN_LOG_LEVEL="x"))
    assert r.returncode == 2 and "MEMPLAN_LOG_LEVEL" in r.stderr


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (Debian's prometheus) is not installed")
def test_metrics_pass_promtool(daemon):
    get(daemon.url + "/v1/health")
    get(daemon.url + "/v1/devices?limit=2")
    try:
        urllib.request.urlopen(daemon.url + "/v1/nope", timeout=10)
    except urllib.error.HTTPError:
        pass
    # a request is counted in libmicrohttpd's completion callback, which can run just after the client has its
    # response (slower still under sanitizers): poll for at most 5 s until the 404 is counted
    want = 'memplan_http_requests_total{route="unmatched",method="GET",code="404"} 1'
    for _ in range(500):
        status, ctype, text = get(daemon.url + "/metrics")
        if want in text:
            break
        time.sleep(0.01)
    assert status == 200 and ctype.startswith("text/plain; version=0.0.4")
    assert want in text
    r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.skipif(shutil.which("valgrind") is None or os.environ.get("MEMPLAN_SANITIZED"),
                    reason="valgrind is not installed, or the binary is built with sanitizers")
def test_valgrind_clean_start_stop():
    d = Daemon(wrapper=["valgrind", "--quiet", "--error-exitcode=99", "--leak-check=full",
                        "--show-leak-kinds=definite,indirect", "--errors-for-leak-kinds=definite,indirect"],
               start_timeout=120)
    get(d.url + "/v1/health")
    get(d.url + "/metrics")
    req = urllib.request.Request(d.url + "/v1/plan/inference", data=PLAN,
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=30).read()
    rc = d.stop(timeout=120)
    assert rc == 0, "valgrind reported errors (exit %d):\n%s" % (rc, "".join(d.lines)[-4000:])


def test_shipped_config_file_loads():
    """deploy/memplan.conf (the systemd example's settings) is accepted; flags override its listen and db."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    d = Daemon(args=["--config", os.path.join(root, "deploy", "memplan.conf"), "--listen", "127.0.0.1:0"])
    assert get(d.url + "/v1/health")[0] == 200
    assert d.stop() == 0


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="the sqlite3 command line is not installed")
def test_online_backup_as_the_readme_says(daemon):
    """README, Operations: `sqlite3 DB ".backup 'FILE'"` while the daemon runs gives a sound copy."""
    out = os.path.join(daemon.dir, "backup.db")
    subprocess.run(["sqlite3", daemon.db, ".backup '%s'" % out], check=True)
    r = subprocess.run(["sqlite3", out, "PRAGMA integrity_check"], check=True, capture_output=True, text=True)
    assert r.stdout.strip() == "ok"
    r = subprocess.run(["sqlite3", out, "SELECT count(*) FROM devices"], capture_output=True, text=True)
    assert r.returncode == 0 and int(r.stdout) > 0, r.stderr
