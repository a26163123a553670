"""The public leaderboard: admission of result files, tables, bootstrap intervals, figures.

Everything here is plain functions over plain data, so tests call it without Gradio;
``app.py`` only lays out components and wires events. Heavy libraries (pandas, plotly,
huggingface_hub) are imported by the modules that need them, never by ``yoxla.leaderboard``.
"""
