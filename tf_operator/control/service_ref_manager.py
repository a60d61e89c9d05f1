"""Claiming services for a controller; same rules as pods (see controller_ref_manager)."""

from __future__ import annotations

from tf_operator.control.controller_ref_manager import ControllerRefManager, ObjectFilter
from tf_operator.k8s.objects import Obj


class ServiceControllerRefManager(ControllerRefManager):
    """Claims services through a service control (v0.5.3's ``ServiceControllerRefManager``)."""

    noun = "Service"

    def claim_services(self, services: list[Obj], *filters: ObjectFilter) -> list[Obj]:
        return self.claim(services, *filters)
