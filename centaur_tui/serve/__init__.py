"""Provides the HTML expert seat: `centaur serve`, each expert's queues as web pages behind a personal link.

`server` holds the web server (aiohttp, Jinja2 templates, the package's own CSS and JavaScript);
`markup` turns untrusted Markdown into sanitised HTML (markdown-it-py, nh3); `guard` holds the
rate, connection and CSRF defences; `drafts` keeps two tabs of one expert from overwriting each
other. The session is reached only through `centaur_tui.services`, as the terminal seat does.
"""

from centaur_tui.serve.server import ExpertServer, run_server

__all__ = ["ExpertServer", "run_server"]
