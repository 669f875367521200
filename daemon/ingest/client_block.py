"""The webhook's ``client`` block: the portal page's own signals of a solve.

An unversioned block is what portals sent before the recorder (``paste_count`` and
whatever else a portal chose): it is kept as sent, and the one field scoring reads of it,
``paste_count``, must be a count of pastes (or null) as in ``Client``. A block with ``version``
is checked against ``solve_log.schema.json``'s ``Client``, the file the recorder's tests
read too, so a malformed signal is a 422 naming the field rather than a solve scored on
half a block. The check reads the few JSON Schema keywords that file uses.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from ..errors import ValidationError

CLIENT_VERSIONS = (1,)


@cache
def schema() -> dict:
    return json.loads(resources.files(__package__).joinpath("solve_log.schema.json")
                      .read_text("utf-8"))


def check_client(client: dict | None) -> None:
    """ValidationError naming the field when a versioned block breaks the schema, or an
    unversioned one holds a ``paste_count`` (the one field scoring reads of it) that is
    no count of pastes."""
    if client is None:
        return
    if "version" not in client:
        if client.get("paste_count") is not None:   # a null says nothing, as before
            check(client["paste_count"],
                  schema()["$defs"]["Client"]["properties"]["paste_count"],
                  "client.paste_count")
        return
    if client["version"] not in CLIENT_VERSIONS or isinstance(client["version"], bool):
        raise ValidationError("client.version",
                              f"must be one of {', '.join(map(str, CLIENT_VERSIONS))} "
                              "(or left out for an unversioned block)")
    check(client, schema()["$defs"]["Client"], "client")


_TYPES = {"object": "an object", "array": "a list", "string": "a string",
          "integer": "an integer", "number": "a number"}


def _is(value, kind: str) -> bool:
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)
                or isinstance(value, float) and value.is_integer())
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, {"object": dict, "array": list, "string": str}[kind])


def check(value, rule: dict, field: str) -> None:
    """Check ``value`` against one schema ``rule`` (the subset solve_log.schema.json
    uses: $ref, type, const, enum, minimum, maximum, maxLength, maxItems, items,
    required, properties, additionalProperties)."""
    if "$ref" in rule:
        rule = schema()["$defs"][rule["$ref"].rsplit("/", 1)[1]]
    kind = rule.get("type")
    if kind and not _is(value, kind):
        raise ValidationError(field, f"must be {_TYPES[kind]}")
    if "const" in rule and (value != rule["const"] or isinstance(value, bool)):
        raise ValidationError(field, f"must be {rule['const']!r}")
    if "enum" in rule and value not in rule["enum"]:
        raise ValidationError(field, f"must be one of {', '.join(map(str, rule['enum']))}")
    if "minimum" in rule and value < rule["minimum"]:
        raise ValidationError(field, f"must be at least {rule['minimum']}")
    if "maximum" in rule and value > rule["maximum"]:
        raise ValidationError(field, f"must be at most {rule['maximum']}")
    if "maxLength" in rule and len(value) > rule["maxLength"]:
        raise ValidationError(field, f"must be at most {rule['maxLength']} characters")
    if kind == "array":
        if len(value) > rule.get("maxItems", len(value)):
            raise ValidationError(field, f"must hold at most {rule['maxItems']} items")
        for i, item in enumerate(value):
            check(item, rule.get("items", {}), f"{field}[{i}]")
    if kind == "object":
        for name in rule.get("required", ()):
            if name not in value:
                raise ValidationError(f"{field}.{name}", "is required")
        properties = rule.get("properties", {})
        for name, item in value.items():
            if name in properties:
                check(item, properties[name], f"{field}.{name}")
            elif rule.get("additionalProperties", True) is False:
                raise ValidationError(f"{field}.{name}", "is not a field of this block")
