"""Provides the command line: click commands that wire catalog, store, pipeline, stats and ui."""
