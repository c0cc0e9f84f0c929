"""The fast paths of the COCO engine against straightforward references on the same inputs."""

import numpy as np
import pytest

from assay.detection.io import load_coco
from assay.detection.match import match, match_general, pair_ious
from assay.detection.params import CocoParams
from assay.detection.rank import argsort_int, rank_detections
from assay.testing.detection import make_coco


@pytest.mark.parametrize("high", [50, 1 << 60])  # packed int64 sort / stable argsort fallback
def testargsort_int_is_a_stable_argsort(high):
    rng = np.random.default_rng(3)
    key = rng.integers(0, high, 2000)
    key[::7] = key[0]  # many ties
    assert np.array_equal(argsort_int(key), np.argsort(key, kind="stable"))


@pytest.mark.parametrize("max_det", [1, 3, 100])
def testrank_detections_equals_a_lexsort_reference(max_det):
    data = load_coco(*make_coco(n_images=40, n_categories=5, dets_per_image=30, seed=7))
    dts = data.predictions
    # reference: COCOeval's order (label, descending score, datum, input order), rank counted
    # per group
    order = np.lexsort((np.arange(len(dts)), dts.datum, -dts.score, dts.label))
    seen: dict[tuple[int, int], int] = {}
    ranks = []
    for i in order:
        g = (int(dts.datum[i]), int(dts.label[i]))
        ranks.append(seen.get(g, 0))
        seen[g] = ranks[-1] + 1
    ranks = np.array(ranks)
    det, rank = rank_detections(data, max_det)
    assert np.array_equal(det, order[ranks < max_det])
    assert np.array_equal(rank, ranks[ranks < max_det])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_closed_form_matching_equals_the_greedy_loop(seed):
    """Every candidate pair through the general rank-step loop gives the same matches."""
    data = load_coco(*make_coco(n_images=60, n_categories=4, duplicate_rate=0.2, seed=seed))
    params = CocoParams(iou_thresholds=[0.9, 0.3, 0.5, 0.75])
    m = match(data, params)
    assert len(m.area_key) > 0  # the data has groups that need the general loop ...
    assert len(m.key) > 0  # ... and simple ones
    det, rank, group = rank_detections(data, params.max_dets[-1], with_group=True)
    pd, pg, iou = pair_ious(data, det, "bbox", group=group)
    thr = np.minimum(params.iou_thresholds, 1 - 1e-10)
    live = iou >= thr.min()
    key, gt = match_general(
        pd[live], pg[live], iou[live], rank, thr, data.groundtruths.crowd, m.gt_ignore, len(det)
    )
    ref = np.full(m.dt_gt.size, -1)
    ref[key] = gt
    assert np.array_equal(m.dt_gt, ref.reshape(m.dt_gt.shape))
