"""Provides the helpers test modules share: session files, hand-made frames, judged sessions, bounded waits, UI steps.

Test modules import helpers from here, never from one another, so a test module can change,
move or be deleted without breaking the collection of another.
"""
