"""The docs pages stay true: every generated block (the settings, the RPCs of each service, the card Golf presets and
house rules) is what ``make docs`` would write today, and every relative link of the README and the docs pages points
to a file that exists (and, with an ``#anchor``, to a heading of that page)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).parents[2]
PAGES = sorted([ROOT / "README.md", ROOT / "bench" / "README.md", *(ROOT / "docs").glob("*.md")])
"""The pages whose links are checked: the README, the benchmarks' README and every docs page."""

_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)
_CODE = re.compile(r"`[^`\n]*`")


def _generator() -> ModuleType:
    """``tools/gen_docs.py``, loaded from its path (``tools`` is no package)."""
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "tools" / "gen_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _anchors(page: Path) -> set[str]:
    """The anchors GitHub makes for the headings of ``page``: lower case, punctuation dropped, spaces as hyphens, a
    repeated heading numbered."""
    found: set[str] = set()
    for line in _FENCE.sub("", page.read_text()).splitlines():
        if not line.startswith("#"):
            continue
        slug = re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        anchor, n = slug, 0
        while anchor in found:
            n += 1
            anchor = f"{slug}-{n}"
        found.add(anchor)
    return found


def test_generated_blocks_are_fresh() -> None:
    generator = _generator()
    stale = [str(page.relative_to(ROOT)) for page, _ in generator.stale()]
    assert not stale, f"generated docs are stale, run make docs: {', '.join(stale)}"


def test_every_page_has_its_generated_blocks() -> None:
    text = "".join(page.read_text() for page in PAGES)
    for block in ("settings", "trusted-issuer", "house-rules", "presets"):
        assert f"<!-- generated: {block} -->" in text
    for service in ("PlayerService", "SolitaireService", "TableService", "RecordService", "WebhookService"):
        assert f"<!-- generated: rpcs golf.v1.{service} -->" in text


def test_an_unknown_block_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown generated block"):
        _generator().render("nothing")


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_relative_links_point_to_files(page: Path) -> None:
    text = _CODE.sub("", _FENCE.sub("", page.read_text()))
    broken: list[str] = []
    for target in _LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # http:, https:, mailto: ...
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists() or (anchor and linked.suffix == ".md" and anchor not in _anchors(linked)):
            broken.append(target)
    assert not broken, f"{page.relative_to(ROOT)}: links to nothing: {broken}"


def test_the_readme_is_an_index() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    assert readme.splitlines()[2].strip().startswith("make run")
    for page in (ROOT / "docs").glob("*.md"):
        assert f"(docs/{page.name})" in readme, f"the README does not link docs/{page.name}"
