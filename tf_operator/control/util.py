"""Helpers shared by the control modules: controller-ref checks, event objects, error text."""

from __future__ import annotations

import logging
from typing import Any

from tf_operator.k8s.client import ApiError
from tf_operator.k8s.objects import Obj, get_controller_of, labels_of, meta
from tf_operator.logger import logger_for_unstructured

__all__ = [
    "EVENT_TYPE_NORMAL",
    "EVENT_TYPE_WARNING",
    "Obj",
    "error_text",
    "event_object",
    "get_controller_of",
    "job_logger",
    "labels_of",
    "meta",
    "validate_controller_ref",
]

EVENT_TYPE_NORMAL = "Normal"
EVENT_TYPE_WARNING = "Warning"


def validate_controller_ref(controller_ref: Obj | None) -> None:
    """Refuse owner references that would not make the object a controlled dependant."""
    if controller_ref is None:
        raise ValueError("controllerRef is nil")
    if not controller_ref.get("apiVersion"):
        raise ValueError("controllerRef has empty APIVersion")
    if not controller_ref.get("kind"):
        raise ValueError("controllerRef has empty Kind")
    if controller_ref.get("controller") is not True:
        raise ValueError("controllerRef.Controller is not set to true")
    if controller_ref.get("blockOwnerDeletion") is not True:
        raise ValueError("controllerRef.BlockOwnerDeletion is not set")


def event_object(obj: Any) -> Obj:
    """The dict an event recorder needs: the object itself, or a typed job's reference."""
    if isinstance(obj, dict):
        return obj
    ref = getattr(obj, "object_ref", None)
    if callable(ref):
        result = ref()
        if isinstance(result, dict):
            return result
    raise TypeError(f"cannot record an event on {type(obj).__name__}")


def job_logger(controller_object: Any) -> logging.LoggerAdapter[logging.Logger]:
    """A logger whose lines name the job a write is made for (``job``, ``uid``, ``kind``)."""
    ref = event_object(controller_object)
    return logger_for_unstructured(ref, str(ref.get("kind") or ""))


def error_text(err: BaseException) -> str:
    """The message of an API error as client-go would print it, else ``str(err)``."""
    if isinstance(err, ApiError) and err.message:
        return err.message
    return str(err)
