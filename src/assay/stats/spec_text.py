"""Metrics and reducers written as text: ``accuracy(to_float={"P": 0.0})``.

The text form of a metric or reducer is a Python-style call of its factory with literal
arguments (numbers, text, booleans, ``None``, lists and dicts), a bare registered name
(``stderr``, ``pass_at_2``), or the JSON spec that ``MetricFn.spec``/``Reducer.spec``
print (``{"metric": "Accuracy", "params": {...}}``). ``grouped(...)`` takes a metric call
as its first argument. Nothing is evaluated: the text is parsed, and only literals are
accepted (JSON's ``true``/``false``/``null`` too, so a JSON mapping can be pasted in).

Example:
    >>> m = metric_from_text('grouped(accuracy(to_float={"P": 0.0}), "topic")')
    >>> m.name, m.to_float.values, m.group_column
    ('Accuracy', {'P': 0.0}, 'topic')
    >>> reducer_from_text("mean_score(to_float={'P': 1})").to_float.values
    {'P': 1.0}
"""

from __future__ import annotations

import ast
import json
from typing import Any

from assay.errors import InvalidInputError
from assay.stats.grouped import grouped, metric_from_spec
from assay.stats.metric_registry import MetricFn, get_metric, metric_factory
from assay.stats.reducer_registry import Reducer, get_reducer, reducer_factory, reducer_from_spec

__all__ = ["metric_from_text", "reducer_from_text"]


def _parse(text: str, kind: str) -> ast.expr:
    try:
        return ast.parse(text.strip(), mode="eval").body
    except SyntaxError as e:
        raise InvalidInputError(
            f"cannot read {text!r} as a {kind} ({e.msg}); write a name, "
            f"a call such as name(key=value), or a JSON spec",
            source=f"{kind}s",
        ) from None


_JSON_NAMES = {"true": True, "false": False, "null": None}


class _JsonNames(ast.NodeTransformer):
    """JSON's ``true``/``false``/``null`` read as Python's, so a JSON dict can be pasted."""

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in _JSON_NAMES:
            return ast.copy_location(ast.Constant(_JSON_NAMES[node.id]), node)
        return node


def _literal(node: ast.expr, kind: str, text: str) -> Any:
    try:
        return ast.literal_eval(_JsonNames().visit(node))
    except (ValueError, SyntaxError):
        raise InvalidInputError(
            f"in {text!r}: {ast.unparse(node)!r} is not a literal (give numbers, text, "
            "True/False/None, lists or dicts)",
            source=f"{kind}s",
        ) from None


def _call(node: ast.Call, kind: str, text: str) -> tuple[str, list[Any], dict[str, Any]]:
    if not isinstance(node.func, ast.Name) or any(k.arg is None for k in node.keywords):
        raise InvalidInputError(
            f"in {text!r}: write the call as name(value, key=value, ...)", source=f"{kind}s"
        )
    args = [_literal(a, kind, text) for a in node.args]
    kwargs = {str(k.arg): _literal(k.value, kind, text) for k in node.keywords}
    return node.func.id, args, kwargs


def _build(factory: Any, name: str, args: list[Any], kwargs: dict[str, Any], kind: str) -> Any:
    try:
        return factory(*args, **kwargs)
    except TypeError as e:
        raise InvalidInputError(f"{name}(...): {e}", source=f"{kind}s") from None


def _metric(node: ast.expr, text: str) -> MetricFn:
    if isinstance(node, ast.Name):
        return get_metric(node.id)
    if not isinstance(node, ast.Call):
        raise InvalidInputError(f"{text!r} is not a metric name or call", source="metrics")
    if isinstance(node.func, ast.Name) and node.func.id == "grouped" and node.args:
        inner = _metric(node.args[0], text)
        rest = ast.Call(func=node.func, args=node.args[1:], keywords=node.keywords)
        _, args, kwargs = _call(rest, "metric", text)
        return _build(grouped, "grouped", [inner, *args], kwargs, "metric")
    name, args, kwargs = _call(node, "metric", text)
    return _build(metric_factory(name), name, args, kwargs, "metric")


def metric_from_text(text: str) -> MetricFn:
    """The metric written as ``text`` (a name, a call with literal arguments, or a JSON
    spec); :class:`~assay.errors.InvalidInputError` saying what is wrong otherwise.

    Example:
        >>> metric_from_text("stderr(cluster='doc')").params
        {'cluster': 'doc'}
    """
    if text.strip().startswith("{"):
        try:
            return metric_from_spec(json.loads(text))
        except json.JSONDecodeError as e:
            raise InvalidInputError(f"invalid JSON spec: {e}", source="metrics") from None
    return _metric(_parse(text, "metric"), text)


def reducer_from_text(text: str) -> Reducer:
    """The reducer written as ``text``: a name (``mean``, ``pass_at_2``), a call of a
    registered factory with literal arguments (``at_least(2, value=0.5)``,
    ``mean(to_float={"P": 0})``; Inspect's ``mean_score`` spelling works too), or a JSON
    spec.

    Example:
        >>> reducer_from_text("at_least(2, value=0.5)").name
        'at_least_2'
    """
    if text.strip().startswith("{"):
        try:
            return reducer_from_spec(json.loads(text))
        except json.JSONDecodeError as e:
            raise InvalidInputError(f"invalid JSON spec: {e}", source="reducers") from None
    node = _parse(text, "reducer")
    if isinstance(node, ast.Name):
        return get_reducer(_reducer_name(node.id))
    if not isinstance(node, ast.Call):
        raise InvalidInputError(f"{text!r} is not a reducer name or call", source="reducers")
    name, args, kwargs = _call(node, "reducer", text)
    factory = reducer_factory(_reducer_name(name))
    if factory is None:
        return get_reducer(name)  # the error lists the registered reducers
    return _build(factory, name, args, kwargs, "reducer")


def _reducer_name(name: str) -> str:
    """Inspect's ``mean_score``/``median_score``/``max_score``/``mode_score`` spellings."""
    if reducer_factory(name) is None and name.endswith("_score") and reducer_factory(name[:-6]):
        return name[:-6]
    return name
