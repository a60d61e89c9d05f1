"""TFJob spec validation; see :mod:`.validation`."""
