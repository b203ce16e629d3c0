"""Passes over whole traces: loading with what is derived once kept in the model cache (facts),
and the summary pass over a rank set (ranks). Above both ingest and analysis; `present` never
imports it (it renders what a pass found)."""

from __future__ import annotations

from .facts import load_trace

__all__ = ["load_trace"]
