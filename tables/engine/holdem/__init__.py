"""Texas Hold'em engine (placeholder: the state machine branch provides the real package init)."""

from __future__ import annotations
