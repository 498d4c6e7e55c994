"""The XLA compiled model: the model lowered to one JAX function, compiled ahead of time for a device.

Static models are compiled once, in ``compile_model``: ``jax.jit(fn).lower(shapes).compile()``, so
inference pays no tracing and no XLA compile. A model with dynamic input dimensions is compiled
lazily, once per concrete combination of input shapes, and the last ``XLA_SHAPE_CACHE_SIZE``
executables (default 8) are kept, least recently used first out. A model with inputs that decide
shapes is compiled per value of those inputs (:mod:`hetero_sdk_jax.specialization`).

The model's weights (its large Constants: :func:`~hetero_sdk_jax.lowering.weights_of`) are moved to
the device once, when the first executable needs them, and every executable takes them as arguments
after the model's inputs: they are not baked into the programs, so compiling costs the same whatever
the weights weigh, and executables for several input shapes share one copy. A weight its consumers
read in another layout (a convolution filter) is transformed once on the host and only that is moved
(:mod:`~hetero_sdk_jax.lowering.weight_layout`); XLA then copies no weight on a call. On the CPU the
device buffer of a suitably aligned read-only host array (a memory-mapped weight, a transformed one)
is that array itself.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from typing import Any

import jax
import jax.export
import numpy as np
from hetero_sdk import Model
from hetero_sdk.errors import CompilationError, InferenceError
from hetero_sdk.plugin import CompiledModel, RunContext, fused_names, rt_info
from jax.sharding import SingleDeviceSharding

from hetero_sdk_jax.backend import Backend
from hetero_sdk_jax.config import (
    CACHE_DIR,
    DEFAULT_SHAPE_CACHE_SIZE,
    NATIVE_KERNELS,
    SHAPE_BUCKETS,
    SHAPE_CACHE_SIZE,
    compute_precision,
)
from hetero_sdk_jax.context import XlaTensor, x64_scope
from hetero_sdk_jax.executable_cache import Executable, ExecutableCache, compile_ahead
from hetero_sdk_jax.export import export_blob
from hetero_sdk_jax.lowering import Weight, check_extents, lower, specialize, weights_of
from hetero_sdk_jax.native import KERNELS, native_scope, scoped
from hetero_sdk_jax.persistent_cache import cache_folder, compiling_with_cache
from hetero_sdk_jax.shape_buckets import BucketPlan, ShapeBuckets, keep_rows, pad
from hetero_sdk_jax.specialization import ValueSpecializer, plan_values

__all__ = ["WithWeights", "XlaCompiledModel"]

Shapes = tuple[tuple[int, ...], ...]

_NATIVE_CALLS = [jax.export.DisabledSafetyCheck.custom_call(target) for target in KERNELS]
"""``jax.export`` refuses custom calls it does not know: ours are allowed (a blob records those it calls)."""


class WithWeights:
    """A compiled executable with the weights it takes after the model's inputs bound: called with the
    inputs alone; any other attribute is the executable's (``as_text()``, ``memory_analysis()``...).

    :ivar compiled: the ``jax.stages.Compiled`` itself (its arguments: the inputs, then the weights).
    :ivar weights: the weights' device buffers.
    """

    def __init__(self, compiled: Any, weights: Sequence[jax.Array]) -> None:
        self.compiled = compiled
        self.weights = tuple(weights)

    def __call__(self, *inputs: Any) -> Any:
        return self.compiled(*inputs, *self.weights)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.compiled, name)


class XlaCompiledModel(CompiledModel):
    """A model compiled by XLA for one JAX device.

    :param model: the model as the user gave it (a clone this object owns): its ports, and the graph
        that is lowered. For an imported static blob, a stand-in with the same ports.
    :param device_name: ``XLA.<id>`` (the registered name and the device id).
    :param config: the resolved configuration.
    :param backend: the JAX backend; ``device`` is one of its devices.
    :param lowerable: False for an imported blob without its graph: only ``executables`` can run.
    :param executables: exported executables by input shapes (from an imported blob).
    :param x64: whether 64-bit types are needed; computed from the graph when None.
    :raises UnsupportedOperationError: naming the ops XLA cannot run.
    :raises CompilationError: when tracing or XLA fails.
    """

    def __init__(
        self,
        model: Model,
        device_name: str,
        config: Mapping[str, Any],
        backend: Backend,
        device: jax.Device,
        *,
        lowerable: bool = True,
        executables: Mapping[Shapes, jax.export.Exported] | None = None,
        x64: bool | None = None,
        executor: Executor | None = None,
    ) -> None:
        super().__init__(model, device_name, config, executor)
        self.backend, self.device = backend, device
        self.precision = compute_precision(dict(config))
        self._sharding = SingleDeviceSharding(device)
        self._exec_type = f"xla:{backend.platform}"
        self.copy_ahead = backend.platform != "cpu"
        """Whether host outputs are copied back as soon as the run is queued: on an accelerator each copy
        then follows the computation on the device's stream, instead of waiting for the host to see the
        run finish first, and several outputs copy at once; on the CPU the host array is a view."""
        self._lowerable = lowerable
        cache_dir = config.get(CACHE_DIR)
        self.cache_folder = cache_folder(cache_dir) if cache_dir else None
        """Where executables are cached when compiled (``CACHE_DIR``: :mod:`hetero_sdk_jax.persistent_cache`);
        ``loaded_from_cache`` turns True when one is read from there instead of compiled."""
        self.cache_size = int(config.get(SHAPE_CACHE_SIZE, DEFAULT_SHAPE_CACHE_SIZE))
        self.native_kernels = bool(config.get(NATIVE_KERNELS, True))
        """Whether lowerings may call native kernels (``XLA_NATIVE_KERNELS``; :mod:`hetero_sdk_jax.native`)."""
        self._cache: ExecutableCache[Shapes, Executable] = ExecutableCache(self.cache_size)
        self._weights: dict[tuple[Any, ...], tuple[np.ndarray, jax.Array]] = {}  # by Weight.key (array kept alive)
        self._weights_lock = threading.Lock()
        self.by_value: ValueSpecializer | None = None
        """Set when inputs decide shapes: the model is compiled per value of those inputs."""
        if lowerable:
            analysis, by_value = plan_values(model)
            analysis.check(model, device_name)
            x64 = analysis.needs_x64 if x64 is None else x64
            self.by_value = ValueSpecializer(self, by_value) if by_value else None
        self.x64 = bool(x64)
        for shapes, exported in (executables or {}).items():
            self._cache.preload(shapes, self._load(shapes, exported))
        self._donated = tuple(
            i for i, parameter in enumerate(model.get_parameters()) if parameter.get_rt_info().get(rt_info.DONATABLE)
        )
        """The inputs whose buffers an executable may reuse (:data:`hetero_sdk.rt_info.DONATABLE`)."""
        self.is_static = all(port.partial_shape.is_static for port in model.inputs)
        self.compile_count = 0
        """The executables this compiled model has made (compiled, or read from ``CACHE_DIR``)."""
        self.buckets: ShapeBuckets | None = None
        """The dynamic dimensions padded to buckets (``XLA_SHAPE_BUCKETS=POW2``), None when there are none."""
        dynamic = lowerable and not self.is_static and self.by_value is None and not self._donated
        if dynamic and config.get(SHAPE_BUCKETS, "POW2") == "POW2":
            self.buckets = ShapeBuckets(model) or None
        self._static: Executable | None = None  # the only executable of a static model
        self._last: tuple[Shapes, Executable] | None = None
        """The input shapes and executable of the last call of a dynamic model: a call with the same shapes
        takes it without the cache's lock (it is the cache's most recent entry unless another thread ran
        other shapes since, which only blurs the cache's least-recently-used order)."""
        if self.is_static and self.by_value is None and (lowerable or self._cache):
            self._static = self._executable(tuple(port.shape for port in model.inputs))

    # -- running ------------------------------------------------------------------------------------

    def run(self, inputs: Sequence[Any], context: RunContext) -> list[Any]:
        """Moves the inputs to the device once, runs the executable, copies the outputs back (or keeps
        them on the device when ``context.remote_outputs``). On an accelerator, with
        ``context.host_outputs_later`` (an infer request) and no profiling, the JAX arrays come back as
        soon as the run is queued, their copies to the host started: the request's bookkeeping then
        overlaps the run.

        Host inputs are handed to the executable as numpy arrays: its C++ dispatch copies them to the
        device in the same call, several times faster than a separate ``jax.device_put`` for small
        tensors. With ``PERF_COUNT`` they are moved with ``jax.device_put`` first, so that the
        transfer gets its own profiling row.
        """
        fast = context.profile is None and not self.x64 and not context.remote_outputs
        executable = self._static or (self._same_shapes_as_last(inputs) if fast else None)
        if executable is not None and fast:
            # the fast path of a static model (most calls), or of a dynamic one called again with the
            # shapes of its last call: host arrays in, host arrays out
            for value in inputs:
                if type(value) is not np.ndarray:
                    inputs = [self._argument(v) for v in inputs]
                    break
            outputs = executable.call(*inputs)  # (below: _fetch's choice, inline on this path)
            if context.host_outputs_later and self.copy_ahead:
                return self._copying_back(outputs)
            return self._to_host(outputs)
        if self.by_value is not None:
            return self.by_value.run(inputs, context)
        unpadded = True
        if executable is None and self.buckets is not None and not context.remote_outputs:
            plan = self.buckets.plan([tuple(v.shape) for v in inputs])
            if plan is not None and all(type(v) is np.ndarray for v in inputs):
                return self._run_bucketed(plan, inputs, context)
            unpadded = plan is None
        if executable is None:
            shapes = tuple(tuple(v.shape) for v in inputs)
            executable = self._executable(shapes)
            if unpadded:  # (shapes a bucket plan leaves as they are: the same shapes always run this executable)
                self._last = (shapes, executable)
        if context.profile is None and not self.x64:  # the fast path: no context managers
            return self._fetch(executable.call(*self._arguments(inputs)), context)
        with x64_scope(self.x64):
            return self._run_scoped(executable, inputs, context)

    def _run_bucketed(self, plan: BucketPlan, inputs: Sequence[np.ndarray], context: RunContext) -> list[Any]:
        """Runs the executable of the bucket's shapes on the inputs padded with zeros, and returns the
        outputs' rows for the unpadded inputs (host arrays: views of the padded results)."""
        executable = self._executable(plan.shapes)
        padded = [pad(value, shape) for value, shape in zip(inputs, plan.shapes)]
        with x64_scope(self.x64):
            outputs = self._run_scoped(executable, padded, context)
        return [keep_rows(np.asarray(o), keep) for o, keep in zip(outputs, plan.keep)]

    def _run_scoped(self, executable: Executable, inputs: Sequence[Any], context: RunContext) -> list[Any]:
        profile = context.profile
        if profile is None:
            return self._fetch(executable.call(*self._arguments(inputs)), context)
        name, kind = self.model.friendly_name, self._exec_type
        with context.timed(f"{name}/host_to_device", "Transfer", kind):
            arguments = jax.block_until_ready(jax.device_put(self._arguments(inputs), self.device))
        context.check_cancelled()
        with context.timed(name, "XlaExecutable", kind):
            outputs = jax.block_until_ready(executable.call(*arguments))
        self.keep_profile(profile, whole_model=True)  # the executable runs every op
        if context.remote_outputs:
            return self._fetch(outputs, context)
        with context.timed(f"{name}/device_to_host", "Transfer", kind):
            return self._fetch(outputs, context)

    def _same_shapes_as_last(self, inputs: Sequence[Any]) -> Executable | None:
        """The executable of a dynamic model's last call when ``inputs`` are host arrays of its shapes."""
        last = self._last  # (one read: another thread may replace it)
        if last is None or any(type(value) is not np.ndarray for value in inputs):
            return None
        return last[1] if tuple([value.shape for value in inputs]) == last[0] else None

    def _arguments(self, inputs: Sequence[Any]) -> list[Any]:
        return [self._argument(value) for value in inputs]

    def _argument(self, value: Any) -> Any:
        if isinstance(value, XlaTensor):
            array = value.array
            return array if array.devices() == {self.device} else jax.device_put(array, self.device)
        return value if isinstance(value, np.ndarray) else np.asarray(value)

    def _fetch(self, outputs: Sequence[jax.Array], context: RunContext) -> list[Any]:
        """The outputs as the caller takes them: remote tensors; on an accelerator, the JAX arrays with
        their copies back started when the caller reads them later and the run is not profiled (its
        transfer row times the copy); else host arrays (on the CPU, views of the finished run)."""
        if context.remote_outputs:
            return [XlaTensor(o, self.device_name) for o in outputs]
        if context.host_outputs_later and self.copy_ahead and context.profile is None:
            return self._copying_back(outputs)
        return self._to_host(outputs)

    def _to_host(self, outputs: Sequence[jax.Array]) -> list[np.ndarray]:
        if self.copy_ahead:
            outputs = self._copying_back(outputs)
        return [np.asarray(o) for o in outputs]

    def _copying_back(self, outputs: Sequence[jax.Array]) -> list[jax.Array]:
        for output in outputs:
            output.copy_to_host_async()
        return list(outputs)

    # -- compiling ----------------------------------------------------------------------------------

    def _executable(self, shapes: Shapes) -> Executable:
        return self._cache.get_or_make(shapes, lambda: self._compile(shapes))

    def _specs(self, shapes: Shapes, sharded: bool = True) -> list[jax.ShapeDtypeStruct]:
        sharding = self._sharding if sharded else None
        return [
            jax.ShapeDtypeStruct(shape, port.element_type.numpy, sharding=sharding)
            for shape, port in zip(shapes, self.model.inputs)
        ]

    def _compile(self, shapes: Shapes) -> Executable:
        if not self._lowerable:  # (an imported model without its graph, for shapes it does not hold)
            known = ", ".join(str([list(s) for s in k]) for k in self._cache.kept_keys())
            raise InferenceError(
                f"the imported model '{self.model.friendly_name}' holds executables for input shapes {known} "
                f"only, not {[list(s) for s in shapes]}; export it again from a compile for these shapes"
            )
        if self.is_static:
            graph = self.model
            check_extents(graph, CompilationError, " (from the model's constants)")
        else:
            graph = specialize(self.model, shapes)
        return self.compile_graph(
            graph, self._specs(shapes),
            lambda: f"device {self.device_name}: XLA failed to compile '{self.model.friendly_name}' for input "
            f"shapes {[list(s) for s in shapes]}", self._donated,
        )  # fmt: skip

    def compile_graph(
        self,
        graph: Model,
        specs: Sequence[jax.ShapeDtypeStruct],
        describe: Callable[[], str],
        donated: tuple[int, ...] = (),
    ) -> Executable:
        """Lowers ``graph`` (static shapes) and compiles it for inputs ``specs``, its weights taken as
        arguments (each in the layout its consumers read, moved to the device on first use, then
        shared by every executable).

        :param describe: what failed, for the message (see :func:`compile_ahead`).
        :param donated: the inputs whose buffers an output may reuse (see :func:`compile_ahead`).
        """
        platform, native = self.backend.platform, self.native_kernels
        with native_scope(platform, native):
            host = weights_of(graph, self.precision)
        with x64_scope(self.x64):
            source = scoped(lower(graph, self.precision, self.backend.divides_inexactly, host), platform, native)
        device = self._device_weights(host)
        weight_specs = [jax.ShapeDtypeStruct(w.shape, w.dtype, sharding=self._sharding) for w in device]
        with compiling_with_cache(self.cache_folder) as read:
            compiled = compile_ahead(
                source, [*specs, *weight_specs], self._sharding, self.x64, describe, self.backend.compiler_options,
                donated,
            )  # fmt: skip
        if read[0]:
            self.loaded_from_cache = True
        self.compile_count += 1
        exportable = tuple(w.value if w.layout is None and w.compute is None else None for w in host)
        return Executable(compiled, source=source, weights=tuple(device), host_weights=exportable)

    def _device_weights(self, host: Sequence[Weight]) -> list[jax.Array]:
        """The device buffers of ``host`` weights, each moved once (in its layout) for the whole compiled
        model; a transformed one is made on the host just before it moves, so one weight at a time
        exists twice (none on the CPU, where the device buffer is the transformed array itself)."""
        with self._weights_lock:
            for weight in host:
                if weight.key not in self._weights:
                    self._weights[weight.key] = (weight.value, jax.device_put(weight.prepare(), self.device))
            return [self._weights[weight.key][1] for weight in host]

    def _load(self, shapes: Shapes, exported: jax.export.Exported) -> Executable:
        with x64_scope(self.x64):
            lowered = jax.jit(exported.call, out_shardings=self._sharding).lower(*self._specs(shapes))
            compiled = lowered.compile(self.backend.compiler_options)
        return Executable(compiled, exported=exported)

    # -- export and introspection -------------------------------------------------------------------

    def exported_executables(self) -> dict[Shapes, jax.export.Exported]:
        """Every cached executable as serializable StableHLO (``jax.export``), by input shapes."""
        entries = self._cache.items()
        found = {}
        for shapes, executable in entries:
            with executable.lock:
                if executable.exported is None:
                    with x64_scope(self.x64):
                        executable.exported = jax.export.export(
                            jax.jit(executable.exportable_source()),
                            platforms=[self.backend.platform],
                            disabled_checks=_NATIVE_CALLS,
                        )(*self._specs(shapes, sharded=False))
                found[shapes] = executable.exported
        return found

    def jax_executable(self, shapes: Sequence[Sequence[int]] | None = None) -> Any:
        """The ahead-of-time compiled JAX executable (``jax.stages.Compiled``) for the given input
        shapes (the model's own when static), compiling it if needed: call it with one array per
        input to run the model from JAX code, without infer requests. For a model with weights
        (large constants, which the executable takes after the inputs) it comes with them bound: a
        :class:`WithWeights` that calls it so, and answers everything else (``as_text()``,
        ``memory_analysis()``...) as the executable itself.

        :raises InferenceError: for a dynamic model called without shapes, shapes a graph-less
            imported model lacks, or a model compiled per input value (see :attr:`by_value`).
        """
        if self.by_value is not None:
            raise InferenceError(
                f"model '{self.model.friendly_name}' is compiled per value of its inputs {self.by_value.input_names}; "
                "it has no single executable: run it through infer requests"
            )
        if shapes is None:
            if not self.is_static:
                raise InferenceError(f"model '{self.model.friendly_name}' has dynamic inputs; pass their shapes")
            shapes = [port.shape for port in self.model.inputs]
        executable = self._executable(tuple(tuple(int(d) for d in s) for s in shapes))
        return WithWeights(executable.compiled, executable.weights) if executable.weights else executable.compiled

    @property
    def cached_shapes(self) -> list[Shapes]:
        """The input shapes of the executables kept, least recently used first (at most
        ``XLA_SHAPE_CACHE_SIZE`` for a model with dynamic inputs)."""
        return self._cache.kept_keys()

    @property
    def lowerable(self) -> bool:
        """True when the model's graph is at hand (new input shapes can be compiled)."""
        return self._lowerable

    def export_model(self) -> bytes:
        """A checksummed blob holding the serialized StableHLO of every cached executable (see
        :mod:`hetero_sdk_jax.export`)."""
        return export_blob(self)

    def get_runtime_model(self) -> Model:
        """The model as XLA runs it: every op fused into one executable per input shape. Each op's
        rt_info names itself (``originalLayersNames``), its type (``layerType``), ``execType``
        (``xla:<platform>``), the precision it computes in and, after a profiled run, the
        executable's time (``execTimeMcs``, shared by every op it fuses)."""
        runtime = self.model.clone()
        for node in runtime.get_ops():
            info = node.get_rt_info()
            info.setdefault(rt_info.ORIGINAL_NAMES, ",".join(sorted(fused_names(node))))
            info.setdefault(rt_info.LAYER_TYPE, node.type_name)
            info[rt_info.EXEC_TYPE] = self._exec_type
            info[rt_info.RUNTIME_PRECISION] = self.precision.value
        return self.with_profiled_times(runtime)
