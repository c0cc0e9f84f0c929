"""Text and LLM-judge plots: the distribution of each per-datum metric.

Per-datum records (those with ``datum_uid``: ROUGE per type, BLEU, each judge metric) are
drawn as histograms, one figure per metric (and ROUGE type), runs overlaid. The aggregate
records (mean with its interval) are in the summary table; the calls behind the judges are
in the run's item table.
"""

from __future__ import annotations

from assay.report.figures import Figure, figure, histogram, run_label, scalar
from assay.store.records import Evaluation

__all__ = ["figures"]


def _metric_name(m: object) -> str:
    p = m.parameters  # type: ignore[attr-defined]
    extra = [str(p[k]) for k in ("rouge_type", "measure") if k in p and p[k] != "fmeasure"]
    return " ".join([m.type, *extra])  # type: ignore[attr-defined]


def figures(runs: list[Evaluation]) -> list[Figure]:
    """One histogram per per-datum metric."""
    by: dict[str, list[tuple[Evaluation, list[float]]]] = {}
    for ev in runs:
        values: dict[str, list[float]] = {}
        for m in ev.metrics or []:
            v = scalar(m.value)
            if "datum_uid" in m.parameters and v is not None:
                values.setdefault(_metric_name(m), []).append(v)
        for name, vs in values.items():
            by.setdefault(name, []).append((ev, vs))
    out = []
    for name, pairs in by.items():
        unit = all(0.0 <= v <= 1.0 for _, vs in pairs for v in vs)
        bins = {"xbins": {"start": 0.0, "end": 1.0001, "size": 0.05}} if unit else {}
        traces = [histogram(vs, run_label(ev), **bins) for ev, vs in pairs]
        n = sum(len(vs) for _, vs in pairs)
        out.append(
            figure(
                f"{name}: distribution over datums (n = {n})",
                traces,
                x_title=name,
                y_title="datums",
                barmode="overlay",
                height=320,
            )
        )
    return out
