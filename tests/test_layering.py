"""docs/map.md's dependency rule, checked over every import of the installed packages.

`hookproof` (front door) → `scenarios`, `chaos`, `loadtests`, `reports` → `simulator`:
the simulator core imports nothing above it, `reports` is a leaf, the middle layers never
import the front door (only the namespace root, for its version), and no production
module imports `examples`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: repository folder -> installed package
LAYERS = {"simulator": "hookproof.simulator", "scenarios": "hookproof.scenarios", "chaos": "hookproof.chaos",
          "loadtests": "hookproof.loadtests", "reports": "hookproof.reports", "hookproof": "hookproof"}
#: what each layer may import of hookproof (beyond its own package)
ALLOWED = {
    "simulator": {"hookproof.simulator"},
    "reports": {"hookproof.reports"},
    "scenarios": {"hookproof", "hookproof.scenarios", "hookproof.simulator", "hookproof.reports"},
    "chaos": {"hookproof", "hookproof.chaos", "hookproof.simulator"},
    "loadtests": {"hookproof", "hookproof.loadtests", "hookproof.scenarios", "hookproof.simulator",
                  "hookproof.reports"},
}
MIDDLE = ("simulator", "scenarios", "chaos", "loadtests", "reports")


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in `path`, lazy ones inside functions included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


def layer_of(module: str) -> str:
    """The package a dotted module name belongs to: `hookproof.simulator.world` -> `hookproof.simulator`."""
    parts = module.split(".")
    if parts[0] != "hookproof":
        return parts[0]
    if len(parts) > 1 and parts[1] in LAYERS and parts[1] != "hookproof":
        return f"hookproof.{parts[1]}"
    return "hookproof" if len(parts) == 1 else f"hookproof.{parts[1]}"


@pytest.mark.parametrize("folder", MIDDLE)
def test_layer_imports_only_what_the_map_allows(folder: str) -> None:
    wrong = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        for line, module in imports(path):
            layer = layer_of(module)
            if layer.startswith("hookproof") and layer not in ALLOWED[folder]:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
            if layer in LAYERS and layer != "hookproof":  # a bare `simulator`, `reports`, ...: not installed
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports the uninstalled name {module}")
    assert not wrong, "\n".join(wrong)


def test_no_production_module_imports_examples() -> None:
    wrong = [f"{path.relative_to(ROOT)}:{line}"
             for folder in LAYERS for path in sorted((ROOT / folder).rglob("*.py"))
             for line, module in imports(path) if module.split(".")[0] == "examples"]
    assert not wrong, "production code imports examples: " + ", ".join(wrong)


def test_the_checker_sees_a_wrong_import(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from hookproof.scenarios.runner import Runner\n    import simulator.world\n")
    assert imports(probe) == [(2, "hookproof.scenarios.runner"), (3, "simulator.world")]
    assert layer_of("hookproof.scenarios.runner") == "hookproof.scenarios"
    assert layer_of("hookproof.cli") == "hookproof.cli"
    assert "hookproof.cli" not in ALLOWED["scenarios"]
