"""The command line starts without the heavy modules (issue 35): ``import fieldshift`` and the CLI's
command tree import no pyarrow, numba, rich tables or pydantic; a command imports what it uses; the
package face still resolves, lists and documents every public name; and the plain value coercion
(``cli.plain_values``) gives what typer's own gives, errors included."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main

HEAVY = ("pyarrow", "numba", "numpy", "rich.table", "rich.live", "pydantic", "fieldshift.table")


def imported_after(code: str) -> set[str]:
    """The modules of ``HEAVY`` a fresh interpreter has imported after running ``code``."""
    probe = code + f"\nimport sys, json; print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_import_fieldshift_and_the_command_tree_import_nothing_heavy() -> None:
    assert imported_after("import fieldshift") == set()
    assert imported_after("from fieldshift.cli import app\nimport typer.main\ntyper.main.get_command(app)") == set()


def test_version_and_help_run_without_arrow(tmp_path: Path) -> None:
    run = "from fieldshift.cli import main\nimport sys\nsys.argv = ['fieldshift', {}]\ntry:\n    main()\n" \
          "except SystemExit:\n    pass"
    assert imported_after(run.format("'--version'")) == set()
    assert imported_after(run.format("'schema', '--help'")) <= {"rich.table"}  # typer's help panels


def test_a_command_imports_what_it_uses_and_no_pydantic(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.json").write_text('{"id": 1}\n')
    run = ("from fieldshift.cli import main\nimport sys\n"
           f"sys.argv = ['fieldshift', 'capture', {str(src)!r}, {str(tmp_path / 't')!r}, '--once']\n"
           "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code")
    found = imported_after(run)
    assert {"pyarrow", "fieldshift.table"} <= found and "pydantic" not in found
    assert not found & {"rich.table", "rich.live"}  # on a pipe the summary is plain text


def test_capture_prints_its_summary_as_plain_lines_on_a_pipe(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.json").write_text('{"id": 1}\n')
    (src / "b.json").write_text('{"id": 2, "extra": "x"}\n')
    done = subprocess.run([sys.executable, "-m", "fieldshift.cli", "capture", str(src), str(tmp_path / "t"),
                           "--once", "--quarantine"], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[0] == f"captured {src} into {tmp_path / 't'}"
    assert re.search(r"^  rows written +2$", done.stdout, re.M) and re.search(r"^  commits +1$", done.stdout, re.M)
    assert any(line.startswith("  schema change ") and "extra" in line for line in done.stdout.splitlines())
    assert "│" not in done.stdout and "\x1b" not in done.stdout


def test_a_command_registers_only_its_own_module_and_help_lists_every_command(tmp_path: Path) -> None:
    """``main()`` builds the tree with the one command the line names; ``--help`` and unknown words get all."""
    from fieldshift.cli.command_tree import COMMANDS, named_command

    assert named_command(["capture", "a", "b", "--once"]) == "capture"
    assert named_command(["--catalog", "read", "-q", "--table", "x", "append", "t"]) == "append"  # values skipped
    assert named_command(["--quiet", "schema", "show"]) == "schema"
    assert named_command(["--help"]) is None and named_command([]) is None and named_command(["nope"]) is None
    assert named_command(["demo", "--no-spark"]) == "demo"
    others = sorted({f"fieldshift.cli.{m}" for m, _ in COMMANDS.values()} - {
        "fieldshift.cli.capture_cmd", "fieldshift.cli.write_cmds"})  # capture shares write_cmds' options
    probe = ("from fieldshift.cli import main\nimport sys, json\n"
             f"sys.argv = ['fieldshift', 'capture', {str(tmp_path / 'none')!r}, {str(tmp_path / 't')!r}, '--once']\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             f"print(json.dumps([m for m in {others!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert json.loads(out.splitlines()[-1]) == []
    listing = subprocess.run([sys.executable, "-m", "fieldshift.cli", "--help"], capture_output=True, text=True,
                             check=True, env={**os.environ, "COLUMNS": "200"}).stdout
    assert all(name in listing for name in [*COMMANDS, "demo"])


def test_every_public_name_resolves_and_is_listed() -> None:
    import fieldshift as fs

    for name in fs.__all__:
        assert getattr(fs, name) is not None
    assert set(fs.__all__) <= set(dir(fs))
    from fieldshift.table import Table

    assert fs.Table is Table
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        fs.nope  # noqa: B018
    # a submodule is an attribute of the package, as when the package imported everything up front
    assert imported_after("import fieldshift as fs\nassert fs.planner.evolve is fs.evolve\nfs.table.keyed.keys") \
        >= {"fieldshift.table", "pyarrow"}


def test_policy_names_are_the_presets() -> None:
    from fieldshift.schema.policy import CastPolicy
    from fieldshift.schema.policy_names import POLICY_NAMES

    for name in POLICY_NAMES:
        CastPolicy.from_name(name)


SAMPLES: dict[Any, list[Any]] = {
    str: ["abc", "", "007", " x "],
    int: ["0", "5", "-3", "007", "+2", "1_000", "abc", "1.5", "", " 4", "-1", 7, 0, "\uff14", "\u0664\u0662"],
    float: ["1", "1.5", ".5", "1e3", "-2.", "nan", "abc", "inf", "", "-0.5", 3600.0, 1.0, "\uff11.\uff15"],
    Path: ["x/y", "", ".", "/tmp", "a b"],
}


def _samples(annotation: Any) -> list[Any]:
    import enum

    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return [m.value for m in annotation] + ["BAD", next(iter(annotation)).value.upper(), next(iter(annotation))]
    return SAMPLES.get(annotation, [])


def _outcome(coercion: Any, value: Any, param: Any, ctx: Any) -> tuple[str, Any]:
    try:
        value = coercion.coerce(value, param=param, ctx=ctx)
    except Exception as e:
        return "error", (type(e).__name__, str(e))
    return "ok", (type(value).__name__, repr(value))


def test_plain_values_coerce_as_typer_does() -> None:
    from typer._coercion import build_runtime_param

    from fieldshift.cli import app
    from fieldshift.cli.plain_values import PlainValues

    root = typer.main.get_command(app)
    checked = 0

    def walk(command: Any, ctx: Any) -> None:
        nonlocal checked
        for param in command.params:
            light = param._runtime_param
            assert isinstance(light, PlainValues), param.name
            typers = build_runtime_param(param.type_descriptor)
            annotation = param.type_descriptor.annotation
            values = [("a", "b"), ()] if param.multiple else [*_samples(annotation), None]
            for v in values:
                ours, theirs = _outcome(light, v, param, ctx), _outcome(typers, v, param, ctx)
                assert ours == theirs, (command.name, param.name, v)
                checked += 1
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, sub.make_context(name, ["--help"], resilient_parsing=True))

    walk(root, root.make_context("fieldshift", [], resilient_parsing=True))
    assert checked > 300
