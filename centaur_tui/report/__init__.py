"""Provides the typed report document and its public renderers (text, Markdown, JSON); no pandas here."""
