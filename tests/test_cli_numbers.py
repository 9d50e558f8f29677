"""Every float option of the command line refuses NaN and infinities with exit status 2, naming the option."""

from __future__ import annotations

from collections.abc import Iterator

import click
import pytest
from click.testing import CliRunner

from centaur_tui.cli.main import cli
from centaur_tui.cli.params import FiniteFloat, FiniteRange


def _commands(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))
        else:
            yield (*path, name), command


def _float_options() -> list[tuple[tuple[str, ...], click.Command, click.Option]]:
    found = []
    for path, command in _commands(cli):
        for param in command.params:
            if isinstance(param, click.Option) and isinstance(param.type, click.types.FloatParamType):
                found.append((path, command, param))
    return found


FLOAT_OPTIONS = _float_options()
IDS = [f"{' '.join(path)} {param.opts[0]}" for path, _, param in FLOAT_OPTIONS]


def test_the_walk_finds_the_float_options() -> None:
    # plan, report, status and assign take floats; a walk that finds none would test nothing.
    assert {path[0] for path, _, _ in FLOAT_OPTIONS} >= {"plan", "report", "status", "assign"}
    assert len(FLOAT_OPTIONS) >= 12


@pytest.mark.parametrize(("path", "command", "option"), FLOAT_OPTIONS, ids=IDS)
def test_every_float_option_is_finite_typed(
    path: tuple[str, ...], command: click.Command, option: click.Option
) -> None:
    assert isinstance(option.type, FiniteFloat | FiniteRange), (path, option.opts)


@pytest.mark.parametrize(("path", "command", "option"), FLOAT_OPTIONS, ids=IDS)
@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "1e309"])
def test_nan_and_infinity_are_refused(
    path: tuple[str, ...], command: click.Command, option: click.Option, value: str
) -> None:
    args = ["no-such-session" for p in command.params if isinstance(p, click.Argument)]
    res = CliRunner().invoke(cli, [*path, *args, f"{option.opts[0]}={value}"])
    assert res.exit_code == 2, res.output
    assert option.opts[0] in res.output and "Traceback" not in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)


def test_finite_numbers_still_pass_and_ranges_still_hold() -> None:
    ctx = click.Context(cli)
    assert FiniteRange(0.0, 1.0).convert("0.25", None, ctx) == 0.25
    assert FiniteFloat().convert("1e300", None, ctx) == 1e300
    with pytest.raises(click.BadParameter):
        FiniteRange(0.0, 1.0).convert("1.5", None, ctx)
