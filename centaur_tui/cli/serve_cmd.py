"""Provides `centaur serve` and `centaur expert link`: experts judge in a browser, each through a personal link."""

from __future__ import annotations

import ipaddress

import click

from centaur_tui.cli.app import say_simulated
from centaur_tui.services.session import open_session, open_store

DEFAULT_URL = "http://127.0.0.1:8000"


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@click.command()
@click.argument("session")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on (keep the default behind a reverse proxy).",
)
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="Port (0: any free one).")
@click.option(
    "--public-url",
    default=None,
    help="The address experts open, when a reverse proxy serves this one (https://judge.example.org): links are "
    "printed with it and the cookie is then Secure.",
)
@click.option(
    "--trust-proxy",
    is_flag=True,
    help="A reverse proxy on this machine is the only client: count failed link checks per address from the "
    "last hop of X-Forwarded-For, and drop the per-address connection limit (every connection is the proxy's).",
)
def serve(session: str, host: str, port: int, public_url: str | None, trust_proxy: bool) -> None:
    """Serve the experts' seat (home, judging, writing) as web pages; prints each expert's personal link.

    Every registered expert without a link gets one now (printed once: only its hash is stored);
    an expert whose link stands is listed without it (`centaur expert link` renews it, on the
    address this server recorded). Only an expert's own queues are served, never the pipeline,
    assignment, results or audit. Stop with ctrl+c.
    """
    from centaur_tui.serve import ExpertServer, run_server
    from centaur_tui.services.links import link_url, links_for_serving, remember_server_url

    study = open_session(session)
    with open_store(study, title="Nothing to serve") as store:
        links = links_for_serving(study, store)
    if not _loopback(host) and not (public_url or "").startswith("https://"):
        click.secho(
            f"Warning: listening on {host} without HTTPS: links and cookies cross the network readable. "
            "Serve behind an HTTPS reverse proxy (README: Serving experts in a browser).",
            fg="yellow",
            err=True,
        )
    if trust_proxy and not _loopback(host):
        click.secho(
            f"Warning: --trust-proxy while listening on {host}: any client reaching this port can write its own "
            "X-Forwarded-For. Listen on 127.0.0.1 behind the proxy.",
            fg="yellow",
            err=True,
        )
    store = open_store(study, title="Nothing to serve")
    try:
        server = ExpertServer(study, store, public_url=public_url, trust_proxy=trust_proxy)
    except BaseException:
        store.close()
        raise

    def ready(base: str) -> None:
        if study.session.simulated:
            say_simulated()
        shown = (public_url or base).rstrip("/")
        remember_server_url(store, shown)  # `centaur expert link` prints links on this address
        click.echo(f"Serving the expert screens of {study.session.name} on {base}", nl=True)
        for link in links:
            who = f"{link.expert.id} ({link.expert.name})"
            if link.token is not None:
                click.echo(f"  {who}: {link_url(shown, link.token)}")
            else:
                click.echo(
                    f"  {who}: link made {link.since} stands (renew: centaur expert link {session} {link.expert.id})"
                )
        if not links:
            click.echo("  No experts yet: add them to the session file or in the app, then run centaur serve again.")
        click.echo("Stop with ctrl+c.", nl=True)

    try:
        run_server(server, host, port, ready)
    finally:
        store.close()


@click.group()
def expert() -> None:
    """Experts' personal links for `centaur serve`."""


@expert.command("link")
@click.argument("session")
@click.argument("expert_id")
@click.option(
    "--revoke", is_flag=True, help="End the expert's link: the browser using it gets 403, an open page closes."
)
@click.option(
    "--url",
    "base_url",
    default=None,
    help="The address experts open; default: the one `centaur serve` last recorded for this session "
    f"(its --public-url, or the address it listened on), else {DEFAULT_URL}.",
)
def expert_link(session: str, expert_id: str, revoke: bool, base_url: str | None) -> None:
    """Make or renew an expert's personal link (the old one stops working), or end it with --revoke."""
    from centaur_tui.services.links import link_url, make_link, revoke_link, server_url

    study = open_session(session)
    with open_store(study, title="No session database") as store:
        if revoke:
            ended = revoke_link(study, store, expert_id)
            click.echo(
                f"Link of {expert_id} revoked." if ended else f"{expert_id} had no active link; nothing to revoke."
            )
            return
        link = make_link(study, store, expert_id)
        recorded = server_url(store)
    if base_url is None:
        base_url = recorded or DEFAULT_URL
        if recorded is None:
            click.secho(
                f"centaur serve has not run on this session yet: the link assumes {DEFAULT_URL} "
                "(give --url, or start centaur serve first).",
                fg="yellow",
                err=True,
            )
    assert link.token is not None
    renewed = " (the earlier link no longer works)" if link.renewed else ""
    click.echo(f"Personal link of {link.expert.id} ({link.expert.name}){renewed}:")
    click.echo(f"  {link_url(base_url, link.token)}")
    click.echo("Send it to the expert only: it opens their queue. `--revoke` ends it.")


@click.group()
def organiser() -> None:
    """The organiser's console link for `centaur serve` (apart from every expert's link)."""


@organiser.command("link")
@click.argument("session")
@click.option("--revoke", is_flag=True, help="End the organiser's link: the console page then answers 403.")
@click.option(
    "--url",
    "base_url",
    default=None,
    help=f"The address of `centaur serve`; default: the one it last recorded for this session, else {DEFAULT_URL}.",
)
def organiser_link(session: str, revoke: bool, base_url: str | None) -> None:
    """Make or renew the organiser's console link (the old one stops working), or end it with --revoke."""
    from centaur_tui.services.links import make_organiser_link, organiser_url, revoke_organiser_link, server_url

    study = open_session(session)
    with open_store(study, title="No session database") as store:
        if revoke:
            ended = revoke_organiser_link(store)
            click.echo("Organiser link revoked." if ended else "No active organiser link; nothing to revoke.")
            return
        token, renewed = make_organiser_link(store)
        recorded = server_url(store)
    if base_url is None:
        base_url = recorded or DEFAULT_URL
        if recorded is None:
            click.secho(
                f"centaur serve has not run on this session yet: the link assumes {DEFAULT_URL} "
                "(give --url, or start centaur serve first).",
                fg="yellow",
                err=True,
            )
    click.echo("Organiser's console link" + (" (the earlier link no longer works)" if renewed else "") + ":")
    click.echo(f"  {organiser_url(base_url, token)}")
    click.echo("Keep it to yourself: it shows every expert's figures. `--revoke` ends it.")
