"""The schema model in other systems' forms: Arrow fields, Avro records, Iceberg's JSON."""
