"""The op definitions of the SDK's opset, grouped by family; importing the package defines all of them.

Each op is one :class:`~hetero_sdk.graph.OpDef` in its family module (``elementwise``,
``convolution``...), registered in :data:`OPS`. The factories users build graphs with are listed in
:mod:`hetero_sdk.opset`.

The package exports what defining an op takes (:class:`OpDef`, :func:`define`, the attribute kinds and
element-type sets, the input checks). The helpers that say what an op computes (``slice_index``,
``reduced_axes``...) stay in their family modules, shared by the op's definition and the devices; a
device plugin reaches them through :mod:`hetero_sdk.plugin`.
"""

from hetero_sdk.graph.op_def import (
    ANY,
    ARRAY,
    BOOL,
    ELEMENT_TYPE,
    FLOAT,
    FLOATS,
    INT,
    INTS,
    LOWER_STRING,
    OPS,
    PARTIAL_SHAPE,
    REQUIRED,
    STRING,
    STRINGS,
    Attr,
    AttrKind,
    InPlaceCache,
    Input,
    OpDef,
    OutputSpec,
    define,
)
from hetero_sdk.ops import (  # noqa: F401  (each family defines its ops on import)
    activation,
    basic,
    control_flow,
    convolution,
    cumulative,
    detection,
    elementwise,
    image,
    indexing,
    linear_algebra,
    movement,
    normalization,
    pooling,
    quantization,
    recurrent,
    reduction,
    shape_manipulation,
    signal,
    slicing,
    state,
    text,
)
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import INDEX_TYPES, NUMERIC_TYPES, REAL_TYPES, expect_rank, expect_same_types

STRUCTURAL_OPS = frozenset(t for t, op in OPS.items() if op.structural)
"""The op types that are graph structure, not computation: Parameter, Constant, Result."""

__all__ = [
    "ANY", "ARRAY", "Attr", "AttrKind", "BOOL", "ELEMENT_TYPE", "FLOAT", "FLOATS", "INDEX_TYPES", "INT", "INTS",
    "InPlaceCache", "Input", "LOWER_STRING", "NUMERIC_TYPES", "OPS", "OpDef", "OutputSpec", "PARTIAL_SHAPE",
    "REAL_TYPES", "REQUIRED", "STRING", "STRINGS", "STRUCTURAL_OPS", "as_output", "define", "expect_rank",
    "expect_same_types", "sdk_op_types",
]  # fmt: skip


def sdk_op_types() -> list[str]:
    """The op types of the SDK's opset, sorted: every defined type but the ones devices define."""
    return [t for t, op in OPS.items() if op.infer.__module__.startswith("hetero_sdk.ops.")]
