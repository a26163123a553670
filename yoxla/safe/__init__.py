"""Untrusted input: bounded JSON files, bounded folder walks, names and text shown safely, inert CSV cells."""
