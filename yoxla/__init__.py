"""YOXLA: evaluation framework for large language models in Azerbaijani.

Importing the package is cheap: heavy libraries (huggingface_hub, pyarrow, torch, transformers, gradio)
are imported only by the functions that need them.
"""

__version__ = "0.1.0"
