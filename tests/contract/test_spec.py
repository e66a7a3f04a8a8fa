"""test_spec.py: the contract itself. openapi.yaml is a valid OpenAPI 3.1 document (openapi-spec-validator),
every operation has a response schema and an example where it takes a body, and the daemon's route table
(`memplan routes`) and the spec's paths are the same set of (method, path)."""
import os
import subprocess

from openapi_spec_validator import validate
from openapi_spec_validator.readers import read_from_filename

import spec as specmod
from daemon import BIN


def test_openapi_is_valid_3_1():
    doc, _ = read_from_filename(specmod.SPEC_PATH)
    assert str(doc["openapi"]).startswith("3.1")
    validate(doc)  # raises on the first violation


def test_routes_match_spec_paths():
    out = subprocess.run([BIN, "routes"], check=True, capture_output=True, text=True).stdout
    routes = set()
    for line in out.splitlines():
        method, pattern = line.split(" ", 1)
        routes.add((method, pattern))
    ops = specmod.Spec().operations()
    assert routes, "memplan routes printed nothing"
    missing_in_spec = sorted(routes - ops)
    missing_in_daemon = sorted(ops - routes)
    assert not missing_in_spec, "routed but not in openapi.yaml: %s" % missing_in_spec
    assert not missing_in_daemon, "in openapi.yaml but not routed: %s" % missing_in_daemon


def test_every_operation_documents_success_and_examples():
    s = specmod.Spec()
    problems = []
    for method, template in sorted(s.operations()):
        op = s.doc["paths"][template][method.lower()]
        if not op.get("operationId"):
            problems.append("%s %s has no operationId" % (method, template))
        codes = [c for c in op.get("responses", {}) if str(c).startswith("2")]
        if not codes:
            problems.append("%s %s documents no 2xx response" % (method, template))
        body = op.get("requestBody")
        if body:
            for media, m in s.deref(body).get("content", {}).items():
                if "example" not in m and "examples" not in m:
                    problems.append("%s %s request %s has no example" % (method, template, media))
            for c in ("400", "413", "415", "422"):
                if c not in op.get("responses", {}):
                    problems.append("%s %s takes a body but does not document %s" % (method, template, c))
    assert not problems, "\n".join(problems)


def test_spec_served_is_the_file(daemon):
    import urllib.request
    with urllib.request.urlopen(daemon.url + "/openapi.yaml") as r:
        served = r.read().decode()
    with open(specmod.SPEC_PATH, encoding="utf-8") as f:
        assert served == f.read()
