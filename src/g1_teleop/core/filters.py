"""Signal filters for teleoperation targets."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


class WeightedMovingFilter:
    """Weighted moving average over the last ``len(weights)`` distinct samples (OpenWBT's arm IK filter).

    ``weights[0]`` multiplies the newest sample, ``weights[1]`` the one before, and so on; the weights
    must be positive and sum to 1. A sample exactly equal to the newest stored one is skipped, so a
    producer that repeats its last value does not drag the average. Until the window is full the
    newest raw sample is returned unchanged.
    """

    def __init__(self, weights: Sequence[float] = (0.4, 0.3, 0.2, 0.1)) -> None:
        w = np.asarray(weights, dtype=float)
        if w.ndim != 1 or w.size == 0:
            raise ValueError(f"weights: expected a non-empty sequence of numbers, got {weights!r}")
        if not np.all(np.isfinite(w)) or np.any(w <= 0.0):
            raise ValueError(f"weights: every weight must be a positive finite number, got {weights!r}")
        if not math.isclose(float(w.sum()), 1.0, abs_tol=1e-9):
            raise ValueError(f"weights: must sum to 1, got {weights!r} (sum {w.sum():.12g})")
        self._weights = w
        self._window: np.ndarray | None = None  # (len(weights), n) samples, newest first
        self._count = 0  # samples in the window
        self._value: np.ndarray | None = None

    @property
    def value(self) -> np.ndarray | None:
        """Latest filtered value (a copy), or None before the first sample."""
        return None if self._value is None else self._value.copy()

    def update(self, sample: np.ndarray) -> np.ndarray:
        """Add ``sample`` (any shape, the same for every call) and return the filtered value."""
        x = np.asarray(sample, dtype=float)
        if self._window is None:
            self._shape = x.shape
            self._window = np.empty((self._weights.size, x.size))
        elif x.shape != self._shape:
            raise ValueError(f"sample shape {x.shape} differs from the filter's {self._shape}")
        elif np.array_equal(x.ravel(), self._window[0]):
            return self.value  # type: ignore[return-value]  # set by the earlier update
        self._window[1:] = self._window[:-1]
        self._window[0] = x.ravel()
        self._count = min(self._count + 1, self._weights.size)
        if self._count < self._weights.size:
            self._value = x.copy()
        else:
            self._value = (self._weights @ self._window).reshape(self._shape)
        return self._value.copy()

    def reset(self) -> None:
        """Forget all samples."""
        self._window = None
        self._count = 0
        self._value = None
