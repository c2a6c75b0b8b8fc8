"""Every relative link in the README, ARCHITECTURE.md, bench/README.md, docs/
and apps/ resolves: the file exists and, for `page.md#anchor`, the page has
that heading (GitHub's anchor rule); and docs/README.md lists every page. The docs are a map; a dead link in one
is a wrong turn. Lives under bench/ because `make test` runs its unittests.

    python3 -m unittest discover -s bench -p 'test_*.py'
"""
import os
import re
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def prose(path):
    """The lines of a Markdown file outside fenced code blocks."""
    inside = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if FENCE.match(line):
                inside = not inside
            elif not inside:
                yield line


def anchors(path):
    """GitHub's anchors of a page's headings: lower case, punctuation dropped,
    spaces to hyphens, a repeated one numbered."""
    seen, out = {}, set()
    for line in prose(path):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            slug = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def broken_links(path):
    """`(target, why)` for each link of `path` that does not resolve."""
    out = []
    for line in prose(path):
        for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
            if re.match(r"^[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
            if not os.path.exists(dest):
                out.append((target, "no such file"))
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                out.append((target, "no such heading"))
    return out


THIRD_PARTY = {"node_modules", ".venv", "target"}


def pages(root=ROOT):
    found = [os.path.join(root, p) for p in ("README.md", "ARCHITECTURE.md", "bench/README.md")]
    for top in ("docs", "apps"):
        for dirpath, dirs, files in os.walk(os.path.join(root, top)):
            # The apps' installed dependencies and build output are not our docs.
            dirs[:] = [d for d in dirs if d not in THIRD_PARTY]
            found += [os.path.join(dirpath, f) for f in files if f.endswith(".md")]
    return [p for p in found if os.path.exists(p)]


class DocLinks(unittest.TestCase):
    def test_every_link_resolves(self):
        found = pages()
        self.assertGreater(len(found), 10, "the docs were not found")
        bad = [(os.path.relpath(p, ROOT), t, why) for p in found for t, why in broken_links(p)]
        self.assertEqual(bad, [])

    def test_the_docs_index_lists_every_page(self):
        docs = os.path.join(ROOT, "docs")
        index = os.path.join(docs, "README.md")
        linked = {os.path.normpath(os.path.join(docs, t.partition("#")[0]))
                  for line in prose(index) for t in LINK.findall(line)}
        pages_in_docs = {p for p in pages() if p.startswith(docs + os.sep) and p != index}
        self.assertEqual(sorted(os.path.relpath(p, ROOT) for p in pages_in_docs - linked), [])

    def test_a_missing_file_and_a_missing_heading_are_reported(self):
        with tempfile.TemporaryDirectory() as d:
            page = os.path.join(d, "a.md")
            with open(page, "w", encoding="utf-8") as f:
                f.write("# Where a generator's core goes\n\n## HTTP/2\n\n```\n# not a heading\n```\n"
                        "[ok](#where-a-generators-core-goes) [ok](a.md#http2) `[code](nowhere.md)`\n"
                        "[gone](b.md) [no](#not-a-heading) [web](https://example.invalid/x)\n")
            self.assertEqual(broken_links(page), [("b.md", "no such file"), ("#not-a-heading", "no such heading")])

    def test_installed_dependencies_are_not_our_docs(self):
        # Broke when scripts/deps.sh began installing apps/grpc/node's
        # node_modules: protobufjs's README links to files it does not ship.
        with tempfile.TemporaryDirectory() as d:
            for folder in ("apps/a", "apps/a/node_modules/x", "apps/b/.venv/y", "apps/c/target/z"):
                os.makedirs(os.path.join(d, folder))
                with open(os.path.join(d, folder, "README.md"), "w", encoding="utf-8") as f:
                    f.write("[gone](nowhere.md)\n")
            self.assertEqual([os.path.relpath(p, d) for p in pages(d)], [os.path.join("apps", "a", "README.md")])


if __name__ == "__main__":
    unittest.main()
