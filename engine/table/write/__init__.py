"""The write path: rows fitted to a schema, files written, one catalog commit."""
