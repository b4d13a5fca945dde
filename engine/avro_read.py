"""``schema_from_avro`` at the path it had before the parser moved to :mod:`fieldshift.avro_parse` (below
``Schema``, which delegates to it); users import it from :mod:`fieldshift.avro`."""

from fieldshift.avro import schema_from_avro

__all__ = ["schema_from_avro"]
