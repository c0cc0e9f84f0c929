"""Tokenisers of the text metrics: ROUGE's alphanumeric tokens, BLEU's whitespace tokens.

BLEU has two tokenisers (:data:`BLEU_TOKENIZERS`): ``"whitespace"`` (``str.split()``, what
NLTK's ``sentence_bleu`` is given in its own examples, the default) and ``"valor"``
(valor-lite's: runs of word characters, ``$`` followed by digits, or runs of anything but
whitespace and periods, so periods never become tokens and ``"cat."`` is ``"cat"``).

ROUGE tokens (the rule Lin's original ROUGE and Google's ``rouge-score`` use): lower-case
the text, turn every run of characters outside ``[a-z0-9]`` into one space, split on
spaces; with ``use_stemmer`` every token longer than three characters is replaced by its
Porter stem (NLTK's ``PorterStemmer``, pure code: no data download). Stems are memoised,
so a word is stemmed once per process however often it occurs. Only NLTK's Porter module is
loaded, not the ``nltk`` package, whose ``__init__`` imports scipy, scikit-learn and about
2,000 modules (216 MB and 1.6 s; see :func:`_porter_stemmer`).

Example:
    >>> rouge_tokens("The cats, running!")
    ['the', 'cats', 'running']
    >>> rouge_tokens("The cats, running!", use_stemmer=True)
    ['the', 'cat', 'run']
"""

from __future__ import annotations

import _imp
import importlib
import importlib.util
import re
import sys
import types
from collections.abc import Callable
from typing import Any

__all__ = [
    "rouge_tokens",
    "rouge_sentences",
    "whitespace_tokens",
    "valor_tokens",
    "BLEU_TOKENIZERS",
]

_NON_ALNUM = re.compile(r"[^a-z0-9]+")
# A word; else a dollar amount; else a run of characters that are not whitespace or '.'.
_VALOR_TOKEN = re.compile(r"\w+|\$\d+|[^\s.]+")
_VALID = re.compile(r"^[a-z0-9]+$")
_STEMS: dict[str, str | None] = {}
_STEMMER: Any = None


def _porter_stemmer() -> Any:
    """NLTK's ``PorterStemmer()`` without running ``nltk/__init__.py``.

    When ``nltk`` is already imported it is used as is. Otherwise empty stand-ins for the
    ``nltk`` and ``nltk.stem`` packages (with their real ``__path__``) are put in
    ``sys.modules`` while ``nltk.stem.porter`` and the small modules it imports load (the
    standard library and ``regex`` only), then every ``nltk`` entry added is taken out again,
    so a later ``import nltk`` by the caller runs the real package. The import lock is held
    throughout, so no other thread sees the stand-ins.
    """
    if "nltk" in sys.modules:
        from nltk.stem.porter import PorterStemmer

        return PorterStemmer()
    spec = importlib.util.find_spec("nltk")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("use_stemmer=True needs the nltk package")
    root = list(spec.submodule_search_locations)
    _imp.acquire_lock()
    try:
        before = set(sys.modules)
        pkg = types.ModuleType("nltk")
        pkg.__path__ = root
        stem = types.ModuleType("nltk.stem")
        stem.__path__ = [f"{d}/stem" for d in root]
        sys.modules["nltk"], sys.modules["nltk.stem"] = pkg, stem
        try:
            porter = importlib.import_module("nltk.stem.porter")
        finally:
            for name in set(sys.modules) - before:
                if name == "nltk" or name.startswith("nltk."):
                    del sys.modules[name]
    finally:
        _imp.release_lock()
    return porter.PorterStemmer()


def _stem(token: str) -> str | None:
    """The Porter stem of a token (``None`` when the stem is not a valid token)."""
    global _STEMMER
    if _STEMMER is None:
        _STEMMER = _porter_stemmer()
    s = _STEMMER.stem(token)
    return s if _VALID.match(s) else None


def rouge_tokens(text: str, use_stemmer: bool = False) -> list[str]:
    """ROUGE tokens of one text (see the module docstring)."""
    tokens = _NON_ALNUM.sub(" ", text.lower()).split()
    if not use_stemmer:
        return tokens
    out: list[str] = []
    stems = _STEMS
    for t in tokens:
        if len(t) <= 3:
            out.append(t)
            continue
        s = stems.get(t, "")
        if s == "":
            s = stems[t] = _stem(t)
        if s is not None:
            out.append(s)
    return out


def rouge_sentences(text: str, use_stemmer: bool = False) -> list[list[str]]:
    """ROUGE-Lsum's sentences: the text split at newlines, empty lines dropped, each tokenised.

    A line of punctuation only stays as an empty token list (it still counts as a line).

    Example:
        >>> rouge_sentences("One cat.\\n\\n!!\\nTwo dogs")
        [['one', 'cat'], [], ['two', 'dogs']]
    """
    return [rouge_tokens(s, use_stemmer) for s in text.split("\n") if s]


def whitespace_tokens(text: str) -> list[str]:
    """BLEU's tokens: the text split on runs of whitespace (``str.split()``).

    Example:
        >>> whitespace_tokens("  a cat\\tsat ")
        ['a', 'cat', 'sat']
    """
    return text.split()


def valor_tokens(text: str) -> list[str]:
    """valor-lite's BLEU tokens: words, ``$``-amounts and other runs; periods dropped.

    Example:
        >>> valor_tokens("The cat.  It's $5!")
        ['The', 'cat', 'It', "'s", '$5', '!']
    """
    return _VALOR_TOKEN.findall(text)


#: BLEU's tokenisers by name (``bleu(..., tokenize=name)``).
BLEU_TOKENIZERS: dict[str, Callable[[str], list[str]]] = {
    "whitespace": whitespace_tokens,
    "valor": valor_tokens,
}
