"""Provides the use cases a user can trigger (open, run, report, assign, work, import/export, packets); the front ends' one way in."""
