#!/usr/bin/env python3
"""Checks that config.example.json says what docs/configuration.md says.

The example is the first file a newcomer reads and its `_`-comments are prose, so they drift: a
key renamed or removed in the docs stays named in a comment, a key added to the example goes
undocumented. This reads the Keys table of docs/configuration.md (every `key` in its first column)
and the example, and reports:

- a key of the example (a non-`_` key at any depth; a list entry's keys as `widgets[].slug`) that
  the table does not list;
- a configuration key a comment names that the table does not list. A comment names a key as a
  snake_case word (`max_body_bytes`), a dotted path (`github.payload_retention`) or a quoted JSON
  key (`"token":`); a bare name is looked up under the comment's own section first (`"token"` in
  `github._api` is `github.api.token`), then anywhere in the table. Words that look like keys but
  name something else (PushWard's error codes, credential names) are listed in NOT_KEYS;
- a documented key the example neither sets nor names in a comment: the docs say the example
  documents every key.

Run from the repository root: `python3 Tests/docs/check_config_example.py config.example.json
docs/configuration.md`. Exits 1 with one line per problem.
"""

import json
import re
import sys

# Words a comment uses that have the shape of a key but are not configuration keys.
NOT_KEYS = {
    # PushWard's problem codes, quoted in the comments that explain what the bridge does on them.
    "rate_limit.exceeded",
    "quota.exceeded",
    # systemd credential names (`$CREDENTIALS_DIRECTORY`), not keys of the file.
    "github_token",
    # A GitHub event name (what `filters.events` matches), and a login as a key of routing.members.
    "pull_request",
    "octocat",
}

TABLE_ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|")
# A dotted path or a snake_case word; a dotted path's segments may carry `[]` (a list entry).
# A placeholder value (`"github_pat_..."`) is not a key: a word followed by `..` is left out.
WORD = re.compile(r"(?<![\w./<{-])([a-z][a-z0-9_]*(?:(?:\[\])?\.[a-z][a-z0-9_]*)*)(?![\w/]|\.\.)")
QUOTED_KEY = re.compile(r'"([a-z][a-z0-9_]*)"\s*:')
# The example's own way to introduce a key in prose, at the start of a sentence: `rules: [...]`.
LEAD_KEY = re.compile(r"(?:^|[.;] )([a-z][a-z0-9_]*):\s")


def documented_keys(markdown):
    """The first column of the table under `## Keys`, in order."""
    keys = []
    inside = False
    for line in markdown.splitlines():
        if line.startswith("## "):
            inside = line.strip() == "## Keys"
            continue
        match = TABLE_ROW.match(line)
        if inside and match and match.group(1) != "key":
            keys.append(match.group(1))
    return keys


def walk(value, path=""):
    """Every (path, comment name or None, value) of the example: keys as dotted paths (a list of
    objects as `name[]`), comments with the section they sit in."""
    if isinstance(value, dict):
        for key, child in value.items():
            full = f"{path}.{key}" if path else key
            if key.startswith("_"):
                yield path, key, child
            else:
                yield full, None, child
                yield from walk(child, full)
    elif isinstance(value, list):
        for child in value:
            if isinstance(child, dict):
                yield from walk(child, path + "[]")


def named_in(comment):
    """The key-shaped words of a comment: dotted paths, snake_case words and quoted JSON keys."""
    words = set(QUOTED_KEY.findall(comment)) | set(LEAD_KEY.findall(comment))
    for word in WORD.findall(comment):
        if "_" in word or "." in word:
            words.add(word)
    return words


def resolve(word, scope, keys):
    """The documented key `word` names in a comment of `scope`, or None."""
    if word in keys:
        return word
    # Innermost scope first: `"url"` in github._api is github.api.url, not pushward.url.
    parts = scope.split(".") if scope else []
    for depth in range(len(parts), -1, -1):
        prefix = ".".join(parts[:depth])
        matches = [
            key
            for key in keys
            if key.startswith(prefix) and (key.endswith("." + word) or key.endswith("[]." + word) or key == word)
        ]
        if matches:
            return matches[0]
    return None


def check(example, markdown):
    keys = documented_keys(markdown)
    known = set(keys)
    problems = []
    mentioned = set()
    for path, comment, value in walk(example):
        if comment is None:
            mentioned.add(path)
            if path not in known:
                problems.append(f"config.example.json: {path} is not in docs/configuration.md's Keys table")
            continue
        # `_api` in github is about github.api: its bare names are looked up there first.
        own = f"{path}.{comment[1:]}" if path else comment[1:]
        scope = own if own in known else path
        if own in known:
            mentioned.add(own)
        for word in sorted(named_in(str(value))):
            if word in NOT_KEYS:
                continue
            key = resolve(word, scope, keys)
            if key is None:
                where = f"{path}.{comment}" if path else comment
                problems.append(f"config.example.json: {where} names {word}, which docs/configuration.md does not list")
            else:
                mentioned.add(key)
    for key in keys:
        if key not in mentioned:
            problems.append(f"docs/configuration.md: {key} is neither set nor named in config.example.json")
    return problems


def main(arguments):
    example_path, markdown_path = arguments if len(arguments) == 2 else ("config.example.json", "docs/configuration.md")
    with open(example_path, encoding="utf-8") as handle:
        example = json.load(handle)
    with open(markdown_path, encoding="utf-8") as handle:
        markdown = handle.read()
    problems = check(example, markdown)
    for problem in problems:
        print(problem)
    if problems:
        print(f"config example: {len(problems)} problem(s)")
        return 1
    print("config example: every key and every key a comment names is documented, and every documented key named")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
