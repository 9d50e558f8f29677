"""Provides the domain layer: pydantic models and pure functions, no I/O."""
