"""Label selectors and node selectors, compiled once into fast matchers."""
from __future__ import annotations

import re

from .errors import ParseError, expect
from .field import aggregate, child, go_string_slice, invalid, not_supported
from .identifiers import is_qualified_name, is_valid_label_value

LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
NODE_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
FIELD_OPERATORS = ("In", "NotIn")
_GO_INT = re.compile(r"[+-]?[0-9]+")


def _requirement(expr, path: str, operators, key_field="key"):
    expect(expr, dict, path, "object")
    key = expr.get(key_field)
    if not isinstance(key, str) or not key:
        raise ParseError(f"{path}.{key_field}", "required value")
    op = expr.get("operator")
    if op not in operators:
        raise ParseError(f"{path}.operator", f'unknown operator "{op}", supported: {", ".join(operators)}')
    values = expect(expr.get("values"), list, f"{path}.values", "list") or []
    for i, v in enumerate(values):
        if not isinstance(v, str):
            raise ParseError(f"{path}.values[{i}]", "expected string")
    return key, op, tuple(values)


def _parse_int(text):
    """strconv.ParseInt(text, 10, 64), or None."""
    if not isinstance(text, str) or not _GO_INT.fullmatch(text):
        return None
    n = int(text)
    return n if -(2 ** 63) <= n < 2 ** 63 else None


