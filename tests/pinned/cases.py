"""The pinned cases: API calls and CLI commands over the files in ``inputs/``, each giving records.

A case is a name and a function of a :class:`Ctx` (the inputs folder and a scratch folder)
returning the records as plain JSON values (the list of ``{type, value, parameters}``).
``generate.py`` writes them to ``records/<name>.json``; ``tests/test_pinned_records.py``
runs them again and compares. Keep every case small (the whole set runs in the test suite).

LLM cases answer from a loopback chat server (:class:`assay.testing.llm.FakeChatServer`) with
a deterministic responder: a reply depends only on the prompt's text, so concurrent calls in
any order give the same records. Every case runs in its own scratch folder with the response
cache off (``--no-cache``) or in that folder, so nothing is answered from an earlier case.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from typer.testing import CliRunner

HERE = Path(__file__).resolve().parent
INPUTS = HERE / "inputs"
RECORDS = HERE / "records"
DEVBENCH = HERE.parent / "data" / "devbench" / "record_gpt-4-1106-preview_2.tsv"


@dataclass(frozen=True)
class Ctx:
    inputs: Path
    tmp: Path

    def path(self, name: str) -> str:
        return str(self.inputs / name)


@dataclass(frozen=True)
class Case:
    name: str
    run: Callable[[Ctx], list[dict[str, Any]]]


CASES: dict[str, Case] = {}


def case(name: str) -> Callable[[Callable[[Ctx], Any]], Callable[[Ctx], Any]]:
    def register(fn: Callable[[Ctx], Any]) -> Callable[[Ctx], Any]:
        assert name not in CASES, name
        CASES[name] = Case(name, fn)
        return fn

    return register


def plain(metrics: Any) -> list[dict[str, Any]]:
    """A MetricSet (or list of records) as the JSON values it serialises to."""
    if hasattr(metrics, "to_json"):
        return json.loads(metrics.to_json())
    return json.loads(json.dumps(metrics))


def cli(ctx: Ctx, *args: str, out: bool = True, codes: tuple[int, ...] = (0,)) -> list[Any]:
    """Run ``assay ARGS`` in-process and return its JSON records (``--out`` file or stdout)."""
    from assay.cli.main import app

    argv = [str(a) for a in args]
    target = ctx.tmp / "out.json"
    if out:
        target.unlink(missing_ok=True)
        argv += ["--out", str(target)]
    res = CliRunner().invoke(app, argv)
    assert res.exit_code in codes, f"assay {' '.join(argv)} exited {res.exit_code}:\n{res.output}"
    text = target.read_text(encoding="utf-8") if out else res.stdout
    try:
        return json.loads(text)
    except json.JSONDecodeError:  # `assay text` writes JSON lines
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# ---------------------------------------------------------------- classification

BIN = (
    "classification",
    "--data",
    "binary.csv",
    "--y-true",
    "label",
    "--y-score",
    "proba",
    "--positive-label",
    "pos",
    "--pr-curve-max-examples",
    "0",
)
MULTI = (
    "classification",
    "--data",
    "multiclass.csv",
    "--y-true",
    "label",
    "--y-score-columns",
    "cat,dog,fox",
    "--pr-curve-max-examples",
    "0",
)


def _cls(ctx: Ctx, base: tuple[str, ...], *extra: str) -> list[Any]:
    args = [ctx.path(a) if a.endswith(".csv") else a for a in base]
    return cli(ctx, *args, *extra)


@case("cls-binary-cli")
def _(ctx: Ctx) -> Any:
    return _cls(ctx, BIN, "--score-thresholds", "0,0.3,0.5,0.8")


@case("cls-binary-ci-bootstrap")
def _(ctx: Ctx) -> Any:
    return _cls(ctx, BIN, "--ci", "0.9", "--num-bootstrap", "200", "--seed", "3")


@case("cls-binary-ci-wilson")
def _(ctx: Ctx) -> Any:
    return _cls(ctx, BIN, "--ci", "0.95", "--ci-method", "wilson", "--score-thresholds", "0,0.5")


@case("cls-binary-ci-delong")
def _(ctx: Ctx) -> Any:
    return _cls(ctx, BIN, "--ci", "0.95", "--ci-method", "delong")


@case("cls-binary-cluster-by")
def _(ctx: Ctx) -> Any:
    return _cls(
        ctx, BIN, "--ci", "0.9", "--num-bootstrap", "100", "--cluster", "patient", "--by", "site"
    )


@case("cls-binary-by")
def _(ctx: Ctx) -> Any:
    return _cls(ctx, BIN, "--by", "site", "--score-thresholds", "0,0.5")


@case("cls-multiclass-cli")
def _(ctx: Ctx) -> Any:
    return _cls(ctx, MULTI, "--score-thresholds", "0,0.4")


@case("cls-multiclass-ci-by")
def _(ctx: Ctx) -> Any:
    return _cls(ctx, MULTI, "--ci", "0.9", "--num-bootstrap", "100", "--by", "site")


@case("cls-multiclass-soft-ci-cluster")
def _(ctx: Ctx) -> Any:
    return _cls(
        ctx,
        MULTI,
        "--no-hardmax",
        "--ci",
        "0.8",
        "--num-bootstrap",
        "80",
        "--cluster",
        "patient",
        "--seed",
        "5",
    )


def _long(ctx: Ctx) -> tuple[pd.DataFrame, pd.DataFrame]:
    return (
        pd.DataFrame(jsonl(ctx.inputs / "long_groundtruths.jsonl")),
        pd.DataFrame(jsonl(ctx.inputs / "long_predictions.jsonl")),
    )


@case("cls-longform-api")
def _(ctx: Ctx) -> Any:
    from assay.classification import evaluate_classification

    gts, pds = _long(ctx)
    return plain(
        evaluate_classification(gts, pds, score_thresholds=[0.0, 0.5], pr_curve_max_examples=1)
    )


@case("cls-longform-api-ci-by-cluster")
def _(ctx: Ctx) -> Any:
    from assay.classification import evaluate_classification

    gts, pds = _long(ctx)
    return plain(
        evaluate_classification(
            gts,
            pds,
            pr_curve_max_examples=0,
            ci=0.9,
            num_bootstrap=60,
            by=["site"],
            cluster="batch",
            seed=1,
        )
    )


@case("cls-longform-api-soft-wilson-delong")
def _(ctx: Ctx) -> Any:
    from assay.classification import evaluate_classification

    gts, pds = _long(ctx)
    out = []
    for method in ("wilson", "delong"):
        out += plain(
            evaluate_classification(
                gts, pds, pr_curve_max_examples=0, hardmax=False, ci=0.8, ci_method=method
            )
        )
    return out


# ---------------------------------------------------------------- fairness

FAIR = (
    "fairness",
    "--data",
    "fairness.csv",
    "--label",
    "y",
    "--prediction",
    "yhat",
    "--sensitive",
    "sex=m",
    "--sensitive",
    "age:40:invert",
)


def _fair(ctx: Ctx, *extra: str) -> list[Any]:
    args = [ctx.path(a) if a.endswith(".csv") else a for a in FAIR]
    return cli(ctx, *args, *extra)


@case("fair-cli")
def _(ctx: Ctx) -> Any:
    return _fair(ctx)


@case("fair-ci")
def _(ctx: Ctx) -> Any:
    return _fair(ctx, "--ci", "0.9", "--num-bootstrap", "100", "--seed", "2")


@case("fair-ci-cluster-by")
def _(ctx: Ctx) -> Any:
    return _fair(ctx, "--ci", "0.9", "--num-bootstrap", "60", "--cluster", "site", "--by", "region")


@case("fair-weights-ci-by")
def _(ctx: Ctx) -> Any:
    return _fair(
        ctx, "--sample-weight", "weight", "--ci", "0.9", "--num-bootstrap", "60", "--by", "region"
    )


@case("fair-groups-api")
def _(ctx: Ctx) -> Any:
    from assay.fairness import evaluate_fairness

    df = pd.read_csv(ctx.inputs / "fairness.csv")
    out = plain(
        evaluate_fairness(
            df, label="y", prediction="yhat", groups=["sex=m"], group_columns=["race"]
        )
    )
    out += plain(
        evaluate_fairness(
            df,
            label="y",
            prediction="yhat",
            group_columns=["race"],
            method="to_overall",
            ci=0.9,
            num_bootstrap=50,
            cluster="site",
        )
    )
    return out


# ---------------------------------------------------------------- detection

COCO = ("detection", "--groundtruths", "coco_gt.json", "--predictions", "coco_dt.json")
DETJ = (
    "detection",
    "--groundtruths",
    "det_groundtruths.jsonl",
    "--predictions",
    "det_predictions.jsonl",
)


def _det(ctx: Ctx, base: tuple[str, ...], *extra: str) -> list[Any]:
    args = [ctx.path(a) if a.endswith((".json", ".jsonl")) else a for a in base]
    return cli(ctx, *args, *extra)


@case("det-coco-bbox")
def _(ctx: Ctx) -> Any:
    return _det(ctx, COCO, "--iou-type", "bbox")


@case("det-coco-segm")
def _(ctx: Ctx) -> Any:
    return _det(ctx, COCO, "--iou-type", "segm")


@case("det-coco-bbox-ci")
def _(ctx: Ctx) -> Any:
    return _det(ctx, COCO, "--ci", "0.9", "--num-bootstrap", "40", "--seed", "4")


@case("det-coco-segm-ci")
def _(ctx: Ctx) -> Any:
    return _det(ctx, COCO, "--iou-type", "segm", "--ci", "0.9", "--num-bootstrap", "30")


@case("det-jsonl-by-ci")
def _(ctx: Ctx) -> Any:
    return _det(
        ctx,
        DETJ,
        "--by",
        "site",
        "--score-thresholds",
        "0,0.5",
        "--ci",
        "0.9",
        "--num-bootstrap",
        "40",
    )


@case("det-jsonl-cluster-by")
def _(ctx: Ctx) -> Any:
    return _det(
        ctx,
        DETJ,
        "--by",
        "site",
        "--ci",
        "0.9",
        "--num-bootstrap",
        "40",
        "--cluster",
        "group",
        "--iou-thresholds",
        "0.5,0.75",
    )


@case("det-coco-api-by-ci")
def _(ctx: Ctx) -> Any:
    from dataclasses import replace

    from assay.detection import evaluate_detection, load_coco
    from assay.io.metadata import metadata_from_records

    gt = json.loads((ctx.inputs / "coco_gt.json").read_text())
    dt = json.loads((ctx.inputs / "coco_dt.json").read_text())
    out = []
    for iou_type in ("bbox", "segm"):
        data = load_coco(gt, dt, iou_type=iou_type)
        md = metadata_from_records(
            [{"site": "ab"[int(u) % 2]} for u in data.uids], source="metadata"
        )
        data = replace(data, metadata=md)
        out += plain(
            evaluate_detection(
                data, by=["site"], iou_thresholds=[0.5, 0.75], ci=0.9, num_bootstrap=30, seed=2
            )
        )
    return out


# ---------------------------------------------------------------- segmentation

SEG = (
    "segmentation",
    "--groundtruths",
    "seg_groundtruths.jsonl",
    "--predictions",
    "seg_predictions.jsonl",
)


def _seg(ctx: Ctx, *extra: str) -> list[Any]:
    args = [ctx.path(a) if a.endswith(".jsonl") else a for a in SEG]
    return cli(ctx, *args, *extra)


@case("seg-cli")
def _(ctx: Ctx) -> Any:
    return _seg(ctx)


@case("seg-ci")
def _(ctx: Ctx) -> Any:
    return _seg(ctx, "--ci", "0.9", "--num-bootstrap", "50", "--seed", "1")


@case("seg-by-ci-cluster")
def _(ctx: Ctx) -> Any:
    return _seg(ctx, "--by", "site", "--ci", "0.9", "--num-bootstrap", "50", "--cluster", "city")


@case("seg-by")
def _(ctx: Ctx) -> Any:
    return _seg(ctx, "--by", "city", "--zero-division", "0")


# ---------------------------------------------------------------- scoring


def _scoring(ctx: Ctx, **kw: Any) -> list[Any]:
    from assay.scoring import evaluate_scoring

    df = pd.read_csv(ctx.inputs / "scoring.csv")
    return plain(evaluate_scoring(df, human="h", system="m", **kw))


@case("scoring-api")
def _(ctx: Ctx) -> Any:
    return _scoring(ctx, human2="h2", group_columns=["L1"])


@case("scoring-ci")
def _(ctx: Ctx) -> Any:
    return _scoring(ctx, group_columns=["L1"], ci=0.9, num_bootstrap=40, seed=2)


@case("scoring-ci-bca-by")
def _(ctx: Ctx) -> Any:
    return _scoring(ctx, human2="h2", by=["site"], ci=0.9, ci_method="bca", num_bootstrap=40)


@case("scoring-cluster-by")
def _(ctx: Ctx) -> Any:
    return _scoring(
        ctx, human2="h2", group_columns=["L1"], by=["site"], ci=0.9, num_bootstrap=30, cluster="g"
    )


@case("scoring-cli")
def _(ctx: Ctx) -> Any:
    return cli(
        ctx,
        "scoring",
        "--data",
        ctx.path("scoring.csv"),
        "--human",
        "h",
        "--system",
        "m",
        "--human2",
        "h2",
        "--subgroup",
        "L1",
        "--out-dir",
        str(ctx.tmp / "tables"),
        "--ci",
        "0.9",
        "--num-bootstrap",
        "30",
        "--cluster",
        "g",
        out=False,
    )


@case("scoring-rsmeval-tables")
def _(ctx: Ctx) -> Any:
    """rsmeval mode gives tables, not records: every cell becomes a record named by its
    table, row and column."""
    import shutil

    from assay.scoring import run_rsmeval

    for name in ("rsmeval.json", "scoring.csv"):
        shutil.copyfile(ctx.inputs / name, ctx.tmp / name)
    tables = run_rsmeval(ctx.tmp / "rsmeval.json")
    out = []
    for name in sorted(tables):
        frame = tables[name]
        for row, values in frame.iterrows():
            for col, v in values.items():
                out.append(
                    {
                        "type": f"rsmeval:{name}",
                        "value": v,
                        "parameters": {"row": str(row), "column": str(col)},
                    }
                )
    return json.loads(pd.Series([out]).to_json(orient="values"))[0]


# ---------------------------------------------------------------- stats


def _stats(ctx: Ctx, scores: str, *extra: str) -> list[Any]:
    return cli(ctx, "stats", "--scores", ctx.path(scores), *extra, out=False)


@case("stats-cli")
def _(ctx: Ctx) -> Any:
    return _stats(
        ctx,
        "scores.jsonl",
        "--metric",
        "accuracy",
        "--metric",
        "mean",
        "--metric",
        "stderr",
        "--metric",
        'stderr(cluster="doc")',
        "--metric",
        'grouped(accuracy(), "topic")',
        "--reducer",
        "mean",
        "--reducer",
        "max",
    )


@case("stats-bootstrap-stderr")
def _(ctx: Ctx) -> Any:
    return _stats(
        ctx,
        "scores_numeric.jsonl",
        "--metric",
        "mean",
        "--metric",
        "bootstrap_stderr(num_samples=200, seed=7)",
    )


@case("stats-ci-cluster")
def _(ctx: Ctx) -> Any:
    return _stats(
        ctx,
        "scores.jsonl",
        "--metric",
        "accuracy",
        "--metric",
        'grouped(mean(), "topic")',
        "--ci",
        "0.9",
        "--num-bootstrap",
        "200",
        "--cluster",
        "doc",
    )


@case("stats-ci-bca-t-wilson")
def _(ctx: Ctx) -> Any:
    out = []
    for method in ("bca", "t", "wilson"):
        out += _stats(
            ctx,
            "scores.jsonl",
            "--metric",
            "accuracy",
            "--metric",
            "mean",
            "--ci",
            "0.8",
            "--ci-method",
            method,
            "--num-bootstrap",
            "150",
        )
    return out


@case("stats-api-objects")
def _(ctx: Ctx) -> Any:
    import assay.stats as st

    rows = jsonl(ctx.inputs / "scores.jsonl")
    scores = [
        st.SampleScore(st.Score(r["value"]), r["sample_id"], r["epoch"], r["sample_metadata"])
        for r in rows
    ]
    metrics = [
        st.accuracy(),
        st.stderr(cluster="doc"),
        st.grouped(st.mean(), "topic"),
        st.ci(0.9, cluster="doc"),
        st.ci_wilson(),
        st.std(),
    ]
    return plain(st.evaluate_scores(scores, metrics, ["mean", "mode", "pass_at_2"]))


# ---------------------------------------------------------------- text (ROUGE/BLEU)

TEXT = ("text", "--data", "text.jsonl", "--metrics", "rouge,bleu")


def _text(ctx: Ctx, *extra: str) -> list[Any]:
    return cli(ctx, "text", "--data", ctx.path("text.jsonl"), "--metrics", "rouge,bleu", *extra)


@case("text-default")
def _(ctx: Ctx) -> Any:
    return _text(ctx)


@case("text-ci-t-by-cluster")
def _(ctx: Ctx) -> Any:
    return _text(ctx, "--ci", "0.9", "--ci-method", "t", "--by", "topic", "--cluster", "doc")


@case("text-by-bootstrap")
def _(ctx: Ctx) -> Any:
    return _text(ctx, "--by", "topic", "--num-bootstrap", "200", "--seed", "3")


@case("text-api")
def _(ctx: Ctx) -> Any:
    from assay.text import evaluate_text

    rows = jsonl(ctx.inputs / "text.jsonl")
    return plain(
        evaluate_text(
            [r["prediction"] for r in rows],
            [r["groundtruth"] for r in rows],
            uids=[r["uid"] for r in rows],
        )
    )


# ---------------------------------------------------------------- LLM: a scripted model


def _crc(text: str) -> int:
    return zlib.crc32(text.encode("utf-8"))


def _last_user(messages: list[dict[str, Any]]) -> str:
    return next(str(m["content"]) for m in reversed(messages) if m["role"] == "user")


def _pick(options: list[str]) -> Callable[[list[dict[str, Any]]], str]:
    """A reply chosen by the prompt's checksum (deterministic, order-free)."""
    return lambda messages: options[_crc(_last_user(messages)) % len(options)]


