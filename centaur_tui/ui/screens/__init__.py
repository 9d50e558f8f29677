"""Provides the app's screens: home, session overview, judging, and their dialogs."""
