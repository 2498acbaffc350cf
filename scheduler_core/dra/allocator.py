"""The structured allocator (k8s.io/dynamic-resource-allocation/structured, the "incubating" variant v1.36's
default feature gates select): finds devices for a pod's unallocated claims on one node.

It works on the API objects as dicts. ``Allocator`` is built once a cycle (PreFilter) from every ResourceSlice,
the DeviceClasses and the devices already allocated (``AllocatedState``); ``allocate(node, claims)`` is called per
node (Filter) and returns one allocation result per claim, ``None`` when the claims do not fit on the node, or
raises ``AllocationError`` (kube's scheduler error: a CEL runtime error, a constraint that "All" cannot meet).

The search is kube's: claims in order, requests in order, devices in pool order (pools sorted by driver and name,
slices by name, devices as listed), backtracking over combinations (never permutations) of one request's devices;
for a firstAvailable request the first subrequest that leads to a full solution wins.
"""
from __future__ import annotations

import itertools
import json
from fractions import Fraction

from ..objects.quantity import canonical, parse_quantity
from ..objects.selectors import NodeSelector
from .cel import compile_selector, device_activation
from .celvalues import CELError

ALLOCATION_RESULTS_MAX_SIZE = 32          # resourceapi.AllocationResultsMaxSize
FIRST_AVAILABLE_MAX_SIZE = 8              # resourceapi.FirstAvailableDeviceRequestMaxSize
INVALID_POOLS = "invalid resource pools were encountered"


class AllocationError(Exception):
    """Allocation must stop: the scheduler reports it as an error (not as "does not fit")."""


class FailedOnNode(AllocationError):
    """ErrFailedAllocationOnNode: the node cannot be used (kube: UnschedulableAndUnresolvable with the text)."""


def device_id(driver: str, pool: str, device: str) -> tuple:
    return (driver, pool, device)


def format_device_id(did) -> str:
    return "/".join(did)


class AllocatedState:
    """The devices in use: dedicated ones, shared ones (consumable capacity) and their summed consumed capacity.
    Allocations can be taken out again, so one state can follow the claims from cycle to cycle; ``pool_versions``
    changes for a pool whenever what is allocated in it does (a number never given twice; a pool absent from it
    never had anything allocated)."""

    __slots__ = ("devices", "shared", "capacity", "pool_versions", "_capacity_uses")

    def __init__(self):
        self.devices = {}         # device id -> number of allocations holding it (normally 1)
        self.shared = {}          # (device id, share id) -> number of allocations holding it
        self.capacity = {}        # device id -> {capacity name: Fraction}
        self.pool_versions = {}   # (driver, pool) -> version
        self._capacity_uses = {}  # device id -> number of allocations consuming its capacity

    def add_allocation(self, allocation: dict) -> None:
        """foreachAllocatedDevice: admin-access results do not count; shared results add consumed capacity."""
        self._apply(allocation, 1)

    def remove_allocation(self, allocation: dict) -> None:
        """Take out an allocation added before."""
        self._apply(allocation, -1)

    def _apply(self, allocation: dict, sign: int) -> None:
        for res in ((allocation or {}).get("devices") or {}).get("results") or ():
            if res.get("adminAccess"):
                continue
            did = device_id(res.get("driver", ""), res.get("pool", ""), res.get("device", ""))
            self.pool_versions[did[:2]] = next(_VERSIONS)
            if res.get("shareID"):
                _count(self.shared, (did, res["shareID"]), sign)
                consumed = res.get("consumedCapacity")
                if consumed:
                    agg = self.capacity.setdefault(did, {})
                    for name, q in consumed.items():
                        agg[name] = agg.get(name, 0) + sign * parse_quantity(q)
                    if not _count(self._capacity_uses, did, sign):
                        del self.capacity[did]
                continue
            _count(self.devices, did, sign)

    def is_allocated(self, did) -> bool:
        """IsDeviceAllocated."""
        return did in self.devices or did in self.capacity or any(d == did for d, _ in self.shared)


_VERSIONS = itertools.count(1)


def _count(counts: dict, key, sign: int) -> int:
    """Add ``sign`` to a count, dropping it at zero; returns the new count."""
    n = counts.get(key, 0) + sign
    if n:
        counts[key] = n
    else:
        counts.pop(key, None)
    return n


