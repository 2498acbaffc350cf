"""The profile editor: a Django form over the effective configuration of a KubeSchedulerConfiguration v1 document.

The fields show what kube-scheduler runs (effective.describe): per profile and extension point each plugin with
an on/off switch, its place and, at Score, its weight; the args of the plugins that have an args kind, defaulted;
the scheduler-wide settings and the extenders. Fields are grouped in units (Scalar, PointUnit, ArgsUnit,
ExtendersUnit: ``fields``, ``start`` values, ``write(doc, values)``, ``paths(doc)`` for errors) written back
together; a submitted
form rewrites only the units whose values changed, as kube users write them (effective.write_point,
effective.write_args, a setting equal to kube's default left out), so whatever the form does not show survives
an edit unchanged. kube's errors (validate.check) are attached to the field whose document path they name.
"""
from __future__ import annotations

import copy
import re

import yaml
from django import forms

from scheduler_core import versions
from scheduler_core.config import SET_POINTS, ConfigError
from scheduler_core.documents import safe_yaml_load
from scheduler_core.framework.profile import FrameworkError

from . import effective, validate

STRATEGIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
# The v1 args fields the form edits, per plugin with an args kind: (dotted path, kind); a kind is "int", "bool",
# "list" (one line of YAML flow), "yaml" (a YAML block) or the tuple of allowed values.
ARGS_FIELDS = {
    "DefaultPreemption": (("minCandidateNodesPercentage", "int"), ("minCandidateNodesAbsolute", "int")),
    "InterPodAffinity": (("hardPodAffinityWeight", "int"), ("ignorePreferredTermsOfExistingPods", "bool")),
    "NodeAffinity": (("addedAffinity", "yaml"),),
    "NodeResourcesBalancedAllocation": (("resources", "list"),),
    "NodeResourcesFit": (("scoringStrategy.type", STRATEGIES), ("scoringStrategy.resources", "list"),
                         ("scoringStrategy.requestedToCapacityRatio.shape", "list"), ("ignoredResources", "list"),
                         ("ignoredResourceGroups", "list")),
    "PodTopologySpread": (("defaultingType", ("System", "List")), ("defaultConstraints", "list")),
    "VolumeBinding": (("bindTimeoutSeconds", "int"),),
}
SCALARS = ("percentageOfNodesToScore", "podInitialBackoffSeconds", "podMaxBackoffSeconds")
SET_OF_POINT = {point: s for s, point in SET_POINTS.items()}
# Framework errors name no field; these tell which extension point they are about (NewFramework's texts).
FRAMEWORK_POINTS = ((re.compile(r"queue sort plugin"), "queueSort"), (re.compile(r"bind plugin is needed"), "bind"),
                    (re.compile(r"total score of Score plugins"), "score"))
_PLUGIN_IFACE = re.compile(r'(\w+)Plugin "|extend (\w+)Plugin plugin|already registered as "(\w+)Plugin"')


FIRST_KEYS = ("apiVersion", "kind", "schedulerName", "name")   # as kube's documents are written (jsonb reorders)


def _ordered(value):
    if isinstance(value, dict):
        keys = [k for k in FIRST_KEYS if k in value] + [k for k in value if k not in FIRST_KEYS]
        return {k: _ordered(value[k]) for k in keys}
    if isinstance(value, list):
        return [_ordered(v) for v in value]
    return value


def dump_yaml(doc) -> str:
    """A document as YAML, its identifying keys first."""
    return yaml.safe_dump(_ordered(doc), sort_keys=False, default_flow_style=False, allow_unicode=True)


def dump_flow(value) -> str:
    """A value as one line of YAML flow style ("" for None)."""
    if value is None:
        return ""
    return yaml.safe_dump(value, sort_keys=False, default_flow_style=True, width=10**6,
                          allow_unicode=True).strip().removesuffix("...").strip()


