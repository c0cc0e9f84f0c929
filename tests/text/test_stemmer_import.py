"""The ROUGE stemmer loads NLTK's Porter module alone, not the heavy ``nltk`` package."""

from __future__ import annotations

import subprocess
import sys

CHILD = """
import sys
from assay.text.tokenize import rouge_tokens
words = "connections running generously relational hopefulness agreed dying skies"
ours = rouge_tokens(words, use_stemmer=True)
leaked = sorted(k for k in sys.modules if k.split(".")[0] in ("nltk", "scipy", "sklearn"))
print(leaked)
from nltk.stem.porter import PorterStemmer  # the real package, imported after ours
import nltk
assert hasattr(nltk, "word_tokenize"), "a stand-in nltk module leaked"
theirs = [PorterStemmer().stem(w) for w in words.split()]
print(ours == theirs, ours)
"""


def test_stemmer_does_not_import_the_nltk_package() -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[0] == "[]"
    assert out[1].startswith("True"), out[1]
