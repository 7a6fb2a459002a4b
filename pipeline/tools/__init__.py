"""The command layer's tools, apart from the stage modules: the ``curll`` command (``cli``), its
console output (``console``), the token-budget check it runs before a stage (``budget``), the
importers it offers (``importers``), the experiments table (``experiments``), and the
generators of ``dvc.yaml``'s code deps (``codedeps``), of the params reference page
(``docs_params``) and of the results the docs quote (``docs_results``)."""
