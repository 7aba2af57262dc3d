"""The HTTP API (JSON under /api/v1, server-sent events) served by the daemon."""
