"""Publishing fieldshift tables in other formats' metadata, beside the same data files (Iceberg today):
``iceberg_publish`` (the catch-up), ``iceberg_types`` (schemas and the checks), ``iceberg_entries``
(data files as manifest entries), ``iceberg_io`` (PyIceberg's file interface over the table's storage).
Nothing is imported here, so the catalog can import the checks without importing the catch-up."""
