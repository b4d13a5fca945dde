"""Field paths as text: a dotted string whose parts may be backtick-quoted (Spark's convention), and back.

Below every module that names fields by path (the schema, its conversions and its update builder).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from fieldshift.errors import InvalidNameError

__all__ = ["join_path", "split_path"]


def split_path(path: str | Sequence[str]) -> tuple[str, ...]:
    """A path's parts: a list/tuple of names as given, or a dotted string where a part in backticks may
    hold any character (```a.b`.c``), a literal backtick doubled inside them (Spark's convention)."""
    if not isinstance(path, str):
        parts = tuple(path)
        if not parts or not all(isinstance(p, str) and p for p in parts):
            raise InvalidNameError(f"a path needs one or more non-empty names, got {path!r}")
        return parts
    out: list[str] = []
    i, n = 0, len(path)
    while True:
        if i < n and path[i] == "`":  # a quoted part runs to the next single backtick
            buf, i = [], i + 1
            while True:
                j = path.find("`", i)
                if j < 0:
                    raise InvalidNameError(f"path {path!r} has an unclosed backtick")
                buf.append(path[i:j])
                if path.startswith("``", j):
                    buf.append("`")
                    i = j + 2
                    continue
                i = j + 1
                break
            part = "".join(buf)
            if i < n and path[i] != ".":
                raise InvalidNameError(f"path {path!r}: a quoted name must be followed by '.' or the end")
        else:
            j = path.find(".", i)
            j = n if j < 0 else j
            part = path[i:j]
            if "`" in part:
                raise InvalidNameError(f"path {path!r}: quote a name holding a backtick as `a``b`")
            i = j
        if not part:
            raise InvalidNameError(f"path {path!r} has an empty name")
        out.append(part)
        if i >= n:
            return tuple(out)
        i += 1  # the dot
        if i == n:
            raise InvalidNameError(f"path {path!r} ends with '.'")


def join_path(parts: Iterable[str]) -> str:
    """The dotted form of a path, quoting names that hold dots or backticks (``split_path`` inverts it)."""
    return ".".join(_quote(p) for p in parts)


def _quote(name: str) -> str:
    if "." in name or "`" in name:
        return "`" + name.replace("`", "``") + "`"
    return name
