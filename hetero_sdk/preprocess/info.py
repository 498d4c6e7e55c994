"""What a user asks of one input or output: its tensor, its steps, its model side (the builders of
``ov.preprocess``: ``InputInfo``, ``InputTensorInfo``, ``PreProcessSteps``... ). They only record;
:mod:`hetero_sdk.preprocess.build` makes the ops."""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hetero_sdk.element_type import Type
from hetero_sdk.graph.node import Node, Output
from hetero_sdk.layout import Layout
from hetero_sdk.shape import PartialShape

__all__ = [
    "ColorFormat",
    "InputInfo",
    "InputModelInfo",
    "InputTensorInfo",
    "OutputInfo",
    "OutputModelInfo",
    "OutputTensorInfo",
    "PostProcessSteps",
    "PreProcessSteps",
    "ResizeAlgorithm",
    "Step",
]

CustomStep = Callable[[Output], Output | Node]
"""A custom step: takes the current output, returns the new one (an Output or a single-output Node)."""


class ResizeAlgorithm(enum.Enum):
    """How :meth:`PreProcessSteps.resize` interpolates (an Interpolate op of that mode)."""

    RESIZE_LINEAR = "linear"
    RESIZE_NEAREST = "nearest"
    RESIZE_CUBIC = "cubic"


class ColorFormat(enum.Enum):
    """The colour format of an image input (three channels along ``C``)."""

    UNDEFINED = "undefined"
    RGB = "rgb"
    BGR = "bgr"


@dataclass(frozen=True)
class Step:
    """One recorded step: its OpenVINO method name and arguments."""

    name: str
    args: tuple[Any, ...] = ()


def _layout(layout: Layout | str) -> Layout:
    return layout if isinstance(layout, Layout) else Layout(layout)


@dataclass
class InputTensorInfo:
    """What the user's tensor is (``ov.preprocess.InputTensorInfo``); each setter returns ``self``."""

    element_type: Type | None = None
    layout: Layout | None = None
    shape: PartialShape | None = None
    color_format: ColorFormat = ColorFormat.UNDEFINED
    spatial: tuple[int, int] | None = None  # (-1, -1): spatial_dynamic_shape

    def set_element_type(self, element_type: Any) -> InputTensorInfo:
        """The element type the user passes (a :class:`Type` or numpy dtype)."""
        self.element_type = Type.of(element_type)
        return self

    def set_layout(self, layout: Layout | str) -> InputTensorInfo:
        """The layout of the user's tensor."""
        self.layout = _layout(layout)
        return self

    def set_shape(self, shape: Sequence[int] | PartialShape) -> InputTensorInfo:
        """The shape of the user's tensor (``-1`` for a dynamic dimension)."""
        self.shape = shape if isinstance(shape, PartialShape) else PartialShape(list(shape))
        return self

    def set_color_format(self, color_format: ColorFormat, sub_names: Sequence[str] | None = None) -> InputTensorInfo:
        """The colour format of the user's image (RGB or BGR); ``sub_names`` is for multi-plane formats,
        which are not supported."""
        if not isinstance(color_format, ColorFormat):
            raise TypeError(f"set_color_format takes a ColorFormat (RGB, BGR), not {color_format!r}")
        self.color_format = color_format
        return self

    def set_spatial_dynamic_shape(self) -> InputTensorInfo:
        """The user's images have any height and width (resize them with :meth:`PreProcessSteps.resize`)."""
        self.spatial = (-1, -1)
        return self

    def set_spatial_static_shape(self, height: int, width: int) -> InputTensorInfo:
        """The user's images are ``height`` x ``width`` (resize them with :meth:`PreProcessSteps.resize`)."""
        self.spatial = (int(height), int(width))
        return self


@dataclass
class InputModelInfo:
    """What the model's input is (``ov.preprocess.InputModelInfo``)."""

    layout: Layout | None = None

    def set_layout(self, layout: Layout | str) -> InputModelInfo:
        """The layout of the model's input."""
        self.layout = _layout(layout)
        return self


