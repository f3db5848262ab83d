"""The most accurate tree with at most one split: a baseline and a sanity check.

A categorical column splits multiway (one child per category); a numeric column splits at the
best threshold. The search is exact and fast (one pass per candidate feature in the Rust core).
"""

from __future__ import annotations

from typing import Any

from optitree import _core
from optitree._params import check_time_limit
from optitree.base import BaseTreeClassifier, forget_fit

__all__ = ["StumpClassifier"]


class StumpClassifier(BaseTreeClassifier):
    """The best tree with at most one split, by (weighted) training accuracy.

    Parameters
    ----------
    time_limit : float or None, default=None
        Seconds after which the search returns its best tree so far with status ``time_limit``.

    Attributes
    ----------
    tree_ : optitree.tree.Tree
        The fitted tree (a leaf, or one split with its leaves).
    classes_ : ndarray
        Class labels, sorted.
    n_features_in_ : int
        Number of input columns.
    feature_names_in_ : ndarray of str
        Input column names (only when fitted on a DataFrame).
    objective_ : float
        Weighted training accuracy of ``tree_``, re-scored by routing the training rows.
    status_ : str
        ``"optimal"`` when every split was examined.
    lower_bound_, upper_bound_ : float
        Bounds on the best one-split accuracy.
    statistics_ : dict
        Counters and timings of the search.

    Examples
    --------
    >>> from optitree import StumpClassifier
    >>> from optitree.datasets import load_monks
    >>> X, y = load_monks(1, return_X_y=True)
    >>> clf = StumpClassifier().fit(X, y)
    >>> clf.status_, clf.get_n_splits()
    ('optimal', 1)
    >>> round(clf.objective_, 3)
    0.734
    """

    def __init__(self, time_limit: float | None = None) -> None:
        self.time_limit = time_limit

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> StumpClassifier:
        """Finds the best one-split tree.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_rows, n_features)
            Numeric, boolean, categorical or string columns.
        y : array-like of shape (n_rows,)
            Class labels of any hashable type.
        sample_weight : array-like of shape (n_rows,), optional
            Non-negative row weights.

        Returns
        -------
        self
        """
        forget_fit(self)  # a fit refused for its parameters leaves no stale tree behind
        time_limit = check_time_limit(self.time_limit)
        data = self._prepare_fit(X, y, sample_weight)
        result = _core.fit_stump(
            data.view.codes,
            data.y,
            n_classes=len(self.classes_),
            n_values=data.view.n_values,
            sample_weight=data.sample_weight,
            time_limit=time_limit,
        )
        self._finish_fit(result, data)
        self.objective_ = self.training_accuracy(X, y, sample_weight)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # One split cannot reach the accuracy scikit-learn's generic checks expect.
        tags.classifier_tags.poor_score = True
        return tags
