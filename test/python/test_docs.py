"""docs/ stays true: the layout pictures are what the layout code draws today, every relative
link of the README and docs/ points at a file that exists, and every page is in the index."""

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _pictures():
    spec = importlib.util.spec_from_file_location("layout_pictures", DOCS / "layout_pictures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_layout_pictures_are_up_to_date():
    pictures = _pictures()
    text = pictures.PAGE.read_text()
    assert pictures.render(text) == text, "run: python docs/layout_pictures.py"
    drawn = set(re.findall(r"<!-- picture ([\w-]+) -->", text))
    assert drawn == set(pictures.PICTURES), "every picture is on the page once, and no other"


def test_relative_links_point_at_files():
    pages = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    broken = []
    for page in pages:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if "://" in target:
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not broken, "broken links: " + ", ".join(broken)


def test_every_page_is_in_the_index():
    index = (DOCS / "README.md").read_text()
    for page in DOCS.rglob("*.md"):
        name = page.relative_to(DOCS).as_posix()
        if name != "README.md":
            assert f"]({name})" in index, f"docs/README.md does not link {name}"
