"""Provides loading and validation of task and session files into domain models."""

from centaur_tui.catalog.loader import UNIVERSAL_FILE, load_session, load_task, load_tasks, load_universal

__all__ = ["UNIVERSAL_FILE", "load_session", "load_task", "load_tasks", "load_universal"]
