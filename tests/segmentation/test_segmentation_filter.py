"""SegmentationEvaluator.filter(datums=, labels=): computing on the filtered evaluator equals
computing on the filtered input alone (hypothesis, both expression forms, through merge and
state), and agrees with valor-lite's Evaluator.filter where the two define the same thing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.errors import InvalidInputError
from assay.segmentation import SegmentationEvaluator

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")

VALUES = ["road", "car", "sky"]


def _dicts(ms):
    return [m.to_dict() for m in ms]


# --- datums as JSONL records: filtering equals the filtered records ------------------------

_ann = st.fixed_dictionaries(
    {
        "label": st.sampled_from(VALUES),
        "box": st.tuples(st.integers(0, 5), st.integers(0, 4), st.integers(1, 4),
                         st.integers(1, 3)).map(lambda t: [t[0], t[1], t[0] + t[2], t[1] + t[3]]),
    }
)  # fmt: skip


@st.composite
def datasets(draw):
    """Datums 8 x 6 pixels, annotations that do not overlap within a side, a second label
    key on some, datum metadata on some."""
    n = draw(st.integers(1, 6))
    gts, prs = [], []
    for i in range(n):
        sides = []
        for _ in range(2):
            anns, taken = [], np.zeros((6, 8), bool)
            for a in draw(st.lists(_ann, max_size=4)):
                x0, y0, x1, y1 = a["box"]
                if taken[y0:y1, x0:x1].any():
                    continue
                taken[y0:y1, x0:x1] = True
                if draw(st.booleans()) and draw(st.booleans()):
                    a = {**a, "label": {"key": "size", "value": "big" if x1 - x0 > 2 else "small"}}
                anns.append(a)
            sides.append(anns)
        rec = {"uid": f"d{i}", "height": 6, "width": 8, "annotations": sides[0]}
        if i == 0 or draw(st.booleans()):  # site missing on some datums: never passes
            rec["metadata"] = {"site": draw(st.sampled_from(["x", "y"])), "w": i}
        gts.append(rec)
        prs.append({"uid": f"d{i}", "annotations": sides[1]})
    return gts, prs


def _label_of(a):
    lab = a["label"]
    return (lab["key"], lab["value"]) if isinstance(lab, dict) else ("class", lab)


def _keep_labels(records, wanted):
    def kept(a):
        k, v = _label_of(a)
        return any(w == v if isinstance(w, str) else tuple(w) == (k, v) for w in wanted)

    return [{**r, "annotations": [a for a in r["annotations"] if kept(a)]} for r in records]


def _evaluate(gts, prs, zd):
    return SegmentationEvaluator(zero_division=zd).add(gts, prs)


def _site_x(r):
    return (r.get("metadata") or {}).get("site") == "x"


FILTERS = [
    ("uids", lambda gts: {"datums": [r["uid"] for r in gts[::2]]},
     lambda r, gts: r["uid"] in {g["uid"] for g in gts[::2]}),
    ("string", lambda gts: {"datums": 'site == "x"'}, lambda r, gts: _site_x(r)),
    ("pyarrow", lambda gts: {"datums": pc.field("site") == "x"}, lambda r, gts: _site_x(r)),
    ("uid expression", lambda gts: {"datums": 'uid != "d0"'}, lambda r, gts: r["uid"] != "d0"),
]  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    datasets(),
    st.sampled_from(FILTERS),
    st.sampled_from([None, ["road"], ["car", "sky"], [("size", "big")], ["road", "small"]]),
    st.sampled_from([None, 0.0]),
)
def test_filter_equals_the_filtered_input_alone(data, flt, labels, zd):
    gts, prs = data
    _, make_kw, keep = flt
    ev = _evaluate(gts, prs, zd)
    known = {_label_of(a) for r in gts + prs for a in r["annotations"]}
    if labels is not None and not all(
        any(w == v if isinstance(w, str) else tuple(w) == (k, v) for k, v in known) for w in labels
    ):
        with pytest.raises(InvalidInputError, match="unknown label"):
            ev.filter(labels=labels)
        return
    view = ev.filter(**make_kw(gts), labels=labels)
    kg = [r for r in gts if keep(r, gts)]
    kp = [p for r, p in zip(gts, prs) if keep(r, gts)]
    if labels is not None:
        kg, kp = _keep_labels(kg, labels), _keep_labels(kp, labels)
    if not kg:
        assert view.is_empty
        return
    want = _evaluate(kg, kp, zd)
    assert view.n_datums == want.n_datums == len(kg)
    assert _dicts(view.compute()) == _dicts(want.compute())
    # the filtered evaluator keeps the contract: state round trip, and merge with itself
    again = SegmentationEvaluator.from_state(view.state())
    assert _dicts(again.compute()) == _dicts(want.compute())
    merged = SegmentationEvaluator(zero_division=zd).merge(view).merge(again)
    twice = _evaluate(kg, kp, zd).merge(_evaluate(kg, kp, zd))
    assert _dicts(merged.compute()) == _dicts(twice.compute())


def test_filter_after_merge_and_state_equals_filter_of_one_evaluator():
    rng = np.random.default_rng(0)
    maps = [(f"d{i}", rng.integers(0, 4, (5, 7)), rng.integers(0, 4, (5, 7)),
             {"site": "xy"[i % 2]}) for i in range(6)]  # fmt: skip
    one = SegmentationEvaluator()
    a, b = SegmentationEvaluator(), SegmentationEvaluator()
    for i, (u, g, p, md) in enumerate(maps):
        one.add_label_maps(u, g, p, labels=VALUES, metadata=md)
        (a if i < 3 else b).add_label_maps(u, g, p, labels=VALUES, metadata=md)
    joined = SegmentationEvaluator.from_state(a.merge(b).state())
    for kw in ({"datums": 'site == "y"'}, {"labels": ["car"]}, {"datums": ["d1", "d4"]}):
        assert _dicts(joined.filter(**kw).compute()) == _dicts(one.filter(**kw).compute()), kw
    assert _dicts(joined.compute()) == _dicts(one.compute())


def test_filter_refusals_and_empty_result():
    ev = SegmentationEvaluator().add_label_maps(
        "a", np.array([[1, 0]]), np.array([[1, 1]]), labels=["road"], metadata={"site": "x"}
    )
    with pytest.raises(InvalidInputError, match="unknown datum uid 'zzz'"):
        ev.filter(datums=["zzz"])
    with pytest.raises(InvalidInputError, match="unknown label 'cat'"):
        ev.filter(labels=["cat"])
    with pytest.raises(InvalidInputError, match="not one string"):
        ev.filter(labels="road")
    with pytest.raises(InvalidInputError, match="unknown field 'nope'"):
        ev.filter(datums="nope == 1")
    empty = ev.filter(datums='site == "elsewhere"')
    assert empty.is_empty
    with pytest.raises(InvalidInputError, match="no data"):
        empty.compute()
    assert ev.compute().get("IOU").value == 0.5  # the original is unchanged


# --- against valor-lite ---------------------------------------------------------------------

valor = pytest.importorskip("valor_lite.semantic_segmentation")


def _both(seed):
    rng = np.random.default_rng(seed)
    labels = ["sky", "road", "car", "ghost"]
    ours, segs = SegmentationEvaluator(zero_division=0.0), []
    for i in range(8):
        h, w = (int(x) for x in rng.integers(2, 10, 2))
        g = rng.integers(0, 4, (h, w))
        p = np.where(rng.random(g.shape) < 0.6, g, rng.integers(0, 4, g.shape))
        md = {"site": str(rng.choice(["x", "y"])), "w": int(i)}
        ours.add_label_maps(f"d{i}", g, p, labels=labels, metadata=md)
        segs.append(valor.Segmentation(uid=f"d{i}", groundtruths=g.astype(np.uint16),
                                       predictions=p.astype(np.uint16), labels=labels,
                                       metadata=md))  # fmt: skip
    loader = valor.Loader.in_memory(metadata_fields=[("site", pa.string()), ("w", pa.int64())])
    loader.add_data(segs)
    return ours, loader.finalize()


def _valor_records(ev):
    return [m.to_dict() for v in ev.compute_precision_recall_iou().values() for m in v]


def _compare(ours, theirs, skip=()):
    compared = 0
    for m in theirs:
        kind, p, v = m["type"], m["parameters"], m["value"]
        if kind in skip:
            continue
        label = p.get("label")
        mine = ours.get(kind, **({} if label is None else {"label_value": label})).value
        if kind == "ConfusionMatrix":
            for g, row in v["confusion_matrix"].items():
                for q, cell in row.items():
                    got = mine["confusion_matrix"][g][q]["iou"]
                    assert got == pytest.approx(cell["iou"], abs=1e-12), (g, q)
                    compared += 1
            for side in ("unmatched_predictions", "unmatched_ground_truths"):
                for lab, cell in v[side].items():
                    assert mine[side][lab]["ratio"] == pytest.approx(cell["ratio"], abs=1e-12)
                    compared += 1
        else:
            assert mine == pytest.approx(v, abs=1e-12), (m, mine)
            compared += 1
    return compared


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    "ours_kw, theirs_kw",
    [
        ({"datums": 'site == "x"'}, {"datums": pc.field("site") == "x"}),
        ({"datums": pc.field("w") >= 3}, {"datums": pc.field("w") >= 3}),
        ({"datums": ["d0", "d5"]}, {"datums": pc.field("datum_uid").isin(["d0", "d5"])}),
    ],
)
def test_datum_filters_equal_valor_lite(seed, ours_kw, theirs_kw):
    ours, theirs = _both(seed)
    n = _compare(ours.filter(**ours_kw).compute(), _valor_records(theirs.filter(**theirs_kw)))
    assert n >= 4 * 4 + 2 + 16 + 8


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("kept", [["road"], ["sky", "car"]])
def test_label_filter_equals_valor_lite_label_filters_but_accuracy(seed, kept):
    """assay's labels= is valor-lite's ground-truth and prediction label filters together,
    with one difference: valor-lite discards the pixels where neither side is a kept label,
    assay keeps them as background/background (what the input without those annotations
    gives). So every per-label record and matrix cell agrees, and valor-lite's Accuracy is
    assay's with the background/background cell left out."""
    ours, theirs = _both(seed)
    view = ours.filter(labels=kept)
    want = _valor_records(
        theirs.filter(
            groundtruths=pc.field("gt_label").isin(kept),
            predictions=pc.field("pd_label").isin(kept),
        )
    )
    assert _compare(view.compute(), want, skip=("Accuracy",)) >= 4 * len(kept) + 1
    _, c = view.confusion()
    (acc,) = [m["value"] for m in want if m["type"] == "Accuracy"]
    bg = c[0, 0]
    assert acc == pytest.approx((np.trace(c) - bg) / (c.sum() - bg), abs=1e-12)
    assert view.compute().get("Accuracy").value == pytest.approx(np.trace(c) / c.sum())
    assert bg > 0  # the two Accuracy numbers do differ here
