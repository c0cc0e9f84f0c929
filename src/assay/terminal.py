"""Text from data or a model, made safe to print on a terminal.

A label, a group name, a prompt or a model's answer can hold control characters: an
escape sequence (``ESC [ 2 J`` clears the screen, ``ESC ] 0 ;`` retitles the window, ``ESC
] 52`` writes the clipboard on some terminals), a carriage return that overprints, a
right-to-left override that reorders what follows. Every table and terminal printer in
assay passes such text through :func:`printable`, which shows each of these characters
escaped as ``repr`` would (``\\x1b``, ``\\r``, ``\\u202e``) and leaves everything else,
non-ASCII letters included, as it is.

Example:
    >>> printable("caf\\u00e9 \\x1b[2Jdone")
    'café \\\\x1b[2Jdone'
    >>> print(printable("line 1\\nline 2\\tend", keep_newlines=True))
    line 1
    line 2	end
"""

from __future__ import annotations

from typing import Any

__all__ = ["printable", "value_text"]

_KEPT = frozenset("\n\t")


def _escape(ch: str) -> str:
    return repr(ch)[1:-1]


def printable(value: Any, *, keep_newlines: bool = False) -> str:
    """``str(value)`` with every non-printable character escaped as ``repr`` shows it.

    With ``keep_newlines`` (a prompt, an answer, a report) newlines and tabs stay; a
    table cell or a one-line message escapes them too.
    """
    text = "" if value is None else str(value)
    if text.isprintable():
        return text
    kept = _KEPT if keep_newlines else frozenset()
    return "".join(ch if ch.isprintable() or ch in kept else _escape(ch) for ch in text)


def value_text(value: Any, parameters: Any = None, *, digits: int = 4, prefix: str = "") -> str:
    """A record's number as a table shows it: ``-`` when undefined, else the value with
    the interval its parameters carry (``{prefix}ci_low``, ``{prefix}ci_high``), if any.

    Example:
        >>> value_text(0.842, {"ci_low": 0.81, "ci_high": 0.87}, digits=3)
        '0.842 [0.810, 0.870]'
        >>> value_text(None), value_text(0.5, {})
        ('-', '0.5000')
    """
    if value is None:
        return "-"
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return str(value)
    text = f"{value:.{digits}f}"
    p = parameters or {}
    lo, hi = p.get(f"{prefix}ci_low"), p.get(f"{prefix}ci_high")
    if isinstance(lo, (int, float)) and isinstance(hi, (int, float)):
        text += f" [{lo:.{digits}f}, {hi:.{digits}f}]"
    return text
