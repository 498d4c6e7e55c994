"""Native CPU kernels for the XLA device, called from XLA programs through XLA's FFI (``jax.ffi``).

XLA:CPU lacks some kernels that matter (a product with packed 4-bit weights); this package holds our own,
as C++ sources built on first use with the system compiler (:mod:`.build`), registered once per process
(:mod:`.kernels`), and used by lowerings only where the device allows it (:mod:`.scope`): on the CPU
platform, with ``XLA_NATIVE_KERNELS`` on (a device property, default True) and the environment variable
``HETERO_SDK_NATIVE_KERNELS`` not ``0``. Where a kernel cannot be built, the lowering takes its pure-XLA
path and the reason is logged once. See docs/xla.md, "Native kernels".
"""

from hetero_sdk_jax.native.build import FLAGS, BuildError, cache_root, compiler_command
from hetero_sdk_jax.native.kernels import (
    ENV_VAR,
    KERNELS,
    NativeKernel,
    available,
    enabled_by_environment,
    register,
    registered,
)
from hetero_sdk_jax.native.scope import native_scope, scoped, use_native

__all__ = [
    "ENV_VAR", "FLAGS", "KERNELS", "BuildError", "NativeKernel", "available", "cache_root", "compiler_command",
    "enabled_by_environment", "native_scope", "register", "registered", "scoped", "use_native",
]  # fmt: skip
