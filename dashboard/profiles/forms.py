"""The profile editor: a Django form over a KubeSchedulerConfiguration v1 document.

Fields are grouped in units (a scalar, a list edited as table rows, one plugin set, one plugin's args).
A submitted form changes the document it started from only in the units whose values changed, so
everything the form does not show (comments aside) survives an edit unchanged. After the core's loader
has checked the result, each kube error is attached to the field whose document path it names (or the
nearest section).
"""
from __future__ import annotations

import copy

import yaml
from django import forms

from scheduler_core.config import (
    ConfigError,
    build_frameworks,
    default_config,
    load_config,
)
from scheduler_core.framework.handle import Handle
from scheduler_core.framework.profile import FrameworkError
from scheduler_core.documents import safe_yaml_load

from . import validate

SETS = ("multiPoint", "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
        "reserve", "permit", "preBind", "bind", "postBind")
WEIGHTED_SETS = ("multiPoint", "score")
EFFECTIVE = {"preFilter": "prefilter", "filter": "filter", "postFilter": "postfilter", "preScore": "prescore",
             "score": "score"}
STRATEGIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
BLANK_ROWS = 1
TABLE_TITLES = {"ext": "extenders", "fit.res": "NodeResourcesFit scoringStrategy.resources",
                "fit.shape": "NodeResourcesFit requestedToCapacityRatio.shape (RequestedToCapacityRatio)",
                "pts.c": "PodTopologySpread defaultConstraints"}


def dump_yaml(doc) -> str:
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False, allow_unicode=True)


def _int(label, **kw):
    return forms.IntegerField(required=False, label=label, **kw)


def _str(label, **kw):
    return forms.CharField(required=False, label=label, **kw)


def _choice(label, choices):
    return forms.ChoiceField(required=False, label=label, choices=[("", "(default)")] + [(c, c) for c in choices])


def _val(v, field):
    """A document value as the field's cleaned value (for change detection)."""
    if isinstance(field, forms.BooleanField):
        return bool(v)
    if isinstance(field, forms.IntegerField):
        return v
    if v is None:
        return ""
    return v if isinstance(v, str) else str(v)


def _set_or_pop(d: dict, key, value):
    if value is None or value == "":
        d.pop(key, None)
    else:
        d[key] = value


class Unit:
    """Fields that are written back together. ``read(doc)`` gives {suffix: value}; ``write(doc, values)``."""

    def __init__(self, prefix, fields, read, write, paths=None):
        self.prefix, self.fields, self.read, self.write = prefix, fields, read, write
        self.paths = paths or (lambda doc: {})

    def name(self, suffix):
        return f"{self.prefix}.{suffix}" if suffix else self.prefix


# -- document helpers ------------------------------------------------------------------------------
def _profiles(doc):
    profs = doc.get("profiles")
    return profs if isinstance(profs, list) and profs else [{}]


def _profile(doc, i, create=False):
    profs = doc.get("profiles")
    if not isinstance(profs, list) or not profs:
        if not create:
            return {}
        profs = doc["profiles"] = [{}]
    return profs[i] if i < len(profs) and isinstance(profs[i], dict) else {}


def _pc_index(prof, plugin):
    for k, pc in enumerate(prof.get("pluginConfig") or []):
        if isinstance(pc, dict) and pc.get("name") == plugin:
            return k
    return None


def _args(doc, i, plugin) -> dict:
    prof = _profile(doc, i)
    k = _pc_index(prof, plugin)
    if k is None:
        return {}
    args = prof["pluginConfig"][k].get("args")
    return args if isinstance(args, dict) else {}


def _write_args(doc, i, plugin, update):
    """Apply update(args) to the plugin's args in profile i (creating the pluginConfig entry if needed)."""
    prof = _profile(doc, i, create=True)
    k = _pc_index(prof, plugin)
    if k is None:
        prof.setdefault("pluginConfig", []).append({"name": plugin, "args": {}})
        k = len(prof["pluginConfig"]) - 1
    entry = prof["pluginConfig"][k]
    args = copy.deepcopy(entry.get("args")) if isinstance(entry.get("args"), dict) else {}
    update(args)
    entry["args"] = args


def _rows(items, n_extra=BLANK_ROWS):
    items = items if isinstance(items, list) else []
    return len(items) + n_extra


# -- units --------------------------------------------------------------------------------------------
def _scalar(prefix, field, getter, setter, path):
    return Unit(prefix, {"": field}, lambda doc: {"": getter(doc)},
                lambda doc, v: setter(doc, v[""]), lambda doc: {"": path(doc)})


