"""Provides `python -m centaur_tui`: the `centaur` command (what `centaur serve` starts for each browser)."""

from centaur_tui.cli.main import main

if __name__ == "__main__":
    main()
