"""Provides the use cases a user can trigger (open, run, report, assign, work, exchange): the front ends' way in."""
