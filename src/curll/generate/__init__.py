"""Instance generation: passages and IR from seeds, CQA and CSQA on passages, sharded and merged.

Modules (import from them directly; this package imports nothing, so a stage's DVC deps
name only the modules it runs): :mod:`curll.generate.tasks` (prompt/parse pairs and engine
checks per type), :mod:`curll.generate.shard` (one shard's requests), :mod:`curll.generate.merge`
(shards -> tables and stats).
"""
