"""Data made elsewhere read into curll's own tables: the CurLL authors' release
(:mod:`curll.imports.curll_hub`) into records (:func:`import_release`)."""

from curll.imports.importer import import_release
from curll.imports.reader import parse_source

LAYOUTS = ("curll-hub",)

__all__ = ["LAYOUTS", "import_release", "parse_source"]