def _judge_reply(messages: list[dict[str, Any]]) -> str:
    """A judge's valid JSON for every judged metric's prompt, chosen by the prompt's checksum;
    one prompt in 11 gets prose (re-asked, then kept invalid)."""
    text = next(str(m["content"]) for m in messages if m["role"] == "user")
    h = _crc(text)
    if h % 11 == 4:
        return "No JSON from me."
    for kind in ("statements", "opinions", "claims"):
        if f'{{"{kind}": [' in text and "Text:" in text:
            body = re.findall(r"^Text: (.*)$", text, flags=re.M)[-1]
            return json.dumps({kind: [s.strip() + "." for s in body.split(".") if s.strip()]})
    n = [int(x) for x in re.findall(r"exactly (\d+) entries", text)]
    vs = ["yes", "no", "idk"]

    def verdicts(k: int, salt: int) -> list[dict[str, str]]:
        return [{"verdict": vs[(h + salt + i) % 3], "reason": f"r{i}"} for i in range(k)]

    if len(n) == 2:
        return json.dumps(
            {"answer_verdicts": verdicts(n[0], 0), "reference_verdicts": verdicts(n[1], 1)}
        )
    if n:
        return json.dumps({"verdicts": verdicts(n[0], 0)})
    return json.dumps({"analysis": "ok", "score": 1 + h % 5})


