"""A Kubernetes-compatible API for each simulated cluster, for kubectl and the official clients.

store.ApiCluster holds the state (a SimulatedCluster with every served kind, resourceVersions and a watch
log); views routes requests as kube-apiserver does; registry builds a cluster's state from the database and
checks its bearer token; watch streams changes; patch, selectors, tables and admission implement the parts
of kube's API machinery that clients rely on.
"""
