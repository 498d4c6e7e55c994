"""Dead code elimination: computations whose values cannot reach a model output are removed."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hetero_sdk.transformations.graph_rewrite import ConsumerMap, eliminate_node

if TYPE_CHECKING:
    from hetero_sdk.graph.model import Model
    from hetero_sdk.graph.node import Node, Output

__all__ = ["DeadCodeElimination"]


class DeadCodeElimination:
    """Removes dead code: nodes no Result reaches, and the branch a constant ``Select`` never takes.

    A :class:`~hetero_sdk.Model` owns exactly the nodes its Results reach (plus its Parameters), so
    a node whose uses were all rewired elsewhere has already left it: the pass manager's records list
    such nodes under the pass that dropped them. What is left for this pass is code that is reachable
    but dead: a ``Select`` whose condition is a Constant that is all true (or all false) forwards its
    ``then`` (or ``else``) input unchanged, so the Select is eliminated and the other branch, now
    unused, leaves the model. The Select is only removed when the chosen input already has the
    Select's shape (no broadcasting to replay).

    The pass reports a change only when it removed something, so it is idempotent.
    """

    name = "DeadCodeElimination"

    def run(self, model: Model) -> bool:
        """Removes the dead code of ``model``; returns True when something was removed."""
        users = ConsumerMap(model)
        changed = False
        for node in model.get_ops():
            if node.type_name != "Select" or not users.count(node.output(0)):
                continue
            taken = _taken_branch(node)
            if taken is not None:
                changed |= eliminate_node(model, node, taken, users)
        return changed


def _taken_branch(select: Node) -> Output | None:
    condition = select.input_value(0)
    if condition.node.type_name != "Constant":
        return None
    value = np.asarray(condition.node.attrs["value"])
    if value.size == 0:
        return None
    if bool(np.all(value)):
        taken = select.input_value(1)
    elif not bool(np.any(value)):
        taken = select.input_value(2)
    else:
        return None
    output = select.output(0)
    if taken.partial_shape.is_dynamic or taken.partial_shape != output.partial_shape:
        return None
    return taken
