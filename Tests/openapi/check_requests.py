#!/usr/bin/env python3
"""Validates every request the tests sent to the fake PushWard against PushWard's OpenAPI document.

    check_requests.py LOG_DIR [--spec pushward-openapi.yaml] [--overlay pushward-openapi-overlay.yaml]

The fake (Sources/BridgeTestSupport/FakeRequestLog.swift) appends each request it receives as one
JSON line to a file under $PUSHWARD_FAKE_REQUEST_LOG; `make test` sets it, runs the suite, then
this. For each request: an operation of the document must match its method and path; its query
parameters must be documented ones of the documented type; a body must come with a content type the
operation takes and validate against that schema (JSON Schema 2020-12, Python's `jsonschema`).
Each violation is printed with the test that made the fake and the request; any violation, or no
request at all (the variable did not reach the tests), exits non-zero so the suite fails.

The overlay (a newer copy's schemas: organisation `target`, the approval template) replaces the
schemas it names, and its `x-every-template` members are added to every Content* schema.
"""

import argparse
import copy
import glob
import json
import os
import re
import sys
from urllib.parse import parse_qsl

import jsonschema
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
METHODS = ("get", "post", "put", "patch", "delete")


def load_spec(spec_path, overlay_path):
    with open(spec_path, encoding="utf-8") as handle:
        spec = yaml.safe_load(handle)
    if overlay_path:
        with open(overlay_path, encoding="utf-8") as handle:
            overlay = yaml.safe_load(handle)
        schemas = spec["components"]["schemas"]
        schemas.update(overlay.get("components", {}).get("schemas", {}))
        for name, schema in schemas.items():
            if name.startswith("Content"):
                schema.setdefault("properties", {}).update(copy.deepcopy(overlay.get("x-every-template", {})))
    return spec


def as_merge_patch(schema, body, carried_forward):
    """THE ONE PLACE where the document is wrong for what it describes, and why.

    Both PATCH operations are RFC 7396 merge patches (their own descriptions say so), yet their
    schemas are those of whole documents: no member allows `null`, and an activity patch's `content`
    is the same `oneOf` of whole Content* documents a create needs, each requiring `template` (the
    only way to tell the branches apart, as every branch allows additional properties) and its own
    members. In a merge patch `null` deletes a member and an absent one is kept from what the server
    holds; PushWard's own examples patch `{"content": {"progress": 0.7}}` and, on the finishing
    push, `"end_date": null`. So for a PATCH: `null` members, at any level, are removed before
    validation (a deletion, not a value: the TTLs' and `target`'s documented "null clears"
    included). For an activity's `content` (`carried_forward`), `required` does not apply at any
    level (the stored content supplies it; the fake checks the merged result), and a content
    without `template` is validated against the template that slug last set (`content_schema`).
    A widget PATCH keeps `required`: `UpdateWidgetRequest` needs `content.template`, and the bridge
    sends it, the sources disagreeing whether the server keeps the stored one.

    Returns the schema and the body to validate.
    """

    def relax(node):
        if isinstance(node, dict):
            # `required` the keyword (a list), not a member of that name.
            return {key: relax(value) for key, value in node.items() if key != "required" or not isinstance(value, list)}
        if isinstance(node, list):
            return [relax(value) for value in node]
        return node

    return (relax(schema) if carried_forward else schema), without_nulls(body)


def without_nulls(value):
    if isinstance(value, dict):
        return {key: without_nulls(member) for key, member in value.items() if member is not None}
    return value


