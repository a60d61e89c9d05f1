"""PaddleJob spec validation; see :mod:`.validation`."""
