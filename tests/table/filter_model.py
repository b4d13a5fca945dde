"""Filter trees for tests: a neutral spec, SQL's three-valued truth in plain Python, and the three
ways a user writes the same filter (tuples, ``fieldshift.col`` expressions, filter text).

A spec is ``("leaf", path, op, literal)``, ``("and", [specs])``, ``("or", [specs])`` or
``("not", spec)``. ``evaluate`` never calls fieldshift: it is written from the README's semantics
(a comparison with a null is unknown, ``!=`` / ``not in`` / ``not_starts_with`` are true on it, NaN is
unequal to and unordered with everything, NOT of unknown is unknown, a row is kept only where true).
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

__all__ = ["evaluate", "keeps", "spec_leaves", "spec_trees", "to_expression", "to_text", "to_tuples", "truth"]

Spec = tuple


def _nan(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)


def truth(v: Any, op: str, lit: Any) -> bool | None:
    """One condition on one value: True, False or None (unknown)."""
    if op == "is_null":
        return v is None
    if op == "not_null":
        return v is not None
    if op == "is_nan":
        return _nan(v)
    if op == "not_nan":
        return not _nan(v)
    if v is None:
        return True if op in ("!=", "not in", "not_starts_with") else None
    if op in ("starts_with", "not_starts_with"):
        return v.startswith(lit) == (op == "starts_with")
    if op in ("in", "not in"):
        found = any(v == x for x in lit)
        return found if op == "in" else not found
    if op == "!=":
        return v != lit
    if _nan(v):
        return False
    return {"==": v == lit, "<": v < lit, "<=": v <= lit, ">": v > lit, ">=": v >= lit}[op]


def evaluate(spec: Spec, get: Callable[[tuple[str, ...]], Any]) -> bool | None:
    """Kleene's logic over ``spec``; ``get(path)`` is the row's value at a column path."""
    kind = spec[0]
    if kind == "leaf":
        _, path, op, lit = spec
        return truth(get(path), op, lit)
    if kind == "not":
        inner = evaluate(spec[1], get)
        return None if inner is None else not inner
    results = [evaluate(s, get) for s in spec[1]]
    if kind == "and":
        return False if False in results else None if None in results else True
    return True if True in results else None if None in results else False


def keeps(spec: Spec, get: Callable[[tuple[str, ...]], Any]) -> bool:
    """Whether a row passes the filter (only where it is true)."""
    return evaluate(spec, get) is True


# -- the three spellings -------------------------------------------------------------------------
def to_expression(spec: Spec) -> Any:
    """The spec as ``fieldshift.col`` expressions and ``& | ~``."""
    import fieldshift as fs

    kind = spec[0]
    if kind == "leaf":
        _, path, op, lit = spec
        c = fs.col(list(path))
        method = {"==": lambda: c == lit, "!=": lambda: c != lit, "<": lambda: c < lit, "<=": lambda: c <= lit,
                  ">": lambda: c > lit, ">=": lambda: c >= lit, "in": lambda: c.is_in(lit),
                  "not in": lambda: c.not_in(lit), "is_null": c.is_null, "not_null": c.not_null,
                  "is_nan": c.is_nan, "not_nan": c.not_nan, "starts_with": lambda: c.starts_with(lit),
                  "not_starts_with": lambda: c.not_starts_with(lit)}
        return method[op]()
    if kind == "not":
        return ~to_expression(spec[1])
    parts = [to_expression(s) for s in spec[1]]
    out = parts[0]
    for p in parts[1:]:
        out = (out & p) if kind == "and" else (out | p)
    return out


def _lit(v: Any) -> str:
    if isinstance(v, bool):
        return "TRUE" if v else "false"
    if isinstance(v, (int, decimal.Decimal)):
        return str(v)
    if isinstance(v, float):
        assert math.isfinite(v), v
        return repr(v)
    if isinstance(v, dt.datetime):
        return f"TIMESTAMP '{v.isoformat(sep=' ')}'"
    if isinstance(v, dt.date):
        return f"date '{v.isoformat()}'"
    return "'" + str(v).replace("'", "''") + "'"


_KEYWORDS = ("and", "or", "not", "in", "is", "like", "starts", "true", "false", "null")


def _col(path: tuple[str, ...]) -> str:
    plain = [p.isascii() and p.isidentifier() and p.lower() not in _KEYWORDS for p in path]
    return ".".join(p if ok else "`" + p.replace("`", "``") + "`" for p, ok in zip(path, plain, strict=True))


def to_text(spec: Spec) -> str:
    """The spec as filter text, fully parenthesized, written independently of fieldshift's renderer."""
    kind = spec[0]
    if kind == "leaf":
        _, path, op, lit = spec
        c = _col(path)
        if op in ("is_null", "not_null", "is_nan", "not_nan"):
            return f"{c} IS {'NOT ' if op.startswith('not') else ''}{'NULL' if op.endswith('null') else 'NaN'}"
        if op in ("in", "not in"):
            return f"{c} {op.upper()} ({', '.join(_lit(x) for x in lit)})"
        if op == "starts_with":
            return f"{c} starts with {_lit(lit)}"
        if op == "not_starts_with":
            return f"{c} NOT LIKE {_lit(lit + '%')}" if "%" not in lit and "_" not in lit else \
                f"{c} not starts with {_lit(lit)}"
        return f"{c} {'<>' if op == '!=' else '=' if op == '==' else op} {_lit(lit)}"
    if kind == "not":
        return f"NOT ({to_text(spec[1])})"
    return "(" + f") {kind.upper()} (".join(to_text(s) for s in spec[1]) + ")"


def to_tuples(spec: Spec) -> list[tuple] | None:
    """The spec as today's list of (column, op, value) tuples, when it is a conjunction of leaves."""
    leaves = spec[1] if spec[0] == "and" else [spec]
    if not all(s[0] == "leaf" for s in leaves):
        return None
    return [(list(p), op) if op in ("is_null", "not_null", "is_nan", "not_nan") else (list(p), op, lit)
            for _, p, op, lit in leaves]


def spec_trees(leaf: st.SearchStrategy[Spec], max_leaves: int = 5) -> st.SearchStrategy[Spec]:
    """Random trees of and/or/not over ``leaf``."""
    def extend(children: st.SearchStrategy[Spec]) -> st.SearchStrategy[Spec]:
        return st.one_of(st.tuples(st.just("not"), children),
                         st.tuples(st.sampled_from(["and", "or"]), st.lists(children, min_size=2, max_size=3)))
    return st.recursive(leaf, extend, max_leaves=max_leaves)


def spec_leaves(spec: Spec) -> list[Spec]:
    """Every leaf of a spec, left to right."""
    if spec[0] == "leaf":
        return [spec]
    if spec[0] == "not":
        return spec_leaves(spec[1])
    return [x for s in spec[1] for x in spec_leaves(s)]
