"""Rényi and Shannon entropies and the λ ↔ α link, computed stably for every λ in [1, ∞].

``α = 1 / (1 + log2 λ)``. Near λ = 1 the naive ``log2(Σ p^α) / (1 − α)`` cancels badly, so we
use ``log1p(Σ p·expm1((α − 1) ln p)) / ((1 − α) ln 2)`` with ``1 − α`` computed as ``t/(1 + t)``,
``t = log1p(λ − 1)/ln 2`` (spec §3.8).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["alpha_from_lambda", "lower_bound", "renyi_entropy", "shannon_entropy"]


def _alpha_and_complement(cost_base: float) -> tuple[float, float]:
    if math.isinf(cost_base):
        return 0.0, 1.0
    t = math.log1p(cost_base - 1.0) / math.log(2.0)
    return 1.0 / (1.0 + t), t / (1.0 + t)


def alpha_from_lambda(cost_base: float) -> float:
    """The Rényi order ``α = 1 / (1 + log2 λ)`` that matches the cost base λ.

    >>> alpha_from_lambda(2.0), alpha_from_lambda(1.0), alpha_from_lambda(float("inf"))
    (0.5, 1.0, 0.0)
    """
    return _alpha_and_complement(float(cost_base))[0]


def _masses(p: Any) -> np.ndarray:
    arr = np.asarray(p, dtype=np.float64).ravel()
    total = arr.sum()
    arr = arr[arr > 0]
    return arr / total if total > 0 else arr


def shannon_entropy(p: Any) -> float:
    """Shannon entropy in bits of the masses ``p`` (normalised; zeros ignored).

    >>> shannon_entropy([0.5, 0.25, 0.125, 0.125])
    1.75
    """
    q = _masses(p)
    return float(-(q * np.log2(q)).sum()) + 0.0


def _renyi(p: Any, eps: float) -> float:
    """Rényi entropy in bits for ``1 − α = eps`` (given exactly by the caller), stable near 0."""
    q = _masses(p)
    if eps == 0.0:
        return shannon_entropy(q)
    if eps == 1.0:
        return math.log2(len(q)) if len(q) else 0.0
    u = float((q * np.expm1(-eps * np.log(q))).sum())
    return math.log1p(u) / (eps * math.log(2.0))


def renyi_entropy(p: Any, alpha: float) -> float:
    """Rényi entropy of order ``alpha`` in bits (``alpha`` 1: Shannon; 0: log2 of the support).

    >>> round(renyi_entropy([0.5, 0.2, 0.15, 0.15], 0.5), 7)
    1.8955822
    """
    return _renyi(p, 1.0 - alpha)


def _renyi_at(p: Any, cost_base: float) -> float:
    """Rényi entropy at the order that matches λ, with ``1 − α`` kept exact near λ = 1."""
    return _renyi(p, _alpha_and_complement(cost_base)[1])


def lower_bound(target_masses: Any, cost_base: float) -> float:
    """Campbell's bound ``H_α(Π_y)`` on ``L_λ`` of any tree that identifies the targets.

    ``target_masses`` are the prior masses of the objects (object identification) or of the groups.
    At λ = 1 this is the Shannon entropy, at λ = ∞ ``log2`` of the number of targets with mass.

    >>> round(lower_bound([0.25] * 4, 3.0), 12)
    2.0
    """
    return _renyi_at(target_masses, float(cost_base))
