# Type stub of the compiled module optitree._core (crates/optitree-py). Keep in sync with lib.rs.
from typing import Any

import numpy as np
import numpy.typing as npt

# Category codes: uint8 or uint16 when every code fits, else int64.
_Codes = npt.NDArray[np.uint8] | npt.NDArray[np.uint16] | npt.NDArray[np.int64]

__version__: str

def tree_validate(tree: Any) -> None: ...
def tree_route(
    tree: Any, x: npt.NDArray[np.float64] | npt.NDArray[np.uint8] | npt.NDArray[np.uint16]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]: ...
def tree_decision_path(
    tree: Any, x: npt.NDArray[np.float64] | npt.NDArray[np.uint8] | npt.NDArray[np.uint16]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]: ...
def dataset_summary(
    codes: _Codes,
    labels: npt.NDArray[np.int64],
    n_classes: int | None = None,
    n_values: list[int] | None = None,
    sample_weight: npt.NDArray[np.float64] | None = None,
) -> dict[str, Any]: ...
def factorize_int_columns(
    x: npt.NDArray[np.int64], max_span: int
) -> tuple[npt.NDArray[np.uint8 | np.uint16 | np.float64], list[list[int]]] | None: ...
def codes_under_labels(
    x: npt.NDArray[np.int64], labels: list[list[int]], max_slots: int
) -> npt.NDArray[np.float64] | None: ...
def fit_stump(
    codes: _Codes,
    labels: npt.NDArray[np.int64],
    n_classes: int | None = None,
    n_values: list[int] | None = None,
    sample_weight: npt.NDArray[np.float64] | None = None,
    time_limit: float | None = None,
) -> dict[str, Any]: ...
def fit_maptree(
    codes: _Codes,
    labels: npt.NDArray[np.int64],
    alpha: float,
    beta: float,
    rho: list[float],
    *,
    n_classes: int | None = None,
    max_expansions: int | None = None,
    time_limit: float | None = None,
    memory_limit: int | None = None,
    progress: Any = None,
    fast: bool = False,
    threads: int = 1,
) -> dict[str, Any]: ...
def fit_proper(
    x: npt.NDArray[np.float64],
    labels: npt.NDArray[np.int64],
    n_classes: int,
    n_splits: int,
    *,
    rule: str = "axis",
    degree: int = 2,
    side_assignment: str = "all",
    exactly: bool = False,
    objective: str = "misclassification",
    max_depth: int | None = None,
    min_samples_leaf: int = 1,
    n_jobs: int = 1,
    engine: str = "auto",
    time_limit: float | None = None,
    memory_limit: int | None = None,
    refuse_above_seconds: float | None = None,
    progress: Any = None,
) -> dict[str, Any]: ...
def proper_candidate_rules(
    x: npt.NDArray[np.float64],
    rule: str = "axis",
    degree: int = 2,
    side_assignment: str = "all",
) -> tuple[npt.NDArray[np.bool_], list[list[int]]]: ...
def status_names() -> list[str]: ...
def _spin(time_limit: float | None = None, node_limit: int | None = None) -> tuple[str, int]: ...
def fit_branches(
    codes: _Codes,
    labels: npt.NDArray[np.int64],
    penalty_num: int,
    penalty_den: int,
    *,
    n_classes: int | None = None,
    n_values: list[int] | None = None,
    sample_weight: npt.NDArray[np.float64] | None = None,
    max_depth: int | None = None,
    min_samples_leaf: int = 1,
    fewest_splits: bool = True,
    time_limit: float | None = None,
    node_limit: int | None = None,
    memory_limit: int | None = None,
    progress: Any = None,
) -> dict[str, Any]: ...

class NativeQueryProblem:
    max_optimal_objects: int
    def __init__(
        self,
        answers: npt.NDArray[np.uint8],
        prior: npt.NDArray[np.float64],
        groups: npt.NDArray[np.int64] | None = None,
    ) -> None: ...
    def build_greedy(
        self,
        rule: str,
        lam: float,
        seed: int | None = None,
        max_depth: int | None = None,
        time_limit: float | None = None,
    ) -> dict[str, Any]: ...
    def build_optimal(
        self, lam: float, max_depth: int | None = None, time_limit: float | None = None
    ) -> dict[str, Any]: ...
    def node_scores(
        self, rule: str, lam: float, objects: npt.NDArray[np.int64]
    ) -> tuple[npt.NDArray[np.float64], list[int]]: ...
