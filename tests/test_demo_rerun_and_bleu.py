"""`make demo` twice leaves one demo's runs in its store (and says it replaced the earlier
ones); the demo's BLEU is smoothed sentence BLEU, equal to NLTK's, explained on screen, never
a bare 0.0000 beside a ROUGE of 0.65."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from rich.console import Console

DEMO = Path(__file__).resolve().parents[1] / "demo"


@pytest.fixture
def demo(monkeypatch):
    monkeypatch.syspath_prepend(str(DEMO))
    for name in ("run", "saving", "classification", "text"):
        sys.modules.pop(name, None)
    import run

    return run


def test_a_rerun_replaces_the_earlier_demo_store(demo, tmp_path, capsys):
    from assay.store import Store

    demo.main(["classification"], out=tmp_path)
    with Store(f"sqlite:///{tmp_path / 'assay.db'}") as st:
        first = len(st.list(limit=1000))
    assert first >= 1
    capsys.readouterr()
    demo.main(["classification"], out=tmp_path)
    shown = capsys.readouterr().out
    with Store(f"sqlite:///{tmp_path / 'assay.db'}") as st:
        assert len(st.list(limit=1000)) == first
    assert f"replaced the store of an earlier demo run ({first} runs)" in " ".join(shown.split())
    assert (tmp_path / "report.html").is_file()


def test_the_demo_bleu_is_smoothed_and_explained(demo):
    import text

    console = Console(file=io.StringIO(), width=200, record=True)
    ms = text.rouge_bleu(console)
    shown = console.export_text()
    bleu = [m for m in ms if m.type == "BLEU" and "datum_uid" in m.parameters]
    assert len(bleu) == 3 and all(m.value > 0.01 for m in bleu)
    assert all(m.parameters["smoothing"] == "method1" for m in bleu)
    assert "0.0000" not in shown and " NO" not in shown and shown.count("yes") == 3
    assert "smoothing method1" in shown
