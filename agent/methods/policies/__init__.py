"""The policies: one module per action mode, registered in :mod:`agent.methods.policies.registry`.

- :mod:`agent.methods.policies.text`, :mod:`agent.methods.policies.tools`,
  :mod:`agent.methods.policies.grammar`: the LLM writes one action
  (:mod:`agent.methods.policies.written`, what they share);
- :mod:`agent.methods.policies.choose`: the LLM picks one of the listed valid next steps.
"""