class YamlField(forms.CharField):
    """A YAML value (empty: absent)."""

    def to_python(self, value):
        text = super().to_python(value)
        if not text.strip():
            return None
        try:
            return safe_yaml_load(text)
        except yaml.YAMLError as err:
            raise forms.ValidationError(f"not valid YAML: {err}") from None


class KubeChoiceField(forms.ChoiceField):
    """One of the values kube supports, offered as a list; a value outside it is not refused here but passed on,
    so that kube's validation refuses it in kube's words ("Unsupported value: ..."), and shown as an option."""

    def valid_value(self, value):
        return True

    def offer(self, value) -> None:
        """Add ``value`` to the options if the list does not have it."""
        if value and value not in {v for v, _label in self.choices}:
            self.choices = [*self.choices, (value, value)]


def _int(label, **kw):
    return forms.IntegerField(required=False, label=label, **kw)


def _labelled(field, name):
    """``field`` with ``name`` as its accessible name (for a control shown without a <label>: in a table cell)."""
    field.widget.attrs["aria-label"] = name
    return field


def _hidden_int():
    return forms.IntegerField(required=False, widget=forms.HiddenInput)


def _arg_field(path, kind):
    label = path.rsplit(".", 1)[-1]
    if kind == "int":
        return _int(label)
    if kind == "bool":
        return forms.BooleanField(required=False, label=label)
    if kind == "list":
        return YamlField(required=False, label=label, widget=forms.Textarea(attrs={"class": "flow", "rows": 2,
                                                                                   "spellcheck": "false"}))
    if kind == "yaml":
        return YamlField(required=False, label=label, widget=forms.Textarea(attrs={"rows": 4, "class": "yaml",
                                                                                   "spellcheck": "false"}))
    return KubeChoiceField(required=False, label=label, choices=[("", "(unset)")] + [(c, c) for c in kind])


def _shown(field, value):
    """A document value as the field shows it."""
    if isinstance(field, YamlField):
        return dump_flow(value) if "flow" in field.widget.attrs.get("class", "") else (
            dump_yaml(value) if value is not None else "")
    if isinstance(field, forms.ChoiceField):
        return value or ""
    return value


def _cleaned(field, value):
    """A document value as the field's cleaned value (for change detection)."""
    if isinstance(field, forms.BooleanField):
        return bool(value)
    if isinstance(field, forms.ChoiceField):
        return value or ""
    if isinstance(field, forms.CharField) and not isinstance(field, YamlField):
        return "" if value is None else str(value)
    return value


class Scalar:
    """A setting at ``path`` of the document (top level, or a profile's); left out when it equals ``default``."""

    def __init__(self, name, field, path, put, value, default=None):
        self.name, self.path, self._put, self.default = name, path, put, default
        self.fields, self.start = {name: field}, {name: value}

    def write(self, doc, values):
        value = values[self.name]
        self._put(doc, None if value == self.default else value)

    def paths(self, doc):
        return {self.path: self.name}


def _top(key, value, default):
    def put(doc, v):
        if v is None or v == "":
            doc.pop(key, None)
        else:
            doc[key] = v
    return Scalar(f"g.{key}", _int(key), key, put, value, default)


def _profile_scalar(i, key, field, value):
    def put(doc, v):
        prof = effective.profile_of(doc, i)
        if v is None or v == "":
            prof.pop(key, None)
        else:
            prof[key] = v
    return Scalar(f"p{i}.{key}", field, f"profiles[{i}].{key}", put, value)


