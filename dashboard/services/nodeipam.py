"""kube-controller-manager's node IPAM for simulated clusters (pkg/controller/nodeipam, the RangeAllocator with
one cluster CIDR): each node without ``spec.podCIDRs`` is given the next free block of ``NODE_CIDR_MASK`` bits of
``CLUSTER_CIDR`` (its CidrSet), set as ``spec.podCIDR`` and ``spec.podCIDRs``; the blocks of the nodes that have
one are occupied, and a deleted node's block is free again (ReleaseCIDR), since the nodes themselves are what is
allocated. The search starts from the first block, as the allocator's does after kube-controller-manager starts
(its round-robin ``nextCandidate`` lives only in its memory). When every block is taken the node keeps none
(kube records CIDRNotAvailable), and its pods' IPs are made from their uids (``objectstore.pod_ips``).

``CLUSTER_CIDR`` is 10.0.0.0/10 (16,384 blocks of /24: more than a simulated cluster's MAX_NODES), clear of
kubeadm's default service CIDR 10.96.0.0/12 and of the node addresses ``objectstore.node_ip`` makes; 24 is
kube-controller-manager's default --node-cidr-mask-size for IPv4.
"""
from __future__ import annotations

import ipaddress

CLUSTER_CIDR = ipaddress.ip_network("10.0.0.0/10")
NODE_CIDR_MASK = 24


def _index(cidr: str) -> int | None:
    """The block of the cluster CIDR a node's pod CIDR is (None: outside it, or not a CIDR)."""
    try:
        net = ipaddress.ip_network(cidr, strict=False)
    except ValueError:
        return None
    if net.version != 4 or not net.subnet_of(CLUSTER_CIDR):
        return None
    return (int(net.network_address) - int(CLUSTER_CIDR.network_address)) >> (32 - NODE_CIDR_MASK)


def _block(index: int) -> str:
    base = int(CLUSTER_CIDR.network_address) + (index << (32 - NODE_CIDR_MASK))
    return f"{ipaddress.IPv4Address(base)}/{NODE_CIDR_MASK}"


def pod_cidrs(node_raw: dict) -> list:
    """A node's pod CIDRs: ``spec.podCIDRs``, else its ``spec.podCIDR`` (kube converts one to the other)."""
    spec = (node_raw or {}).get("spec") or {}
    return list(spec.get("podCIDRs") or ([spec["podCIDR"]] if spec.get("podCIDR") else ()))


class CidrSet:
    """The blocks taken by the pod CIDRs given (the nodes'); ``allocate`` gives the next free one."""

    def __init__(self, cidrs=()):
        self.used = set()
        self.size = 1 << (NODE_CIDR_MASK - CLUSTER_CIDR.prefixlen)
        self.next_candidate = 0
        self.occupy(cidrs)

    def occupy(self, cidrs) -> None:
        for cidr in cidrs:
            index = _index(cidr) if isinstance(cidr, str) else None
            if index is not None:
                self.used.add(index)

    def allocate(self) -> str | None:
        """AllocateNext: the first free block from ``next_candidate`` on (None: none is free)."""
        if len(self.used) >= self.size:
            return None
        candidate = self.next_candidate
        while candidate in self.used:
            candidate = (candidate + 1) % self.size
        self.used.add(candidate)
        self.next_candidate = (candidate + 1) % self.size
        return _block(candidate)

    def with_pod_cidr(self, node_raw: dict) -> dict:
        """The node as the allocator leaves it: its own pod CIDRs occupied, else the next free block set."""
        own = pod_cidrs(node_raw)
        if own:
            self.occupy(own)
            return node_raw
        cidr = self.allocate()
        if cidr is None:
            return node_raw
        return dict(node_raw, spec=dict(node_raw.get("spec") or {}, podCIDR=cidr, podCIDRs=[cidr]))
