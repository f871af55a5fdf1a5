"""The config example checker's own tests: each kind of drift between the example and the docs is
named, and what only looks like a key is not."""

import unittest

import check_config_example

DOCS = "\n".join([
    "# Configuration",
    "## Keys",
    "| key | default | meaning |",
    "|---|---|---|",
    "| `listen` | `127.0.0.1:8080` | Where. |",
    "| `log_level` | `info` | How much. |",
    "| `github` | | The webhook side. |",
    "| `github.api` | none | Recovery. |",
    "| `github.api.url` | `https://api.github.com` | The API. |",
    "| `pushward` | | The PushWard side. |",
    "| `pushward.url` | `https://api.pushward.app` | PushWard. |",
    "| `widgets` | `[]` | Widgets. |",
    "| `widgets[].slug` | required | The slug. |",
    "## Retention",
    "| key | default | what goes |",
    "| `retention.runs` | `45d` | not a Keys row |",
])


class CheckConfigExampleTests(unittest.TestCase):
    def test_a_documented_example_passes(self):
        example = {
            "_comment": "log_level: how much is logged.",
            "listen": "127.0.0.1:8080",
            "github": {"_api": 'api: {"url": "https://api.github.com"}, with a token such as "github_pat_..."'},
            "pushward": {"_comment": "url: https:// only; rate_limit.exceeded is answered with a wait."},
            "widgets": [{"slug": "ci-main"}],
        }
        self.assertEqual(check_config_example.check(example, DOCS), [])

    def test_only_the_keys_table_counts(self):
        self.assertNotIn("retention.runs", check_config_example.documented_keys(DOCS))

    def test_each_kind_of_drift_is_named(self):
        example = {
            "_comment": "log_level: how much. old_key: gone from the docs.",
            "listen": "127.0.0.1:8080",
            "github": {"_api": "api: recovery.", "extra": 1},
            "pushward": {"url": "https://api.pushward.app"},
        }
        problems = check_config_example.check(example, DOCS)
        self.assertEqual(len(problems), 5, problems)
        self.assertIn("_comment names old_key", problems[0])
        self.assertIn("github.extra is not in", problems[1])
        self.assertIn("github.api.url is neither set nor named", problems[2])
        self.assertIn("widgets is neither set nor named", problems[3])
        self.assertIn("widgets[].slug is neither set nor named", problems[4])

    def test_a_bare_name_is_looked_up_in_the_comments_section_first(self):
        keys = check_config_example.documented_keys(DOCS)
        self.assertEqual(check_config_example.resolve("url", "github.api", keys), "github.api.url")
        self.assertEqual(check_config_example.resolve("url", "pushward", keys), "pushward.url")
        self.assertEqual(check_config_example.resolve("slug", "", keys), "widgets[].slug")
        self.assertIsNone(check_config_example.resolve("token", "github.api", keys))


if __name__ == "__main__":
    unittest.main()