class PointUnit:
    """One extension point of a profile: per plugin a switch, a hidden place (the move buttons change it) and at
    Score a weight; ``moved`` (set by the buttons) and ``add`` (a registered plugin to run there too)."""

    def __init__(self, view, point):
        self.view, self.point = view, point
        self.prefix = f"p{view.index}.{point.set_name}"
        self.fields, self.start = {}, {}
        for k, row in enumerate(point.rows):
            self._add(f"{self.prefix}.{row.name}.on", forms.BooleanField(
                required=False, label=row.name, widget=forms.CheckboxInput(attrs={"class": "switch"})), row.on)
            self._add(f"{self.prefix}.{row.name}.pos", _hidden_int(), k + 1)
            if point.weighted:
                self._add(f"{self.prefix}.{row.name}.weight",
                          _labelled(_int("weight"), f"{row.name} weight"), row.weight)
        self._add(f"{self.prefix}.moved", forms.BooleanField(required=False, widget=forms.HiddenInput), False)
        self._add(f"{self.prefix}.add", _labelled(forms.ChoiceField(
            required=False, label="add", choices=[("", "add a plugin…")] + [(n, n) for n in point.addable]),
            f"add a plugin at {point.set_name}"), "")

    def _add(self, name, field, value):
        self.fields[name], self.start[name] = field, value

    def write(self, doc, values):
        rows = sorted(enumerate(self.point.rows),
                      key=lambda t: (values[f"{self.prefix}.{t[1].name}.pos"] or 10**6 + t[0], t[0]))
        chosen = [r.name for _k, r in rows if values[f"{self.prefix}.{r.name}.on"]]
        if values[f"{self.prefix}.add"]:
            chosen.append(values[f"{self.prefix}.add"])
        weights = {r.name: values[f"{self.prefix}.{r.name}.weight"] for r in self.point.rows} \
            if self.point.weighted else {}
        keep_order = not self.point.weighted or bool(values[f"{self.prefix}.moved"])
        effective.write_point(doc, self.view, self.point.set_name, chosen, weights, keep_order)

    def paths(self, doc):
        base = f"profiles[{self.view.index}].plugins.{self.point.set_name}"
        out = {base: f"{self.prefix}.moved"}
        entries = ((effective.profile_of(copy.deepcopy(doc), self.view.index).get("plugins") or {})
                   .get(self.point.set_name) or {}).get("enabled") or []
        for j, entry in enumerate(entries):
            name = entry.get("name") if isinstance(entry, dict) else None
            field = f"{self.prefix}.{name}.{'weight' if self.point.weighted else 'on'}"
            out[f"{base}.enabled[{j}]"] = field if field in self.fields else f"{self.prefix}.moved"
        return out


class ArgsUnit:
    """The args of one plugin of a profile (ARGS_FIELDS), showing the defaulted values."""

    def __init__(self, view, plugin):
        self.index, self.plugin, self.features = view.index, plugin, view.features
        args, self.defaults = view.args[plugin]
        self.prefix = f"p{view.index}.args.{plugin}"
        self.fields, self.start, self.paths_of = {}, {}, {}
        for path, kind in ARGS_FIELDS[plugin]:
            name = f"{self.prefix}.{path}"
            self.fields[name] = _arg_field(path, kind)
            self.start[name] = effective.arg_value(args, path)
            self.paths_of[name] = path

    def default(self, name):
        return effective.arg_value(self.defaults, self.paths_of[name])

    def write(self, doc, values):
        effective.write_args(doc, self.index, self.plugin, {self.paths_of[n]: v for n, v in values.items()},
                             self.features)

    def paths(self, doc):
        configs = effective.profile_of(copy.deepcopy(doc), self.index).get("pluginConfig") or []
        k = next((j for j, pc in enumerate(configs) if isinstance(pc, dict) and pc.get("name") == self.plugin), None)
        if k is None:
            return {}
        base = f"profiles[{self.index}].pluginConfig[{k}]"
        out = {base: next(iter(self.fields))}
        out.update({f"{base}.args.{path}": name for name, path in self.paths_of.items()})
        return out


EXTENDER_COLUMNS = (("urlPrefix", "str"), ("filterVerb", "str"), ("prioritizeVerb", "str"), ("preemptVerb", "str"),
                    ("bindVerb", "str"), ("weight", "int"), ("httpTimeout", "str"), ("nodeCacheCapable", "bool"),
                    ("ignorable", "bool"), ("enableHTTPS", "bool"))