def llm_cli(
    ctx: Ctx, responder: Any, *args: str, model_opt: str = "--model", codes: tuple[int, ...] = (0,)
) -> list[Any]:
    from assay.testing.llm import FakeChatServer

    with FakeChatServer(responder=responder, hang_seconds=5) as srv:
        return cli(
            ctx, *args, model_opt, srv.spec(), "--db", str(ctx.tmp / "store.db"), codes=codes
        )


SUITE_RUN = ("--no-cache", "--retries", "0")
CAT_REPLY = _pick(["1", "2. I pick two", "3", "I refuse", "2", "1"])
FAIR_REPLY = _pick(["Y", "N", "maybe", "N", "Y"])
LANG_REPLY = _pick(['{"choice": "Paris"}', '{"choice": "eight"}', "B", "zz", '{"choice": "siete"}'])


def _suite(ctx: Ctx, kind: str, *extra: str) -> list[Any]:
    data = {
        "cat": ("llm", "cat", "--data", ctx.path("suites/cat_dev.json"), "--seed", "3"),
        "fairness": (
            "llm",
            "fairness",
            "--dataset-file",
            ctx.path("suites/toy.toml"),
            "--seed",
            "3",
        ),
        "language": ("llm", "language", "--data", ctx.path("suites/exam.csv")),
    }[kind]
    reply = {"cat": CAT_REPLY, "fairness": FAIR_REPLY, "language": LANG_REPLY}[kind]
    return llm_cli(ctx, reply, *data, *SUITE_RUN, *extra)


