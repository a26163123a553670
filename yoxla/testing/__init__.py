"""Test stand-ins that ship with the package (a scripted OpenAI-compatible server)."""
