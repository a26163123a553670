"""Where the project lives, how to cite it, and what YOXLA does not measure (static facts).

The repository is the Space the app runs as (``SPACE_ID``, set by Hugging Face Spaces), else
``YOXLA_REPOSITORY_URL``; both are checked (an owner/name, an https address) before they are
written into a link, and neither set gives no repository link rather than a guessed one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from yoxla import __version__
from yoxla.safe.text import plain_https, repo_id

DATASET_ID = "LocalDoc/YOXLA-Benchmark"
DATASET_URL = f"https://huggingface.co/datasets/{DATASET_ID}"
REPOSITORY_ENV = "YOXLA_REPOSITORY_URL"


def space_id(environ: Mapping[str, str] | None = None) -> str | None:
    """The Space's ``owner/name`` when the app runs as a Hugging Face Space (checked), else None."""
    value = (environ if environ is not None else os.environ).get("SPACE_ID", "").strip()
    return value if repo_id(value) else None


def repository_url(environ: Mapping[str, str] | None = None) -> str | None:
    """The repository a pull request goes to: the Space's page, else ``YOXLA_REPOSITORY_URL``."""
    env = environ if environ is not None else os.environ
    space = space_id(env)
    if space is not None:
        return f"https://huggingface.co/spaces/{space}"
    given = env.get(REPOSITORY_ENV, "").strip().rstrip("/")
    return given if plain_https(given) else None


def pull_request_place(environ: Mapping[str, str] | None = None) -> str:
    """Where exactly to open the pull request, as Markdown we wrote."""
    env = environ if environ is not None else os.environ
    space = space_id(env)
    if space is not None:
        url = f"https://huggingface.co/spaces/{space}/discussions"
        return (
            f"the Space's pull requests, [{url}]({url}) (*New pull request*; or push to "
            f"`refs/pr/N` with `git push https://huggingface.co/spaces/{space} HEAD:refs/pr/N`)"
        )
    repo = repository_url(env)
    if repo is not None:
        return f"the repository this board is built from, [{repo}]({repo})"
    return (
        "the repository this board is built from (this copy of the app names none: its operator can set "
        f"`SPACE_ID` or `{REPOSITORY_ENV}`)"
    )


CITATION = f"""@misc{{yoxla2026,
  title        = {{{{YOXLA}}: a reproducible benchmark of language models in {{Azerbaijani}}}},
  author       = {{{{LocalDoc}}}},
  year         = {{2026}},
  howpublished = {{\\url{{{DATASET_URL}}}}},
  note         = {{yoxla {__version__}, edition v1}}
}}"""

NOT_MEASURED = """## What YOXLA does not measure
* **Writing Azerbaijani.** Every answer is a label, a number or a span copied from the given text.
  A model that reads Azerbaijani well but writes it badly (wrong suffixes, Turkish spellings, stiff
  phrasing) can score high here: producing the language is not tested.
* **Recall, as opposed to recognition.** The knowledge and language tasks show candidates and ask
  which one is right (the facts task: one of 20 numbered answers). Recognising the right answer in a
  list is easier than producing the fact or the word unprompted, so these scores are an upper bound
  on what a model knows on its own.
* **Anything above the sentence.** Items are single sentences or short passages with one question.
  Long documents, a conversation over several turns, following a multi-step instruction, summarising
  or keeping a text coherent over paragraphs are all out of scope.
* **Open-ended quality, hence no judge.** Nothing is scored by another model. A judge model would make
  every number depend on that judge's own Azerbaijani, its version and its prompt, and a stored
  score could no longer be recomputed exactly from the stored answers. Closed answer spaces are the
  price of numbers anyone can re-check; eval suites with judge-scored tasks are labelled as such.
"""


def about_markdown(environ: Mapping[str, str] | None = None) -> str:
    """The About section: links, versions, citation and the limits (Markdown we wrote)."""
    repo = repository_url(environ)
    repo_line = f"[{repo}]({repo})" if repo else "not named by this copy of the app"
    return f"""## About YOXLA
* **Repository:** {repo_line} (code, result files, docs; pull requests add models).
* **Dataset:** [{DATASET_ID}]({DATASET_URL}) on the Hugging Face Hub (edition `v1`); the small
  `sample` edition is bundled with the code under CC BY 4.0.
* **Docs:** `docs/leaderboard.md` (this board), `docs/running.md` (the runner),
  `docs/result-format.md` (the result file), `docs/suites.md` (eval suites), in the repository.
* **Code:** yoxla {__version__}, under the Apache-2.0 licence.

### Cite
```bibtex
{CITATION}
```

{NOT_MEASURED}"""
