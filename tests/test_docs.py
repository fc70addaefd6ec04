"""What the library's docstrings cite of `docs/` exists: the file, and the section named
after it (`docs/measurement.md`, "The cost database"), a heading or the start of one."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CITATION = re.compile(r'docs/(\w+\.md)`?(?:,? ?\(?"([^"]+)")?')


def citations() -> list[tuple[str, str, str | None]]:
    found = []
    for folder in ("collage_xdsl", "passes", "dialects"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            text = re.sub(r"\s+", " ", path.read_text())
            found += [(str(path.relative_to(ROOT)), doc, section)
                      for doc, section in CITATION.findall(text)]
    return found


def headings(doc: str) -> list[str]:
    return [line.lstrip("#").strip() for line in (ROOT / "docs" / doc).read_text().splitlines()
            if line.startswith("#")]


def test_the_library_cites_the_docs():
    assert len(citations()) > 20


@pytest.mark.parametrize("source, doc, section", citations())
def test_a_cited_section_is_there(source, doc, section):
    assert (ROOT / "docs" / doc).is_file(), f"{source} cites docs/{doc}, which does not exist"
    if section:
        assert any(h.startswith(section) for h in headings(doc)), (
            f"{source} cites docs/{doc}, {section!r}, which is no heading there")


def named_objects() -> list[tuple[str, str]]:
    found = set()
    for folder in ("collage_xdsl", "passes", "dialects", "docs"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".py", ".md"):
                found |= {(str(path.relative_to(ROOT)), name)
                          for name in re.findall(r"collage_xdsl(?:\.\w+)+", path.read_text())}
    return sorted(found)


@pytest.mark.parametrize("source, name", named_objects())
def test_a_named_module_or_object_exists(source, name):
    """`collage_xdsl.measure.timing.balanced_order` in a docstring or doc is importable."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:i]))
            break
        except ImportError:
            continue
    for attribute in parts[i:]:
        assert hasattr(found, attribute), f"{source} names {name}, which does not exist"
        found = getattr(found, attribute)
