"""The runner: send every example of the benchmark to a provider and keep everything.

``engine`` holds the run loop and the run folder's scoring, ``artifacts`` the files,
``commands`` the command line (``python runner.py …`` = ``yoxla run …``). Nothing here is
imported by ``import yoxla``.
"""
