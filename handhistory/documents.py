"""The project's Markdown documents rendered for people (issue #11, C): tables and fenced code,
with raw HTML shown as text and only safe link targets, so a document can never inject markup
or script into the page."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from functools import lru_cache
from pathlib import Path

import markdown
from markdown.extensions import Extension
from markdown.treeprocessors import Treeprocessor

SAFE_SCHEMES = ("http://", "https://", "mailto:", "#", "/", "./", "../")


class _SafeLinks(Treeprocessor):
    """Drop link and image targets with a scheme other than http(s) or mailto (``javascript:``,
    ``data:``): the text stays, the target goes. Tables, which may scroll sideways, take
    keyboard focus."""

    def run(self, root: ET.Element) -> None:
        for element in root.iter():
            if element.tag == "table":
                element.set("tabindex", "0")  # scrolls sideways: reachable from the keyboard
            for attribute in ("href", "src"):
                target = element.get(attribute)
                if target is None:
                    continue
                bare = target.strip().lower()
                relative = ":" not in bare.split("/", 1)[0]
                if not (bare.startswith(SAFE_SCHEMES) or relative):
                    del element.attrib[attribute]


class _NoRawHtml(Extension):
    def extendMarkdown(self, md: markdown.Markdown) -> None:  # noqa: N802 (the library's name)
        md.preprocessors.deregister("html_block")
        md.inlinePatterns.deregister("html")
        md.treeprocessors.register(_SafeLinks(md), "safe_links", 0)


def render_markdown(text: str) -> str:
    """HTML for ``text``: tables, fenced code, heading anchors (``toc``); raw HTML escaped.

    >>> render_markdown("<script>x</script> **a**")
    '<p>&lt;script&gt;x&lt;/script&gt; <strong>a</strong></p>'
    """
    html = markdown.markdown(
        text,
        extensions=["tables", "fenced_code", "toc", "sane_lists", _NoRawHtml()],
        output_format="html",
    )
    # Fenced code is stashed past the tree processors; raw HTML is escaped, so every <pre>
    # here is the renderer's own. Code blocks scroll sideways: reachable from the keyboard.
    return html.replace("<pre>", '<pre tabindex="0">')


@lru_cache(maxsize=8)
def _render_file(path: Path, mtime: float) -> tuple[str, str]:
    text = path.read_text(encoding="utf-8")
    title = next((line.lstrip("# ").strip() for line in text.splitlines() if line.startswith("# ")), path.stem)
    return title, render_markdown(text)


def render_document(path: Path) -> tuple[str, str]:
    """``(title, html)`` of a Markdown file of the repository, cached until it changes."""
    return _render_file(path, path.stat().st_mtime)


def localized_document(path: Path, language: str | None) -> tuple[Path, bool]:
    """The version of the document ``path`` (``docs/rules.md``) written in ``language``
    (``docs/rules.it.md`` for "it"), when there is one.

    Returns ``(path to render, True)`` when the document exists in ``language`` (English is
    the original), else ``(path, False)``: the page shows the English text with a note.
    """
    code = (language or "en").split("-")[0]
    if code == "en":
        return path, True
    translated = path.with_name(f"{path.stem}.{code}{path.suffix}")
    return (translated, True) if translated.is_file() else (path, False)


def path_lang(path: Path) -> str:
    """The language a document file is written in: ``rules.it.md`` -> "it", ``rules.md`` -> "en"."""
    parts = path.name.split(".")
    return parts[-2] if len(parts) > 2 else "en"
