"""A workspace whose buffers are full of NaN, for the tests of kernels that take one: a kernel that
reads an element of a lent buffer before writing it shows NaN in its result."""

from __future__ import annotations

import numpy as np


class NanWorkspace:
    """Lends every buffer (outputs and temporaries) full of NaN, and owns whatever it is asked about."""

    def output(self, shape, dtype):
        return np.full(shape, np.nan, dtype)

    def temporary(self, name, shape, dtype):
        return np.full(shape, np.nan, dtype)

    def lent(self, value):
        return True
