"""The project's own import graph has no cycle, at module level (function-local imports
included, ``if TYPE_CHECKING:`` left out) nor at app level (issue 21, "the rooms enforced").
On failure the message is ``bin/import_cycles``'s report: each cycle with the imports that
close it (``path:line``)."""

from __future__ import annotations

from tests.importgraph import cycles, describe_cycles


def test_no_import_cycle_at_module_or_app_level() -> None:
    module_level, app_level, _ = cycles()
    assert (module_level, app_level) == ([], []), describe_cycles()
