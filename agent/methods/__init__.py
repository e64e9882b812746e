"""The agent methods: where a new agent method goes.

- :mod:`agent.methods.query_agent`: QueryAgent, one action per LLM call
  (text, tools, grammar and choose modes); :mod:`agent.methods.choose` the
  choose mode's numbered list.
- :mod:`agent.methods.readi_loop`, :mod:`agent.methods.readi`,
  :mod:`agent.methods.readi_table`: Readi (generate, instantiate, edit) on a
  KB and on a table; :mod:`agent.methods.reasoning_path` and
  :mod:`agent.methods.instantiate` its paths.
- :mod:`agent.methods.ranking`: relation rankers (BM25, embeddings).
- :mod:`agent.methods.episode`: the trace of an episode and the prompts.
"""
