"""When a judge's numbers are a demonstration, not a verdict: one stderr line and one parameter.

Judged metrics parse on every call, even from the embedded 135M model, so they look as
trustworthy as any other record. Two cases earn a caution, printed once on stderr and kept
as the parameter ``judge_caution`` (the run's stored parameters and each judged aggregate):

* **the judge is SmolLM2-135M-Instruct** (:func:`demo_judge`): the spec ``embedded`` (also
  the default with no ``--model`` and no ``$ASSAY_MODEL``), an ``embedded:FILE`` whose file
  name says ``135m``, or an endpoint serving a model whose name says ``smollm2-135m`` (what
  ``assay serve`` serves);
* **the judge disagrees with the human labels** given (:func:`weak_agreement`): on the
  labelled items, Cohen's kappa below :data:`MIN_KAPPA` for integer values (verdicts,
  ratings), else Spearman's correlation below :data:`MIN_CORRELATION`; a judge whose
  measure is undefined (it gives every labelled item one value) is weak too: its scores
  cannot be told from a constant.

0.4 is where Landis and Koch's scale of kappa leaves "fair" for "moderate" agreement; the
same bound on a rank correlation keeps the two cases alike. Neither bound makes a judge
good: the PPI records (``estimator="ppi"``) are the estimate to report either way.

Example:
    >>> demo_judge("embedded"), demo_judge("http://127.0.0.1:8000/v1#smollm2-135m-instruct")
    (True, True)
    >>> demo_judge("openai:gpt-4o-mini")
    False
    >>> weak_agreement({"cohen_kappa": 0.2, "spearman": 0.9}) is not None
    True
    >>> weak_agreement({"spearman": 0.8, "pearson": 0.8, "mae": 0.1}) is None
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "DEMO_JUDGE",
    "MIN_CORRELATION",
    "MIN_KAPPA",
    "PARAMETER",
    "announce",
    "demo_caution",
    "demo_judge",
    "weak_agreement",
]

#: The parameter that carries the caution.
PARAMETER = "judge_caution"
#: The caution of the embedded 135M judge.
DEMO_JUDGE = (
    "the judge is SmolLM2-135M-Instruct: a 135M judge is a demonstration, not a verdict "
    "(use a stronger judge with --model, and check it on human labels with --human-labels)"
)
#: Below this Cohen's kappa (integer values) the judge's agreement earns a caution.
MIN_KAPPA = 0.4
#: Below this Spearman correlation (other numeric values) the judge's agreement earns one.
MIN_CORRELATION = 0.4


def demo_judge(spec: str | None) -> bool:
    """Whether the model ``spec`` (``None``: ``$ASSAY_MODEL`` or embedded) is the 135M judge."""
    import os

    from assay.llm.models.spec import DEFAULT_MODEL_ENV, canonical_model_name

    text = spec if spec and spec.strip() else (os.environ.get(DEFAULT_MODEL_ENV) or "embedded")
    name = canonical_model_name(text)
    if name == "embedded":
        return True
    if name.startswith("embedded:"):
        return "135m" in os.path.basename(name).lower()
    return "smollm2-135m" in name.partition("#")[2].lower()


def announce(caution: str) -> None:
    """One caution line on stderr (stdout stays the command's records)."""
    import sys

    sys.stderr.write(f"caution: {caution}\n")


def demo_caution(model: str | None) -> str | None:
    """:data:`DEMO_JUDGE`, announced, when ``model`` is the 135M judge; else ``None``."""
    if not demo_judge(model):
        return None
    announce(DEMO_JUDGE)
    return DEMO_JUDGE


def weak_agreement(agreement: Mapping[str, Any]) -> str | None:
    """The caution of a ``JudgeAgreement`` value (:mod:`assay.stats.judge_agreement`) below
    the documented bounds, or ``None`` when the judge agrees well enough."""
    if "cohen_kappa" in agreement:
        kappa = agreement["cohen_kappa"]
        if kappa is None:
            return "the judge's agreement with the human labels is undefined (Cohen's kappa)"
        if kappa < MIN_KAPPA:
            return (
                f"the judge agrees weakly with the human labels: Cohen's kappa {kappa:.3g} "
                f"< {MIN_KAPPA}; its own mean is not to be trusted"
            )
        return None
    rho = agreement.get("spearman")
    if rho is None:
        return (
            "the judge's agreement with the human labels is undefined (Spearman): it gives "
            "every labelled item one value"
        )
    if rho < MIN_CORRELATION:
        return (
            f"the judge agrees weakly with the human labels: Spearman {rho:.3g} "
            f"< {MIN_CORRELATION}; its own mean is not to be trusted"
        )
    return None
