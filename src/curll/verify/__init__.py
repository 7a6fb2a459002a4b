"""Verification of generated data: filters with reasons, dedup, diversity, readability.

Modules (import from them directly; this package imports nothing, so a stage's DVC deps
name only the modules it runs): :mod:`curll.verify.core` (``verify``: every filter, counts and
plots), :mod:`curll.verify.filters` and :mod:`curll.verify.content` (row filters returning
(keep, reason)), :mod:`curll.verify.dedup` (exact and semantic duplicates),
:mod:`curll.verify.encoder` (the sentence encoder), :mod:`curll.verify.diversity`,
:mod:`curll.verify.readability`.
"""
