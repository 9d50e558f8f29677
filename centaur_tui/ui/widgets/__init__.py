"""Provides the reusable widgets of the app: document view, rubric sliders, winner picker."""
