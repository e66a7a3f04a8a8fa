"""test_readme.py: every shell example of README.md, from "Examples" to "Command line", runs as printed against a
daemon seeded like `make run`'s, from a folder that holds only what a clone has (build/ and tests/ of this
checkout) and the daemon's database at var/memplan.db, as `make run` keeps it. The one change is the port (the
daemon listens on a free one, not 8080). Where the README asks the reader to put in a value an earlier answer
gave (an ETag, a calibration job's id, the measured profile's id), the test does that, as a reader would.

Checked: each command exits 0; each JSON answer parses and is no problem document unless the README shows one
(the batch_size 0 error, GPU calibration on a machine without one); the status codes the README's comments give
(304, 204, 202/409); and the figures its text states for the examples (parameter and byte counts, the ridge,
Little's law)."""
import json
import os
import re
import shlex
import subprocess
import tempfile
import time

import pytest

from daemon import BIN, Daemon

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = os.path.join(ROOT, "README.md")


def examples():
    """(heading, [command, ...]) for every ```sh block between '## Examples' and '## Command line'; a command is
    one or more lines, up to the line where its quotes balance and no backslash continues it."""
    text = open(README, encoding="utf-8").read()
    start, end = text.index("\n## Examples"), text.index("\n## Command line")
    out = []
    heading = ""
    in_block = False
    pending = ""
    for line in text[start:end].splitlines():
        if line.startswith("#") and not in_block:
            heading = line.lstrip("# ")
        if line.strip() == "```sh":
            in_block, cmds, pending = True, [], ""
            continue
        if in_block and line.strip() == "```":
            assert not pending, "unterminated command in README: %r" % pending
            out.append((heading, cmds))
            in_block = False
            continue
        if not in_block:
            continue
        if not pending and line.lstrip().startswith("#"):
            continue  # a comment line: what the answer looks like, or what to do
        pending += line + "\n"
        if pending.rstrip().endswith("\\"):
            continue
        try:
            shlex.split(pending, comments=True)
        except ValueError:
            continue  # a quote is still open: the command goes on
        cmds.append(pending.rstrip("\n"))
        pending = ""
    return out


def comment_of(cmd):
    """The trailing '# ...' of a command's last line (outside quotes), or ''."""
    last, quote = cmd.splitlines()[-1], None
    for i, c in enumerate(last):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and i > 0 and last[i - 1].isspace():
            return last[i + 1:].strip()
    return ""


@pytest.fixture(scope="module")
def clone_like():
    """A folder with build/ and tests/ of this checkout, var/memplan.db served by a daemon."""
    work = tempfile.mkdtemp(prefix="memplan-readme-")
    # build/ is the folder of the memplan under test (build/asan under make asan), tests/ the checkout's
    os.symlink(os.path.dirname(BIN), os.path.join(work, "build"))
    os.symlink(os.path.join(ROOT, "tests"), os.path.join(work, "tests"))
    os.mkdir(os.path.join(work, "var"))
    d = Daemon(db=os.path.join(work, "var", "memplan.db"))
    yield work, d
    assert d.stop() == 0


