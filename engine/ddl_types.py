"""Type text for ALTER statements: :mod:`fieldshift.type_text` (the schema model parses it, ``SchemaUpdate``
included); this path keeps the names importable where the DDL modules used to define them."""

from fieldshift.errors import TypeSyntaxError
from fieldshift.type_text import PLACEHOLDER_ID, parse_type

__all__ = ["PLACEHOLDER_ID", "TypeSyntaxError", "parse_type"]