class ExtendersUnit:
    """The extenders as table rows (one blank row to add one); a row's values override the same keys of the
    existing extender, so keys the table does not show (managedResources, tlsConfig) are kept."""

    def __init__(self, doc):
        items = doc.get("extenders") if isinstance(doc.get("extenders"), list) else []
        self.count = len(items) + 1
        self.fields, self.start = {}, {}
        for r in range(self.count):
            item = items[r] if r < len(items) and isinstance(items[r], dict) else {}
            for key, kind in EXTENDER_COLUMNS:
                field = _int(key) if kind == "int" else forms.BooleanField(required=False, label=key) \
                    if kind == "bool" else forms.CharField(required=False, label=key)
                name = f"ext.{r}.{key}"
                self.fields[name] = _labelled(field, f"extender {r + 1} {key}")
                self.start[name] = _cleaned(field, item.get(key))

    def write(self, doc, values):
        items = doc.get("extenders") if isinstance(doc.get("extenders"), list) else []
        new = []
        for r in range(self.count):
            row = {key: values[f"ext.{r}.{key}"] for key, _kind in EXTENDER_COLUMNS}
            if all(v in (None, "", False) for v in row.values()):
                continue
            item = copy.deepcopy(items[r]) if r < len(items) and isinstance(items[r], dict) else {}
            for key, v in row.items():
                if v in (None, "", False):
                    item.pop(key, None)
                else:
                    item[key] = v
            new.append(item)
        if new:
            doc["extenders"] = new
        else:
            doc.pop("extenders", None)

    def paths(self, doc):
        return {f"extenders[{r}].{key}": f"ext.{r}.{key}" for r in range(self.count) for key, _k in EXTENDER_COLUMNS}


class NewProfileUnit:
    """A profile to add, named by its schedulerName, with kube's default plugins. The profiles before it get their
    names written (kube defaults schedulerName only when there is a single profile)."""

    name = "new_profile"

    def __init__(self, views):
        self.views = views
        self.fields = {self.name: forms.CharField(required=False, max_length=253, label="schedulerName of a new profile",
                                                  strip=True)}
        self.start = {self.name: ""}

    def write(self, doc, values):
        for view in self.views:
            effective.profile_of(doc, view.index).setdefault("schedulerName", view.scheduler_name)
        effective.profile_of(doc, len(self.views))["schedulerName"] = values[self.name]

    def paths(self, doc):
        return {}


def build_units(doc, views, features) -> list:
    """Every unit of the editor for ``doc`` (described as ``views`` at ``features``), in page order."""
    raw = effective.defaulted_raw(doc, features)
    kube = effective.defaulted_raw(effective.API, features)
    units = [_top(key, raw[key], kube[key]) for key in SCALARS]
    units.append(ExtendersUnit(doc))
    for view in views:
        units.append(_profile_scalar(view.index, "schedulerName", forms.CharField(required=False,
                                                                                 label="schedulerName"),
                                     view.scheduler_name))
        units.append(_profile_scalar(view.index, "percentageOfNodesToScore",
                                     _int("percentageOfNodesToScore"), view.percentage))
        units.extend(PointUnit(view, point) for point in view.points)
        units.extend(ArgsUnit(view, plugin) for plugin in view.args if plugin in ARGS_FIELDS)
    units.append(NewProfileUnit(views))
    return units


