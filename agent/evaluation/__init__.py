"""Evaluation: where a new data set, metric or run report goes.

- :mod:`agent.evaluation.datasets`: data set files in, one item shape out.
- :mod:`agent.evaluation.metrics`: scores and summaries.
- :mod:`agent.evaluation.environments`: the environment of a run from its options.
- :mod:`agent.evaluation.runner`: ``pyql eval`` (run files, resume, concurrency).
- :mod:`agent.evaluation.smoke`: smoke runs (gold replays on the fixtures).
- :mod:`agent.evaluation.trace_html`: the HTML trace.
"""
