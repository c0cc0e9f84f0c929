"""The classification evaluator's data as plain numpy arrays and back (for ``state()``).

Per label key (keys sorted; the ``i``-th key's arrays are prefixed ``"{i}."``): the label
values as text, the ground truth index and the score matrix (one row per label), the binary
row (``-1`` for none), the uids when given, the datum metadata when present, and the
weights of the compact form (how many datums each column stands for). The keys
themselves are a string array ``"keys"``. A key's batches are concatenated into one block.

Example:
    >>> from assay.classification.types import block_from_arrays
    >>> b = block_from_arrays(["a", "b"], [[0.9, 0.1], [0.3, 0.7]], labels=["a", "b"])
    >>> back = blocks_from_arrays(blocks_to_arrays({b.key: [b]}))
    >>> back[b.key][0].labels, back[b.key][0].scores.tolist()
    (('a', 'b'), [[0.9, 0.3], [0.1, 0.7]])
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from assay.classification.types import KeyBlock, concat_blocks
from assay.io.metadata import Metadata

__all__ = ["blocks_from_arrays", "blocks_to_arrays"]


def blocks_to_arrays(blocks: Mapping[str, list[KeyBlock]]) -> dict[str, np.ndarray]:
    """Every key's blocks (concatenated) as named numpy arrays."""
    keys = sorted(blocks)
    state: dict[str, np.ndarray] = {"keys": np.array(keys, dtype=str)}
    for i, key in enumerate(keys):
        b = concat_blocks(blocks[key])
        state[f"{i}.labels"] = np.array(b.labels, dtype=str)
        state[f"{i}.gt"] = b.gt
        state[f"{i}.scores"] = b.scores
        state[f"{i}.binary_row"] = np.array(-1 if b.binary_row is None else b.binary_row)
        if b.uids is not None:
            state[f"{i}.uids"] = b.uids
        if b.weights is not None:
            state[f"{i}.weights"] = b.weights
        if b.metadata is not None:
            state |= b.metadata.to_arrays(f"{i}.metadata.")
    return state


def blocks_from_arrays(state: Mapping[str, np.ndarray]) -> dict[str, list[KeyBlock]]:
    """The blocks of :func:`blocks_to_arrays`' output, one per key."""
    out: dict[str, list[KeyBlock]] = {}
    for i, key in enumerate(np.asarray(state["keys"]).tolist()):
        row = int(state[f"{i}.binary_row"])
        block = KeyBlock(
            key=str(key),
            uids=state.get(f"{i}.uids"),
            labels=tuple(str(x) for x in np.asarray(state[f"{i}.labels"]).tolist()),
            gt=np.asarray(state[f"{i}.gt"]),
            scores=np.asarray(state[f"{i}.scores"], dtype=np.float64),
            binary_row=None if row < 0 else row,
            weights=state.get(f"{i}.weights"),
        )
        if f"{i}.metadata.names" in state:
            md = Metadata.from_arrays(state, f"{i}.metadata.", block.n)
            block = replace(block, metadata=md)
        out[str(key)] = [block]
    return out
