"""Streams into tables: landing-directory capture and exactly-once stream commits."""
