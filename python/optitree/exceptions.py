"""Exceptions and warnings raised by optitree.

Every error that optitree raises on purpose is an :class:`OptitreeError`. The
subclasses also derive from the matching built-in exception so that code that
catches ``ValueError`` (as scikit-learn's tooling does) keeps working.

The Rust core raises these same classes through one mapping in the binding
crate; nothing else crosses the boundary.
"""

from __future__ import annotations

__all__ = [
    "DataError",
    "InfeasibleError",
    "InternalError",
    "InvalidParameterError",
    "NotProvenOptimalWarning",
    "OptitreeError",
    "SchemaVersionError",
    "UnseenCategoryWarning",
]


class OptitreeError(Exception):
    """Base class of every error optitree raises on purpose.

    Examples
    --------
    >>> from optitree.exceptions import DataError, OptitreeError
    >>> issubclass(DataError, OptitreeError)
    True
    """


class DataError(OptitreeError, ValueError):
    """The data are unusable: wrong shape, NaN where not allowed, unknown column, ...

    The message names the offending column, row or value and says what is allowed.

    Examples
    --------
    >>> from optitree.exceptions import DataError
    >>> isinstance(DataError("column 'age' holds NaN"), ValueError)
    True
    """


class InvalidParameterError(OptitreeError, ValueError):
    """A parameter has a value outside its allowed range or type.

    The message names the parameter, the value received and what is allowed.

    Examples
    --------
    >>> from optitree.exceptions import InvalidParameterError
    >>> str(InvalidParameterError("penalty must be in [0, 1), got 2"))
    'penalty must be in [0, 1), got 2'
    """


class SchemaVersionError(DataError):
    """A saved model was written by a newer optitree, or is not an optitree model.

    Examples
    --------
    >>> from optitree.exceptions import SchemaVersionError, DataError
    >>> issubclass(SchemaVersionError, DataError)
    True
    """


class InfeasibleError(OptitreeError, ValueError):
    """No tree satisfies the constraints on these data (for example exactly K proper splits
    under a depth or leaf-size limit). Also a :class:`ValueError`.

    >>> issubclass(InfeasibleError, ValueError)
    True
    """


class InternalError(OptitreeError, RuntimeError):
    """A bug in optitree: an invariant the library guarantees was broken.

    Please report it with the data and parameters that triggered it.

    Examples
    --------
    >>> from optitree.exceptions import InternalError
    >>> issubclass(InternalError, RuntimeError)
    True
    """


class NotProvenOptimalWarning(UserWarning):
    """A search stopped (time, node or memory limit, interruption) before proving optimality.

    The fitted tree is the best one found; ``status_``, ``lower_bound_`` and
    ``upper_bound_`` tell how far from proven it is.

    Examples
    --------
    >>> import warnings
    >>> from optitree.exceptions import NotProvenOptimalWarning
    >>> issubclass(NotProvenOptimalWarning, UserWarning)
    True
    """


class UnseenCategoryWarning(UserWarning):
    """Data to predict hold categories that were not seen at fit time.

    Such a row cannot follow a multiway split on that column: it stops there and is
    predicted as that node predicts (the nearest node above with training rows). The message
    names the column, how many rows and the first such value.

    Examples
    --------
    >>> from optitree.exceptions import UnseenCategoryWarning
    >>> issubclass(UnseenCategoryWarning, UserWarning)
    True
    """