# -- requests ------------------------------------------------------------------------------------------------
class Request:
    """A request or a firstAvailable subrequest (kube's requestAccessor)."""

    __slots__ = ("name", "parent", "class_name", "mode", "count", "admin_access", "selectors", "tolerations",
                 "capacity", "raw")

    def __init__(self, raw: dict, parent: str | None = None):
        self.raw = raw
        self.name = raw.get("name", "")
        self.parent = parent
        self.class_name = raw.get("deviceClassName", "")
        self.mode = raw.get("allocationMode") or "ExactCount"
        self.count = int(raw.get("count", 1)) if self.mode == "ExactCount" else 0
        self.admin_access = bool(raw.get("adminAccess")) if parent is None else False
        self.selectors = [s.get("cel", {}).get("expression", "") for s in raw.get("selectors") or ()]
        self.tolerations = list(raw.get("tolerations") or ())
        self.capacity = {k: parse_quantity(v) for k, v in ((raw.get("capacity") or {}).get("requests") or {}).items()}

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name


def claim_key(claim: dict) -> str:
    meta = claim.get("metadata") or {}
    return f'{meta.get("namespace") or "default"}/{meta.get("name", "")}'


# -- devices and pools ---------------------------------------------------------------------------------------
class SelectorCache:
    """Selector results per device and expression, kept across cycles: a stored device (a dict the cluster
    objects never change in place) gives the same answer until it is replaced. Entries hold their device so an id
    is never reused for another one while its entry lives."""

    def __init__(self):
        self.entries = {}   # (id(device raw), driver, expression) -> (device raw, True | False | CELError)

    def matches(self, dev, expression: str):
        key = (id(dev.raw), dev.id[0], expression)
        hit = self.entries.get(key)
        if hit is None or hit[0] is not dev.raw:
            try:
                result = compile_selector(expression).matches(dev.activation())
            except CELError as err:
                result = err
            if len(self.entries) > 200_000:
                self.entries.clear()
            hit = self.entries[key] = (dev.raw, result)
        return hit[1]


class Device:
    """One device of a ResourceSlice, with its slice and pool."""

    __slots__ = ("id", "raw", "slice", "pool", "_activation")

    def __init__(self, did, raw: dict, slice_: dict, pool):
        self.id = did
        self.raw = raw
        self.slice = slice_
        self.pool = pool
        self._activation = None

    def activation(self):
        if self._activation is None:
            self._activation = device_activation(self.id[0], self.raw)
        return self._activation


class Pool:
    __slots__ = ("driver", "name", "incomplete", "invalid", "invalid_reason", "slices", "other_slices",
                 "counter_sets", "devices")

    def __init__(self, driver, name):
        self.driver, self.name = driver, name
        self.incomplete = self.invalid = False
        self.invalid_reason = ""
        self.slices = []         # DeviceSlicesTargetingNode, sorted by name
        self.other_slices = []   # DeviceSlicesNotTargetingNode
        self.counter_sets = {}
        self.devices = []        # [(slice index, [Device])]

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.name}"


def node_matches(node, node_name: str, all_nodes: bool, selector) -> bool:
    """NodeMatches."""
    if node_name:
        return node is not None and node.name == node_name
    if all_nodes:
        return True
    if selector is not None:
        return NodeSelector(selector, "nodeSelector").matches(node.labels, node.name)
    return False


def _spec(slice_: dict) -> dict:
    return slice_.get("spec") or {}


def _slice_name(slice_: dict) -> str:
    return (slice_.get("metadata") or {}).get("name", "")


def gather_pools(slices_for_node, node, all_slices) -> list:
    """GatherPools: the pools whose slices target the node (or share counters), complete or marked."""
    by_pool: dict = {}
    for s in slices_for_node:
        spec = _spec(s)
        if spec.get("sharedCounters"):
            relevant = True
        elif spec.get("nodeName") or spec.get("allNodes") or spec.get("nodeSelector") is not None:
            relevant = node_matches(node, spec.get("nodeName") or "", bool(spec.get("allNodes")),
                                     spec.get("nodeSelector"))
        elif spec.get("perDeviceNodeSelection"):
            relevant = any(node_matches(node, d.get("nodeName") or "", bool(d.get("allNodes")),
                                         d.get("nodeSelector")) for d in spec.get("devices") or ())
        else:
            continue
        if not relevant:
            continue
        pool = spec.get("pool") or {}
        key = (spec.get("driver", ""), pool.get("name", ""))
        gen = int(pool.get("generation", 0))
        have = by_pool.get(key)
        if have is None or gen > int(_spec(have[0]).get("pool", {}).get("generation", 0)):
            by_pool[key] = [s]
        elif gen == int(_spec(have[0]).get("pool", {}).get("generation", 0)):
            have.append(s)
    result, with_binding_conditions = [], []
    for key, pool_slices in by_pool.items():
        pool_meta = _spec(pool_slices[0]).get("pool") or {}
        count = int(pool_meta.get("resourceSliceCount", 0))
        all_for_pool = None
        if len(pool_slices) != count:
            gen = int(pool_meta.get("generation", 0))
            same = [s for s in all_slices if (_spec(s).get("driver"), (_spec(s).get("pool") or {}).get("name")) == key]
            if any(int((_spec(s).get("pool") or {}).get("generation", 0)) > gen for s in same):
                continue   # obsolete
            all_for_pool = [s for s in same if int((_spec(s).get("pool") or {}).get("generation", 0)) == gen]
            if len(all_for_pool) != count:
                p = Pool(*key)
                p.incomplete = True
                result.append(p)
                continue
        p = _build_pool(key, pool_slices, all_for_pool)
        has_bc = any(d.get("bindingConditions") is not None for s in p.slices for d in _spec(s).get("devices") or ())
        (with_binding_conditions if has_bc else result).append(p)
    result.sort(key=lambda p: (p.driver, p.name))
    with_binding_conditions.sort(key=lambda p: (p.driver, p.name))
    return result + with_binding_conditions


