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


CHECKS = ["not_a_server_error", "status_code_conformance", "content_type_conformance",
          "response_schema_conformance", "unsupported_method"]
# Calibration jobs on gpu:0 answer 503 by contract where no GPU is usable (CI, this machine): a documented
# server-side status, so those two paths run without the no-5xx check; every other check still applies.
CALIBRATION = "^/v1/calibrations"


def st_run(d, checks, select, report):
    cmd = [ST, "run", specmod.SPEC_PATH, "--url", d.url, "--checks", ",".join(checks),
           "--max-examples", os.environ.get("MEMPLAN_ST_EXAMPLES", "100"), "--seed", "8",
           "--phases", "examples,coverage,fuzzing", "--workers", "1", "--no-shrink",
           "--request-timeout", "10", "--report", "junit", "--report-junit-path", report] + select
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=d.dir,
                       env=dict(os.environ, NO_COLOR="1", SCHEMATHESIS_TELEMETRY="false"))
    print(r.stdout[-6000:])
    return r


def test_schemathesis_run():
    d = Daemon()
    runs = [st_run(d, CHECKS, ["--exclude-path-regex", CALIBRATION], os.path.join(d.dir, "st-junit.xml")),
            st_run(d, [c for c in CHECKS if c != "not_a_server_error"], ["--include-path-regex", CALIBRATION],
                   os.path.join(d.dir, "st-junit-calibrations.xml"))]
    alive = d.proc.poll() is None
    rc = d.stop()
    assert alive, "the daemon died during the run:\n" + "".join(d.lines)[-4000:]
    assert rc == 0
    for r in runs:
        assert r.returncode == 0, "schemathesis failed:\n" + r.stdout[-12000:] + r.stderr[-2000:]
