"""Pre- and postprocessing built into a model, as OpenVINO's ``openvino.preprocess``.

```python
ppp = PrePostProcessor(model)
ppp.input().tensor().set_element_type(Type.u8).set_layout(Layout("NHWC")).set_spatial_dynamic_shape()
ppp.input().preprocess().convert_element_type(Type.f32).resize(ResizeAlgorithm.RESIZE_LINEAR).mean(127.5)
ppp.input().model().set_layout(Layout("NCHW"))
model = ppp.build()
```

``build()`` makes the steps ops of the model (Convert, Transpose, Interpolate, Subtract, Divide,
Gather), so every device runs them and HETERO places them as any other op.
"""

from __future__ import annotations

from hetero_sdk.errors import ModelValidationError
from hetero_sdk.graph.model import Model
from hetero_sdk.layout import Layout
from hetero_sdk.preprocess.build import build_model
from hetero_sdk.preprocess.info import (
    ColorFormat,
    InputInfo,
    InputModelInfo,
    InputTensorInfo,
    OutputInfo,
    OutputModelInfo,
    OutputTensorInfo,
    PostProcessSteps,
    PreProcessSteps,
    ResizeAlgorithm,
)

__all__ = [
    "ColorFormat", "InputInfo", "InputModelInfo", "InputTensorInfo", "Layout", "OutputInfo", "OutputModelInfo",
    "OutputTensorInfo", "PostProcessSteps", "PrePostProcessor", "PreProcessSteps", "ResizeAlgorithm",
]  # fmt: skip


class PrePostProcessor:
    """Collects the pre- and postprocessing of a model's inputs and outputs; :meth:`build` makes them ops.

    Unlike OpenVINO's, :meth:`build` leaves ``model`` as it was and returns the new model.

    :param model: the model to add steps to.
    """

    def __init__(self, model: Model) -> None:
        self._model = model
        self._inputs: dict[int, InputInfo] = {}
        self._outputs: dict[int, OutputInfo] = {}

    def input(self, name_or_index: str | int | None = None) -> InputInfo:
        """The preprocessing of one input: by tensor name or index; None for a model with one input.

        :raises ModelValidationError: for an unknown name or index, or None with several inputs.
        """
        index = self._index(name_or_index, self._model.inputs, "input")
        return self._inputs.setdefault(index, InputInfo(index))

    def output(self, name_or_index: str | int | None = None) -> OutputInfo:
        """The postprocessing of one output: by tensor name or index; None for a model with one output.

        :raises ModelValidationError: for an unknown name or index, or None with several outputs.
        """
        index = self._index(name_or_index, self._model.outputs, "output")
        return self._outputs.setdefault(index, OutputInfo(index))

    def build(self) -> Model:
        """The model with every step made into ops.

        :raises ModelValidationError: for a step that does not fit, naming the input or output and step.
        """
        return build_model(self._model, self._inputs, self._outputs)

    def _index(self, key: str | int | None, ports: list, kind: str) -> int:  # type: ignore[type-arg]
        names = sorted(n for p in ports for n in p.names)
        if key is None:
            if len(ports) != 1:
                raise ModelValidationError(
                    f"the model has {len(ports)} {kind}s; name one: {kind}({', '.join(map(repr, names))})"
                )
            return 0
        if isinstance(key, int) and not isinstance(key, bool):
            if not 0 <= key < len(ports):
                raise ModelValidationError(f"{kind} index {key} does not exist; the model has {len(ports)} {kind}s")
            return key
        for i, port in enumerate(ports):
            if key in port.names:
                return i
        raise ModelValidationError(f"the model has no {kind} named {key!r}; it has: {', '.join(names)}")
