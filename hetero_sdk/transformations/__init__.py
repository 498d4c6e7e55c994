"""Model transformations: the pass manager, common passes and the graph-rewrite helpers.

Device plugins build their ``transform_model`` from these (OpenVINO's ``ov::pass`` namespace)::

    manager = PassManager()
    manager.register_group([ConstantFolding(), NopElimination()], "CommonOptimizations")
    manager.register_pass(MyDeviceFusion())
    manager.register_pass(DeadCodeElimination())
    manager.run_passes(model)

A pass is any object with a ``name`` and a ``run(model) -> bool`` method (:class:`ModelPass`). Every
rewrite keeps friendly names and tensor names stable and writes the fused-names record that
``query_model`` maps back through (:func:`fused_names`).
"""

from hetero_sdk.transformations.activation_fusion import HSwishFusion
from hetero_sdk.transformations.batch_norm_fusion import BatchNormDecomposition, ConvBatchNormFusion
from hetero_sdk.transformations.common import COMMON_OPTIMIZATIONS, common_optimizations
from hetero_sdk.transformations.constant_folding import DISABLE_CONSTANT_FOLDING, ConstantFolding
from hetero_sdk.transformations.dead_code import DeadCodeElimination
from hetero_sdk.transformations.freeze_inputs import FreezeInputs, IfFolding, frozen_value, simplify_frozen
from hetero_sdk.transformations.fused_names import (
    FUSED_NAMES,
    clear_fused_names,
    fused_names,
    merge_fused_names,
    set_fused_names,
)
from hetero_sdk.transformations.graph_rewrite import (
    ConsumerMap,
    MatcherPass,
    copy_runtime_info,
    eliminate_node,
    replace_node,
    replace_output,
)
from hetero_sdk.transformations.linear_fusion import (
    AddAddFusion,
    AddMultiplyFusion,
    BiasedActivation,
    ConvMultiplyFusion,
    MultiplyMultiplyFusion,
    channel_bias_and_activation,
    channel_scale,
    constant_operand,
)
from hetero_sdk.transformations.nop_elimination import NopElimination, is_nop
from hetero_sdk.transformations.pass_manager import (
    FunctionPass,
    ModelPass,
    PassConfig,
    PassGroup,
    PassManager,
    PassRecord,
)
from hetero_sdk.transformations.stateful import (
    BEAM_IDX,
    StatelessForm,
    find_kv_cache_pairs,
    make_stateful,
    make_stateless,
)

__all__ = [
    "BEAM_IDX",
    "COMMON_OPTIMIZATIONS",
    "DISABLE_CONSTANT_FOLDING",
    "FUSED_NAMES",
    "FreezeInputs",
    "AddAddFusion",
    "AddMultiplyFusion",
    "BiasedActivation",
    "BatchNormDecomposition",
    "ConstantFolding",
    "ConsumerMap",
    "ConvBatchNormFusion",
    "ConvMultiplyFusion",
    "DeadCodeElimination",
    "FunctionPass",
    "MatcherPass",
    "HSwishFusion",
    "IfFolding",
    "ModelPass",
    "MultiplyMultiplyFusion",
    "NopElimination",
    "PassConfig",
    "PassGroup",
    "PassManager",
    "PassRecord",
    "StatelessForm",
    "channel_bias_and_activation",
    "channel_scale",
    "clear_fused_names",
    "common_optimizations",
    "constant_operand",
    "copy_runtime_info",
    "eliminate_node",
    "find_kv_cache_pairs",
    "frozen_value",
    "fused_names",
    "is_nop",
    "make_stateful",
    "make_stateless",
    "merge_fused_names",
    "replace_node",
    "replace_output",
    "set_fused_names",
    "simplify_frozen",
]
