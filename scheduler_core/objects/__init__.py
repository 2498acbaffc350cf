"""Typed, parsed-once views of Kubernetes objects."""
from .errors import ParseError
from .node import Node, Taint
from .pod import AffinityTerm, Pod, Toleration, TopologySpreadConstraint, tolerates_taint
from .quantity import QuantityError, milli_value, parse_quantity, value
from .selectors import LabelSelector, NodeSelector, NodeSelectorTerm

__all__ = ["ParseError", "Node", "Taint", "Pod", "Toleration", "AffinityTerm", "TopologySpreadConstraint",
           "tolerates_taint", "QuantityError", "parse_quantity", "milli_value", "value", "LabelSelector",
           "NodeSelector", "NodeSelectorTerm"]
