"""The compiled COCO kernels (assay.io._coco_native) against assay's pure path, both ways.

Every kernel may decline (return None) and leave the work to the pure path; whenever it does
not decline, its answer must be exactly the pure path's: the same columns bit for bit, the
same mask areas, pycocotools' mask IoUs. On hostile input it must decline or agree, never
crash. ``ASSAY_NO_NATIVE=1`` turns the kernels off, which is how each test runs the pure
path; the detection corpus (tests/cli/test_bad_inputs_*.py) runs both ways too, through the
``native_path`` fixture of tests/conftest.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pycocotools import mask as mask_utils

import assay
from assay.detection.compute import coco_evaluate
from assay.detection.io import load_coco
from assay.detection.params import CocoParams
from assay.errors import InvalidInputError
from assay.io import native
from assay.io.coco import read_coco_results
from assay.io.coco_columns import ResultColumns, RLEColumns, decode_results
from assay.io.rle_counts import CorruptRLE, joined_area
from assay.testing.detection import make_coco

K = native._built  # the compiled module itself (the tests below need it built)
SRC = str(Path(assay.__file__).parents[1])


def examples(n: int) -> settings:
    """Hypothesis settings: ``n`` examples, no deadline (the machine is shared)."""
    return settings(max_examples=n, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@contextmanager
def path(which: str) -> Iterator[None]:
    """Run the block with the compiled kernels (``"compiled"``) or without (``"pure"``)."""
    with pytest.MonkeyPatch.context() as mp:
        if which == "pure":
            mp.setenv("ASSAY_NO_NATIVE", "1")
        else:
            mp.delenv("ASSAY_NO_NATIVE", raising=False)
        yield


def both(fn: Callable[[], Any]) -> tuple[Any, Any]:
    """``fn()`` with the kernels and without: a value, or ("error", type, message)."""
    out = []
    for which in ("compiled", "pure"):
        with path(which):
            try:
                out.append(fn())
            except InvalidInputError as e:
                out.append(("error", type(e).__name__, str(e)))
    return out[0], out[1]


def bits(a: Any) -> Any:
    """An array's exact contents (float64 by its bits: -0.0 is not 0.0), with its dtype."""
    if a is None:
        return None
    a = np.asarray(a)
    raw = a.view(np.int64) if a.dtype == np.float64 else a
    return (a.dtype.str, a.shape, raw.tolist())


def columns_key(c: Any) -> Any:
    """Everything a decoded results value holds, comparable exactly."""
    if not isinstance(c, ResultColumns):
        return ("other", repr(c))
    seg = c.segmentation
    if isinstance(seg, RLEColumns):
        check_scanned_areas(seg)
        seg = ("rle", seg.data, bits(seg.ends), bits(seg.size))
    elif seg is not None:
        seg = ("list", repr(seg))
    return (bits(c.image_id), bits(c.category_id), bits(c.score), bits(c.bbox), seg)


def check_scanned_areas(seg: RLEColumns) -> None:
    """The areas the scanner measured while reading (when it did) are the numpy path's,
    mask by mask, with NaN exactly where that path refuses the mask."""
    if seg.area is None:
        return
    start = 0
    for i, stop in enumerate(seg.ends.tolist()):
        h, w = seg.size[i].tolist()
        with path("pure"):
            try:
                want = joined_area(seg.data[start:stop], np.array([stop - start]),
                                   np.array([h]), np.array([w]))[0]  # fmt: skip
            except (CorruptRLE, ValueError):
                want = float("nan")
        got = seg.area[i]
        assert (np.isnan(got) and np.isnan(want)) or got == want, (i, got, want)
        start = stop


def scanned(raw: bytes) -> ResultColumns | None:
    """The kernel's columns for ``raw`` (None when it declines)."""
    with path("compiled"):
        cols = decode_results(raw, "dt.json")
    return cols if K.scan_results(raw) is not None else None


def pure_decode(raw: bytes) -> Any:
    with path("pure"):
        try:
            return decode_results(raw, "dt.json")
        except InvalidInputError as e:
            return ("error", str(e))


# ---------------------------------------------------------------- 1. the kernels are built


def test_the_dev_install_has_the_kernels_built_and_the_switch_turns_them_off(monkeypatch):
    assert native.built() and K is not None  # so CI runs the compiled path
    monkeypatch.delenv("ASSAY_NO_NATIVE", raising=False)
    assert native.kernels() is K
    for off in ("1", "yes"):
        monkeypatch.setenv("ASSAY_NO_NATIVE", off)
        assert native.kernels() is None
    for on in ("", "0"):
        monkeypatch.setenv("ASSAY_NO_NATIVE", on)
        assert native.kernels() is K


def test_the_native_path_fixture_turns_the_kernels_on_and_off(native_path):
    """The fixture the bad-input corpus runs under (tests/conftest.py) really switches."""
    assert (native.kernels() is None) == (native_path == "pure")


# ---------------------------------------------------------------- 2. generated results files

KNOWN = {"image_id", "category_id", "score", "bbox", "segmentation", "size", "counts"}
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
_ESCAPES["\r"] = "\\r"
_ESCAPES["/"] = "\\/"

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
unknown_keys = st.text("abcdefghijklmnopqrstuvwxyz_ ", min_size=1, max_size=8).filter(
    lambda k: k not in KNOWN
)


