"""Questions drafted for a dataset: offline drafts for a person to edit, or written by a chat model.

- :mod:`~chunkeval.questions.drafts`: evidence sentences sampled offline, each with a draft
  question built from its salient terms (``chunkeval draft-questions``);
- :mod:`~chunkeval.questions.generate`: questions written by a chat model: plan, ask, check,
  assemble (``chunkeval draft-questions --llm``);
- :mod:`~chunkeval.questions.prompt`: the prompt, and reading the model's replies;
- :mod:`~chunkeval.questions.checks`: the checks a generated question passes, and the
  rejection reasons;
- :mod:`~chunkeval.questions.reply_journal`: the append-only replies a rerun reuses;
- :mod:`~chunkeval.questions.chat`: chat completions over the :mod:`chunkeval.endpoints`
  client.

The questions are written as a native JSONL dataset (:mod:`chunkeval.datasets.jsonl`); the
:mod:`chunkeval.datasets` package itself reads and validates datasets and never calls a model.
"""
