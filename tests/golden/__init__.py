"""Golden contract tests: the public contracts (the OpenAPI schema, the socket frames, the
export formats) captured from the code before the "house and its games" redesign (issue 21),
so that moving code is proved to change none of them.

Regenerate on purpose (a deliberate contract change, reviewed in the diff)::

    UPDATE_GOLDEN=1 python -m pytest tests/golden -p no:cacheprovider

then read ``git diff tests/golden`` and commit it with the change that made it.
"""
