"""The Python view of a fitted tree: numpy arrays, picklable, schema-versioned.

Every optitree solver returns its tree as a :class:`Tree`. The arrays mirror the Rust core's
struct-of-arrays model exactly; routing (``apply``, ``predict``, ``decision_path``) and validation
run in the core, so Python and Rust can never disagree about where a row goes.

Node kinds
----------
``LEAF`` (0)
    No test; predicts from its class totals.
``CATEGORY`` (1)
    Multiway split on a categorical feature: child ``j`` takes the rows whose code is ``j``.
``THRESHOLD`` (2)
    Binary split: child 0 takes ``x[feature] <= threshold``, child 1 the rest.
``OBLIQUE`` (3)
    Binary split on a linear or polynomial test: child 0 takes
    ``sum_t term_coef[t] * prod(x[f] for f in term t) <= 0``, child 1 the rest.

Prediction policy
-----------------
A row whose value a node cannot route (a category code not seen in training, which
:mod:`optitree` encodes as ``-1``, or a NaN passed in a numeric array) stops at that node.
DataFrames go through optitree's input validation, which rejects NaN with a ``DataError``.
A row is predicted from the deepest node on its path whose class totals are not all zero, so an
empty leaf (a category absent from its parent's training rows) and an unroutable row both
predict with the class distribution of the nearest informed ancestor.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Set
from typing import Any

import numpy as np

from optitree import _core
from optitree._params import check_real
from optitree.exceptions import DataError, InvalidParameterError, SchemaVersionError

__all__ = ["CATEGORY", "LEAF", "OBLIQUE", "SCHEMA_VERSION", "THRESHOLD", "Tree"]

LEAF, CATEGORY, THRESHOLD, OBLIQUE = 0, 1, 2, 3
KIND_NAMES = {LEAF: "leaf", CATEGORY: "category", THRESHOLD: "threshold", OBLIQUE: "oblique"}

#: Version of the tree's array layout; bumped whenever a saved tree would be read differently.
#: Version 2 added ``class_prior``. A tree is saved with the oldest version that reads it right
#: (see :meth:`Tree.schema_version`), so a tree without a class prior still loads in releases
#: that read version 1 only.
SCHEMA_VERSION = 2

_NODE_ARRAYS = {
    "kind": np.int8,
    "feature": np.int64,
    "threshold": np.float64,
    "oblique_index": np.int64,
    "children_ptr": np.int64,
    "children": np.int64,
}
_OBLIQUE_ARRAYS = {
    "oblique_ptr": np.int64,
    "term_coef": np.float64,
    "term_ptr": np.int64,
    "term_features": np.int64,
}
#: Every array of a tree, with its dtype.
_ARRAY_DTYPES = {**_NODE_ARRAYS, "value": np.float64, **_OBLIQUE_ARRAYS}


def _array(values: Any, dtype: Any, name: str) -> np.ndarray:
    try:
        arr = np.array(values, dtype=dtype, copy=True)
    except (TypeError, ValueError) as exc:
        raise DataError(f"tree array {name!r} cannot be read as {np.dtype(dtype)}: {exc}") from exc
    if arr.ndim != 1:
        raise DataError(f"tree array {name!r} must be 1-D, got shape {arr.shape}")
    arr.setflags(write=False)
    return arr


def check_ordered_names(name: str, names: Any, allowed: str) -> None:
    """Names are matched by position, so an unordered collection would pair them by chance."""
    unordered = isinstance(names, (str, bytes, Set, Mapping)) or not hasattr(names, "__len__")
    if unordered or not hasattr(names, "__getitem__"):
        raise InvalidParameterError(f"{name} must be {allowed}, got {type(names).__name__}")


class Tree:
    """A decision tree with multiway, threshold and oblique splits.

    Parameters
    ----------
    kind, feature, threshold, children_ptr, children : array-like
        Per-node arrays (node 0 is the root); the children of node ``i`` are
        ``children[children_ptr[i]:children_ptr[i + 1]]``. See the module docstring.
    value : array-like of shape (n_nodes, n_classes)
        Class totals (weighted counts) of the training rows reaching each node.
    oblique_index : array-like, optional
        Index of each oblique node's test (-1 elsewhere). Defaults to all -1.
    oblique_ptr, term_coef, term_ptr, term_features : array-like, optional
        The oblique tests: test ``k`` owns terms ``oblique_ptr[k]:oblique_ptr[k + 1]``; term ``t``
        is ``term_coef[t]`` times the product of features ``term_features[term_ptr[t]:
        term_ptr[t + 1]]`` (repeated for powers; none for the constant term).
    n_features : int, optional
        Number of input features; defaults to ``len(feature_names)`` or one more than the
        largest feature index used.
    feature_names, class_names, categories : list, optional
        Display metadata: a name per feature, a label per class, and per feature the list of
        category labels (``None`` for numeric features).
    class_prior : array-like of shape (n_classes,), optional
        Pseudo-counts added to a node's class totals when it predicts (``predict``,
        ``predict_proba`` and the class shown by the exports), as a Bayesian model's posterior
        mean does (MAPTree's ``rho``). Default: none, the class frequencies.

    Examples
    --------
    A stump on feature 0 (``x0 <= 0.5``) with two leaves:

    >>> from optitree.tree import Tree, THRESHOLD, LEAF
    >>> t = Tree(kind=[THRESHOLD, LEAF, LEAF], feature=[0, -1, -1],
    ...          threshold=[0.5, float("nan"), float("nan")],
    ...          children_ptr=[0, 2, 2, 2], children=[1, 2],
    ...          value=[[3, 2], [3, 0], [0, 2]], class_names=["no", "yes"])
    >>> t.predict([[0.0], [1.0]]).tolist()
    ['no', 'yes']
    >>> t.get_depth(), t.get_n_leaves(), t.get_n_splits()
    (1, 2, 1)
    """

    def __init__(
        self,
        kind: Any,
        feature: Any,
        threshold: Any,
        children_ptr: Any,
        children: Any,
        value: Any,
        *,
        oblique_index: Any = None,
        oblique_ptr: Any = None,
        term_coef: Any = None,
        term_ptr: Any = None,
        term_features: Any = None,
        n_features: int | None = None,
        feature_names: list[str] | None = None,
        class_names: list[Any] | None = None,
        categories: list[list[Any] | None] | None = None,
        class_prior: Any = None,
    ) -> None:
        self.kind = _array(kind, np.int8, "kind")
        n = len(self.kind)
        self.feature = _array(feature, np.int64, "feature")
        self.threshold = _array(threshold, np.float64, "threshold")
        if oblique_index is None:
            oblique_index = np.full(n, -1)
        self.oblique_index = _array(oblique_index, np.int64, "oblique_index")
        self.children_ptr = _array(children_ptr, np.int64, "children_ptr")
        self.children = _array(children, np.int64, "children")
        empty = {"oblique_ptr": [0], "term_coef": [], "term_ptr": [0], "term_features": []}
        given = {
            "oblique_ptr": oblique_ptr,
            "term_coef": term_coef,
            "term_ptr": term_ptr,
            "term_features": term_features,
        }
        for name, dtype in _OBLIQUE_ARRAYS.items():
            values = empty[name] if given[name] is None or len(given[name]) == 0 else given[name]
            setattr(self, name, _array(values, dtype, name))
        value_arr = np.array(value, dtype=np.float64, copy=True)
        if value_arr.ndim != 2 or value_arr.shape[0] != n:
            raise DataError(
                f"tree array 'value' must have shape (n_nodes={n}, n_classes), "
                f"got {value_arr.shape}"
            )
        value_arr.setflags(write=False)
        self.value = value_arr
        for name, names, allowed in (
            ("feature_names", feature_names, "a list of strings in feature order"),
            ("class_names", class_names, "a list of labels in class order"),
            ("categories", categories, "a list in feature order"),
        ):
            if names is not None:
                check_ordered_names(name, names, allowed)
        for f, labels in enumerate([] if categories is None else categories):
            # A list is in order (the common case, checked at once: wide numeric data give
            # 10^5 features).
            if labels is not None and type(labels) is not list:
                check_ordered_names(f"categories[{f}]", labels, "a list of labels in code order")
        if n_features is None:
            if feature_names is not None:
                n_features = len(feature_names)
            else:
                used = [int(self.feature.max(initial=-1))]
                if len(self.term_features):
                    used.append(int(self.term_features.max()))
                n_features = max(used) + 1
        self.n_features = int(n_features)
        self.feature_names = None if feature_names is None else [str(f) for f in feature_names]
        self.class_names = None if class_names is None else _plain_list(class_names)
        self.categories = (
            None
            if categories is None
            else [None if c is None else _plain_list(c) for c in categories]
        )
        self.class_prior = None if class_prior is None else self._prior_array(class_prior)
        self._check_metadata()
        _core.tree_validate(self)
        self._check_categories()

    @classmethod
    def _adopt(
        cls,
        arrays: dict[str, np.ndarray],
        *,
        feature_names: list[str],
        class_names: list[Any],
        categories: list[list[Any] | None],
    ) -> Tree:
        """A tree over arrays built for it alone (by the core, for a fit), taken over without
        the copies ``__init__`` makes of a caller's arrays; ``class_names`` and ``categories``
        must hold plain Python values already (the encoder's do). The arrays are still checked
        in the core, as ``__init__`` checks them.
        """
        tree = cls.__new__(cls)
        for name, dtype in _ARRAY_DTYPES.items():
            arr = np.asarray(arrays[name], dtype=dtype)
            arr.setflags(write=False)
            setattr(tree, name, arr)
        tree.n_features = len(feature_names)
        tree.feature_names = [str(f) for f in feature_names]
        tree.class_names = list(class_names)
        # Lists of their own: the estimator keeps the encoder's for encoding new data.
        tree.categories = [None if c is None else list(c) for c in categories]
        tree.class_prior = None
        tree._check_metadata()
        _core.tree_validate(tree)
        tree._check_categories()
        return tree

    def _check_metadata(self) -> None:
        for name, seq, expected in (
            ("feature_names", self.feature_names, self.n_features),
            ("class_names", self.class_names, self.n_classes),
            ("categories", self.categories, self.n_features),
        ):
            if seq is not None and len(seq) != expected:
                raise DataError(f"{name} has {len(seq)} entries but the tree has {expected}")

    def _prior_array(self, class_prior: Any) -> np.ndarray:
        prior = _array(class_prior, np.float64, "class_prior")
        if len(prior) != self.value.shape[1]:
            raise DataError(
                f"class_prior has {len(prior)} entries but the tree has {self.value.shape[1]} "
                "classes"
            )
        bad = np.flatnonzero(~np.isfinite(prior) | (prior < 0))
        if len(bad):
            raise DataError(
                f"class_prior[{bad[0]}] is {float(prior[bad[0]])!r}; pseudo-counts must be finite "
                "and >= 0"
            )
        return prior

    def predicting_totals(self, nodes: Any) -> np.ndarray:
        """The class totals the given nodes (an index, array or slice of ``value``'s rows)
        predict from: their ``value`` rows, plus ``class_prior`` when the tree has one."""
        totals = self.value[nodes]
        return totals if self.class_prior is None else totals + self.class_prior

    def node_classes(self) -> np.ndarray:
        """The class code each node predicts from its own totals (ties: the first class); the
        prediction policy decides which node a row reads it from."""
        return np.argmax(self.predicting_totals(slice(None)), axis=1)

    def _check_categories(self) -> None:
        """A multiway split needs its feature's labels, one for each of its children (a
        threshold may still compare a categorical feature's codes). Runs after the core's
        checks, so every feature index is in range.
        """
        if self.categories is None:
            return
        n_children = np.diff(self.children_ptr)
        for node in np.flatnonzero(self.kind == CATEGORY):
            feature = int(self.feature[node])
            labels = self.categories[feature]
            if labels is None:
                raise DataError(
                    f"node {node} splits feature {feature} by category, but categories"
                    f"[{feature}] is None (a numeric feature)"
                )
            if len(labels) < n_children[node]:
                raise DataError(
                    f"node {node} has {n_children[node]} children, one per category of "
                    f"feature {feature}, but categories[{feature}] lists only {len(labels)}"
                )

    # ------------------------------------------------------------------ shape
    @property
    def n_nodes(self) -> int:
        """Number of nodes."""
        return len(self.kind)

    @property
    def node_count(self) -> int:
        """Number of nodes (scikit-learn's name)."""
        return self.n_nodes

    @property
    def n_classes(self) -> int:
        """Number of classes (columns of ``value``)."""
        return self.value.shape[1]

    @property
    def n_splits(self) -> int:
        """Number of internal nodes; a multiway split counts once."""
        return self.get_n_splits()

    def children_of(self, node: int) -> np.ndarray:
        """The children of ``node`` (empty for a leaf)."""
        return self.children[self.children_ptr[node] : self.children_ptr[node + 1]]

    def parent(self) -> np.ndarray:
        """Parent of every node (-1 for the root)."""
        parent = np.full(self.n_nodes, -1, dtype=np.int64)
        for i in range(self.n_nodes):
            parent[self.children_of(i)] = i
        return parent

    def node_depth(self) -> np.ndarray:
        """Depth of every node (the root has depth 0)."""
        depth = np.zeros(self.n_nodes, dtype=np.int64)
        # Preorder numbering is not required, so walk from the root.
        stack = [0]
        while stack:
            i = stack.pop()
            for c in self.children_of(i):
                depth[c] = depth[i] + 1
                stack.append(int(c))
        return depth

    def get_depth(self) -> int:
        """Length of the longest root-to-leaf path (a single leaf has depth 0)."""
        return int(self.node_depth().max())

    def get_n_leaves(self) -> int:
        """Number of leaves."""
        return int(np.count_nonzero(self.kind == LEAF))

    def get_n_splits(self) -> int:
        """Number of internal nodes (splits)."""
        return self.n_nodes - self.get_n_leaves()

    def used_features(self) -> np.ndarray:
        """Sorted indices of the features the tree's splits read."""
        used = np.concatenate([self.feature[self.kind != LEAF], self.term_features])
        return np.unique(used[used >= 0])

    def restricted_to_used_features(self) -> tuple[Tree, np.ndarray]:
        """This tree over only the features its splits read (renumbered in their order), and
        their indices here: it routes the columns ``X[:, used]`` as this tree routes ``X``, with
        the same node numbers. A model of 30,000 binarised thresholds that splits a handful
        then predicts without deriving them all. A leaf keeps one feature, which gives the rows
        their number.
        """
        used = self.used_features()
        if len(used) == 0 and self.n_features:
            used = np.array([0])
        position = np.full(max(self.n_features, 1), -1, dtype=np.int64)
        position[used] = np.arange(len(used))
        feature = np.where(self.feature >= 0, position[np.maximum(self.feature, 0)], -1)
        compact = Tree(
            self.kind,
            feature,
            self.threshold,
            self.children_ptr,
            self.children,
            self.value,
            oblique_index=self.oblique_index,
            oblique_ptr=self.oblique_ptr,
            term_coef=self.term_coef,
            term_ptr=self.term_ptr,
            term_features=position[self.term_features],
            n_features=len(used),
            feature_names=None
            if self.feature_names is None
            else [self.feature_names[f] for f in used],
            class_names=self.class_names,
            categories=None if self.categories is None else [self.categories[f] for f in used],
            class_prior=self.class_prior,
        )
        return compact, used

    # ------------------------------------------------------------------ routing
    def _matrix(self, X: Any) -> np.ndarray:
        from optitree._validation import encode_predict

        if self.categories is not None or self.feature_names is not None:
            if _is_frame(X) or _has_objects(X):
                names = self.feature_names or [f"x{i}" for i in range(self.n_features)]
                cats = self.categories or [None] * self.n_features
                read = set(self.used_features().tolist())
                return encode_predict(X, names, cats, warn_columns=read)
        if (
            isinstance(X, np.ndarray)
            and X.dtype in (np.uint8, np.uint16)
            and X.flags.aligned  # the core reads cells in place
        ):
            arr = X  # codes (a fit's own, or the caller's), read as they are: no float64 copy
        else:
            try:
                arr = np.asarray(X, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise DataError(f"X cannot be read as numbers: {exc}") from exc
        if arr.ndim != 2:
            raise DataError(f"X must be 2-D (n_rows, n_features), got shape {arr.shape}")
        if arr.shape[1] != self.n_features:
            raise DataError(f"X has {arr.shape[1]} columns but the tree reads {self.n_features}")
        return np.ascontiguousarray(arr)

    def apply(self, X: Any) -> np.ndarray:
        """Index of the node where each row stops (a leaf, or the node that could not route it).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_rows, n_features)

        Returns
        -------
        ndarray of int64, shape (n_rows,)
        """
        reached, _ = _core.tree_route(self, self._matrix(X))
        return reached

    def prediction_nodes(self, X: Any) -> np.ndarray:
        """Index of the node whose class totals predict each row (see the prediction policy)."""
        _, predicting = _core.tree_route(self, self._matrix(X))
        return predicting

    def predict_proba(self, X: Any, *, laplace: float = 0.0) -> np.ndarray:
        """Class probabilities: the class frequencies of each row's predicting node (its totals
        plus ``class_prior``, if the tree has one).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_rows, n_features)
        laplace : float, default=0
            Additive smoothing: ``(count + laplace) / (total + laplace * n_classes)``. Rows
            whose node has no weight at all (an empty tree) get every class alike.

        Returns
        -------
        ndarray of shape (n_rows, n_classes)
        """
        return self.node_probabilities(self.prediction_nodes(X), laplace=laplace)

    def node_probabilities(self, nodes: Any, *, laplace: float = 0.0) -> np.ndarray:
        """Class probabilities of the given nodes' predicting totals (see :meth:`predict_proba`,
        which reads them at each row's predicting node)."""
        laplace = check_real("laplace", laplace, low=0.0, high=math.inf, high_open=True)
        counts = self.predicting_totals(nodes) + laplace
        totals = counts.sum(axis=1, keepdims=True)
        # A tree with no weight at all (an empty root) knows nothing: every class alike, as
        # predict's tie goes to the first, rather than 0/0.
        uniform = np.full_like(counts, 1.0 / max(counts.shape[1], 1))
        return np.divide(counts, totals, out=uniform, where=totals > 0)

    def predict(self, X: Any) -> np.ndarray:
        """Predicted class of each row: labels from ``class_names`` if set, else class indices.

        Ties between classes go to the first class in ``class_names`` order.
        """
        idx = self.node_classes()[self.prediction_nodes(X)]
        if self.class_names is None:
            return idx
        return _label_array(self.class_names)[idx]

    def decision_path(self, X: Any):
        """Sparse indicator matrix (n_rows, n_nodes): which nodes each row passes through.

        Returns
        -------
        scipy.sparse.csr_matrix of int8
        """
        from scipy.sparse import csr_matrix

        Xm = self._matrix(X)
        indptr, nodes = _core.tree_decision_path(self, Xm)
        data = np.ones(len(nodes), dtype=np.int8)
        return csr_matrix((data, nodes, indptr), shape=(Xm.shape[0], self.n_nodes))

    # ------------------------------------------------------------------ identity
    def _arrays(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in _ARRAY_DTYPES}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tree):
            return NotImplemented
        same_arrays = all(
            a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
            for a, b in zip(self._arrays().values(), other._arrays().values())
        )
        return (
            same_arrays
            and self.n_features == other.n_features
            and self.feature_names == other.feature_names
            and _labels_equal(self.class_names, other.class_names)
            and self.categories == other.categories
            and (self.class_prior is None) == (other.class_prior is None)
            and (self.class_prior is None or np.array_equal(self.class_prior, other.class_prior))
        )

    __hash__ = None  # mutable metadata: trees are compared by value, not hashed

    def __repr__(self) -> str:
        return (
            f"Tree(n_nodes={self.n_nodes}, n_leaves={self.get_n_leaves()}, "
            f"depth={self.get_depth()}, n_features={self.n_features}, n_classes={self.n_classes})"
        )

    def __getstate__(self) -> dict[str, Any]:
        state = {name: arr.copy() for name, arr in self._arrays().items()}
        state.update(
            schema_version=self.schema_version(),
            n_features=self.n_features,
            feature_names=self.feature_names,
            class_names=self.class_names,
            categories=self.categories,
        )
        if self.class_prior is not None:  # absent otherwise: version-1 readers load the rest
            state["class_prior"] = self.class_prior.copy()
        return state

    def schema_version(self) -> int:
        """The oldest :data:`SCHEMA_VERSION` that reads this tree as it is: 2 with a
        ``class_prior`` (a version-1 reader would predict without it), else 1."""
        return 1 if self.class_prior is None else 2

    def __setstate__(self, state: dict[str, Any]) -> None:
        version = state.get("schema_version")
        if not isinstance(version, int) or version > SCHEMA_VERSION:
            raise SchemaVersionError(
                f"this tree was saved with schema version {version!r}, but this optitree reads "
                f"versions up to {SCHEMA_VERSION}; upgrade optitree to load it"
            )
        kwargs = {k: v for k, v in state.items() if k != "schema_version"}
        self.__init__(**kwargs)  # type: ignore[misc]  # re-validates the arrays


def _plain_list(labels: Any) -> list[Any]:
    # numpy scalars (np.int64, np.str_) become Python ones, so saved and reloaded trees compare
    # equal and labels serialise with their natural type.
    return [v.item() if isinstance(v, np.generic) else v for v in labels]


def _is_frame(X: Any) -> bool:
    return hasattr(X, "columns") and hasattr(X, "dtypes")


def _has_objects(X: Any) -> bool:
    arr = np.asarray(X)
    return arr.dtype.kind in "OUS"


def _mixed(labels: list[Any]) -> bool:
    return len({type(v) for v in labels}) > 1


def _label_array(labels: list[Any]) -> np.ndarray:
    """The labels as an array of their own type; Python objects when numpy would cast them:
    mixed types (1 and "a"), or integers beyond int64 (2**63 + 1 became a float)."""
    if not _mixed(labels):
        array = np.asarray(labels)
        if array.dtype != object and array.tolist() == list(labels):
            return array
    return np.asarray(labels, dtype=object)


def _labels_equal(a: list[Any] | None, b: list[Any] | None) -> bool:
    if a is None or b is None:
        return a is b
    return len(a) == len(b) and all(type(x) is type(y) and x == y for x, y in zip(a, b))
