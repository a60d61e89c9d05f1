"""Ports and tolerations as kube-apiserver validates them (``ValidatePodSpec``,
``ValidateService``), with its messages.

Container ports: ``containerPort`` required and within 1..65535, ``hostPort`` 0 or within it,
names IANA service names (at most 15 characters of ``a-z``, ``0-9`` and ``-``, a letter among
them, no leading, trailing or doubled hyphen) and unique in their container, protocol TCP, UDP or
SCTP. Service ports: ``port`` within 1..65535, a name (a DNS-1123 label) required when there
are several and unique, ``targetPort`` a port number or an IANA name, and the protocol as
above. Tolerations: a key that is a qualified name, ``Exists`` when the key is empty, a value
that is a label value (none with ``Exists``), operator ``Equal`` or ``Exists``, effect one of
the taint effects, and ``tolerationSeconds`` only with ``NoExecute``. The types were checked by
the decoder before (``decoding``): a value of the wrong JSON type is a 400 there, these are the
422 causes.
"""

from __future__ import annotations

import re
from typing import Any

from localcluster.apimachinery.errors import field_cause

PROTOCOLS = ("SCTP", "TCP", "UDP")
TOLERATION_OPERATORS = ("Equal", "Exists")
TAINT_EFFECTS = ("NoExecute", "NoSchedule", "PreferNoSchedule")
_PORT_NAME_CHARSET = re.compile(r"^[-a-z0-9]+$")
_LETTER = re.compile(r"[a-z]")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
PORT_RANGE = "must be between 1 and 65535, inclusive"


def _shown(value: Any) -> str:
    """A value as field.Invalid prints it: strings quoted, numbers bare."""
    return f'"{value}"' if isinstance(value, str) else str(value)


def _invalid(path: str, value: Any, message: str) -> dict[str, Any]:
    return field_cause(path, f"Invalid value: {_shown(value)}: {message}")


def _unsupported(path: str, value: Any, supported: tuple[str, ...]) -> dict[str, Any]:
    listed = ", ".join(f'"{s}"' for s in supported)
    return field_cause(
        path,
        f"Unsupported value: {_shown(value)}: supported values: {listed}",
        "FieldValueNotSupported",
    )


def _required(path: str) -> dict[str, Any]:
    return field_cause(path, "Required value", "FieldValueRequired")


def _duplicate(path: str, value: Any) -> dict[str, Any]:
    return field_cause(path, f"Duplicate value: {_shown(value)}", "FieldValueDuplicate")


def port_name_errors(name: str) -> list[str]:
    """``IsValidPortName``'s messages (an IANA service name)."""
    errors = []
    if len(name) > 15:
        errors.append("must be no more than 15 characters")
    if not _PORT_NAME_CHARSET.match(name):
        errors.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    elif not _LETTER.search(name):
        errors.append("must contain at least one letter (a-z)")
    if "--" in name:
        errors.append("must not contain consecutive hyphens")
    if name and (name[0] == "-" or name[-1] == "-"):
        errors.append("must not begin or end with a hyphen")
    return errors


def _valid_port(number: Any) -> bool:
    return isinstance(number, int) and 1 <= number <= 65535


def container_port_errors(ports: list[Any], path: str) -> list[dict[str, Any]]:
    causes: list[dict[str, Any]] = []
    names: set[str] = set()
    for i, port in enumerate(ports):
        if not isinstance(port, dict):
            continue
        at = f"{path}[{i}]"
        name = port.get("name") or ""
        if name:
            messages = port_name_errors(name)
            causes += [_invalid(f"{at}.name", name, m) for m in messages]
            if not messages:
                if name in names:
                    causes.append(_duplicate(f"{at}.name", name))
                names.add(name)
        number = port.get("containerPort") or 0
        if number == 0:
            causes.append(_required(f"{at}.containerPort"))
        elif not _valid_port(number):
            causes.append(_invalid(f"{at}.containerPort", number, PORT_RANGE))
        host = port.get("hostPort") or 0
        if host != 0 and not _valid_port(host):
            causes.append(_invalid(f"{at}.hostPort", host, PORT_RANGE))
        protocol = port.get("protocol")
        if protocol is not None and protocol not in PROTOCOLS:
            causes.append(_unsupported(f"{at}.protocol", protocol, PROTOCOLS))
    return causes


def service_port_errors(service: dict[str, Any]) -> list[dict[str, Any]]:
    spec = service.get("spec") or {}
    ports = [p for p in spec.get("ports") or [] if isinstance(p, dict)]
    causes: list[dict[str, Any]] = []
    names: set[str] = set()
    for i, port in enumerate(ports):
        at = f"spec.ports[{i}]"
        name = port.get("name") or ""
        if not name and len(ports) > 1:
            causes.append(_required(f"{at}.name"))
        elif name:
            if len(name) > 63 or not _DNS_LABEL.match(name):
                causes.append(
                    _invalid(
                        f"{at}.name",
                        name,
                        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                    )
                )
            if name in names:
                causes.append(_duplicate(f"{at}.name", name))
            names.add(name)
        number = port.get("port", 0)
        if not _valid_port(number):
            causes.append(_invalid(f"{at}.port", number, PORT_RANGE))
        protocol = port.get("protocol")
        if protocol is not None and protocol not in PROTOCOLS:
            causes.append(_unsupported(f"{at}.protocol", protocol, PROTOCOLS))
        target = port.get("targetPort")
        if isinstance(target, str):
            causes += [_invalid(f"{at}.targetPort", target, m) for m in port_name_errors(target)]
        elif target is not None and not _valid_port(target):
            causes.append(_invalid(f"{at}.targetPort", target, PORT_RANGE))
    return causes


def toleration_errors(tolerations: list[Any], path: str, key_errors: Any) -> list[dict[str, Any]]:
    """``ValidateTolerations``; ``key_errors(key)`` says why a key is no qualified name."""
    causes: list[dict[str, Any]] = []
    for i, toleration in enumerate(tolerations):
        if not isinstance(toleration, dict):
            continue
        at = f"{path}[{i}]"
        key, operator = toleration.get("key") or "", toleration.get("operator") or ""
        value, effect = toleration.get("value") or "", toleration.get("effect") or ""
        if key:
            why = key_errors(key)
            if why:
                causes.append(_invalid(f"{at}.key", key, why))
        elif operator != "Exists":
            causes.append(
                _invalid(
                    f"{at}.operator",
                    operator,
                    'operator must be Exists when `key` is empty, which means "match all '
                    'values and all keys"',
                )
            )
        if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
            causes.append(
                _invalid(
                    f"{at}.effect",
                    effect,
                    "effect must be 'NoExecute' when `tolerationSeconds` is set",
                )
            )
        if operator in ("Equal", ""):
            if len(value) > 63 or not _LABEL_VALUE.match(value):
                causes.append(
                    _invalid(
                        f"{at}.operator",
                        value,
                        "a valid label must be an empty string or consist of alphanumeric "
                        "characters, '-', '_' or '.', and must start and end with an "
                        "alphanumeric character",
                    )
                )
        elif operator == "Exists":
            if value:
                causes.append(
                    field_cause(
                        f"{at}.operator",
                        "Invalid value: "
                        f"{_shown(value)}: value must be empty when `operator` is 'Exists'",
                    )
                )
        else:
            causes.append(_unsupported(f"{at}.operator", operator, TOLERATION_OPERATORS))
        if effect and effect not in TAINT_EFFECTS:
            causes.append(_unsupported(f"{at}.effect", effect, TAINT_EFFECTS))
    return causes
