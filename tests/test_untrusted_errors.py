"""Provider error text is untrusted: escapes stripped, keys redacted, endpoint named, explanation kept, hints.

The hostile bodies come from a server on 127.0.0.1 through litellm's real HTTP path.
"""

from __future__ import annotations

import asyncio
import socket
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from centaur_tui.cli.main import cli
from centaur_tui.domain.errors import ProviderError
from centaur_tui.domain.records import CallFailure
from centaur_tui.domain.session import Endpoint, Limits
from centaur_tui.domain.untrusted import clean_untrusted, looks_like_secret, redact, strip_controls
from centaur_tui.llm import CallFailed, CallRequest, FatalProviderError, Gateway
from centaur_tui.ui.app import create_app
from tests.support.hostile_server import error_reply, hostile_server
from tests.support.sessions import small_session_toml
from tests.support.waits import wait_for

KEY = "sk-proj-Zq81hostileEchoedKey0000000000000000abcd"
FAST = Limits(max_retries=1, backoff_base_s=0.0, backoff_max_s=0.0, timeout_s=10)
ESCAPES = "\x1b]0;pwned title\x07\x1b[2J\x1b[31mred\x1b[0m\x9b2J\x07\x08\r"


def run_call(
    api_base: str,
    key_env: str | None = "HOSTILE_TEST_KEY",
    limits: Limits = FAST,
) -> tuple[BaseException, list[CallFailure]]:
    failures: list[CallFailure] = []
    gateway = Gateway(limits, on_failure=failures.append)
    ep = Endpoint(model="openai/hostile", api_base=api_base, api_key_env=key_env)
    req = CallRequest(
        key="k",
        stage="judging",
        endpoint=ep,
        messages=[{"role": "user", "content": "hi"}],
        params={"max_tokens": 32},
        sample="s",
    )
    with pytest.raises(CallFailed) as info:
        asyncio.run(gateway.complete(req))
    return info.value, failures


def assert_clean(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text and "\r" not in text
    assert not any(ord(c) < 32 and c not in "\n\t" for c in text)
    assert KEY not in text and "Zq81hostile" not in text


@pytest.fixture(autouse=True)
def key_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOSTILE_TEST_KEY", KEY)


def test_a_body_with_escape_sequences_and_the_echoed_key_is_stored_and_raised_clean() -> None:
    def respond(body, headers):
        # The server echoes the Authorization header it got, as some proxies do.
        return error_reply(500, f"{ESCAPES} boom, you sent {headers.get('authorization')} and x-api-key: {KEY}")

    with hostile_server(respond) as server:
        exc, failures = run_call(server.api_base)
    assert len(failures) == 2  # first attempt and one retry, both recorded
    for text in [str(exc), *(f.message for f in failures)]:
        assert_clean(text)
        assert "boom" in text and "red" in text
    assert "[redacted HOSTILE_TEST_KEY]" in failures[-1].message


def test_a_key_not_in_use_is_still_redacted_by_its_shape() -> None:
    other = "sk-ant-api03-AAAABBBBCCCCDDDDEEEE"
    google = "AIzaSyA1234567890abcdefghijklmnopqrstu"
    with hostile_server(lambda b, h: error_reply(500, f"keys {other} {google} Bearer abc.def.ghi1234")) as server:
        _, failures = run_call(server.api_base, key_env=None)
    msg = failures[-1].message
    assert other not in msg and google not in msg and "abc.def.ghi1234" not in msg
    assert "sk-ant-[redacted]" in msg and "AIza[redacted]" in msg and "Bearer [redacted]" in msg


def test_a_400_keeps_the_servers_explanation_and_hints_at_structured_output() -> None:
    explanation = (
        "'response_format.type' must be 'json_object' or 'text'; json_schema is not supported by this "
        "server. " + "padding " * 400
    )
    with hostile_server(lambda b, h: error_reply(400, "\x1b[2J" + explanation)) as server:
        _, failures = run_call(server.api_base)
    assert len(failures) == 1 and failures[0].final  # a 400 is not retried
    msg = failures[0].message
    assert_clean(msg)
    assert "json_schema is not supported by this server" in msg
    assert "structured_output = false" in msg
    assert len(msg) < 900  # trimmed: about 600 characters of explanation and the hint


def test_a_401_names_the_key_variable_and_never_the_key() -> None:
    message = f"Incorrect API key provided: {KEY[:8]}****{KEY[-4:]}. You can find your API key at ..."
    with hostile_server(lambda b, h: error_reply(401, message)) as server:
        failures: list[CallFailure] = []
        gateway = Gateway(FAST, on_failure=failures.append)
        ep = Endpoint(model="openai/hostile", api_base=server.api_base, api_key_env="HOSTILE_TEST_KEY")
        req = CallRequest(
            key="k", stage="judging", endpoint=ep, messages=[{"role": "user", "content": "hi"}], params={}, sample="s"
        )
        with pytest.raises(FatalProviderError) as info:
            asyncio.run(gateway.complete(req))
    for text in (str(info.value), failures[0].message):
        assert "HOSTILE_TEST_KEY" in text and "sk-proj-****" not in text and KEY[-4:] + "." not in text


def test_a_404_for_the_model_hints_at_the_model_string() -> None:
    with hostile_server(lambda b, h: error_reply(404, "The model `hostile` does not exist")) as server:
        failures: list[CallFailure] = []
        gateway = Gateway(FAST, on_failure=failures.append)
        ep = Endpoint(model="openai/hostile", api_base=server.api_base)
        req = CallRequest(
            key="k", stage="judging", endpoint=ep, messages=[{"role": "user", "content": "hi"}], params={}, sample="s"
        )
        with pytest.raises(FatalProviderError):
            asyncio.run(gateway.complete(req))
    assert "check the model string 'openai/hostile'" in failures[0].message


def test_a_connection_error_names_the_model_and_the_api_base() -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    api_base = f"http://127.0.0.1:{port}/v1"
    exc, failures = run_call(api_base, limits=Limits(max_retries=0, backoff_base_s=0, backoff_max_s=0, timeout_s=5))
    assert f"model openai/hostile at {api_base}" in failures[-1].message
    assert api_base in str(exc)


def test_invalid_utf8_and_a_finish_reason_with_escapes_are_cleaned() -> None:
    def respond(body, headers):
        reply = {
            "id": "r",
            "object": "chat.completion",
            "created": 1,
            "model": "m",
            "choices": [
                {"index": 0, "finish_reason": "\x1b]0;t\x07stop", "message": {"role": "assistant", "content": None}}
            ],
        }
        return 200, {}, reply

    with hostile_server(respond) as server:
        _, failures = run_call(server.api_base)
    assert failures[-1].finish_reason == "stop"
    assert_clean(failures[-1].message)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a\x1b]0;title\x07b", "ab"),
        ("a\x1b]2;title\x1b\\b", "ab"),
        ("\x1b[2Jclear\x1b[H", "clear"),
        ("x\x1bPdcs string\x1b\\y", "xy"),
        ("tab\tand\nnewline", "tab\tand\nnewline"),
        ("cr\rover", "cr\nover"),
        ("bidi \u202eevil\u202c", "bidi evil"),
        ("nul\x00del\x7fc1\x85", "nuldelc1"),
        ("lone escape\x1b", "lone escape"),
    ],
)
def test_strip_controls(raw: str, expected: str) -> None:
    assert strip_controls(raw) == expected


