"""Provides a pytest plugin that moves the clock ahead, changes the time zone and reseeds randomness, before collection.

Loaded with `-p tests.support.skewed_clock` by tests/test_collection.py: a test id computed from
the clock, from randomness or from the environment then differs from the one the suite's own
process collected, and the guard names it. pytest-xdist refuses a whole run when its workers
collect different ids (issue 21: a date in a parametrize list did so on a busy machine).
"""

from __future__ import annotations

import os
import random
import time

SKEW_S = 172_801.0
"""Two days and a second: any id made from the date or the time of day changes, whatever the
time zone chosen below (at most 26 hours from here) takes back."""

_time, _time_ns, _monotonic = time.time, time.time_ns, time.monotonic
_localtime, _gmtime, _strftime, _ctime = time.localtime, time.gmtime, time.strftime, time.ctime


def _now() -> float:
    return _time() + SKEW_S


time.time = _now
time.time_ns = lambda: _time_ns() + int(SKEW_S * 1e9)
time.monotonic = lambda: _monotonic() + SKEW_S
time.localtime = lambda seconds=None: _localtime(_now() if seconds is None else seconds)
time.gmtime = lambda seconds=None: _gmtime(_now() if seconds is None else seconds)
time.ctime = lambda seconds=None: _ctime(_now() if seconds is None else seconds)
time.strftime = lambda fmt, t=None: _strftime(fmt, _localtime(_now()) if t is None else t)  # type: ignore[assignment]


random.seed(os.urandom(16))
os.environ["CENTAUR_COLLECTION_PROBE"] = os.urandom(8).hex()
# `datetime.now()` and `date.today()` read the C clock, which cannot be moved from here (replacing
# the datetime classes crashed pandas), but they read it in the local zone: a zone whose date
# differs from this one's (UTC-12 and UTC+14 are 26 hours apart) changes both.
_today = _strftime("%Y-%m-%d", _localtime())
for _zone in ("Etc/GMT-14", "Etc/GMT+12"):
    os.environ["TZ"] = _zone
    time.tzset()
    if _strftime("%Y-%m-%d", _localtime()) != _today:
        break
