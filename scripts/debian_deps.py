#!/usr/bin/env python3
"""Turn a Debian `Packages` index into a tab-separated dependency edge list.

One line `package<TAB>dependency` per Depends / Pre-Depends entry; every alternative of
`a | b` gets its edge, version constraints and architecture qualifiers are dropped.
(Packages that depend on nothing and that nothing depends on have no line.)

    /usr/lib/apt/apt-helper cat-file /var/lib/apt/lists/*_main_binary-amd64_Packages.lz4 > Packages
    python3 scripts/debian_deps.py Packages deps.tsv
    evograph ingest debian deps.tsv --keys string
"""
import re
import sys

FIELDS = ("Depends:", "Pre-Depends:")


def packages(path):
    """Yields (name, [dependency names]) per stanza."""
    name, deps = None, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("Package:"):
                name = line.split(":", 1)[1].strip()
            elif line.startswith(FIELDS):
                for alt in re.split(r"[,|]", line.split(":", 1)[1]):
                    dep = re.sub(r"\(.*?\)|\[.*?\]|<.*?>", "", alt).strip().split(":")[0]
                    if dep:
                        deps.append(dep)
            elif not line.strip() and name:
                yield name, deps
                name, deps = None, []
    if name:
        yield name, deps


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: debian_deps.py Packages OUT.tsv")
    edges = 0
    with open(sys.argv[2], "w", encoding="utf-8") as out:
        for name, deps in packages(sys.argv[1]):
            for d in dict.fromkeys(deps):
                out.write(f"{name}\t{d}\n")
                edges += 1
    print(f"{edges} dependency edges", file=sys.stderr)


if __name__ == "__main__":
    main()