def _build_pool(key, slices, all_for_pool) -> Pool:
    p = Pool(*key)
    slices = sorted(slices, key=_slice_name)
    counter_slices = [s for s in slices if _spec(s).get("sharedCounters")]
    device_slices = [s for s in slices if not _spec(s).get("sharedCounters")]
    names = set()
    for s in device_slices:
        for d in _spec(s).get("devices") or ():
            if d.get("name") in names:
                return _invalid(p, f"duplicate device name {d.get('name')}")
            names.add(d.get("name"))
    for s in counter_slices:
        for cs in _spec(s).get("sharedCounters") or ():
            if cs.get("name") in p.counter_sets:
                return _invalid(p, f"duplicate counter set name {cs.get('name')}")
            p.counter_sets[cs.get("name")] = {n: parse_quantity(c.get("value", "0"))
                                             for n, c in (cs.get("counters") or {}).items()}
    err = _counter_consumption_error(p.counter_sets, slices)
    if err:
        return _invalid(p, err)
    p.slices = device_slices
    if all_for_pool is not None and len(slices) != len(all_for_pool):
        mine = {_slice_name(s) for s in slices}
        p.other_slices = [s for s in all_for_pool if _slice_name(s) not in mine]
        err = _counter_consumption_error(p.counter_sets, p.other_slices)
        if err:
            p.slices, p.other_slices = [], []
            return _invalid(p, err)
    for s in p.slices:
        spec = _spec(s)
        p.devices.append((s, [Device(device_id(p.driver, p.name, d.get("name", "")), d, s, p)
                              for d in spec.get("devices") or ()]))
    return p


def _invalid(p: Pool, reason: str) -> Pool:
    p.invalid, p.invalid_reason = True, reason
    return p


def _counter_consumption_error(counter_sets, slices) -> str | None:
    for s in slices:
        for d in _spec(s).get("devices") or ():
            for use in d.get("consumesCounters") or ():
                cs = counter_sets.get(use.get("counterSet"))
                if cs is None:
                    return f"counter set {use.get('counterSet')} not found"
                for name in use.get("counters") or {}:
                    if name not in cs:
                        return f"counter {name} not found in counter set {use.get('counterSet')}"
    return None


# -- consumable capacity (consumable_capacity.go) ------------------------------------------------------------
def _policy_quantity(policy, key):
    v = (policy or {}).get(key)
    return None if v is None else parse_quantity(v)


