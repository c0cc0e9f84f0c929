"""COCO compressed RLE counts of many masks, checked and measured at once with numpy.

The masks' ``counts`` (ASCII text or bytes) are joined a million characters at a time,
so no array per mask is made and memory stays bounded. Each mask's runs are decoded
exactly as pycocotools' ``rleFrString`` does (6-bit characters offset by 48, bit 0x20 =
"more characters follow", bit 0x10 of a run's last character = negative; from the fourth
run on, a run is stored as the difference from the run two places earlier), and the mask is
refused, with its position, when pycocotools' C code could not use it safely: a character
outside the alphabet, an unfinished last run, a run of more than 7 characters, a negative
run, or runs that do not add up to the raster's ``h * w`` pixels.

Example:
    >>> counts = ["41202", b"0:"]  # a 3 x 4 mask with 2 pixels; a full 2 x 5 mask
    >>> counts_area(counts, np.array([3, 2]), np.array([4, 5])).tolist()
    [2.0, 10.0]
    >>> counts_area(["0:"], np.array([3]), np.array([4]))
    Traceback (most recent call last):
    ...
    assay.io.rle_counts.CorruptRLE: runs add up to 10 pixels, the size [3, 4] holds 12
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from assay.errors import InvalidInputError
from assay.io.native import kernels

__all__ = ["CorruptRLE", "counts_area", "joined_area"]

_CHUNK_CHARS = 1 << 20  # decoded a million characters at a time: bounded memory


class CorruptRLE(InvalidInputError):
    """An RLE that cannot be a mask of its size; ``index`` is its position in the list."""

    def __init__(self, reason: str, index: int) -> None:
        super().__init__(reason)
        self.index = index


def counts_area(
    counts: Sequence[str | bytes], heights: NDArray[np.int64], widths: NDArray[np.int64]
) -> NDArray[np.float64]:
    """Pixel counts (the runs of 1s added up) of masks with compressed ``counts`` (ASCII
    text or bytes), each checked to hold ``heights[i] * widths[i]`` pixels in all.

    Equal to ``pycocotools.mask.area`` for valid masks; raises :class:`CorruptRLE` naming
    the first mask pycocotools could not use (text that is not ASCII is outside its
    alphabet).
    """
    n = len(counts)
    ends = np.cumsum(np.fromiter(map(len, counts), dtype=np.int64, count=n))
    return joined_area(_joined(counts), ends, heights, widths)


def joined_area(
    data: bytes, ends: NDArray[np.int64], heights: NDArray[np.int64], widths: NDArray[np.int64]
) -> NDArray[np.float64]:
    """:func:`counts_area` of counts joined in ``data`` (mask ``i`` ends at ``ends[i]``).

    The compiled kernel (:mod:`assay.io.native`) decodes them when built; a corrupt mask, or
    no kernel, takes the numpy path below, which names the first bad mask.

    Example:
        >>> joined_area(b"412020:", np.array([5, 7]), np.array([3, 2]), np.array([4, 5]))
        array([ 2., 10.])
    """
    n = len(ends)
    ends = np.asarray(ends, np.int64)
    hw = np.stack([np.asarray(heights, np.int64), np.asarray(widths, np.int64)], axis=1)
    k = kernels()
    if k is not None and n:
        got = k.counts_area(data, np.ascontiguousarray(ends), np.ascontiguousarray(hw))
        if got is not None:
            return np.frombuffer(got, np.float64).copy()
    lens = np.diff(ends, prepend=0)
    out = np.zeros(n)
    start = 0
    while start < n:
        stop = max(int(np.searchsorted(ends, ends[start] + _CHUNK_CHARS)), start + 1)
        try:
            a = int(ends[start - 1]) if start else 0
            raw = np.frombuffer(data, dtype=np.uint8, count=int(ends[stop - 1]) - a, offset=a)
            out[start:stop] = _chunk(raw, lens[start:stop], hw[start:stop])
        except CorruptRLE as e:
            raise CorruptRLE(e.reason, start + e.index) from None
        start = stop
    return out


def _joined(counts: Sequence[str | bytes]) -> bytes:
    """The counts as one byte string; a mask whose text is not ASCII is refused."""
    if all(type(c) is str for c in counts):
        text = "".join(counts)  # type: ignore[arg-type]
        if text.isascii():
            return text.encode()
    out = []
    for i, c in enumerate(counts):
        if isinstance(c, str):
            if not c.isascii():
                raise CorruptRLE("counts holds a character outside COCO's RLE alphabet", i)
            c = c.encode()
        out.append(bytes(c))
    return b"".join(out)


def _owner(char_ends: NDArray[np.int64], at: int) -> int:
    """The mask holding character (or run) ``at``, given each mask's cumulative end."""
    return int(np.searchsorted(char_ends, at, "right"))


