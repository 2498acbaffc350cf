"""DefaultBinder: binds through the cluster source (the pods/binding subresource)."""
from ...framework.interface import BindPlugin
from ...framework.status import Status
from .. import names


class DefaultBinder(BindPlugin):
    name = names.DEFAULT_BINDER

    def __init__(self, handle=None):
        self.handle = handle

    @classmethod
    def new(cls, args, handle):
        return cls(handle)

    def bind(self, state, pod, node_name):
        client = self.handle.client if self.handle is not None else None
        if client is None:
            return None
        try:
            client.bind(pod, node_name)
        except Exception as exc:  # the API error text becomes the bind failure
            return Status.error(str(exc))
        return None
