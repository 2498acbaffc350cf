"""The PV and PVC assume caches of VolumeBinding (volumebinding/assume_cache.go).

kube's cache is fed by informers and lets Reserve overlay an *assumed* version of an object (a PV
pre-bound to a claim, a claim marked for provisioning) until the API server sends a newer one. Here the
informer view is the current cluster objects (a callable returning ``{key: object}``), and the cache
only stores the assumed overlays: an overlay is dropped once the cluster object it was made from is
replaced by one with a newer resourceVersion, or deleted.
"""
from __future__ import annotations

from ..helper.volume import pv_class, resource_version


class AssumeCache:
    """Cluster objects by key, with assumed versions laid over them."""

    __slots__ = ("description", "_source", "_assumed")

    def __init__(self, description: str, source):
        self.description = description
        self._source = source
        self._assumed = {}   # key -> [latest (assumed) object, cluster object it was assumed over]

    def _resolve(self, key: str, api):
        """(latest, api) for a cluster object, dropping an overlay the cluster has moved past."""
        entry = self._assumed.get(key)
        if entry is None:
            return api, api
        latest, base = entry
        if api is not base:
            if resource_version(api) > resource_version(latest):
                del self._assumed[key]
                return api, api
        return latest, base

    def _lookup(self, key: str):
        api = self._source().get(key)
        if api is None:
            self._assumed.pop(key, None)
            return None
        return self._resolve(key, api)

    def get(self, key: str):
        """The latest object (assumed or from the cluster), or None when the cluster has none."""
        hit = self._lookup(key)
        return None if hit is None else hit[0]

    def get_api(self, key: str):
        """The object as the cluster last reported it, ignoring assumptions, or None."""
        hit = self._lookup(key)
        return None if hit is None else hit[1]

    def not_found(self, key: str) -> str:
        """errNotFound's text."""
        return f'could not find {self.description} "{key}"'

    def assume(self, key: str, obj: dict):
        """Lay ``obj`` over the cached object. Returns an error text, or None."""
        hit = self._lookup(key)
        if hit is None:
            return self.not_found(key)
        latest, base = hit
        new_version, stored_version = resource_version(obj), resource_version(latest)
        if new_version < stored_version:
            return (f'{self.description} "{key}" is out of sync (stored: {stored_version}, '
                    f'assume: {new_version})')
        self._assumed[key] = [obj, base]
        return None

    def restore(self, key: str):
        """Drop the assumed version of ``key``, if any."""
        self._assumed.pop(key, None)


class PVAssumeCache(AssumeCache):
    """PersistentVolumes by name, listable by storage class."""

    __slots__ = ()

    def __init__(self, source):
        super().__init__("v1.PersistentVolume", source)

    def list_pvs(self, storage_class: str) -> list:
        """ListPVs: the latest version of every PV whose (latest) class is ``storage_class``."""
        out = []
        assumed = self._assumed
        for name, api in self._source().items():
            pv = self._resolve(name, api)[0] if name in assumed else api
            if pv_class(pv) == storage_class:
                out.append(pv)
        return out
