"""The README's Python examples run as written: every ``python`` block of its "From
Python" section, each in a fresh namespace, in a directory of its own."""

from __future__ import annotations

import re

import pytest

from conftest import REPO


def _examples() -> list:
    text = (REPO / "README.md").read_text()
    section = text.split("## From Python", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_the_section_has_its_examples():
    assert len(_examples()) >= 4


@pytest.mark.parametrize("i", range(len(_examples())))
def test_readme_example_runs(i, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = _examples()[i]
    exec(compile(code, f"README.md python example {i + 1}", "exec"), {"__name__": "__readme__"})
