# Type stub of the compiled module optitree._core (crates/optitree-py). Keep in sync with lib.rs.
from typing import Any

import numpy as np
import numpy.typing as npt

__version__: str

def tree_validate(tree: Any) -> None: ...
def tree_route(
    tree: Any, x: npt.NDArray[np.float64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]: ...
def tree_decision_path(
    tree: Any, x: npt.NDArray[np.float64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]: ...
def dataset_summary(
    codes: npt.NDArray[np.int64],
    labels: npt.NDArray[np.int64],
    n_classes: int | None = None,
    n_values: list[int] | None = None,
    sample_weight: npt.NDArray[np.float64] | None = None,
) -> dict[str, Any]: ...
def fit_stump(
    codes: npt.NDArray[np.int64],
    labels: npt.NDArray[np.int64],
    n_classes: int | None = None,
    n_values: list[int] | None = None,
    sample_weight: npt.NDArray[np.float64] | None = None,
    time_limit: float | None = None,
) -> dict[str, Any]: ...
def status_names() -> list[str]: ...
def _spin(time_limit: float | None = None, node_limit: int | None = None) -> tuple[str, int]: ...
