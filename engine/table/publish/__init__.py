"""Publishing fieldshift tables in other formats' metadata, beside the same data files (Iceberg today)."""

from fieldshift.table.publish.iceberg_publish import METADATA_DIR, PublishResult, publish_iceberg, published_version

__all__ = ["METADATA_DIR", "PublishResult", "publish_iceberg", "published_version"]
