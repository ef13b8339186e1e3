"""The REST API's contract: the OpenAPI schema drf-spectacular generates (the one
``/api/schema/`` serves) equals ``tests/golden/openapi.json``.

Regenerate on purpose: ``UPDATE_GOLDEN=1 python -m pytest tests/golden/test_openapi.py``."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management import call_command

from tests.golden.golden import assert_golden


def test_the_openapi_schema_is_unchanged(tmp_path: Path) -> None:
    out = tmp_path / "schema.json"
    call_command("spectacular", "--validate", "--format", "openapi-json", "--file", str(out))
    assert_golden("openapi.json", json.loads(out.read_text(encoding="utf-8")))
