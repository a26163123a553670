"""From a model's raw text to an answer: the strict parser, the manifest's extractors, numbers, Azerbaijani text rules."""