def _chunk(
    raw: NDArray[np.uint8], lens: NDArray[np.int64], hw: NDArray[np.int64]
) -> NDArray[np.float64]:
    char_end = np.cumsum(lens)
    if len(raw) and (raw.min() < 48 or raw.max() > 111):
        at = int(np.argmax((raw < 48) | (raw > 111)))
        raise CorruptRLE("counts holds a character outside COCO's RLE alphabet",
                         _owner(char_end, at))  # fmt: skip
    last = raw < 80  # bit 0x20 (after the offset of 48) clear: the last character of a run
    full = np.flatnonzero(lens)
    unfinished = ~last[char_end[full] - 1]
    if unfinished.any():
        raise CorruptRLE("counts ends in the middle of a run", int(full[np.argmax(unfinished)]))
    end_at = np.flatnonzero(last)  # one entry per run
    more = np.flatnonzero(~last)  # characters followed by more of their run (few)
    # every character is a run's last or one of "more": so the runs before a character
    # are the characters before it less the "more" ones
    run_end = char_end - np.searchsorted(more, char_end)  # each mask's runs end here
    n_runs = np.diff(run_end, prepend=0)
    first = run_end - n_runs
    # a one-character run: its 5 bits after the offset of 48, sign-extended (the common case)
    x = (((raw[end_at] - np.uint8(48)) & np.uint8(31)) ^ np.uint8(16)).astype(np.int64)
    x -= 16
    if len(more):
        run = more - np.arange(len(more))  # the run each of "more" belongs to
        multi = run[np.flatnonzero(np.diff(run, prepend=-1))]
        _long_runs(x, raw, last, end_at, multi, run_end)
    # chains: runs 1, 3, 5, ... and runs 2, 4, 6, ... of a mask are running sums of x
    # (run 0 stands alone). Running sums over every second entry of the whole chunk give
    # them once each chain starts from zero: the entry that starts a chain (a mask's run 0,
    # 1 or 2) first gets the sum of the chain before it on its stride subtracted.
    R = len(x)
    starts = (first[:, None] + np.arange(3)).reshape(-1)
    starts = starts[(np.arange(3) < n_runs[:, None]).reshape(-1)]  # ascending
    runs = np.empty(R, np.int64)
    for parity in (0, 1):
        on = x[parity::2]
        at = starts[(starts & 1) == parity] // 2  # chain starts on this stride (the first: 0)
        if len(at) > 1:
            on[at[1:]] -= np.add.reduceat(on, at)[:-1]  # (the sums are taken before)
        np.cumsum(on, out=runs[parity::2])
    del x
    if R and runs.min() < 0:
        at = int(np.argmax(runs < 0))
        raise CorruptRLE("counts decode to a negative run length",
                         int(np.searchsorted(run_end, at, "right")))  # fmt: skip
    # a mask's runs on even entries of the chunk, and on odd ones, lie next to each other
    # on their stride: one sum per mask and stride (runs 0, 2, ... on the stride of its
    # first entry, runs 1, 3, ... on the other)
    sums = []
    for parity in (0, 1):
        on = runs[parity::2]
        lo = (first + 1 - parity) // 2  # the mask's first entry on this stride
        count = (first + n_runs + 1 - parity) // 2 - lo
        some = np.flatnonzero(count)  # (reduceat needs segments that are not empty)
        per_mask = np.zeros(len(lo), np.int64)
        if len(some):
            per_mask[some] = np.add.reduceat(on, lo[some])
        sums.append(per_mask)
    area = np.where(first & 1, sums[0], sums[1])
    total = sums[0] + sums[1]
    sizes = hw[:, 0] * hw[:, 1]
    wrong = np.flatnonzero(total != sizes)
    if len(wrong):
        i = int(wrong[0])
        raise CorruptRLE(
            f"runs add up to {int(total[i])} pixels, the size {hw[i].tolist()} "
            f"holds {int(sizes[i])}",
            i,
        )
    return area.astype(np.float64)


def _long_runs(
    x: NDArray[np.int64],
    raw: NDArray[np.uint8],
    last: NDArray[np.bool_],
    end_at: NDArray[np.int64],
    multi: NDArray[np.int64],
    run_end: NDArray[np.int64],
) -> None:
    """Decode, in place, the runs ``multi`` of several characters (5 more bits each, the
    first character the lowest); more than 7 is refused."""
    e = end_at[multi]
    c_end = raw[e] - np.uint8(48)
    v = (c_end & np.uint8(31)).astype(np.int64)
    nchar = np.ones(len(multi), np.int64)
    live = np.arange(len(multi))
    for k in range(1, 8):
        if len(live) == 0:
            break
        if k == 7:
            at = int(multi[live[0]])
            raise CorruptRLE("counts holds a run longer than 7 characters",
                             int(np.searchsorted(run_end, at, "right")))  # fmt: skip
        p = e[live] - k
        v[live] = (v[live] << 5) | ((raw[p] - np.uint8(48)) & np.uint8(31))
        nchar[live] += 1
        back = p - 1
        live = live[(back >= 0) & ~last[np.maximum(back, 0)]]
    sign = ((c_end >> np.uint8(4)) & np.uint8(1)).astype(np.int64)
    x[multi] = v - (sign << (5 * nchar))
