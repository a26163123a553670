"""The app's tabs, one module per tab with its own tables and figures, and the shared format and plot helpers."""
