"""test_schemathesis.py: Schemathesis against a live daemon over every operation in openapi.yaml, with every
check it has (--checks all: server errors, status codes, content types, response schemas and headers, positive
data accepted and negative data refused, missing or wrong authentication, methods, use after delete) in all four
phases (examples, coverage, fuzzing, and the stateful phase that follows the spec's links: PUT then GET, PATCH,
DELETE; a calibration's POST then its GET and DELETE). The daemon runs with a write token, which Schemathesis
sends (tests/contract/schemathesis.toml says how, and which answers are documented exceptions).

Size: MEMPLAN_ST_EXAMPLES per operation (default 25: about a minute on two cores, the size `make test` runs);
`make fuzz` runs it longer (MEMPLAN_ST_EXAMPLES=ST_FUZZ_EXAMPLES, default 300). The seed is fixed
(MEMPLAN_ST_SEED, default 8) so a failure can be replayed. The daemon must also survive the run and stop
cleanly."""
import os
import secrets
import subprocess
import sys

from daemon import Daemon
import spec as specmod

ST = os.path.join(os.path.dirname(sys.executable), "st")
CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schemathesis.toml")


def st_run(d, token, report):
    cmd = [ST, "--config-file", CONFIG, "run", specmod.SPEC_PATH, "--url", d.url, "--checks", "all",
           "--phases", "examples,coverage,fuzzing,stateful",
           "--max-examples", os.environ.get("MEMPLAN_ST_EXAMPLES", "25"),
           "--seed", os.environ.get("MEMPLAN_ST_SEED", "8"), "--workers", "1", "--no-shrink",
           "--request-timeout", "20", "--report", "junit", "--report-junit-path", report]
    env = dict(os.environ, NO_COLOR="1", SCHEMATHESIS_TELEMETRY="false", MEMPLAN_ST_TOKEN=token)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=3000, cwd=d.dir, env=env)
    print(r.stdout[-6000:])
    return r


def test_schemathesis_run():
    token = secrets.token_hex(16)
    d = Daemon(env={"MEMPLAN_TOKEN": token})
    r = st_run(d, token, os.path.join(d.dir, "st-junit.xml"))
    alive = d.proc.poll() is None
    try:
        rc = d.stop()
    except subprocess.TimeoutExpired:
        raise AssertionError("the daemon did not stop within 30 s of SIGTERM; its log ended:\n" +
                             "".join(d.lines)[-4000:])
    assert alive, "the daemon died during the run:\n" + "".join(d.lines)[-4000:]
    assert rc == 0
    assert r.returncode == 0, "schemathesis failed:\n" + r.stdout[-12000:] + r.stderr[-2000:]
    # every operation was exercised, and each phase ran
    n = len(specmod.Spec().operations())
    assert "Selected: %d/%d" % (n, n) in r.stdout and "Tested: %d" % n in r.stdout, r.stdout[-3000:]
    for phase in ("Examples", "Coverage", "Fuzzing", "Stateful"):
        assert "✅ " + phase in r.stdout, "phase %s did not pass:\n%s" % (phase, r.stdout[-3000:])
