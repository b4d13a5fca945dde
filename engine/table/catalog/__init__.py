"""The catalog: a table's records (snapshots, schemas, files, specs, deletion vectors, stream marks) in SQL."""
