"""XGBoostJob spec validation; see :mod:`.validation`."""