def _label_requirement_errors(key: str, op: str, values, path: str) -> list:
    """labels.NewRequirement's checks of one requirement (FieldErrors with kube's paths); ``op`` "=" is a
    label selector's matchLabels entry (one value, no operator check of its own)."""
    errs = []
    vals = values or []
    msgs = is_qualified_name(key)
    if msgs:
        errs.append(invalid(child(path, "key"), key, "; ".join(msgs)))
    vpath = child(path, "values")
    if op in ("In", "NotIn"):
        if not vals:
            errs.append(invalid(vpath, go_string_slice(values), "for 'in', 'notin' operators, values set can't be empty"))
    elif op in ("Exists", "DoesNotExist"):
        if vals:
            errs.append(invalid(vpath, go_string_slice(values), "values set must be empty for exists and does not exist"))
    elif op in ("Gt", "Lt"):
        if len(vals) != 1:
            errs.append(invalid(vpath, go_string_slice(values), "for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, v in enumerate(vals):
            if _parse_int(v) is None:
                errs.append(invalid(f"{vpath}[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an integer"))
    for i, v in enumerate(vals):
        msgs = is_valid_label_value(v)
        if msgs:
            errs.append(invalid(f"{vpath}[{i}][{key}]", v, "; ".join(msgs)))
    return errs


def label_selector_error(raw) -> str | None:
    """metav1.LabelSelectorAsSelector's error: that of the first requirement (matchLabels, then matchExpressions)
    labels.NewRequirement rejects, its field errors aggregated; None for a selector that converts."""
    if not raw:
        return None
    reqs = [(k, "=", [v]) for k, v in (raw.get("matchLabels") or {}).items()]
    reqs.extend((e.get("key", ""), e.get("operator", ""), list(e.get("values") or ()) or None)
                for e in raw.get("matchExpressions") or ())
    for key, op, values in reqs:
        errs = _label_requirement_errors(key, op, values, "")
        if errs:
            return aggregate(errs)
    return None


def node_selector_term_errors(term: dict, path: str = "") -> list:
    """newNodeSelectorTerm's parse errors: matchExpressions as label requirements, matchFields as fields."""
    errs = []
    for i, expr in enumerate(term.get("matchExpressions") or ()):
        p = f"{child(path, 'matchExpressions')}[{i}]"
        op = expr.get("operator", "")
        if op not in NODE_OPERATORS:
            errs.append(not_supported(f"{p}.operator", op, NODE_OPERATORS))
            continue
        errs.extend(_label_requirement_errors(expr.get("key", ""), op, expr.get("values"), p))
    for i, expr in enumerate(term.get("matchFields") or ()):
        p = f"{child(path, 'matchFields')}[{i}]"
        op = expr.get("operator", "")
        if op not in FIELD_OPERATORS:
            errs.append(not_supported(f"{p}.operator", op, FIELD_OPERATORS))
        elif len(expr.get("values") or ()) != 1:
            errs.append(invalid(f"{p}.values", go_string_slice(expr.get("values")), "must have one element"))
    return errs


def is_empty_term(term: dict) -> bool:
    """isEmptyNodeSelectorTerm: no matchExpressions and no matchFields (such a term selects nothing)."""
    return not term.get("matchExpressions") and not term.get("matchFields")


def requirement_matches(key, op, values, labels) -> bool:
    """One label (or node selector) requirement against a label map."""
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":
        return key not in labels or labels[key] not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    # Gt / Lt: exactly one integer value; a label that is not an integer never matches.
    if key not in labels or len(values) != 1:
        return False
    want, have = _parse_int(values[0]), _parse_int(labels[key])
    if want is None or have is None:
        return False
    return have > want if op == "Gt" else have < want


class LabelSelector:
    """metav1.LabelSelector. ``None`` input matches nothing, ``{}`` matches everything.

    ``parse_error``: why kube's LabelSelectorAsSelector rejects it (a key or value that is not label syntax),
    or None; the users decide what an unconvertible selector means (kube: a plugin error, or terms dropped).
    """

    __slots__ = ("match_labels", "expressions", "nothing", "raw", "key", "parse_error")

    def __init__(self, raw, path: str = "labelSelector"):
        self.raw = raw
        self.nothing = raw is None
        expect(raw, dict, path, "object")
        raw = raw or {}
        ml = expect(raw.get("matchLabels"), dict, f"{path}.matchLabels", "object") or {}
        for k, v in ml.items():
            if not isinstance(v, str):
                raise ParseError(f"{path}.matchLabels.{k}", "expected string")
        self.match_labels = tuple(ml.items())
        exprs = expect(raw.get("matchExpressions"), list, f"{path}.matchExpressions", "list") or []
        reqs = []
        for i, e in enumerate(exprs):
            key, op, values = _requirement(e, f"{path}.matchExpressions[{i}]", LABEL_OPERATORS)
            if op in ("In", "NotIn") and not values:
                raise ParseError(f"{path}.matchExpressions[{i}].values",
                                 "values must be non-empty for In and NotIn")
            reqs.append((key, op, frozenset(values)))
        self.expressions = tuple(reqs)
        self.parse_error = label_selector_error(raw)
        # Equal keys select the same pods (requirements are ANDed, so their order does not matter).
        self.key = None if self.nothing else (frozenset(self.match_labels), frozenset(self.expressions))

    @classmethod
    def from_match_labels(cls, labels: dict) -> "LabelSelector":
        return cls({"matchLabels": dict(labels)})

    def is_empty(self) -> bool:
        return not self.nothing and not self.match_labels and not self.expressions

    def matches(self, labels: dict) -> bool:
        if self.nothing:
            return False
        for k, v in self.match_labels:
            if labels.get(k) != v:
                return False
        for key, op, values in self.expressions:
            if not requirement_matches(key, op, values, labels):
                return False
        return True


class NodeSelectorTerm:
    """One nodeSelectorTerm: AND of matchExpressions (labels) and matchFields (metadata.name).

    A term that is empty or does not parse (``parse_errors``: kube's labels.NewRequirement and field selector
    checks) matches nothing, as kube's. ``raw`` is the term as given.
    """

    __slots__ = ("expressions", "fields", "valid", "raw")

    def __init__(self, raw, path: str):
        expect(raw, dict, path, "object")
        raw = raw or {}
        self.raw = raw
        exprs = expect(raw.get("matchExpressions"), list, f"{path}.matchExpressions", "list") or []
        fields = expect(raw.get("matchFields"), list, f"{path}.matchFields", "list") or []
        self.expressions = tuple(_requirement(e, f"{path}.matchExpressions[{i}]", NODE_OPERATORS)
                                 for i, e in enumerate(exprs))
        parsed_fields = [_requirement(e, f"{path}.matchFields[{i}]", NODE_OPERATORS)
                         for i, e in enumerate(fields)]
        # Only metadata.name is a node field (the API server accepts no other matchFields key).
        self.valid = bool(self.expressions or parsed_fields) and not self.parse_errors() and \
            all(key == "metadata.name" for key, _op, _values in parsed_fields)
        self.fields = tuple(parsed_fields)

    def parse_errors(self, path: str = "") -> list:
        """kube's parse errors of this term (FieldErrors, paths under ``path``)."""
        return node_selector_term_errors(self.raw, path)

    def matches(self, labels: dict, name: str) -> bool:
        if not self.valid:
            return False
        for key, op, values in self.expressions:
            if not requirement_matches(key, op, values, labels):
                return False
        for _key, op, values in self.fields:
            if (name == values[0]) != (op == "In"):
                return False
        return True

    def name_set(self):
        """The node names this term is pinned to by matchFields metadata.name In, or None."""
        names = None
        for key, op, values in self.fields:
            if key == "metadata.name" and op == "In":
                s = set(values)
                names = s if names is None else names & s
        return names


class NodeSelector:
    """v1.NodeSelector: OR over nodeSelectorTerms."""

    __slots__ = ("terms",)

    def __init__(self, raw, path: str):
        expect(raw, dict, path, "object")
        terms = expect((raw or {}).get("nodeSelectorTerms"), list, f"{path}.nodeSelectorTerms", "list") or []
        self.terms = tuple(NodeSelectorTerm(t, f"{path}.nodeSelectorTerms[{i}]") for i, t in enumerate(terms))

    def matches(self, labels: dict, name: str) -> bool:
        for t in self.terms:
            if t.matches(labels, name):
                return True
        return False


class PreferredTerm:
    """A weighted preferredDuringScheduling node selector term."""

    __slots__ = ("weight", "term")

    def __init__(self, raw, path: str):
        expect(raw, dict, path, "object")
        w = raw.get("weight", 0)
        if not isinstance(w, int) or isinstance(w, bool):
            raise ParseError(f"{path}.weight", "expected integer")
        self.weight = w
        self.term = NodeSelectorTerm(raw.get("preference") or {}, f"{path}.preference")
