"""``benchmark`` on a model with dynamic input dimensions suggests a ``-shape`` to try: the declared
dimensions kept, 640x640 for an image input whose height and width are dynamic (a detector's usual
size, not a 1x1 image), 1 for a batch or any other dimension."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from .helpers import Invoke, assert_one_line_error, parse_json


def _identity_model(path: Path, inputs: dict[str, tuple[int, list[str | int]]]) -> Path:
    """A model whose outputs are its inputs through Identity, each input ``name: (onnx type, dims)``."""
    values = [helper.make_tensor_value_info(name, kind, dims) for name, (kind, dims) in inputs.items()]
    outputs = [helper.make_tensor_value_info(f"{name}_out", kind, dims) for name, (kind, dims) in inputs.items()]
    nodes = [helper.make_node("Identity", [name], [f"{name}_out"], name=f"copy_{name}") for name in inputs]
    graph = helper.make_graph(nodes, "identities", values, outputs)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


@pytest.mark.parametrize(
    ("inputs", "declared", "suggested"),
    [
        (  # a detector exported with dynamic=True: NCHW
            {"images": (TensorProto.FLOAT, ["batch", 3, "height", "width"])},
            "images[batch,3,height,width]",
            "images[1,3,640,640]",
        ),
        (  # channels last, bytes, dimensions without names
            {"pixels": (TensorProto.UINT8, ["n", "h", "w", 3])},
            "pixels[n,h,w,3]",
            "pixels[1,640,640,3]",
        ),
    ],
)
def test_an_image_input_gets_a_typical_size(
    invoke: Invoke, tmp_path: Path, inputs: dict[str, tuple[int, list[str | int]]], declared: str, suggested: str
) -> None:
    path = _identity_model(tmp_path / "model.onnx", inputs)
    refused = invoke("benchmark", "-m", str(path), "-niter", "1")
    assert_one_line_error(
        refused, f"dynamic dimensions ({declared})", f'e.g. -shape "{suggested}"', "640x640", exit_code=2
    )
    data = parse_json(invoke("benchmark", "-m", str(path), "-shape", suggested, "-niter", "1", "--json"))
    assert data["check"]["status"] == "PASS"


def test_declared_dimensions_are_kept_and_other_dynamic_ones_become_one(invoke: Invoke, tmp_path: Path) -> None:
    inputs: dict[str, tuple[int, list[str | int]]] = {
        "features": (TensorProto.FLOAT, ["batch", 5, "h", "w"]),  # 5 channels: not an image
        "ids": (TensorProto.INT64, [2, "sequence"]),
        "scale": (TensorProto.FLOAT, [4]),
    }
    path = _identity_model(tmp_path / "model.onnx", inputs)
    refused = invoke("benchmark", "-m", str(path), "-niter", "1")
    assert_one_line_error(
        refused,
        "dynamic dimensions (features[batch,5,h,w], ids[2,sequence])",
        'e.g. -shape "features[1,5,1,1],ids[2,1],scale[4]"',
        exit_code=2,
    )
    assert "640" not in refused.stderr
