"""spec.py: openapi.yaml as data for the contract tests. Loads the spec with the YAML parser, matches a
request (method, path) to its operation, and validates a response (status, content type, body) against the
operation's documented responses with JSON Schema 2020-12 (the dialect of OpenAPI 3.1). Statuses the
daemon answers before routing (404 for an unknown path, 405 wrong method, 414 URI too long, 431 headers too
large) apply to every path and are checked against the Problem schema."""
import json
import os
import re

import yaml
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPEC_PATH = os.path.join(ROOT, "openapi.yaml")
METHODS = ("get", "put", "post", "delete", "patch", "options", "head", "trace")
SPEC_URI = "urn:memplan:openapi"
# Answered by the HTTP layer, on any path: documented once in the spec's components.
# statuses any path may answer before an operation sees the request (openapi.yaml's info.description): unknown
# paths and methods, framing, the Host check (DNS rebinding), the budget of bytes in flight, oversize headers
DAEMON_LEVEL = {400, 403, 404, 405, 414, 431, 501, 503, 505}


def load(path=SPEC_PATH):
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def pointer_escape(s):
    return s.replace("~", "~0").replace("/", "~1")


class Spec:
    def __init__(self, doc=None):
        self.doc = doc if doc is not None else load()
        resource = Resource.from_contents(self.doc, default_specification=DRAFT202012)
        self.registry = Registry().with_resource(SPEC_URI, resource)
        self.templates = []
        for template in self.doc.get("paths", {}):
            rx = "^" + re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template)) + "$"
            self.templates.append((template, re.compile(rx)))
        # literal paths win over templated ones (/v1/devices/x vs /v1/devices)
        self.templates.sort(key=lambda t: t[0].count("{"))

    def operations(self):
        """(METHOD, path template) for every operation in the spec."""
        out = set()
        for template, item in self.doc.get("paths", {}).items():
            for m in item:
                if m in METHODS:
                    out.add((m.upper(), template))
        return out

    def deref(self, obj):
        """Follows local $refs of non-schema objects (responses, parameters)."""
        while isinstance(obj, dict) and "$ref" in obj:
            node = self.doc
            for part in obj["$ref"].lstrip("#/").split("/"):
                node = node[part.replace("~1", "/").replace("~0", "~")]
            obj = node
        return obj

    def match(self, method, path):
        """(template, operation or None) for a request path (query string ignored); (None, None) if unknown."""
        path = path.split("?", 1)[0]
        if len(path) > 1 and path.endswith("/"):  # the daemon drops one trailing slash (openapi.yaml, info)
            path = path[:-1]
        for template, rx in self.templates:
            if rx.match(path):
                item = self.doc["paths"][template]
                op = item.get(method.lower())
                if op is None and method.upper() == "HEAD":
                    op = item.get("get")
                return template, op
        return None, None

    def validate_schema(self, pointer, instance):
        """Errors (strings) of instance against the schema at JSON pointer `pointer` in the spec."""
        validator = Draft202012Validator({"$ref": SPEC_URI + "#" + pointer}, registry=self.registry)
        return ["%s: %s" % ("/".join(str(p) for p in e.absolute_path) or "(root)", e.message)
                for e in validator.iter_errors(instance)]

    def check_response(self, method, path, status, content_type, body):
        """Returns a list of problems (empty when the response conforms)."""
        template, op = self.match(method, path)
        base_type = (content_type or "").split(";", 1)[0].strip().lower()
        if op is None or (status in DAEMON_LEVEL and str(status) not in op.get("responses", {})):
            if status not in DAEMON_LEVEL:
                return ["%s %s: status %d on an undocumented %s" % (
                    method, path, status, "path" if template is None else "method")]
            if status == 431 and "json" not in base_type:
                return []  # libmicrohttpd answers oversize headers itself, before memplan sees the request
            if base_type != "application/problem+json":
                return ["%s %s: status %d must be application/problem+json, got %r" % (
                    method, path, status, content_type)]
            return self._check_json("/components/schemas/Problem", method, path, status, body)
        responses = op.get("responses", {})
        key = str(status) if str(status) in responses else "%dXX" % (status // 100)
        if key not in responses:
            key = "default" if "default" in responses else None
        if key is None:
            return ["%s %s (%s): status %d is not documented (documented: %s)" % (
                method, path, template, status, ", ".join(sorted(responses)))]
        resp = self.deref(responses[key])
        content = resp.get("content")
        if not content:
            return [] if not body else ["%s %s: status %d documents no body" % (method, path, status)]
        types = {k.split(";", 1)[0].strip().lower(): k for k in content}
        if base_type not in types:
            return ["%s %s: status %d content type %r is not one of %s" % (
                method, path, status, content_type, sorted(types))]
        media = content[types[base_type]]
        if "schema" not in media:
            return []
        parse = json.loads
        if "yaml" in base_type:
            parse = yaml.safe_load
        elif "json" not in base_type:
            return []  # text bodies (Prometheus metrics): promtool checks those

        if isinstance(responses[key], dict) and "$ref" in responses[key]:
            pointer = responses[key]["$ref"].lstrip("#")
        else:
            pointer = "/paths/%s/%s/responses/%s" % (pointer_escape(template), op_method(op, self.doc, template), key)
        pointer += "/content/%s/schema" % pointer_escape(types[base_type])
        return self._check_json(pointer, method, path, status, body, parse)

    def _check_json(self, pointer, method, path, status, body, parse=json.loads):
        try:
            instance = parse(body)
        except (ValueError, yaml.YAMLError) as e:
            return ["%s %s: status %d body is not JSON: %s" % (method, path, status, e)]
        return ["%s %s %d: %s" % (method, path, status, e) for e in self.validate_schema(pointer, instance)]


def op_method(op, doc, template):
    for m, o in doc["paths"][template].items():
        if o is op:
            return m
    raise KeyError(template)
