"""Extension points of the scheduling framework (kube-scheduler framework/interface.go).

A plugin is a class deriving from ``Plugin`` and from one interface per extension point it implements.
Methods take the CycleState, the Pod and a NodeInfo (or node name) and return ``None`` for Success or
a ``Status``. The extension points a plugin implements are read from the interfaces it derives from.
"""
from __future__ import annotations

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_TOTAL_SCORE = 2**63 - 1
# What a QueueingHintFn answers: the event may make the pod schedulable (Queue) or it cannot (QueueSkip).
QUEUE = "Queue"
QUEUE_SKIP = "QueueSkip"

EXTENSION_POINTS = ("PreEnqueue", "QueueSort", "PreFilter", "Filter", "PostFilter", "PreScore", "Score",
                    "Reserve", "Permit", "PreBind", "Bind", "PostBind", "PlacementGenerate", "PlacementScore")


class Plugin:
    """Base of every plugin. ``name`` is the name used in configuration and traces."""

    name = ""

    @classmethod
    def new(cls, args, handle):
        """Factory: build the plugin from its (defaulted) args dict and the framework handle."""
        return cls()

    def events_to_register(self):
        """Cluster events (resource, action set[, QueueingHintFn]) that may make a pod this plugin rejected
        schedulable; a hint ``fn(pod, old, new)`` returns QUEUE or QUEUE_SKIP (an exception counts as QUEUE)."""
        return ()


class PreEnqueuePlugin(Plugin):
    def pre_enqueue(self, pod):
        raise NotImplementedError


class QueueSortPlugin(Plugin):
    def less(self, a, b) -> bool:
        """a and b are QueuedPodInfo-like objects with ``pod`` and ``timestamp``."""
        raise NotImplementedError


class PreFilterExtensions:
    """Incremental updates of PreFilter state when pods are added to / removed from a node."""

    def add_pod(self, state, pod_to_schedule, pod_to_add, node_info):
        return None

    def remove_pod(self, state, pod_to_schedule, pod_to_remove, node_info):
        return None


class PreFilterPlugin(Plugin):
    def pre_filter(self, state, pod):
        """Return (PreFilterResult-or-None, status). A PreFilterResult is a set of node names."""
        raise NotImplementedError

    def pre_filter_extensions(self):
        return None


class FilterPlugin(Plugin):
    """``filter_depends_on`` says what a plugin's Filter verdict reads of a node: "node" (the Node object
    only, not its pods), "resources" (the Node object, the summed requests and the number of its pods: then
    ``filter_resources(state, pod, node, requested, num_pods)`` gives the same Status as ``filter``), or None
    (anything). The framework's ResourceFilter relies on it to filter nodes with pods added or removed
    without building them."""

    filter_depends_on = None

    def filter(self, state, pod, node_info):
        raise NotImplementedError


class PostFilterPlugin(Plugin):
    def post_filter(self, state, pod, node_statuses):
        """Return (PostFilterResult-or-None, status); the result carries ``nominated_node_name``."""
        raise NotImplementedError


class PreScorePlugin(Plugin):
    def pre_score(self, state, pod, node_infos):
        raise NotImplementedError


class ScoreExtensions:
    def normalize_score(self, state, pod, scores):
        """Normalize in place. ``scores`` is a list of [node_name, score] pairs."""
        return None


class ScorePlugin(Plugin):
    def score(self, state, pod, node_info):
        """Return (score, status)."""
        raise NotImplementedError

    def score_extensions(self):
        return None


class ReservePlugin(Plugin):
    def reserve(self, state, pod, node_name):
        raise NotImplementedError

    def unreserve(self, state, pod, node_name):
        raise NotImplementedError


class PermitPlugin(Plugin):
    def permit(self, state, pod, node_name):
        """Return (status, timeout_seconds)."""
        raise NotImplementedError


class PreBindPlugin(Plugin):
    def pre_bind(self, state, pod, node_name):
        raise NotImplementedError

    def pre_bind_pre_flight(self, state, pod, node_name):
        """PreBindPreFlight (1.36, NominatedNodeNameForExpectation): None when PreBind will act for this pod on
        the node, Skip when it has nothing to do (PreBind is then not called), or an Error."""
        return None


class BindPlugin(Plugin):
    def bind(self, state, pod, node_name):
        raise NotImplementedError


class PostBindPlugin(Plugin):
    def post_bind(self, state, pod, node_name):
        raise NotImplementedError


class Placement:
    """A set of nodes a pod group is tried on in a pod-group cycle (fwk.Placement): a name (a topology domain, or
    "" for every node) and its NodeInfos."""

    __slots__ = ("name", "nodes")

    def __init__(self, name: str, nodes):
        self.name = name
        self.nodes = list(nodes)

    def __repr__(self):
        return f"Placement({self.name!r}, {len(self.nodes)} nodes)"


class PodGroupAssignments:
    """A placement and the nodes a pod-group cycle proposed in it (fwk.PodGroupAssignments): ``proposed`` is
    [(pod, node name)] of the pods that got a node."""

    __slots__ = ("placement", "proposed")

    def __init__(self, placement: Placement, proposed):
        self.placement = placement
        self.proposed = list(proposed)


class PlacementGeneratePlugin(Plugin):
    def generate_placements(self, state, pod_group, parent: Placement):
        """([Placement], status) for a pod group (``pod_group``: its (namespace, name)) within ``parent``."""
        raise NotImplementedError


class PlacementScoreExtensions:
    def normalize_placement_score(self, state, pod_group, scores):
        """Normalize ``scores`` ([placement, score] lists) in place; returns a Status or None."""
        raise NotImplementedError


class PlacementScorePlugin(Plugin):
    def score_placement(self, state, pod_group, assignments: PodGroupAssignments):
        """(score, status) of one placement's assignments."""
        raise NotImplementedError

    def placement_score_extensions(self):
        return None


POINT_INTERFACES = {"PreEnqueue": PreEnqueuePlugin, "QueueSort": QueueSortPlugin, "PreFilter": PreFilterPlugin,
                    "Filter": FilterPlugin, "PostFilter": PostFilterPlugin, "PreScore": PreScorePlugin,
                    "Score": ScorePlugin, "Reserve": ReservePlugin, "Permit": PermitPlugin,
                    "PreBind": PreBindPlugin, "Bind": BindPlugin, "PostBind": PostBindPlugin,
                    "PlacementGenerate": PlacementGeneratePlugin, "PlacementScore": PlacementScorePlugin}


def extension_points_of(plugin_cls) -> set:
    """The extension points a plugin class implements."""
    return {p for p, iface in POINT_INTERFACES.items() if issubclass(plugin_cls, iface)}


class PostFilterResult:
    """A PostFilter outcome: the node to nominate, plus a JSON-able ``record`` for the trace; ``alternatives``:
    [(node, victims)] that a random order could have nominated as well (preemption's ties)."""

    __slots__ = ("nominated_node_name", "mode", "record", "victims", "alternatives")

    def __init__(self, nominated_node_name: str = "", mode: str = "override", record=None, victims=(),
                 alternatives=()):
        self.nominated_node_name = nominated_node_name
        self.mode = mode
        self.record = record
        self.victims = list(victims)
        self.alternatives = list(alternatives)
