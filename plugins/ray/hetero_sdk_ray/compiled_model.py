"""The RAY compiled model: a handle on a model compiled inside an actor; inputs and outputs cross
through Ray's object store."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

import numpy as np
from hetero_sdk import Model, Type
from hetero_sdk.errors import BlobFormatError, InferenceError
from hetero_sdk.plugin import CompiledModel, ProfilingInfo, RunContext, Status, model_from_bytes, pack_blob, unpack_blob

from hetero_sdk_ray.config import TARGET_DEVICE, TIMEOUT
from hetero_sdk_ray.link import ActorLink, ActorLost

__all__ = ["ACTOR_STATE", "BLOB_FORMAT", "RayCompiledModel", "RayTensor", "read_blob"]

BLOB_FORMAT = "RAY"
"""The format tag of RAY blobs: the target device's own blob, and the target's name."""

ACTOR_STATE = "RAY_ACTOR_STATE"
"""RO property of a RAY compiled model: ``"ALIVE"``, or ``"DEAD: <why>"`` once its actor has died; a
dead one fails every request and export until the model is compiled again."""


class RayCompiledModel(CompiledModel):
    """A model compiled by the device of a Ray actor.

    :param model: the model as given (its ports are this compiled model's).
    :param device_name: the RAY id (``RAY.1``).
    :param config: the resolved RAY configuration.
    :param link: the actor holding the compiled model.
    :param info: what the actor answered: ``handle``, ``target``, ``optimal_requests``.
    """

    def __init__(
        self, model: Model, device_name: str, config: Mapping[str, Any], link: ActorLink, info: Mapping[str, Any]
    ) -> None:
        super().__init__(model, device_name, config)
        self.link = link
        self.handle = int(info["handle"])
        self.target = str(info["target"])
        self._optimal = int(info["optimal_requests"])

    @property
    def usable(self) -> bool:
        """False once the actor has died: compile the model again."""
        return self.link.dead is None

    @property
    def optimal_number_of_infer_requests(self) -> int:
        """The target device's own number."""
        return self._optimal

    def run(self, inputs: Sequence[Any], context: RunContext) -> list[Any]:
        """Runs one inference on the actor; a dead or silent actor fails it with InferenceError naming this
        device. With remote outputs asked for (:attr:`RunContext.remote_outputs`), the outputs stay in
        Ray's object store as :class:`RayTensor` objects, and a RayTensor input goes to the actor as its
        reference: HETERO's stages and a stateful model's caches pass actor to actor."""
        arrays = [
            v.ref if isinstance(v, RayTensor) else v if isinstance(v, np.ndarray) else np.asarray(v) for v in inputs
        ]
        kept = context.remote_outputs
        try:
            answer = self._call(
                "infer_kept" if kept else "infer", self.handle, arrays, context.profile is not None, context=context
            )
        except ActorLost as exc:
            raise InferenceError(
                f"{self.device_name} failed '{self.model.friendly_name}': {exc}; {_RECOMPILE}"
            ) from None
        if kept:
            refs, metas, rows = answer
        else:
            outputs, rows = answer
        if context.profile is not None:
            context.profile.extend(
                ProfilingInfo(n, t, e, Status(s), timedelta(seconds=r), timedelta(seconds=c))
                for n, t, e, s, r, c in rows
            )
        if kept:
            return [
                RayTensor(ref, tuple(shape), np.dtype(dtype), self.device_name)
                for ref, (shape, dtype) in zip(refs, metas)
            ]
        # arrays from Ray's object store are read-only views; callers own their outputs
        return [v if v.flags.writeable else v.copy() for v in outputs]

    def get_runtime_model(self) -> Model:
        """The target device's runtime model (its rt_info names the original ops and their times)."""
        return model_from_bytes(self._checked("runtime_model", self.handle), source=f"{self.device_name} runtime model")

    def export_model(self) -> bytes:
        """A RAY blob: the target's own blob and the target's name; import it on any RAY id."""
        inner = self._checked("export", self.handle)
        header = json.dumps({"target": self.target, TARGET_DEVICE: self.config.get(TARGET_DEVICE, "")}).encode()
        return pack_blob(BLOB_FORMAT, {"header": header, "blob": bytes(inner)})

    def get_property(self, name: str) -> Any:
        """``RAY_ACTOR_STATE``, then the common compiled-model properties."""
        if name == ACTOR_STATE:
            return "ALIVE" if self.link.dead is None else f"DEAD: {self.link.dead}"
        if name == "SUPPORTED_PROPERTIES":
            return {**super().get_property(name), ACTOR_STATE: "RO"}
        return super().get_property(name)

    def release(self) -> None:
        """Frees the model on the actor, and the local worker threads."""
        self.link.release(self.handle)
        super().release()

    def __del__(self) -> None:
        if getattr(self, "link", None) is not None:
            self.link.release(self.handle)
        super().__del__()

    def _call(self, method: str, *args: Any, context: RunContext | None = None) -> Any:
        return self.link.call(
            method,
            *args,
            timeout_s=float(self.config[TIMEOUT]),
            cancelled=context.cancelled if context is not None else None,
            default=InferenceError,
        )

    def _checked(self, method: str, *args: Any) -> Any:
        try:
            return self._call(method, *args)
        except ActorLost as exc:
            raise InferenceError(f"{self.device_name}: {exc}; {_RECOMPILE}") from None


class RayTensor:
    """An output kept in Ray's object store (a :class:`~hetero_sdk.runtime.RemoteTensor`):
    ``np.asarray`` fetches it; given to a RAY compiled model, only its reference travels.

    :param ref: the object's reference.
    :param shape: its shape.
    :param dtype: its numpy type.
    :param device_name: the RAY id whose actor made it.
    """

    def __init__(self, ref: Any, shape: tuple[int, ...], dtype: np.dtype[Any], device_name: str) -> None:
        self.ref = ref
        self.shape = shape
        self.dtype = dtype
        self.device_name = device_name

    @property
    def element_type(self) -> Type:
        """The element type."""
        return Type.of(self.dtype)

    def passes_to(self, device_name: str) -> bool:
        """Whether ``device_name`` takes it as it is: another RAY id (its actor fetches it from the store)."""
        return device_name.split(".")[0] == self.device_name.split(".")[0]

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        import ray

        value = np.array(ray.get(self.ref))  # (the store's arrays are read-only: a copy the caller owns)
        return value if dtype is None else value.astype(dtype, copy=False)


_RECOMPILE = "this compiled model is unusable now: compile the model again (a new actor is started)"


def read_blob(blob: bytes) -> tuple[dict[str, Any], bytes]:
    """The header and the target's blob of a RAY blob.

    :raises BlobFormatError: for a blob of another device, truncated or corrupted.
    """
    frames = unpack_blob(blob, BLOB_FORMAT)
    try:
        header = json.loads(frames["header"])
        return {"target": str(header["target"]), TARGET_DEVICE: str(header[TARGET_DEVICE])}, frames["blob"]
    except (KeyError, ValueError, TypeError) as exc:
        raise BlobFormatError(f"RAY blob is malformed: {type(exc).__name__}: {exc}") from exc
