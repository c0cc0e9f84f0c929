"""Stored runs side by side: :func:`compare` (``assay compare``).

Records of different runs are matched by ``type`` and their *identifying* parameters:
every parameter except the ones that describe a value's precision or support rather than
what it measures (:data:`NOT_IDENTITY`: ``n`` and the failure counts, ``stderr``, the
interval keys ``ci_low``, ``ci_high``, ``confidence_level``, ``ci_method``,
``num_bootstrap``, ``seed``, ``ci_undefined``, a slice's ``gap`` and its interval, the
reason a value is ``undefined``, per-datum ``details`` and an imported run's
``assay_value``). Only scalar values are compared (counts and curves are dicts; ``assay
runs show`` has them).

The first run is the baseline. For every other run ``r`` the frame has ``diff_r`` =
``value_r - value_base`` and, where both records carry an interval (``ci_low``/``ci_high``),
``overlap_r``: whether the two intervals share a point (``True``/``False``; ``None`` without
intervals). Non-overlapping 95% intervals mean the difference is significant at well below
5%; overlapping ones do not mean it is not (see docs/report.md).

Example:
    >>> from datetime import datetime, UTC
    >>> from assay.results import Metric, MetricSet
    >>> def run(i, acc, lo, hi):
    ...     ms = MetricSet([Metric("Accuracy", acc, {"label_key": "class", "ci_low": lo,
    ...                                              "ci_high": hi})])
    ...     return Evaluation(i, datetime(2026, 1, i, tzinfo=UTC), None, "classification",
    ...                       "iris", f"m{i}", {}, "finished", None, "0", metrics=ms)
    >>> df = compare([run(1, 0.80, 0.75, 0.85), run(2, 0.90, 0.86, 0.94)])
    >>> row = df.iloc[0]
    >>> row["type"], row["parameters"], round(row["diff_2"], 6), row["overlap_2"]
    ('Accuracy', 'label_key=class', 0.1, False)
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from assay.errors import InvalidInputError
from assay.results import Metric
from assay.store.records import Evaluation

if TYPE_CHECKING:
    import pandas as pd

    from assay.store.store import Store

__all__ = ["compare", "comparison", "Comparison", "identity", "NOT_IDENTITY", "intervals_overlap"]

#: Parameters that describe a value's precision or support, not what it measures.
NOT_IDENTITY = frozenset(
    {
        "n",
        "n_errors",
        "n_failed",
        "n_undefined",
        "stderr",
        "ci_low",
        "ci_high",
        "confidence_level",
        "ci_method",
        "num_bootstrap",
        "seed",
        "undefined",
        "details",
        "labels_excluded",
        "ci_undefined",
        "gap",
        "gap_ci_low",
        "gap_ci_high",
        "assay_value",
    }
)


def _text(v: Any) -> str:
    if isinstance(v, str):
        return v
    return json.dumps(v, sort_keys=True, separators=(",", ":"), allow_nan=False)


def identity(m: Metric, ignore: frozenset[str] = frozenset()) -> tuple[str, str]:
    """``(type, "k=v, ...")``: the key two runs' records are matched by.

    Example:
        >>> identity(Metric("Mean", 0.5, {"n": 10, "group": "a", "stderr": 0.1}))
        ('Mean', 'group=a')
    """
    items = sorted(
        (k, v) for k, v in m.parameters.items() if k not in NOT_IDENTITY and k not in ignore
    )
    return str(m.type), ", ".join(f"{k}={_text(v)}" for k, v in items)


def _scalar(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v)


def intervals_overlap(a: tuple[float, float] | None, b: tuple[float, float] | None) -> bool | None:
    """Whether two closed intervals share a point; ``None`` if either is missing.

    Example:
        >>> intervals_overlap((0.1, 0.3), (0.3, 0.5)), intervals_overlap((0.1, 0.2), (0.3, 0.4))
        (True, False)
    """
    if a is None or b is None:
        return None
    return bool(a[0] <= b[1] and b[0] <= a[1])


def _interval(m: Metric) -> tuple[float, float] | None:
    lo, hi = _scalar(m.parameters.get("ci_low")), _scalar(m.parameters.get("ci_high"))
    return None if lo is None or hi is None else (lo, hi)


def _table(
    ev: Evaluation, ignore: frozenset[str] = frozenset()
) -> dict[tuple[str, str, int], Metric]:
    """The run's scalar records by (type, identity, occurrence); ``ignore``: parameters
    left out of the identity."""
    out: dict[tuple[str, str, int], Metric] = {}
    seen: dict[tuple[str, str], int] = {}
    for m in ev.metrics or []:
        if m.value is not None and _scalar(m.value) is None:
            continue  # dicts (counts, curves) and text are not compared
        key = identity(m, ignore)
        k = seen[key] = seen.get(key, -1) + 1
        out[(*key, k)] = m
    return out


def _load(runs: Iterable[Evaluation | int], store: Store | None) -> list[Evaluation]:
    evs: list[Evaluation] = []
    for r in runs:
        if isinstance(r, Evaluation) and r.metrics is not None:
            evs.append(r)
            continue
        if store is None:
            raise InvalidInputError(
                "a run given by id (or without metrics) needs store=", source="compare"
            )
        evs.append(store.get(r.id if isinstance(r, Evaluation) else int(r)))
    if len(evs) < 2:
        raise InvalidInputError(f"needs at least two runs, got {len(evs)}", source="compare")
    ids = [e.id for e in evs]
    if len(set(ids)) != len(ids):
        raise InvalidInputError("a run is named twice", source="compare", field="runs")
    if len({e.kind for e in evs}) > 1:  # nothing would match: every row half empty
        kinds = ", ".join(f"{e.id} is {e.kind}" for e in evs)
        raise InvalidInputError(
            f"runs of different kinds have no records in common ({kinds})", source="compare"
        )
    return evs


@dataclass
class Comparison:
    """What :func:`comparison` found: one dict per record row (the columns of
    :func:`compare`), the runs compared (the first is the baseline), each run's label (its
    name and id), the notices (units missing or differing), and with ``rank`` the rank
    rows (:func:`assay.compare.ranks.rank_runs`). The report draws its forest plot from
    ``rows`` (``diff_R``, ``diff_ci_low_R``, ``diff_ci_high_R``) and ``ranks``."""

    rows: list[dict[str, Any]]
    runs: list[int]
    labels: dict[int, str]
    notices: list[str] = field(default_factory=list)
    ranks: list[dict[str, Any]] | None = None

    def frame(self) -> pd.DataFrame:
        import pandas as pd

        df = pd.DataFrame(self.rows, dtype=object)
        df.attrs.update(
            runs=self.runs,
            baseline=self.runs[0],
            labels=self.labels,
            notices=self.notices,
            ranks=self.ranks,
        )
        return df


def compare(
    runs: Sequence[Evaluation | int], *, store: Store | None = None, **options: Any
) -> pd.DataFrame:
    """Scalar metrics of several runs side by side, with paired differences, intervals,
    adjusted p-values and power (see :func:`comparison`, whose rows it tabulates; its
    ``attrs`` hold ``runs``, ``baseline``, ``labels``, ``notices`` and ``ranks``).

    Args:
        runs: stored evaluations (with metrics) or their ids (then ``store`` is needed);
            the first is the baseline.
        store: where to load runs given by id, and every run's units.
        options: those of :func:`comparison`.
    """
    return comparison(runs, store=store, **options).frame()


def comparison(
    runs: Sequence[Evaluation | int],
    *,
    store: Store | None = None,
    adjust: str = "holm",
    level: float = 0.95,
    num_bootstrap: int = 1000,
    seed: int = 0,
    mde: float | None = None,
    target_width: float | None = None,
    ignore_params: Sequence[str] = (),
    rank: str | None = None,
    lower_is_better: bool = False,
) -> Comparison:
    """The comparison of several runs with the first (the baseline), record by record.

    One row per record matched by type and identifying parameters (first appearance
    order; ``ignore_params``: parameters left out of the match, so runs that differ in a
    setting line up): ``type``, ``parameters``, ``value_<id>`` per run (and
    ``ci_low_<id>``/``ci_high_<id>`` when that run's records carry intervals), and per
    other run ``R``:

    ``diff_R``, ``diff_ci_low_R``, ``diff_ci_high_R``
        the difference to the baseline on the units both runs have, and its interval at
        ``level`` (:mod:`assay.compare.runs`: one set of resample weights for both runs;
        DeLong's for a ROC AUC); without shared units the values' difference and no
        interval;
    ``p_value_R``, ``p_adjusted_R``, ``test_R``
        the two-sided p-value of the test named (``delong``, ``mcnemar``, ``paired_t``,
        ``paired_bootstrap``, or ``unpaired``: no p-value), and the p-value adjusted over
        the runs compared for that record (``adjust``: ``holm``, ``bh`` or ``none``);
    ``ci_method_R``
        how the difference's interval was made, one rule per test (``delong_normal``,
        ``newcombe_hybrid_score``, ``t``, ``bootstrap_normal``; None without one:
        :data:`assay.compare.paired.CI_METHODS`);
    ``mde_R``, ``n_paired_R``
        the minimum detectable difference at power 0.8 (two-sided, alpha ``1 - level``)
        on the ``n_paired_R`` shared units (:mod:`assay.compare.power`);
    ``n_needed_R`` (with ``mde``), ``n_for_width_R`` (with ``target_width``)
        the units needed to detect a difference ``mde``, and for an interval of the
        difference ``target_width`` wide;
    ``overlap_R``
        whether the two runs' own intervals share a point (``None`` without intervals).
    """
    from assay.compare.adjust import ADJUST_METHODS
    from assay.compare.adjust import adjust as adjusted
    from assay.compare.runs import RunUnits, paired_records

    if adjust not in ADJUST_METHODS:
        raise InvalidInputError(
            f"unknown method {adjust!r}; choose one of {', '.join(ADJUST_METHODS)}",
            source="--adjust",
        )
    for value, flag in ((mde, "--mde"), (target_width, "--target-width")):
        if value is not None and not (math.isfinite(value) and value > 0):
            raise InvalidInputError(f"must be > 0, got {value:g}", source=flag)
    if not 0.0 < level < 1.0:
        raise InvalidInputError(f"must be in (0, 1), got {level:g}", source="--level")
    evs = _load(runs, store)
    ignore = frozenset(ignore_params)
    tables = [_table(e, ignore) for e in evs]
    keys: dict[tuple[str, str, int], None] = {}
    for t in tables:
        keys.update(dict.fromkeys(t))
    notices: list[str] = []
    units = [RunUnits(_units(store, e, notices)) for e in evs]
    pairs = []
    for e, t, u in zip(evs[1:], tables[1:], units[1:]):
        both = {k: (tables[0][k], t[k]) for k in keys if k in tables[0] and k in t}
        found = paired_records(
            units[0], u, both, level=level, num_bootstrap=num_bootstrap, seed=seed
        )
        pairs.append(found)
        if units[0].evaluator is not None and u.evaluator is not None:
            if not found.tallied:
                notices.append(
                    f"evaluations {evs[0].label} and {e.label}: no record has a per-unit tally "
                    "in both (some evaluators make one only with --ci): compared unpaired"
                )
            elif not found.paired:
                notices.append(
                    f"evaluation {e.label} shares no unit with {evs[0].label}: compared unpaired"
                )
            elif found.only_a or found.only_b:
                notices.append(
                    f"evaluation {e.label}: {found.n_paired} units paired with "
                    f"{evs[0].label}; {found.only_a} only in {evs[0].label}, "
                    f"{found.only_b} only in {e.label}"
                )
    has_ci = [any(_interval(m) for m in t.values()) for t in tables]
    rows = []
    for key in keys:
        row: dict[str, Any] = {"type": key[0], "parameters": key[1]}
        if key[2]:
            row["parameters"] += f" (#{key[2] + 1})"
        for e, t, ci in zip(evs, tables, has_ci):
            m = t.get(key)
            row[f"value_{e.id}"] = None if m is None else _scalar(m.value)
            if ci:
                iv = None if m is None else _interval(m)
                row[f"ci_low_{e.id}"], row[f"ci_high_{e.id}"] = iv or (None, None)
        ps = []
        for e, t, found in zip(evs[1:], tables[1:], pairs):
            cells = _cells(tables[0].get(key), t.get(key), found.results.get(key), level)
            cells |= _power(cells, mde, target_width, level)
            row |= {f"{c}_{e.id}": v for c, v in cells.items()}
            ps.append(math.nan if cells["p_value"] is None else cells["p_value"])
        for e, q in zip(evs[1:], adjusted(ps, adjust) if ps else []):
            row[f"p_adjusted_{e.id}"] = None if math.isnan(q) else float(q)
        rows.append(_ordered(row, evs))
    out = Comparison(rows, [e.id for e in evs], {e.id: e.label for e in evs}, notices)
    if rank is not None:
        from assay.compare.ranks import rank_runs

        out.ranks = rank_runs(
            rank, rows, [e.id for e in evs], [t for t in tables], units, adjust=adjust,
            level=level, num_bootstrap=num_bootstrap, seed=seed, lower_is_better=lower_is_better,
        )  # fmt: skip
    return out


_PER_RUN = ("diff", "diff_ci_low", "diff_ci_high", "p_value", "p_adjusted", "test", "ci_method",
            "mde", "n_paired", "n_needed", "n_for_width", "overlap")  # fmt: skip


def _ordered(row: dict[str, Any], evs: Sequence[Evaluation]) -> dict[str, Any]:
    """The row's columns in a fixed order: per other run, its columns together."""
    head = {k: v for k, v in row.items() if not k.startswith(_PER_RUN)}
    for e in evs[1:]:
        head |= {f"{c}_{e.id}": row[f"{c}_{e.id}"] for c in _PER_RUN if f"{c}_{e.id}" in row}
    return head


def _cells(a: Metric | None, b: Metric | None, paired: Any, level: float) -> dict[str, Any]:
    """One other run's cells of one record (see :func:`comparison`)."""
    va = None if a is None else _scalar(a.value)
    vb = None if b is None else _scalar(b.value)
    out: dict[str, Any] = {"diff": None if va is None or vb is None else vb - va}
    out |= {"diff_ci_low": None, "diff_ci_high": None, "p_value": None, "p_adjusted": None}
    out |= {"test": None if out["diff"] is None else "unpaired", "ci_method": None}
    out |= {"se": None, "n_paired": 0}
    if paired is not None and out["diff"] is not None:
        out["diff"] = _finite(paired.diff)
        if paired.ci is not None:
            out["diff_ci_low"], out["diff_ci_high"] = map(_finite, paired.ci)
            out["ci_method"] = paired.ci_method
        out |= {"p_value": _finite(paired.p_value), "test": paired.test}
        out |= {"se": _finite(paired.se), "n_paired": int(paired.n)}
    out["overlap"] = intervals_overlap(
        None if a is None else _interval(a), None if b is None else _interval(b)
    )
    return out


def _power(
    cells: dict[str, Any], mde: float | None, width: float | None, level: float
) -> dict[str, Any]:
    """``mde`` (and ``n_needed``, ``n_for_width``) from the difference's standard error."""
    from assay.compare import power

    se, n = cells.pop("se"), cells["n_paired"]
    ok = se is not None and n > 0
    out: dict[str, Any] = {"mde": power.mde(se, 1.0 - level) if ok else None}
    if mde is not None:
        out["n_needed"] = power.n_needed(se, n, mde, 1.0 - level) if ok and se > 0 else None
    if width is not None:
        out["n_for_width"] = power.n_for_width(se, n, width, level) if ok and se > 0 else None
    return out


def _finite(v: float) -> float | None:
    return float(v) if v is not None and math.isfinite(v) else None


def _units(store: Store | None, e: Evaluation, notices: list[str]) -> Any:
    """The evaluator the run's units rebuild, or ``None`` (with a notice why)."""
    try:
        ev = None if store is None else store.units(e.id)
    except InvalidInputError as err:  # kept by an evaluator this assay does not have
        notices.append(f"evaluation {e.label}: its units cannot be rebuilt ({err.reason}), "
                       "compared unpaired")  # fmt: skip
        return None
    if ev is None:
        notices.append(f"evaluation {e.label}: no units kept, compared unpaired")
    return ev


def finite_or_none(v: Any) -> Any:
    """``None`` for NaN (JSON-safe cells)."""
    return None if isinstance(v, float) and math.isnan(v) else v
