"""Shared pure foundations: errors, the clock, files, text output, safe YAML, layout arithmetic, bucket rules."""
