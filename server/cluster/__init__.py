"""A server's place in its cluster: a node alone or one of a cluster on Redis (leases,
takeovers, heartbeat), the quick-race pooler, and the bus the nodes talk over."""
