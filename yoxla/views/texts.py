"""Static text of the app (Markdown written by us; no data from files is ever put in it)."""

from __future__ import annotations

from yoxla.admission.rules import MAX_BYTES
from yoxla.record.base import TOLERANCE

INTRO = """# YOXLA leaderboard
Language models in Azerbaijani on eleven frozen tasks in four blocks; every number is recomputed
from the answers each result file stores. Pick the edition or an eval suite under *Board*.
"""

METHODOLOGY = f"""## How scores are computed
* Each task has a frozen contract (prompt, answer space, evaluator). Answers are parsed
  strictly: anything outside the answer space is *invalid* and scores as wrong; a *near-miss
  kind* (e.g. Turkish spelling, trailing punctuation) is recorded for diagnosis only.
* **Task score** = the task's primary metric clamped to [0, 1] × 100 (accuracy, span recall,
  overall score with abstention, or Spearman correlation for STS).
* **Block score** = mean of its task scores; **YOXLA** = mean of the four block scores.
* **Intervals**: 95% percentile bootstrap over examples, B = 1000, fixed seed: examples are
  resampled within each task (Spearman is recomputed per resample), and block and YOXLA
  averages are recomputed per resample. All models share the same resamples, so the
  difference of two models has a paired interval.
* **Rank range**: from one plus the number of models whose interval lies wholly above this
  model's (LMArena's rule), to the number of models minus those whose interval lies wholly
  below it. `1–3` means the intervals cannot order the model more finely than that. Rows are
  sorted by the edition's declared ranking order (the YOXLA score, then group consistency, the
  high-confidence error rate and mean gold probability as tie-breakers; the rule is under the
  leaderboard); filters hide rows but never re-rank.
* **Calibration** (Calibration tab): where a result file stores the model's probability of each
  answer, mean gold probability, high-confidence error rate, Brier score, ECE with its reliability
  diagram, and agreement of the answer with the most probable label, each with a 95% bootstrap
  interval over examples (docs/calibration.md).
* **Boards**: runs with reasoning on, or with a changed temperature or system prompt, are
  ranked only among runs under the same conditions. Files whose scores could not be
  re-checked, and results reported elsewhere (release notes), are listed apart, never ranked.
* **Floors and chance**: the best cue-only floor of a task is the best score of strategies
  that read nothing or only a surface cue (`yoxla floors`); the chance level is the expected
  score of a uniform guess over the answer space. The leaderboard shows the floors, averaged
  like a model's scores, as a grey reference row.
* **Compare**: paired bootstrap interval of A − B per task, block and overall; for choice
  tasks McNemar's exact test on the items one model got right and the other wrong.
* **Task spreads** (Tasks tab): a task whose range across models is smaller than the median width of
  its models' intervals no longer separates models.

## Admission: one rule, shared with `yoxla verify`
A result file is shown only when all of these hold; otherwise it is excluded, with every
reason listed below.
1. A readable JSON object of at most {MAX_BYTES // 2**20} MB, of a known format version, valid
   against the result format's JSON Schema (no NaN or infinities, no negative counts).
2. `content_sha256` equals the digest recomputed from the content.
3. A signature, if present, verifies against the key it names (a failing one excludes the
   file). A valid signature by a key listed in `trusted_keys.json` makes the row
   **verified**; any other valid signature, or none, makes it **community**.
4. The edition is known; per task the row count and dataset fingerprint equal the edition's
   manifest, and the suite, contract and prompt hashes equal the frozen contract's.
5. Every task of the edition is present and the predicted example ids equal the dataset's
   ids exactly (none missing, none extra, none twice). Partial runs never appear.
6. Re-scoring the stored raw answers against the edition's gold with the current evaluators
   reproduces every stored task score (to {TOLERANCE:g}). For `sample` the data is bundled; for
   `v1` a local copy (`YOXLA_DATA_DIR`) or the Hub is used, and when neither is reachable the
   file is admitted on checks 1–5 and marked "scores not re-checked".
7. Of two files for the same provider and model in one edition, the one of higher trust is shown
   (a community file never replaces a verified one); at equal trust, the newer. The other is listed
   as superseded.

Generation errors do not exclude a file, but the row is flagged with their count: they can
move a score for reasons that have nothing to do with the model.
"""

