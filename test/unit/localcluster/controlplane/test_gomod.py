"""The real control plane's Go modules: one pin, and a replace block that matches it."""

from __future__ import annotations

import re

from localcluster.controlplane.real.build import (
    ETCD_COMMAND,
    KUBE_COMMANDS,
    GoModule,
    _kube_ldflags,
    cache_key,
    pinned_versions,
)

REPLACE = re.compile(r"^\s+(k8s\.io/[a-z0-9-]+) => (k8s\.io/[a-z0-9-]+) (v\S+)$", re.MULTILINE)


def test_every_staging_module_is_replaced_at_the_pinned_versions_staging_release():
    kube_version, _ = pinned_versions()
    staging = "v0." + kube_version.removeprefix("v1.")
    module = GoModule.load("kubernetes", KUBE_COMMANDS)
    replaces = REPLACE.findall(module.go_mod)
    assert len(replaces) >= 30  # api, apimachinery, apiserver, client-go, ... (33 at 1.37)
    assert {(old, new) for old, new, _ in replaces} == {(m, m) for m, _, _ in replaces}
    assert {version for _, _, version in replaces} == {staging}
    for needed in ("k8s.io/api", "k8s.io/apiserver", "k8s.io/client-go", "k8s.io/streaming"):
        assert needed in {m for m, _, _ in replaces}


def test_the_kubernetes_version_is_pinned_once_and_the_go_sums_cover_it():
    kube_version, etcd_version = pinned_versions()
    module = GoModule.load("kubernetes", KUBE_COMMANDS)
    pins = re.findall(r"^\s*k8s\.io/kubernetes (v\S+)", module.go_mod, re.MULTILINE)
    assert pins == [kube_version]
    assert f"k8s.io/kubernetes {kube_version} h1:" in module.go_sum
    etcd = GoModule.load("etcd", (ETCD_COMMAND,))
    assert f"go.etcd.io/etcd/server/v3 {etcd_version} h1:" in etcd.go_sum


def test_the_tool_lines_name_the_four_commands():
    module = GoModule.load("kubernetes", KUBE_COMMANDS)
    assert module.tool_paths() == [f"k8s.io/kubernetes/cmd/{c}" for c in KUBE_COMMANDS]
    assert GoModule.load("etcd", (ETCD_COMMAND,)).tool_paths() == ["go.etcd.io/etcd/server/v3"]


def test_the_binaries_are_stamped_with_the_real_version():
    flags = _kube_ldflags("v1.37.2")
    assert "-X k8s.io/component-base/version.gitVersion=v1.37.2" in flags
    assert "-X k8s.io/component-base/version.gitMinor=37" in flags


def test_the_cache_key_names_both_versions():
    kube_version, etcd_version = pinned_versions()
    key = cache_key()
    assert key.startswith(f"kubernetes-{kube_version}-etcd-{etcd_version}-")
