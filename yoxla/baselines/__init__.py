"""Cue-only strategies: the floors a model has to beat, served like a model, and the shortcut gate."""
