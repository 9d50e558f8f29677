"""Provides the command line's number types: a float option takes finite numbers only.

click's FLOAT and FloatRange take "nan", "inf" and "1e309": NaN passes every range check
(each comparison with it is false) and reached the statistics as an alpha, a margin or a
target, where it either raised (a traceback) or was silently used. Every float option of
the command line uses these types, so such a value is refused with exit status 2 and a
message naming the option; `tests/test_cli_numbers.py` walks every command to hold it.
"""

from __future__ import annotations

import math
from typing import Any

import click


def _finite(value: float, param: click.Parameter | None, ctx: click.Context | None) -> float:
    if not math.isfinite(value):
        raise click.BadParameter(f"{value!r} is not a finite number.", ctx=ctx, param=param)
    return value


class FiniteFloat(click.types.FloatParamType):
    """A float option that refuses NaN and infinities."""

    name = "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        return _finite(super().convert(value, param, ctx), param, ctx)


class FiniteRange(click.FloatRange):
    """click.FloatRange that refuses NaN and infinities (which a range check lets through)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        return _finite(super().convert(value, param, ctx), param, ctx)


FINITE = FiniteFloat()