class Checker:
    def __init__(self, spec):
        self.spec = spec
        self.schemas = spec["components"]["schemas"]
        self.operations = []
        for template, item in spec["paths"].items():
            pattern = "^" + re.sub(r"\{[^}]+\}", "[^/]+", template) + "$"
            for method in METHODS:
                if method in item:
                    self.operations.append((method.upper(), re.compile(pattern), template, item[method]))
        self.templates = {}  # (log file, slug) -> the activity template that slug last set

    def validator(self, schema):
        root = {"components": self.spec["components"]}
        root.update(schema)
        return jsonschema.Draft202012Validator(root)

    def errors(self, schema, instance):
        found = []
        for error in sorted(self.validator(schema).iter_errors(instance), key=lambda e: list(e.path)):
            where = "/".join(str(part) for part in error.path) or "(body)"
            found.append(f"{where}: {error.message[:300]}")
        return found

    def check(self, source, request):
        """The violations of one logged request (empty when it is valid)."""
        method, path = request["method"], request["path"]
        matches = [op for op in self.operations if op[0] == method and op[1].match(path)]
        if not matches:
            return [f"no operation {method} {path} in the document"]
        # A literal path beats a templated one (`/activities` is not `/{slug}`).
        _, _, template, operation = min(matches, key=lambda op: op[2].count("{"))
        problems = self.check_query(operation, request.get("query"))

        body_present = "body" in request or "body_text" in request
        declared = (operation.get("requestBody") or {}).get("content", {})
        content_type = (request.get("content_type") or "").split(";")[0].strip().lower()
        if not body_present:
            if (operation.get("requestBody") or {}).get("required"):
                problems.append("a body is required")
            return problems
        if not declared:
            return problems + [f"{method} {template} takes no body"]
        if content_type not in declared:
            return problems + [f"content type {content_type or '(none)'} is not one of {sorted(declared)}"]
        if "body_text" in request:
            return problems + ["the body is not JSON"]
        body = request["body"]
        schema = declared[content_type]["schema"]
        if method == "PATCH" and template == "/activities/{slug}":
            slug = path.rsplit("/", 1)[-1]
            problems += self.check_activity_patch(source, slug, schema, body)
        elif method == "PATCH":
            problems += self.errors(*as_merge_patch(schema, body, carried_forward=False))
        else:
            problems += self.errors(schema, body)
        return problems

    def check_activity_patch(self, source, slug, schema, body):
        if not isinstance(body, dict):
            return self.errors(schema, body)
        content = body.get("content")
        outer = dict(body)
        outer.pop("content", None)
        problems = self.errors(*as_merge_patch(schema, outer, carried_forward=False))
        if isinstance(content, dict):
            template = content.get("template") or self.templates.get((source, slug))
            if isinstance(content.get("template"), str):
                self.templates[(source, slug)] = content["template"]
            branch = self.content_schema(schema, template)
            if branch is None:
                problems.append(f"content: no template known for {slug} (none sent, none set before)")
            else:
                relaxed, patch = as_merge_patch(branch, content, carried_forward=True)
                problems += [f"content/{error}" for error in self.errors(relaxed, patch)]
        elif content is not None:
            problems.append("content: must be an object or null")
        return problems

    def content_schema(self, schema, template):
        """The Content* schema the document maps `template` to for PATCH /activities/{slug}."""
        if "$ref" in schema:
            schema = self.schemas[schema["$ref"].rsplit("/", 1)[-1]]
        content = schema.get("properties", {}).get("content", {})
        mapping = content.get("discriminator", {}).get("mapping", {})
        reference = mapping.get(template) if isinstance(template, str) else None
        return self.schemas[reference.rsplit("/", 1)[-1]] if reference else None

    def check_query(self, operation, query):
        problems = []
        parameters = {p["name"]: p for p in operation.get("parameters", []) if p.get("in") == "query"}
        for name, value in parse_qsl(query or "", keep_blank_values=True):
            if name not in parameters:
                problems.append(f"query: {name} is not a parameter of this operation")
                continue
            schema = parameters[name].get("schema", {})
            kind = schema.get("type")
            parsed = value
            if kind == "integer":
                parsed = int(value) if re.fullmatch(r"-?[0-9]+", value) else value
            elif kind == "boolean":
                parsed = {"true": True, "false": False}.get(value, value)
            problems += [f"query {name}: {error}" for error in self.errors(schema, parsed)]
        return problems


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("log_dir")
    parser.add_argument("--spec", default=os.path.join(HERE, "pushward-openapi.yaml"))
    parser.add_argument("--overlay", default=os.path.join(HERE, "pushward-openapi-overlay.yaml"))
    arguments = parser.parse_args(argv)
    checker = Checker(load_spec(arguments.spec, arguments.overlay))

    checked = skipped = failures = 0
    for source in sorted(glob.glob(os.path.join(arguments.log_dir, "*.jsonl"))):
        with open(source, encoding="utf-8") as handle:
            for number, text in enumerate(handle, 1):
                request = json.loads(text)
                if "unchecked" in request:
                    skipped += 1
                    continue
                checked += 1
                problems = checker.check(source, request)
                if problems:
                    failures += 1
                    query = "?" + request["query"] if request.get("query") else ""
                    body = json.dumps(request.get("body", request.get("body_text")), ensure_ascii=False)
                    print(f"{request['origin']}: {request['method']} {request['path']}{query} "
                          f"({os.path.basename(source)}:{number}, answered {request['status']})")
                    print(f"    body: {body[:600]}")
                    for problem in problems:
                        print(f"    - {problem}")
    if checked == 0:
        print(f"check_requests: no request logged under {arguments.log_dir}: is PUSHWARD_FAKE_REQUEST_LOG "
              "reaching the tests?")
        return 1
    print(f"check_requests: {checked} requests checked against the OpenAPI document, {failures} invalid, "
          f"{skipped} sent invalid on purpose by tests of the fake")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
