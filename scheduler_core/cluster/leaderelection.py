"""Leader election over a coordination.k8s.io/v1 Lease, as client-go's leaderelection package does it for
kube-scheduler (lease kube-system/kube-scheduler, 15s lease, 10s renew deadline, 2s retry, release on cancel).

A candidate acquires the lease when it is free or its holder stopped renewing it for leaseDurationSeconds, as
measured on the candidate's own clock from when it last saw the lease change; the leader renews it every retry
period and stops leading when it could not renew within the renew deadline. Writes are optimistic (the Lease's
resourceVersion), so of two candidates only one wins. ``step`` runs one attempt; ``run`` loops it in a thread;
tests drive ``step`` with a fake clock.

Leadership cannot outlive the renew deadline, whatever happens to the electing thread: ``leading`` is true only
until ``renew_deadline`` after the start of the last successful acquire or renew request (a later request may
hang, fail with any exception, or the thread may die), and ``valid_for`` is what is left of it, so the writes a
leader makes (``KubeCluster.write_fence``) are refused, and bounded in time, past it. Another candidate takes the
lease only ``lease_duration`` after it saw that renewal, later than the deadline by lease_duration -
renew_deadline (5 s at kube's defaults): two leaders never act at once. Every failure of a request is caught and
counts as a failed attempt; each renew request's timeout is cut to what is left of the deadline.
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
from .kube import error_text, micro_time

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

    def get(self, timeout: float | None = None) -> dict:
        """The current record (the Lease's spec); raises ApiException (404 when there is no Lease)."""
        self.lease = self.cluster.request("GET", f"{self.path}/{self.name}", timeout=timeout or self.timeout)
        return dict(self.lease.get("spec") or {})

    def create(self, record: dict, timeout: float | None = None) -> None:
        body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace}, "spec": record}
        self.lease = self.cluster.request("POST", self.path, body=body, timeout=timeout or self.timeout)

    def update(self, record: dict, timeout: float | None = None) -> None:
        """PUT the record with the resourceVersion last seen (409 when someone wrote in between)."""
        if self.lease is None:
            raise RuntimeError("lease not initialized, call get or create first")
        body = dict(self.lease, spec=record)
        self.lease = self.cluster.request("PUT", f"{self.path}/{self.name}", body=body,
                                          timeout=timeout or self.timeout)


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
        self.renewed_at = None     # clock time at the start of the last successful acquire or renew request
        self.failures = 0          # failed attempts in a row, and the last one's error text (logged once)
        self.last_failure = ""

    @property
    def identity(self) -> str:
        return self.lock.identity

    def valid_for(self) -> float:
        """Seconds this candidate may still act as the leader: until ``renew_deadline`` after the start of its
        last successful renewal; 0 when it does not lead."""
        if self.state != LEADING or self.renewed_at is None:
            return 0.0
        return max(0.0, self.renewed_at + self.renew_deadline - self.clock.now())

    @property
    def leading(self) -> bool:
        """Whether this candidate acts as the leader now (it acquired the lease and renewed it within the renew
        deadline; see ``valid_for``)."""
        return self.valid_for() > 0

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

    def _request_timeout(self, started: float) -> float:
        """A renewal's requests end by the renew deadline (client-go runs them under its context)."""
        if self.state != LEADING or self.renewed_at is None:
            return self.lock.timeout
        left = self.renewed_at + self.renew_deadline - started
        return max(0.05, min(self.lock.timeout, left))

    def try_acquire_or_renew(self) -> bool:
        """One attempt; True when we hold the lease afterwards. Any error counts as a failed attempt; a run of
        failures is logged once when it starts and once when it ends."""
        started = self.clock.now()
        try:
            ok = self._try_acquire_or_renew(started, self._request_timeout(started))
        except Exception as err:   # whatever the client raises (connection refused, timeouts, a bad answer)
            text = error_text(err)
            if self.failures == 0 or text != self.last_failure:
                log.warning("cannot acquire or renew lease %s: %s", self.lock.describe(), text)
            self.failures += 1
            self.last_failure = text
            return False
        if self.failures:
            log.info("lease %s reachable again after %d failed attempts", self.lock.describe(), self.failures)
            self.failures, self.last_failure = 0, ""
        if ok:
            self.renewed_at = started
        return ok

    def _try_acquire_or_renew(self, now: float, timeout: float) -> bool:
        """tryAcquireOrRenew; False when another holder's lease is valid; raises what the requests raise."""
        record = {"holderIdentity": self.identity, "leaseDurationSeconds": int(self.lease_duration),
                  "acquireTime": micro_time(now), "renewTime": micro_time(now), "leaseTransitions": 0}
        if self.is_leader() and self._lease_valid(now):   # fast path: update what we saw last time
            record["acquireTime"] = self.observed.get("acquireTime", record["acquireTime"])
            record["leaseTransitions"] = self.observed.get("leaseTransitions", 0)
            try:
                self.lock.update(record, timeout)
                self._set_observed(record)
                return True
            except Exception as err:
                log.debug("Failed to update lock optimistically: %s, falling back to slow path", error_text(err))
        try:
            old = self.lock.get(timeout)
        except ApiException as err:
            if err.status != 404:
                raise
            self.lock.create(record, timeout)
            self._set_observed(record)
            return True
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
        self.lock.update(record, timeout)   # a 409: someone else wrote it first
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
            self.lock.update(record, min(self.lock.timeout, 5.0))
        except Exception as err:
            log.error("Failed to release lock: %s", error_text(err))
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
        was_leading = self.state == LEADING
        if was_leading and not self.leading:   # the deadline passed while this thread was held up
            return self._renew_timed_out()
        ok = self.try_acquire_or_renew()
        self._report()
        if not was_leading:
            if not ok:
                return self.retry_period * (1 + self.rng.random() * JITTER_FACTOR)
            log.info("successfully acquired lease %s", self.lock.describe())
            self.state = LEADING
            if self.on_started_leading is not None:
                self.on_started_leading()
            return self.retry_period
        if ok:
            return self.retry_period
        if not self.leading:
            return self._renew_timed_out()
        return min(self.retry_period, self.valid_for())

    def _renew_timed_out(self) -> None:
        log.info("failed to renew lease %s: timed out waiting for the condition", self.lock.describe())
        self._stop_leading()
        return None

    def _stop_leading(self) -> None:
        self.state = STOPPED
        if self.release_on_cancel:
            self.release()
        if self.on_stopped_leading is not None:
            self.on_stopped_leading()

    def run(self, stop: threading.Event) -> None:
        """Acquire, then renew until the lease is lost or ``stop`` is set (then release, if configured). Whatever
        goes wrong in here ends leading: an exception stops the candidate (and ``leading`` lapses by itself at the
        renew deadline even if this thread is gone)."""
        log.info("attempting to acquire leader lease %s...", self.lock.describe())
        try:
            while not stop.is_set():
                delay = self.step()
                if delay is None:
                    return
                stop.wait(delay)
        except BaseException:
            log.exception("leader election for lease %s failed; stopping", self.lock.describe())
            if self.state != STOPPED:
                self.state = STOPPED
                if self.on_stopped_leading is not None:
                    self.on_stopped_leading()
            raise
        if self.state == LEADING:
            self._stop_leading()
