"""weft_worker as a package: importable as installed (no path patching), the dependency bounds of
pyproject.toml holding the versions CI pins, and the modules the weft binary embeds being the package's own."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
PINS = ROOT.parent / "sdk-tests" / "py" / "requirements.txt"


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _pins() -> dict[str, Version]:
    pins = {}
    for line in PINS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if m := re.fullmatch(r"([A-Za-z0-9_.\-\[\],]+)==([^\s;]+)", line):
            pins[re.sub(r"\[.*\]", "", m.group(1)).lower().replace("_", "-")] = Version(m.group(2))
    return pins


def test_installed_from_this_tree():
    dist = importlib.metadata.distribution("weft-worker")
    assert dist.version == _project()["version"]
    out = subprocess.run([sys.executable, "-c", "import weft_worker; print(weft_worker.__file__)"],
                         cwd="/", capture_output=True, text=True, check=True).stdout.strip()
    assert Path(out).resolve().parent == ROOT / "weft_worker", out


def test_pinned_versions_within_bounds():
    pins = _pins()
    project = _project()
    reqs = [Requirement(r) for r in project["dependencies"]]
    reqs += [Requirement(r) for extra in project["optional-dependencies"].values() for r in extra]
    outside = []
    for req in reqs:
        name = req.name.lower().replace("_", "-")
        assert name in pins, f"{req.name} is a dependency of weft-worker but not pinned in {PINS.name}"
        if not req.specifier.contains(pins[name], prereleases=True):
            outside.append(f"{req.name}: pinned {pins[name]}, pyproject says {req.specifier}")
    assert not outside, outside


def test_every_import_is_declared():
    """A third-party module the package imports is a declared dependency (or the standard library)."""
    declared = {Requirement(r).name.lower().replace("-", "_") for r in _project()["dependencies"]}
    declared |= {Requirement(r).name.lower().replace("-", "_")
                 for extra in _project()["optional-dependencies"].values() for r in extra}
    missing = set()
    for path in sorted((ROOT / "weft_worker").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for n in names:
                top = n.split(".")[0]
                if top in sys.stdlib_module_names or top == "weft_worker":
                    continue
                if top not in declared:  # langgraph-checkpoint's modules are under langgraph
                    missing.add(f"{path.name}: {top}")
    assert not missing, sorted(missing)


def test_embedded_files_are_the_package():
    """The weft binary embeds weft_worker/*.py (embed.go): every module of the package is one of them."""
    embed = (ROOT / "embed.go").read_text()
    assert "//go:embed weft_worker/*.py" in embed
    assert not [p for p in (ROOT / "weft_worker").iterdir() if p.is_dir() and p.name != "__pycache__"], \
        "a subpackage would not be embedded"
