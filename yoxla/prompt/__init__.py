"""From a task to what is sent: templates, items with their answer space, the exact messages, generation settings."""
