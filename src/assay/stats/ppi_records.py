"""Prediction-powered records of score means, and the judge's agreement with the human
labels (``assay stats --human-labels FILE``).

Each metric that is a mean of per-sample values (``Accuracy``, ``Mean``; not per group) gets,
under each reducer and score key whose column has human labels (:mod:`assay.io.human_labels`),
one more record of the same type: its value is the PPI++ estimate of the human mean
(:mod:`assay.uncertainty.ppi`) from the labelled samples (human value and the judged one) and
the judged samples without a label. Its parameters are the judged record's context
(``reducer``, ``score_key``, ``n_failed``) and

``estimator``
    ``"ppi"``;
``n_labeled``, ``n_unlabeled``, ``n``
    the judged samples with and without a human label, and their sum;
``ppi_lambda``
    the power-tuning parameter (0: the human labels alone; 1: plain PPI);
``ci_low``, ``ci_high``, ``confidence_level``, ``ci_method``
    the interval: ``ppi`` (normal, PPI++'s variance) or with a cluster key
    ``ppi_cluster_bootstrap`` (whole clusters resampled, ``lam`` re-tuned on each resample;
    with ``num_bootstrap``, ``seed`` and ``cluster``).

Each judged column with labels (per reducer and score key) also gets one ``JudgeAgreement``
record on its labelled samples (:mod:`assay.stats.judge_agreement`: MAE, Pearson, Spearman,
and for integer values the agreement share and Cohen's kappa), with ``n`` the labelled
samples, ``undefined_measures`` (measure -> reason) where a measure is undefined, and
``measure_ci`` (measure -> ``[low, high]``): the bootstrap interval over the labelled samples
at the same level, seed and number of resamples (whole clusters with a cluster key).

Example:
    >>> from assay.io.human_labels import human_labels_from
    >>> from assay.stats import ScoreFrame, mean
    >>> import pandas as pd
    >>> f = ScoreFrame.from_arrays([1.0, 0.0, 1.0, 1.0, 0.0], sample_id=[1, 2, 3, 4, 5])
    >>> h = human_labels_from(pd.DataFrame({"id": [1, 2, 3], "value": [1.0, 0.0, 0.0]}), "h")
    >>> from assay.stats.reducer_registry import get_reducer
    >>> r, a = ppi_records(f, [mean()], [get_reducer("mean")], None, h, 0.95)
    >>> r.type, r.parameters["estimator"], r.parameters["n_labeled"], r.parameters["n_unlabeled"]
    ('Mean', 'ppi', 3, 2)
    >>> a.type, round(a.value["agreement"], 6), a.parameters["n"]
    ('JudgeAgreement', 0.666667, 3)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from assay.errors import InvalidInputError
from assay.io.human_labels import HumanLabels
from assay.results import Metric
from assay.stats.frame import ScoreFrame
from assay.stats.judge_agreement import agreement_record
from assay.stats.metric_registry import MetricFn
from assay.stats.records import run_context
from assay.stats.reducer_registry import Reducer
from assay.stats.run_records import Scores, _columns, _Views
from assay.uncertainty.intervals import CIOptions
from assay.uncertainty.ppi import PPIEstimate, ppi_cluster_interval, ppi_mean

__all__ = ["ppi_records"]

#: the interval keys of the judged record, replaced by the PPI interval's
_INTERVAL_KEYS = ("ci_low", "ci_high", "confidence_level", "ci_method", "num_bootstrap", "seed")


def _text(v: Any) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def _check_ids(scores: Scores, labels: HumanLabels) -> None:
    known: set[str] = set()
    for frame in _columns(scores).values():
        known.update(_text(i) for i in frame.sample_id.tolist())
        known.update(_text(i) for i in frame.failed_ids.tolist())
    unknown = [i for i in labels.ids if i not in known]
    if unknown:
        raise InvalidInputError(
            f"id {unknown[0]!r} is not a sample of the scores"
            + (f" ({len(unknown) - 1} more unknown)" if len(unknown) > 1 else ""),
            source=labels.source,
            record=labels.ids.index(unknown[0]) + 1,
            field="id",
        )


def _codes(frame: ScoreFrame, opts: dict) -> np.ndarray | None:
    if opts.get("cluster") is None:
        return None
    return np.unique(frame.column(opts["cluster"]).astype(str), return_inverse=True)[1].reshape(-1)


def _estimate(
    judged: np.ndarray, has: np.ndarray, y: np.ndarray, frame: ScoreFrame, opts: dict
) -> PPIEstimate:
    if opts.get("cluster") is None:
        return ppi_mean(y, judged[has], judged[~has], level=opts["level"])
    codes = _codes(frame, opts)
    assert codes is not None
    return ppi_cluster_interval(
        y,
        judged[has],
        judged[~has],
        codes[has],
        codes[~has],
        level=opts["level"],
        num_bootstrap=opts["num_bootstrap"],
        seed=opts["seed"],
    )


def _record(base: Metric, e: PPIEstimate, opts: dict) -> Metric:
    params = {k: v for k, v in base.parameters.items() if k not in _INTERVAL_KEYS}
    params.pop("n", None)
    clustered = opts.get("cluster") is not None
    params |= {
        "estimator": "ppi",
        "n_labeled": e.n_labeled,
        "n_unlabeled": e.n_unlabeled,
        "n": e.n_labeled + e.n_unlabeled,
        "ppi_lambda": e.lam,
        "ci_low": e.ci_low,
        "ci_high": e.ci_high,
        "confidence_level": opts["level"],
        "ci_method": "ppi_cluster_bootstrap" if clustered else "ppi",
    }
    if clustered:
        params |= {k: opts[k] for k in ("num_bootstrap", "seed", "cluster")}
    return Metric(base.type, e.estimate, params)


def _agreement(
    y: np.ndarray, judged: np.ndarray, ctx: dict[str, Any], opts: dict, codes: np.ndarray | None
) -> Metric:
    ci = CIOptions(opts["level"], "bootstrap", opts["num_bootstrap"], opts["seed"], opts["cluster"])
    context = {k: v for k, v in ctx.items() if k != "n_failed"}
    return agreement_record(y, judged, context, ci, codes)


def ppi_records(
    scores: Scores,
    metrics: Sequence[MetricFn],
    reducers: Sequence[Reducer],
    to_float: Any,
    labels: HumanLabels,
    level: float,
    *,
    cluster: str | None = None,
    num_bootstrap: int = 1000,
    seed: int = 0,
) -> list[Metric]:
    """The PPI++ records (module docstring) of the mean-type ``metrics`` over ``scores``
    with human ``labels``, at confidence ``level``; ``cluster``: a sample-metadata key whose
    clusters the bootstrap resamples whole.

    Raises InvalidInputError (naming the labels' file) for an id that is no sample of the
    scores, a label column that no score has, or labels of which none has a judged score.
    """
    _check_ids(scores, labels)
    opts = {"level": level, "cluster": cluster, "num_bootstrap": num_bootstrap, "seed": seed}
    views, out, used, agreed = _Views(scores), [], set(), set()
    for r in (r for r in reducers if not r.collects):
        for m in metrics:
            mean_of = getattr(m, "mean_of", None)
            if m.takes != "frame" or mean_of is None:
                continue
            mapping = m.to_float if m.to_float is not None else to_float
            for key, frame in views.reduced(r, mapping).items():
                column = "value" if key is None else str(key)
                used.add(column)
                human = labels.labelled(column)
                has = np.array([_text(i) in human for i in frame.sample_id.tolist()], bool)
                if not has.any():
                    continue
                y = np.array([human[_text(i)] for i in frame.sample_id[has].tolist()])
                judged = np.asarray(mean_of(frame), np.float64)
                e = _estimate(judged, has, y, frame, opts)
                ctx = run_context(
                    reducer=r.name,
                    reducer_to_float=None if r.to_float is None else r.to_float.to_dict(),
                    score_key=key,
                    n_failed=frame.n_none,
                )
                out.extend(
                    _record(b, e, opts) for b in m.records(frame, ctx) if b.value is not None
                )
                if (r.name, key) not in agreed:  # once per judged column, not per metric
                    agreed.add((r.name, key))
                    codes = _codes(frame, opts)
                    labelled_codes = None if codes is None else codes[has]
                    out.append(_agreement(y, judged[has], ctx, opts, labelled_codes))
    unused = [c for c in labels.columns if c not in used]
    if unused:
        raise InvalidInputError(
            f"no score column {unused[0]!r} among the scores' mean metrics",
            source=labels.source,
            field=unused[0],
        )
    if not out:
        raise InvalidInputError(
            "no labelled sample has a judged score", source=labels.source, field="id"
        )
    return out
