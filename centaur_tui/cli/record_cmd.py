"""Provides `centaur verify` and `centaur bundle`: the tamper-evident record and the publishable bundle."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from centaur_tui.services.session import open_session


@click.command()
@click.argument("session")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON (every break, the head).")
def verify(session: str, as_json: bool) -> None:
    """Recompute the session's hash chain; exit 0 when clean, 1 at a break (naming the first row)."""
    import json

    from centaur_tui.services.record import BROKEN_EXIT, check_json, verify_session

    check = verify_session(open_session(session))
    if as_json:
        click.echo(json.dumps(check_json(check), indent=2, sort_keys=True))
    elif check.clean:
        rows = ", ".join(f"{n:,} {table}" for table, n in check.rows.items())
        click.echo(f"chain clean: {check.length:,} rows ({rows})")
        click.echo(f"head {check.head}")
    else:
        first = check.breaks[0]
        at = f" (chain position {first.position})" if first.position is not None else ""
        click.secho(f"chain broken at {first.table} row {first.row_id}{at}: {first.what}", fg="red", err=True)
        if len(check.breaks) > 1:
            click.echo(f"{len(check.breaks) - 1} more break(s) after it; --json lists them all", err=True)
        click.echo(f"stored head {check.head} (length {check.length})", err=True)
    if not check.clean:
        sys.exit(BROKEN_EXIT)


@click.command()
@click.argument("session")
@click.argument("out_dir", type=click.Path(path_type=Path))
def bundle(session: str, out_dir: Path) -> None:
    """Write a folder a reviewer opens offline: report, judgment browser, CSVs, database, manifest."""
    from centaur_tui.services.bundle import write_bundle
    from centaur_tui.services.session import SIMULATED_BANNER

    result = write_bundle(open_session(session), out_dir)
    if result.simulated:
        click.secho(SIMULATED_BANNER, fg="yellow")
    click.echo(f"{out_dir}: {len(result.files)} files; open {out_dir / 'index.html'} in a browser")
    click.echo(f"chain head {result.head} ({result.length:,} rows)")
    if not result.clean:
        click.secho(
            "the chain does not verify: the bundle says so in manifest.json (`centaur verify` names the break)",
            fg="red",
            err=True,
        )
