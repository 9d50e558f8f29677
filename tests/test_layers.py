"""Layers of DESIGN.md hold (import-linter), and the headless core does not load heavy libraries."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_import_linter_contracts_hold() -> None:
    lint = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "broken" not in result.stdout.lower().replace("0 broken", "")


def test_cli_start_does_not_import_heavy_libraries() -> None:
    code = (
        "import sys, centaur_tui.cli.main, centaur_tui.pipeline, centaur_tui.store, centaur_tui.catalog;"
        "heavy = [m for m in ('litellm', 'textual', 'pandas', 'scipy', 'matplotlib') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == ""


def test_no_unexpected_pth_files_in_site_packages() -> None:
    """litellm 1.82.8 shipped a .pth file that ran on every Python start (NOTES.md)."""
    import site

    allowed_prefixes = ("distutils-precedence", "__editable__", "_virtualenv", "easy-install", "setuptools")
    found = []
    for folder in site.getsitepackages():
        for pth in Path(folder).glob("*.pth"):
            if not pth.name.startswith(allowed_prefixes):
                found.append(pth.name)
    assert found == [], f"unexpected .pth files: {found}"


def test_litellm_pin_is_a_checked_release() -> None:
    from importlib.metadata import version

    v = version("litellm")
    assert v not in {"1.82.7", "1.82.8"} and not v.startswith("1.107."), v
    assert v == "1.110.2"
