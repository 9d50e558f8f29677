"""Provides centaur-tui: the CentaurBench pipeline with expert judging in a terminal app."""

import logging

__version__ = "0.1.0"

# Until the entry point configures the log file, records go nowhere: without a handler,
# logging's last resort would print warnings to stderr, over the app's screen.
logging.getLogger(__name__).addHandler(logging.NullHandler())