@dataclass
class PreProcessSteps:
    """The steps from the user's tensor to the model's input, in order (``ov.preprocess.PreProcessSteps``);
    each returns ``self``."""

    steps: list[Step] = field(default_factory=list)

    def _add(self, name: str, *args: Any) -> PreProcessSteps:
        self.steps.append(Step(name, args))
        return self

    def convert_element_type(self, element_type: Any = None) -> PreProcessSteps:
        """Converts to ``element_type`` (None: the model input's)."""
        return self._add("convert_element_type", None if element_type is None else Type.of(element_type))

    def convert_layout(self, layout: Layout | str | Sequence[int] | None = None) -> PreProcessSteps:
        """Transposes to ``layout`` (None: the model input's), or by a permutation (a list of ints)."""
        if layout is not None and not isinstance(layout, (Layout, str)):
            layout = tuple(int(d) for d in layout)
        elif isinstance(layout, str):
            layout = Layout(layout)
        return self._add("convert_layout", layout)

    def resize(
        self, algorithm: ResizeAlgorithm, dst_height: int | None = None, dst_width: int | None = None
    ) -> PreProcessSteps:
        """Resizes ``H`` and ``W`` to ``dst_height`` x ``dst_width`` (None: the model input's)."""
        if not isinstance(algorithm, ResizeAlgorithm):
            raise TypeError(f"resize takes a ResizeAlgorithm (RESIZE_LINEAR, ...), not {algorithm!r}")
        return self._add("resize", algorithm, dst_height, dst_width)

    def mean(self, value: float | Sequence[float]) -> PreProcessSteps:
        """Subtracts ``value``: one number, or one per channel (``C``)."""
        return self._add("mean", value)

    def scale(self, value: float | Sequence[float]) -> PreProcessSteps:
        """Divides by ``value``: one number, or one per channel (``C``)."""
        return self._add("scale", value)

    def reverse_channels(self) -> PreProcessSteps:
        """Reverses the order of the channels (``C``)."""
        return self._add("reverse_channels")

    def convert_color(self, color_format: ColorFormat) -> PreProcessSteps:
        """Converts the image to ``color_format`` (from the tensor's, set by ``set_color_format``)."""
        if not isinstance(color_format, ColorFormat):
            raise TypeError(f"convert_color takes a ColorFormat (RGB, BGR), not {color_format!r}")
        return self._add("convert_color", color_format)

    def custom(self, step: CustomStep) -> PreProcessSteps:
        """Applies ``step`` (a callable taking the current :class:`Output`, returning the new one)."""
        if not callable(step):
            raise TypeError(f"custom takes a callable on an Output, not {step!r}")
        return self._add("custom", step)


@dataclass
class InputInfo:
    """One input's preprocessing (``ov.preprocess.InputInfo``)."""

    index: int
    tensor_info: InputTensorInfo = field(default_factory=InputTensorInfo)
    steps: PreProcessSteps = field(default_factory=PreProcessSteps)
    model_info: InputModelInfo = field(default_factory=InputModelInfo)

    def tensor(self) -> InputTensorInfo:
        """What the user's tensor is."""
        return self.tensor_info

    def preprocess(self) -> PreProcessSteps:
        """The steps."""
        return self.steps

    def model(self) -> InputModelInfo:
        """What the model's input is."""
        return self.model_info


@dataclass
class OutputTensorInfo:
    """What the user gets (``ov.preprocess.OutputTensorInfo``)."""

    element_type: Type | None = None
    layout: Layout | None = None

    def set_element_type(self, element_type: Any) -> OutputTensorInfo:
        """The element type the user gets."""
        self.element_type = Type.of(element_type)
        return self

    def set_layout(self, layout: Layout | str) -> OutputTensorInfo:
        """The layout the user gets."""
        self.layout = _layout(layout)
        return self


@dataclass
class OutputModelInfo:
    """What the model's output is (``ov.preprocess.OutputModelInfo``)."""

    layout: Layout | None = None

    def set_layout(self, layout: Layout | str) -> OutputModelInfo:
        """The layout of the model's output."""
        self.layout = _layout(layout)
        return self


@dataclass
class PostProcessSteps:
    """The steps from the model's output to the user's tensor (``ov.preprocess.PostProcessSteps``)."""

    steps: list[Step] = field(default_factory=list)

    def convert_element_type(self, element_type: Any = None) -> PostProcessSteps:
        """Converts to ``element_type`` (None: the tensor's, set by ``tensor().set_element_type``)."""
        self.steps.append(Step("convert_element_type", (None if element_type is None else Type.of(element_type),)))
        return self

    def convert_layout(self, layout: Layout | str | Sequence[int] | None = None) -> PostProcessSteps:
        """Transposes to ``layout`` (None: the tensor's), or by a permutation (a list of ints)."""
        if layout is not None and not isinstance(layout, (Layout, str)):
            layout = tuple(int(d) for d in layout)
        elif isinstance(layout, str):
            layout = Layout(layout)
        self.steps.append(Step("convert_layout", (layout,)))
        return self

    def custom(self, step: CustomStep) -> PostProcessSteps:
        """Applies ``step`` (a callable taking the current :class:`Output`, returning the new one)."""
        if not callable(step):
            raise TypeError(f"custom takes a callable on an Output, not {step!r}")
        self.steps.append(Step("custom", (step,)))
        return self


@dataclass
class OutputInfo:
    """One output's postprocessing (``ov.preprocess.OutputInfo``)."""

    index: int
    tensor_info: OutputTensorInfo = field(default_factory=OutputTensorInfo)
    steps: PostProcessSteps = field(default_factory=PostProcessSteps)
    model_info: OutputModelInfo = field(default_factory=OutputModelInfo)

    def tensor(self) -> OutputTensorInfo:
        """What the user gets."""
        return self.tensor_info

    def postprocess(self) -> PostProcessSteps:
        """The steps."""
        return self.steps

    def model(self) -> OutputModelInfo:
        """What the model's output is."""
        return self.model_info
