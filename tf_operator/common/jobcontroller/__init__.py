"""The shared job controller; see :mod:`.jobcontroller`."""
