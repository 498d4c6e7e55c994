"""The outputs of one inference (``ov.InferRequest.results``): arrays by index, tensor name or port."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from hetero_sdk.graph.node import Output

__all__ = ["InferResults", "TensorKey"]

TensorKey = int | str | Output
"""What names an input or output: its index, one of its tensor names, or its port."""


class InferResults(Mapping[Output, np.ndarray]):
    """The outputs of one inference: look them up by index, tensor name or output port."""

    def __init__(
        self, ports: Sequence[Output], values: Sequence[np.ndarray], by_name: Mapping[str, int] | None = None
    ) -> None:
        self._ports = ports if type(ports) is list else list(ports)  # (a request's own, never changed)
        self._values = values if type(values) is list else list(values)
        self._by_name = by_name

    @staticmethod
    def index_names(ports: Sequence[Output]) -> dict[str, int]:
        """Each tensor name of ``ports`` mapped to its output's index (the first port holding it).

        A request builds this once and passes it as ``by_name``, so a lookup by name costs a dict access
        instead of a scan over every port's names.
        """
        by_name: dict[str, int] = {}
        for i, port in enumerate(ports):
            for name in port.names:
                by_name.setdefault(name, i)
        return by_name

    def _index(self, key: TensorKey) -> int:
        if isinstance(key, int):
            if not -len(self._ports) <= key < len(self._ports):
                raise KeyError(f"output index {key} does not exist; there are {len(self._ports)} outputs")
            return key % len(self._ports)
        if isinstance(key, str) and self._by_name is not None and (found := self._by_name.get(key)) is not None:
            return found
        for i, port in enumerate(self._ports):
            if (isinstance(key, Output) and port == key) or (isinstance(key, str) and key in port.names):
                return i
        names = sorted(n for p in self._ports for n in p.names)
        raise KeyError(f"no output {key!r}; outputs: {', '.join(names)}")

    def __getitem__(self, key: TensorKey) -> np.ndarray:  # type: ignore[override]
        return self._values[self._index(key)]

    def __iter__(self) -> Iterator[Output]:
        return iter(self._ports)

    def __len__(self) -> int:
        return len(self._ports)

    def to_tuple(self) -> tuple[np.ndarray, ...]:
        """The output arrays in order."""
        return tuple(self._values)

    def to_dict(self) -> dict[str, np.ndarray]:
        """The output arrays by tensor name (each port's smallest name)."""
        return {port.any_name: value for port, value in zip(self._ports, self._values)}
