"""Plain HTTP on the race port: the pages (Jinja2 templates), /healthz, /metrics, and the
browser client's files, which speak docs/protocol.md like any outside client."""
