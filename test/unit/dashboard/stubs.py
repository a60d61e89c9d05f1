"""Stand-ins for the dashboard's collaborators in tests that call its handlers directly."""

from typing import Any


class EmptyCache:
    """A watch cache that has delivered nothing yet."""

    def job(self, plural: str, ns: str, name: str) -> None:
        return None

    def pods(self, plural: str, ns: str, name: str) -> list[Any]:
        return []
