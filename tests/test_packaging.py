"""pyproject's hand-written package list against the folders: an editable install finds
every module whatever the list says, a wheel (`pip install .`, the container) only what it
names, so a folder missing from it would be dropped silently."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _setuptools() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def _folder(package: str, package_dir: dict[str, str]) -> Path:
    """The folder a dotted package name is installed from (the longest mapped prefix)."""
    parts = package.split(".")
    for n in range(len(parts), 0, -1):
        prefix = ".".join(parts[:n])
        if prefix in package_dir:
            return ROOT / package_dir[prefix] / Path(*parts[n:])
    raise AssertionError(f"{package}: no package-dir maps it to a folder")


def _files(folder: Path):
    return (p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def test_every_folder_with_python_is_a_listed_package_and_every_data_file_is_shipped():
    config = _setuptools()
    listed = {name: _folder(name, config["package-dir"]) for name in config["packages"]}
    for name, folder in listed.items():
        assert (folder / "__init__.py").is_file(), f"{name}: {folder} has no __init__.py"
    roots = {ROOT / d for d in config["package-dir"].values()}
    with_python = {p.parent for root in roots for p in _files(root) if p.suffix == ".py"}
    unlisted = sorted(str(d.relative_to(ROOT)) for d in with_python - set(listed.values()))
    assert not unlisted, f"add to [tool.setuptools] packages in pyproject.toml: {unlisted}"
    # files that are not Python go into the wheel only through package-data's globs
    data = config.get("package-data", {})
    shipped = {p for name, globs in data.items() for g in globs for p in listed[name].glob(g)}
    dropped = sorted(str(p.relative_to(ROOT)) for root in roots for p in _files(root)
                     if p.suffix != ".py" and p not in shipped)
    assert not dropped, f"add to [tool.setuptools.package-data] in pyproject.toml: {dropped}"
