"""test_spec.py: the contract itself. openapi.yaml is a valid OpenAPI 3.1 document (openapi-spec-validator),
it parses to what it means (no key that a broken description made: every key of a schema is a JSON Schema or
OpenAPI keyword, and no member is null outside examples), every operation has a response schema and an example
where it takes a body, and the daemon's route table (`memplan routes`) and the spec's paths are the same set of
(method, path)."""
import os
import subprocess

import yaml

from openapi_spec_validator import validate
from openapi_spec_validator.readers import read_from_filename

import spec as specmod
from daemon import BIN


def test_openapi_is_valid_3_1():
    doc, _ = read_from_filename(specmod.SPEC_PATH)
    assert str(doc["openapi"]).startswith("3.1")
    validate(doc)  # raises on the first violation


# The keywords of a Schema Object in OpenAPI 3.1: JSON Schema 2020-12 (core, applicator, unevaluated, validation,
# meta-data, format, content) and OpenAPI's own (discriminator, xml, externalDocs, example); x- extensions.
SCHEMA_KEYWORDS = {
    "$schema", "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary", "$comment", "$defs",
    "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "prefixItems", "items",
    "contains", "properties", "patternProperties", "additionalProperties", "propertyNames",
    "unevaluatedItems", "unevaluatedProperties",
    "type", "const", "enum", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
    "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxContains", "minContains",
    "maxProperties", "minProperties", "required", "dependentRequired",
    "format", "contentEncoding", "contentMediaType", "contentSchema",
    "title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples",
    "discriminator", "xml", "externalDocs", "example",
}
SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "dependentSchemas")
SCHEMA_ONE = ("additionalProperties", "items", "not", "if", "then", "else", "contains", "propertyNames",
              "unevaluatedItems", "unevaluatedProperties", "contentSchema")
SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
# values that are data, not structure: null is a fine example, default or enum member there
DATA_KEYS = ("example", "examples", "default", "const", "enum", "value")


def schema_problems(schema, where):
    """Keys of a Schema Object (and those below it) that are no keyword, e.g. the 'measured on an H200).' that an
    unquoted 'description: ... (default 552402944, measured on an H200).' turns into."""
    out = []
    if isinstance(schema, bool):
        return out
    if not isinstance(schema, dict):
        return ["%s: a schema must be an object or a boolean, got %r" % (where, schema)]
    for key, value in schema.items():
        if not isinstance(key, str) or (key not in SCHEMA_KEYWORDS and not key.startswith("x-")):
            out.append("%s: %r is not a schema keyword (value %r): a description with an unquoted ': ' or a "
                       "misplaced key?" % (where, key, value))
        elif key in SCHEMA_MAPS and isinstance(value, dict):
            for name, sub in value.items():
                out += schema_problems(sub, "%s/%s/%s" % (where, key, name))
        elif key in SCHEMA_ONE and isinstance(value, (dict, bool)):
            out += schema_problems(value, "%s/%s" % (where, key))
        elif key in SCHEMA_LISTS and isinstance(value, list):
            for i, sub in enumerate(value):
                out += schema_problems(sub, "%s/%s/%d" % (where, key, i))
        elif key in ("description", "title", "pattern") and not isinstance(value, str):
            out.append("%s/%s: must be a string, got %r" % (where, key, value))
    return out


def document_problems(doc):
    """Every schema in the document checked by schema_problems; and no null member outside data (examples,
    defaults, enums), where YAML's 'key: value.: null' of a broken flow mapping shows up first."""
    out = []

    def walk(node, where):
        if isinstance(node, dict):
            for key, value in node.items():
                here = "%s/%s" % (where, key)
                if value is None:
                    out.append("%s: null member %r (a broken description?)" % (where, key))
                if key in DATA_KEYS:
                    continue
                if key == "schema" or (where == "/components/schemas"):
                    out.extend(schema_problems(value, here))
                    continue
                walk(value, here)
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, "%s/%d" % (where, i))

    walk(doc, "")
    return out


def test_spec_parses_to_what_it_means():
    problems = document_problems(specmod.load())
    assert not problems, "\n".join(problems)


def test_the_junk_key_check_can_fail():
    """The five descriptions issue 13 found broken, as they were: each one is caught."""
    broken = """
paths:
  /openapi.yaml:
    get:
      responses:
        '200':
          content:
            application/yaml:
              schema: {type: object, description: This OpenAPI 3.1 document, as YAML.: null}
components:
  schemas:
    InferenceRequest:
      properties:
        cuda_context_bytes: {type: integer, minimum: 0, description: Overrides the CUDA context overhead (default 552402944,
          measured on an H200).: null}
        logits_positions: {type: integer, minimum: 1, description: Kept logits per sequence (default 1, the last position).: null}
    InlineDeviceProfile:
      properties:
        memory_latency_cycles: {type: number, description: With boost_clock_hz, instead of memory_latency_seconds.: null}
    RooflineResult:
      properties:
        time_seconds: {type: number, description: The floor max(bytes / bandwidth, flops / peak) over every memory level.: null}
"""
    problems = document_problems(yaml.safe_load(broken))
    for name in ("as YAML.", "measured on an H200).", "the last position).", "instead of memory_latency_seconds.",
                 "over every memory level."):
        assert any(name in p and "not a schema keyword" in p for p in problems), (name, problems)
    assert not document_problems(yaml.safe_load(broken.replace(".: null}", ".'}").replace("description: ", "description: '")))


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


