"""Provides the Textual app: screens, widgets and styles; the only package importing textual."""
