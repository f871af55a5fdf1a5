#!/usr/bin/env python3
"""Checks the project's Markdown: every relative link names a file that exists, and every
`#anchor` (in the same page or another) names a heading of that page, as GitHub derives anchors.

Run from the repository root: `python3 Tests/docs/check_docs.py README.md SECURITY.md docs`.
Exits 1 with one line per broken link, so a page moved or a heading renamed cannot leave a
reader at a dead link.
"""

import os
import re
import sys
import unicodedata

LINK = re.compile(r"(?<!\!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
IMAGE = re.compile(r"\!\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")


def strip_code(lines):
    """The lines outside fenced code blocks, with inline code spans kept (headings may hold them)."""
    inside = False
    for number, line in enumerate(lines, 1):
        if FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            yield number, line


def slug(heading):
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped (letters, digits,
    marks, `_` and `-` kept), spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"<[^>]+>", "", text)
    text = text.replace("`", "").lower()
    kept = []
    for character in text:
        category = unicodedata.category(character)
        if character in "-_" or category[0] in "LNM":
            kept.append(character)
        elif character == " ":
            kept.append("-")
    return "".join(kept)


def anchors(path):
    """Every anchor of a Markdown page, duplicates numbered as GitHub numbers them."""
    seen = {}
    result = set()
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    for _, line in strip_code(lines):
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")
    return result


def markdown_files(arguments):
    for argument in arguments:
        if os.path.isdir(argument):
            for root, _, names in os.walk(argument):
                for name in sorted(names):
                    if name.endswith(".md"):
                        yield os.path.join(root, name)
        else:
            yield argument


def check(paths):
    problems = []
    cache = {}

    def anchors_of(path):
        if path not in cache:
            cache[path] = anchors(path)
        return cache[path]

    for path in paths:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
        for number, line in strip_code(lines):
            line = re.sub(r"`[^`]*`", "", line)  # code spans are not links
            targets = [m.group(1) for m in LINK.finditer(line)] + [m.group(1) for m in IMAGE.finditer(line)]
            for target in targets:
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                    continue
                file_part, _, anchor = target.partition("#")
                linked = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
                where = f"{path}:{number}: {target}"
                if not os.path.exists(linked):
                    problems.append(f"{where}: no file {linked}")
                    continue
                if anchor and linked.endswith(".md") and anchor not in anchors_of(linked):
                    problems.append(f"{where}: {linked} has no heading for #{anchor}")
    return problems


def main(arguments):
    paths = list(markdown_files(arguments or ["README.md"]))
    problems = check(paths)
    for problem in problems:
        print(problem)
    if problems:
        print(f"docs: {len(problems)} broken link(s) in {len(paths)} page(s)")
        return 1
    print(f"docs: every link of {len(paths)} page(s) resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
