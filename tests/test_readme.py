"""The README's Python quick start runs as written, and its stated values hold."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks
    for code in blocks:
        ns: dict = {}
        exec(compile(code, "README.md", "exec"), ns)
        if "metrics" in ns:
            assert (
                ns["metrics"].get("Precision", label_value="dog", score_threshold=0.5).value == 1.0
            )
