"""check_requests.py catches what PushWard's document refuses, and passes what it takes.

    python3 -m unittest discover -s Tests/openapi

Run by `make test` before the check itself, so a checker that lets everything through fails.
"""

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_requests  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = check_requests.load_spec(
    os.path.join(HERE, "pushward-openapi.yaml"), os.path.join(HERE, "pushward-openapi-overlay.yaml"))


def request(method, path, body=None, content_type=None, query=None):
    line = {"origin": "Test.swift:1", "method": method, "path": path, "status": 200}
    if body is not None:
        line["body"] = body
        line["content_type"] = content_type or ("application/merge-patch+json" if method == "PATCH" else "application/json")
    if query is not None:
        line["query"] = query
    return line


class CheckRequestsTests(unittest.TestCase):
    def setUp(self):
        self.checker = check_requests.Checker(SPEC)

    def problems(self, line, source="log"):
        return self.checker.check(source, line)

    def test_valid_requests_pass(self):
        create = {"slug": "gh-1", "name": "CI \u202e🚀", "priority": 5, "ended_ttl": 300, "target": {"members": ["u1"]}}
        self.assertEqual(self.problems(request("POST", "/activities", create)), [])
        start = {"state": "ongoing", "content": {"template": "generic", "progress": 0.5, "state": "Build"}}
        self.assertEqual(self.problems(request("PATCH", "/activities/gh-1", start)), [])
        # A merge patch: no template (the slug set it), nulls delete, nested members carry forward.
        update = {"content": {"progress": 0.7, "end_date": None, "url_action": {"title": "Run #2"}}}
        self.assertEqual(self.problems(request("PATCH", "/activities/gh-1", update)), [])
        self.assertEqual(self.problems(request("GET", "/activities", query="state=preempted&limit=100")), [])
        self.assertEqual(self.problems(request("DELETE", "/activities/gh-1")), [])
        widget = {"content": {"template": "progress", "value": 1, "end_date": None}}
        self.assertEqual(self.problems(request("PATCH", "/widgets/ci-main", widget)), [])

    def test_an_unknown_member_is_caught(self):
        body = {"slug": "gh-1", "name": "CI", "priority": 5, "colour": "red"}
        self.assertTrue(any("colour" in p for p in self.problems(request("POST", "/activities", body))))

    def test_a_bad_slug_and_a_wrong_type_are_caught(self):
        self.assertTrue(self.problems(request("POST", "/activities", {"slug": "-x", "name": "CI"})))
        self.assertTrue(self.problems(request("PATCH", "/activities/gh-1", {"state": 5})))
        body = {"content": {"template": "generic", "progress": 2}}
        self.assertTrue(any("progress" in p for p in self.problems(request("PATCH", "/activities/gh-1", body))))

    def test_a_widget_patch_without_its_template_or_as_plain_json_is_caught(self):
        self.assertTrue(self.problems(request("PATCH", "/widgets/ci-main", {"content": {"value": 0.5}})))
        widget = {"content": {"template": "progress", "value": 0.5}}
        problems = self.problems(request("PATCH", "/widgets/ci-main", widget, content_type="application/json"))
        self.assertTrue(any("content type" in p for p in problems))

    def test_an_activity_patch_of_a_slug_that_never_set_a_template_is_caught(self):
        problems = self.problems(request("PATCH", "/activities/gh-9", {"content": {"progress": 0.1}}), "other")
        self.assertTrue(any("no template known" in p for p in problems))

    def test_unknown_operations_and_query_parameters_are_caught(self):
        self.assertTrue(self.problems(request("PUT", "/activities/gh-1", {})))
        self.assertTrue(self.problems(request("GET", "/activities", query="status=ongoing")))
        self.assertTrue(self.problems(request("GET", "/activities", query="limit=500")))
        self.assertTrue(self.problems(request("PATCH", "/activities/gh-1", query="upsert=maybe", body={"state": "ended"})))

    def test_main_fails_on_an_invalid_request_and_on_an_empty_log(self):
        with tempfile.TemporaryDirectory() as directory:
            self.assertEqual(check_requests.main([directory]), 1, "no request logged is a failure")
            with open(os.path.join(directory, "fake-1-1.jsonl"), "w", encoding="utf-8") as handle:
                handle.write(json.dumps(request("POST", "/activities", {"slug": "ok", "name": "CI"})) + "\n")
                skipped = request("POST", "/activities", {"bad": True})
                skipped["unchecked"] = "a test of the fake's refusals"
                handle.write(json.dumps(skipped) + "\n")
            self.assertEqual(check_requests.main([directory]), 0)
            with open(os.path.join(directory, "fake-1-2.jsonl"), "w", encoding="utf-8") as handle:
                handle.write(json.dumps(request("POST", "/activities", {"slug": "ok", "name": ""})) + "\n")
            self.assertEqual(check_requests.main([directory]), 1)


if __name__ == "__main__":
    unittest.main()