def _top_scalar(key, field):
    return _scalar(f"g.{key}", field, lambda doc: doc.get(key), lambda doc, v: _set_or_pop(doc, key, v),
                   lambda doc: key)


def _profile_scalar(i, key, field):
    return _scalar(f"p{i}.{key}", field, lambda doc: _profile(doc, i).get(key),
                   lambda doc, v: _set_or_pop(_profile(doc, i, create=True), key, v),
                   lambda doc: f"profiles[{i}].{key}")


def _table(prefix, columns, count, get_list, set_list, path):
    """Rows of a list of objects: each row's values override the same keys of the existing item."""
    fields = {f"{r}.{key}": field for r in range(count) for key, field in columns.items()}

    def read(doc):
        items = get_list(doc)
        out = {}
        for r in range(count):
            item = items[r] if r < len(items) and isinstance(items[r], dict) else {}
            for key in columns:
                out[f"{r}.{key}"] = item.get(key)
        return out

    def write(doc, values):
        items = get_list(doc)
        new = []
        for r in range(count):
            row = {key: values[f"{r}.{key}"] for key in columns}
            if all(v in (None, "", False) for v in row.values()):
                continue
            item = copy.deepcopy(items[r]) if r < len(items) and isinstance(items[r], dict) else {}
            for key, v in row.items():
                if isinstance(columns[key], forms.BooleanField) and not v:
                    item.pop(key, None)
                else:
                    _set_or_pop(item, key, v)
            new.append(item)
        set_list(doc, new)

    def paths(doc):
        base = path(doc)
        return {f"{r}.{key}": f"{base}[{r}].{key}" for r in range(count) for key in columns}
    unit = Unit(prefix, fields, read, write, paths)
    unit.columns, unit.count = columns, count
    return unit


def _extenders(doc):
    exts = doc.get("extenders") if isinstance(doc.get("extenders"), list) else []

    def set_list(d, new):
        if new:
            d["extenders"] = new
        else:
            d.pop("extenders", None)
    cols = {"urlPrefix": _str("urlPrefix"), "filterVerb": _str("filterVerb"), "prioritizeVerb": _str("prioritizeVerb"),
            "preemptVerb": _str("preemptVerb"), "bindVerb": _str("bindVerb"), "weight": _int("weight"),
            "httpTimeout": _str("httpTimeout"), "nodeCacheCapable": forms.BooleanField(required=False),
            "ignorable": forms.BooleanField(required=False), "enableHTTPS": forms.BooleanField(required=False)}
    return _table("ext", cols, _rows(exts), lambda d: d.get("extenders") if isinstance(d.get("extenders"), list)
                  else [], set_list, lambda d: "extenders")


def _plugin_set(i, set_name, doc):
    ps = ((_profile(doc, i).get("plugins") or {}).get(set_name) or {})
    enabled = ps.get("enabled") if isinstance(ps.get("enabled"), list) else []
    count = len(enabled) + BLANK_ROWS
    weighted = set_name in WEIGHTED_SETS
    fields = {}
    for r in range(count):
        fields[f"{r}.name"] = _str("plugin")
        if weighted:
            fields[f"{r}.weight"] = _int("weight")
        fields[f"{r}.pos"] = _int("order", min_value=1)
    fields["disabled"] = _str("disabled", help_text="comma separated; * disables every default")

    def get_set(d):
        s = ((_profile(d, i).get("plugins") or {}).get(set_name) or {})
        return s if isinstance(s, dict) else {}

    def read(d):
        s = get_set(d)
        en = s.get("enabled") if isinstance(s.get("enabled"), list) else []
        out = {}
        for r in range(count):
            p = en[r] if r < len(en) and isinstance(en[r], dict) else {}
            out[f"{r}.name"] = p.get("name")
            if weighted:
                out[f"{r}.weight"] = p.get("weight")
            out[f"{r}.pos"] = r + 1 if p else None
        dis = s.get("disabled") if isinstance(s.get("disabled"), list) else []
        out["disabled"] = ", ".join(str(p.get("name", "")) for p in dis if isinstance(p, dict))
        return out

    def write(d, v):
        rows = []
        for r in range(count):
            name = (v[f"{r}.name"] or "").strip()
            if not name:
                continue
            entry = {"name": name}
            if weighted and v[f"{r}.weight"] is not None:
                entry["weight"] = v[f"{r}.weight"]
            rows.append((v[f"{r}.pos"] if v[f"{r}.pos"] is not None else 10 ** 6 + r, r, entry))
        rows.sort(key=lambda t: (t[0], t[1]))
        disabled = [{"name": n.strip()} for n in (v["disabled"] or "").split(",") if n.strip()]
        prof = _profile(d, i, create=True)
        plugins = prof.setdefault("plugins", {})
        s = plugins.get(set_name) if isinstance(plugins.get(set_name), dict) else {}
        _set_or_pop(s, "enabled", [e for _p, _r, e in rows] or None)
        _set_or_pop(s, "disabled", disabled or None)
        if s:
            plugins[set_name] = s
        else:
            plugins.pop(set_name, None)
        if not plugins:
            prof.pop("plugins", None)

    def paths(d):
        base = f"profiles[{i}].plugins.{set_name}"
        out = {f"{r}.name": f"{base}.enabled[{r}]" for r in range(count)}
        out["disabled"] = f"{base}.disabled"
        return out
    unit = Unit(f"p{i}.{set_name}", fields, read, write, paths)
    unit.count, unit.weighted, unit.set_name = count, weighted, set_name
    return unit


