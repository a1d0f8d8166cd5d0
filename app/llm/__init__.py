"""The LLM gateway: the only place that talks to language models.

Submodules are imported directly (``app.llm.gateway``, ``app.llm.structured``, ``app.llm.fakes``)
so that importing the settings or the fakes does not pull in ``openai`` or the simulator.
"""
