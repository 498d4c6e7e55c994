"""The placement report: which device runs each op, why an op fell back, the subgraphs and the
tensors cut between them. Users of every peer ask for it; the CLI prints it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["CutInfo", "LatencyInfo", "PlacementReport", "StageInfo"]


@dataclass(frozen=True)
class CutInfo:
    """A tensor crossing subgraphs: its key, producer and consumer subgraphs, type, shape, bytes."""

    tensor: str
    producer: int
    consumers: tuple[int, ...]
    element_type: str
    shape: str
    nbytes: int | None


@dataclass(frozen=True)
class StageInfo:
    """A ``PIPELINE_PARALLEL`` stage: its device, ops (count, first, last), estimated memory, and the
    memory it was planned against with where that came from (``"budget"`` from ``DEVICE_PROPERTIES``,
    ``"reported"`` by the device's ``DEVICE_TOTAL_MEM_SIZE``, or ``"equal share"``)."""

    device: str
    ops: int
    first_op: str
    last_op: str
    weight_bytes: int
    activation_bytes: int
    budget: int
    budget_source: str

    @property
    def memory_bytes(self) -> int:
        """Weights plus peak live activations."""
        return self.weight_bytes + self.activation_bytes


@dataclass
class LatencyInfo:
    """``HETERO_PLACEMENT_POLICY=LATENCY``: estimated and measured seconds per inference of the chosen
    plan (``"chosen"``), of ``"PRIORITY"``'s plan and of each single device that supports the whole
    model (by device name), and the cost model they were estimated with (kept in exported blobs so that
    importing does not calibrate again).
    """

    estimated: dict[str, float] = field(default_factory=dict)
    measured: dict[str, float] = field(default_factory=dict)
    costs: dict[str, Any] = field(default_factory=dict)


@dataclass
class PlacementReport:
    """Where a HETERO model runs.

    :ivar placement: op friendly name to ``(device, subgraph index)``.
    :ivar rejected_by: op to the devices that rejected it before one took it (automatic mode).
    :ivar subgraphs: ``(device, [op names])`` per subgraph, in execution order.
    :ivar cuts: the tensors crossing subgraphs.
    :ivar fallbacks: subgraph index to ``(failed device, device used, reason)`` under the fallback policy.
    :ivar manual: True when affinities came from rt_info.
    :ivar policy: how ops were placed: ``"PRIORITY"``, ``"LATENCY"`` or ``"PIPELINE_PARALLEL"``.
    :ivar stages: per ``PIPELINE_PARALLEL`` stage, its device and memory.
    :ivar notes: decisions worth telling (``PIPELINE_PARALLEL`` not splitting a model that fits).
    :ivar latency: the estimates and measurements of ``HETERO_PLACEMENT_POLICY=LATENCY``.
    """

    placement: dict[str, tuple[str, int]]
    rejected_by: dict[str, list[str]] = field(default_factory=dict)
    subgraphs: list[tuple[str, list[str]]] = field(default_factory=list)
    cuts: list[CutInfo] = field(default_factory=list)
    fallbacks: dict[int, tuple[str, str, str]] = field(default_factory=dict)
    manual: bool = False
    policy: str = "PRIORITY"
    stages: list[StageInfo] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    latency: LatencyInfo | None = None

    @property
    def transfer_bytes(self) -> int:
        """Bytes crossing subgraphs per inference (static shapes only)."""
        return sum(c.nbytes or 0 for c in self.cuts)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "mode": "manual" if self.manual else "automatic",
            "placement": {op: {"device": d, "subgraph": s} for op, (d, s) in self.placement.items()},
            "rejected_by": self.rejected_by,
            "subgraphs": [{"index": i, "device": d, "ops": ops} for i, (d, ops) in enumerate(self.subgraphs)],
            "cuts": [
                {
                    "tensor": c.tensor,
                    "from": c.producer,
                    "to": list(c.consumers),
                    "element_type": c.element_type,
                    "shape": c.shape,
                    "bytes": c.nbytes,
                }
                for c in self.cuts
            ],
            "fallbacks": {str(i): {"failed": f, "used": u, "reason": r} for i, (f, u, r) in self.fallbacks.items()},
            "transfer_bytes": self.transfer_bytes,
            "policy": self.policy,
            "stages": [
                {
                    "device": s.device,
                    "ops": s.ops,
                    "first_op": s.first_op,
                    "last_op": s.last_op,
                    "weight_bytes": s.weight_bytes,
                    "activation_bytes": s.activation_bytes,
                    "memory_bytes": s.memory_bytes,
                    "budget": s.budget,
                    "budget_source": s.budget_source,
                }
                for s in self.stages
            ],
            "notes": list(self.notes),
            "latency": None
            if self.latency is None
            else {"estimated": self.latency.estimated, "measured": self.latency.measured, "costs": self.latency.costs},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PlacementReport:
        """Rebuilds a report from :meth:`to_dict` output."""
        return cls(
            placement={op: (v["device"], int(v["subgraph"])) for op, v in data["placement"].items()},
            rejected_by={op: list(v) for op, v in data["rejected_by"].items()},
            subgraphs=[(s["device"], list(s["ops"])) for s in data["subgraphs"]],
            cuts=[
                CutInfo(c["tensor"], c["from"], tuple(c["to"]), c["element_type"], c["shape"], c["bytes"])
                for c in data["cuts"]
            ],
            fallbacks={int(i): (v["failed"], v["used"], v["reason"]) for i, v in data["fallbacks"].items()},
            manual=data["mode"] == "manual",
            policy=data.get("policy", "PRIORITY"),
            stages=[
                StageInfo(
                    s["device"],
                    int(s["ops"]),
                    s["first_op"],
                    s["last_op"],
                    int(s["weight_bytes"]),
                    int(s["activation_bytes"]),
                    int(s["budget"]),
                    s["budget_source"],
                )
                for s in data.get("stages", [])
            ],
            notes=list(data.get("notes", [])),
            latency=None
            if data.get("latency") is None
            else LatencyInfo(
                dict(data["latency"]["estimated"]), dict(data["latency"]["measured"]), dict(data["latency"]["costs"])
            ),
        )

    def to_text(self) -> str:
        """A human-readable summary."""
        lines = [f"{len(self.subgraphs)} subgraph(s), {'manual' if self.manual else 'automatic'} affinities"]
        if self.policy != "PRIORITY":
            lines[0] += f", placed by {self.policy}"
        for i, (device, ops) in enumerate(self.subgraphs):
            shown = ", ".join(ops[:8]) + (f", ... ({len(ops)} ops)" if len(ops) > 8 else "")
            lines.append(f"  subgraph{i} on {device}: {shown}")
        for op, devices in sorted(self.rejected_by.items()):
            lines.append(f"  {op} -> {self.placement[op][0]} (rejected by {', '.join(devices)})")
        for i, (failed, used, reason) in sorted(self.fallbacks.items()):
            lines.append(f"  subgraph{i}: {failed} failed to compile ({reason}); fell back to {used}")
        for c in self.cuts:
            size = f"{c.nbytes} bytes" if c.nbytes is not None else "dynamic size"
            to = ", ".join(f"subgraph{t}" for t in c.consumers)
            lines.append(f"  cut {c.tensor}: subgraph{c.producer} -> {to}, {c.element_type}{c.shape}, {size}")
        lines.append(f"  {self.transfer_bytes} bytes cross devices per inference")
        for s in self.stages:
            lines.append(
                f"  stage on {s.device}: {s.ops} ops ({s.first_op} .. {s.last_op}), {s.memory_bytes} bytes "
                f"({s.weight_bytes} weights + {s.activation_bytes} peak activations) of {s.budget} ({s.budget_source})"
            )
        lines += [f"  note: {note}" for note in self.notes]
        if self.latency is not None:
            for plan, seconds in self.latency.estimated.items():
                measured = self.latency.measured.get(plan)
                shown = f", measured {measured * 1e6:.1f} us" if measured is not None else ""
                lines.append(f"  latency of {plan}: estimated {seconds * 1e6:.1f} us{shown}")
        return "\n".join(lines)
