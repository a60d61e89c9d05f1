"""Claiming services for a controller; same rules as pods (see controller_ref_manager)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from tf_operator.control.controller_ref_manager import BaseControllerRefManager, _name
from tf_operator.control.util import meta
from tf_operator.k8s.client import is_invalid, is_not_found

log = logging.getLogger(__name__)


class ServiceControllerRefManager(BaseControllerRefManager):
    """Claims services through a service control's ``patch_service``."""

    def __init__(self, service_control: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.service_control = service_control

    def claim_services(self, services: list[dict], *filters: Callable[[dict], bool]) -> list[dict]:
        return self.claim(services, self.adopt_service, self.release_service, filters)

    def adopt_service(self, service: dict) -> None:
        try:
            self.can_adopt()
        except Exception as err:
            raise RuntimeError(f"can't adopt Service {_name(service)}: {err}") from err
        m = meta(service)
        self.service_control.patch_service(
            m.get("namespace", ""), m.get("name", ""), self.adopt_patch(service)
        )

    def release_service(self, service: dict) -> None:
        m = meta(service)
        log.info("patching service %s to remove its controllerRef to %s", _name(service), self.kind)
        try:
            self.service_control.patch_service(
                m.get("namespace", ""), m.get("name", ""), self.release_patch(service)
            )
        except Exception as err:
            if is_not_found(err) or is_invalid(err):
                return
            raise