def route_flags():
    """(METHOD, pattern) -> set of flags, from the route table in daemon/routes.c (the source of truth the
    daemon's policy follows: WRITE needs the token, JSON reads a body)."""
    import re
    path = os.path.join(os.path.dirname(specmod.SPEC_PATH), "daemon", "routes.c")
    table = open(path, encoding="utf-8").read()
    out = {}
    for m in re.finditer(r'\{\s*"([A-Z]+)",\s*"([^"]+)",\s*\w+,\s*(?:NULL|"[^"]*"),\s*([^}]*)\}', table):
        flags = {f.strip() for f in m.group(3).split("|") if f.strip() and f.strip() != "0"}
        out[(m.group(1), m.group(2))] = flags
    return out


def test_statuses_follow_the_route_flags():
    """Every status the daemon's policy gives a route is documented for it: WRITE routes need the bearer token
    (security, 401, 403), routes with a body answer 400, 413, 415 and 422, GETs 304 to If-None-Match, and every
    operation 500."""
    s = specmod.Spec()
    flags = route_flags()
    assert len(flags) == len(s.operations()), sorted(flags)
    problems = []
    for (method, template), f in sorted(flags.items()):
        op = s.doc["paths"][template][method.lower()]
        codes = set(op.get("responses", {}))
        need = {"500"}
        if "WRITE" in f:
            need |= {"401", "403"}
            if not op.get("security"):
                problems.append("%s %s writes but has no security requirement" % (method, template))
        if "JSON" in f or "PATCH" in f:
            need |= {"400", "413", "415", "422"}
        if method == "GET":
            need |= {"304"}
        for c in sorted(need - codes):
            problems.append("%s %s does not document %s" % (method, template, c))
    assert not problems, "\n".join(problems)


def request_examples(s):
    """(method, template, media pointer, example) for every request body example in the spec."""
    out = []
    for method, template in sorted(s.operations()):
        op = s.doc["paths"][template][method.lower()]
        body = op.get("requestBody")
        if not body:
            continue
        for media, m in s.deref(body).get("content", {}).items():
            ptr = "/paths/%s/%s/requestBody/content/%s/schema" % (
                specmod.pointer_escape(template), method.lower(), specmod.pointer_escape(media))
            exs = [m["example"]] if "example" in m else [e["value"] for e in m.get("examples", {}).values()]
            for ex in exs:
                out.append((method, template, media, ptr, ex))
    return out


def test_request_examples_follow_their_schemas_and_unknown_members_are_refused(daemon):
    """Each request example validates against its schema; with one unknown member added, the schema refuses it
    (additionalProperties: false) and so does the daemon (422 naming the member): the two agree."""
    import json
    import urllib.error
    import urllib.request
    s = specmod.Spec()
    problems = []
    for method, template, media, ptr, ex in request_examples(s):
        where = "%s %s (%s)" % (method, template, media)
        problems += ["%s example: %s" % (where, e) for e in s.validate_schema(ptr, ex)]
        if not isinstance(ex, dict):
            continue
        bad = dict(ex, zz_unknown_member=1)
        # a foreign protocol's document (kube-scheduler's ExtenderArgs) takes members it does not know, as its
        # Go decoder does: the schema says so (additionalProperties: true) and the daemon answers 200
        node = s.doc
        for part in ptr.lstrip("/").split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        foreign = s.deref(node).get("additionalProperties") is True
        if foreign:
            if s.validate_schema(ptr, bad):
                problems.append("%s: additionalProperties true, yet the schema refuses an unknown member" % where)
        elif not s.validate_schema(ptr, bad):
            problems.append("%s: the schema takes an unknown member" % where)
        # a PATCH needs something stored to patch: a preset (refused, so unchanged)
        stored = {"/v1/devices/{id}": "h100-sxm5-80gb", "/v1/models/{id}": "llama-3-8b"}
        path = template.replace("{id}", stored.get(template, "spec-example") if method == "PATCH" else "spec-example")
        req = urllib.request.Request(daemon.url + path, data=json.dumps(bad).encode(), method=method,
                                     headers={"Content-Type": media})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                if not foreign:
                    problems.append("%s: the daemon took an unknown member (%d)" % (where, r.status))
        except urllib.error.HTTPError as e:
            if foreign:
                problems.append("%s: the daemon refused an unknown member of a foreign protocol (%d)" % (where, e.code))
                continue
            doc = json.loads(e.read())
            fields = [x["field"] for x in doc.get("errors", [])]
            if e.code != 422 or not any(f.endswith("zz_unknown_member") for f in fields):
                problems.append("%s: unknown member answered %d %s" % (where, e.code, fields))
    assert not problems, "\n".join(problems)
