"""The shared mask codec (assay.io.masks) against pycocotools, beyond its 255-mask limit."""

import numpy as np
import pytest
from pycocotools import mask as mask_utils

from assay.errors import InvalidInputError
from assay.io.masks import (
    MAX_RASTER_PIXELS,
    check_raster_size,
    polygon_to_rle,
    rle_area,
    rle_bbox,
    rle_iou,
    rle_to_mask,
    to_rle,
)
from assay.io.rle_counts import CorruptRLE


def _masks(n, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        h, w = (int(v) for v in rng.integers(1, 40, 2))
        m = (rng.random((h, w)) < rng.random()).astype(np.uint8)
        if i % 9 == 0:
            m[:] = 0
        if i % 13 == 0:
            m[:] = 1
        out.append(mask_utils.encode(np.asfortranarray(m)))
    return out


def test_area_equals_pycocotools_for_more_than_255_masks():
    rles = _masks(700)
    with pytest.raises(OverflowError):  # the peer's own limit, which assay must not inherit
        mask_utils.area(rles[:256])
    peer = np.concatenate([mask_utils.area(rles[i : i + 200]) for i in range(0, 700, 200)])
    ours = rle_area(rles)
    assert len(ours) == len(peer) == 700
    assert np.array_equal(ours, peer.astype(float))


def test_bbox_iou_and_merge_equal_pycocotools_piece_by_piece():
    rng = np.random.default_rng(1)
    same = [
        mask_utils.encode(np.asfortranarray((rng.random((12, 9)) < 0.4).astype(np.uint8)))
        for _ in range(300)
    ]
    assert np.array_equal(rle_bbox(same), np.concatenate([mask_utils.toBbox([r]) for r in same]))
    crowd = [i % 5 == 0 for i in range(300)]
    ours = rle_iou(same, same, crowd)
    peer = np.array(
        [[mask_utils.iou([d], [g], [c])[0][0] for g, c in zip(same, crowd)] for d in same[:20]]
    )
    assert ours.shape == (300, 300) and np.array_equal(ours[:20], peer)
    polys = [[1, 1, 5, 1, 5, 5 + (i % 3)] for i in range(300)]
    merged = polygon_to_rle(polys, 12, 9)
    direct = mask_utils.merge(mask_utils.frPyObjects(polys, 12, 9))
    assert merged["counts"] == direct["counts"]


@pytest.mark.parametrize(
    "counts, reason",
    [
        ("~~~", "alphabet"),
        ("0", "runs add up"),
        ("1", "runs add up"),
        ("P", "middle of a run"),
        ("PPPPPPPP0", "longer than 7"),
    ],
)
def test_corrupt_compressed_counts_are_refused(counts, reason):
    with pytest.raises(CorruptRLE, match=reason):
        rle_area([{"size": [4, 4], "counts": counts.encode()}])


def test_uncompressed_counts_are_checked_and_converted():
    r = to_rle({"size": [2, 3], "counts": [1, 4, 1]}, 2, 3)
    assert rle_area([r]).tolist() == [4.0]
    with pytest.raises(InvalidInputError, match="non-negative"):
        to_rle({"size": [2, 3], "counts": [1, -4, 9]}, 2, 3)
    with pytest.raises(InvalidInputError, match="add up"):
        to_rle({"size": [2, 3], "counts": [1, 4]}, 2, 3)
    with pytest.raises(InvalidInputError, match="counts"):
        rle_to_mask({"size": [2, 2], "counts": "zz"})


def test_raster_size_is_bounded_before_decoding():
    with pytest.raises(InvalidInputError, match="larger than"):
        check_raster_size(200000, 200000, source="gt")
    with pytest.raises(InvalidInputError, match="larger than"):
        rle_to_mask({"size": [200000, 200000], "counts": [40000000000]})
    assert check_raster_size(16384, MAX_RASTER_PIXELS // 16384, source="gt")[0] == 16384
