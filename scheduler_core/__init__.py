"""Schedscope's scheduler core: a faithful re-implementation of kube-scheduler (v1.30) in plain Python."""

__version__ = "0.1.0"
