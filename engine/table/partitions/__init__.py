"""Partitioned tables: specs, transforms, pruning, partitioned writes and partition DDL."""
