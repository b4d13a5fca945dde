"""A table's schema changes: on-write evolution and what every change must keep readable."""
