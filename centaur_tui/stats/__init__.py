"""Provides the statistics: pure functions of tidy DataFrames; the only package importing pandas/scipy."""
