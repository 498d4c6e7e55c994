"""HETERO: one model over several devices.

The partitioner is a pure function of a DAG and its affinities: :func:`split_by_affinity` returns
:class:`Subgraph` records in an executable order, and :func:`check_partition` rejects any partition
HETERO cannot run.
"""

from hetero_sdk.hetero.check import check_partition
from hetero_sdk.hetero.partition import PARTITIONERS, split_by_affinity
from hetero_sdk.hetero.subgraph import Subgraph

__all__ = ["PARTITIONERS", "Subgraph", "check_partition", "split_by_affinity"]