@case("llm-cat")
def _(ctx: Ctx) -> Any:
    return _suite(ctx, "cat")


@case("llm-cat-ci-by-cluster")
def _(ctx: Ctx) -> Any:
    return _suite(
        ctx,
        "cat",
        "--ci",
        "0.9",
        "--num-bootstrap",
        "200",
        "--by",
        "bias_type",
        "--cluster",
        "target",
    )


@case("llm-fairness")
def _(ctx: Ctx) -> Any:
    return _suite(ctx, "fairness")


@case("llm-fairness-ci-by")
def _(ctx: Ctx) -> Any:
    return _suite(ctx, "fairness", "--ci", "0.9", "--num-bootstrap", "200", "--by", "sex")


@case("llm-language")
def _(ctx: Ctx) -> Any:
    return _suite(ctx, "language")


@case("llm-language-ci-wilson-by")
def _(ctx: Ctx) -> Any:
    return _suite(ctx, "language", "--ci", "0.9", "--ci-method", "wilson", "--by", "language")


@case("llm-language-ci-cluster")
def _(ctx: Ctx) -> Any:
    return _suite(ctx, "language", "--ci", "0.9", "--num-bootstrap", "200", "--cluster", "language")


# ---------------------------------------------------------------- judge metrics

JUDGED = "rouge,faithfulness,answer_relevance,bias,coherence,context_precision,hallucination"


def _judge(ctx: Ctx, *extra: str) -> list[Any]:
    return llm_cli(
        ctx,
        _judge_reply,
        "text",
        "--data",
        ctx.path("text.jsonl"),
        "--metrics",
        JUDGED,
        "--no-cache",
        # the scripted judge answers some prompts invalidly on purpose (the records count
        # them); since issue 36 item 8 those are failed calls, so the case allows them
        "--max-errors",
        "1000",
        "--seed",
        "4",
        *extra,
    )


@case("judge-default")
def _(ctx: Ctx) -> Any:
    return _judge(ctx)


@case("judge-ci-by-cluster")
def _(ctx: Ctx) -> Any:
    return _judge(ctx, "--ci", "0.9", "--num-bootstrap", "200", "--by", "topic", "--cluster", "doc")


# ---------------------------------------------------------------- pairwise


def _pairwise(ctx: Ctx, *extra: str) -> list[Any]:
    return cli(
        ctx,
        "pairwise",
        "score",
        "--records",
        str(DEVBENCH),
        "--reference-model",
        "gpt-3.5-turbo-1106",
        "--nopt",
        "2",
        "--out-dir",
        str(ctx.tmp / "runs"),
        *extra,
    )


@case("pairwise-score")
def _(ctx: Ctx) -> Any:
    return _pairwise(ctx)


@case("pairwise-score-ci")
def _(ctx: Ctx) -> Any:
    return _pairwise(ctx, "--ci", "0.9", "--num-bootstrap", "200", "--seed", "5")


@case("pairwise-score-ci-cluster-by")
def _(ctx: Ctx) -> Any:
    return _pairwise(
        ctx, "--ci", "0.9", "--num-bootstrap", "100", "--by", "task", "--cluster", "question"
    )


# ---------------------------------------------------------------- every interval method
#
# Each domain under each method of assay.intervals.CI_METHODS it was not pinned with above;
# a method a metric is not offered for falls back to the bootstrap, and that is pinned too.

