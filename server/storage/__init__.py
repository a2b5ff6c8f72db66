"""Storage: the only layer that touches the database (see ``sql.SqlStore``)."""
