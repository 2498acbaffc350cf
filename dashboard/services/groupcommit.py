"""Concurrent writes of one process committed in groups.

A write that finds no commit in progress leads: it takes every write queued meanwhile and commits them in one
transaction (``commit(batch)``, which sets each item's ``result`` or ``error``); then the first write queued
during that commit leads the next group. Concurrent clients of one cluster pay one transaction (one row lock, one
commit) per group instead of one each: the Kubernetes API's writes (``k8sapi.registry``) and the REST API's and
pages' pod creates (``objectstore.insert_pods``).
"""
from __future__ import annotations

import threading


class Item:
    """One write waiting in a group commit: what to write (``payload``), then its result or error."""

    __slots__ = ("payload", "result", "error", "done", "lead")

    def __init__(self, payload):
        self.payload, self.result, self.error = payload, None, None
        self.done, self.lead = threading.Event(), False


class GroupCommit:
    """The writes of one target (a cluster's cache, a cluster's pod creates), committed in groups by
    ``commit(batch)``: it must set every item's ``result`` or ``error`` and may raise nothing."""

    def __init__(self, commit):
        self.commit = commit
        self.lock = threading.Lock()
        self.queue = []
        self.leading = False

    def submit(self, payload):
        """Write ``payload`` with the next group; returns its result or raises its error."""
        me = Item(payload)
        with self.lock:
            self.queue.append(me)
            if not self.leading:
                self.leading = me.lead = True
        if not me.lead:
            me.done.wait()
        if me.lead:   # took the lead, or was handed it by the previous leader
            with self.lock:
                batch, self.queue = self.queue, []
            try:
                self.commit(batch)
            except Exception as err:   # a bug in ``commit``: its group fails with it, the next one still runs
                for item in batch:
                    item.error = err
                raise
            finally:
                for item in batch:
                    item.done.set()
                with self.lock:
                    if self.queue:
                        self.queue[0].lead = True
                        self.queue[0].done.set()
                    else:
                        self.leading = False
        if me.error is not None:
            raise me.error
        return me.result
