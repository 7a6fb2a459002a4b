"""Verification of generated data: filters with reasons, dedup, diversity, readability.

Modules (import from them directly; this package imports nothing, so a stage's DVC deps
name only the modules it runs): :mod:`curll.verify.core` (``verify_files``: the stage, streamed
in two passes; plots), :mod:`curll.verify.screen` (the checks, a batch at a time),
:mod:`curll.verify.scratch` (vectors and passages on disk), :mod:`curll.verify.samples` (the
seeded samples measured), :mod:`curll.verify.verdict` (the one contract of every check: keep,
or drop with a reason code and a detail), :mod:`curll.verify.filters` (row filters and set
checks), :mod:`curll.verify.content` (the content checks, shared with generate) and
:mod:`curll.verify.content_table` (them on a batch, and their rates),
:mod:`curll.verify.dedup` (exact and semantic duplicates), :mod:`curll.verify.encoder` (the
sentence encoder), :mod:`curll.verify.diversity`, :mod:`curll.verify.readability`.
The in-memory wrapper for tests and benchmarks is :func:`harness.verify.verify`.
"""
