"""The strategies: one module per ``--method``, registered in :mod:`agent.methods.strategies.registry`.

- :mod:`agent.methods.strategies.greedy`: QueryAgent's loop, the policy's best step at every step (``--method queryagent`` too);
- :mod:`agent.methods.strategies.readi`: Readi's reasoning paths;
- :mod:`agent.methods.strategies.tog`: Think-on-Graph, a beam of KB paths pruned by the LLM.
"""
