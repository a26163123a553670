"""The result file: typed records, the v3 derivation, the v2 reader, digests and signatures, the published schema."""
