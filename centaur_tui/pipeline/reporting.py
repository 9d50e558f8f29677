"""Provides a session's report document for the app, computed in a separate process with the statistics loaded.

The report document is what `centaur report` prints (same reads, same default options, same
functions). The app asks for it from the results screen. Computing it in the app's own
process costs about 1.7-2.2 s at the paper's scale, against 1.1-1.3 s in a plain process: the
statistics hold the GIL against the event loop (timers, rendering), and the event loop
against them. `ReportProcess` keeps one spawned process (started when a session overview
opens, so pandas and scipy load there meanwhile, and it computes the session's report ahead)
that receives a `Study`, reads the session database itself and sends the document back,
keeping it while the data is unchanged (`ReportCache`); the app's process never imports pandas.

The process ends when its stdin closes: when the program ends, or is killed. If it dies
mid-request it is started again once; if that fails as well, the error is raised to the
caller (the results screen shows it). Documents are also kept on disk between programs
(`ReportCache`, `cache_dir()`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import pickle
import struct
import subprocess
import sys
import threading
import traceback
from pathlib import Path
from typing import Any

from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.study import Study
from centaur_tui.settings import settings


def session_report_doc(study: Study, store: Any) -> dict[str, Any]:
    """The report document of a session, built exactly as `centaur report` builds it with its default options.

    Blocking: it reads the database and runs every statistic. Sessions with `[human_workers]`
    get the `human_workers` section as in `centaur report` (`human_workers_section`).
    """
    from concurrent.futures import ThreadPoolExecutor

    from centaur_tui.store.audit import report_inputs

    general = [d.id for d in study.universal.general_dimensions]
    with ThreadPoolExecutor(1, thread_name_prefix="results-read") as pool:
        meta, rows = report_inputs(store, general, pool)
        # Imported after the reads started: on a cold start the score aggregate (SQLite, no
        # GIL) runs while pandas and scipy load (about 1.1 s).
        from centaur_tui.stats.frames import build_frames, design_from_session
        from centaur_tui.stats.report import ReportOptions, build_report

        simulated = meta["simulated"] == "true" if "simulated" in meta else study.session.simulated
        design = design_from_session(study.session, simulated=simulated, general_dimensions=general,
                                     rubric={t: study.rubric(t).ids for t in study.tasks})
        options = ReportOptions()
        frames = build_frames(design=design, judge_kinds=options.judge_kinds, **rows)
    doc = build_report(frames, options).doc
    section = human_workers_section(study, store, doc)
    if section is not None:
        doc["human_workers"] = section
    return doc


def human_workers_section(study: Study, store: Any, doc: dict[str, Any]) -> dict[str, Any] | None:
    """The human-worker arm's section of a report document (`stats.human_arm.human_arm_doc`), or None.

    Only for sessions that declare `[human_workers]`: which assistant helps human workers
    most beside the worker model, and productivity per condition. `centaur report` and the
    results screen both add it with this function.
    """
    if study.session.human_workers is None:
        return None
    from centaur_tui.stats.human_arm import human_arm_doc
    from centaur_tui.store.work import WorkStore

    return human_arm_doc(doc, WorkStore(store).productivity_rows())


def report_doc_of(study: Study) -> dict[str, Any]:
    """Open the session's database and build its report document.

    Raises:
        CentaurError: the session has not been run (no database).
    """
    from centaur_tui.store import Store

    _require_database(study)
    with Store(study.database) as store:
        return session_report_doc(study, store)


def _require_database(study: Study) -> None:
    if not study.database.exists():
        raise CentaurError(f"{study.database} does not exist yet: run the session first", title="Nothing to report")


CACHE_FILES = 20
"""Report documents kept on disk (the most recently written)."""


def cache_dir() -> Path | None:
    """Where report documents are kept between programs: $CENTAUR_CACHE_DIR (empty: nowhere), else the user's cache."""
    return settings().report_cache()


@functools.cache
def code_version() -> str:
    """A digest of the code a report document depends on (domain, statistics, store reads, this module).

    Part of the disk cache's key: a document computed by other code is never reused.
    """
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted([*package.joinpath("domain").glob("*.py"), *package.joinpath("stats").glob("*.py"),
                        *package.joinpath("store").glob("*.py"), Path(__file__).resolve()]):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


