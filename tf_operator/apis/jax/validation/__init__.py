"""JAXJob spec validation; see :mod:`.validation`."""