def _args_path(i, plugin):
    def path(doc):
        k = _pc_index(_profile(doc, i), plugin)
        return f"profiles[{i}].pluginConfig[{k if k is not None else '?'}].args"
    return path


def _args_scalar(i, plugin, key, field, prefix):
    p = _args_path(i, plugin)
    return _scalar(f"p{i}.{prefix}.{key}", field, lambda doc: _args(doc, i, plugin).get(key),
                   lambda doc, v: _write_args(doc, i, plugin, lambda a: _set_or_pop(a, key, v)),
                   lambda doc: f"{p(doc)}.{key}")


def _fit_units(i, doc):
    plugin, p = "NodeResourcesFit", _args_path(i, "NodeResourcesFit")

    def strategy(d):
        s = _args(d, i, plugin).get("scoringStrategy")
        return s if isinstance(s, dict) else {}

    def update_strategy(d, fn):
        def upd(a):
            s = copy.deepcopy(a.get("scoringStrategy")) if isinstance(a.get("scoringStrategy"), dict) else {}
            fn(s)
            _set_or_pop(a, "scoringStrategy", s or None)
        _write_args(d, i, plugin, upd)

    typ = _scalar(f"p{i}.fit.type", _choice("NodeResourcesFit scoringStrategy.type", STRATEGIES),
                  lambda d: strategy(d).get("type"),
                  lambda d, v: update_strategy(d, lambda s: _set_or_pop(s, "type", v)),
                  lambda d: f"{p(d)}.scoringStrategy.type")

    def res_list(d):
        r = strategy(d).get("resources")
        return r if isinstance(r, list) else []

    def set_res(d, new):
        update_strategy(d, lambda s: _set_or_pop(s, "resources", new or None))
    res = _table(f"p{i}.fit.res", {"name": _str("resource"), "weight": _int("weight")},
                 _rows(res_list(doc)), res_list, set_res, lambda d: f"{p(d)}.scoringStrategy.resources")

    def shape_list(d):
        r = strategy(d).get("requestedToCapacityRatio")
        s = r.get("shape") if isinstance(r, dict) else None
        return s if isinstance(s, list) else []

    def set_shape(d, new):
        def fn(s):
            r = copy.deepcopy(s.get("requestedToCapacityRatio")) if isinstance(s.get("requestedToCapacityRatio"),
                                                                                dict) else {}
            _set_or_pop(r, "shape", new or None)
            _set_or_pop(s, "requestedToCapacityRatio", r or None)
        update_strategy(d, fn)
    shape = _table(f"p{i}.fit.shape", {"utilization": _int("utilization %"), "score": _int("score (0-10)")},
                   _rows(shape_list(doc), 2), shape_list, set_shape,
                   lambda d: f"{p(d)}.scoringStrategy.requestedToCapacityRatio.shape")
    return [typ, res, shape]


def _pts_units(i, doc):
    plugin, p = "PodTopologySpread", _args_path(i, "PodTopologySpread")
    dtype = _args_scalar(i, plugin, "defaultingType", _choice("PodTopologySpread defaultingType", ("System", "List")), "pts")

    def lst(d):
        c = _args(d, i, plugin).get("defaultConstraints")
        return c if isinstance(c, list) else []

    def set_list(d, new):
        _write_args(d, i, plugin, lambda a: _set_or_pop(a, "defaultConstraints", new or None))
    cons = _table(f"p{i}.pts.c", {"maxSkew": _int("maxSkew"), "topologyKey": _str("topologyKey"),
                                  "whenUnsatisfiable": _choice("whenUnsatisfiable",
                                                               ("DoNotSchedule", "ScheduleAnyway"))},
                  _rows(lst(doc)), lst, set_list, lambda d: f"{p(d)}.defaultConstraints")
    return [dtype, cons]