class ReportCache:
    """What the report process keeps: the last database open, its last document, and documents on disk.

    The document is reused while the store's fingerprint (`store.audit.fingerprint`: counts,
    highest judgment id, valid count, meta, submitted deliverables) and the session are
    unchanged, so the overview can have it computed ahead (a prefetch) and the results
    screen gets it at once; any new judgment, comparison or meta row means computing again.
    Documents are also written (JSON) to `cache_dir()`, keyed by the database file, the
    fingerprint, the session with its tasks' rubrics and `code_version()`, so a later
    program on unchanged data shows the results without computing them. The store stays
    open: its pages stay cached, and opening one writes its schema row.

    Args:
        directory: Where documents are kept on disk; None: nowhere.
    """

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory
        self._store: Any = None
        self._store_key: tuple[Any, ...] | None = None
        self._doc: dict[str, Any] | None = None
        self._doc_key: tuple[Any, ...] | None = None

    def _open(self, study: Study) -> Any:
        from centaur_tui.store import Store

        _require_database(study)
        info = study.database.stat()
        key = (str(study.database.resolve()), info.st_dev, info.st_ino)
        if key != self._store_key:
            self.close()
            self._store, self._store_key = Store(study.database), key
        return self._store

    def doc(self, study: Study) -> dict[str, Any]:
        """The session's report document: the kept one when nothing it reads has changed, else computed now."""
        from centaur_tui.store.audit import fingerprint

        store = self._open(study)
        # Taken before the reads: a change during them makes the next request compute again.
        # The session and the rubrics of its tasks (task files may change between programs).
        design = json.dumps([study.session.model_dump_json(), [d.id for d in study.universal.general_dimensions],
                             {t: study.rubric(t).ids for t in study.tasks}], sort_keys=True, default=list)
        key = (self._store_key, design, fingerprint(store))
        if self._doc is not None and key == self._doc_key:
            return self._doc
        self._doc = self._doc_key = None
        path = self._file(key)
        doc = self._load(path)
        if doc is None:
            doc = session_report_doc(study, store)
            self._save(path, doc)
        self._doc, self._doc_key = doc, key
        return doc

    def _file(self, key: tuple[Any, ...]) -> Path | None:
        if self.directory is None:
            return None
        text = json.dumps([list(key[0]), key[1], list(key[2]), code_version()], default=list)
        return self.directory / f"{hashlib.sha256(text.encode()).hexdigest()[:32]}.json"

    @staticmethod
    def _load(path: Path | None) -> dict[str, Any] | None:
        if path is None:
            return None
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # missing, unreadable or half-written: compute
        return doc if isinstance(doc, dict) else None

    def _save(self, path: Path | None, doc: dict[str, Any]) -> None:
        """Write the document (atomically) and keep only the CACHE_FILES newest; a failure only costs a later compute."""
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_suffix(f".{os.getpid()}.tmp")
            partial.write_text(json.dumps(doc, allow_nan=False, ensure_ascii=False), encoding="utf-8")
            os.replace(partial, path)
            kept = sorted(path.parent.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
            for old in kept[CACHE_FILES:]:
                old.unlink(missing_ok=True)
        except (OSError, ValueError):
            pass

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
        self._store = self._store_key = self._doc = self._doc_key = None


def warm_up(study: Study) -> None:
    """Run the statistics once on a small synthetic design of this session (one run, two tasks, no database).

    A fresh process computes its first report about 0.4 s slower than the next ones (code
    paths loaded on first use); this pays that ahead for a session with nothing stored yet.
    """
    from centaur_tui.stats.frames import build_frames, design_from_session
    from centaur_tui.stats.report import ReportOptions, build_report
    from centaur_tui.stats.synthetic import synthetic_rows

    tasks = study.session.tasks[:2]
    small = study.session.model_copy(update={"runs": 1, "tasks": tasks})
    rubric = {t: [(d, study.rubric(t).kind(d)) for d in study.rubric(t).ids] for t in tasks}
    rows = synthetic_rows(small, rubric, seed=0)
    general = [d.id for d in study.universal.general_dimensions]
    design = design_from_session(small, simulated=True, general_dimensions=general,
                                 rubric={t: study.rubric(t).ids for t in tasks})
    frames = build_frames(rows.judgment_rows, rows.score_rows, rows.output_rows, rows.comparisons, design)
    build_report(frames, ReportOptions())


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
    return pickle.loads(data)  # noqa: S301 - our own process on our own pipe


def serve() -> None:
    """The report process: load the statistics, then answer one request at a time until stdin closes.

    A request is ("doc", Study): reply ("ok", document), ("user", (message, title)) for a
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
    import centaur_tui.store  # noqa: F401 - what a request answered from the cache needs
    import centaur_tui.store.audit  # noqa: F401

    def load_statistics() -> None:  # about 1.1 s, meanwhile requests answered from the disk cache go out
        import centaur_tui.stats.frames  # noqa: F401
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
            except Exception:  # noqa: BLE001, S110 - a failed prefetch only means computing on request
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
            code = f"import sys; sys.path[:0] = {sys.path!r}; from centaur_tui.pipeline.reporting import serve; serve()"
            try:
                self._process = subprocess.Popen(  # noqa: S603 - our own interpreter and module
                    [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL, start_new_session=True,
                )
            except OSError as exc:
                raise CentaurError(f"the statistics process could not start ({sys.executable}: {exc})",
                                   title="Report") from None

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

    def doc(self, study: Study) -> dict[str, Any]:
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
                            f"the statistics process stopped (exit code {code}): {exc}; r tries again",
                            title="Report") from None
        if kind == "ok":
            return payload  # type: ignore[no-any-return]
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
