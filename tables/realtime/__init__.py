"""The real-time side of tables: the wire contract (frames), the per-process hub, the push
helpers (one path per audience), the WebSocket consumers and their routes."""