def run(work, d, cmd, prefix):
    script = prefix + cmd.replace("http://127.0.0.1:8080", d.url)
    r = subprocess.run(["bash", "-c", script], cwd=work, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, "README command failed (exit %d):\n%s\n%s" % (r.returncode, cmd, r.stderr)
    return r.stdout


def body_of(out):
    """The JSON body of an answer printed with or without headers (curl -s or -si), or None."""
    text = re.split(r"\r?\n\r?\n", out, maxsplit=1)[-1] if out.startswith("HTTP/") else out
    try:
        return json.loads(text)
    except ValueError:
        return None


def wait_job(d, job_id):
    import urllib.request
    for _ in range(600):
        with urllib.request.urlopen("%s/v1/calibrations/%s" % (d.url, job_id), timeout=10) as r:
            doc = json.loads(r.read())
        if doc["state"] not in ("queued", "running"):
            return doc
        time.sleep(0.5)
    raise AssertionError("calibration %s did not finish" % job_id)


def test_readme_examples_run_as_printed(clone_like):
    work, d = clone_like
    blocks = examples()
    assert len(blocks) >= 15, "found only %d example blocks in README.md" % len(blocks)
    seen = {"etag": None, "job": None}
    ran = 0
    answers = []
    for heading, cmds in blocks:
        prefix = ""  # the block's variable assignments (T='Authorization: ...') hold for its later commands
        for cmd in cmds:
            if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", cmd):
                prefix += cmd + "\n"
                continue
            if '"<etag>"' in cmd:
                assert seen["etag"], "the README asks for an ETag no earlier command printed"
                cmd = cmd.replace('"<etag>"', seen["etag"])
            if "cal-3f9c2a71d04e8b56" in cmd:
                assert seen["job"], "the README asks for a job id no earlier command gave"
                if "/v1/devices/measured-cpu-" not in cmd:
                    cmd = cmd.replace("cal-3f9c2a71d04e8b56", seen["job"])
            if "/v1/devices/measured-cpu-vm" in cmd:
                job = wait_job(d, seen["job"])  # "... later: succeeded"
                assert job["state"] == "succeeded", job
                cmd = cmd.replace("measured-cpu-vm", job["device_id"])
            out = run(work, d, cmd, prefix)
            ran += 1
            m = re.search(r'(?im)^etag:\s*("[^"]+")', out)
            if m:
                seen["etag"] = m.group(1)
            m = re.search(r"(?im)^location:\s*/v1/calibrations/(\S+)", out)
            if m:
                seen["job"] = m.group(1)
            answers.append((cmd, out))
            check(cmd, out, comment_of(cmd))
    assert ran >= 30, "ran only %d README commands" % ran
    figures(answers)


def check(cmd, out, comment):
    code = re.match(r"^(\d{3})\b", comment)
    if code:
        if code.group(1) == "202":
            assert out.strip() in ("202", "409") or body_of(out) is not None, (cmd, out)
        else:
            assert out.strip() == code.group(1), "README says %s, got %r for:\n%s" % (code.group(1), out, cmd)
        return
    if "> " in cmd or "| grep" in cmd or "format=text" in cmd or "/metrics" in cmd:
        return  # a file, a filtered line, a table or the Prometheus text: checked below or by their own tests
    if "db import" in cmd:
        return
    if "--print-args" in cmd:
        # the engine's command line alone, ready to paste (cat > ... <<'EOF' first when it needs an options file)
        assert re.match(r"^(vllm serve |python3 -m sglang\.launch_server |trtllm-serve |cat > )", out), (cmd, out)
        return
    doc = body_of(out)
    assert doc is not None, "README command printed no JSON:\n%s\n%s" % (cmd, out[:500])
    expect_problem = '"batch_size":0' in cmd or cmd.rstrip().endswith("/v1/devices/h100") or '"gpu:0"' in cmd or "/v1/calibrations/" in cmd and "DELETE" in cmd
    if isinstance(doc, dict) and "type" in doc and str(doc.get("type", "")).startswith("urn:memplan:problem:"):
        assert expect_problem, "README command answered a problem:\n%s\n%s" % (cmd, out[:800])


def figures(answers):
    """The numbers the README's text gives for its examples."""
    def find(pred):
        for cmd, out in answers:
            if pred(cmd):
                return body_of(out)
        raise AssertionError("no README command matched")

    plan = find(lambda c: '"sequence_length":4096,"device":"h200-sxm-141gb"' in c and "plan/inference" in c)
    assert plan["model"]["parameters"] == 8030261248
    assert plan["memory"]["weights_bytes"] == 16060522496
    assert plan["memory"]["kv_cache_bytes"] == 536870912 and "fit" in plan
    bad = find(lambda c: '"batch_size":0' in c)
    assert bad["status"] == 422 and bad["type"] == "urn:memplan:problem:invalid-value"
    assert bad["errors"][0]["field"] == "/batch_size"
    roof = find(lambda c: '"label":"gemv"' in c and "/v1/roofline" in c)
    assert round(roof["ridge_flops_per_byte"], 2) == 295.17
    gemv = roof["ops"][0]
    assert round(gemv["arithmetic_intensity_flops_per_byte"], 1) == 1.0 and gemv["bound"] == "memory"
    assert round(100 * gemv["fraction_of_peak"], 2) == 0.34 and roof["ops"][1]["bound"] == "compute"
    little = find(lambda c: "V100 (Jia et al.)" in c)
    assert round(little["littles_law"]["bytes_in_flight"]) == 218833
    assert round(little["littles_law"]["bytes_in_flight_per_sm"]) == 2735
    model = find(lambda c: "/v1/models/my-llama" in c and "PUT" in c)
    assert model["parameters"] == 8030261248  # "stores the exact parameter count"


def test_readme_files(clone_like):
    """What the examples wrote: the SVG chart, the exported fleet (run after the examples above)."""
    work, _ = clone_like
    with open(os.path.join(work, "roofline.svg"), encoding="utf-8") as f:
        svg = f.read()
    assert "<svg" in svg and 'id="ridge"' in svg
    with open(os.path.join(work, "fleet.json"), encoding="utf-8") as f:
        fleet = json.load(f)
    assert fleet  # the export of devices and user models
    assert os.path.exists(os.path.join(work, "other.db"))
