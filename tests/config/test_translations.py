"""The Italian catalogs are complete and consistent (issue 11, item 4): every string the
templates, the Python code and static/js mark for translation has a non-fuzzy Italian
translation, placeholders survive translation, and the committed .mo files say what the .po
files say (the .mo files are committed: a fresh checkout needs no msgfmt)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.core.management import call_command

LOCALE = Path(settings.BASE_DIR) / "locale"
CATALOGS = [LOCALE / "it" / "LC_MESSAGES" / f"{domain}.po" for domain in ("django", "djangojs")]
PLACEHOLDER = re.compile(r"%\([a-z_]+\)s|%s|%d")
# Sources makemessages reads; the rest of the tree (tests, benchmarks, vendor code) is not the site's text.
SOURCES = ["backoffice", "config", "handhistory", "jackpots", "lobby", "tables", "wallet", "templates", "static"]


def _key(entry: polib.POEntry | polib.MOEntry) -> tuple[str | None, str]:
    return entry.msgctxt, entry.msgid


@pytest.mark.parametrize("path", CATALOGS, ids=lambda p: p.name)
def test_every_message_has_an_italian_translation(path: Path) -> None:
    catalog = polib.pofile(str(path))
    assert len(catalog) > 100
    untranslated = [e.msgid for e in catalog if not e.translated()]
    fuzzy = [e.msgid for e in catalog if "fuzzy" in e.flags]
    assert untranslated == [] and fuzzy == []
    assert catalog.metadata["Plural-Forms"] == "nplurals=2; plural=(n != 1);"


@pytest.mark.parametrize("path", CATALOGS, ids=lambda p: p.name)
def test_placeholders_survive_translation(path: Path) -> None:
    for entry in polib.pofile(str(path)):
        wanted = sorted(PLACEHOLDER.findall(entry.msgid))
        translations = entry.msgstr_plural.values() if entry.msgid_plural else [entry.msgstr]
        for text in translations:
            assert sorted(PLACEHOLDER.findall(text)) == wanted or (
                entry.msgid_plural and set(PLACEHOLDER.findall(text)) <= set(wanted)
            ), entry.msgid


@pytest.mark.parametrize("path", CATALOGS, ids=lambda p: p.name)
def test_the_committed_mo_says_what_the_po_says(path: Path) -> None:
    po = {_key(e): (e.msgstr, dict(e.msgstr_plural)) for e in polib.pofile(str(path)) if e.translated()}
    mo = {_key(e): (e.msgstr, dict(e.msgstr_plural)) for e in polib.mofile(str(path.with_suffix(".mo")))}
    mo.pop((None, ""), None)  # the header
    assert mo == po, "run bin/compile-messages after editing a .po file"


@pytest.mark.skipif(shutil.which("xgettext") is None, reason="makemessages needs GNU gettext (xgettext)")
def test_no_string_marked_for_translation_is_missing_from_the_catalogs(
    tmp_path: Path, settings: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run makemessages over a copy of the sources into an empty locale directory: every
    message it finds must be in the committed catalog (a new {% translate %} without an
    Italian translation fails here)."""
    for name in SOURCES:
        shutil.copytree(
            Path(settings.BASE_DIR) / name,  # type: ignore[attr-defined]
            tmp_path / name,
            ignore=shutil.ignore_patterns("vendor", "__pycache__", "migrations", "cards"),
        )
    (tmp_path / "locale").mkdir()
    settings.LOCALE_PATHS = [tmp_path / "locale"]  # type: ignore[attr-defined]
    monkeypatch.chdir(tmp_path)
    call_command("makemessages", locale=["it"], no_location=True, verbosity=0)
    call_command("makemessages", domain="djangojs", locale=["it"], no_location=True, verbosity=0)
    for committed in CATALOGS:
        found = {_key(e) for e in polib.pofile(str(tmp_path / "locale" / "it" / "LC_MESSAGES" / committed.name))}
        known = {_key(e) for e in polib.pofile(str(committed))}
        assert len(found) > 100
        assert sorted(found - known, key=str) == [], f"{committed.name}: run makemessages and translate"
