"""Provides the hash lock: rewrites requirements.lock with the sha256 of every file PyPI holds for each pin.

Usage: `python scripts/lock.py` (reads the `name==version` pins of requirements.lock, hashes or
not, and asks PyPI's JSON API for the digests of that exact release). Every wheel and sdist of
the release is listed, so the lock installs on any platform PyPI has a file for; `pip install
--require-hashes -r requirements.lock` then refuses any file whose digest differs (a re-uploaded
or tampered release). Run it after changing a pin; the Makefile installs from the result.
"""

from __future__ import annotations

import json
import re
import sys
import urllib.request
from pathlib import Path

LOCK = Path(__file__).resolve().parent.parent / "requirements.lock"
# A pin may carry extras (`httpx[http2]==0.28.1`): a locked package that asks for another with
# extras (litellm for httpx[http2]) is otherwise resolved by pip 23's hash mode as a second,
# unpinned requirement, and refused the day the other publishes a newer release.
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[A-Za-z0-9._,-]+\])?==([^\s\\;]+)")
HEADER = """\
# Hash-locked: `pip install --require-hashes -r requirements.lock` (the Makefile does).
# Written by scripts/lock.py from PyPI's digests; edit a pin, then run `python scripts/lock.py`.
# pip and setuptools (the build backend) are pinned here too. Never litellm 1.82.7, 1.82.8 or 1.107.x.
"""


def pins(text: str) -> list[tuple[str, str, str]]:
    """The `(name, extras, version)` pins of a lock file, in order, ignoring hashes, comments and
    continuations; `extras` is the bracketed text as written (`"[http2]"`) or empty."""
    found = []
    for line in text.splitlines():
        match = PIN.match(line.strip())
        if match:
            found.append((match.group(1), match.group(2) or "", match.group(3)))
    return found


def digests(name: str, version: str) -> list[str]:
    """The sha256 of every file of `name==version` on PyPI, sorted."""
    # The project's JSON, not the release's (`/pypi/NAME/VERSION/json` is not reachable from here).
    with urllib.request.urlopen(f"https://pypi.org/pypi/{name}/json", timeout=60) as reply:
        project = json.load(reply)
    found = sorted({f["digests"]["sha256"] for f in project["releases"].get(version, [])})
    if not found:
        raise SystemExit(f"{name}=={version}: PyPI lists no file")
    return found


def main() -> int:
    entries = pins(LOCK.read_text(encoding="utf-8"))
    bad = [
        f"{n}=={v}"
        for n, _, v in entries
        if n.lower() == "litellm" and (v in {"1.82.7", "1.82.8"} or v.startswith("1.107"))
    ]
    if bad:
        raise SystemExit(f"refusing a compromised release: {', '.join(bad)}")
    lines = [HEADER]
    for name, extras, version in sorted(entries, key=lambda e: e[0].lower()):
        hashes = digests(name, version)
        lines.append(f"{name}{extras}=={version} \\\n" + " \\\n".join(f"    --hash=sha256:{h}" for h in hashes) + "\n")
    LOCK.write_text("".join(lines), encoding="utf-8")
    print(f"{LOCK.name}: {len(entries)} pins hashed", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
