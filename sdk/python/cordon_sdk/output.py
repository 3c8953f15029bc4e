"""What a tool returns: text, an ``Output`` (text and images, details), or raises."""

from dataclasses import dataclass, field
from typing import Any, List, Optional, Union


@dataclass
class Image:
    mime_type: str
    data: bytes


@dataclass
class Output:
    """Content for the model, and details (a JSON object) for UIs and logs."""

    content: List[Union[str, Image]] = field(default_factory=list)
    details: Optional[dict] = None

    @staticmethod
    def text(text: str, details: Optional[dict] = None) -> "Output":
        return Output([text], details)


class CapabilityDenied(Exception):
    """Raise when the tool needed something the operator did not grant (``capability_denied``)."""


def as_output(value: Any) -> Output:
    """A tool's return value as an Output: a str, an Output, None, or any JSON-able value."""
    import json

    if isinstance(value, Output):
        return value
    if value is None:
        return Output([])
    if isinstance(value, str):
        return Output([value])
    if isinstance(value, Image):
        return Output([value])
    return Output([json.dumps(value, indent=2, default=str)])
