"""The Kubernetes API's vocabulary, shared by the control plane and its clients, as
k8s.io/apimachinery is shared by kube-apiserver and client-go: ``StatusError`` (``errors``), JSON
object helpers and timestamps (``objects``), ``GVR``, quantities and the QoS class, label and
field selectors, simple JSONPath, patch semantics (merge, JSON, strategic; server-side apply)
and the Go-compatible codecs (``deepjson``, ``gobase64``). Nothing here holds server state.
"""
