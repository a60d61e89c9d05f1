"""``GVR``: a resource named by (group, version, plural), as ``schema.GroupVersionResource``."""

GVR = tuple[str, str, str]
