"""Settings and the diagnostics log: the environment read in one place, records in a file and never on the screen."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from centaur_tui import logs
from centaur_tui.domain.errors import SettingsError
from centaur_tui.logs import LITELLM_LOGGERS, configure_logging
from centaur_tui.services.report_disk_cache import cache_dir
from centaur_tui.services.session import resolve_session
from centaur_tui.settings import Settings, settings
from tests.support.sessions import small_session_toml

VARIABLES = (
    "CENTAUR_TASKS",
    "CENTAUR_SESSIONS",
    "CENTAUR_CACHE_DIR",
    "XDG_CACHE_HOME",
    "CENTAUR_LOG_FILE",
    "CENTAUR_LOG_LEVEL",
)


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch):
    """No setting in the environment; the test run's log file is configured again afterwards."""
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    yield monkeypatch
    monkeypatch.undo()
    configure_logging()


def _screen_streams() -> list[logging.Handler]:
    """Handlers of the program's and litellm's loggers that write to the terminal."""
    found = []
    for name in (logs.LOGGER, *LITELLM_LOGGERS):
        for handler in logging.getLogger(name).handlers:
            stream = getattr(handler, "stream", None)
            if stream is not None and stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
                found.append(handler)
    return found


def test_every_setting_has_a_default_and_a_description(clean_env, tmp_path: Path) -> None:
    clean_env.setenv("HOME", str(tmp_path))
    s = settings()
    assert (s.tasks, s.sessions) == (Path("tasks"), Path("sessions"))
    assert s.report_cache() == tmp_path / ".cache" / "centaur-tui" / "reports"
    assert s.log_path() == tmp_path / ".cache" / "centaur-tui" / "centaur.log"
    assert s.level() == logging.INFO
    assert all(field.description for field in Settings.model_fields.values())


def test_settings_read_the_environment(clean_env, tmp_path: Path) -> None:
    clean_env.setenv("CENTAUR_TASKS", str(tmp_path / "t"))
    clean_env.setenv("CENTAUR_SESSIONS", str(tmp_path / "s"))
    clean_env.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    clean_env.setenv("CENTAUR_LOG_LEVEL", "debug")
    s = settings()
    assert (s.tasks, s.sessions) == (tmp_path / "t", tmp_path / "s")
    assert s.report_cache() == cache_dir() == tmp_path / "xdg" / "centaur-tui" / "reports"
    assert s.log_path() == tmp_path / "xdg" / "centaur-tui" / "centaur.log"
    assert s.level() == logging.DEBUG
    clean_env.setenv("CENTAUR_CACHE_DIR", str(tmp_path / "reports"))
    clean_env.setenv("CENTAUR_LOG_FILE", str(tmp_path / "my.log"))
    assert cache_dir() == tmp_path / "reports" and settings().log_path() == tmp_path / "my.log"
    clean_env.setenv("CENTAUR_CACHE_DIR", "")
    clean_env.setenv("CENTAUR_LOG_FILE", "")
    assert cache_dir() is None and settings().log_path() is None  # set empty: none kept


def test_a_bare_session_name_is_found_in_the_sessions_folder_setting(clean_env, tmp_path: Path) -> None:
    (tmp_path / "study.toml").write_text(small_session_toml(name="study"), encoding="utf-8")
    clean_env.setenv("CENTAUR_SESSIONS", str(tmp_path))
    assert resolve_session("study") == tmp_path / "study.toml"
    clean_env.setenv("CENTAUR_SESSIONS", str(tmp_path / "elsewhere"))
    assert resolve_session("study") == Path("study")


def test_a_bad_setting_is_an_error_naming_the_variable(clean_env) -> None:
    clean_env.setenv("CENTAUR_LOG_LEVEL", "loud")
    with pytest.raises(SettingsError, match="CENTAUR_LOG_LEVEL: unknown log level 'loud'"):
        settings()


def test_records_go_to_the_log_file_and_never_to_the_screen(clean_env, tmp_path: Path, capfd) -> None:
    path = tmp_path / "logs" / "centaur.log"
    clean_env.setenv("CENTAUR_LOG_FILE", str(path))
    clean_env.setenv("CENTAUR_LOG_LEVEL", "INFO")
    assert configure_logging() == path == logs.log_file()
    assert configure_logging() == path  # configured again: one file handler, not two
    assert len([h for h in logging.getLogger(logs.LOGGER).handlers if isinstance(h, logging.FileHandler)]) == 1
    log = logging.getLogger("centaur_tui.some.module")
    log.debug("below the level")
    log.info("session opened")
    log.error("it failed", exc_info=ValueError("boom"))
    logging.getLogger("LiteLLM").info("litellm chatter")
    logging.getLogger("LiteLLM").warning("litellm warning")
    text = path.read_text(encoding="utf-8")
    assert "INFO centaur_tui.some.module: session opened" in text
    assert "ERROR centaur_tui.some.module: it failed" in text and "ValueError: boom" in text
    assert "LiteLLM: litellm warning" in text
    assert "below the level" not in text and "litellm chatter" not in text
    assert _screen_streams() == []
    assert capfd.readouterr() == ("", "")


def test_an_empty_log_file_setting_writes_nothing_anywhere(clean_env, tmp_path: Path, capfd) -> None:
    clean_env.setenv("CENTAUR_LOG_FILE", "")
    clean_env.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert configure_logging() is None and logs.log_file() is None
    # An error record with no handler would reach logging's last resort, which prints to stderr.
    logging.getLogger("centaur_tui.x").error("nobody reads this")
    logging.getLogger("LiteLLM").error("nor this")
    assert capfd.readouterr() == ("", "")
    assert list(tmp_path.iterdir()) == []


def test_an_unwritable_log_file_never_prints_a_traceback(clean_env, tmp_path: Path, capfd) -> None:
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    clean_env.setenv("CENTAUR_LOG_FILE", str(tmp_path / "a-file" / "centaur.log"))  # its folder is a file
    configure_logging()
    logging.getLogger("centaur_tui.x").error("lost")
    assert capfd.readouterr() == ("", "")


def test_litellm_logs_to_the_file_after_its_import(clean_env, tmp_path: Path, capfd) -> None:
    from centaur_tui.llm.runtime import litellm

    path = tmp_path / "centaur.log"
    clean_env.setenv("CENTAUR_LOG_FILE", str(path))
    configure_logging()
    litellm()  # imported (or already): its stderr handler is replaced by the log file
    assert _screen_streams() == []
    logging.getLogger("LiteLLM").warning("from litellm")
    assert "from litellm" in path.read_text(encoding="utf-8")
    assert capfd.readouterr() == ("", "")


@pytest.mark.slow
def test_the_entry_point_logs_the_command_and_the_session_to_the_file(tmp_path: Path) -> None:
    session = tmp_path / "small.toml"
    session.write_text(small_session_toml(), encoding="utf-8")
    log = tmp_path / "centaur.log"
    env = {**os.environ, "CENTAUR_LOG_FILE": str(log), "CENTAUR_LOG_LEVEL": "INFO"}
    done = subprocess.run(
        [sys.executable, "-m", "centaur_tui.cli", "check", str(session)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    text = log.read_text(encoding="utf-8")
    assert f"started (pid {os.getpid()}" not in text and " started (pid " in text and f"check {session}" in text
    assert f"session small read from {session}: 2 task(s), 1 run(s)" in text
    assert "INFO" not in done.stdout + done.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "centaur_tui.cli", "check", str(session)],
        env={**env, "CENTAUR_LOG_LEVEL": "loud"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and "Invalid setting: CENTAUR_LOG_LEVEL: unknown log level 'loud'" in bad.stderr
