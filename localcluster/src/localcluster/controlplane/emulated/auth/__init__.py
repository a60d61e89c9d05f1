"""Authentication, authorization and service-account admission for the API server emulator.

The request path, as kube-apiserver's filter chain runs it: ``authenticator`` turns a bearer
token into a ``UserInfo`` (the admin token, a service-account JWT from ``tokens``, or the
anonymous user), ``impersonation`` swaps in the user named by ``Impersonate-*`` headers after
checking the ``impersonate`` verb, ``requestinfo`` derives the request's attributes (verb,
group, resource, subresource, namespace, name or non-resource path) and ``authorizer`` decides
with ``rbac`` (Roles, ClusterRoles, their bindings and aggregation) behind a ``system:masters``
fast path. ``bootstrap`` seeds the default ClusterRoles and bindings a real cluster starts with;
``reviews`` serves the access and token reviews, ``tokenrequest`` the ``serviceaccounts/token``
subresource and ``admission`` the ServiceAccount admission plugin for pods.
"""
