"""Demo section: score statistics over epochs, on scikit-learn's handwritten digits.

Each test image is a sample; each "epoch" is one of five classifiers trained with a
different random seed (the way an LLM eval repeats each question). Every prediction is
scored C (correct) or I (incorrect), the sample's true digit is its metadata, and assay
reports accuracy with plain, clustered (by digit) and bootstrap standard errors, per digit
(grouped), under several epoch reducers.
"""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from rich.table import Table

from saving import save


def run(out_dir: Path, console: Console) -> None:
    from sklearn.datasets import load_digits
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import train_test_split

    import assay.stats as st

    x, y = load_digits(return_X_y=True)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.5, random_state=0, stratify=y
    )
    scores: list[st.SampleScore] = []
    for epoch in range(1, 6):
        model = RandomForestClassifier(n_estimators=8, max_depth=6, random_state=epoch).fit(
            x_train, y_train
        )
        pred = model.predict(x_test)
        for i, (p, t) in enumerate(zip(pred, y_test)):
            scores.append(
                st.SampleScore(
                    st.Score("C" if p == t else "I", answer=str(p)),
                    sample_id=f"digit-{i}",
                    epoch=epoch,
                    sample_metadata={"digit": int(t)},
                )
            )

    reducers = ["mean", "mode", "pass_at_2", "pass_k_3", "at_least_3"]
    metrics = [
        st.accuracy(),
        st.stderr(),
        st.stderr(cluster="digit"),
        st.bootstrap_stderr(1000, seed=0),
        st.grouped(st.accuracy(), "digit", name_template="digit_{group_name}"),
    ]
    ms = st.evaluate_scores(scores, metrics, reducers)

    table = Table(title=f"{len(y_test)} test digits x 5 seeds: accuracy under each epoch reducer")
    for col in ["reducer", "accuracy", "SE", "SE by digit", "bootstrap SE", "worst digit"]:
        table.add_column(col, justify="left" if col == "reducer" else "right")
    for r in reducers:
        (acc,) = [m for m in ms.filter("Accuracy", reducer=r) if "group_column" not in m.parameters]
        per_digit = [
            m
            for m in ms.filter("Accuracy", reducer=r, group_column="digit")
            if "all" not in m.parameters
        ]
        worst = min(per_digit, key=lambda m: m.value)
        table.add_row(
            r,
            f"{acc.value:.4f}",
            f"{ms.get('Stderr', reducer=r, cluster=None).value:.4f}",
            f"{ms.get('Stderr', reducer=r, cluster='digit').value:.4f}",
            f"{ms.get('BootstrapStderr', reducer=r).value:.4f}",
            f"{worst.parameters['name']}: {worst.value:.3f}",
        )
    console.print(table)
    path = out_dir / "stats.json"
    path.write_text(json.dumps(ms.to_list(), indent=1))
    save(out_dir, ms, console, kind="stats", dataset="sklearn digits", model="random forest x5")
    console.print(f"{len(ms)} metric records written to {path}")
