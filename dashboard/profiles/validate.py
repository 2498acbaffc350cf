"""The core's loader on a profile document, with each error split out and tied to its kube field path.

Stages as kube-scheduler runs them: decode (strict decoding), validation (ValidateKubeSchedulerConfiguration,
one error per field) and framework (building every profile's plugins, e.g. NodeResourcesFit's args); then the
deployment's rules for extenders (stage "extenders", ``extender_problems``), which kube does not have: every URL
an extender is called at passes the loops' ExtenderPolicy (http/https, never a link-local or cloud-metadata
address, under an allowed prefix when ``SCHEDSCOPE_EXTENDER_ALLOW`` lists them), and with no such list only admins
may save a profile that names an extender at all.
"""
from __future__ import annotations

import copy
import re

from scheduler_core import versions
from scheduler_core.config import ConfigError, build_frameworks, load_config
from scheduler_core.config.decode import DecodeError, decode
from scheduler_core.config.defaults import set_defaults
from scheduler_core.config.validation import validate_configuration
from scheduler_core.extender import HTTPExtender
from scheduler_core.framework.handle import Handle
from scheduler_core.framework.profile import FrameworkError
from scheduler_core.plugins.registry import build_registry, registry_at

from .. import access
from ..services import extenders

_REGISTRY = None
_UNKNOWN_FIELD = re.compile(r'unknown field "([^"]+)"')
_DECODING_AT = re.compile(r"^decoding \.(\S+?): ")
_PLUGIN_ERR = re.compile(r'^creating profile for scheduler name (.*?): initializing plugin "([^"]+)": (.*)$', re.S)
_FIELD_PATH = re.compile(r"^([A-Za-z][\w.\[\]]*): ")


def registry():
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = build_registry()
    return _REGISTRY


_DUPLICATE_NAME = re.compile(r"^profiles\[(\d+)\]\.schedulerName: Duplicate value: ")


class Problem:
    """One error: kube's text, the stage, the document path it names ("" when it names none) and, where kube's
    text does not say what it is about, a ``hint`` in plain words."""

    def __init__(self, message: str, stage: str, path: str = "", hint: str = ""):
        self.message, self.stage, self.path, self.hint = message, stage, path, hint

    def shown(self) -> str:
        """kube's text, then the hint if any."""
        return f"{self.message} — {self.hint}" if self.hint else self.message

    def __repr__(self):
        return f"Problem({self.stage}: {self.path or '-'}: {self.message})"


def _split_aggregate(text: str) -> list:
    """utilerrors.Aggregate text "[a, b]" back into its messages (each starts with a field path)."""
    if not (text.startswith("[") and text.endswith("]")):
        return [text]
    parts = re.split(r", (?=[A-Za-z][\w.\[\]]*: )", text[1:-1])
    return parts


def check(doc, features=None) -> list:
    """All of kube's objections to the document at ``features`` (versions.Features; None: the default version), in
    stage order; [] when kube-scheduler of that version and feature gates would start with it."""
    features = versions.features(features)
    if not isinstance(doc, dict):
        return [Problem("the document must be a mapping (KubeSchedulerConfiguration)", "decode")]
    try:
        cfg = decode(copy.deepcopy(doc), features)
    except DecodeError as err:
        text = str(err)
        paths = _UNKNOWN_FIELD.findall(text)
        if paths:
            return [Problem(f'unknown field "{p}"', "decode", p) for p in paths]
        m = _DECODING_AT.match(text)
        return [Problem(text, "decode", m.group(1) if m else "")]
    set_defaults(cfg, registry_at(registry(), features), features)
    errs = validate_configuration(cfg, features)
    if errs:
        return [Problem(str(e), "validation", e.path, _duplicate_hint(str(e), doc)) for e in errs]
    try:
        config = load_config(doc, registry(), kube_version=features)
        build_frameworks(config, registry(), lambda: Handle(snapshot=None))
    except ConfigError as err:
        return [Problem(str(err), err.stage)]
    except FrameworkError as err:
        return _framework_problems(str(err), doc)
    return url_problems(doc)


def _extenders(doc) -> list:
    """The document's extenders as the loops build them, at the newest supported version whose loader accepts the
    document ([] when none does)."""
    for version in reversed(versions.SUPPORTED_VERSIONS) if doc else ():
        try:
            return [HTTPExtender(ext) for ext in load_config(doc, registry(), kube_version=version).extenders]
        except (ConfigError, FrameworkError):
            continue
    return []


def url_problems(doc) -> list:
    """Each extender URL the loops would refuse to call (ExtenderPolicy.url_problem), at its urlPrefix or verb."""
    policy, out = extenders.policy(), []
    for i, ext in enumerate(_extenders(doc)):
        for field, url in ext.call_urls():
            problem = policy.url_problem(url)
            if problem:
                out.append(Problem(f"extenders[{i}].{field}: {url}: {problem}", "extenders", f"extenders[{i}].{field}"))
                break
    return out


def permission_problems(doc, user) -> list:
    """With no allowed URL prefixes configured only admins may save a profile naming an extender. ``user`` None:
    an operator's command (manage.py), which may; a request always passes its user."""
    if extenders.policy().allowed_prefixes is not None or user is None or access.is_admin(user):
        return []
    message = ("only admins may save a profile that names an extender (SCHEDSCOPE_EXTENDER_ALLOW lists no allowed "
               "URL prefixes)")
    return [Problem(f"extenders[{i}].urlPrefix: {message}", "extenders", f"extenders[{i}].urlPrefix")
            for i in range(len(_extenders(doc)))]


def extender_problems(doc, user) -> list:
    """The deployment's extender rules for ``user`` saving ``doc``: URLs, then who may name extenders."""
    return url_problems(doc) + permission_problems(doc, user)


def _duplicate_hint(text: str, doc: dict) -> str:
    """For a duplicate schedulerName (whose value kube prints as a field.Path, {} from 1.36): the name, and the
    profile that has it first."""
    m = _DUPLICATE_NAME.match(text)
    if m is None:
        return ""
    profiles = doc.get("profiles") or []
    name = profiles[int(m.group(1))].get("schedulerName")
    first = next(i for i, p in enumerate(profiles) if isinstance(p, dict) and p.get("schedulerName") == name)
    return f'"{name}" is the schedulerName of profiles[{first}] too'


def _framework_problems(text: str, doc: dict) -> list:
    m = _PLUGIN_ERR.match(text)
    if not m:
        return [Problem(text, "framework", _profile_path(doc, text))]
    sched, plugin, rest = m.groups()
    pi = _profile_index(doc, sched)
    base = f"profiles[{pi}]" if pi is not None else ""
    if pi is not None:
        for k, pc in enumerate(doc["profiles"][pi].get("pluginConfig") or []):
            if isinstance(pc, dict) and pc.get("name") == plugin:
                base = f"profiles[{pi}].pluginConfig[{k}].args"
                break
    out = []
    for part in _split_aggregate(rest):
        fm = _FIELD_PATH.match(part)
        path = f"{base}.{fm.group(1)}" if fm and base else base
        out.append(Problem(f'initializing plugin "{plugin}": {part}', "framework", path))
    return out


def _profile_index(doc, sched):
    for i, prof in enumerate(doc.get("profiles") or []):
        if isinstance(prof, dict) and (prof.get("schedulerName") or "default-scheduler") == sched:
            return i
    return None


def _profile_path(doc, text) -> str:
    m = re.search(r"scheduler name (\S+?):", text)
    pi = _profile_index(doc, m.group(1)) if m else None
    return f"profiles[{pi}].plugins" if pi is not None else ""
