"""What a tool returns: text, an ``Output`` (text and images, structured output, details), a
dataclass instance (structured output), or raises."""

import dataclasses
from dataclasses import dataclass, field
from typing import Any, List, Optional, Union


@dataclass
class Image:
    mime_type: str
    data: bytes


@dataclass
class Output:
    """Content for the model, structured output (a JSON object matching the tool's output schema)
    for clients that read it, and details (a JSON object) for UIs and logs."""

    content: List[Union[str, Image]] = field(default_factory=list)
    details: Optional[dict] = None
    structured: Optional[dict] = None

    @staticmethod
    def text(text: str, details: Optional[dict] = None) -> "Output":
        return Output([text], details)

    @staticmethod
    def data(value: dict, details: Optional[dict] = None) -> "Output":
        """Structured output, with its JSON as the text the model reads."""
        import json

        return Output([json.dumps(value, indent=2, default=str)], details, value)


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
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return Output.data(dataclasses.asdict(value))
    return Output([json.dumps(value, indent=2, default=str)])
