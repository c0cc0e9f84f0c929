"""Small refusals (issue 36, item 11): compare of two kinds, a failed run in a comparison,
a run named twice in a report, a bootstrap of 10^9 resamples, --ci-method without --ci."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from assay.cli.main import app
from assay.results import Metric
from assay.store import Store

runner = CliRunner()


def _two_kinds(db: Path) -> list[int]:
    with Store(str(db)) as st:
        a = st.save([Metric("Accuracy", 0.5)], kind="classification")
        b = st.save([Metric("SPD", 0.1)], kind="fairness")
        c = st.save([Metric("Accuracy", 0.7)], kind="classification")
        d = st.start("classification")
        st.add_metrics(d, [Metric("Accuracy", 0.9)])
        st.fail(d, "stopped")
    return [a, b, c, d]


def test_compare_and_report_refusals_name_themselves(tmp_path):
    db = str(tmp_path / "s.db")
    a, b, c, d = _two_kinds(tmp_path / "s.db")
    r = runner.invoke(app, ["compare", str(a), str(b), "--db", db])
    assert r.exit_code == 2 and "different kinds" in r.stderr and "fairness" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = runner.invoke(app, ["compare", str(a), str(d), "--db", db])
    assert r.exit_code == 0
    assert f"evaluation {d} is failed" in r.stderr
    r = runner.invoke(app, ["report", str(a), str(a), "--db", db, "-o", str(tmp_path / "r.html")])
    assert (
        r.exit_code == 2
        and "compare" not in r.stderr
        and f"evaluation {a} is named twice" in r.stderr
    )


def test_interval_option_refusals(tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("y,score,site\n" + "".join(f"{i % 2},{(i % 7) / 7},s\n" for i in range(40)))
    base = ["classification", "--data", str(data), "--y-true", "y", "--y-score", "score"]
    r = runner.invoke(app, [*base, "--ci", "0.95", "--num-bootstrap", str(10**9)])
    assert r.exit_code == 2 and "--num-bootstrap" in r.stderr and "100,000" in r.stderr
    r = runner.invoke(app, [*base, "--ci-method", "wilson"])
    assert r.exit_code == 2 and "--ci-method" in r.stderr and "--ci" in r.stderr
