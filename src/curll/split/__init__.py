"""Test / validation / train selection: LLM quality ratings, assignment, decontamination, records.

Modules (import from them directly; this package imports nothing, so a stage's DVC deps
name only the modules it runs): :mod:`curll.split.units` (units and their ratings),
:mod:`curll.split.assign` (a split per unit), :mod:`curll.split.decontam` (n-gram overlap),
:mod:`curll.split.records` (chat records).
"""
