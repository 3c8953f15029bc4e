"""A tool's parameters schema, from its function signature's type hints."""

import dataclasses
import inspect
import typing
from typing import Any, Dict, Literal, Union, get_args, get_origin

_NONE = type(None)


def schema_for_type(hint: Any) -> Dict[str, Any]:
    """JSON Schema for one annotation: str, int, float, bool, list[T], dict, Optional[T],
    Literal[...], and dataclasses."""
    origin, args = get_origin(hint), get_args(hint)
    if hint is str:
        return {"type": "string"}
    if hint is bool:
        return {"type": "boolean"}
    if hint is int:
        return {"type": "integer"}
    if hint is float:
        return {"type": "number"}
    if hint is dict or origin is dict:
        return {"type": "object"}
    if hint is list or origin in (list, typing.List):
        return {"type": "array", "items": schema_for_type(args[0])} if args else {"type": "array"}
    if origin is Literal:
        return {"enum": list(args)}
    if origin is Union:
        members = [a for a in args if a is not _NONE]
        if len(members) == 1:
            return schema_for_type(members[0])
        return {"anyOf": [schema_for_type(m) for m in members]}
    if dataclasses.is_dataclass(hint):
        return object_schema(
            {f.name: (f.type, f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING) for f in dataclasses.fields(hint)},
            hints=typing.get_type_hints(hint),
        )
    if hint is inspect.Parameter.empty or hint is Any:
        return {}
    raise TypeError(f"cordon_sdk cannot make a JSON Schema for {hint!r}; pass parameters= explicitly")


def object_schema(fields: Dict[str, tuple], hints: Dict[str, Any]) -> Dict[str, Any]:
    properties, required = {}, []
    for name, (_, is_required) in fields.items():
        hint = hints.get(name, Any)
        properties[name] = schema_for_type(hint)
        optional = get_origin(hint) is Union and _NONE in get_args(hint)
        if is_required and not optional:
            required.append(name)
    schema: Dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def schema_for_function(function) -> Dict[str, Any]:
    signature = inspect.signature(function)
    hints = typing.get_type_hints(function)
    fields = {
        name: (parameter.annotation, parameter.default is inspect.Parameter.empty)
        for name, parameter in signature.parameters.items()
        if parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)
    }
    return object_schema(fields, hints)


def convert_arguments(function, arguments: Dict[str, Any]) -> Dict[str, Any]:
    """Builds dataclass arguments from their JSON objects; everything else passes as is."""
    hints = typing.get_type_hints(function)
    converted = {}
    for name, value in arguments.items():
        hint = hints.get(name)
        if hint is not None and dataclasses.is_dataclass(hint) and isinstance(value, dict):
            value = hint(**value)
        converted[name] = value
    return converted
