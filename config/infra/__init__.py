"""The project's plumbing: no domain code, and it imports no app, so every app may import it
(the bottom room of the "Apps in layers" contract, pyproject.toml): metrics, structured logs,
the operators' shared state, partitions and migration helpers, the client's address, the
refusal base class (``DomainError``), the REST plumbing every app's API shares and the API's
rate limits. The rest of ``config`` only wires: settings, URLs, ASGI, WSGI and Celery."""
