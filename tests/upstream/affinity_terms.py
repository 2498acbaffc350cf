"""Pod affinity terms and namespaces shared by the translated InterPodAffinity tables."""
from __future__ import annotations

# kube's scoring_test.go namespaces (the filtering tests use them too).
NAMESPACES = [{"metadata": {"name": "subteam1.team1", "labels": {"team": "team1"}}},
              {"metadata": {"name": "subteam2.team1", "labels": {"team": "team1"}}},
              {"metadata": {"name": "subteam1.team2", "labels": {"team": "team2"}}},
              {"metadata": {"name": "subteam2.team2", "labels": {"team": "team2"}}}]


def sel(*exprs):
    return {"matchExpressions": [{"key": k, "operator": op, **({"values": list(v)} if v else {})}
                                 for k, op, v in exprs]}


def term(selector, topology_key, namespaces=None, namespace_selector=None):
    t = {"labelSelector": selector, "topologyKey": topology_key}
    if namespaces is not None:
        t["namespaces"] = list(namespaces)
    if namespace_selector is not None:
        t["namespaceSelector"] = namespace_selector
    return t
