"""AUTO: the meta-device that chooses where each model runs (OpenVINO's AUTO plugin).

``AUTO`` ranks the available devices (accelerators, then devices compiling for the CPU, then reference
devices, then the rest), ``AUTO:A,B`` takes its candidates in the order given. ``compile_model`` picks
the first candidate that runs the whole model, hands the model to HETERO over the candidates when none
does, and serves the first inferences from a reference device while the chosen one compiles.
"""

from hetero_sdk.auto.compiled_model import AutoCompiledModel
from hetero_sdk.auto.plugin import ENABLE_STARTUP_FALLBACK, AutoPlugin
from hetero_sdk.auto.priorities import REFERENCE_DEVICES, DeviceKind, default_priorities, device_kind
from hetero_sdk.auto.selection import Selection

__all__ = [
    "ENABLE_STARTUP_FALLBACK", "REFERENCE_DEVICES", "AutoCompiledModel", "AutoPlugin", "DeviceKind", "Selection",
    "default_priorities", "device_kind",
]  # fmt: skip
