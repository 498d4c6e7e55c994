"""The driver side of one actor: starting it where its placement says, calling it with a time limit,
and knowing when it has died.

A call that finds the actor dead (``ray.kill``, its host lost, its process crashed) or that gets no
answer within ``RAY_TIMEOUT`` raises :class:`ActorLost` and marks the link dead for good: the plugin
then starts a new actor for the next compile, and the compiled models of the dead one say they are
unusable.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

import ray
from hetero_sdk import errors
from hetero_sdk.errors import HeteroSDKError
from ray.exceptions import GetTimeoutError, RayActorError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from hetero_sdk_ray.actor import DeviceActor
from hetero_sdk_ray.config import Placement
from hetero_sdk_ray.local_head import LocalHead, live_local_cluster

__all__ = ["ActorLink", "ActorLost", "connect"]

_connect_lock = threading.Lock()
_POLL_S = 0.05  # how often a waiting request looks at its cancellation flag


class ActorLost(Exception):
    """The actor died or did not answer in time (the message says which, and names the device)."""


def connect(address: str, local_num_cpus: int) -> None:
    """Joins a Ray cluster as ``spec/scale.md`` says: the one at ``address`` when given; else the cluster
    already running on this machine (Ray's own ``ray.init()`` rule; the record of one that has died is
    ignored); else a local instance of its own, started without forking this process (see
    :mod:`hetero_sdk_ray.local_head`). Does nothing when this process is already connected.

    :param local_num_cpus: the CPUs of a local instance it starts.
    :raises DeviceUnavailableError: when the cluster cannot be reached or started.
    """
    with _connect_lock:
        if ray.is_initialized():
            return
        quiet: dict[str, Any] = {"logging_level": logging.ERROR, "log_to_driver": False}
        where = f"the Ray cluster at RAY_ADDRESS={address!r}" if address else "a local Ray instance"
        try:
            if address:
                ray.init(address=address, **quiet)
            elif (running := live_local_cluster()) is not None:
                where = f"the Ray cluster running on this machine ({running})"
                ray.init(**quiet)  # Ray finds it from its record, with its authentication
            else:
                _join_own_instance(local_num_cpus, quiet)
        except Exception as exc:
            raise errors.DeviceUnavailableError(
                f"RAY cannot reach {where}: {type(exc).__name__}: {exc}; start one with `ray start --head` "
                "(joined when RAY_ADDRESS is empty) or set RAY_ADDRESS to a running cluster"
            ) from exc


def _join_own_instance(num_cpus: int, init_options: dict[str, Any]) -> None:
    """Starts a local Ray instance in a helper process, joins it, and stops it when this process exits."""
    head = LocalHead(num_cpus)
    atexit.register(head.stop)  # registered before ray.init, so it runs after Ray's own shutdown
    _use_local_authentication()
    try:
        ray.init(address=head.address, **init_options)
    except Exception:
        head.stop()
        raise


def _use_local_authentication() -> None:
    """Authenticates as Ray does when ``ray.init()`` joins a local cluster it found itself: with the
    token of this machine (``~/.ray/auth_token``) unless ``RAY_AUTH_MODE`` says otherwise (Ray turns
    token authentication on for a new local instance, and for a driver joining by address only when
    told)."""
    try:  # Ray >= 2.52; before it, no authentication to set up
        from ray._private.authentication.authentication_token_setup import (
            maybe_enable_token_auth_if_token_available,
        )
    except ImportError:
        return
    maybe_enable_token_auth_if_token_available(warn_if_disabled=False)


class ActorLink:
    """A started actor serving one RAY device id.

    :param device_name: the id it serves (``RAY.1``).
    :param placement: the Ray resources it was started with.
    :param timeout_s: how long it may take to start.
    :raises ActorLost: when it does not start within ``timeout_s`` (no node has the resources asked).
    :raises PropertyValueError: when Ray refuses the placement itself (an unknown node id).
    """

    def __init__(self, device_name: str, placement: Placement, timeout_s: float) -> None:
        self.device_name = device_name
        self.placement = placement
        self.dead: str | None = None
        options: dict[str, Any] = {
            "num_cpus": placement.num_cpus,
            "num_gpus": placement.num_gpus,
            "resources": dict(placement.resources),
            "max_concurrency": 8,  # requests in flight overlap on the actor, as on a local device
            "max_restarts": 0,  # a restarted actor would have lost its compiled models: fail instead
        }
        try:
            if placement.node_id:
                options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(placement.node_id, soft=False)
            self.actor: Any = ray.remote(DeviceActor).options(**options).remote(device_name)
        except (ValueError, TypeError) as exc:  # Ray checks node ids and resource names up front
            raise errors.PropertyValueError(
                f"{device_name}: Ray refused the placement {placement.describe()}: {exc}"
            ) from None
        try:
            self.where: Mapping[str, Any] = self.call("describe", timeout_s=timeout_s)
        except ActorLost as exc:
            raise ActorLost(
                f"{exc}; no Ray node offers {placement.describe()} (see `ray status`), or the node cannot "
                "import hetero_sdk_ray (install hetero-sdk-ray on every host)"
            ) from None

    def call(
        self,
        method: str,
        *args: Any,
        timeout_s: float,
        cancelled: threading.Event | None = None,
        default: type = HeteroSDKError,
    ) -> Any:
        """Calls ``method`` on the actor and waits for its answer.

        :param cancelled: checked while waiting; when set, the call is cancelled and
            :class:`~hetero_sdk.errors.RequestCancelledError` raised.
        :param default: the error class for a failure that is not an SDK error.
        :raises ActorLost: when the actor is dead or does not answer within ``timeout_s``.
        :raises HeteroSDKError: the typed error the actor's device raised, naming this device.
        """
        if self.dead is not None:
            raise ActorLost(self.dead)
        ref = getattr(self.actor, method).remote(*args)
        deadline = time.monotonic() + timeout_s
        answer: Any = None
        try:
            while answer is None:
                try:
                    answer = ray.get(ref, timeout=min(_POLL_S, max(0.001, deadline - time.monotonic())))
                except GetTimeoutError:
                    if cancelled is not None and cancelled.is_set():
                        ray.cancel(ref)
                        raise errors.RequestCancelledError(f"the request on {self.device_name} was cancelled") from None
                    if time.monotonic() >= deadline:
                        ray.kill(self.actor)  # a hung actor must not keep holding its host's device
                        self._die(
                            f"the Ray actor of {self.device_name} did not answer {method} within "
                            f"RAY_TIMEOUT={timeout_s} s"
                        )
        except RayActorError as exc:
            self._die(f"the Ray actor of {self.device_name} died ({type(exc).__name__})")
        if answer[0] == "ok":
            return answer[1]
        _, name, message = answer
        cls = getattr(errors, name, None) if name else None
        if not (isinstance(cls, type) and issubclass(cls, HeteroSDKError)):
            cls = default
        raise cls(f"{self.device_name}: {message}")

    def release(self, handle: int) -> None:
        """Forgets a compiled model on the actor, without waiting (nothing to do when it is dead)."""
        if self.dead is None and ray.is_initialized():  # never start Ray again to free a model
            with contextlib.suppress(Exception):  # the interpreter or Ray may be shutting down
                self.actor.release.remote(handle)

    def _die(self, reason: str) -> None:
        self.dead = reason
        raise ActorLost(reason)
