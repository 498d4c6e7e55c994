"""hetero-sdk-ray: the RAY device of hetero-sdk.

Installing the distribution registers the device ``RAY`` through the ``hetero_sdk.devices`` entry
point. Each device id (``RAY.0``, ``RAY.1``, ...) is a Ray actor holding a device plugin of the host it
runs on (``TARGET_DEVICE``), so that ``HETERO:RAY.0,RAY.1`` splits one model across hosts. The plugin
uses only the SDK's public plugin API.
"""

from hetero_sdk_ray.compiled_model import ACTOR_STATE, RayCompiledModel
from hetero_sdk_ray.plugin import PLUGIN_VERSION as __version__
from hetero_sdk_ray.plugin import RayPlugin

__all__ = ["ACTOR_STATE", "RayCompiledModel", "RayPlugin", "__version__"]
