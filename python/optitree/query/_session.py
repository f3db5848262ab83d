"""One question at a time: an interactive identification session.

The greedy score at a node depends only on the set of objects still consistent with the answers
(spec §5.2), so a session needs no tree: it follows the fitted tree while the answers stay on its
path (reproducing it exactly, ties included) and, once an answer to a question the tree would not
have asked removes candidates, scores the queries afresh on the remaining candidates with the
greedy rule (for an exact tree: the greedy rule "auto" would use). An answer that removes nobody
keeps the session on the tree.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from optitree.exceptions import DataError, InvalidParameterError

__all__ = ["QuerySession"]


class QuerySession:
    """Ask, answer, undo. Create one with :meth:`QueryTree.session`.

    Examples
    --------
    >>> import numpy as np
    >>> from optitree import QueryTree
    >>> B = np.array([[0, 1, 1], [1, 1, 0], [0, 1, 0], [1, 0, 0]])
    >>> s = QueryTree().fit(B).session()
    >>> q = s.next_query(); q
    'x0'
    >>> s.answer(q, True); s.candidates()
    [('1', 0.5), ('3', 0.5)]
    >>> s.answer(s.next_query(), False); s.done, s.result
    (True, '3')
    """

    def __init__(self, estimator: Any) -> None:
        self._est = estimator
        self._tree = estimator.tree_
        self._answers = estimator._answers
        self._native = None
        self._rng = np.random.default_rng(estimator._seed)
        self._candidates = np.arange(self._tree.n_objects)
        self._node = 0  # current tree node, or -1 once off the tree's path
        self._history: list[tuple[str, bool]] = []
        self._undo: list[tuple[np.ndarray, int]] = []
        # The suggestion for the current state: drawn once, so that asking twice (or reading
        # `done`) never consumes another random tie-break.
        self._suggestion: tuple[int | None] | None = None

    # ------------------------------------------------------------------ state
    @property
    def history(self) -> list[tuple[str, bool]]:
        """The (query name, answer) pairs so far."""
        return list(self._history)

    @property
    def n_questions(self) -> int:
        """Number of questions answered."""
        return len(self._history)

    def candidates(self) -> list[tuple[str, float]]:
        """Objects still consistent with the answers, with their posterior, most probable first."""
        prior = self._tree.prior[self._candidates]
        total = prior.sum()
        post = prior / total if total > 0 else np.full(len(prior), 1.0 / len(prior))
        order = np.argsort(-post, kind="stable")
        names = self._tree.object_names
        return [(names[int(self._candidates[k])], float(post[k])) for k in order]

    def _targets(self) -> np.ndarray:
        return np.unique(self._tree.target[self._candidates])

    @property
    def done(self) -> bool:
        """Whether no further question is useful."""
        return self.next_query() is None

    @property
    def result(self) -> Any:
        """What has been identified (a tuple for an ambiguous end), or None while unfinished."""
        targets = self._targets()
        names = self._tree.target_names
        if len(targets) == 1:
            return names[int(targets[0])]
        if self.done:
            return tuple(names[int(t)] for t in targets)
        return None

    # ------------------------------------------------------------------ questions
    def next_query(self) -> str | None:
        """The query to ask next (its name), or None when the target is known."""
        q = self._next_index()
        return None if q is None else self._tree.query_names[q]

    def _next_index(self) -> int | None:
        if self._suggestion is None:
            self._suggestion = (self._plan(),)
        return self._suggestion[0]

    def _plan(self) -> int | None:
        if len(self._targets()) <= 1:
            return None
        if self._node >= 0:
            q = int(self._tree.query[self._node])
            return q if q >= 0 else None
        max_depth = self._est.max_depth_
        if max_depth is not None and self.n_questions >= max_depth:
            return None
        if self._native is None:
            self._native = self._est._native()
        _, tied = self._native.node_scores(
            self._est._rule, float(self._est.cost_base_), self._candidates
        )
        if not tied:
            return None
        if self._est.tie_break_ == "random":
            return int(tied[int(self._rng.integers(len(tied)))])
        return int(tied[0])

    def _query_index(self, query: Any) -> int:
        names = self._tree.query_names
        if isinstance(query, str):
            if query not in names:
                raise InvalidParameterError(f"unknown query {query!r}")
            return names.index(query)
        if isinstance(query, (int, np.integer)) and not isinstance(query, bool):
            if 0 <= int(query) < len(names):
                return int(query)
        raise InvalidParameterError(
            f"query must be a query name or an index in 0..{len(names) - 1}, got {query!r}"
        )

    def answer(self, query: Any, value: Any) -> None:
        """Record the answer to ``query`` (a name or column index): True/1 or False/0.

        Any query may be answered, not only the suggested one. An answer that no remaining
        candidate gives raises :class:`~optitree.DataError` and leaves the session unchanged.
        """
        q = self._query_index(query)
        if isinstance(value, str) or value not in (0, 1):
            raise InvalidParameterError(f"answer must be True/False or 1/0, got {value!r}")
        yes = bool(value)
        keep = self._candidates[self._answers[self._candidates, q] == int(yes)]
        name = self._tree.query_names[q]
        if len(keep) == 0:
            asked = ", ".join(f"{n}={'yes' if a else 'no'}" for n, a in self._history)
            raise DataError(
                f"no candidate answers {'yes' if yes else 'no'} to {name!r}"
                + (f" after {asked}" if asked else "")
                + "; the answers are inconsistent with every object"
            )
        self._undo.append((self._candidates, self._node))
        self._history.append((name, yes))
        on_path = self._node >= 0 and int(self._tree.query[self._node]) == q
        if on_path:
            self._node = int(self._tree.children[self._node, int(yes)])
        elif len(keep) != len(self._candidates):
            self._node = -1  # off the tree's path: re-plan with the greedy rule from here
        self._candidates = keep
        self._suggestion = None

    def undo(self) -> tuple[str, bool]:
        """Take back the last answer; returns it."""
        if not self._undo:
            raise InvalidParameterError("there is no answer to undo")
        self._candidates, self._node = self._undo.pop()
        self._suggestion = None
        return self._history.pop()

    def __repr__(self) -> str:
        return (
            f"QuerySession(questions={self.n_questions}, candidates={len(self._candidates)}, "
            f"done={self.done})"
        )