class ProfileEditorForm(forms.Form):
    """The editor. ``base`` is the document the edit started from; ``document`` the result after clean().
    ``load_error``: why ``base`` has no effective configuration (only the YAML can be edited then)."""

    source = forms.ChoiceField(choices=[("form", "form"), ("yaml", "yaml")], initial="form",
                               widget=forms.HiddenInput)
    base_version = forms.IntegerField(required=False, widget=forms.HiddenInput)
    base_doc = forms.CharField(required=False, widget=forms.HiddenInput)
    yaml = forms.CharField(required=False, widget=forms.Textarea(attrs={
        "rows": 30, "spellcheck": "false", "aria-label": "the profile as YAML", "aria-describedby": "yaml-check"}))
    comment = forms.CharField(required=False, max_length=500)

    def __init__(self, base: dict, *args, base_version=None, read_only=False, features=None, **kw):
        super().__init__(*args, **kw)
        self.base = copy.deepcopy(base or {})
        self.features = versions.features(features)   # the profile's Kubernetes version
        self.load_error = ""
        try:
            self.views = effective.describe(self.base or effective.API, self.features)
        except (ConfigError, FrameworkError) as err:
            self.views, self.load_error = [], str(err)
        self.units = build_units(self.base or effective.API, self.views, self.features) if self.views else []
        self.start = {}
        for unit in self.units:
            for name, field in unit.fields.items():
                self.fields[name] = field
                self.start[name] = _cleaned(field, unit.start[name])
                self.initial[name] = _shown(field, unit.start[name])
        self.initial.setdefault("yaml", dump_yaml(self.base) if self.base else "")
        self.initial.setdefault("base_version", base_version)
        for name, field in self.fields.items():
            if isinstance(field, KubeChoiceField):
                field.offer(self.data.get(name) if self.is_bound else self.initial.get(name))
        self.read_only = read_only
        if read_only:
            for field in self.fields.values():
                field.disabled = True
        self.document = None
        self.problems = []
        self.section_errors = {}

    def data_of_initial(self) -> dict:
        """POST data equal to the form's initial values (a form bound to them changes nothing)."""
        data = {}
        for name, field in self.fields.items():
            value = self.initial.get(name)
            if value is None or value is False or value == "":
                continue
            data[name] = "on" if value is True and isinstance(field, forms.BooleanField) \
                and not isinstance(field.widget, forms.HiddenInput) else value
        return data

    # -- building the document ----------------------------------------------------------------------
    def _from_fields(self, cd) -> dict:
        doc = copy.deepcopy(self.base)
        for unit in self.units:
            values = {name: cd.get(name) for name in unit.fields}
            if any(values[n] != self.start[n] for n in unit.fields):
                unit.write(doc, values)
        return doc

    def clean(self):
        cd = super().clean()
        if self.errors:
            return cd
        if cd.get("source") == "yaml" or not self.units:
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
        self.problems = validate.check(doc, self.features) if doc else []
        if self.problems:
            self._attach(self.problems)
        return cd

    def _attach(self, problems):
        """Each problem next to the field its path names (a plugin-set error at its extension point), else in
        its section and at the top of the form."""
        field_paths = {}
        for unit in self.units:
            for path, name in unit.paths(self.document).items():
                field_paths.setdefault(path, name)
        ordered = sorted(field_paths, key=len, reverse=True)
        for pr in problems:
            target = next((field_paths[p] for p in ordered if pr.path == p or pr.path.startswith(p + ".")
                           or pr.path.startswith(p + "[")), None) if pr.path else None
            if target is None:
                target = self._point_of_framework_error(pr)
            if target is not None and target in self.fields:
                self.add_error(target, pr.shown())
                continue
            section = re.match(r"profiles\[\d+\]|extenders", pr.path or "")
            if section is not None:
                self.section_errors.setdefault(section.group(0), []).append(pr.shown())
            self.add_error(None, f"{pr.stage}: {pr.shown()}")

    def _point_of_framework_error(self, pr):
        m = re.match(r"profiles\[(\d+)\]\.plugins$", pr.path or "")
        if pr.stage != "framework" or m is None:
            return None
        set_name = next((s for rx, s in FRAMEWORK_POINTS if rx.search(pr.message)), None)
        iface = _PLUGIN_IFACE.search(pr.message)
        if set_name is None and iface is not None:
            set_name = SET_OF_POINT.get(next(g for g in iface.groups() if g))
        if set_name == effective.WEIGHTED:   # kube's overflow check fails after a negative weight (int64 wraps)
            negative = next((n for n in self.fields if n.startswith(f"p{m.group(1)}.score.") and n.endswith(".weight")
                             and (self.cleaned_data.get(n) or 0) < 0), None)
            if negative is not None:
                return negative
        return f"p{m.group(1)}.{set_name}.moved" if set_name else None

    def error_list(self) -> list:
        """Every error of the form, for the list at its top: {message, id} (id: the field's element, "" for the
        document's errors)."""
        out = []
        for name, errors in self.errors.items():
            element = "" if name == "__all__" else self[name].auto_id
            out.extend({"message": e, "id": element} for e in errors)
        return out

    # -- layout for the template ---------------------------------------------------------------------
    def layout(self) -> dict:
        """{scalars, extenders, profiles: [{index, fields, points: [...], args: [...]}]} of bound fields, with
        kube's defaults and what differs from them."""
        out = {"scalars": [], "extenders": None, "profiles": [], "new_profile": None,
               "notes": {"zero": effective.ZERO_WEIGHT_NOTE, "negative": effective.NEGATIVE_WEIGHT_NOTE}}
        profiles = {}
        for unit in self.units:
            if isinstance(unit, Scalar) and unit.name.startswith("g."):
                out["scalars"].append({"bf": self[unit.name], "default": _default_text(unit.default),
                                       "changed": self.start[unit.name] != unit.default})
            elif isinstance(unit, NewProfileUnit):
                out["new_profile"] = self[unit.name]
            elif isinstance(unit, ExtendersUnit):
                out["extenders"] = {"headers": [k for k, _kind in EXTENDER_COLUMNS],
                                    "rows": [[self[f"ext.{r}.{k}"] for k, _kind in EXTENDER_COLUMNS]
                                             for r in range(unit.count)]}
            elif isinstance(unit, Scalar):
                index = int(unit.name[1:].split(".")[0])
                prof = profiles.setdefault(index, {"index": index, "fields": [], "points": [], "score": None,
                                                   "args": []})
                prof["fields"].append(self[unit.name])
            elif isinstance(unit, PointUnit) and unit.point.weighted:
                profiles[unit.view.index]["score"] = self._point_layout(unit)
            elif isinstance(unit, PointUnit):
                profiles[unit.view.index]["points"].append(self._point_layout(unit))
            elif isinstance(unit, ArgsUnit):
                fields = [{"bf": self[name], "default": _default_text(unit.default(name)),
                           "changed": self.start[name] != _cleaned(unit.fields[name], unit.default(name))}
                          for name in unit.fields]
                profiles[unit.index]["args"].append({"plugin": unit.plugin, "fields": fields,
                                                     "changed": any(f["changed"] for f in fields)})
        out["profiles"] = [profiles[i] for i in sorted(profiles)]
        for prof in out["profiles"]:
            prof["name"] = self.views[prof["index"]].scheduler_name
            prof["errors"] = self.section_errors.get(f"profiles[{prof['index']}]", [])
        return out

    def _point_layout(self, unit) -> dict:
        point, p = unit.point, unit.prefix
        rows = []
        for row in point.rows:
            weight = self[f"{p}.{row.name}.weight"] if point.weighted else None
            shown = weight.value() if weight is not None else None
            rows.append({"row": row, "on": self[f"{p}.{row.name}.on"], "pos": self[f"{p}.{row.name}.pos"],
                         "weight": weight, "note": effective.weight_note(_as_int(shown)) if point.weighted else ""})
        return {"set": point.set_name, "point": SET_POINTS[point.set_name], "weighted": point.weighted,
                "rows": rows, "moved": self[f"{p}.moved"], "add": self[f"{p}.add"] if point.addable else None,
                "order_changed": point.order_changed, "changed": point.order_changed or any(r.changed for r in point.rows)}


def _default_text(value) -> str:
    """kube's default of a field as the page prints it."""
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return "true" if value else "false"
    return dump_flow(value) if isinstance(value, (list, dict)) else str(value)


def _as_int(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
