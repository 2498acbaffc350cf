"""Leader election over a coordination.k8s.io/v1 Lease, as client-go's leaderelection package does it for
kube-scheduler (lease kube-system/kube-scheduler, 15s lease, 10s renew deadline, 2s retry, release on cancel).

A candidate acquires the lease when it is free or its holder stopped renewing it for leaseDurationSeconds, as
measured on the candidate's own clock from when it last saw the lease change; the leader renews it every retry
period and stops leading when it could not renew within the renew deadline. Writes are optimistic (the Lease's
resourceVersion), so of two candidates only one wins. ``step`` runs one attempt; ``run`` loops it in a thread;
tests drive ``step`` with a fake clock.
"""
from __future__ import annotations

import json
import logging
import random
import socket
import threading
import uuid

from kubernetes.client.rest import ApiException

from ..clock import Clock
from .kube import api_message, micro_time

log = logging.getLogger(__name__)

JITTER_FACTOR = 1.2
ACQUIRING, LEADING, STOPPED = "acquiring", "leading", "stopped"


def default_identity() -> str:
    """kube-scheduler's identity: hostname_uuid."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


class LeaseLock:
    """resourcelock.LeaseLock: the election record in a Lease, read and written through a KubeCluster."""

    def __init__(self, cluster, namespace: str = "kube-system", name: str = "kube-scheduler",
                 identity: str | None = None, timeout: float = 10.0):
        self.cluster = cluster
        self.namespace = namespace
        self.name = name
        self.identity = identity or default_identity()
        self.timeout = timeout
        self.lease = None

    @property
    def path(self) -> str:
        return f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases"

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    def get(self) -> dict:
        """The current record (the Lease's spec); raises ApiException (404 when there is no Lease)."""
        self.lease = self.cluster.request("GET", f"{self.path}/{self.name}", timeout=self.timeout)
        return dict(self.lease.get("spec") or {})

    def create(self, record: dict) -> None:
        body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace}, "spec": record}
        self.lease = self.cluster.request("POST", self.path, body=body, timeout=self.timeout)

    def update(self, record: dict) -> None:
        """PUT the record with the resourceVersion last seen (409 when someone wrote in between)."""
        if self.lease is None:
            raise RuntimeError("lease not initialized, call get or create first")
        body = dict(self.lease, spec=record)
        self.lease = self.cluster.request("PUT", f"{self.path}/{self.name}", body=body, timeout=self.timeout)


def config_seconds(leader_election: dict) -> dict:
    """leaseDuration, renewDeadline and retryPeriod of a KubeSchedulerConfiguration's ``leaderElection`` (decoded:
    nanoseconds) as LeaderElector's keyword arguments in seconds, kube's defaults where unset."""
    out = {}
    for key, arg, default in (("leaseDuration", "lease_duration", 15.0), ("renewDeadline", "renew_deadline", 10.0),
                              ("retryPeriod", "retry_period", 2.0)):
        value = leader_election.get(key)
        out[arg] = float(value) / 1e9 if value else default
    return out


