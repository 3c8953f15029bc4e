"""The host's services for the current call: log, progress, cancellation, settings."""

import json
from typing import Any


def log(level: str, message: str) -> None:
    """Writes a line to the host's log; level is trace, debug, info, warn or error."""
    from wit_world.imports import host

    host.log(host.Level[level.upper()], str(message))


def progress(text: str, details: Any = None) -> None:
    """Streams partial output to the user interface."""
    from wit_world.imports import host, types

    # contract 0.2's tool-output: content, structured (none for progress), details.
    host.progress(types.ToolOutput([types.Content_Text(text)], None, json.dumps(details) if details is not None else ""))


def cancelled() -> bool:
    """Whether the call was cancelled; long loops should check it and return."""
    from wit_world.imports import host

    return host.cancelled()


def settings() -> Any:
    """This plugin's settings from the operator's cordon.toml."""
    from wit_world.imports import host

    return json.loads(host.settings() or "null")
