"""curll: developmental curriculum datasets and continual-learning experiments (CurLL).

The library knows nothing of DVC: the stage layer in ``pipeline/`` reads params, calls
these functions and writes the artifacts. Heavy dependencies are imported lazily.
"""

from curll.errors import CurllError

__all__ = ["CurllError", "__version__"]
__version__ = "0.1.0"
