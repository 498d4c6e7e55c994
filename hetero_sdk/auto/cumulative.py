"""AUTO with ``PERFORMANCE_HINT=CUMULATIVE_THROUGHPUT`` (what OpenVINO's MULTI became): the model
compiled on every candidate that runs all of it, each request sent to the device with the fewest
requests in flight, so the devices' throughputs add up."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from hetero_sdk import Model
from hetero_sdk.auto.compiled_model import Served, inner_context, inputs_for, property_of
from hetero_sdk.auto.selection import Selection
from hetero_sdk.errors import UnsupportedOperationError
from hetero_sdk.plugin import CompiledModel, RunContext

__all__ = ["CumulativeCompiledModel"]


class CumulativeCompiledModel(CompiledModel):
    """A model compiled on several devices at once; each request runs whole on one of them.

    :param model: the model as the user gave it (a clone this object owns).
    :param device_name: the name AUTO was registered under.
    :param config: AUTO's resolved configuration.
    :param selection: the candidates (``selection.device`` is the first device compiled).
    :param served: the compiled models, in priority order.
    """

    def __init__(
        self,
        model: Model,
        device_name: str,
        config: Mapping[str, Any],
        selection: Selection,
        served: Sequence[Served],
    ) -> None:
        super().__init__(model, device_name, config)
        self.selection = selection
        self.served = list(served)
        self._in_flight = [0] * len(self.served)
        self._completed = [0] * len(self.served)
        self._dispatch = threading.Lock()

    def create_request_state(self) -> dict[CompiledModel, Any]:
        """A request's state on each device that runs it, made when that device first does."""
        return {}

    def run(self, inputs: Sequence[Any], context: RunContext) -> list[Any]:
        """Runs on the device with the fewest requests in flight (the higher priority on a tie)."""
        with self._dispatch:
            index = min(range(len(self.served)), key=lambda i: (self._in_flight[i], i))
            self._in_flight[index] += 1
        compiled = self.served[index].compiled
        context.host_outputs_later = False  # a run counts as in flight until its outputs are on the host
        try:
            outputs = compiled.run(inputs_for(compiled, inputs), inner_context(context, compiled))
        finally:
            with self._dispatch:
                self._in_flight[index] -= 1
        with self._dispatch:
            self._completed[index] += 1
        return outputs

    @property
    def inferences_per_device(self) -> dict[str, int]:
        """How many inferences each device has completed, by device string."""
        with self._dispatch:
            return {served.device: count for served, count in zip(self.served, self._completed)}

    @property
    def execution_devices(self) -> list[str]:
        """Every device's, in priority order (``["XLA.0", "TEMPLATE.0"]``)."""
        devices = [device for served in self.served for device in served.compiled.execution_devices]
        return list(dict.fromkeys(devices))

    @property
    def optimal_number_of_infer_requests(self) -> int:
        """The sum of the devices' own: enough requests to keep all of them busy."""
        return sum(served.compiled.optimal_number_of_infer_requests for served in self.served)

    def get_property(self, name: str) -> Any:
        """AUTO's keys and the common ones; any other key is read from the highest-priority device."""
        return property_of(self, self.served[0].compiled, name)

    def get_runtime_model(self) -> Model:
        """The highest-priority device's runtime model."""
        return self.served[0].compiled.get_runtime_model()

    def export_model(self) -> bytes:
        """Not available: a blob holds one device's compiled model.

        :raises UnsupportedOperationError: saying how to get a blob instead.
        """
        devices = ", ".join(served.device for served in self.served)
        raise UnsupportedOperationError(
            f"{self.device_name} with CUMULATIVE_THROUGHPUT runs '{self.model.friendly_name}' on several devices "
            f"({devices}) and cannot export one blob; compile with PERFORMANCE_HINT=THROUGHPUT or LATENCY to "
            "export the chosen device's model, or export from each device"
        )

    def release(self) -> None:
        """Releases AUTO's worker threads, then every device's compiled model."""
        super().release()
        for served in self.served:
            served.compiled.release()
