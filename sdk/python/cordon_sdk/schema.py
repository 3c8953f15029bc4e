"""A tool's parameters schema, from its function signature: the type hints, a description per
parameter from ``Annotated[T, "..."]`` or the docstring (Google, reST or NumPy style), and the
defaults the author wrote."""

import dataclasses
import inspect
import json
import re
import typing
from typing import Annotated, Any, Dict, Literal, Optional, Union, get_args, get_origin

_NONE = type(None)


def _described(hint: Any):
    """``(T, description)`` of ``Annotated[T, "description", ...]`` (or of metadata with a
    ``description`` attribute, as pydantic's ``Field`` has); ``(hint, None)`` otherwise."""
    if get_origin(hint) is not Annotated:
        return hint, None
    base, *metadata = get_args(hint)
    for item in metadata:
        text = item if isinstance(item, str) else getattr(item, "description", None)
        if isinstance(text, str) and text.strip():
            return base, text.strip()
    return base, None


def schema_for_type(hint: Any) -> Dict[str, Any]:
    """JSON Schema for one annotation: str, int, float, bool, list[T], dict, Optional[T],
    Union[...], Literal[...], Annotated[T, "description"] and dataclasses."""
    hint, description = _described(hint)
    if description is not None:
        return {**schema_for_type(hint), "description": description}
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
            hints=typing.get_type_hints(hint, include_extras=True),
            defaults={f.name: f.default for f in dataclasses.fields(hint) if f.default is not dataclasses.MISSING},
            docs=parameter_docs(hint.__doc__ or ""),
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


def _json_default(value: Any):
    """``value`` as a schema's ``default`` when JSON can say it (None is no default)."""
    if value is None or isinstance(value, (dataclasses.Field,)) or inspect.isclass(value):
        return None
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError):
        return None


def object_schema(fields: Dict[str, tuple], hints: Dict[str, Any], defaults: Optional[Dict[str, Any]] = None,
                  docs: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    """Required fields as they are; optional ones (a default, or Optional[T]) nullable; each with
    the description its ``Annotated`` hint or the docstring (``docs``) gives, and its default."""
    properties, required = {}, []
    for name, (_, is_required) in fields.items():
        hint = hints.get(name, Any)
        bare, _ = _described(hint)
        optional = get_origin(bare) is Union and _NONE in get_args(bare)
        schema = schema_for_type(hint)
        if "description" not in schema and (docs or {}).get(name):
            schema = {**schema, "description": docs[name]}
        default = _json_default((defaults or {}).get(name))
        if default is not None:
            schema = {**schema, "default": default}
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
    hints = typing.get_type_hints(function, include_extras=True)
    parameters = {
        name: parameter for name, parameter in signature.parameters.items()
        if parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)
    }
    fields = {name: (p.annotation, p.default is inspect.Parameter.empty) for name, p in parameters.items()}
    defaults = {name: p.default for name, p in parameters.items() if p.default is not inspect.Parameter.empty}
    return object_schema(fields, hints, defaults, parameter_docs(inspect.getdoc(function) or ""))


_GOOGLE_SECTION = re.compile(r"^(Args|Arguments|Parameters|Params)\s*:\s*$")
_GOOGLE_ITEM = re.compile(r"^(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")
_REST_PARAM = re.compile(r"^:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")
_NUMPY_ITEM = re.compile(r"^(\w+)\s*(?::.*)?$")


def parameter_docs(docstring: str) -> Dict[str, str]:
    """Each parameter's description in a docstring: Google style (``Args:`` then ``name: text``
    or ``name (type): text``), reST (``:param name: text``) or NumPy (``Parameters`` underlined,
    then ``name : type`` and indented text). Continuation lines are joined."""
    lines = inspect.cleandoc(docstring).splitlines()
    docs: Dict[str, str] = {}
    section = None  # "google", "numpy" or "rest" while inside one
    current = None  # the parameter whose text continues
    item_depth = None  # the indentation of a Google section's items
    for index, line in enumerate(lines):
        stripped = line.strip()
        depth = len(line) - len(line.lstrip())
        following = lines[index + 1].strip() if index + 1 < len(lines) else ""
        rest = _REST_PARAM.match(stripped)
        if rest:
            section, current = "rest", rest.group(1)
            docs[current] = rest.group(2).strip()
        elif _GOOGLE_SECTION.match(stripped):
            section, current, item_depth = "google", None, None
        elif stripped in ("Parameters", "Arguments") and following and set(following) == {"-"}:
            section, current = "numpy", None
        elif section == "numpy" and stripped and set(stripped) == {"-"}:
            continue
        elif not stripped:
            if section != "numpy":
                current = None
        elif section == "google" and depth > 0:
            item = _GOOGLE_ITEM.match(stripped)
            if item and (item_depth is None or depth == item_depth):
                item_depth = depth
                current = item.group(1).lstrip("*")
                docs[current] = item.group(3).strip()
            elif current:
                docs[current] = f"{docs[current]} {stripped}".strip()
        elif section == "numpy" and depth == 0 and _NUMPY_ITEM.match(stripped):
            current = _NUMPY_ITEM.match(stripped).group(1)
            docs[current] = ""
        elif section in ("numpy", "rest") and depth > 0 and current:
            docs[current] = f"{docs[current]} {stripped}".strip()
        else:
            section, current = None, None
    return {name: text for name, text in docs.items() if text}


def output_schema_for_function(function):
    """The output schema of a function whose return annotation is a dataclass, else None."""
    returned, _ = _described(typing.get_type_hints(function, include_extras=True).get("return"))
    sdk_type = getattr(returned, "__module__", "").startswith("cordon_sdk")  # Output, Image
    if returned is not None and dataclasses.is_dataclass(returned) and not sdk_type:
        return schema_for_type(returned)
    return None


def convert_arguments(function, arguments: Dict[str, Any]) -> Dict[str, Any]:
    """Builds dataclass arguments from their JSON objects; null for a parameter with a default
    means the default; everything else passes as is."""
    hints = {name: _described(hint)[0] for name, hint in typing.get_type_hints(function, include_extras=True).items()}
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
