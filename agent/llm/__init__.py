"""The LLM side: where a new LLM backend goes.

- :mod:`agent.llm.client`: the OpenAI-compatible client, its configuration,
  usage metering, the scripted LLM for tests and replays.
- :mod:`agent.llm.local`: the bundled local model (``pyql llm serve``).
- :mod:`agent.llm.likelihood`: the model's PMI of a text with the question, in process.
- :mod:`agent.llm.gbnf`: grammars for constrained decoding.
"""
