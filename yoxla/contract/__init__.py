"""The contract: the manifest format (typed records), loading, hashing, the suite registry and the package benchmark."""
