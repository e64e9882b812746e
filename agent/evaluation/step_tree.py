"""The steps of a run record as a tree: parents, children, leaves, and the order a tree is shown in.

A strategy traces every step it took, on every branch it explored, in one
list (:class:`agent.methods.episode.StepTrace`): a step's ``parent`` is the
1-based position of the step it follows on its branch (None: the first step
of a branch from the start), and ``pruned`` says why the strategy dropped
the branch there. A linear run is a tree with one branch; a record written
before steps had parents (no step has the field) is read as one. The cost
(:mod:`agent.evaluation.cost`: branches explored are the tree's leaves), the
HTML trace and the text trace read the tree from here.

Example:
    >>> steps = [{"parent": None}, {"parent": 1, "pruned": "empty result"}, {"parent": 1}, {"parent": 3}]
    >>> parents(steps), leaves(steps), linear(parents(steps))
    ([None, 1, 1, 3], 2, False)
    >>> [(n.position, n.depth, n.below, n.pruned_below) for n in walk(build(steps))]
    [(1, 0, 3, 1), (2, 1, 0, 0), (3, 1, 1, 0), (4, 2, 0, 0)]
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Node", "build", "leaves", "linear", "parents", "walk"]


def parents(steps: Sequence[Mapping[str, Any]]) -> list[int | None]:
    """Each step's parent (a 1-based position in ``steps``), as the record says; a record without parents is one branch.

    A parent that names no earlier step makes the step a root (a record cut or written by hand).

    Example:
        >>> parents([{"step": 1}, {"step": 2}]), parents([{"parent": None}, {"parent": 1}, {"parent": 1}, {"parent": 7}])
        ([None, 1], [None, 1, 1, None])
    """
    if not any("parent" in s for s in steps):
        return [position or None for position in range(len(steps))]
    out: list[int | None] = []
    for position, step in enumerate(steps, 1):
        parent = step.get("parent")
        out.append(parent if isinstance(parent, int) and not isinstance(parent, bool) and 1 <= parent < position else None)
    return out


def linear(parent_list: Sequence[int | None]) -> bool:
    """Whether the steps are one branch, each following the step before it (a linear run, shown as it ran).

    Example:
        >>> linear([None, 1, 2]), linear([None, 1, 1]), linear([])
        (True, False, True)
    """
    return all(parent == (position or None) for position, parent in enumerate(parent_list))


def leaves(steps: Sequence[Mapping[str, Any]]) -> int:
    """The branches a strategy explored: the steps no other step follows (0 for no step, 1 for a linear run).

    Example:
        >>> leaves([]), leaves([{"step": 1}, {"step": 2}]), leaves([{"parent": None}, {"parent": 1}, {"parent": 1}])
        (0, 1, 2)
    """
    followed = {p for p in parents(steps) if p is not None}
    return len(steps) - len(followed)


@dataclass
class Node:
    """One step in the tree.

    Attributes:
        position: its 1-based position in the record's steps.
        depth: its depth (0 for a root).
        step: the step as the record has it.
        children: the steps that follow it, in the order they ran.
        below: how many steps its subtree holds under it.
        pruned_below: how many of those the strategy pruned.
        branches: the leaves of its subtree (1 for a leaf).
        alive: whether a branch through it was kept (a leaf of its subtree is not pruned).
    """

    position: int
    depth: int
    step: Mapping[str, Any]
    children: list[Node] = field(default_factory=list)
    below: int = 0
    pruned_below: int = 0
    branches: int = 1
    alive: bool = True


def build(steps: Sequence[Mapping[str, Any]]) -> list[Node]:
    """The roots of the steps' tree, each node with its children (in the order they ran) and its subtree's counts.

    Example:
        >>> roots = build([{"parent": None}, {"parent": 1, "pruned": "no rows"}, {"parent": 1}])
        >>> [(c.position, c.alive) for c in roots[0].children], roots[0].branches, roots[0].alive
        ([(2, False), (3, True)], 2, True)
    """
    nodes = [Node(position, 0, step) for position, step in enumerate(steps, 1)]
    roots: list[Node] = []
    for node, parent in zip(nodes, parents(steps)):
        (nodes[parent - 1].children if parent is not None else roots).append(node)
    for root in roots:
        _count(root)
    return roots


def _count(root: Node) -> None:
    """Set the depth and the subtree counts of every node under ``root`` (iteratively: a deep tree is no recursion)."""
    order: list[Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        order.append(node)
        for child in node.children:
            child.depth = node.depth + 1
            stack.append(child)
    for node in reversed(order):  # children before their parents
        if not node.children:
            node.alive = not node.step.get("pruned")
            continue
        node.below = sum(1 + c.below for c in node.children)
        node.pruned_below = sum(bool(c.step.get("pruned")) + c.pruned_below for c in node.children)
        node.branches = sum(c.branches for c in node.children)
        node.alive = not node.step.get("pruned") and any(c.alive for c in node.children)


def walk(roots: Sequence[Node]) -> Iterator[Node]:
    """The nodes depth first, each before its children, children in the order they ran.

    Example:
        >>> [n.position for n in walk(build([{"parent": None}, {"parent": None}, {"parent": 1}]))]
        [1, 3, 2]
    """
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))