def _consumed(requested, cap: dict) -> Fraction:
    """calculateConsumedCapacity."""
    policy = cap.get("requestPolicy")
    if requested is None:
        default = _policy_quantity(policy, "default")
        return default if default is not None else parse_quantity(cap.get("value", "0"))
    if policy is None:
        return requested
    valid_range = policy.get("validRange")
    if valid_range is not None and valid_range.get("min") is not None:
        lo = parse_quantity(valid_range["min"])
        if requested < lo:
            return lo
        if valid_range.get("step") is None:
            return requested
        step = int(parse_quantity(valid_range["step"]))
        added = -(-int(requested) // 1) - int(lo)
        n = added // step + (1 if added % step else 0)
        return Fraction(int(lo) + step * n)
    if policy.get("validValues") is not None:
        for v in policy["validValues"]:
            if requested <= parse_quantity(v):
                return parse_quantity(v)
    return requested


def _violates(value, policy) -> bool:
    if policy is None:
        return False
    default = _policy_quantity(policy, "default")
    if default is not None and value == default:
        return False
    valid_range = policy.get("validRange")
    if valid_range is not None:
        hi = _policy_quantity(valid_range, "max")
        if hi is not None and value > hi:
            return True
        if valid_range.get("step") is not None:
            step = int(parse_quantity(valid_range["step"]))
            if (int(value) - int(parse_quantity(valid_range.get("min", "0")))) % step:
                return True
        return False
    if policy.get("validValues"):
        return all(value != parse_quantity(v) for v in policy["validValues"])
    return False


def consumed_capacity(requests: dict, capacity: dict) -> dict:
    """GetConsumedCapacityFromRequest: what one allocation takes of every capacity of the device."""
    return {name: _consumed(requests.get(name), cap) for name, cap in capacity.items()}


def capacity_fits(current: dict, requests: dict, device: dict, allocating: dict) -> bool:
    """CmpRequestOverCapacity; raises ValueError when a requested capacity is not defined by the device."""
    capacity = device.get("capacity") or {}
    if any(name not in capacity for name in requests):
        raise ValueError("some requested capacity has not been defined")
    for name, cap in capacity.items():
        used = _consumed(requests.get(name), cap)
        if _violates(used, cap.get("requestPolicy")):
            return False
        total = current.get(name, 0) + used + allocating.get(name, 0)
        if total > parse_quantity(cap.get("value", "0")):
            return False
    return True


# -- taints --------------------------------------------------------------------------------------------------
def tolerates(toleration: dict, taint: dict) -> bool:
    """resourceclaim.ToleratesTaint."""
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("key") and toleration["key"] != taint.get("key"):
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return op == "Exists"


def untolerated_taint(device: dict, request: Request):
    """The first NoSchedule/NoExecute taint of the device that the request does not tolerate, or None."""
    for taint in device.get("taints") or ():
        if taint.get("effect") in ("NoSchedule", "NoExecute") and \
                not any(tolerates(t, taint) for t in request.tolerations):
            return taint
    return None


# -- constraints ---------------------------------------------------------------------------------------------
def lookup_attribute(device: Device, name: str):
    attrs = device.raw.get("attributes") or {}
    if name in attrs:
        return attrs[name]
    domain, sep, ident = name.partition("/")
    if not sep or domain != device.id[0]:
        return None
    return attrs.get(ident)


def _attr_value(attr: dict):
    for k in ("string", "int", "bool", "version"):
        if k in attr:
            return (k, attr[k])
    return None


class _Constraint:
    __slots__ = ("requests", "attribute", "distinct", "value", "num", "seen")

    def __init__(self, raw: dict):
        self.requests = set(raw.get("requests") or ())
        self.distinct = raw.get("distinctAttribute") is not None
        self.attribute = raw.get("distinctAttribute") if self.distinct else raw.get("matchAttribute")
        self.value = None
        self.num = 0
        self.seen = {}   # distinct: device id -> value

    def _applies(self, request: str, sub: str) -> bool:
        if not self.requests:
            return True
        return request in self.requests or (bool(sub) and f"{request}/{sub}" in self.requests)

    def add(self, request: str, sub: str, device: Device) -> bool:
        if not self._applies(request, sub):
            return True
        attr = lookup_attribute(device, self.attribute)
        value = _attr_value(attr) if attr is not None else None
        if value is None:
            return False
        if self.distinct:
            if value in self.seen.values():
                return False
            self.seen[device.id] = value
            return True
        if self.num == 0:
            self.value, self.num = value, 1
            return True
        if value != self.value:
            return False
        self.num += 1
        return True

    def remove(self, request: str, sub: str, device: Device) -> None:
        if not self._applies(request, sub):
            return
        if self.distinct:
            self.seen.pop(device.id, None)
        else:
            self.num -= 1


# -- the allocator -------------------------------------------------------------------------------------------
class AllocationCache:
    """Each node's pools and allocation results, kept across cycles. kube gathers the pools and runs the search
    anew on every node in every cycle; the outcome depends only on the inputs this cache compares, so a node whose
    inputs did not change gets the outcome it had: the ResourceSlices and DeviceClasses (the same stored objects:
    the cluster replaces an object it changes, never edits it), the node (the same object), the claims' specs, and
    what is allocated in the node's pools (AllocatedState.pool_versions). Errors are not kept. The
    cache holds what it compares, so an object's id is not reused while an entry names it."""

    MAX_RESULTS = 100_000

    def __init__(self):
        self._inputs = None    # (slices, classes) the entries were computed from
        self._input_ids = None
        self.pools = {}        # node name -> (node, pools)
        self.results = {}      # (node name, claims' specs) -> (node, its pools' versions, results or None)

    def use_inputs(self, slices: list, classes: dict) -> None:
        """Drop every entry unless ``slices`` and ``classes`` are the objects the entries were computed from."""
        ids = (tuple(map(id, slices)), tuple((name, id(c)) for name, c in classes.items()))
        if ids != self._input_ids:
            self._inputs, self._input_ids = (slices, list(classes.values())), ids
            self.pools.clear()
            self.results.clear()

    def store(self, key, entry) -> None:
        if len(self.results) >= self.MAX_RESULTS:
            self.results.clear()
        self.results[key] = entry


class Allocator:
    """NewAllocator: slices split into per-node and shared ones; ``allocate`` per node. With ``cache`` (an
    AllocationCache kept across cycles), a node's pools and results are reused while their inputs are unchanged."""

    def __init__(self, allocated: AllocatedState, classes: dict, slices, selector_cache: SelectorCache | None = None,
                 cache: AllocationCache | None = None):
        self.allocated = allocated
        self.selector_cache = selector_cache or SelectorCache()
        self._pools = {}       # node name -> its pools (gathered once a cycle)
        self.classes = classes
        self.all_slices = list(slices)
        self.cache = cache
        if cache is not None:
            cache.use_inputs(self.all_slices, classes)
        self._specs = {}       # ids of a list of claims -> (the claims, their specs as JSON)
        self.on_node, self.shared = {}, []
        for s in self.all_slices:
            spec = _spec(s)
            if not spec.get("nodeName") or spec.get("sharedCounters"):
                self.shared.append(s)
            else:
                self.on_node.setdefault(spec["nodeName"], []).append(s)
        self._available_counters = {}

    def allocate(self, node, claims: list):
        """A list of allocation results (one per claim), None when they do not fit, or AllocationError. The
        results may be shared with other calls: callers copy them before changing them."""
        if self.cache is None:
            return _Run(self, node, claims).run()
        key = (node.name, self._specs_json(claims))
        versions = self.allocated.pool_versions
        allocated = tuple(versions.get((p.driver, p.name), 0) for p in self.pools_for(node))
        hit = self.cache.results.get(key)
        if hit is not None and hit[0] is node and hit[1] == allocated:
            return hit[2]
        results = _Run(self, node, claims).run()
        self.cache.store(key, (node, allocated, results))
        return results

    def _specs_json(self, claims: list) -> tuple:
        """What of the claims the search reads (their specs), as canonical JSON, computed once per list of claim
        objects."""
        ids = tuple(map(id, claims))
        hit = self._specs.get(ids)
        if hit is None or any(a is not b for a, b in zip(hit[0], claims)):
            hit = self._specs[ids] = (list(claims), tuple(json.dumps(c.get("spec") or {}, sort_keys=True)
                                                          for c in claims))
        return hit[1]

    def pools_for(self, node) -> list:
        pools = self._pools.get(node.name)
        if pools is None:
            hit = self.cache.pools.get(node.name) if self.cache is not None else None
            if hit is not None and hit[0] is node:
                pools = hit[1]
            else:
                pools = gather_pools(self.on_node.get(node.name, []) + self.shared, node, self.all_slices)
                if self.cache is not None:
                    self.cache.pools[node.name] = (node, pools)
            self._pools[node.name] = pools
        return pools

    def available_counters(self, pool: Pool) -> dict:
        """The pool's counters minus what allocated devices consume (computed once per pool)."""
        have = self._available_counters.get(pool.name)
        if have is None:
            have = {name: dict(counters) for name, counters in pool.counter_sets.items()}
            for s in pool.slices + pool.other_slices:
                spec = _spec(s)
                for d in spec.get("devices") or ():
                    if not self.allocated.is_allocated(device_id(spec.get("driver", ""),
                                                                 (spec.get("pool") or {}).get("name", ""),
                                                                 d.get("name", ""))):
                        continue
                    for use in d.get("consumesCounters") or ():
                        cs = have.get(use.get("counterSet"), {})
                        for name, c in (use.get("counters") or {}).items():
                            if name in cs:
                                cs[name] -= parse_quantity(c.get("value", "0"))
            self._available_counters[pool.name] = have
        return have


class _RequestData:
    __slots__ = ("request", "parent", "cls", "num", "all_devices", "selected_sub")

    def __init__(self, request: Request, parent: Request | None):
        self.request, self.parent = request, parent
        self.cls = None
        self.num = 0
        self.all_devices = None
        self.selected_sub = 0


class _AllocationMaxSize(Exception):
    pass


class _Run:
    """One Allocate call (kube's allocator struct)."""

    def __init__(self, alloc: Allocator, node, claims):
        self.a = alloc
        self.node = node
        self.claims = claims
        self.request_data = {}
        self.constraints = []
        self.matches = {}
        self.allocating = {}          # device id -> set of claim indices
        self.allocating_capacity = {}  # device id -> {name: Fraction}
        self.consumed_counters = {}   # pool name -> {set: {counter: Fraction}}
        self.results = [[] for _ in claims]
        self.requests = []            # per claim: [Request] (with .subs for firstAvailable)

    def run(self):
        self.pools = self.a.pools_for(self.node)
        for ci, claim in enumerate(self.claims):
            spec = ((claim.get("spec") or {}).get("devices") or {})
            min_devices = 0
            for ri, raw in enumerate(spec.get("requests") or ()):
                if raw.get("firstAvailable"):
                    parent = Request({"name": raw.get("name", "")})
                    fewest = None
                    for si, sub in enumerate(raw["firstAvailable"]):
                        rd = self._validate(ci, Request(sub, parent=parent.name), parent)
                        self.request_data[(ci, ri, si)] = rd
                        fewest = rd.num if fewest is None else min(fewest, rd.num)
                    min_devices += fewest or 0
                else:
                    exactly = dict(raw.get("exactly") or {}, name=raw.get("name", ""))
                    rd = self._validate(ci, Request(exactly), None)
                    self.request_data[(ci, ri, 0)] = rd
                    min_devices += rd.num
            if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(f"claim {claim_key(claim)}: number of requested devices {min_devices} exceeds "
                                      f"the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}")
            constraints = []
            for i, c in enumerate(spec.get("constraints") or ()):
                if c.get("matchAttribute") is None and c.get("distinctAttribute") is None:
                    raise AllocationError(f"claim {claim_key(claim)}, constraint #{i}: empty constraint "
                                          f"(unsupported constraint type?)")
                constraints.append(_Constraint(c))
            self.constraints.append(constraints)
        self.matches = {}
        try:
            done = self._allocate_one(0, 0, 0, 0, False, (0, 0, 0))
        except _AllocationMaxSize:
            done = False
        if not done:
            if any(p.invalid for p in self.pools):
                raise FailedOnNode(INVALID_POOLS)
            return None
        return [self._result(ci, claim) for ci, claim in enumerate(self.claims)]

    # -- validation --------------------------------------------------------------------------------------
    def _validate(self, ci, request: Request, parent) -> _RequestData:
        claim = self.claims[ci]
        rd = _RequestData(request, parent)
        for i, expr in enumerate(request.selectors):
            if not expr:
                raise AllocationError(f"claim {claim_key(claim)}, request {request.name}, selector #{i}: "
                                      f"CEL expression empty (unsupported selector type?)")
        if not request.class_name:
            raise AllocationError(f"claim {claim_key(claim)}, request {request.name}: missing device class name "
                                  f"(unsupported request type?)")
        cls = self.a.classes.get(request.class_name)
        if cls is None:
            raise AllocationError(f"claim {claim_key(claim)}, request {request.name}: could not retrieve device "
                                  f"class {request.class_name}: deviceclass.resource.k8s.io "
                                  f"\"{request.class_name}\" not found")
        rd.cls = cls
        key = (ci, request)
        if request.mode == "ExactCount":
            rd.num = request.count
        elif request.mode == "All":
            rd.all_devices = []
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocationError(f"claim {claim_key(claim)}, request {request.name}: asks for all devices, "
                                          f"but resource pool {pool.pool_id} is currently being updated")
                if pool.invalid:
                    raise AllocationError(f"claim {claim_key(claim)}, request {request.name}: asks for all devices, "
                                          f"but resource pool {pool.pool_id} is currently invalid")
                for _slice, devices in pool.devices:
                    for dev in devices:
                        if self._selectable(key, rd, dev) and self._capacity_fits(request, dev):
                            rd.all_devices.append(dev)
            rd.num = len(rd.all_devices)
        else:
            raise AllocationError(f"claim {claim_key(claim)}, request {request.name}: unsupported count mode "
                                  f"{request.mode}")
        return rd

    # -- device checks -----------------------------------------------------------------------------------
    def _selectable(self, key, rd: _RequestData, dev: Device) -> bool:
        mk = (dev.id, key)
        hit = self.matches.get(mk)
        if hit is not None:
            return hit
        ok = self._selectors_match(key[0], dev, rd.cls, (rd.cls.get("spec") or {}).get("selectors") or ()) and \
            self._selectors_match(key[0], dev, None, [{"cel": {"expression": e}} for e in rd.request.selectors])
        if ok and _spec(dev.slice).get("perDeviceNodeSelection"):
            ok = node_matches(self.node, dev.raw.get("nodeName") or "", bool(dev.raw.get("allNodes")),
                               dev.raw.get("nodeSelector"))
        self.matches[mk] = ok
        return ok

    def _selectors_match(self, ci, dev: Device, cls, selectors) -> bool:
        for i, sel in enumerate(selectors):
            expr = (sel.get("cel") or {}).get("expression", "")
            where = (f"class {cls['metadata']['name']}" if cls is not None
                     else f"claim {claim_key(self.claims[ci])}")
            prog = compile_selector(expr)
            if prog.error:
                raise AllocationError(f"{where}: selector #{i}: CEL compile error: {prog.error}")
            result = self.a.selector_cache.matches(dev, expr)
            if isinstance(result, CELError):
                raise AllocationError(f"{where}: selector #{i}: CEL runtime error: {result}")
            if not result:
                return False
        return True

    def _capacity_fits(self, request: Request, dev: Device) -> bool:
        """The device's capacity can still give the request what it asks (False where the quantities do not parse)."""
        try:
            return capacity_fits(self.a.allocated.capacity.get(dev.id, {}), request.capacity, dev.raw,
                                 self.allocating_capacity.get(dev.id, {}))
        except ValueError:
            return False

    def _in_use(self, did) -> bool:
        return did in self.a.allocated.devices or bool(self.allocating.get(did))

    def _check_counters(self, dev: Device) -> bool:
        pool = dev.pool
        available = self.a.available_counters(pool)
        consumed = self.consumed_counters.setdefault(pool.name, {})
        for use in dev.raw.get("consumesCounters") or ():
            cs = consumed.setdefault(use.get("counterSet"), {})
            for name, c in (use.get("counters") or {}).items():
                cs[name] = cs.get(name, 0) + parse_quantity(c.get("value", "0"))
        for set_name, counters in available.items():
            used = consumed.get(set_name, {})
            for name, value in counters.items():
                if value < used.get(name, 0):
                    self._release_counters(dev)
                    return False
        return True

    def _release_counters(self, dev: Device) -> None:
        consumed = self.consumed_counters.get(dev.pool.name, {})
        for use in dev.raw.get("consumesCounters") or ():
            cs = consumed.get(use.get("counterSet"), {})
            for name, c in (use.get("counters") or {}).items():
                cs[name] = cs.get(name, 0) - parse_quantity(c.get("value", "0"))

    # -- the search ----------------------------------------------------------------------------------------
    def _allocate_one(self, ci, ri, si, di, in_sub: bool, start) -> bool:
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        requests = ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ()
        if ri >= len(requests):
            try:
                return self._allocate_one(ci + 1, 0, 0, 0, False, (0, 0, 0))
            except _AllocationMaxSize:
                return False
        rd = self.request_data[(ci, ri, si)]
        if not in_sub and rd.parent is not None:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.request_data:
                try:
                    ok = self._allocate_one(ci, ri, sub, di, True, (0, 0, 0))
                except _AllocationMaxSize:
                    sub += 1
                    continue
                all_exceeded = False
                if ok:
                    self.request_data[(ci, ri, 0)].selected_sub = sub
                    return True
                sub += 1
            if all_exceeded:
                raise _AllocationMaxSize()
            return False
        request = rd.request
        if request.mode == "All" and not rd.all_devices:
            return False
        if di >= rd.num:
            return self._allocate_one(ci, ri + 1, 0, 0, False, (0, 0, 0))
        if len(self.results[ci]) + rd.num - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _AllocationMaxSize()
        if request.mode == "All":
            dev = rd.all_devices[di]
            undo = self._allocate_device(ci, rd, dev, must=True)
            if undo is None:
                return False
            try:
                done = self._allocate_one(ci, ri, si, di + 1, in_sub, (0, 0, 0))
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        key = (ci, request)
        for pi in range(start[0], len(self.pools)):
            pool = self.pools[pi]
            if pool.incomplete or pool.invalid:
                continue
            s0 = start[1] if pi == start[0] else 0
            for sli in range(s0, len(pool.devices)):
                _slice, devices = pool.devices[sli]
                d0 = start[2] if (pi == start[0] and sli == start[1]) else 0
                for dvi in range(d0, len(devices)):
                    dev = devices[dvi]
                    if request.admin_access and ci in self.allocating.get(dev.id, ()):
                        continue
                    if not request.admin_access and self._in_use(dev.id):
                        continue
                    if not (self._selectable(key, rd, dev) and self._capacity_fits(request, dev)):
                        continue
                    undo = self._allocate_device(ci, rd, dev, must=False)
                    if undo is None:
                        continue
                    try:
                        done = self._allocate_one(ci, ri, si, di + 1, in_sub, (pi, sli, dvi + 1))
                    except BaseException:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def _allocate_device(self, ci, rd: _RequestData, dev: Device, must: bool):
        """allocateDevice: None when the device cannot be taken, else the function that gives it back."""
        request = rd.request
        multi = bool(dev.raw.get("allowMultipleAllocations"))
        if not multi and request.admin_access and ci in self.allocating.get(dev.id, ()):
            return None
        if not request.admin_access and self._in_use(dev.id):
            return None
        skip_counters = multi and (dev.id in self.a.allocated.capacity or dev.id in self.allocating_capacity)
        uses_counters = bool(dev.raw.get("consumesCounters"))
        if not skip_counters and uses_counters and not self._check_counters(dev):
            return None
        base = rd.parent.name if rd.parent is not None else request.name
        sub = request.name if rd.parent is not None else ""
        if untolerated_taint(dev.raw, request) is not None:
            if not skip_counters and uses_counters:
                self._release_counters(dev)
            return None
        constraints = self.constraints[ci]
        for i, c in enumerate(constraints):
            if not c.add(base, sub, dev):
                if must:
                    raise AllocationError(f"claim {claim_key(self.claims[ci])}, request {request.name}: cannot add "
                                          f"device {format_device_id(dev.id)} because a claim constraint would not "
                                          f"be satisfied")
                for e in range(i):
                    constraints[e].remove(base, sub, dev)
                if not skip_counters and uses_counters:
                    self._release_counters(dev)
                return None
        if not multi:
            self.allocating.setdefault(dev.id, set()).add(ci)
        consumed = {}
        share_id = None
        if not self._capacity_fits(request, dev):
            for c in constraints:
                c.remove(base, sub, dev)
            if not multi:
                self.allocating[dev.id].discard(ci)
            if not skip_counters and uses_counters:
                self._release_counters(dev)
            return None
        if multi:
            consumed = consumed_capacity(request.capacity, dev.raw.get("capacity") or {})
            share_id = True
            agg = self.allocating_capacity.setdefault(dev.id, {})
            for k, v in consumed.items():
                agg[k] = agg.get(k, 0) + v
        self.results[ci].append((rd, dev, consumed if consumed else None, share_id))
        n = len(self.results[ci])

        def undo():
            for c in constraints:
                c.remove(base, sub, dev)
            if multi:
                agg = self.allocating_capacity.get(dev.id, {})
                for k, v in consumed.items():
                    agg[k] -= v
                if not any(agg.values()):
                    self.allocating_capacity.pop(dev.id, None)
            else:
                self.allocating[dev.id].discard(ci)
                if uses_counters:
                    self._release_counters(dev)
            del self.results[ci][n - 1:]
        return undo

    # -- the result --------------------------------------------------------------------------------------
    def _result(self, ci, claim) -> dict:
        results = []
        for rd, dev, consumed, shared in self.results[ci]:
            r = {"request": rd.request.full_name, "driver": dev.id[0], "pool": dev.id[1], "device": dev.id[2]}
            if rd.request.admin_access:
                r["adminAccess"] = True
            if rd.request.tolerations:
                r["tolerations"] = list(rd.request.tolerations)
            if shared:
                r["shareID"] = None   # filled with a new UID when the allocation is written
            if consumed:
                r["consumedCapacity"] = {k: _quantity_string(v) for k, v in consumed.items()}
            results.append(r)
        out = {"devices": {"results": results}}
        config = self._config(ci, claim)
        if config:
            out["devices"]["config"] = config
        selector = self._node_selector([dev for _rd, dev, _c, _s in self.results[ci]])
        if selector is not None:
            out["nodeSelector"] = selector
        return out

    def _config(self, ci, claim) -> list:
        config, seen = [], {}
        spec = (claim.get("spec") or {}).get("devices") or {}
        for ri, _raw in enumerate(spec.get("requests") or ()):
            rd = self.request_data[(ci, ri, 0)]
            if rd.parent is not None:
                rd = self.request_data[(ci, ri, rd.selected_sub)]
            cls = rd.cls
            name = cls["metadata"]["name"]
            if name in seen:
                for i in seen[name]:
                    config[i]["requests"].append(rd.request.full_name)
                continue
            start = len(config)
            for c in (cls.get("spec") or {}).get("config") or ():
                config.append(dict(c, source="FromClass", requests=[rd.request.full_name]))
            seen[name] = range(start, len(config))
        for c in spec.get("config") or ():
            config.append(dict(c, source="FromClaim"))
        return config

    def _node_selector(self, devices):
        fields, exprs = [], []
        for dev in devices:
            spec = _spec(dev.slice)
            src = dev.raw if spec.get("perDeviceNodeSelection") else spec
            if src.get("nodeName") or dev.raw.get("bindsToNode"):
                return {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [self.node.name]}]}]}
            sel = src.get("nodeSelector")
            if sel is not None:
                terms = sel.get("nodeSelectorTerms") or []
                if len(terms) > 1:
                    raise AllocationError(f"create NodeSelector for claim "
                                          f"{(self.claims[0].get('metadata') or {}).get('name', '')}: unsupported "
                                          f"ResourceSlice.NodeSelector with {len(terms)} terms")
                if terms:
                    for r in terms[0].get("matchFields") or ():
                        if r not in fields:
                            fields.append(r)
                    for r in terms[0].get("matchExpressions") or ():
                        if r not in exprs:
                            exprs.append(r)
        if fields or exprs:
            term = {}
            if exprs:
                term["matchExpressions"] = exprs
            if fields:
                term["matchFields"] = fields
            return {"nodeSelectorTerms": [term]}
        return None


def _quantity_string(v: Fraction) -> str:
    return canonical(str(v) if v.denominator == 1 else f"{float(v)}")
