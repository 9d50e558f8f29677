"""Provides centaur-tui: the CentaurBench pipeline with expert judging in a terminal app."""

__version__ = "0.1.0"