SUBMIT = """## Add a model
1. Install: `pip install -r requirements.txt && pip install -e .`
2. Run the benchmark (an OpenAI-compatible API shown; see the README for local models), naming the
   model as the board should show it and stating the facts the filters use:
   ```
   python runner.py --provider openai --model MODEL --edition v1 --block all \\
     --display-name "Org Model 8B" --model-card https://huggingface.co/ORG/MODEL \\
     --license apache-2.0 --weights open --params 8e9
   ```
   (or put those facts in a small YAML file and pass `--model-info FILE.yaml`: keys `display_name`,
   `model_card`, `license`, `weights` (`open` or `closed`) and `params`). The runner writes one result
   file per model under `results/v1/`; a local model's folder path is never written into it.
3. Check it exactly as this leaderboard will:
   ```
   yoxla verify results/v1/YOUR_FILE.json
   ```
   It prints `ADMITTED` or `EXCLUDED` with every reason, and exits non-zero when excluded.
4. Open a pull request that adds that one file, at {place}. The `verify-results` workflow runs the
   same check on every result file in the pull request, so you know before any review whether it
   will be admitted. Signed files (`yoxla keygen`, then `--sign-key` when running) are shown
   as *verified* once a maintainer adds your public key to `trusted_keys.json`; unsigned
   files are shown as *community*.
"""


_MD_SPECIAL = set("\\`*_{}[]()#+-.!|~>")


def md(text: object) -> str:
    """Text from a manifest or a file, safe inside our Markdown: HTML and Markdown characters
    escaped, white space collapsed to one line (it is shown as the words it is, never as markup)."""
    out = []
    for ch in " ".join(str(text).split()):
        if ch == "<":
            out.append("&lt;")
        elif ch == "&":
            out.append("&amp;")
        elif ch in _MD_SPECIAL:
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


SUITE_METHOD = """## How a suite board is computed
* A suite is a manifest committed under `suites/` (prompts, data, extraction, graders). A result file
  names its suite by id and hash and is re-scored **only with the committed suite**: its graders run
  in a worker process, stored judge calls are replayed (never sent again), and every stored number
  must be reproduced. No code or path from a result file is ever used.
* **Task score** = the task's primary metric (its first declared metric) clamped to [0, 1] × 100.
  A task whose primary metric is *lower-is-better* has no 0–100 score: its raw value is shown
  instead, and it is left out of the suite score.
* **Suite score** = the mean of the task scores that exist.
* **Intervals**: 95% percentile bootstrap over items, B = 1000, fixed seed, the same resamples for
  every model; a task whose score is not the mean of per-item scores (a batch grader, grader errors)
  has no interval.
* **Judge-scored** tasks are marked; the judge model each file used is shown beside its score.
* Boards: runs whose generation settings differ from the manifest's, or with reasoning on, are
  ranked apart, as for the benchmark.
"""

REVIEW = """### Review status of the rows
A row counts as **reviewed** when a person's blind annotation of its current text gives the gold
label and nobody doubted it, or when a disagreement was settled by a person in `resolutions.csv`.
Annotations made by a model are compared like anyone's but never mark a row reviewed. To review
rows: `yoxla annotate export --edition E --annotator NAME` writes a blind, shuffled sheet under
`annotations/<edition>/`; fill in the labels; `yoxla annotate compare` reports agreement, Cohen's κ
and every disagreement; settle each one in `resolutions.csv`; `yoxla annotate status` gives this
table (docs/annotation.md). Span and similarity tasks have no closed answer space and are not
annotated this way.
"""


def code(text: object) -> str:
    """Text from a manifest or a file as a Markdown code span (shown verbatim, one line, no backticks)."""
    return "`" + " ".join(str(text).replace("`", "'").split()) + "`"
