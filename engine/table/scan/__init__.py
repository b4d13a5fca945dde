"""The scan pipeline: a read source's facts in, evolved, filtered and merged Arrow out."""
