"""test_responses.py: every response the C HTTP tests received (logged by tests/http_util.c to the file
named by MEMPLAN_HTTP_LOG) conforms to openapi.yaml: the status is documented for the operation, the
content type is one it lists, and the body validates against its schema."""
import json
import os

import pytest

import spec as specmod

LOG = os.environ.get("MEMPLAN_HTTP_LOG", "")


@pytest.mark.skipif(not LOG, reason="MEMPLAN_HTTP_LOG is not set (make test sets it)")
def test_logged_responses_conform():
    s = specmod.Spec()
    with open(LOG, encoding="utf-8") as f:
        exchanges = [json.loads(line) for line in f if line.strip()]
    assert len(exchanges) >= 20, "only %d responses were logged" % len(exchanges)
    problems = []
    for x in exchanges:
        problems += s.check_response(x["method"], x["path"], int(x["status"]), x["content_type"], x["body"])
        if int(x["status"]) == 405 and not x.get("allow"):
            problems.append("%s %s: 405 without Allow" % (x["method"], x["path"]))
    statuses = sorted({int(x["status"]) for x in exchanges})
    print("%d responses validated; statuses seen: %s" % (len(exchanges), statuses))
    assert not problems, "\n".join(problems[:50])
    # the failure classes the brief asks for were all exercised
    for code in (200, 400, 404, 405, 413, 414, 415, 422):
        assert code in statuses, "no logged response with status %d" % code


def test_validator_catches_a_bad_body():
    """The check can fail: a health document without 'status', an undocumented status, a problem type the spec
    does not list; and a well-formed problem passes."""
    s = specmod.Spec()
    assert s.check_response("GET", "/v1/health", 200, "application/json", '{"version":"x"}')
    assert s.check_response("GET", "/v1/health", 418, "application/json", "{}")
    assert s.check_response("POST", "/v1/plan/inference", 200, "text/html", "x")
    assert s.check_response("GET", "/v1/nope", 404, "application/problem+json",
                            '{"type":"t","title":"t","status":404,"detail":"d","errors":[]}')
    assert not s.check_response("GET", "/v1/nope", 404, "application/problem+json",
                                '{"type":"urn:memplan:problem:not-found","title":"Not Found","status":404,'
                                '"detail":"d","errors":[]}')
