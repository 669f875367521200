"""The docs as reference: every setting they name exists, every picture they show is
there, and docs/benchmarks.md holds one current table per benchmark (no lab notebook)."""

from __future__ import annotations

import re
from pathlib import Path

from fairgrid.daemon.settings import SETTINGS

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FILES = ("py", "svg", "md", "toml", "json", "duckdb", "html", "css", "js")  # `console.svg`


def test_every_setting_the_docs_name_exists():
    known = {s.key for s in SETTINGS}
    prefixes = {k.split(".")[0] for k in known}
    named = {(doc.name, m) for doc in DOCS for m in re.findall(
        r"`((?:" + "|".join(sorted(prefixes)) + r")\.[a-z_]+)`", doc.read_text())}
    unknown = sorted((doc, m) for doc, m in named
                     if m not in known and m.split(".")[1] not in FILES)
    assert named and not unknown, unknown


def test_every_picture_the_docs_show_is_there():
    for doc in DOCS:
        for target in re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", doc.read_text()):
            assert (doc.parent / target).is_file(), (doc.name, target)


def test_benchmarks_are_one_current_table_each():
    text = (ROOT / "docs" / "benchmarks.md").read_text()
    sections = re.split(r"^## ", text, flags=re.M)[1:]
    assert len(sections) > 20
    for section in sections:
        title = section.splitlines()[0]
        tables = re.findall(r"^\| ?:?-{3}", section, flags=re.M)
        assert len(tables) <= 1, f"{title}: {len(tables)} tables"
        assert not re.search(r"^### ", section, flags=re.M), f"{title}: a subsection"
        if title not in ("At a glance", "Measured and not adopted"):
            assert "```" in section, f"{title}: no command"
    for notebook in (r"\bRun \d+'s\b", r"not recorded", r"\bsession \d", r"\bbefore the fix\b",
                     r"\(\d+(\.\d+)?× before\)"):
        assert not re.search(notebook, text), notebook
