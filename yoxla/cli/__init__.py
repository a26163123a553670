"""The `yoxla` command line: its entry point, what every command shares, `yoxla suite …` and `yoxla verify`."""
