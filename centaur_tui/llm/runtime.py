"""Provides the lazy, offline-safe import of litellm (about 3 s and 200 MB, so only when needed)."""

from __future__ import annotations

import logging
import os
import threading
from types import ModuleType

from centaur_tui.logs import route_litellm

_lock = threading.Lock()
_module: ModuleType | None = None


def litellm() -> ModuleType:
    """Import litellm once, offline, with its logging kept off the terminal.

    litellm otherwise fetches its price map from the internet at import and logs to
    stdout/stderr, which corrupts a TUI (NOTES.md).
    """
    global _module
    if _module is not None:
        return _module
    with _lock:
        if _module is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
            for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm"):
                logger = logging.getLogger(name)
                logger.handlers.clear()
                logger.addHandler(logging.NullHandler())
                logger.propagate = False
                logger.setLevel(logging.CRITICAL)
            import litellm as module

            module.suppress_debug_info = True
            module.telemetry = False
            route_litellm()  # its import added a stderr handler: the log file instead, or nowhere
            from centaur_tui.llm.simulated import SimulatedLLM

            module.custom_provider_map = [
                *[p for p in module.custom_provider_map if p.get("provider") != "simulated"],
                {"provider": "simulated", "custom_handler": SimulatedLLM()},
            ]
            # litellm leaves ~200 MB of long-lived objects; freezing them keeps full garbage
            # collections from stalling a UI by 0.1-0.3 s (measured in the app).
            import gc

            gc.collect()
            gc.freeze()
            _module = module
    return _module
