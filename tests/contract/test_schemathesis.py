"""test_schemathesis.py: Schemathesis against a live daemon over every operation in openapi.yaml, with a
fixed seed and example budget (MEMPLAN_ST_EXAMPLES, default 100 per operation): positive and negative
generated requests, checked for no 5xx, documented status codes, content types and response schemas.
The daemon must also survive the run and stop cleanly."""
import os
import subprocess
import sys

from daemon import Daemon
import spec as specmod

ST = os.path.join(os.path.dirname(sys.executable), "st")


def test_schemathesis_run():
    d = Daemon()
    report = os.path.join(d.dir, "st-junit.xml")
    cmd = [ST, "run", specmod.SPEC_PATH, "--url", d.url,
           "--checks", "not_a_server_error,status_code_conformance,content_type_conformance,"
                       "response_schema_conformance,unsupported_method",
           "--max-examples", os.environ.get("MEMPLAN_ST_EXAMPLES", "100"), "--seed", "8",
           "--phases", "examples,coverage,fuzzing", "--workers", "1", "--no-shrink",
           "--request-timeout", "10", "--report", "junit", "--report-junit-path", report]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=d.dir,
                       env=dict(os.environ, NO_COLOR="1", SCHEMATHESIS_TELEMETRY="false"))
    print(r.stdout[-6000:])
    alive = d.proc.poll() is None
    rc = d.stop()
    assert alive, "the daemon died during the run:\n" + "".join(d.lines)[-4000:]
    assert rc == 0
    assert r.returncode == 0, "schemathesis failed:\n" + r.stdout[-12000:] + r.stderr[-2000:]
