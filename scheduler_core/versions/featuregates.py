"""Feature gates as kube-scheduler's ``--feature-gates`` takes them (k8s.io/component-base/featuregate).

A version's table gives every gate it knows as a ``Gate`` (default, pre-release stage, locked to its default).
``parse_gate_settings`` reads the flag's text (``"A=true,B=false"``) or a mapping; ``resolve_gates`` applies the
settings to a table with the rules of that version's featuregate package: at 1.30 an unknown gate is an error and
the first error stops; from 1.31 on (versioned gates) an unknown gate is only a warning, every locked gate set to
the other value is reported, and, when none is, the gates' dependencies are checked.
"""
from __future__ import annotations

from typing import NamedTuple

from ..objects.field import aggregate

ALPHA, BETA, GA, DEPRECATED = "ALPHA", "BETA", "", "DEPRECATED"
SPECIAL = {"AllAlpha": ALPHA, "AllBeta": BETA}   # set every gate of that stage not set explicitly
_GO_TRUE = frozenset(("1", "t", "T", "TRUE", "true", "True"))
_GO_FALSE = frozenset(("0", "f", "F", "FALSE", "false", "False"))


class Gate(NamedTuple):
    """One gate's spec at a version."""

    default: bool
    stage: str
    locked: bool = False


class FeatureGateError(ValueError):
    """Feature gate settings kube-scheduler would refuse; the text is kube's."""


def _parse_bool(key: str, text: str) -> bool:
    """strconv.ParseBool with the featuregate package's error text."""
    if text in _GO_TRUE:
        return True
    if text in _GO_FALSE:
        return False
    raise FeatureGateError(f'invalid value of {key}={text}, err: strconv.ParseBool: parsing "{text}": invalid syntax')


def parse_gate_settings(value, components=("kube",)) -> dict:
    """The settings of a ``--feature-gates`` value: ``"A=true,B=false"`` (a ``component:`` prefix names the
    component, "kube" when absent), a mapping of gate names to booleans, or None. Returns {name: bool}."""
    if value is None:
        return {}
    if isinstance(value, dict):
        out = {}
        for key, v in value.items():
            if not isinstance(key, str):
                raise FeatureGateError(f"feature gate names are strings, not {key!r}")
            if isinstance(v, str):
                v = _parse_bool(key, v.strip())
            elif not isinstance(v, bool):
                raise FeatureGateError(f"invalid value of {key}={v}, expected true or false")
            out[key] = v
        return out
    if not isinstance(value, str):
        raise FeatureGateError(f"feature gates: expected a string such as \"A=true,B=false\", not {type(value).__name__}")
    out = {}
    for item in value.split(","):
        if not item:
            continue
        key, sep, text = item.partition("=")
        key = key.strip()
        component, colon, name = key.partition(":")
        if colon:
            if component.strip() not in components:
                raise FeatureGateError(f"component not registered: {component.strip()}")
            key = name.strip()
        if not sep:
            raise FeatureGateError(f"missing bool value for {key}")
        out[key] = _parse_bool(key, text.strip())
    return out


def resolve_gates(known: dict, settings: dict, *, unknown_is_error: bool, dependencies=None) -> tuple:
    """Apply ``settings`` ({name: bool}) to the table ``known`` ({name: Gate}).

    Returns ({name: enabled} for every known gate, [warnings]); raises FeatureGateError with kube's text."""
    explicit, warnings, errors = {}, [], []
    for key, value in settings.items():
        gate = known.get(key)
        if gate is None:
            if unknown_is_error:
                raise FeatureGateError(f"unrecognized feature gate: {key}")
            warnings.append(f"unrecognized feature gate: {key}")
            continue
        if gate.locked and gate.default != value:
            err = f"cannot set feature gate {key} to {_go_bool(value)}, feature is locked to {_go_bool(gate.default)}"
            if unknown_is_error:
                raise FeatureGateError(err)
            errors.append(err)
            continue
        explicit[key] = value
        if gate.stage == DEPRECATED:
            warnings.append(f"setting deprecated feature gate {key}={_go_bool(value)}; it will be removed in a "
                            f"future release")
        elif gate.stage == GA and key not in SPECIAL:
            warnings.append(f"setting GA feature gate {key}={_go_bool(value)}; it will be removed in a future release")
    if errors:
        raise FeatureGateError(aggregate(errors))
    enabled = dict(explicit)
    for special, stage in SPECIAL.items():
        if special in explicit:
            for name, gate in known.items():
                if gate.stage == stage and name not in SPECIAL and name not in enabled:
                    enabled[name] = explicit[special]
    for name, gate in known.items():
        enabled.setdefault(name, gate.default)
    problems = []
    for feature, needs in sorted((dependencies or {}).items()):
        if enabled.get(feature):
            off = [dep for dep in needs if not enabled.get(dep)]
            if off:
                problems.append(f"{feature} is enabled, but depends on features that are disabled: [{' '.join(off)}]")
    if problems:
        raise FeatureGateError(aggregate(problems))
    return enabled, warnings


def _go_bool(v: bool) -> str:
    return "true" if v else "false"
