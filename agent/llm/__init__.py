"""The LLM side: where a new LLM backend goes.

One module per job, lowest first:

- :mod:`agent.llm.replies`: the :class:`~agent.llm.replies.LLM` protocol, replies,
  tool calls, usage metering, prompt helpers, replies cut to size.
- :mod:`agent.llm.config`: :class:`~agent.llm.config.LLMConfig` and its flags.
- :mod:`agent.llm.retries`: the retry policy, what a failed request means
  (context overflow included).
- :mod:`agent.llm.client`: the OpenAI-compatible HTTP client (and the old
  names of the modules above, for users' code).
- :mod:`agent.llm.scripted`: the scripted LLM for tests and replays.
- :mod:`agent.llm.decoding`: replies into actions in the text, tools and grammar modes.
- :mod:`agent.llm.local`: the bundled local model (``pyql llm serve``).
- :mod:`agent.llm.likelihood`: the model's PMI of a text with the question, in process.
- :mod:`agent.llm.recording`: LLM calls and relation scores recorded or replayed.
- :mod:`agent.llm.gbnf`: grammars for constrained decoding.
"""
