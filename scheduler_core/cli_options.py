"""What the command lines share: reading one YAML/JSON document, and the out-of-tree plugin options."""
from __future__ import annotations

import os
import sys

from .framework.guard import DEFAULT_CALL_TIMEOUT
from .plugins.registry import PluginLoadError, build_registry
from .scenario import ScenarioError, load_documents


def read_one(path: str, what: str = "object"):
    """The one document of a YAML or JSON file (a ScenarioError naming the file otherwise)."""
    label = os.path.basename(path)
    try:
        with open(path, encoding="utf-8") as f:
            docs = load_documents(f.read(), label)
    except OSError as err:
        raise ScenarioError(f"{label}: {err.strerror}") from None
    if len(docs) != 1 or not isinstance(docs[0], dict):
        raise ScenarioError(f"{label}: expected one {what}")
    return docs[0]


def read_config(path: str):
    return read_one(path, "KubeSchedulerConfiguration document")


def add_plugin_options(parser) -> None:
    """``--plugin`` and ``--plugin-timeout``: out-of-tree plugins for a command that builds profiles."""
    parser.add_argument("--plugin", action="append", default=[], metavar="MODULE:CLASS",
                        help="register an out-of-tree plugin class (repeatable); plugins of the "
                             "scheduler_core.plugins entry-point group are always registered")
    parser.add_argument("--plugin-timeout", type=float, default=DEFAULT_CALL_TIMEOUT, metavar="SECONDS",
                        help=f"time budget of each out-of-tree plugin call (default {DEFAULT_CALL_TIMEOUT:g}; "
                             f"0 turns it off)")


def registry_from_args(args) -> dict:
    """The plugin registry for parsed ``add_plugin_options`` arguments (the working directory is importable,
    as for ``python -m``)."""
    if args.plugin_timeout < 0:
        raise PluginLoadError("--plugin-timeout: must not be negative")
    if args.plugin and os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    return build_registry(args.plugin, call_timeout=args.plugin_timeout)


def add_version_options(parser) -> None:
    """``--kube-version`` and ``--feature-gates``: the Kubernetes version a command schedules as."""
    parser.add_argument("--kube-version", metavar="VERSION",
                        help="the kube-scheduler version to behave as: 1.30 or 1.36 (default: the scenario's "
                             "kubeVersion, else 1.30)")
    parser.add_argument("--feature-gates", metavar="A=true,B=false",
                        help="kube-scheduler's --feature-gates (defaults: the version's)")


def warn_features(features) -> None:
    """What kube-scheduler logs as warnings about the gate settings (e.g. an unrecognized gate at 1.31+)."""
    for text in features.warnings:
        sys.stderr.write(f"warning: {text}\n")
