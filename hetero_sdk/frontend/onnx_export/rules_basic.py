"""Export rules of the basic family's conversions: Convert (ONNX's Cast, saturating or rounding where ONNX's
Cast would not) and BitCast."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx_export.context import ExportContext, exporter, onnx_type

__all__: list[str] = []


@exporter("Convert")
def convert(ctx: ExportContext) -> None:
    # OpenVINO's Convert saturates at the destination's limits where ONNX's Cast wraps: a Clip first.
    # Floats overflow (to infinity or NaN) where ONNX's Cast to float8 saturates: saturate=0.
    target: Type = ctx.attrs["destination_type"]
    source = ctx.element_type(0)
    x = ctx.input(0)
    if target in _SATURATING and source != Type.boolean:
        ctx.emit1("Cast", [x], ctx.out(), to=onnx_type(target), saturate=0)
        return
    if target is Type.f8e8m0 and source != Type.boolean:  # ml_dtypes' rounding: to nearest
        ctx.emit1("Cast", [x], ctx.out(), to=onnx_type(target), saturate=0, round_mode="nearest")
        return
    if target.is_integral and source not in (Type.boolean, Type.string):  # ONNX's Cast reads text itself
        info = ml_dtypes.iinfo(target.numpy)
        low: float
        high: float
        if source.is_integral:
            have = ml_dtypes.iinfo(source.numpy)
            low, high = max(int(info.min), int(have.min)), min(int(info.max), int(have.max))
            needed = low > have.min or high < have.max
        else:
            real = ml_dtypes.finfo(source.numpy)
            needed = float(real.max) > float(info.max)
            low = _inside(float(info.min), source)
            high = _inside(float(info.max), source)
        if needed:
            x = ctx.emit1("Clip", [x, ctx.const(low, source, "min"), ctx.const(high, source, "max")])
    ctx.emit1("Cast", [x], ctx.out(), to=onnx_type(target))


_SATURATING = frozenset({Type.f8e4m3, Type.f8e5m2, Type.f8e4m3fnuz, Type.f8e5m2fnuz})
"""The types ONNX's Cast saturates to unless told ``saturate=0``."""


def _inside(bound: float, source: Type) -> float:
    """The value of type ``source`` nearest ``bound`` on the side of zero (2**31 is not an i32)."""
    with np.errstate(over="ignore"):  # a bound past the type's range becomes inf, stepped back below
        value = np.asarray(bound, source.numpy)
    if abs(float(value)) > abs(bound):
        value = np.nextafter(value, np.zeros_like(value))
    return float(value)


@exporter("BitCast")
def bit_cast(ctx: ExportContext) -> None:
    if ctx.opset < 26:
        raise ctx.unsupported(f"BitCast in ONNX opset {ctx.opset} (ONNX defines it from opset 26)")
    ctx.emit1("BitCast", [ctx.input(0)], ctx.out(), to=onnx_type(ctx.attrs["destination_type"]))
