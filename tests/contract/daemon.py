"""daemon.py: starts build/memplan serve on 127.0.0.1 port 0 with a temporary database for the contract
tests, reads its JSON-lines log (stderr) on a thread, and stops it with SIGTERM. Used by conftest.py and
the standalone scripts; it knows nothing about the API itself."""
import json
import os
import re
import signal
import subprocess
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("MEMPLAN_BIN", os.path.join(ROOT, "build", "memplan"))


class Daemon:
    def __init__(self, args=(), env=None, wrapper=(), start_timeout=30.0, db=None):
        self.dir = tempfile.mkdtemp(prefix="memplan-contract-")
        self.db = db or os.path.join(self.dir, "memplan.db")
        cmd = list(wrapper) + [BIN, "serve", "--listen", "127.0.0.1:0", "--db", self.db, "--threads", "2"]
        cmd += list(args)
        full_env = dict(os.environ)
        full_env.update(env or {})
        self.lines = []
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, env=full_env, text=True)
        self._ready = threading.Event()
        self.port = None
        threading.Thread(target=self._read, daemon=True).start()
        if not self._ready.wait(start_timeout) or self.port is None:
            self.kill()
            raise RuntimeError("memplan did not start:\n" + "".join(self.lines))

    def _read(self):
        for line in self.proc.stderr:
            self.lines.append(line)
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
            if m and self.port is None:
                self.port = int(m.group(1))
                self._ready.set()
        self._ready.set()

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def json_lines(self):
        """The log lines that are JSON objects (every line the daemon itself writes)."""
        out = []
        for line in self.lines:
            line = line.strip()
            if line.startswith("{"):
                out.append(json.loads(line))
        return out

    def stop(self, timeout=30.0):
        """SIGTERM, then wait; returns the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise
        time.sleep(0.05)  # let the reader thread take the last lines
        return rc

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
