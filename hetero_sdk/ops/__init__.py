"""The op definitions of the SDK's opset, grouped by family; importing the package defines all of them.

Each op is one :class:`~hetero_sdk.graph.OpDef` in its family module (``elementwise``,
``convolution``...), registered in :data:`OPS`. The factories users build graphs with are listed in
:mod:`hetero_sdk.opset`.
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
    Input,
    OpDef,
    OutputSpec,
    define,
)
from hetero_sdk.ops import (  # noqa: F401  (each family defines its ops on import)
    activation,
    activation_openvino,
    basic,
    control_flow,
    convolution,
    convolution_col2im,
    convolution_deform,
    cumulative,
    detection,
    detection_roi,
    elementwise,
    image,
    image_resize,
    indexing,
    linear_algebra,
    linear_algebra_attention,
    movement,
    movement_blocks,
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
from hetero_sdk.ops.activation import gelu_tanh
from hetero_sdk.ops.basic import as_output, as_outputs, integer_saturation
from hetero_sdk.ops.checks import INDEX_TYPES, NUMERIC_TYPES, REAL_TYPES, expect_rank, expect_same_types
from hetero_sdk.ops.control_flow import bodies, loop_iterations
from hetero_sdk.ops.convolution import backprop_geometry, resolve_pads, window_output_dims
from hetero_sdk.ops.folding import constant_value
from hetero_sdk.ops.image import resize_plan
from hetero_sdk.ops.image_resize import apply_resize, resize_tables
from hetero_sdk.ops.indexing import scatter_positions
from hetero_sdk.ops.linear_algebra import einsum_terms, matmul_shape
from hetero_sdk.ops.normalization import batch_normalized
from hetero_sdk.ops.reduction import reduced_axes, type_limits
from hetero_sdk.ops.shape_manipulation import reshape_dims, squeezed_dims, unsqueezed_dims
from hetero_sdk.ops.slicing import slice_index, strided_slice_index

STRUCTURAL_OPS = frozenset(t for t, op in OPS.items() if op.structural)
"""The op types that are graph structure, not computation: Parameter, Constant, Result."""

__all__ = [
    "ANY", "ARRAY", "Attr", "AttrKind", "BOOL", "ELEMENT_TYPE", "FLOAT", "FLOATS", "INDEX_TYPES", "INT", "INTS",
    "Input", "LOWER_STRING", "NUMERIC_TYPES", "OPS", "OpDef", "OutputSpec", "PARTIAL_SHAPE", "REAL_TYPES",
    "REQUIRED", "STRING", "STRINGS", "STRUCTURAL_OPS", "as_output", "as_outputs", "backprop_geometry",
    "batch_normalized", "bodies",
    "constant_value", "define", "einsum_terms", "expect_rank", "expect_same_types", "gelu_tanh", "integer_saturation",
    "loop_iterations",
    "apply_resize", "matmul_shape", "reduced_axes", "reshape_dims", "resize_plan", "resize_tables", "resolve_pads",
    "scatter_positions", "sdk_op_types", "slice_index", "squeezed_dims", "strided_slice_index", "type_limits",
    "unsqueezed_dims", "window_output_dims",
]  # fmt: skip


def sdk_op_types() -> list[str]:
    """The op types of the SDK's opset, sorted: every defined type but the ones devices define."""
    return [t for t, op in OPS.items() if op.infer.__module__.startswith("hetero_sdk.ops.")]