_METHOD_CASES: dict[str, Callable[[Ctx, str], list[Any]]] = {
    "cls-binary": lambda ctx, m: _cls(
        ctx, BIN, "--ci", "0.9", "--ci-method", m, "--num-bootstrap", "100"
    ),
    "cls-multiclass": lambda ctx, m: _cls(
        ctx, MULTI, "--ci", "0.9", "--ci-method", m, "--num-bootstrap", "100"
    ),
    "fair": lambda ctx, m: _fair(ctx, "--ci", "0.9", "--ci-method", m, "--num-bootstrap", "100"),
    "det-coco-bbox": lambda ctx, m: _det(
        ctx, COCO, "--ci", "0.9", "--ci-method", m, "--num-bootstrap", "30"
    ),
    "seg": lambda ctx, m: _seg(ctx, "--ci", "0.9", "--ci-method", m, "--num-bootstrap", "50"),
    "scoring": lambda ctx, m: _scoring(
        ctx, human2="h2", group_columns=["L1"], ci=0.9, ci_method=m, num_bootstrap=30
    ),
    "stats": lambda ctx, m: _stats(
        ctx,
        "scores_numeric.jsonl",
        "--metric",
        "mean",
        "--metric",
        "accuracy",
        "--ci",
        "0.9",
        "--ci-method",
        m,
        "--num-bootstrap",
        "150",
    ),
    "text": lambda ctx, m: _text(ctx, "--ci", "0.9", "--ci-method", m, "--num-bootstrap", "150"),
    "llm-cat": lambda ctx, m: _suite(
        ctx, "cat", "--ci", "0.9", "--ci-method", m, "--num-bootstrap", "150"
    ),
    "llm-fairness": lambda ctx, m: _suite(
        ctx, "fairness", "--ci", "0.9", "--ci-method", m, "--num-bootstrap", "150"
    ),
    "llm-language": lambda ctx, m: _suite(
        ctx, "language", "--ci", "0.9", "--ci-method", m, "--num-bootstrap", "150"
    ),
    "pairwise-score": lambda ctx, m: _pairwise(
        ctx, "--ci", "0.9", "--ci-method", m, "--num-bootstrap", "100"
    ),
}


def _method_case(base: str, method: str) -> None:
    case(f"{base}-method-{method}")(lambda ctx: _METHOD_CASES[base](ctx, method))


for _base in _METHOD_CASES:
    for _method in ("bootstrap", "wilson", "t", "delong", "bca"):
        _method_case(_base, _method)


# ---------------------------------------------------------------- pairwise judging (scripted)

_RULE = re.compile(r"\[judge:([\w:]+)\]")
_QUALITY = re.compile(r"quality=(\d+)")


def _between(text: str, tag: str) -> str:
    start, end = text.find(f"<{tag}>"), text.find(f"</{tag}>")
    return text[start + len(tag) + 2 : end] if start >= 0 and end > start else ""


def _pairwise_reply(messages: list[dict[str, Any]]) -> str:
    """The rule in the question (``[judge:RULE]``) decides: ``quality`` prefers the answer
    with the higher ``quality=N`` (the first on a tie), others give a fixed letter or prose."""
    prompt = str(messages[-1]["content"])
    m = _RULE.search(prompt)
    rule = m.group(1) if m else "quality"
    if rule == "garbage":
        return "Both have merits; I cannot decide."
    if rule.startswith("letter:"):
        letter = rule.split(":", 1)[1]
    else:
        q1, q2 = (_QUALITY.search(_between(prompt, t)) for t in ("response_1", "response_2"))
        better = "A" if int(q1.group(1) if q1 else 0) >= int(q2.group(1) if q2 else 0) else "B"
        fixed = {"first": "A", "second": "B", "both": "C", "neither": "D"}
        letter = fixed.get(rule, better)
    return f"Choice: {letter}\nReason:\n1. scripted ({rule})"


def _judge_pairs(ctx: Ctx, *extra: str) -> list[Any]:
    return llm_cli(
        ctx,
        _pairwise_reply,
        "pairwise",
        "judge",
        "--data",
        ctx.path("pairwise_table.csv"),
        "--models",
        "m1,m2",
        "--reference-model",
        "ref",
        "--out-dir",
        str(ctx.tmp / "runs"),
        "--no-cache",
        "--quiet",
        "--retries",
        "0",
        *extra,
        model_opt="--judge",
    )


@case("pairwise-judge-dual")
def _(ctx: Ctx) -> Any:
    return _judge_pairs(ctx, "--nopt", "4", "--num-bootstrap", "100")


@case("pairwise-judge-random-ci-by-cluster")
def _(ctx: Ctx) -> Any:
    return _judge_pairs(
        ctx,
        "--nopt",
        "3",
        "--mode",
        "random",
        "--seed",
        "7",
        "--ci",
        "0.9",
        "--num-bootstrap",
        "100",
        "--by",
        "topic",
        "--cluster",
        "project",
    )


@case("pairwise-judge-ci-wilson-by")
def _(ctx: Ctx) -> Any:
    return _judge_pairs(
        ctx,
        "--nopt",
        "2",
        "--ci",
        "0.9",
        "--ci-method",
        "wilson",
        "--num-bootstrap",
        "100",
        "--by",
        "task",
        "--bootstrap-seed",
        "3",
    )


# ---------------------------------------------------------------- llm average (from the store)


def _sample_fairness_reply(messages: list[dict[str, Any]]) -> str:
    """PISA's answers are L/H, COMPAS's 0/1; one prompt in 6 gets neither."""
    prompt = _last_user(messages)
    answers = ["L", "H"] if re.search(r"\bH\b", prompt) else ["0", "1"]
    h = _crc(prompt)
    return "unsure" if h % 6 == 5 else answers[h % 2]


@case("llm-average-ci")
def _(ctx: Ctx) -> Any:
    """Two LLM fairness runs on the shipped samples saved in one store, then their average
    with and without an interval (no model call)."""
    from assay.testing.llm import FakeChatServer

    db = str(ctx.tmp / "store.db")
    with FakeChatServer(responder=_sample_fairness_reply, hang_seconds=5) as srv:
        for dataset in ("pisa", "compas"):
            cli(
                ctx,
                "llm",
                "fairness",
                "--dataset",
                dataset,
                "--sample",
                "--seed",
                "1",
                "--no-cache",
                "--retries",
                "0",
                "--save",
                "--db",
                db,
                "--model",
                srv.spec(),
            )
        calls = srv.calls
        out = cli(ctx, "llm", "average", "--datasets", "pisa,compas", "--db", db)
        out += cli(
            ctx,
            "llm",
            "average",
            "--datasets",
            "pisa,compas",
            "--db",
            db,
            "--ci",
            "0.9",
            "--num-bootstrap",
            "200",
            "--seed",
            "2",
        )
        assert srv.calls == calls, "llm average called the model"
    return out