@st.composite
def number_text(draw: Any, integral: bool = False) -> str:
    """A JSON number in one of its many spellings."""
    if integral or draw(st.integers(0, 5)) == 0:
        n = draw(st.integers(-(2**63), 2**63 - 1) | st.sampled_from([0, 1, -1]))
        return draw(st.sampled_from([str(n), "-0" if n == 0 else str(n)]))
    x = draw(
        st.floats(allow_nan=False, allow_infinity=False)
        | st.sampled_from([0.0, -0.0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308])
    )
    forms = [repr(x), f"{x:.17g}", f"{x:.3f}", f"{x:e}", f"{x:E}", f"{x:.30e}", f"{x:.25g}"]
    return draw(st.sampled_from(forms))


@st.composite
def counts_text(draw: Any) -> tuple[str, bytes]:
    """A counts string as a JSON literal (backslashes, quotes, \\u00XX escapes < 0x80) and
    the text it stands for."""
    chars = draw(st.lists(st.integers(0, 127), max_size=12))
    out = []
    for c in chars:
        ch = chr(c)
        how = draw(st.integers(0, 3))
        if how == 0:
            out.append(f"\\u{c:04{draw(st.sampled_from('xX'))}}")
        elif ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif c < 0x20:
            out.append(f"\\u{c:04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"', bytes(chars)


@st.composite
def results_file(draw: Any) -> bytes:
    """A COCO results list that the compiled scanner must read, in many JSON spellings."""
    kind = draw(st.sampled_from(["bbox", "segm", "both"]))
    style = draw(st.sampled_from(["default", "compact", "indent", "odd"]))
    sep, colon, pad = {
        "default": (", ", ": ", ""),
        "compact": (",", ":", ""),
        "indent": (",\n  ", ": ", "\n  "),
        "odd": (" \t,\r\n ", " :\t", " \r\n"),
    }[style]

    def obj(pairs: list[tuple[str, str]]) -> str:
        order = draw(st.permutations(pairs))
        body = sep.join(f'"{k}"{colon}{v}' for k, v in order)
        return "{" + pad + body + pad + "}"

    def extra() -> list[tuple[str, str]]:
        keys = draw(st.lists(unknown_keys, max_size=2, unique=True))
        ascii_only = draw(st.booleans())
        return [(k, json.dumps(draw(json_values), ensure_ascii=ascii_only)) for k in keys]

    results = []
    for _ in range(draw(st.integers(1, 5))):
        pairs = [
            ("image_id", draw(number_text(integral=True))),
            ("category_id", draw(number_text(integral=True))),
            ("score", draw(number_text())),
        ]
        if kind != "segm":
            box = [draw(number_text()) for _ in range(4)]
            pairs.append(("bbox", "[" + pad + sep.join(box) + pad + "]"))
        if kind != "bbox":
            h, w = (str(draw(st.integers(0, 2**63 - 1) | st.integers(0, 500))) for _ in "hw")
            counts, _ = draw(counts_text())
            rle = [("size", f"[{h}{sep}{w}]"), ("counts", counts), *extra()]
            pairs.append(("segmentation", obj(rle)))
        results.append(obj(pairs + extra()))
    return ("[" + pad + sep.join(results) + pad + "]").encode()


@examples(250)
@given(raw=results_file())
def test_results_files_scan_to_the_pure_paths_columns_exactly(raw):
    cols = scanned(raw)
    assert cols is not None, raw  # the scanner reads every file of its shape
    assert isinstance(cols, ResultColumns)
    assert columns_key(cols) == columns_key(pure_decode(raw))
    data = json.loads(raw)
    assert cols.image_id.tolist() == [r["image_id"] for r in data]
    if "segmentation" in data[0]:
        assert cols.segmentation.counts == [  # the escapes undone
            r["segmentation"]["counts"].encode() for r in data
        ]


def test_the_scanner_reads_every_column_of_a_plain_file():
    m = np.zeros((6, 7), np.uint8, order="F")
    m[1:4, 2:6] = 1
    rle = mask_utils.encode(m)
    rows = [
        {"image_id": 3, "category_id": 9, "score": 0.25, "bbox": [1, 2.5, 3e1, 4],
         "segmentation": {"size": [6, 7], "counts": rle["counts"].decode()}},
        {"segmentation": {"counts": "a\\b", "size": [1, 2]}, "score": 1, "bbox": [0, 0, 0, -0.0],
         "category_id": -2, "image_id": 2**63 - 1, "extra": [{"x": None}]},
    ]  # fmt: skip
    raw = json.dumps(rows).encode()
    n, img, cat, score, box, counts, ends, sizes, areas = K.scan_results(raw)
    assert n == 2
    assert np.frombuffer(img, np.int64).tolist() == [3, 2**63 - 1]
    assert np.frombuffer(cat, np.int64).tolist() == [9, -2]
    assert np.frombuffer(score, np.float64).tolist() == [0.25, 1.0]
    b = np.frombuffer(box, np.float64).reshape(2, 4)
    assert b.tolist() == [[1, 2.5, 30, 4], [0, 0, 0, 0]] and np.signbit(b[1, 3])
    assert counts == rle["counts"] + b"a\\b"
    assert np.frombuffer(ends, np.int64).tolist() == [len(rle["counts"]), len(counts)]
    assert np.frombuffer(sizes, np.int64).tolist() == [6, 7, 1, 2]
    a = np.frombuffer(areas, np.float64)  # the second mask's counts are not an RLE of 1 x 2
    assert a[0] == float(mask_utils.area(rle)) and np.isnan(a[1])
    bbox_only = json.dumps([{k: v for k, v in r.items() if k != "segmentation"} for r in rows])
    got = K.scan_results(bbox_only.encode())
    assert got[4] is not None and got[5:] == (None, None, None, None)
    segm_only = json.dumps([{k: v for k, v in r.items() if k != "bbox"} for r in rows])
    got = K.scan_results(segm_only.encode())
    assert got[4] is None and got[5] == counts


# ---------------------------------------------------------------- 3. declined files

R = '{"image_id": 1, "category_id": 2, "score": 0.5, "bbox": [1, 2, 3, 4]%s}'
S = '{"image_id": 1, "category_id": 2, "score": 0.5, "segmentation": %s}'
DEEP = "[" * 70 + "]" * 70
DECLINED = {
    "trailing comma in the list": "[" + R % "" + ",]",
    "trailing comma in a result": "[" + R % "," + "]",
    "leading zero": "[" + R.replace('"image_id": 1', '"image_id": 01') % "" + "]",
    "leading zero in the score": "[" + R.replace("0.5", "00.5") % "" + "]",
    "plus sign": "[" + R.replace("0.5", "+1") % "" + "]",
    "no digit after the point": "[" + R.replace("0.5", "1.") % "" + "]",
    "no digit before the point": "[" + R.replace("0.5", ".5") % "" + "]",
    "NaN": "[" + R.replace("0.5", "NaN") % "" + "]",
    "Infinity": "[" + R.replace("0.5", "Infinity") % "" + "]",
    "-Infinity in a box": "[" + R.replace("[1, 2", "[-Infinity, 2") % "" + "]",
    "unterminated string": "[" + R % ', "note": "abc}]',
    "raw control character": "[" + R % ', "note": "a\x01b"' + "]",
    "raw tab in counts": "[" + S % '{"size": [1, 1], "counts": "1\t"}' + "]",
    "duplicate key": "[" + R % ', "image_id": 2' + "]",
    "duplicate size": "[" + S % '{"size": [1, 1], "counts": "01", "size": [1, 1]}' + "]",
    "missing score": '[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4]}]',
    "missing image_id": '[{"score": 1, "category_id": 2, "bbox": [1, 2, 3, 4]}]',
    "bbox of 3 numbers": "[" + R.replace("[1, 2, 3, 4]", "[1, 2, 3]") % "" + "]",
    "bbox of 5 numbers": "[" + R.replace("[1, 2, 3, 4]", "[1, 2, 3, 4, 5]") % "" + "]",
    "null bbox": "[" + R.replace("[1, 2, 3, 4]", "null") % "" + "]",
    "a null bbox among boxes": "[" + R % "" + "," + R.replace("[1, 2, 3, 4]", "null") % "" + "]",
    "a box in one result only": "[" + R % "" + "," + S % '{"size": [1, 1], "counts": "01"}' + "]",
    "neither box nor mask": '[{"image_id": 1, "category_id": 2, "score": 0.5}]',
    "string id": "[" + R.replace('"image_id": 1', '"image_id": "1"') % "" + "]",
    "float id": "[" + R.replace('"image_id": 1', '"image_id": 1.0') % "" + "]",
    "exponent id": "[" + R.replace('"category_id": 2', '"category_id": 2e0') % "" + "]",
    "id over int64": "[" + R.replace('"image_id": 1', '"image_id": 9223372036854775808') % "" + "]",
    "id under int64": "[" + R.replace("1,", "-9223372036854775809,", 1) % "" + "]",
    "size over int64": "[" + S % '{"size": [1, 18446744073709551616], "counts": "01"}' + "]",
    "size of 3": "[" + S % '{"size": [1, 1, 1], "counts": "01"}' + "]",
    "size missing": "[" + S % '{"counts": "01"}' + "]",
    "counts missing": "[" + S % '{"size": [1, 1]}' + "]",
    "polygons": "[" + S % "[[1, 2, 3, 4, 5, 6]]" + "]",
    "uncompressed counts": "[" + S % '{"size": [1, 1], "counts": [0, 1]}' + "]",
    "null segmentation": "[" + S % "null" + "]",
    "non-ASCII counts": "[" + S % '{"size": [1, 1], "counts": "é"}' + "]",
    "escape over 0x7f in counts": "[" + S % '{"size": [1, 1], "counts": "\\u00e9"}' + "]",
    "bad escape": "[" + S % '{"size": [1, 1], "counts": "\\x"}' + "]",
    "lone high surrogate in a note": "[" + R % ', "note": "\\ud800"' + "]",
    "lone low surrogate in a note": "[" + R % ', "note": "\\udc00x"' + "]",
    "unpaired high surrogate": "[" + R % ', "note": "\\ud800\\u0041"' + "]",
    "nesting deeper than 64": "[" + R % f', "note": {DEEP}' + "]",
    "escaped key": "[" + R.replace('"score"', '"sc\\u006fre"') % "" + "]",
    "empty list": "[]",
    "empty file": "",
    "whitespace only": " \n",
    "trailing garbage": "[" + R % "" + "] x",
    "a second list": "[" + R % "" + "][]",
    "top-level object": '{"annotations": [' + R % "" + "]}",
    "score 1e999": "[" + R.replace("0.5", "1e999") % "" + "]",
    "score -1e999": "[" + R.replace("0.5", "-1e999") % "" + "]",
    "box 1e400": "[" + R.replace("[1, 2", "[1e400, 2") % "" + "]",
    "byte order mark": "\ufeff[" + R % "" + "]",
    "not a result": "[1]",
    "result not an object": '[["image_id", 1]]',
}


@pytest.fixture(scope="module")
def tiny_gt(tmp_path_factory) -> Path:
    m = np.zeros((4, 4), np.uint8, order="F")
    m[1:3, 1:3] = 1
    rle = mask_utils.encode(m)
    gt = {
        "images": [{"id": 1, "height": 4, "width": 4}],
        "categories": [{"id": 2, "name": "b"}],
        "annotations": [{"id": 1, "image_id": 1, "category_id": 2, "bbox": [1, 1, 2, 2],
                         "area": 4, "iscrowd": 0,
                         "segmentation": {"size": [4, 4], "counts": rle["counts"].decode()}}],
    }  # fmt: skip
    p = tmp_path_factory.mktemp("gt") / "gt.json"
    p.write_text(json.dumps(gt))
    return p


def data_key(d: Any) -> Any:
    """What load_coco read, comparable exactly."""
    if isinstance(d, tuple):
        return d
    out: list[Any] = [d.uids, d.labels, d.label_ids]
    for side in (d.groundtruths, d.predictions):
        for f in ("datum", "label", "box", "area", "score", "crowd", "ann_id", "kind"):
            out.append(bits(getattr(side, f)))
        out.append(repr([_rle(r) for r in side.rles]))
    return out


def _rle(r: Any) -> Any:
    if not isinstance(r, dict):
        return r
    c = r["counts"]
    return (list(r["size"]), c.encode() if isinstance(c, str) else c)


@pytest.mark.parametrize("case", sorted(DECLINED))
def test_out_of_shape_files_are_declined_and_read_alike_both_ways(case, tmp_path, tiny_gt):
    raw = DECLINED[case].encode()
    assert K.scan_results(raw) is None
    p = tmp_path / "dt.json"
    p.write_bytes(raw)
    a, b = both(lambda: columns_key(read_coco_results(p)))
    assert a == b
    for iou_type in ("bbox", "segm"):
        a, b = both(lambda t=iou_type: data_key(load_coco(tiny_gt, p, iou_type=t)))
        assert a == b


def test_the_declined_corpus_covers_errors_and_successes(tmp_path):
    """The cases above must include files the reader refuses and files it reads."""
    kinds = set()
    for text in DECLINED.values():
        p = tmp_path / "dt.json"
        p.write_bytes(text.encode())
        try:
            read_coco_results(p)
            kinds.add("read")
        except InvalidInputError:
            kinds.add("refused")
    assert kinds == {"read", "refused"}


def test_an_integer_minus_zero_is_plus_zero_as_msgspec_reads_it():
    raw = b'[{"image_id": 1, "category_id": 2, "score": -0, "bbox": [-0, -0.0, -0e0, 0]}]'
    cols = scanned(raw)
    assert cols is not None
    assert np.signbit(cols.score).tolist() == [False]
    assert np.signbit(cols.bbox).tolist() == [[False, True, True, False]]
    assert columns_key(cols) == columns_key(pure_decode(raw))


def test_a_valid_surrogate_pair_in_a_skipped_string_is_read():
    raw = (R % ', "n": "\\ud83d\\ude00"').encode()
    raw = b"[" + raw + b"]"
    cols = scanned(raw)
    assert cols is not None and columns_key(cols) == columns_key(pure_decode(raw))


# ---------------------------------------------------------------- 4. numbers


def _score_file(text: str) -> bytes:
    row = f'{{"image_id": 1, "category_id": 1, "score": {text}, "bbox": [{text}, 0, 0, 0]}}'
    return f"[{row}]".encode()


def _expected(text: str) -> float:
    """The double msgspec reads: an integer token is an integer first (so "-0" is +0.0)."""
    if any(c in text for c in ".eE"):
        return float(text)
    try:
        return float(int(text))
    except OverflowError:
        return float("inf")


def _check_number(text: str) -> None:
    raw = _score_file(text)
    want = _expected(text)
    got = K.scan_results(raw)
    if not np.isfinite(want):  # overflow: declined (msgspec refuses it too)
        assert got is None
        return
    assert got is not None, text
    score = np.frombuffer(got[3], np.float64)
    box = np.frombuffer(got[4], np.float64)
    expected = np.array([want]).view(np.int64)[0]
    assert score.view(np.int64)[0] == expected, (text, score[0], want)
    assert box.view(np.int64)[0] == expected, text
    assert columns_key(scanned(raw)) == columns_key(pure_decode(raw))


@examples(300)
@given(
    x=st.floats(allow_nan=False, allow_infinity=False),
    form=st.sampled_from(["repr", ".17g", ".3f", "e", "E", "E+", ".25e", "int"]),
)
def test_a_double_in_any_spelling_is_read_as_python_reads_it(x, form):
    if form == "repr":
        text = repr(x)
    elif form == "E+":
        text = f"{x:.16E}".replace("E-", "E-0").replace("E+", "E+00")
    elif form == "int":
        text = str(int(x))
    else:
        text = format(x, form)
    _check_number(text)


@examples(300)
@given(
    sign=st.sampled_from(["", "-"]),
    digits=st.text("0123456789", min_size=1, max_size=40),
    point=st.integers(0, 40),
    exp=st.none() | st.integers(0, 420),
    e=st.sampled_from(["e", "E", "e+", "E+", "e-", "E-"]),
    zeros=st.integers(0, 2),
)
def test_decimal_strings_of_every_length_and_exponent_are_rounded_correctly(
    sign, digits, point, exp, e, zeros
):
    digits = digits.lstrip("0") or "0"  # JSON: no leading zero
    whole, frac = digits[:point] or "0", digits[point:]
    if whole != "0":
        whole = whole.lstrip("0") or "0"
    text = sign + whole + ("." + frac if frac else "")
    if exp is not None:
        text += e + "0" * zeros + str(exp)
    _check_number(text)


@pytest.mark.parametrize(
    "text",
    [
        "0.1", "1e22", "1e23", "9007199254740993", "9007199254740993.0", "123456789012345.6",
        "1234567890123456", "0.000000000000000000001", "1e-22", "1e-23", "4.9e-324", "2e-324",
        "2.4703282292062328e-324", "1.7976931348623157e308", "1.7976931348623159e308",
        "1e999", "0e99999", "-0.0", "-0", "0", "123456789012345678901234567890",
        "1" + "0" * 400, "0." + "0" * 30 + "1", "8.41e21", "3.0e-5", "1E+2", "5e-1",
    ],
)  # fmt: skip
def test_hard_numbers(text):
    _check_number(text)


# ---------------------------------------------------------------- 5. hostile bytes

_BASE = json.dumps(
    [
        {
            "image_id": 1,
            "category_id": 2,
            "score": 0.75,
            "bbox": [1.5, 2, 3, 4e1],
            "segmentation": {"size": [3, 4], "counts": "0\\5"},
            "note": [{"a": None}, "t\u00e9", True],
        },
        {
            "segmentation": {"counts": ";2", "size": [2, 2]},
            "bbox": [0, 0, 1, 1],
            "score": -1e-3,
            "image_id": -7,
            "category_id": 12345678901,
        },
    ]
).encode()
_INTERESTING = list(b'{}[],:"\\0123456789.-+eEtfnlu \n\t') + [0, 0x7F, 0x80, 0xC3, 0xFF]


@examples(400)
@given(
    edits=st.lists(
        st.tuples(
            st.sampled_from(["flip", "flip", "insert", "delete", "truncate"]),
            st.integers(0, len(_BASE)),
            st.sampled_from(_INTERESTING) | st.integers(0, 255),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_mutated_files_are_declined_or_read_as_the_pure_path_reads_them(edits):
    raw = bytearray(_BASE)
    for op, at, byte in edits:
        at = min(at, len(raw))
        if op == "flip" and at < len(raw):
            raw[at] = byte
        elif op == "insert":
            raw.insert(at, byte)
        elif op == "delete" and at < len(raw):
            del raw[at]
        elif op == "truncate":
            del raw[at:]
    data = bytes(raw)
    got = K.scan_results(data)  # never crashes
    if got is not None:
        assert columns_key(scanned(data)) == columns_key(pure_decode(data)), data


def test_every_single_byte_change_is_declined_or_read_as_the_pure_path_reads_it():
    read = 0
    for at in range(len(_BASE)):
        for byte in _INTERESTING:
            for data in (
                _BASE[:at] + bytes([byte]) + _BASE[at + 1 :],  # replaced
                _BASE[:at] + bytes([byte]) + _BASE[at:],  # inserted
            ):
                if K.scan_results(data) is not None:
                    read += 1
                    assert columns_key(scanned(data)) == columns_key(pure_decode(data)), data
    assert read > 1000  # many changes keep a readable file (a digit, a space, a key letter)


def test_every_truncation_is_declined_and_the_whole_file_is_read():
    assert K.scan_results(_BASE) is not None
    assert K.scan_results(_BASE + b" \n") is not None
    for n in range(len(_BASE)):
        assert K.scan_results(_BASE[:n]) is None, n


def test_the_kernels_refuse_arguments_of_the_wrong_type_or_length():
    with pytest.raises(TypeError):
        K.scan_results("[]")  # text, not bytes
    ends = np.array([2], np.int64)
    hw = np.array([[1, 1]], np.int64)
    with pytest.raises(ValueError):
        K.counts_area(b"01", ends, np.array([1], np.int64))  # sizes do not match the ends
    with pytest.raises(ValueError):
        K.counts_area(b"0", ends, hw)  # an end past the data
    with pytest.raises(ValueError):
        K.counts_area(b"0101", np.array([2, 1], np.int64), np.ones((2, 2), np.int64))
    idx = np.zeros(1, np.int64)
    with pytest.raises(ValueError):
        K.rle_pair_iou([], [], idx, idx, idx, b"\x00")  # crowd: one flag per ground truth
    with pytest.raises(ValueError):
        K.rle_pair_iou([], [], idx, np.zeros(2, np.int64), idx, b"")  # pairs of two lengths
    assert K.rle_pair_iou([], [], idx, idx, idx, b"") is None  # an index out of range
    with pytest.raises(TypeError):
        K.rle_pair_iou((), [], idx, idx, idx, b"")


# ---------------------------------------------------------------- 6. mask areas


def _encode(m: np.ndarray) -> tuple[bytes, int, int]:
    r = mask_utils.encode(np.asfortranarray(m.astype(np.uint8)))
    return r["counts"], m.shape[0], m.shape[1]


def _runs(counts: bytes) -> list[int] | None:
    """The run lengths pycocotools reads from ``counts``; None when it could not."""
    runs: list[int] = []
    i = 0
    while i < len(counts):
        value, k = 0, 0
        while True:
            if i >= len(counts) or k == 7:
                return None
            c = counts[i] - 48
            if not 0 <= c < 64:
                return None
            value |= (c & 31) << (5 * k)
            i, k = i + 1, k + 1
            if not c & 32:
                if c & 16:
                    value -= 1 << (5 * k)
                break
        runs.append(value + (runs[-2] if len(runs) > 2 else 0))
    return runs if all(r >= 0 for r in runs) else None


@st.composite
def masks(draw: Any) -> tuple[bytes, int, int]:
    """Counts and size: a mask encoded by pycocotools, maybe corrupted, or arbitrary text."""
    shape = draw(st.sampled_from(["small", "row", "column", "empty", "full", "none", "text"]))
    if shape == "text":  # arbitrary characters of the alphabet; the size fits them when it can
        counts = bytes(draw(st.lists(st.integers(48, 111), max_size=10)))
        runs = _runs(counts)
        total = sum(runs) if runs is not None else draw(st.integers(0, 50))
        return counts, 1, total + draw(st.sampled_from([0, 0, 0, 1]))
    if shape == "none":
        return b"0" if draw(st.booleans()) else b"", 0, draw(st.integers(0, 5))
    h = 1 if shape == "row" else draw(st.integers(1, 9))
    w = 1 if shape == "column" else draw(st.integers(1, 40))
    if shape in ("empty", "full"):
        m = np.full((h, w), shape == "full")
    else:
        m = np.asarray(draw(st.lists(st.booleans(), min_size=h * w, max_size=h * w))).reshape(h, w)
    counts, h, w = _encode(m)
    how = draw(st.sampled_from(["ok", "ok", "ok", "char", "cut", "long", "negative", "size"]))
    at = draw(st.integers(0, len(counts)))
    if how == "char":
        counts = counts[:at] + bytes([draw(st.sampled_from(b" /p\x00\xff~"))]) + counts[at:]
    elif how == "cut":
        counts = counts + b"`"  # bit 0x20: a run that never ends
    elif how == "long":
        counts = counts[:at] + b"`" * 7 + b"0" + counts[at:]
    elif how == "negative":
        counts = b"@" + counts  # a first run of -16
    elif how == "size":
        h += 1
    return counts, h, w


def _numpy_area(counts: list[bytes], h: list[int], w: list[int]) -> Any:
    ends = np.cumsum([len(c) for c in counts], dtype=np.int64)
    with path("pure"):
        try:
            return joined_area(b"".join(counts), ends, np.array(h), np.array(w))
        except CorruptRLE as e:
            return ("corrupt", e.index)


@examples(300)
@given(items=st.lists(masks(), min_size=1, max_size=6))
def test_mask_areas_agree_and_corrupt_masks_are_declined(items):
    counts, h, w = (list(x) for x in zip(*items))
    ends = np.cumsum([len(c) for c in counts], dtype=np.int64)
    hw = np.array([h, w], np.int64).T.copy()
    got = K.counts_area(b"".join(counts), ends, hw)
    want = _numpy_area(counts, h, w)
    if isinstance(want, tuple):
        assert got is None
    else:
        assert got is not None
        assert np.frombuffer(got, np.float64).tolist() == want.tolist()
        valid = [
            float(mask_utils.area({"size": [a, b], "counts": c}))
            for c, a, b in zip(counts, h, w)
            if a * b > 0
        ]
        assert [x for x, a, b in zip(want.tolist(), h, w) if a * b > 0] == valid
    with path("compiled"):  # the public function: the kernel's numbers or the same refusal
        try:
            mine = joined_area(b"".join(counts), ends, np.array(h), np.array(w))
        except CorruptRLE as e:
            mine = ("corrupt", e.index)
    assert mine == want if isinstance(want, tuple) else mine.tolist() == want.tolist()


def test_huge_or_negative_sizes_are_measured_as_the_numpy_path_measures_them():
    # the raster size is h * w wrapped to int64 on both paths (sizes are checked elsewhere)
    counts, ends = b"0", np.array([1], np.int64)
    for h, w in [(-1, 0), (0, -1), (2**40, 0), (0, 2**62), (2**32, 2**32), (-1, -1), (7, 0)]:
        hw = np.array([[h, w]], np.int64)
        got = K.counts_area(counts, ends, hw)
        with path("pure"):
            try:
                want = joined_area(counts, ends, hw[:, 0], hw[:, 1]).tolist()
            except CorruptRLE:
                want = None
        assert (None if got is None else np.frombuffer(got).tolist()) == want, (h, w)
    for h, w in [(1, 1), (-1, -1)]:  # one pixel: -1 x -1 is 1 on both paths
        hw = np.array([[h, w]], np.int64)
        assert K.counts_area(b"2", ends, hw) is None  # two pixels: more than the raster
        assert np.frombuffer(K.counts_area(b"01", np.array([2]), hw)).tolist() == [1.0]


# ---------------------------------------------------------------- 7. mask IoU


@st.composite
def iou_case(draw: Any) -> tuple[list[dict], list[dict], list[int]]:
    h, w = draw(st.integers(1, 8)), draw(st.integers(1, 12))

    def one() -> dict[str, Any]:
        fill = draw(st.sampled_from(["random", "random", "empty", "full", "box"]))
        if fill == "random":
            m = np.asarray(draw(st.lists(st.booleans(), min_size=h * w, max_size=h * w)))
            m = m.reshape(h, w)
        elif fill == "box":
            m = np.zeros((h, w), bool)
            m[draw(st.integers(0, h - 1)) :, : draw(st.integers(1, w))] = True
        else:
            m = np.full((h, w), fill == "full")
        rle = mask_utils.encode(np.asfortranarray(m.astype(np.uint8)))
        if draw(st.booleans()):
            rle["counts"] = rle["counts"].decode()
        return rle

    dts = [one() for _ in range(draw(st.integers(1, 4)))]
    gts = [one() for _ in range(draw(st.integers(1, 4)))]
    crowd = draw(st.lists(st.integers(0, 1), min_size=len(gts), max_size=len(gts)))
    return dts, gts, crowd


def _pair_iou(dts, gts, crowd, di, gi, group) -> Any:
    z = np.zeros(len(di), np.int64)
    got = K.rle_pair_iou(
        dts, gts, np.asarray(di, np.int64), np.asarray(gi, np.int64),
        z + np.asarray(group, np.int64), np.asarray(crowd, np.uint8),
    )  # fmt: skip
    return None if got is None else np.frombuffer(got, np.float64)


@examples(250)
@given(case=iou_case(), split=st.booleans())
def test_mask_ious_equal_pycocotools_exactly(case, split):
    dts, gts, crowd = case
    want = mask_utils.iou(dts, gts, crowd)
    di, gi = (
        a.ravel() for a in np.meshgrid(np.arange(len(dts)), np.arange(len(gts)), indexing="ij")
    )
    group = di % 2 if split else np.zeros_like(di)  # groups decode ground truths anew
    order = np.lexsort((di, group))
    got = _pair_iou(dts, gts, crowd, di[order], gi[order], group[order])
    assert got is not None
    assert got.view(np.int64).tolist() == want[di[order], gi[order]].view(np.int64).tolist()


def test_mask_iou_declines_what_it_does_not_read():
    m = np.zeros((3, 3), np.uint8, order="F")
    m[1:, 1:] = 1
    a = mask_utils.encode(m)
    b = mask_utils.encode(np.asfortranarray(np.ones((3, 4), np.uint8)))
    ok = _pair_iou([a], [a, {"size": [3, 3], "counts": b"9"}], [0, 0], [0, 0], [0, 1], [0, 0])
    assert ok is not None and ok.tolist() == [1.0, 0.0]  # b"9": nine 0s
    for dts, gts in [
        ([a], [b]),  # sizes differ
        ([[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]], [a]),  # a polygon, not a dict
        ([None], [a]),
        ([a], [{"size": [3, 3]}]),  # no counts
        ([a], [{"size": (3, 3), "counts": a["counts"]}]),  # size not a list
        ([a], [{"size": [3, 3], "counts": [0, 9]}]),  # uncompressed counts
        ([a], [{"size": [3, 3], "counts": "é"}]),
        ([a], [{"size": [3, 3], "counts": b"8"}]),  # runs do not fill the raster
        ([a], [{"size": [3, 3], "counts": b"a"}]),  # an unfinished run
        ([a], [{"size": [3, 2**40], "counts": b"0"}]),
    ]:
        assert _pair_iou(dts, gts, [0], [0], [0], [0]) is None, (dts, gts)
    assert _pair_iou([a], [a], [0], [1], [0], [0]) is None  # an index out of range
    assert _pair_iou([a], [a], [0], [0], [-1], [0]) is None


# ---------------------------------------------------------------- 7b. polygons


def _rasterised(polys: list[list[float]], h: int, w: int) -> Any:
    n = np.array([len(p) // 2 for p in polys], np.int64)
    xy = np.array([c for p in polys for c in p], np.float64)
    return K.rasterise_polygons(xy, np.cumsum(n), h, w)


coordinate = st.one_of(
    st.floats(-15, 75, allow_nan=False, width=64),
    st.integers(-15, 75).map(float),
    st.integers(-30, 150).map(lambda i: i / 2),  # on pixel centres and edges
    st.integers(-150, 750).map(lambda i: i / 10),  # one decimal, as annotation tools write
)


@st.composite
def polygon_case(draw: Any) -> Any:
    h, w = draw(st.integers(1, 60)), draw(st.integers(1, 60))
    polys = []
    for _ in range(draw(st.integers(1, 4))):
        k = draw(st.integers(3, 10))
        pts = [draw(coordinate) for _ in range(2 * k)]
        if draw(st.booleans()):  # a repeated vertex (an edge of no length)
            j = draw(st.integers(0, k - 1))
            pts[2 * j + 2 : 2 * j + 2] = pts[2 * j : 2 * j + 2]
        polys.append(pts)
    return polys, h, w


@examples(300)  # 20,000 passed once (2026-12-02); the suite keeps 300
@given(case=polygon_case())
def test_polygons_rasterise_as_pycocotools_does(case):
    polys, h, w = case
    want = mask_utils.frPyObjects(polys, h, w)
    got = _rasterised(polys, h, w)
    assert got is not None
    counts, ends, areas = got
    ends_l = np.frombuffer(ends, np.int64).tolist()
    mine = [counts[a:b] for a, b in zip([0, *ends_l[:-1]], ends_l)]
    assert mine == [r["counts"] for r in want]
    assert np.frombuffer(areas, np.float64).tolist() == mask_utils.area(want).tolist()


def test_polygon_edge_cases_rasterise_as_pycocotools_does():
    cases = [
        ([[2.0, 2.0, 2.0, 2.0, 2.0, 2.0]], 5, 5),  # one point three times
        ([[0.0, 0.0, 4.0, 4.0, 8.0, 8.0]], 9, 9),  # collinear
        ([[-5.0, -5.0, 50.0, -5.0, 50.0, 50.0, -5.0, 50.0]], 7, 11),  # covers the image
        ([[0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0]], 1, 1),
        ([[10.0, 10.0, 12.0, 10.0, 11.0, 12.0]], 4, 4),  # outside the image
        ([[0.5, 0.5, 3.5, 0.5, 3.5, 3.5, 0.5, 3.5], [1.0, 1.0, 2.0, 1.0, 2.0, 2.0]], 5, 5),
    ]
    for polys, h, w in cases:
        got = _rasterised(polys, h, w)
        assert got is not None
        counts, ends, _ = got
        ends_l = np.frombuffer(ends, np.int64).tolist()
        mine = [counts[a:b] for a, b in zip([0, *ends_l[:-1]], ends_l)]
        assert mine == [r["counts"] for r in mask_utils.frPyObjects(polys, h, w)], polys


def test_polygons_too_large_to_walk_go_to_pycocotools():
    big = [[0.0, 0.0, 1e12, 0.0, 0.0, 5.0]]
    assert _rasterised(big, 4, 4) is None
    from assay.io.coco_geometry import _polygon_rles

    with path("compiled"):
        got, _ = _polygon_rles([[0.0, 0.0, 3.0, 0.0, 0.0, 3.0], *big], 4, 4)
    assert [r["counts"] for r in got] == [
        r["counts"] for r in mask_utils.frPyObjects([[0.0, 0.0, 3.0, 0.0, 0.0, 3.0], *big], 4, 4)
    ]


# ---------------------------------------------------------------- 8. end to end


@pytest.fixture(scope="module", params=["bbox", "segm"])
def coco_files(request, tmp_path_factory) -> tuple[Path, Path, str]:
    iou_type = request.param
    segm = iou_type == "segm"
    gt, dt = make_coco(
        n_images=20 if segm else 40, n_categories=5, dets_per_image=20, segm=segm, seed=3
    )
    d = tmp_path_factory.mktemp(iou_type)
    g, p = d / "gt.json", d / "dt.json"
    g.write_text(json.dumps(gt))
    p.write_text(json.dumps(dt))
    return g, p, iou_type


class Spy:
    """The compiled module, noting each kernel that answered (did not decline)."""

    def __init__(self) -> None:
        self.answered: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        kernel = getattr(K, name)

        def call(*args: Any) -> Any:
            got = kernel(*args)
            if got is not None:
                self.answered.add(name)
            return got

        return call


def test_coco_evaluate_from_files_is_identical_both_ways(coco_files, monkeypatch):
    g, p, iou_type = coco_files
    spy = Spy()
    monkeypatch.setattr(native, "_built", spy)

    def run() -> Any:
        ev = coco_evaluate(load_coco(g, p, iou_type=iou_type), CocoParams(iou_type=iou_type))
        return bits(ev.stats()), bits(ev.precision), bits(ev.recall)

    a, b = both(run)
    assert a == b
    # the compiled run used every kernel that applies, the pure run none
    segm = {"counts_area", "rle_dicts", "rle_pair_iou", "rasterise_polygons"}
    used = {"scan_results"} | (segm if iou_type == "segm" else set())
    assert spy.answered == used
    spy.answered.clear()
    with path("pure"):
        run()
    assert spy.answered == set()
    stats = np.array(a[0][2]).view(np.float64)
    assert len(stats) == 12 and 0 < stats[0] < 1  # the numbers are not trivial


def test_the_cli_prints_the_same_summary_both_ways(coco_files):
    g, p, iou_type = coco_files
    outs = []
    for off in ("", "1"):
        env = {**os.environ, "PYTHONPATH": SRC, "ASSAY_NO_NATIVE": off}
        r = subprocess.run(
            [sys.executable, "-m", "assay", "detection", "--groundtruths", str(g),
             "--predictions", str(p), "--iou-type", iou_type, "--coco"],
            capture_output=True, text=True, env=env, timeout=300,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr[-2000:]
        outs.append(r.stdout)
    assert "Average Precision" in outs[0]
    assert outs[0] == outs[1]
