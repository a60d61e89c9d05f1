"""What Kubernetes controllers share beyond client-go (``k8s.io/kubernetes/pkg/controller``).

v0.5.3 vendored that package for its expectations and controller-ref helpers. Here:
:mod:`.expectations` (``ControllerExpectations``), :mod:`.slow_start` (``slowStartBatch``),
:mod:`.controller_utils` (keys, tombstones, the deletion re-check) and :mod:`.index`
(namespaced index functions). Nothing here knows of jobs.
"""
