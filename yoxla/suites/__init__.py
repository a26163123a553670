"""Eval suites as manifests: datasets, templates, few-shot, extraction, metrics and graders.

A suite is one JSON or YAML file (the MKA1 eval-suite manifest surface, field for field).
The stages, each a small module with typed inputs and outputs:

* :mod:`.spec`        the manifest's fields and limits (pydantic models);
* :mod:`.loader`      read and check a manifest file into :class:`~.loader.SuiteManifest`;
* :mod:`.datasets`    local JSONL/CSV and Hugging Face rows, read by content, fingerprinted;
* :mod:`.templates`   ``{{field}}`` rendering (no expressions);
* :mod:`.prepare`     rows -> preprocessed items -> exact messages, few-shot included;
* :mod:`.extraction`  raw output -> extracted answer (``none`` … ``strict``);
* :mod:`.builtins`    graders that need no Python (accuracy, spans, abstention, …);
* :mod:`.worker`      user Python (graders, preprocessors) in a separate process;
* :mod:`.scoring`     the one scoring function for stored outputs (runner, rescore, admission);
* :mod:`.judge`       stored judge requests and responses, replayed on re-scoring;
* :mod:`.generation`  generation settings and which passthrough keys an upstream may get;
* :mod:`.hashing`     task and suite hashes, the frozen hash file and ``suite check``;
* :mod:`.cli`         ``yoxla suite validate | render | check``.

Importing this package is light; pyarrow, huggingface_hub and regex load only when used.
"""

from __future__ import annotations
