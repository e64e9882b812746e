"""Evaluation: where a new data set, metric or run report goes.

- :mod:`agent.evaluation.datasets`: data set files in, one item shape out.
- :mod:`agent.evaluation.metrics`: scores and summaries.
- :mod:`agent.evaluation.cost`: what a question and a run cost.
- :mod:`agent.evaluation.environments`: the environment of a run from its options.
- :mod:`agent.evaluation.runner`: ``pyql eval`` (run files, resume, concurrency).
- :mod:`agent.evaluation.shards`, :mod:`agent.evaluation.merging`: a run spread over machines, read back as one.
- :mod:`agent.evaluation.compare`, :mod:`agent.evaluation.paired`, :mod:`agent.evaluation.compare_html`: ``pyql compare``.
- :mod:`agent.evaluation.smoke`: smoke runs (gold replays on the fixtures).
- :mod:`agent.evaluation.step_tree`: a record's steps as a tree.
- :mod:`agent.evaluation.trace_html`, :mod:`agent.evaluation.trace_text`: the HTML trace, one question as text.
"""
