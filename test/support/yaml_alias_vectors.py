"""YAML alias test vectors that both of our bounded YAML readers must classify alike.

The operator's tools read user YAML with ``tf_operator.k8s.safeyaml`` (a cap on the expanded
size) and the local API server reads YAML bodies with ``localcluster.controlplane.emulated.serving.yamlbody``
(go-yaml's aliasing ratio, as kube-apiserver). Their rules differ and they share no code (the
local cluster never imports the operator), so these documents keep them aligned: every one
marked refused must be refused by both, every other one read by both.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AliasVector:
    name: str
    document: str
    refused: bool


def _wide(copies: int, width: int = 1000) -> str:
    """One anchored sequence of ``width`` scalars, aliased ``copies`` times."""
    return f"a: &a [{', '.join(['x'] * width)}]\nb: [{', '.join(['*a'] * copies)}]\n"


# the classic: nine levels of nine aliases each, about 10^9 nodes in a few hundred bytes
LAUGHS = "\n".join(
    ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
)

MANIFEST = """
defaults: &defaults
  image: tf:1
  command: [python, train.py]
worker:
  <<: *defaults
  name: tensorflow
ps: *defaults
"""

ALIAS_VECTORS = [
    AliasVector("billion laughs", LAUGHS, refused=True),
    AliasVector(
        "billion laughs in a TFJob",
        f"kind: TFJob\nspec:\n  x:\n    {LAUGHS.replace(chr(10), chr(10) + '    ')}\n",
        refused=True,
    ),
    AliasVector("a sequence containing itself", "a: &x [1, *x]", refused=True),
    AliasVector("a mapping containing itself", "&m {k: *m}", refused=True),
    AliasVector(
        "five levels of ten",
        "\n".join(
            ["l0: &l0 [" + ", ".join(["v"] * 10) + "]"]
            + [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, 5)]
        ),
        refused=True,
    ),
    AliasVector("150 copies of a thousand", _wide(150), refused=True),
    AliasVector("merge keys and a shared block", MANIFEST, refused=False),
    AliasVector("50 copies of a thousand", _wide(50), refused=False),
    AliasVector("no aliases", "a: [1, 2, {b: c}]\n", refused=False),
]