# ---------------------------------------------------------------- evaluators: batches, merge, state
#
# The records of an evaluator fed in three batches, merged across three evaluators and
# rebuilt from its state (saved and loaded as .npz): the path the declared-state refactor
# rewrites. Equal to one batch by the evaluator contract; pinned here with intervals on.


def _through_state(make: Callable[[], Any], batches: list[Any], add: Callable[..., Any]) -> Any:
    import io

    import numpy as np

    parts = []
    for b in batches:
        ev = make()
        add(ev, b)
        parts.append(ev)
    merged = parts[0]
    for p in parts[1:]:
        merged.merge(p)
    buf = io.BytesIO()
    np.savez(buf, **merged.state())
    buf.seek(0)
    with np.load(buf, allow_pickle=False) as z:
        back = type(merged).from_state(dict(z))
    return plain(back.compute())


def _thirds(n: int) -> list[slice]:
    return [slice(0, n // 3), slice(n // 3, n // 2), slice(n // 2, n)]


@case("state-classification-ci-by-cluster")
def _(ctx: Ctx) -> Any:
    from assay.classification import ClassificationEvaluator

    df = pd.read_csv(ctx.inputs / "multiclass.csv")
    labels = ["cat", "dog", "fox"]

    def add(ev: Any, part: pd.DataFrame) -> None:
        gts = pd.DataFrame(
            {
                "uid": part.uid,
                "value": part.label,
                "metadata": [{"site": s, "patient": p} for s, p in zip(part.site, part.patient)],
            }
        )
        pds = part.melt(id_vars=["uid"], value_vars=labels, var_name="value", value_name="score")
        ev.add(gts, pds)

    return _through_state(
        lambda: ClassificationEvaluator(
            pr_curve_max_examples=0,
            ci=0.9,
            num_bootstrap=60,
            by=["site"],
            cluster="patient",
            seed=4,
        ),
        [df.iloc[s] for s in _thirds(len(df))],
        add,
    )


@case("state-fairness-ci-by-cluster-weights")
def _(ctx: Ctx) -> Any:
    from assay.fairness import FairnessEvaluator

    df = pd.read_csv(ctx.inputs / "fairness.csv")
    return _through_state(
        lambda: FairnessEvaluator(
            ["sex=m", "age:40:invert"],
            group_columns=["race"],
            ci=0.9,
            num_bootstrap=60,
            by=["region"],
            cluster="site",
        ),
        [df.iloc[s] for s in _thirds(len(df))],
        lambda ev, part: ev.add(part, label="y", prediction="yhat", sample_weight="weight"),
    )


@case("state-detection-ci-by")
def _(ctx: Ctx) -> Any:
    from assay.detection import DetectionEvaluator, parse_datums

    gts = jsonl(ctx.inputs / "det_groundtruths.jsonl")
    prs = jsonl(ctx.inputs / "det_predictions.jsonl")
    return _through_state(
        lambda: DetectionEvaluator(
            iou_thresholds=[0.5, 0.75],
            score_thresholds=[0.0, 0.5],
            ci=0.9,
            num_bootstrap=40,
            by=["site"],
            cluster="group",
        ),
        [parse_datums(gts[s], prs[s]) for s in _thirds(len(gts))],
        lambda ev, data: ev.add(data),
    )


@case("state-segmentation-ci-by")
def _(ctx: Ctx) -> Any:
    from assay.segmentation import SegmentationEvaluator

    gts = jsonl(ctx.inputs / "seg_groundtruths.jsonl")
    prs = jsonl(ctx.inputs / "seg_predictions.jsonl")
    return _through_state(
        lambda: SegmentationEvaluator(by=["site"], ci=0.9, num_bootstrap=40, cluster="city"),
        [(gts[s], prs[s]) for s in _thirds(len(gts))],
        lambda ev, b: ev.add(*b),
    )


@case("state-scoring-ci-by-cluster")
def _(ctx: Ctx) -> Any:
    from assay.scoring import ScoringEvaluator

    df = pd.read_csv(ctx.inputs / "scoring.csv")
    return _through_state(
        lambda: ScoringEvaluator(
            human="h",
            system="m",
            human2="h2",
            group_columns=["L1"],
            by=["site"],
            ci=0.9,
            num_bootstrap=30,
            cluster="g",
        ),
        [df.iloc[s] for s in _thirds(len(df))],
        lambda ev, part: ev.add(part),
    )


@case("state-stats-ci-cluster")
def _(ctx: Ctx) -> Any:
    import assay.stats as st

    rows = jsonl(ctx.inputs / "scores.jsonl")
    scores = [
        st.SampleScore(st.Score(r["value"]), r["sample_id"], r["epoch"], r["sample_metadata"])
        for r in rows
    ]
    return _through_state(
        lambda: st.ScoreEvaluator(
            [st.accuracy(), st.stderr(cluster="doc"), st.grouped(st.mean(), "topic")],
            ["mean", "max"],
            ci=0.9,
            num_bootstrap=100,
            cluster="doc",
            seed=6,
        ),
        [scores[s] for s in _thirds(len(scores))],
        lambda ev, part: ev.add(part),
    )


@case("state-text-ci-by-cluster")
def _(ctx: Ctx) -> Any:
    from assay.text import TextEvaluator

    rows = jsonl(ctx.inputs / "text.jsonl")

    def add(ev: Any, part: list[dict[str, Any]]) -> None:
        ev.add(
            [r["prediction"] for r in part],
            [r["groundtruth"] for r in part],
            uids=[r["uid"] for r in part],
            columns={"topic": [r["topic"] for r in part], "doc": [r["doc"] for r in part]},
        )

    return _through_state(
        lambda: TextEvaluator(
            rouge_types=["rouge1", "rougeL"],
            ci=0.9,
            num_bootstrap=100,
            by=["topic"],
            cluster="doc",
            smoothing="method1",
        ),
        [rows[s] for s in _thirds(len(rows))],
        add,
    )


# ---------------------------------------------------------------- Parquet, streamed by row group


def _parquet(ctx: Ctx, csv: str, rows_per_group: int) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(pd.read_csv(ctx.inputs / csv), preserve_index=False)
    path = ctx.tmp / (Path(csv).stem + ".parquet")
    pq.write_table(table, path, row_group_size=rows_per_group)
    return str(path)


@case("stream-classification-ci-by-cluster")
def _(ctx: Ctx) -> Any:
    data = _parquet(ctx, "binary.csv", 13)
    return cli(
        ctx,
        "classification",
        "--data",
        data,
        "--y-true",
        "label",
        "--y-score",
        "proba",
        "--positive-label",
        "pos",
        "--pr-curve-max-examples",
        "0",
        "--ci",
        "0.9",
        "--num-bootstrap",
        "80",
        "--by",
        "site",
        "--cluster",
        "patient",
    )


@case("stream-fairness-ci-by")
def _(ctx: Ctx) -> Any:
    data = _parquet(ctx, "fairness.csv", 25)
    return cli(
        ctx,
        "fairness",
        "--data",
        data,
        "--label",
        "y",
        "--prediction",
        "yhat",
        "--sensitive",
        "sex=m",
        "--group",
        "race",
        "--ci",
        "0.9",
        "--num-bootstrap",
        "60",
        "--by",
        "region",
        "--cluster",
        "site",
    )


@case("stream-scoring-ci")
def _(ctx: Ctx) -> Any:
    data = _parquet(ctx, "scoring.csv", 45)
    return cli(
        ctx,
        "scoring",
        "--data",
        data,
        "--human",
        "h",
        "--system",
        "m",
        "--human2",
        "h2",
        "--subgroup",
        "L1",
        "--by",
        "site",
        "--out-dir",
        str(ctx.tmp / "tables"),
        "--ci",
        "0.9",
        "--num-bootstrap",
        "30",
        out=False,
    )


# ---------------------------------------------------------------- more options per domain


@case("cls-binary-examples-confusion")
def _(ctx: Ctx) -> Any:
    args = [ctx.path(a) if a.endswith(".csv") else a for a in BIN[:-2]]
    return cli(
        ctx,
        *args,
        "--pr-curve-max-examples",
        "2",
        "--score-thresholds",
        "0,0.5",
        "--metrics",
        "Counts,ConfusionMatrix,ConfusionMatrixWithExamples,"
        "DetailedPrecisionRecallCurve,Examples,PrecisionRecallCurve",
        "--examples-limit",
        "5",
        "--examples-offset",
        "2",
    )


@case("cls-multiclass-zero-division-compact")
def _(ctx: Ctx) -> Any:
    out = _cls(ctx, MULTI, "--zero-division", "0", "--score-thresholds", "0,0.9", "--no-hardmax")
    return out + _cls(ctx, MULTI, "--compact", "--score-thresholds", "0,0.5")


@case("cls-longform-filtered-by-ci")
def _(ctx: Ctx) -> Any:
    from assay.classification import ClassificationEvaluator

    gts, pds = _long(ctx)
    ev = ClassificationEvaluator(pr_curve_max_examples=0, ci=0.9, num_bootstrap=50, by=["batch"])
    ev.add(gts, pds)
    view = ev.filter(datums='site == "x"', predictions="score > 0.1")
    return plain(view.compute())


@case("fair-options")
def _(ctx: Ctx) -> Any:
    out = _fair(ctx, "--group", "race", "--method", "to_overall", "--equalized-odds-agg", "mean")
    out += _fair(ctx, "--group", "race", "--control", "region", "--zero-division", "0")
    return out


@case("fair-crossed-groups-ci")
def _(ctx: Ctx) -> Any:
    from assay.fairness import evaluate_fairness

    df = pd.read_csv(ctx.inputs / "fairness.csv")
    return plain(
        evaluate_fairness(
            df,
            label="y",
            prediction="yhat",
            groups=["sex=f"],
            group_columns=[["sex", "race"]],
            sample_weight="weight",
            ci=0.9,
            num_bootstrap=60,
            by=["region"],
        )
    )


@case("det-jsonl-options")
def _(ctx: Ctx) -> Any:
    out = _det(
        ctx,
        DETJ,
        "--matching",
        "valor",
        "--score-thresholds",
        "0,0.5,0.9",
        "--zero-division",
        "0",
        "--pr-curve-max-examples",
        "2",
    )
    out += _det(
        ctx,
        DETJ,
        "--max-detections",
        "2",
        "--recall-score-threshold",
        "0.3",
        "--metrics",
        "AP,mAP,AR,mAR,Counts,Examples",
        "--examples-limit",
        "3",
    )
    return out


@case("det-jsonl-where-ci")
def _(ctx: Ctx) -> Any:
    return _det(
        ctx,
        DETJ,
        "--where-predictions",
        "score > 0.2",
        "--where",
        'site == "x"',
        "--ci",
        "0.9",
        "--num-bootstrap",
        "30",
        "--iou-thresholds",
        "0.5",
    )


@case("seg-api-metrics-ci")
def _(ctx: Ctx) -> Any:
    from assay.segmentation import evaluate_segmentation

    gts = jsonl(ctx.inputs / "seg_groundtruths.jsonl")
    prs = jsonl(ctx.inputs / "seg_predictions.jsonl")
    return plain(
        evaluate_segmentation(
            gts,
            prs,
            metrics=["IOU", "mIOU", "Accuracy"],
            by=["city"],
            ci=0.8,
            num_bootstrap=40,
            seed=3,
        )
    )


@case("scoring-options")
def _(ctx: Ctx) -> Any:
    out = _scoring(
        ctx,
        human2="h2",
        group_columns=["L1"],
        rater_error_variance=0.3,
        smd_method="johnson",
        population_sds={"h": 1.1},
        base_groups={"L1": "en"},
    )
    out += _scoring(
        ctx,
        human2="h2",
        use_diff_std_means=True,
        population_means={"h": 3.0},
        population_sds={"h": 1.1},
        exclude_zero_scores=False,
    )
    return out


@case("stats-api-panel-aggregate")
def _(ctx: Ctx) -> Any:
    """Categorical verdicts (frequency, Krippendorff's alpha, Wilson interval) and dict-valued
    scores (aggregate, perplexity), built from the committed score files."""
    import assay.stats as st

    rows = jsonl(ctx.inputs / "scores.jsonl")
    verdicts = {"C": "yes", "I": "no", "P": "no"}
    panel = [
        st.SampleScore(
            st.Score(verdicts.get(r["value"]) if isinstance(r["value"], str) else None),
            r["sample_id"],
            r["epoch"],
            r["sample_metadata"],
        )
        for r in rows
    ]
    out = plain(
        st.evaluate_scores(
            panel,
            [
                st.frequency(["yes", "no", "maybe"]),
                st.krippendorff_alpha("nominal"),
                st.ci_wilson(cluster="doc"),
            ],
            ["collect", "majority"],
        )
    )
    nums = jsonl(ctx.inputs / "scores_numeric.jsonl")
    dicts = []
    for i, r in enumerate(nums):
        d: dict[str, Any] = {"em": "CI"[i % 2]}
        if r["value"] is not None:
            d["f1"] = r["value"]
        toks = {"num_tokens": i % 9, "sum_log_probs": -0.7 * (i % 9)}
        dicts.append(
            st.SampleScore(st.Score(d, metadata=toks), r["sample_id"], 1, r["sample_metadata"])
        )
    out += plain(
        st.evaluate_scores(
            dicts,
            [
                st.aggregate("f1", st.mean(), on_missing="skip"),
                st.aggregate("f1", st.stderr(cluster="doc"), on_missing="zero"),
                st.aggregate("em", st.accuracy()),
                st.perplexity_per_token(),
                st.perplexity_per_seq(),
            ],
        )
    )
    return out


@case("stats-frames-ci-grouped")
def _(ctx: Ctx) -> Any:
    import numpy as np

    import assay.stats as st

    rows = [r for r in jsonl(ctx.inputs / "scores_numeric.jsonl") if r["value"] is not None]
    frame = st.ScoreFrame.from_arrays(
        np.array([r["value"] for r in rows]),
        sample_id=np.array([r["sample_id"] for r in rows]),
        epoch=np.ones(len(rows), dtype=int),
        metadata={
            "doc": np.array([r["sample_metadata"]["doc"] for r in rows]),
            "topic": np.array([r["sample_metadata"]["topic"] for r in rows], dtype=object),
        },
    )
    return plain(
        st.evaluate_scores(
            frame,
            [st.mean(), st.grouped(st.mean(), "topic"), st.stderr(cluster="doc"), st.var()],
            ci=0.9,
            num_bootstrap=200,
            cluster="doc",
            seed=8,
        )
    )


@case("text-rouge-bleu-options")
def _(ctx: Ctx) -> Any:
    return cli(
        ctx,
        "text",
        "--data",
        ctx.path("text.jsonl"),
        "--metrics",
        "rouge,bleu",
        "--rouge-types",
        "rouge1,rougeLsum",
        "--use-stemmer",
        "--rouge-measures",
        "precision,recall",
        "--bleu-weights",
        "0.5,0.5",
        "--bleu-smoothing",
        "method2",
        "--by",
        "topic",
        "--num-bootstrap",
        "100",
        "--seed",
        "9",
    )


@case("llm-cat-bootstrap-seed-by-test-type")
def _(ctx: Ctx) -> Any:
    return _suite(
        ctx,
        "cat",
        "--ci",
        "0.9",
        "--num-bootstrap",
        "150",
        "--bootstrap-seed",
        "11",
        "--by",
        "test_type",
    )


@case("llm-fairness-ci-cluster")
def _(ctx: Ctx) -> Any:
    return _suite(
        ctx,
        "fairness",
        "--ci",
        "0.9",
        "--num-bootstrap",
        "150",
        "--cluster",
        "hours",
        "--by",
        "outcome",
    )


# ---------------------------------------------------------------- Dask: states reduced in a tree
#
# assay.dist.evaluate_dask ships each partition's evaluator state and merges them in a tree
# (here on Dask's synchronous scheduler, which runs the same graph a cluster runs).


def _dask_frame(ctx: Ctx, csv: str, parts: int) -> Any:
    import dask.dataframe as dd

    return dd.from_pandas(pd.read_csv(ctx.inputs / csv), npartitions=parts, sort=False)


@case("dask-classification-ci-by-cluster")
def _(ctx: Ctx) -> Any:
    from assay.classification import ClassificationEvaluator
    from assay.dist import evaluate_dask

    def add(ev: Any, part: pd.DataFrame) -> None:
        ev.add_arrays(
            part.label.to_numpy(),
            part.proba.to_numpy(),
            labels=["neg", "pos"],
            uids=part.uid.to_numpy(),
            metadata=[{"site": s, "patient": p} for s, p in zip(part.site, part.patient)],
        )

    ev = ClassificationEvaluator(
        pr_curve_max_examples=0, ci=0.9, num_bootstrap=60, by=["site"], cluster="patient", seed=2
    )
    return plain(
        evaluate_dask(
            ev, _dask_frame(ctx, "binary.csv", 4), add=add, split_every=2, scheduler="sync"
        ).compute()
    )


@case("dask-fairness-ci-by")
def _(ctx: Ctx) -> Any:
    from assay.dist import evaluate_dask
    from assay.fairness import FairnessEvaluator

    ev = FairnessEvaluator(
        ["sex=m", "age:40:invert"],
        group_columns=["race"],
        ci=0.9,
        num_bootstrap=60,
        by=["region"],
        cluster="site",
    )
    add = lambda e, part: e.add(part, label="y", prediction="yhat")  # noqa: E731
    return plain(
        evaluate_dask(
            ev, _dask_frame(ctx, "fairness.csv", 5), add=add, split_every=2, scheduler="sync"
        ).compute()
    )


@case("dask-scoring-ci-by-cluster")
def _(ctx: Ctx) -> Any:
    from assay.dist import evaluate_dask
    from assay.scoring import ScoringEvaluator

    ev = ScoringEvaluator(
        human="h",
        system="m",
        human2="h2",
        group_columns=["L1"],
        by=["site"],
        ci=0.9,
        num_bootstrap=30,
        cluster="g",
    )
    return plain(
        evaluate_dask(
            ev, _dask_frame(ctx, "scoring.csv", 5), split_every=2, scheduler="sync"
        ).compute()
    )
