"""What the emulator checks and fills in before a write is stored, as kube-apiserver's decoding,
defaulting and validation do: typed ``decoding`` (and canonical quantities, ``quantityfields``),
built-in ``defaults``, name and pod-spec ``validation`` (``ports``, tolerations), apps/v1
``workloads``, CRD structural ``schema`` and CEL rules (``celrules``). Pure functions of the
object: the ``Registry`` calls them; none of them reads or writes storage.
"""
