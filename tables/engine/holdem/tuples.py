"""Small helpers of the hand state machine (tables/engine/holdem/state.py) on per-player tuples."""

from __future__ import annotations

from typing import TypeVar

_T = TypeVar("_T")


def _set(values: tuple[_T, ...], i: int, value: _T) -> tuple[_T, ...]:
    return (*values[:i], value, *values[i + 1 :])


def _add(values: tuple[int, ...], i: int, delta: int) -> tuple[int, ...]:
    return (*values[:i], values[i] + delta, *values[i + 1 :])


def _rotation(start: int, n: int) -> list[int]:
    return [(start + k) % n for k in range(n)]
