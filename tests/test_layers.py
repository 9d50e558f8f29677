"""Layers of DESIGN.md hold (import-linter), and the headless core does not load heavy libraries."""

from __future__ import annotations

import re
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


def pth_files_running_code(folders: list[str]) -> list[str]:
    """Names of the `*.pth` files in `folders` that run code at interpreter start.

    Python's `site` executes every line of a .pth that starts with `import` (followed by a space
    or tab) and adds every other line to sys.path. litellm 1.82.8 shipped such a file (NOTES.md);
    coverage and setuptools ship one each, which `make install` removes, and the project installs
    itself as a plain path (editable_mode=compat). So no .pth may hold an import line at all.
    """
    found = []
    for folder in folders:
        for pth in Path(folder).glob("*.pth"):
            lines = pth.read_text(encoding="utf-8", errors="replace").splitlines()
            if any(line.startswith(("import ", "import\t")) for line in lines):
                found.append(pth.name)
    return sorted(found)


def test_no_pth_file_in_site_packages_runs_code() -> None:
    import site

    assert pth_files_running_code(site.getsitepackages()) == [], "a .pth file runs code at every start"


def test_a_pth_file_that_imports_is_reported_and_a_path_line_is_not(tmp_path: Path) -> None:
    (tmp_path / "path_only.pth").write_text("/work/project\n# a comment\n", encoding="utf-8")
    (tmp_path / "litellm_init.pth").write_text("import os; os.system('curl evil')\n", encoding="utf-8")
    (tmp_path / "a1_coverage.pth").write_text("import sys; exec('...')\n", encoding="utf-8")
    (tmp_path / "tabbed.pth").write_text("/x\nimport\tos\n", encoding="utf-8")
    assert pth_files_running_code([str(tmp_path)]) == ["a1_coverage.pth", "litellm_init.pth", "tabbed.pth"]


def test_the_lock_pins_every_package_with_hashes_and_pins_pip_and_setuptools() -> None:
    """`pip install --require-hashes -r requirements.lock` (the Makefile) needs a hash on every pin."""
    text = (ROOT / "requirements.lock").read_text(encoding="utf-8")
    pins = re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]+\])?==(\S+)", text, flags=re.M)
    names = {n.lower() for n, _ in pins}
    assert {"pip", "setuptools", "litellm", "textual"} <= names
    blocks = re.split(r"^(?=[A-Za-z0-9])", text, flags=re.M)
    unhashed = [b.split()[0] for b in blocks if "==" in b.split("\n")[0] and "--hash=sha256:" not in b]
    assert unhashed == []
    assert "--require-hashes" in (ROOT / "Makefile").read_text(encoding="utf-8")


def test_the_lock_pins_with_their_extras_the_packages_others_ask_for_with_extras() -> None:
    """litellm asks for `httpx[http2]`: pip 23's hash mode resolved that as a second, unpinned
    requirement and refused the lock the day httpx 0.29.0 was published (CI, 2026-12-02), though
    httpx==0.28.1 was pinned. A pin written `httpx[http2]==0.28.1` is the one requirement both ask for."""
    from importlib.metadata import distributions

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    text = (ROOT / "requirements.lock").read_text(encoding="utf-8")
    locked = {
        canonicalize_name(name): set(filter(None, (extras or "").split(",")))
        for name, extras in re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[([^\]]+)\])?==", text, flags=re.M)
    }
    missing = []
    for dist in distributions():
        if canonicalize_name(dist.metadata["Name"]) not in locked:
            continue
        for line in dist.requires or []:
            req = Requirement(line)
            if not req.extras or (req.marker is not None and not req.marker.evaluate({"extra": ""})):
                continue
            name = canonicalize_name(req.name)
            if name in locked and not req.extras <= locked[name]:
                missing.append(f"{dist.metadata['Name']} asks for {req.name}[{','.join(sorted(req.extras))}]")
    assert missing == [], missing


def test_litellm_pin_is_a_checked_release() -> None:
    from importlib.metadata import version

    v = version("litellm")
    assert v not in {"1.82.7", "1.82.8"} and not v.startswith("1.107."), v
    assert v == "1.110.2"


def test_the_lock_writer_keeps_a_pins_extras() -> None:
    """scripts/lock.py rewrites the lock from its pins: an extra dropped there would bring the CI failure back."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("lock_script", ROOT / "scripts" / "lock.py")
    assert spec is not None and spec.loader is not None
    lock = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lock)
    text = "# c\nhttpx[http2]==0.28.1 \\\n    --hash=sha256:ab\npip==26.3\nmarkdown-it-py[linkify,plugins]==4.3.0\n"
    assert lock.pins(text) == [
        ("httpx", "[http2]", "0.28.1"),
        ("pip", "", "26.3"),
        ("markdown-it-py", "[linkify,plugins]", "4.3.0"),
    ]
    real = (ROOT / "requirements.lock").read_text(encoding="utf-8")
    starts = [line for line in real.splitlines() if line[:1].isalpha()]
    assert len(lock.pins(real)) == len(starts)  # every pin of the real lock parses, extras and all
