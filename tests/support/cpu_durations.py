"""Provides a pytest plugin that reports each test's CPU seconds (its process and the subprocesses it waited for).

`pytest -p tests.support.cpu_durations` prints the 40 costliest tests and the costliest files by
CPU time, which, unlike `--durations` (wall time), hardly changes with the machine's load: the
way to find what makes `make test` slow on a shared machine. Works under pytest-xdist (each
report carries its figure to the controller). Setup and teardown count with their test.
"""

from __future__ import annotations

import resource
from collections import defaultdict
from typing import Any

import pytest

_costs: dict[str, float] = {}
_started: dict[str, float] = {}


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Any:
    if call.when == "setup":
        _started[item.nodeid] = _cpu()
    outcome = yield
    if call.when == "teardown" and item.nodeid in _started:
        outcome.get_result().user_properties.append(("cpu_s", _cpu() - _started.pop(item.nodeid)))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for name, value in report.user_properties:
        if name == "cpu_s":
            _costs[report.nodeid] = float(value)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _costs:
        return
    write = terminalreporter.write_line
    terminalreporter.section("CPU seconds per test (tests.support.cpu_durations)")
    for nodeid, seconds in sorted(_costs.items(), key=lambda kv: -kv[1])[:40]:
        write(f"{seconds:8.2f}  {nodeid}")
    files: dict[str, float] = defaultdict(float)
    for nodeid, seconds in _costs.items():
        files[nodeid.split("::")[0]] += seconds
    write("per file:")
    for name, seconds in sorted(files.items(), key=lambda kv: -kv[1])[:25]:
        write(f"{seconds:8.2f}  {name}")
    write(f"{sum(_costs.values()):8.2f}  in all ({len(_costs)} tests)")
