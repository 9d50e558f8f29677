"""Provides the report process: a session's report document computed in a separate process with the statistics loaded.

The report document is what `centaur report` prints (`services.report.session_report`, same
default options). The app asks for it from the results screen. Computing it in the app's own
process costs about 1.7-2.2 s at the paper's scale, against 1.1-1.3 s in a plain process: the
statistics hold the GIL against the event loop (timers, rendering), and the event loop
against them. `ReportProcess` keeps one spawned process (started when a session overview
opens, so pandas and scipy load there meanwhile, and it computes the session's report ahead)
that receives a `Study`, reads the session database itself and sends the document back,
keeping it while the data is unchanged (`services.report_cache.ReportCache`); the app's
process never imports pandas.

The process ends when its stdin closes: when the program ends, or is killed. If it dies
mid-request it is started again once; if that fails as well, the error is raised to the
caller (the results screen shows it). Documents are also kept on disk between programs
(`services.report_disk_cache`).
"""

from __future__ import annotations

import os
import pickle
import struct
import subprocess
import sys
import threading
import traceback
from typing import Any

from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.study import Study
from centaur_tui.report.document import ReportDocument


def warm_up(study: Study) -> None:
    """Run the statistics once on a small synthetic design of this session (one run, two tasks, no database).

    A fresh process computes its first report about 0.4 s slower than the next ones (code
    paths loaded on first use); this pays that ahead for a session with nothing stored yet.
    """
    from centaur_tui.stats.frames import build_frames, design_from_session
    from centaur_tui.stats.report import REPORT_DEFAULTS, build_report
    from centaur_tui.stats.synthetic import synthetic_rows

    tasks = study.session.tasks[:2]
    if not tasks or not study.session.judges:  # a study of imported data only: nothing synthetic to warm
        return
    small = study.session.model_copy(update={"runs": 1, "tasks": tasks})
    rubric = {t: [(d, study.rubric(t).kind(d)) for d in study.rubric(t).ids] for t in tasks}
    rows = synthetic_rows(small, rubric, seed=0)
    general = [d.id for d in study.universal.general_dimensions]
    design = design_from_session(
        small, simulated=True, general_dimensions=general, rubric={t: study.rubric(t).ids for t in tasks}
    )
    frames = build_frames(rows.judgment_rows, rows.score_rows, rows.output_rows, rows.comparisons, design)
    build_report(frames, REPORT_DEFAULTS)


_HEADER = struct.Struct("!Q")


def _write_frame(stream: Any, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)))
    stream.write(data)
    stream.flush()


def _read_frame(stream: Any) -> Any:
    """The next pickled object on the stream; EOFError when it closed (the other side ended)."""
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        raise EOFError("the pipe closed")
    size = _HEADER.unpack(head)[0]
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the pipe closed mid-message")
    return pickle.loads(data)  # our own process on our own pipe


def serve() -> None:
    """The report process: load the statistics, then answer one request at a time until stdin closes.

    A request is ("doc", Study): reply ("ok", ReportDocument), ("user", (message, title)) for a
    CentaurError, or ("bug", traceback text); or ("prefetch", Study), no reply: compute the
    document into the `ReportCache` (for a session not run yet: `warm_up`).

    Requests come as pickled frames on stdin, replies go as pickled frames on the original
    stdout; file descriptors 0-2 are pointed at /dev/null so that nothing (warnings, stray
    prints) reaches the app's terminal or corrupts the replies.
    """
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    sys.stdout = sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    import centaur_tui.store  # what a request answered from the cache needs
    import centaur_tui.store.audit  # noqa: F401
    from centaur_tui.services.report_cache import ReportCache
    from centaur_tui.services.report_disk_cache import cache_dir

    def load_statistics() -> None:  # about 1.1 s, meanwhile requests answered from the disk cache go out
        import centaur_tui.stats.frames
        import centaur_tui.stats.report  # noqa: F401

    threading.Thread(target=load_statistics, name="load-statistics", daemon=True).start()
    cache = ReportCache(cache_dir())
    while True:
        try:
            kind, study = _read_frame(requests)
        except (EOFError, OSError):
            return  # the app ended (or was killed)
        if kind == "prefetch":
            try:
                if study.database.exists():
                    cache.doc(study)
                else:
                    warm_up(study)
            except Exception:  # noqa: BLE001 - a failed prefetch only means computing on request
                pass
            continue
        try:
            reply: tuple[str, Any] = ("ok", cache.doc(study))
        except CentaurError as exc:
            reply = ("user", (exc.message, exc.title))
        except Exception as exc:  # noqa: BLE001 - crosses the process boundary as text
            reply = ("bug", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
        try:
            _write_frame(replies, reply)
        except OSError:
            return


class ReportProcess:
    """One child process that builds report documents (`serve`); thread-safe, one request at a time.

    A plain subprocess (not multiprocessing): it needs no resource tracker (which fails under
    Textual's captured stderr), never re-imports the program's main module, and is in its
    own session, so terminal signals do not reach it. `start()` is cheap to call again;
    `doc()` blocks (call it from a thread worker).
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self) -> None:
        """Start the process (it loads pandas and scipy at once) unless it is running."""
        with self._lock:
            if self.alive:
                return
            self._stop()
            # The child sees the same import path as this process (benchmarks and tests add to it).
            code = (
                f"import sys; sys.path[:0] = {sys.path!r}; "
                "from centaur_tui.services.report_process import serve; serve()"
            )
            try:
                self._process = subprocess.Popen(  # our own interpreter and module
                    [sys.executable, "-c", code],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
            except OSError as exc:
                raise CentaurError(
                    f"the statistics process could not start ({sys.executable}: {exc})", title="Report"
                ) from None

    def prefetch(self, study: Study) -> None:
        """Start the process if needed and have it compute this session's document ahead (no reply).

        A later `doc()` for the same session on unchanged data then answers at once.
        """
        with self._lock:
            self.start()
            assert self._process is not None and self._process.stdin is not None
            try:
                _write_frame(self._process.stdin, ("prefetch", study))
            except OSError:
                self._stop()

    def doc(self, study: Study) -> ReportDocument:
        """The report document of a session, computed in the process.

        Raises:
            CentaurError: the statistics or the store refused (their own message), or the
                process died twice in a row.
        """
        with self._lock:
            for attempt in (1, 2):
                self.start()
                process = self._process
                assert process is not None and process.stdin is not None and process.stdout is not None
                try:
                    _write_frame(process.stdin, ("doc", study))
                    kind, payload = _read_frame(process.stdout)
                    break
                except (EOFError, OSError) as exc:
                    code = process.poll()
                    self._stop()
                    if attempt == 2:
                        raise CentaurError(
                            f"the statistics process stopped (exit code {code}): {exc}; r tries again", title="Report"
                        ) from None
        if kind == "ok":
            return payload
        if kind == "user":
            message, title = payload
            raise CentaurError(message, title=title)
        raise RuntimeError(f"the statistics process failed: {payload}")

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(1)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def close(self) -> None:
        """Stop the process (after the request in flight, if any)."""
        with self._lock:
            self._stop()


_shared: ReportProcess | None = None
_shared_lock = threading.Lock()


def shared_report_process() -> ReportProcess:
    """The program's one report process (started by the first `start()`, `prefetch()` or `doc()`)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = ReportProcess()
        return _shared