class YamlField(forms.CharField):
    """A YAML value in a textarea (empty: absent)."""

    widget = forms.Textarea(attrs={"rows": 6, "class": "yaml"})

    def to_python(self, value):
        text = super().to_python(value)
        if not text.strip():
            return None
        try:
            return safe_yaml_load(text)
        except yaml.YAMLError as err:
            raise forms.ValidationError(f"not valid YAML: {err}") from None


def _na_unit(i):
    p = _args_path(i, "NodeAffinity")
    return _scalar(f"p{i}.na.addedAffinity", YamlField(required=False, label="NodeAffinity addedAffinity (YAML)"),
                   lambda d: _args(d, i, "NodeAffinity").get("addedAffinity"),
                   lambda d, v: _write_args(d, i, "NodeAffinity", lambda a: _set_or_pop(a, "addedAffinity", v)),
                   lambda d: f"{p(d)}.addedAffinity")


def build_units(doc) -> list:
    """Every unit of the editor for this document, in page order, with its section."""
    units = [("Scheduler", "", _top_scalar("percentageOfNodesToScore", _int("percentageOfNodesToScore"))),
             ("Scheduler", "", _top_scalar("podInitialBackoffSeconds", _int("podInitialBackoffSeconds"))),
             ("Scheduler", "", _top_scalar("podMaxBackoffSeconds", _int("podMaxBackoffSeconds"))),
             ("Extenders", "extenders", _extenders(doc))]
    for i, _prof in enumerate(_profiles(doc)):
        sec = f"profiles[{i}]"
        units.append((sec, sec, _profile_scalar(i, "schedulerName", _str("schedulerName"))))
        units.append((sec, sec, _profile_scalar(i, "percentageOfNodesToScore", _int("percentageOfNodesToScore"))))
        for s in SETS:
            units.append((f"{sec}.plugins", f"{sec}.plugins", _plugin_set(i, s, doc)))
        args_sec = f"{sec}.pluginConfig"
        for u in _fit_units(i, doc) + _pts_units(i, doc):
            units.append((args_sec, args_sec, u))
        units.append((args_sec, args_sec, _args_scalar(i, "InterPodAffinity", "hardPodAffinityWeight",
                                                       _int("InterPodAffinity hardPodAffinityWeight"), "ipa")))
        units.append((args_sec, args_sec, _na_unit(i)))
        units.append((args_sec, args_sec, _args_scalar(i, "DefaultPreemption", "minCandidateNodesPercentage",
                                                       _int("DefaultPreemption minCandidateNodesPercentage"), "dp")))
        units.append((args_sec, args_sec, _args_scalar(i, "DefaultPreemption", "minCandidateNodesAbsolute",
                                                       _int("DefaultPreemption minCandidateNodesAbsolute"), "dp")))
    return units


def effective_plugins(doc) -> dict:
    """{profile index: {set: [plugin names the framework runs there]}} for a valid document, else {}."""
    try:
        config = load_config(doc, validate.registry()) if doc else default_config(validate.registry())
        fwks = build_frameworks(config, validate.registry(), lambda: Handle(snapshot=None))
    except (ConfigError, FrameworkError):  # an invalid document has no effective lists
        return {}
    out = {}
    for i, prof in enumerate(config.profiles):
        lists = fwks[prof.scheduler_name].list_plugins()
        out[i] = {s: [x["name"] if isinstance(x, dict) else x for x in lists[k]] for s, k in EFFECTIVE.items()}
    return out


