"""The language model, shared by training, evaluation and the LLM layer.

A Llama-architecture decoder (SmolLM2's) written nanoGPT-style, with Hugging Face's parameter
names, so its folders load in ``transformers`` and the LLM backends like any hub model:

- :mod:`curll.model.config`: :class:`~curll.model.config.ModelConfig`, the single source of
  shape, and the named presets;
- :mod:`curll.model.llama`: the module (:class:`~curll.model.llama.CausalLM`) and
  :func:`~curll.model.llama.from_seed`;
- :mod:`curll.model.attention`: document-aware attention for packed rows;
- :mod:`curll.model.loss`: the output layer and its cross-entropy, whole or in chunks;
- :mod:`curll.model.hf`: the Hugging Face folder (``LlamaConfig``, save and load).

This package imports no domain package (train, evaluate, llm, ...); they import it. Its
``__init__`` imports nothing, so a stage's DVC deps name only the modules it runs.
"""
