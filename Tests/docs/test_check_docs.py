"""The docs checker's own tests: a broken file link, a missing anchor and a link inside code."""

import os
import tempfile
import unittest

import check_docs


class CheckDocsTests(unittest.TestCase):
    def write(self, directory, name, text):
        path = os.path.join(directory, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        return path

    def test_slugs_follow_github(self):
        self.assertEqual(check_docs.slug("PushWard's limits"), "pushwards-limits")
        self.assertEqual(check_docs.slug("Recovery: what GitHub failed to deliver (`github.api`)"),
                         "recovery-what-github-failed-to-deliver-githubapi")
        self.assertEqual(check_docs.slug("At six runs, at fifty cards"), "at-six-runs-at-fifty-cards")

    def test_good_links_pass_and_bad_ones_are_named(self):
        with tempfile.TemporaryDirectory() as directory:
            self.write(directory, "docs/alerts.md", "# Alerts\n## Who gets them\n## Who gets them\n")
            readme = self.write(directory, "README.md", "\n".join([
                "# Top", "## Quick start",
                "[ok](#quick-start) [page](docs/alerts.md) [deep](docs/alerts.md#who-gets-them-1)",
                "[web](https://example.com/#x) `[code](#not-a-link)`",
                "```", "[fenced](#not-a-link-either)", "```",
                "[gone](docs/gone.md) [anchor](docs/alerts.md#nobody)",
            ]))
            problems = check_docs.check([readme, os.path.join(directory, "docs/alerts.md")])
            self.assertEqual(len(problems), 2, problems)
            self.assertIn("no file", problems[0])
            self.assertIn("#nobody", problems[1])


if __name__ == "__main__":
    unittest.main()
