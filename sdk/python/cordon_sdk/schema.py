"""A tool's parameters schema, from its function signature's type hints."""

import dataclasses
import inspect
import typing
from typing import Any, Dict, Literal, Union, get_args, get_origin

_NONE = type(None)


def schema_for_type(hint: Any) -> Dict[str, Any]:
    """JSON Schema for one annotation: str, int, float, bool, list[T], dict, Optional[T],
    Union[...], Literal[...], and dataclasses."""
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
        schemas = [schema_for_type(m) for m in members]
        # Union[str, float]: one list of types (as Optional fields have) rather than anyOf.
        if all(set(one) == {"type"} and isinstance(one["type"], str) for one in schemas):
            return {"type": [one["type"] for one in schemas]}
        return {"anyOf": schemas}
    if dataclasses.is_dataclass(hint):
        return object_schema(
            {f.name: (f.type, f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING) for f in dataclasses.fields(hint)},
            hints=typing.get_type_hints(hint),
        )
    if hint is inspect.Parameter.empty or hint is Any:
        return {}
    raise TypeError(f"cordon_sdk cannot make a JSON Schema for {hint!r}; pass parameters= explicitly")


def nullable(schema: Dict[str, Any]) -> Dict[str, Any]:
    """``schema`` that also accepts null, so a client that makes every field required (OpenAI's
    strict mode) can still leave an optional one out by sending null."""
    kind = schema.get("type")
    if isinstance(kind, str):
        return {**schema, "type": [kind, "null"]}
    if isinstance(kind, list):
        return {**schema, "type": [*kind, "null"]}
    if "enum" in schema:
        return {**schema, "enum": [*schema["enum"], None]}
    if not schema:
        return schema
    return {"anyOf": [schema, {"type": "null"}]}


def object_schema(fields: Dict[str, tuple], hints: Dict[str, Any]) -> Dict[str, Any]:
    """Required fields as they are; optional ones (a default, or Optional[T]) nullable."""
    properties, required = {}, []
    for name, (_, is_required) in fields.items():
        hint = hints.get(name, Any)
        optional = get_origin(hint) is Union and _NONE in get_args(hint)
        schema = schema_for_type(hint)
        if is_required and not optional:
            required.append(name)
        else:
            schema = nullable(schema)
        properties[name] = schema
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


def output_schema_for_function(function):
    """The output schema of a function whose return annotation is a dataclass, else None."""
    returned = typing.get_type_hints(function).get("return")
    sdk_type = getattr(returned, "__module__", "").startswith("cordon_sdk")  # Output, Image
    if returned is not None and dataclasses.is_dataclass(returned) and not sdk_type:
        return schema_for_type(returned)
    return None


def convert_arguments(function, arguments: Dict[str, Any]) -> Dict[str, Any]:
    """Builds dataclass arguments from their JSON objects; null for a parameter with a default
    means the default; everything else passes as is."""
    hints = typing.get_type_hints(function)
    defaults = {name for name, parameter in inspect.signature(function).parameters.items()
                if parameter.default is not inspect.Parameter.empty}
    converted = {}
    for name, value in arguments.items():
        if value is None and name in defaults:
            continue
        hint = hints.get(name)
        if hint is not None and dataclasses.is_dataclass(hint) and isinstance(value, dict):
            value = hint(**value)
        converted[name] = value
    return converted
