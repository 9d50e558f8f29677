"""Provides the browser front end: `centaur serve`, each expert's own app in a browser behind a personal link.

`server` holds the web server (aiohttp, textual-serve's app processes and page); it reaches
the session only through `centaur_tui.services` and never imports the UI: each browser
connection runs `centaur tui SESSION --expert ID --expert-only` in a process of its own.
"""

from centaur_tui.serve.server import ExpertServer, run_server

__all__ = ["ExpertServer", "run_server"]