class ProfileEditorForm(forms.Form):
    """The editor. ``base`` is the document the edit started from; ``document`` the result after clean()."""

    source = forms.ChoiceField(choices=[("form", "form"), ("yaml", "yaml")], initial="form",
                               widget=forms.HiddenInput)
    base_version = forms.IntegerField(required=False, widget=forms.HiddenInput)
    base_doc = forms.CharField(required=False, widget=forms.HiddenInput)
    yaml = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 30, "spellcheck": "false"}))
    comment = forms.CharField(required=False, max_length=500)

    def __init__(self, base: dict, *args, base_version=None, **kw):
        super().__init__(*args, **kw)
        self.base = copy.deepcopy(base or {})
        self.units = build_units(self.base)
        self.initial_values = {}
        for _sec, _path, unit in self.units:
            values = unit.read(self.base)
            for suffix, field in unit.fields.items():
                name = unit.name(suffix)
                init = _val(values.get(suffix), field)
                if isinstance(field, YamlField):
                    init = dump_yaml(values[suffix]) if values.get(suffix) is not None else ""
                self.fields[name] = field
                self.initial_values[name] = values.get(suffix) if isinstance(field, YamlField) else init
                self.initial[name] = init
        self.initial.setdefault("yaml", dump_yaml(self.base) if self.base else "")
        self.initial.setdefault("base_version", base_version)
        self.document = None
        self.problems = []
        self.section_errors = {}

    # -- building the document ----------------------------------------------------------------------
    def _from_fields(self, cd) -> dict:
        doc = copy.deepcopy(self.base)
        for _sec, _path, unit in self.units:
            values = {suffix: cd.get(unit.name(suffix)) for suffix in unit.fields}
            if any(values[s] != self.initial_values[unit.name(s)] for s in unit.fields):
                unit.write(doc, values)
        return doc

    def clean(self):
        cd = super().clean()
        if self.errors:
            return cd
        if cd.get("source") == "yaml":
            try:
                doc = safe_yaml_load(cd.get("yaml") or "") or {}
            except yaml.YAMLError as err:
                self.add_error("yaml", f"not valid YAML: {err}")
                return cd
            if not isinstance(doc, dict):
                self.add_error("yaml", "the document must be a mapping (KubeSchedulerConfiguration)")
                return cd
        else:
            doc = self._from_fields(cd)
        self.document = doc
        self.problems = validate.check(doc) if doc else []
        if self.problems:
            self._attach(self.problems)
        return cd

    def _attach(self, problems):
        """Each problem next to the field its path names, else the nearest section, else the form."""
        field_paths = {}
        for _sec, _path, unit in build_units(self.document):
            for suffix, path in unit.paths(self.document).items():
                field_paths.setdefault(path, unit.name(suffix))
        sections = sorted({p for _s, p, _u in self.units if p}, key=len, reverse=True)
        for pr in problems:
            target = None
            if pr.path:
                for path in sorted(field_paths, key=len, reverse=True):
                    if pr.path == path or pr.path.startswith(path + ".") or pr.path.startswith(path + "["):
                        target = field_paths[path]
                        break
            if target is not None and target in self.fields:
                self.add_error(target, pr.message)
                continue
            sec = next((s for s in sections if pr.path == s or pr.path.startswith(s + ".")
                        or pr.path.startswith(s + "[")), None)
            if sec is not None:
                self.section_errors.setdefault(sec, []).append(pr.message)
            self.add_error(None, f"{pr.stage}: {pr.message}")

    # -- layout for the template ---------------------------------------------------------------------
    def layout(self, effective=None) -> list:
        """[{title, path, errors, groups: [{title, kind, headers, rows: [[BoundField]], fields, effective}]}]."""
        effective = effective or {}
        out, by_title = [], {}
        for sec, path, unit in self.units:
            if sec not in by_title:
                by_title[sec] = {"title": sec, "path": path, "errors": self.section_errors.get(path, []),
                                 "groups": []}
                out.append(by_title[sec])
            section = by_title[sec]
            if hasattr(unit, "set_name"):
                cols = ["name"] + (["weight"] if unit.weighted else []) + ["pos"]
                i = int(unit.prefix[1:].split(".")[0])
                section["groups"].append({
                    "title": unit.set_name, "kind": "plugins", "headers": ["plugin"] + (
                        ["weight"] if unit.weighted else []) + ["order"],
                    "rows": [[self[unit.name(f"{r}.{c}")] for c in cols] for r in range(unit.count)],
                    "fields": [self[unit.name("disabled")]],
                    "effective": effective.get(i, {}).get(unit.set_name)})
            elif hasattr(unit, "columns"):
                section["groups"].append({
                    "title": TABLE_TITLES.get(unit.prefix.split(".", 1)[-1], unit.prefix),
                    "kind": "table", "headers": [f.label or k for k, f in unit.columns.items()],
                    "rows": [[self[unit.name(f"{r}.{k}")] for k in unit.columns] for r in range(unit.count)]})
            else:
                group = section["groups"][-1] if section["groups"] and section["groups"][-1]["kind"] == "fields" \
                    else None
                if group is None:
                    group = {"title": "", "kind": "fields", "fields": []}
                    section["groups"].append(group)
                group["fields"].append(self[unit.name("")])
        return out
