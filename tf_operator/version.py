"""Version information, printed by ``tf-operator --version``."""

__version__ = "0.5.3.post1"
UPSTREAM_VERSION = "v0.5.3"
