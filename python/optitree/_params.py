"""Checks for estimator parameters, shared by every estimator.

Each check raises :class:`~optitree.exceptions.InvalidParameterError` naming the parameter, the
value received and what is allowed, and returns the value in canonical form.
"""

from __future__ import annotations

import math
import numbers
import os
import time
from typing import Any

import numpy as np

from optitree.exceptions import InvalidParameterError


def _shown(value: Any) -> str:
    """``repr`` of a parameter value, numpy scalars as the Python value they hold (numpy 2
    writes ``np.float64(nan)``, which reads as code rather than as the value)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_real(
    name: str,
    value: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    allow_none: bool = False,
) -> float | None:
    """A real number within bounds (``None`` allowed if ``allow_none``)."""
    if value is None and allow_none:
        return None
    lo = "(" if low_open else "["
    hi = ")" if high_open else "]"
    low_text = "-inf" if low is None else low
    high_text = "inf" if high is None else high
    allowed = f"a number in {lo}{low_text}, {high_text}{hi}"
    if allow_none:
        allowed += " or None"
    if not _is_real(value) or value != value:  # NaN fails value == value
        raise InvalidParameterError(f"{name} must be {allowed}, got {_shown(value)}")
    v = float(value)
    too_low = low is not None and (v <= low if low_open else v < low)
    too_high = high is not None and (v >= high if high_open else v > high)
    if too_low or too_high:
        raise InvalidParameterError(f"{name} must be {allowed}, got {_shown(value)}")
    return v


def check_int(
    name: str, value: Any, *, low: int | None = None, allow_none: bool = False
) -> int | None:
    """An integer ``>= low`` (``None`` allowed if ``allow_none``)."""
    if value is None and allow_none:
        return None
    # `type(...) is int` first: the abstract-class check is slow, and plain ints are the rule.
    integral = type(value) is int or (
        isinstance(value, numbers.Integral) and not isinstance(value, bool)
    )
    if integral and (low is None or value >= low):
        return int(value)
    allowed = "an integer" + (f" >= {low}" if low is not None else "")
    if allow_none:
        allowed += " or None"
    raise InvalidParameterError(f"{name} must be {allowed}, got {_shown(value)}")


def check_verbose(value: Any) -> int:
    """A verbosity level >= 0; ``True`` and ``False`` read as 1 and 0, as in scikit-learn."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    return check_int("verbose", value, low=0)


def check_memory_limit(value: Any) -> int | None:
    """Bytes (an integer >= 1) or None. A limit beyond 2**63 bytes is no limit: the core counts
    memory in 64-bit sizes, and no machine holds that much."""
    limit = check_int("memory_limit", value, low=1, allow_none=True)
    return None if limit is None or limit >= 1 << 63 else limit


def check_bool(name: str, value: Any) -> bool:
    """``True`` or ``False`` (NumPy booleans included; not 0/1 or strings)."""
    if value is True or value is False or isinstance(value, np.bool_):
        return bool(value)
    raise InvalidParameterError(f"{name}={_shown(value)}: use True or False")


def check_choice(name: str, value: Any, choices: tuple[Any, ...]) -> Any:
    """One of ``choices``."""
    if value not in choices:
        listed = ", ".join(repr(c) for c in choices)
        raise InvalidParameterError(f"{name} must be one of {listed}; got {_shown(value)}")
    return value


def time_left(time_limit: float | None, started: float) -> float | None:
    """What remains of ``time_limit`` seconds counted from ``started`` (a ``time.perf_counter``
    reading), for the search: a fit's limit covers its preparation too (binarising wide numeric
    data can take a while). Never zero, so that the search still returns its first incumbent."""
    if time_limit is None:
        return None
    return max(time_limit - (time.perf_counter() - started), 1e-6)


def check_time_limit(value: Any) -> float | None:
    """A number of seconds (0: stop at once with the first tree), or ``None`` (or infinity)
    for no limit."""
    limit = check_real("time_limit", value, low=0, allow_none=True)
    return None if limit == math.inf else limit


def check_n_jobs(value: Any) -> int:
    """The thread count ``n_jobs`` asks for: ``-1`` is every core, ``0`` counts as 1."""
    n_jobs = check_int("n_jobs", value, low=-1)
    if n_jobs == -1:
        return os.cpu_count() or 1
    return max(n_jobs, 1)


def available_cores() -> int:
    """Cores this process may run on (its affinity mask, where the system has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity masks (macOS, Windows)
        return os.cpu_count() or 1
