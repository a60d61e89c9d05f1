"""PyTorchJob spec validation; see :mod:`.validation`."""
