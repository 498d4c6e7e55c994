"""The coefficients of the native SiLU's polynomial for e^s on s in [-ln2 / 2, ln2 / 2] (``avx512_math.h``).

A least-squares fit of the relative error on Chebyshev nodes, then a few Remez-like reweightings that push
the fit toward equal ripple, in float64; the coefficients rounded to float32 and the largest relative error
of the float32 coefficients reported (evaluated in float64, so the figure is the polynomial's own error,
not its rounding in float32 Horner steps)::

    python bench/silu_coefficients.py [degree]
"""

from __future__ import annotations

import sys

import numpy as np

HALF_LN2 = float(np.log(2.0) / 2)


def fit(degree: int, fixed: tuple[float, ...] = (), nodes: int = 2000, rounds: int = 30) -> np.ndarray:
    """Coefficients c[0..degree] (lowest first) minimising max |p(s) e^-s - 1| on the reduced range, the
    lowest ones held at ``fixed``."""
    s = HALF_LN2 * np.cos(np.pi * (np.arange(nodes) + 0.5) / nodes)
    basis = np.vander(s, degree + 1, increasing=True) * np.exp(-s)[:, None]
    target = 1 - basis[:, : len(fixed)] @ np.asarray(fixed, np.float64)
    free = basis[:, len(fixed) :]
    weights = np.ones(nodes)
    coefficients: np.ndarray = np.zeros(degree + 1 - len(fixed))
    for _ in range(rounds):  # Lawson's iteration: weighted least squares tending to the minimax fit
        coefficients = np.linalg.lstsq(free * weights[:, None], target * weights, rcond=None)[0]
        error = np.abs(free @ coefficients - target)
        weights = weights * np.sqrt(error / error.max())
        weights = weights / weights.max()
    return np.concatenate([np.asarray(fixed, np.float64), coefficients])


def fit_float32(degree: int) -> np.ndarray:
    """The fit with c0 held at 1 (float32's step above 1 is 1.2e-7, as large as the whole fit's error) and each
    other coefficient rounded to float32 in turn, lowest first, the higher ones refitted around it (which
    recovers most of what rounding them all at once loses)."""
    fixed: tuple[float, ...] = (1.0,)
    for _ in range(degree):
        fixed = (*fixed, float(np.float32(fit(degree, fixed)[len(fixed)])))
    return np.asarray(fixed)


def relative_error(coefficients: np.ndarray) -> float:
    """The largest relative error of the polynomial against e^s on a dense grid of the reduced range."""
    s = np.linspace(-HALF_LN2, HALF_LN2, 200001)
    return float(np.max(np.abs(np.polynomial.polynomial.polyval(s, coefficients) * np.exp(-s) - 1)))


def main() -> None:
    degree = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    exact, rounded = fit(degree), fit_float32(degree)
    print(
        f"degree {degree}: max relative error {relative_error(exact):.3g} (float64 coefficients), "
        f"{relative_error(rounded):.3g} (float32)"
    )
    for power, value in enumerate(rounded.astype(np.float32)):
        print(f"  c{power} = {np.format_float_scientific(value, unique=True)}f")


if __name__ == "__main__":
    main()
