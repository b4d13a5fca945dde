"""Primary-key tables: keys and buckets, keyed writes, key lookups, merge-on-read."""