class LeaderElector:
    """client-go's LeaderElector (see the module doc). Callbacks run on the electing thread."""

    def __init__(self, lock: LeaseLock, lease_duration: float = 15.0, renew_deadline: float = 10.0,
                 retry_period: float = 2.0, clock: Clock | None = None, release_on_cancel: bool = True,
                 on_started_leading=None, on_stopped_leading=None, on_new_leader=None, rng=None):
        if lease_duration <= renew_deadline:
            raise ValueError("leaseDuration must be greater than renewDeadline")
        if renew_deadline <= JITTER_FACTOR * retry_period:
            raise ValueError("renewDeadline must be greater than retryPeriod*JitterFactor")
        if min(lease_duration, renew_deadline, retry_period) <= 0:
            raise ValueError("leaseDuration, renewDeadline and retryPeriod must be greater than zero")
        self.lock = lock
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.clock = clock or Clock()
        self.release_on_cancel = release_on_cancel
        self.on_started_leading = on_started_leading
        self.on_stopped_leading = on_stopped_leading
        self.on_new_leader = on_new_leader
        self.rng = rng or random.Random()
        self.state = ACQUIRING
        self.observed = {}
        self.observed_raw = None
        self.observed_time = 0.0
        self.reported_leader = None
        self.round_start = None
        self.transitions_seen = 0

    @property
    def identity(self) -> str:
        return self.lock.identity

    @property
    def leading(self) -> bool:
        """Whether this candidate acts as the leader now (between acquiring and losing the lease)."""
        return self.state == LEADING

    def is_leader(self) -> bool:
        """IsLeader: the last observed holder is us."""
        return self.observed.get("holderIdentity") == self.identity

    def leader(self) -> str:
        return self.observed.get("holderIdentity", "")

    def _set_observed(self, record: dict) -> None:
        self.observed = dict(record)
        self.observed_time = self.clock.now()

    def _lease_valid(self, now: float) -> bool:
        return self.observed_time + float(self.observed.get("leaseDurationSeconds") or 0) > now

    def try_acquire_or_renew(self) -> bool:
        """One attempt; True when we hold the lease afterwards."""
        now = self.clock.now()
        record = {"holderIdentity": self.identity, "leaseDurationSeconds": int(self.lease_duration),
                  "acquireTime": micro_time(now), "renewTime": micro_time(now), "leaseTransitions": 0}
        if self.is_leader() and self._lease_valid(now):   # fast path: update what we saw last time
            record["acquireTime"] = self.observed.get("acquireTime", record["acquireTime"])
            record["leaseTransitions"] = self.observed.get("leaseTransitions", 0)
            try:
                self.lock.update(record)
                self._set_observed(record)
                return True
            except (ApiException, OSError) as err:
                log.error("Failed to update lock optimistically: %s, falling back to slow path", _text(err))
        try:
            old = self.lock.get()
        except ApiException as err:
            if err.status != 404:
                log.error("error retrieving resource lock %s: %s", self.lock.describe(), api_message(err))
                return False
            try:
                self.lock.create(record)
            except (ApiException, OSError) as cerr:
                log.error("error initially creating leader election record: %s", _text(cerr))
                return False
            self._set_observed(record)
            return True
        except OSError as err:
            log.error("error retrieving resource lock %s: %s", self.lock.describe(), err)
            return False
        raw = json.dumps(old, sort_keys=True)
        if raw != self.observed_raw:
            self._set_observed(old)
            self.observed_raw = raw
        if old.get("holderIdentity") and self._lease_valid(now) and not self.is_leader():
            return False
        if self.is_leader():
            record["acquireTime"] = old.get("acquireTime", record["acquireTime"])
            record["leaseTransitions"] = old.get("leaseTransitions", 0)
        else:
            record["leaseTransitions"] = int(old.get("leaseTransitions") or 0) + 1
        try:
            self.lock.update(record)
        except (ApiException, OSError) as err:
            log.error("Failed to update lock: %s", _text(err))
            return False
        self._set_observed(record)
        return True

    def release(self) -> bool:
        """Give the lease up (holder cleared, 1s duration) if we hold it."""
        if not self.is_leader():
            return True
        now = micro_time(self.clock.now())
        record = {"leaseDurationSeconds": 1, "acquireTime": now, "renewTime": now,
                  "leaseTransitions": self.observed.get("leaseTransitions", 0)}
        try:
            self.lock.update(record)
        except (ApiException, OSError, RuntimeError) as err:
            log.error("Failed to release lock: %s", _text(err))
            return False
        self._set_observed(record)
        return True

    def _report(self) -> None:
        holder = self.leader()
        if holder != self.reported_leader:
            self.reported_leader = holder
            if self.on_new_leader is not None:
                self.on_new_leader(holder)

    def step(self):
        """One attempt of the acquire or renew loop; returns the seconds until the next, None once stopped."""
        if self.state == STOPPED:
            return None
        ok = self.try_acquire_or_renew()
        self._report()
        if self.state == ACQUIRING:
            if not ok:
                return self.retry_period * (1 + self.rng.random() * JITTER_FACTOR)
            log.info("successfully acquired lease %s", self.lock.describe())
            self.state = LEADING
            self.round_start = None
            if self.on_started_leading is not None:
                self.on_started_leading()
            return self.retry_period
        if ok:
            self.round_start = None
            return self.retry_period
        now = self.clock.now()
        if self.round_start is None:
            self.round_start = now
        if now - self.round_start >= self.renew_deadline:
            log.info("failed to renew lease %s: timed out waiting for the condition", self.lock.describe())
            self._stop_leading()
            return None
        return self.retry_period

    def _stop_leading(self) -> None:
        self.state = STOPPED
        if self.release_on_cancel:
            self.release()
        if self.on_stopped_leading is not None:
            self.on_stopped_leading()

    def run(self, stop: threading.Event) -> None:
        """Acquire, then renew until the lease is lost or ``stop`` is set (then release, if configured)."""
        log.info("attempting to acquire leader lease %s...", self.lock.describe())
        while not stop.is_set():
            delay = self.step()
            if delay is None:
                return
            stop.wait(delay)
        if self.state == LEADING:
            self._stop_leading()


def _text(err) -> str:
    return api_message(err) if isinstance(err, ApiException) else str(err)
