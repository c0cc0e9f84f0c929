"""The vectorised RLE counts decoder (assay.io.rle_counts) against a plain reading of
pycocotools' ``rleFrString``, one mask at a time, on valid and corrupted counts."""

import numpy as np
import pytest
from pycocotools import mask as mask_utils

from assay.io.rle_counts import CorruptRLE, counts_area


def reference(counts: bytes, h: int, w: int) -> tuple[str, int]:
    """``("ok", area)`` or ``(reason, 0)``: rleFrString's decoding, with assay's checks."""
    runs: list[int] = []
    p = 0
    while p < len(counts):
        x = k = 0
        more = True
        while more:
            if p >= len(counts):
                return "middle of a run", 0
            c = counts[p] - 48
            if not 0 <= c <= 63:
                return "alphabet", 0
            if k == 7:
                return "longer than 7", 0
            x |= (c & 0x1F) << 5 * k
            more = bool(c & 0x20)
            p += 1
            k += 1
            if not more and c & 0x10:
                x -= 1 << 5 * k
        if len(runs) > 2:
            x += runs[-2]
        runs.append(x)
    if any(r < 0 for r in runs):
        return "negative", 0
    if sum(runs) != h * w:
        return "add up", 0
    return "ok", sum(runs[1::2])


def _valid(rng, n):
    out = []
    for i in range(n):
        h, w = (int(v) for v in rng.integers(1, 30, 2))
        m = (rng.random((h, w)) < rng.random()).astype(np.uint8)
        if i % 7 == 0:
            m[:] = i % 2  # all 0s or all 1s: one or two runs
        if i % 11 == 0:  # a large mask: runs of several characters
            h, w = 300, 200
            m = np.zeros((h, w), np.uint8)
            m[rng.integers(0, h) :, rng.integers(0, w) :] = 1
        out.append((mask_utils.encode(np.asfortranarray(m))["counts"], h, w))
    return out


def _decode_all(masks):
    hs = np.array([h for _, h, _ in masks], np.int64)
    ws = np.array([w for _, _, w in masks], np.int64)
    counts = [c for c, _, _ in masks]
    out = counts_area(counts, hs, ws)
    if all(c.isascii() for c in counts):  # the same from the text
        assert np.array_equal(counts_area([c.decode() for c in counts], hs, ws), out)
    return out


@pytest.mark.parametrize("seed", range(4))
def test_valid_counts_give_pycocotools_areas(seed):
    masks = _valid(np.random.default_rng(seed), 400)
    peer = [float(mask_utils.area({"size": [h, w], "counts": c})) for c, h, w in masks]
    assert [reference(c, h, w) for c, h, w in masks] == [("ok", int(a)) for a in peer]
    assert _decode_all(masks).tolist() == peer


@pytest.mark.parametrize("seed", range(40))
def test_a_corrupted_mask_is_named_with_the_reason_a_plain_decoder_gives(seed, monkeypatch):
    rng = np.random.default_rng(100 + seed)
    if seed % 2:  # small chunks: masks on both sides of a chunk boundary
        monkeypatch.setattr("assay.io.rle_counts._CHUNK_CHARS", 64)
    masks = _valid(rng, 30)
    i = int(rng.integers(0, len(masks)))
    counts, h, w = masks[i]
    b = bytearray(counts or b"0")
    kind = seed % 5
    at = int(rng.integers(0, len(b)))
    if kind == 0:  # any byte
        b[at] = int(rng.integers(0, 256))
    elif kind == 1:  # a character of the alphabet
        b[at] = int(rng.integers(48, 112))
    elif kind == 2:  # cut short or lengthened
        b = b[:at] if at else b + b"1"
    elif kind == 3:  # a long run in the middle
        b[at:at] = b"P" * int(rng.integers(1, 9)) + b"0"
    else:  # a negative run: a big negative difference
        b[at:at] = b"_0"
    masks[i] = (bytes(b), h, w)
    want = [reference(c, hh, ww) for c, hh, ww in masks]
    bad = [j for j, (r, _) in enumerate(want) if r != "ok"]
    if not bad:
        assert _decode_all(masks).tolist() == [float(a) for _, a in want]
        return
    with pytest.raises(CorruptRLE) as e:
        _decode_all(masks)
    assert e.value.index == bad[0] == i
    assert want[i][0] in e.value.reason


def test_empty_counts_between_valid_masks_are_refused_by_position():
    masks = _valid(np.random.default_rng(9), 12)
    masks.insert(5, (b"", 3, 4))
    with pytest.raises(CorruptRLE, match="add up to 0 pixels") as e:
        _decode_all(masks)
    assert e.value.index == 5
    assert _decode_all(masks[:5] + masks[6:]).shape == (12,)
