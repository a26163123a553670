"""Rows by content: dataset folders, the Hugging Face Hub, editions, a suite task's datasets, row checks and validation."""
