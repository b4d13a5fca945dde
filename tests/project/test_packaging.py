"""A built wheel, installed in a clean virtualenv without the repo, gives all three packages."""

from __future__ import annotations

import site
import subprocess
import sys
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_wheel_installs_and_imports_in_a_clean_venv(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    built = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist),
                            str(REPO)], check=True, capture_output=True, text=True, cwd=tmp_path)
    assert "deprecated" not in (built.stdout + built.stderr).lower(), built.stdout + built.stderr  # quiet install
    wheel = next(dist.glob("fieldshift-*.whl"))
    # the README's install line names this very wheel (fieldshift is on no package index)
    readme = (REPO / "README.md").read_text()
    assert f"pip install 'dist/{wheel.name}[spark]'" in readme, wheel.name
    import zipfile

    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.endswith("licenses/LICENSE") for n in names), names
    env_dir = tmp_path / "clean"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    target = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                            check=True, capture_output=True, text=True).stdout.strip()
    # install the wheel's files alone (no network, no repo), then borrow the dependencies
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-compile", "--target", target,
                    str(wheel)], check=True, capture_output=True)
    deps = [p for p in site.getsitepackages() if "site-packages" in p]
    (Path(target) / "_deps.pth").write_text("\n".join(deps) + "\n")
    code = ("import fieldshift, fieldshift.kernels, fieldshift.spark, fieldshift.table, fieldshift.cli; "
            "print(fieldshift.__file__)")
    out = subprocess.run([python, "-c", code], check=True, capture_output=True, text=True, cwd=tmp_path)
    assert out.stdout.strip().startswith(target), out.stdout
    assert str(REPO) not in out.stdout


def test_the_readme_installs_only_what_pip_can_find() -> None:
    """fieldshift is on no package index: ``pip install fieldshift`` fails for a new user. The README's
    installs are this directory, a built wheel, a git URL, or an extra of an installed fieldshift."""
    import re

    readme = (REPO / "README.md").read_text()
    installs = re.findall(r"pip install ([^`]+)`", readme)
    assert installs and "." in installs and "'.[spark]'" in installs, installs
    for target in installs:
        arg = target.strip().strip("'")
        assert arg.startswith((".", "dist/")) or "@ git+" in arg or re.fullmatch(r"fieldshift\[\w+\]", arg), arg
    assert "`pip install fieldshift`" not in readme


def test_every_sub_package_is_in_the_package_list() -> None:
    """A new folder under engine/ that pyproject does not list is missing from the wheel (fieldshift.table.publish
    was: the table layer then failed to import from an installed wheel)."""
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = set()
    for package, folder in config["package-dir"].items():
        for init in (REPO / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(REPO / folder).parts
            found.add(".".join((package, *parts)))
    assert found <= listed, sorted(found - listed)
