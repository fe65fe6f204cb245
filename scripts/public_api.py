#!/usr/bin/env python3
"""The library's public API as text, read from the rustdoc HTML of `cargo doc`.

    RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --locked -p evograph
    scripts/public_api.py            # print the listing
    scripts/public_api.py --check    # fail when it differs from tests/public_api.txt
    scripts/public_api.py --bless    # rewrite tests/public_api.txt

Every public item is listed with its declaration, and every inherent, trait and auto-trait
impl with the signatures of its members, so that a change to the surface shows up as a
diff of the checked-in listing and is made on purpose (CI runs --check). Blanket impls
(`impl<T> From<T> for T` and the like) are left out: they come from dependencies, not from
us. The hidden `internals` module is not a stable API and is left out too.

Rustdoc's JSON output would be the structured source, but it needs a nightly toolchain;
its HTML is stable enough for a listing and needs nothing but `cargo doc`.
"""
import difflib
import html
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "target", "doc", "evograph")
LISTING = os.path.join(ROOT, "tests", "public_api.txt")
ITEM = re.compile(r'href="((?:[a-z_0-9]+/)*)(struct|enum|trait|fn|constant|type|macro|union|static)\.(\w+)\.html"')
HEADER = re.compile(r'<(h3|h4) class="code-header">(.*?)</\1>', re.S)
# Auto traits that are not yet stable Rust, which rustdoc lists as it learns them: a
# toolchain update must not read as a change of our API.
UNSTABLE_AUTO = re.compile(r"impl(<.*>)? (Freeze|UnsafeUnpin) for ")
DECL = re.compile(r'<pre class="rust item-decl"><code>(.*?)</code></pre>', re.S)


def text(fragment):
    """The text of an HTML fragment, with rustdoc's fold markers and spacing normalised."""
    t = re.sub(r"<[^>]+>", "", fragment)
    t = html.unescape(t)
    t = re.sub(r"Show \d+ (fields|variants|methods|items)", "", t)
    return re.sub(r"\s+", " ", t).strip()


def items():
    """(kind, path, page) of every public item that all.html lists."""
    index = open(os.path.join(DOC, "all.html"), encoding="utf-8").read()
    seen = set()
    for m in ITEM.finditer(index):
        dirs, kind, name = m.groups()
        if dirs.startswith("internals/") or (dirs, kind, name) in seen:
            continue
        seen.add((dirs, kind, name))
        path = "evograph::" + "".join(d + "::" for d in dirs.strip("/").split("/") if d) + name
        yield kind, path, os.path.join(DOC, dirs, f"{kind}.{name}.html")


def describe(kind, path, page):
    """The listing's lines for one item: its declaration, then its impls and members."""
    s = open(page, encoding="utf-8").read()
    cut = s.find('id="blanket-implementations"')
    if cut >= 0:
        s = s[:cut]
    decl = DECL.search(s)
    lines = [f"{kind} {path}"]
    if decl:
        lines.append("    " + text(decl.group(1)))
    for m in HEADER.finditer(s):
        line = text(m.group(2))
        if UNSTABLE_AUTO.match(line):
            continue
        indent = "    " if m.group(1) == "h3" else "        "
        lines.append(indent + line)
    return lines


def listing():
    out = []
    for kind, path, page in sorted(items(), key=lambda i: (i[1], i[0])):
        out.extend(describe(kind, path, page))
    return "\n".join(out) + "\n"


def main():
    if not os.path.exists(os.path.join(DOC, "all.html")):
        sys.exit("public_api.py: no target/doc/evograph/all.html: run `cargo doc --no-deps -p evograph` first")
    now = listing()
    if "--bless" in sys.argv:
        open(LISTING, "w", encoding="utf-8").write(now)
    elif "--check" in sys.argv:
        kept = open(LISTING, encoding="utf-8").read()
        if kept != now:
            sys.stdout.writelines(difflib.unified_diff(
                kept.splitlines(True), now.splitlines(True), "tests/public_api.txt", "cargo doc"))
            sys.exit("public_api.py: the public API differs from tests/public_api.txt; if the "
                     "change is meant, run scripts/public_api.py --bless and commit the listing")
    else:
        sys.stdout.write(now)


if __name__ == "__main__":
    main()