def test_redact_by_value_and_by_shape_and_trim_after_redacting() -> None:
    secret = "abcdefghijklmnop-my-local-key"
    text = f"key={secret} api_key: 'zzzz9999' Authorization: Bearer tok123456 ghp_{'a' * 36}"
    out = redact(text, {"MY_KEY": secret})
    assert secret not in out and "zzzz9999" not in out and "tok123456" not in out and "ghp_aaaa" not in out
    assert "[redacted MY_KEY]" in out
    assert redact("short none x", {"LOCAL": "none"}) == "short none x"  # 4 characters: not redacted by value
    long = clean_untrusted("x" * 5000 + KEY, {"K": KEY}, limit=100)
    assert len(long) == 100 and long.endswith("…")
    # trimming happens after redaction, so half a key is never kept
    cut = clean_untrusted("y" * 90 + KEY, None, limit=100)
    assert "Zq81" not in cut


# -- through the CLI: what reaches the terminal and the database -----------------------------------


def hostile_session(tmp_path: Path, api_base: str) -> Path:
    """The small simulated session with one judge (JudgeWest) sent to the hostile server."""
    text = small_session_toml(name="hostile", tasks=("counseling",))
    real = f'model = "openai/hostile"\napi_base = "{api_base}"\napi_key_env = "HOSTILE_TEST_KEY"'
    assert text.count('model = "simulated/judge-west"') == 1
    path = tmp_path / "hostile.toml"
    path.write_text(text.replace('model = "simulated/judge-west"', real), encoding="utf-8")
    return path


def stored_errors(db: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT error_type, message FROM call_errors").fetchall()


@pytest.mark.parametrize(
    ("status", "body", "says"),
    [
        (401, f"{ESCAPES}Incorrect API key provided: {KEY}", "check the environment variable HOSTILE_TEST_KEY"),
        (
            400,
            f"{ESCAPES}response_format json_schema unsupported; echo: Authorization: Bearer {KEY}",
            "structured_output = false",
        ),
    ],
    ids=["401-fatal", "400-per-call"],
)
def test_hostile_errors_reach_the_terminal_and_call_errors_clean(
    tmp_path: Path, status: int, body: str, says: str
) -> None:
    with hostile_server(lambda b, h: error_reply(status, body)) as server:
        path = hostile_session(tmp_path, server.api_base)
        result = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
    assert "Traceback" not in result.output
    assert_clean(result.output)
    if status == 401:  # fatal: the run stops with the cleaned message (a 400 fails only its own calls)
        assert result.exit_code == 2 and says in result.output, result.output
    rows = stored_errors(tmp_path / "hostile.db")
    assert rows, "every failed attempt is in call_errors"
    for _, message in rows:
        assert_clean(message)
        assert says in message


async def test_an_app_notification_of_a_provider_error_is_clean(tmp_path: Path) -> None:
    app = create_app(sessions_dir=tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        app.report(ProviderError(f"{ESCAPES}[@click=app.quit]boom {KEY}"))
        app.report(RuntimeError(f"\x1b]0;title\x07unexpected {KEY}"))

        def messages() -> list[str]:
            return [n.message for n in app._notifications]

        await wait_for(pilot, lambda: len(messages()) == 2, "both notifications")
        for message in messages():
            assert_clean(message)
        assert "[@click=app.quit]boom" in messages()[0]  # shown as text (markup off), not run
        assert app.is_running


@pytest.mark.parametrize(
    ("value", "secret"),
    [
        ("sk-abcdef123456", True),
        (KEY, True),
        (f"Use {KEY} here", True),
        ("AIzaSyA1234567890abcdefghijklmnopqrstu", True),
        ("Bearer abcdefgh12345", True),
        ("Compare sk-learn-compatible-estimators-and-pipelines in the report.", False),
        ("A risk-assessment for the task", False),
        ("Mention the API key only by its variable name.", False),
    ],
)
def test_looks_like_secret(value: str, secret: bool) -> None:
    assert looks_like_secret(value) is secret
