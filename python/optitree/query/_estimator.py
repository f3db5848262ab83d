"""``QueryTree``: build the question tree that identifies an object, or only its group, with few
(or exponentially weighted) questions — Bellala, Bhavnani & Scott's greedy builders, or the exact
optimum on small problems.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state

from optitree import _core
from optitree._params import check_choice, check_int, check_real, check_time_limit
from optitree.base import forget_fit
from optitree.exceptions import (
    DataError,
    InternalError,
    InvalidParameterError,
    NotProvenOptimalWarning,
)
from optitree.query._entropy import lower_bound
from optitree.query._inputs import check_groups, check_matrix, check_prior, identical_row_sets
from optitree.query._model import QuestionTree

__all__ = ["CRITERIA", "MAX_OPTIMAL_OBJECTS", "QueryTree"]

CRITERIA = ("auto", "gbs", "lambda-gbs", "ggbs", "lambda-ggbs", "worst-case", "optimal")
#: Largest number of objects ``criterion="optimal"`` accepts (its work doubles per object).
MAX_OPTIMAL_OBJECTS: int = _core.NativeQueryProblem.max_optimal_objects
_POLICIES = ("error", "leaf", "merge")


class QueryTree(BaseEstimator):
    """A question tree that identifies an object (or its group) by yes/no queries.

    Given objects × queries (a 0/1 matrix ``B``: ``B[i, j] = 1`` when object ``i`` answers yes to
    query ``j``), a prior over the objects and optionally a group per object, build the tree of
    questions with small cost ``L_λ = log_λ Σ_objects π λ^(questions asked)``: λ = 1 is the
    expected number of questions, λ → ∞ the worst case, λ in between penalises long question
    sequences exponentially (Bellala, Bhavnani & Scott, "Query learning with exponential query
    costs").

    Parameters
    ----------
    criterion : {"auto", "gbs", "lambda-gbs", "ggbs", "lambda-ggbs", "worst-case", "optimal"}, \
default="auto"
        The per-node rule. "gbs": split the prior mass most evenly; "lambda-gbs": the exponential
        cost rule; "ggbs": the most information about the group; "lambda-ggbs": the exponential
        cost rule for groups; "worst-case": the most even split of the number of objects (or
        groups); "optimal": the exact optimum by dynamic programming, for at most
        ``MAX_OPTIMAL_OBJECTS`` (20) objects. "auto" picks gbs / lambda-gbs / worst-case (or their
        group versions when ``groups`` are given) for λ = 1 / 1 < λ < ∞ / λ = ∞. With groups,
        "gbs" and "lambda-gbs" still score object masses but stop as soon as the group is known.
    cost_base : float in [1, inf], default=1.0
        λ. ``math.inf`` is accepted.
    tie_break : {"first", "random"}, default="first"
        Among equally good queries (relative tolerance 1e-12), take the first column, or a
        uniformly random one drawn from ``random_state``.
    random_state : int, RandomState or None, default=None
        Seed for ``tie_break="random"``.
    max_depth : int or None, default=None
        Stop asking after this many questions (leaves may then hold several candidates).
    on_unidentifiable : {"error", "leaf", "merge"}, default="error"
        Objects with identical answers to every query (and different targets) cannot be told
        apart. "error" lists them; "leaf" stops at an ambiguous leaf holding them; "merge"
        identifies each class of indistinguishable objects as a group.
    time_limit : float or None, default=None
        Seconds for the build; the exact optimum falls back to the greedy tree when it runs out.

    Attributes
    ----------
    tree_ : QuestionTree
    criterion_ : str
        The rule actually used ("gbs", "lambda-gbs", "ggbs", "lambda-ggbs", "worst-case" or
        "optimal").
    cost_base_ : float
        λ as used (``cost_base`` checked).
    max_depth_ : int
        The depth limit as used (None: no limit).
    tie_break_ : str
        The tie rule as used.
    cost_ : float
        ``L_λ`` of the tree at ``cost_base``. A build stopped early (``status_`` "time_limit"
        or "interrupted") leaves its unfinished nodes as ambiguous leaves, so its tree may ask
        fewer questions than identifying the targets takes, and cost less than
        ``lower_bound_``.
    expected_queries_ : float
        Expected number of questions (``L_1``).
    max_queries_ : int
        Largest number of questions asked for an object with positive prior (``L_∞``).
    lower_bound_ : float
        Campbell's entropy bound ``H_α(Π_y)`` (Shannon entropy at λ = 1, log2 of the number of
        targets at λ = ∞): no tree that identifies the targets costs less (an unfinished tree,
        which does not, may; see ``cost_``). Objects that answer every query alike count as one
        target here (no tree can separate them). With ``max_depth`` the bound is capped at 1
        (any tree that asks a question costs at least 1).
    status_ : str
        "greedy" (a greedy tree, no optimality claim), "optimal" (proven optimal), or why a build
        stopped early ("time_limit", "interrupted").
    prior_ : ndarray of shape (n_objects,)
        The normalised prior.
    groups_ : ndarray or None
        The group label of every object (None for object identification).
    object_names_, query_names_ : list of str
    n_objects_, n_queries_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from optitree import QueryTree
    >>> B = np.array([[0, 1, 1], [1, 1, 0], [0, 1, 0], [1, 0, 0]])
    >>> qt = QueryTree().fit(B)
    >>> qt.cost_, qt.lower_bound_, qt.status_
    (2.0, 2.0, 'greedy')
    >>> qt.identify([1, 0, 0])
    '3'
    """

    def __init__(
        self,
        criterion: str = "auto",
        cost_base: float = 1.0,
        tie_break: str = "first",
        random_state: Any = None,
        max_depth: int | None = None,
        on_unidentifiable: str = "error",
        time_limit: float | None = None,
    ) -> None:
        self.criterion = criterion
        self.cost_base = cost_base
        self.tie_break = tie_break
        self.random_state = random_state
        self.max_depth = max_depth
        self.on_unidentifiable = on_unidentifiable
        self.time_limit = time_limit

    # ------------------------------------------------------------------ fit
    def _checked_params(self) -> tuple[str, float, int | None, float | None]:
        criterion = check_choice("criterion", self.criterion, CRITERIA)
        lam = check_real("cost_base", self.cost_base, low=1.0)
        check_choice("tie_break", self.tie_break, ("first", "random"))
        check_choice("on_unidentifiable", self.on_unidentifiable, _POLICIES)
        max_depth = check_int("max_depth", self.max_depth, low=0, allow_none=True)
        return criterion, lam, max_depth, check_time_limit(self.time_limit)

    def fit(self, B: Any, prior: Any = None, groups: Any = None) -> QueryTree:
        """Build the question tree.

        Parameters
        ----------
        B : array-like or DataFrame of shape (n_objects, n_queries)
            0/1 answers (booleans, integers or floats equal to 0 or 1). A DataFrame's index names
            the objects and its columns the queries.
        prior : array-like of shape (n_objects,), optional
            Positive weights (normalised, with a warning if they do not sum to 1); default
            uniform. A zero prior is refused: drop objects that cannot occur. A pandas Series is
            matched to a DataFrame ``B`` by index.
        groups : array-like of shape (n_objects,), optional
            A group label per object: identify only the group.

        Returns
        -------
        self
        """
        forget_fit(self)
        criterion, lam, max_depth, time_limit = self._checked_params()
        answers, object_names, query_names = check_matrix(B)
        n_objects = answers.shape[0]
        index = getattr(B, "index", None) if hasattr(B, "columns") else None
        prior_, _ = check_prior(prior, n_objects, index=index, names=object_names)
        if groups is None:
            target, target_names, grouped = np.arange(n_objects), list(object_names), False
            self.groups_ = None
        else:
            target, classes = check_groups(groups, n_objects, index=index)
            target_names, grouped = _plain_list(classes), True
            self.groups_ = np.asarray(classes)[target]
        # Objects with identical rows but different targets: found once, used twice. The entropy
        # bound holds for trees whose leaves refine what can be told apart at all: the targets,
        # merged across identical rows.
        conflicts = identical_row_sets(answers, target)
        merged = _merge_indistinguishable(conflicts, target, target_names)
        bound_target, bound_names, _ = merged
        target, target_names, grouped = self._apply_policy(
            conflicts, merged, target, target_names, grouped, object_names
        )
        if max_depth is not None:
            max_depth = min(max_depth, answers.shape[1])  # no path asks a query twice
        self._answers = answers
        self._grouped = grouped
        self.cost_base_, self.max_depth_, self.tie_break_ = lam, max_depth, self.tie_break
        native = _core.NativeQueryProblem(answers, prior_, target if grouped else None)
        self.criterion_ = self._resolve(criterion, lam, grouped)
        seed = None
        if self.tie_break == "random":
            seed = int(check_random_state(self.random_state).randint(0, 2**31 - 1))
        self._seed = seed
        if self.criterion_ == "optimal":
            arrays, status = self._build_optimal(native, lam, max_depth, time_limit, seed)
        else:
            arrays = native.build_greedy(
                self._rule, lam, seed=seed, max_depth=max_depth, time_limit=time_limit
            )
            status = arrays["status"]
            if status != "greedy":
                warnings.warn(
                    f"the build stopped early ({status}); unfinished nodes are left as ambiguous "
                    "leaves",
                    NotProvenOptimalWarning,
                    stacklevel=2,
                )
        self.tree_ = QuestionTree(
            query=arrays["query"],
            children=np.column_stack([arrays["child_no"], arrays["child_yes"]]),
            leaf_of_object=arrays["leaf_of_object"],
            prior=prior_,
            target=target,
            object_names=object_names,
            query_names=query_names,
            target_names=target_names,
        )
        self.status_ = status
        self.prior_ = prior_
        self.object_names_, self.query_names_ = object_names, query_names
        self.n_objects_, self.n_queries_ = answers.shape
        self.cost_ = self.tree_.cost(lam)
        self.expected_queries_ = self.tree_.cost(1.0)
        self.max_queries_ = int(self.tree_.cost(math.inf))
        target_mass = np.bincount(bound_target, weights=prior_, minlength=len(bound_names))
        bound = lower_bound(target_mass, lam)
        self.lower_bound_ = bound if max_depth is None else min(bound, float(min(1, max_depth)))
        if status == "optimal":
            self._check_rescored(arrays["cost"])
        return self

    def _apply_policy(self, conflicts, merged, target, target_names, grouped, object_names):
        if not conflicts:
            return target, target_names, grouped
        if self.on_unidentifiable == "error":
            shown = "; ".join(
                "{" + ", ".join(repr(object_names[i]) for i in members[:6]) + "}"
                for members in conflicts[:5]
            )
            what = "groups" if grouped else "objects"
            raise DataError(
                f"{len(conflicts)} set(s) of objects answer every query identically but are "
                f"different {what}, so no tree can tell them apart: {shown}. Add a query that "
                "separates them, or pass on_unidentifiable='leaf' (stop at an ambiguous leaf) or "
                "'merge' (identify each indistinguishable class as a group)"
            )
        if self.on_unidentifiable == "leaf":
            return target, target_names, grouped
        return merged

    @property
    def _rule(self) -> str:
        name = self.criterion_ if self.criterion_ != "optimal" else self._greedy_fallback
        if name == "worst-case":
            return "group-count" if self._grouped else "count"
        return name

    @property
    def _greedy_fallback(self) -> str:
        return self._resolve("auto", self.cost_base_, self._grouped)

    @staticmethod
    def _resolve(criterion: str, lam: float, grouped: bool) -> str:
        if criterion != "auto":
            return criterion
        if math.isinf(lam):
            return "worst-case"
        if lam == 1.0:
            return "ggbs" if grouped else "gbs"
        return "lambda-ggbs" if grouped else "lambda-gbs"

    def _build_optimal(self, native, lam, max_depth, time_limit, seed):
        n = self._answers.shape[0]
        if n > MAX_OPTIMAL_OBJECTS:
            raise InvalidParameterError(
                f"criterion='optimal' is limited to {MAX_OPTIMAL_OBJECTS} objects (the exact "
                f"programme's work doubles with every object); this problem has {n}. Use a "
                "greedy criterion such as 'auto'"
            )
        arrays = native.build_optimal(lam, max_depth=max_depth, time_limit=time_limit)
        status = arrays["status"]
        if status == "optimal":
            return arrays, status
        warnings.warn(
            f"the exact optimum was not reached ({status}); returning the greedy "
            f"{self._greedy_fallback!r} tree instead, which is not proven optimal",
            NotProvenOptimalWarning,
            stacklevel=3,
        )
        return native.build_greedy(self._rule, lam, seed=seed, max_depth=max_depth), status

    def _check_rescored(self, search_cost: float) -> None:
        if not math.isclose(self.cost_, search_cost, rel_tol=1e-9, abs_tol=1e-9):
            raise InternalError(
                f"the exact programme reported cost {search_cost!r} but the returned tree costs "
                f"{self.cost_!r}; please report this bug"
            )

    # ------------------------------------------------------------------ use
    def _fitted(self) -> QuestionTree:
        tree = getattr(self, "tree_", None)
        if tree is None:
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("this QueryTree is not fitted yet; call fit(B, ...) first")
        return tree

    def cost(self, cost_base: float | None = None, prior: Any = None) -> float:
        """``L_λ`` of the fitted tree at another cost base and/or under another prior."""
        tree = self._fitted()
        return tree.cost(self.cost_base_ if cost_base is None else cost_base, prior)

    def cost_decomposition(self, cost_base: float | None = None):
        """The exact decomposition of the cost into the entropy bound and per-node terms
        (Theorems 1–2, Corollaries 1 and 3 of the paper); see :class:`CostDecomposition`."""
        tree = self._fitted()
        return tree.decompose(self.cost_base_ if cost_base is None else cost_base)

    def identify(self, answers: Any) -> Any:
        """Follow the tree with given answers and return what it identifies.

        Parameters
        ----------
        answers : array-like of shape (n, n_queries) or (n_queries,), or DataFrame
            0/1 answers; NaN for queries never asked. A DataFrame is matched by query name.

        Returns
        -------
        labels : ndarray of object, or one label for a single row
            The object name (or group label); a tuple of them for an ambiguous leaf.
        """
        tree = self._fitted()
        rows, single = self._answer_matrix(answers)
        node = np.zeros(len(rows), dtype=np.int64)
        active = np.full(len(rows), not tree.is_leaf(0))
        while active.any():
            idx = np.flatnonzero(active)
            q = tree.query[node[idx]]
            vals = rows[idx, q]
            missing = ~((vals == 0) | (vals == 1))
            if missing.any():
                k = int(np.flatnonzero(missing)[0])
                raise DataError(
                    f"row {int(idx[k])}: the answer to query {self.query_names_[int(q[k])]!r} "
                    f"is needed but is {vals[k]!r} (expected 0 or 1)"
                )
            node[idx] = tree.children[node[idx], vals.astype(np.int64)]
            active[idx] = tree.query[node[idx]] >= 0
        labels = np.empty(len(rows), dtype=object)
        labels[:] = [tree.leaf_label(int(a)) for a in node]
        return labels[0] if single else labels

    def _answer_matrix(self, answers: Any) -> tuple[np.ndarray, bool]:
        if hasattr(answers, "columns"):
            # Absent columns read as unanswered (NaN): an error only if the tree needs them.
            frame = answers.reindex(columns=self.query_names_)
            try:
                return frame.to_numpy(dtype=np.float64, na_value=np.nan), False
            except (TypeError, ValueError) as exc:
                raise DataError(f"answers must be 0/1 numbers (NaN for unanswered): {exc}") from exc
        try:
            rows = np.asarray(answers, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise DataError(f"answers must be 0/1 numbers (NaN for unanswered): {exc}") from exc
        single = rows.ndim == 1
        rows = np.atleast_2d(rows)
        if rows.ndim != 2 or rows.shape[1] != self.n_queries_:
            raise DataError(
                f"answers must have {self.n_queries_} columns (one per query), got shape "
                f"{np.shape(answers)}"
            )
        return rows, single

    def session(self):
        """An interactive session: ask one question at a time (see :class:`QuerySession`)."""
        from optitree.query._session import QuerySession

        self._fitted()
        return QuerySession(self)

    def _native(self):
        return _core.NativeQueryProblem(
            self._answers, self.prior_, self.tree_.target if self._grouped else None
        )


def _merge_indistinguishable(conflicts, target, target_names):
    """Targets joined into one group whenever two objects with identical rows differ in target
    (``conflicts``, from :func:`identical_row_sets`; union-find over targets); each merged group
    is named by the tuple of its members."""
    parent = list(range(len(target_names)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for members in conflicts:
        roots = sorted({find(int(target[i])) for i in members})
        for r in roots[1:]:
            parent[r] = roots[0]
    roots = [find(t) for t in range(len(target_names))]
    order = sorted(set(roots))
    code = {r: k for k, r in enumerate(order)}
    new_target = np.array([code[roots[int(t)]] for t in target], dtype=np.int64)
    members: dict[int, list[Any]] = {k: [] for k in range(len(order))}
    for t, r in enumerate(roots):
        members[code[r]].append(target_names[t])
    names = [m[0] if len(m) == 1 else tuple(m) for m in (members[k] for k in range(len(order)))]
    return new_target, names, True


def _plain_list(values: Any) -> list[Any]:
    return [v.item() if isinstance(v, np.generic) else v for v in values]
