"""Filter expressions: one tree, bound to a schema, from tuples, ``fs.col`` references or text."""
