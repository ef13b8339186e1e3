"""Golden files: compare a value with its stored JSON, or rewrite the file when
``UPDATE_GOLDEN=1`` (see ``tests/golden/__init__.py``), and reduce a frame or an export to its
contract (keys, value types, the enumerated values) with ``shape``.
"""

from __future__ import annotations

import difflib
import json
import os
import random
import secrets
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

GOLDEN_DIR = Path(__file__).resolve().parent
UPDATE_ENV = "UPDATE_GOLDEN"

KEPT_VALUES = frozenset(
    {
        "type",
        "phase",
        "code",
        "status",
        "mode",
        "currency",
        "game",
        "betting",
        "state",
        "kind",
        "street",
        "format",
        "variant",
    }
)
"""Keys whose string values are part of the contract (enumerations: frame types, phases, error
codes...); every other scalar is reduced to its JSON type name."""


def dump(value: Any) -> str:
    """``value`` as the golden files hold it: indented JSON, keys sorted, a final newline."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def assert_golden(name: str, value: Any) -> None:
    """Assert that ``value`` equals the golden file ``tests/golden/<name>`` (JSON), showing a
    unified diff when it does not. With ``UPDATE_GOLDEN=1`` the file is (re)written instead.

    Raises ``AssertionError`` on a difference or a missing file (the message names the
    command that writes it)."""
    path = GOLDEN_DIR / name
    text = dump(value)
    if os.environ.get(UPDATE_ENV) == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    if not path.exists():
        pytest.fail(f"no golden file {path}; write it with {UPDATE_ENV}=1 python -m pytest tests/golden")
    expected = path.read_text(encoding="utf-8")
    if expected != text:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                text.splitlines(keepends=True),
                fromfile=f"golden/{name}",
                tofile="now",
                n=3,
            )
        )
        pytest.fail(
            f"the public contract {name} changed (if on purpose: {UPDATE_ENV}=1 python -m pytest tests/golden):\n"
            + diff,
            pytrace=False,
        )


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    return type(value).__name__


def shape(value: Any, key: str | None = None) -> Any:
    """The contract of a JSON value: a mapping keeps its keys (each value's shape); a list
    becomes one item, the ``merge`` of its items' shapes (an empty list stays empty); a
    scalar becomes its JSON type name (``"int"``, ``"str"``, ``"bool"``, ``"float"``,
    ``"null"``), except a string under one of ``KEPT_VALUES`` (kept as is); a mapping keyed by
    numbers (seats, positions) becomes one ``"<number>"`` key. Ids, amounts,
    cards, seeds and times so drop out; the keys, their types and the enumerations stay."""
    if isinstance(value, Mapping):
        if value and all(str(k).isdigit() for k in value):
            # Keyed by seat or position: which seats a run happened to fill is data, not contract.
            return {"<number>": merge(shape(v, key) for v in value.values())}
        return {str(k): shape(v, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [merge(shape(item, key) for item in value)] if value else []
    if isinstance(value, str) and key in KEPT_VALUES:
        return value
    return _type_name(value)


def merge(shapes: Iterable[Any]) -> Any:
    """The union of several ``shape`` results: mappings merge key by key (a key missing from
    some is written ``"key?"``), lists merge their items, and where the variants differ in
    kind or value they are listed, sorted, under ``{"one_of": [...]}``. A frame type's
    contract is so the same whichever of its frames a run happened to see (the hub may skip
    a stale state for a newer one)."""
    variants = list(shapes)
    mappings = [item for item in variants if isinstance(item, dict)]
    lists = [item for item in variants if isinstance(item, list)]
    others = {json.dumps(item, sort_keys=True) for item in variants if not isinstance(item, dict | list)}
    merged: list[Any] = [json.loads(item) for item in sorted(others)]
    if lists:
        items = [item for sequence in lists for item in sequence]
        merged.append([merge(items)] if items else [])
    if mappings:
        keys = sorted({key.rstrip("?") for mapping in mappings for key in mapping})
        union: dict[str, Any] = {}
        for key in keys:
            present = [mapping[name] for mapping in mappings for name in (key, key + "?") if name in mapping]
            always = all(key in mapping for mapping in mappings)
            union[key if always else key + "?"] = merge(present)
        merged.append(union)
    if len(merged) == 1:
        return merged[0]
    return {"one_of": sorted(merged, key=lambda item: json.dumps(item, sort_keys=True))}


def by_type(frames: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The contract of each frame type seen: ``{type: merge(shapes of its frames)}``."""
    grouped: dict[str, list[Any]] = {}
    for frame in frames:
        grouped.setdefault(str(frame["type"]), []).append(shape(frame))
    return {kind: merge(shapes) for kind, shapes in sorted(grouped.items())}


def seed_secrets(monkeypatch: pytest.MonkeyPatch, seed: int = 21) -> None:
    """Replace the ``secrets`` module's draws (server seeds, client seeds, nonces) with a
    seeded ``random.Random``, so a hand deals the same cards on every run."""
    stream = random.Random(seed)
    monkeypatch.setattr(secrets, "token_bytes", lambda n=32: stream.randbytes(n))
    monkeypatch.setattr(secrets, "token_hex", lambda n=32: stream.randbytes(n).hex())
    monkeypatch.setattr(secrets, "randbelow", lambda n: stream.randrange(n))
