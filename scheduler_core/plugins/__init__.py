"""In-tree plugins, one package per plugin (as kube-scheduler's framework/plugins)."""
