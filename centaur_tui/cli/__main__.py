"""Provides `python -m centaur_tui.cli`."""

from centaur_tui.cli.main import main

main()
