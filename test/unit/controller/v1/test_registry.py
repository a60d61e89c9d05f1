"""The kind registry: the schemes the binary knows, as --enable-scheme names them."""

import pytest

from tf_operator.apis.common.v1.run_policy import DEFAULTS_V0_5_3, DEFAULTS_V1_9
from tf_operator.app.options import DEFAULT_SCHEMES, KNOWN_SCHEMES
from tf_operator.common.jobcontroller.jobcontroller import JobControllerConfiguration
from tf_operator.controller.v1 import registry


def test_the_flag_offers_exactly_the_registered_schemes():
    assert tuple(registry.SCHEMES) == KNOWN_SCHEMES
    assert DEFAULT_SCHEMES == registry.DEFAULT_SCHEMES == ("tfjob",)


def test_schemes_are_named_in_any_case_each_once_in_order():
    names = [s.name for s in registry.enabled_schemes(["TFJob", "tfjob"])]
    assert names == ["tfjob"]
    with pytest.raises(registry.UnknownSchemeError, match="scheme mpijob is not supported"):
        registry.enabled_schemes(["mpijob"])


def test_the_tfjob_scheme_follows_the_operators_defaults():
    base = JobControllerConfiguration(enable_gang_scheduling=True, defaults=DEFAULTS_V1_9)
    assert registry.TFJOB.configuration(base) is base
    assert registry.TFJOB.crd_name == "tfjobs.kubeflow.org"
    assert registry.TFJOB.resync_period == 30.0  # v0.5.3's, whatever --resyc-period says
    assert DEFAULTS_V0_5_3 != DEFAULTS_V1_9


@pytest.mark.parametrize(
    ("name", "crd", "component"),
    [
        ("xgboostjob", "xgboostjobs.kubeflow.org", "xgboostjob-controller"),
        ("jaxjob", "jaxjobs.kubeflow.org", "jaxjob-controller"),
        ("paddlejob", "paddlejobs.kubeflow.org", "paddlejob-controller"),
    ],
)
def test_training_operator_v1_9s_other_kinds_get_its_defaults(name, crd, component):
    (scheme,) = registry.enabled_schemes([name.upper()])
    base = JobControllerConfiguration(enable_gang_scheduling=True, defaults=DEFAULTS_V0_5_3)
    config = scheme.configuration(base)
    assert (config.defaults, config.enable_gang_scheduling) == (DEFAULTS_V1_9, True)
    assert (scheme.crd_name, scheme.component) == (crd, component)
    assert scheme.crd_manifest == f"manifests/components/{name}/crd.yaml"
