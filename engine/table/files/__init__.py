"""Data files: where they live, how they are written and read, and their statistics."""
