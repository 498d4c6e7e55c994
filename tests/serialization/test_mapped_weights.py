"""The native format reads its weights as views of the ``.bin`` file mapped read-only, not as a copy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from memory_maps import mapping_of

import hetero_sdk as hs
from hetero_sdk import Model, opset


def test_weights_read_from_a_bin_file_are_read_only_views_of_the_mapped_file(tmp_path: Path) -> None:
    weights = np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32)
    x = opset.parameter([2, 64], np.float32, name="x")
    hs.save_model(Model([opset.matmul(x, opset.constant(weights, name="w"))], [x], name="mm"), tmp_path / "m.json")
    model = hs.Core().read_model(tmp_path / "m.json")
    value = next(n.attrs["value"] for n in model.get_ops() if n.friendly_name == "w")
    mapping = mapping_of(value)
    assert mapping is not None, "the weight was copied out of the file"
    assert len(mapping) == (tmp_path / "m.bin").stat().st_size
    assert np.shares_memory(value, np.frombuffer(mapping, np.uint8))
    assert not value.flags.writeable
    np.testing.assert_array_equal(value, weights)
    inputs = np.ones((2, 64), np.float32)
    got = hs.Core().compile_model(model, "TEMPLATE")({"x": inputs})[0]
    np.testing.assert_allclose(got, inputs @ weights, rtol=1e-5)
