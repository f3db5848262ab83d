"""optitree: decision trees found by search, with proofs of how good they are.

The public API is re-exported here; heavy or optional pieces (exporters, plotting, datasets,
preprocessing) are imported on first use so that ``import optitree`` stays fast.

Examples
--------
>>> import optitree
>>> isinstance(optitree.__version__, str)
True
"""

from __future__ import annotations

import importlib
from typing import Any

from optitree._core import __version__
from optitree.exceptions import (
    DataError,
    InfeasibleError,
    InternalError,
    InvalidParameterError,
    NotProvenOptimalWarning,
    OptitreeError,
    SchemaVersionError,
    UnseenCategoryWarning,
)
from optitree.tree import Tree

# name -> module that defines it, imported lazily by __getattr__
_LAZY = {
    "export_text": "optitree.export",
    "export_dot": "optitree.export",
    "to_json": "optitree.export",
    "from_json": "optitree.export",
    "save_json": "optitree.export",
    "load_json": "optitree.export",
    "plot_tree": "optitree.plot",
    "CategoricalEncoder": "optitree.preprocessing",
    "OneHotEncoder": "optitree.preprocessing",
    "ThresholdBinarizer": "optitree.preprocessing",
    "StumpClassifier": "optitree.stump",
    "BranchesClassifier": "optitree.branches",
    "QueryTree": "optitree.query",
    "MAPTreeClassifier": "optitree.maptree",
    "ProperTreeClassifier": "optitree.proper",
    "query": "optitree.query",
    "datasets": "optitree.datasets",
    "preprocessing": "optitree.preprocessing",
}

__all__ = [
    "DataError",
    "InfeasibleError",
    "InternalError",
    "InvalidParameterError",
    "NotProvenOptimalWarning",
    "OptitreeError",
    "SchemaVersionError",
    "Tree",
    "UnseenCategoryWarning",
    "__version__",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'optitree' has no attribute {name!r}")
    mod = importlib.import_module(module)
    return mod if module.endswith(name) else getattr(mod, name)


def __dir__() -> list[str]:
    return sorted(__all__)
