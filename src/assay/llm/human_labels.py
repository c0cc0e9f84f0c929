"""Human labels on judged LLM records (``--human-labels FILE`` on ``assay text``'s judge
metrics and the LLM suites): a PPI++ record per judged mean, the judge's agreement, and the
caution of a weak judge.

The labels (:mod:`assay.io.human_labels`) name items by ``id`` (a datum ``uid``, a suite's
item id) and give a human value per metric: a column named by the metric (``faithfulness``,
or its record type ``Faithfulness``), or ``value`` when one metric is judged.
:func:`check_labels` refuses, before any call, an id that is no judged item (the first named),
a column that names no judged metric, and labels that label nothing.

After the run, :func:`labelled_records` gives, per metric with labels,

* one more record of the metric's aggregate type with ``estimator="ppi"``: the PPI++
  estimate of the human mean (:func:`assay.uncertainty.ppi.ppi_mean`, equal to
  ``ppi_py.ppi_mean_pointestimate``/``ppi_mean_ci``) from the labelled items (human value,
  judged value) and the judged items without a label, with ``n_labeled``, ``n_unlabeled``,
  ``n``, ``ppi_lambda`` and its interval (``ci_method="ppi"``, or ``ppi_cluster_bootstrap``
  with a cluster column); items whose judgement failed or is undefined take no part
  (``n_failed``);
* one ``JudgeAgreement`` record on the labelled items
  (:func:`assay.stats.judge_agreement.agreement_record`, with ``measure_ci``), carrying a
  ``judge_caution`` when the agreement is weak (:func:`assay.llm.caution.weak_agreement`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from assay.errors import InvalidInputError
from assay.io.human_labels import HumanLabels
from assay.llm.caution import PARAMETER, weak_agreement
from assay.results import Metric
from assay.stats.judge_agreement import agreement_record
from assay.uncertainty.intervals import CIOptions
from assay.uncertainty.ppi import ppi_cluster_interval, ppi_mean

__all__ = ["check_labels", "label_column", "labelled_records"]


def label_column(labels: HumanLabels, metric: str, type_: str, only: bool) -> str | None:
    """The labels' column of a judged metric (its name, its record type, or ``value`` when
    it is the only metric judged), or ``None``."""
    for c in (metric, type_, *(["value"] if only else [])):
        if c in labels.columns:
            return c
    return None


def check_labels(labels: HumanLabels, ids: Sequence[str], metrics: Mapping[str, str]) -> None:
    """Refuse (one line naming the file) labels that cannot calibrate this run, before any
    call: ``ids`` are the judged items, ``metrics`` name -> record type."""
    known = set(ids)
    unknown = [i for i in labels.ids if i not in known]
    if unknown:
        more = f" ({len(unknown) - 1} more unknown)" if len(unknown) > 1 else ""
        raise InvalidInputError(
            f"id {unknown[0]!r} is not a judged item{more}",
            source=labels.source,
            record=labels.ids.index(unknown[0]) + 1,
            field="id",
        )
    only = len(metrics) == 1
    used = {label_column(labels, m, t, only) for m, t in metrics.items()} - {None}
    extra = [c for c in labels.columns if c not in used]
    if extra:
        names = ", ".join(metrics)
        raise InvalidInputError(
            f"column {extra[0]!r} names no judged metric (judged: {names})",
            source=labels.source,
            field=extra[0],
        )
    if not any(labels.labelled(c) for c in used if c is not None):
        raise InvalidInputError("no judged item has a label", source=labels.source, field="id")


def _ppi_record(
    type_: str, context: dict[str, Any], judged: dict[str, float], human: dict[str, float],
    opts: CIOptions, code: Callable[[str], int] | None, n_failed: int,
) -> Metric:  # fmt: skip
    lab = [i for i in judged if i in human]
    rest = [i for i in judged if i not in human]
    y = np.array([human[i] for i in lab])
    yhat = np.array([judged[i] for i in lab])
    yhat_u = np.array([judged[i] for i in rest])
    clustered = opts.cluster is not None and code is not None
    if clustered:
        assert code is not None
        e = ppi_cluster_interval(
            y, yhat, yhat_u, [code(i) for i in lab], [code(i) for i in rest],
            level=opts.level, num_bootstrap=opts.num_bootstrap, seed=opts.seed,
        )  # fmt: skip
    else:
        e = ppi_mean(y, yhat, yhat_u, level=opts.level)
    params = context | {
        "aggregate": "mean",
        "estimator": "ppi",
        "n_labeled": e.n_labeled,
        "n_unlabeled": e.n_unlabeled,
        "n": e.n_labeled + e.n_unlabeled,
        "n_failed": n_failed,
        "ppi_lambda": e.lam,
        "ci_low": e.ci_low,
        "ci_high": e.ci_high,
        "confidence_level": opts.level,
        "ci_method": "ppi_cluster_bootstrap" if clustered else "ppi",
    }
    if clustered:
        params |= {"num_bootstrap": opts.num_bootstrap, "seed": opts.seed, "cluster": opts.cluster}
    return Metric(type_, e.estimate, params)


def labelled_records(
    records: Sequence[Metric],
    labels: HumanLabels,
    metrics: Mapping[str, str],
    opts: CIOptions,
    *,
    item_key: str = "datum_uid",
    cluster_of: Mapping[str, Any] | None = None,
    context: Mapping[str, Any] | None = None,
) -> list[Metric]:
    """The PPI and ``JudgeAgreement`` records (module docstring) of the per-item ``records``
    (``item_key``: the parameter naming the item) of each judged metric (name -> record
    type); ``cluster_of``: item -> its cluster value (with ``opts.cluster``)."""
    boot = replace(opts, method="bootstrap")  # the agreement's interval: the bootstrap
    codes: dict[str, int] = {}
    if cluster_of is not None and opts.cluster is not None:
        values = sorted({str(v) for v in cluster_of.values()})
        index = {v: j for j, v in enumerate(values)}
        codes = {str(i): index[str(v)] for i, v in cluster_of.items()}
    code = (lambda i: codes[i]) if codes else None
    out: list[Metric] = []
    only = len(metrics) == 1
    for name, type_ in metrics.items():
        column = label_column(labels, name, type_, only)
        if column is None:
            continue
        human = labels.labelled(column)
        per = [
            m for m in records
            if m.type == type_ and item_key in m.parameters and "aggregate" not in m.parameters
        ]  # fmt: skip
        judged = {str(m.parameters[item_key]): float(m.value) for m in per if m.value is not None}
        n_failed = len(per) - len(judged)
        ctx = dict(context or {}) | {"metric": name}
        if not any(i in human for i in judged):
            reason = "no labelled item has a judged value (every labelled judgement failed)"
            out.append(Metric(type_, None, ctx | {"estimator": "ppi", "undefined": reason}))
            continue
        out.append(_ppi_record(type_, ctx, judged, human, opts, code, n_failed))
        lab = [i for i in judged if i in human]
        agree_codes = None if code is None else np.array([code(i) for i in lab])
        rec = agreement_record(
            [human[i] for i in lab], [judged[i] for i in lab], ctx, boot, agree_codes
        )
        weak = weak_agreement(rec.value)
        if weak is not None:
            rec.parameters[PARAMETER] = weak
        out.append(rec)
    return out
