"""The agent methods: where a new strategy, action mode or side adapter goes.

- :mod:`agent.methods.strategies`: how a question is searched (``--method``), one
  registered module each: ``greedy`` (QueryAgent's loop; ``queryagent`` its alias),
  ``readi``; :mod:`agent.methods.query_agent` is QueryAgent's public face.
- :mod:`agent.methods.policies`: how the LLM is asked for a step (``--action-mode``),
  one registered module each: text, tools, grammar, choose; :mod:`agent.methods.choose`
  the choose mode's numbered list.
- :mod:`agent.methods.sides`: what the agent knows of each environment side, asked once.
- :mod:`agent.methods.episode`: an episode's running state and its trace (a tree of steps);
  :mod:`agent.methods.prompting` its prompts; :mod:`agent.methods.config` the agent's settings.
- :mod:`agent.methods.readi_loop`, :mod:`agent.methods.readi`,
  :mod:`agent.methods.readi_table`: Readi (generate, instantiate, edit) on a
  KB and on a table; :mod:`agent.methods.reasoning_path` and
  :mod:`agent.methods.instantiate` its paths.
- :mod:`agent.methods.ranking`: relation rankers (BM25, embeddings).
"""
