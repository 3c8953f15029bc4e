"""What hooks see and decide."""

from dataclasses import dataclass, field
from typing import Any, List, Optional, Union

from .output import Image


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: dict


@dataclass
class CallResult:
    """A call's result as an after-hook sees it (errors too)."""

    content: List[Union[str, Image]] = field(default_factory=list)
    details: Optional[dict] = None
    is_error: bool = False
    structured: Optional[dict] = None

    def text(self) -> str:
        return "\n".join(c for c in self.content if isinstance(c, str))


@dataclass
class Allow:
    pass


@dataclass
class Block:
    reason: str


@dataclass
class Rewrite:
    arguments: dict


@dataclass
class Ask:
    """Run the call only if a person approves it; the reason is shown to them."""

    reason: str


@dataclass
class Keep:
    pass


@dataclass
class Replace:
    result: CallResult
