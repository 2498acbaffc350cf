"""Forms of the cluster pages: the what-if questions (validated by services.whatif.question, as the API is), the
Node and Pod editor and the scenario upload (validated by the writers of services.clusters, as the API is)."""
from __future__ import annotations

import yaml
from django import forms

from scheduler_core.documents import field_line, safe_yaml_load, yaml_error_place
from scheduler_core.scenario import ScenarioError, load_documents
from scheduler_core.versions import SUPPORTED_VERSIONS

from .models import Cluster, WhatIfRun
from .profiles import services as profile_services
from .profiles.models import ProfileVersion
from .services import whatif
from .services.admitted import ValidationFailed


class KubeVersionForm(forms.Form):
    """The Kubernetes version and feature gates a cluster's scheduler runs (checked by services.clusters'
    set_kube_version, as the API's are)."""

    kube_version = forms.ChoiceField(label="Kubernetes", required=False)
    feature_gates = forms.CharField(required=False, label="feature gates",
                                    widget=forms.TextInput(attrs={"size": 40, "spellcheck": "false",
                                                                  "placeholder": "e.g. NodeDeclaredFeatures=false"}),
                                    help_text="kube-scheduler's --feature-gates (blank: the version's defaults)")

    def __init__(self, cluster, *args, **kwargs):
        kwargs.setdefault("initial", {"kube_version": cluster.kube_version, "feature_gates": cluster.feature_gates})
        super().__init__(*args, **kwargs)
        choices = [(v, v) for v in reversed(SUPPORTED_VERSIONS)]
        if cluster.kind == Cluster.REAL:
            choices.append(("", "the server's (nearest supported)"))
        self.fields["kube_version"].choices = choices


class VersionChoice(forms.ModelChoiceField):
    def label_from_instance(self, obj):
        return f"{obj.profile.name} v{obj.number}"


class WhatIfForm(forms.Form):
    """Fields every question has; subclasses name their kind and add theirs. ``cleaned_data["params"]`` is the
    question as services.whatif.question made it."""

    kind = ""
    version = VersionChoice(queryset=ProfileVersion.objects.select_related("profile").order_by("profile__name",
                                                                                                "-number"),
                            required=False, empty_label="the cluster's active profile",
                            help_text="the profile version the scheduler runs with")

    def __init__(self, cluster, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.cluster = cluster
        for name in ("version", "compare_version"):   # the versions of the profiles the user may know of
            if name in self.fields:
                field = self.fields[name]
                field.queryset = field.queryset.filter(profile__in=profile_services.visible_profiles(user))

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        try:
            data["params"] = whatif.question(self.cluster, self.kind, data)
        except whatif.QuestionError as err:
            for field, messages in err.errors.items():
                for message in messages:
                    self.add_error(field if field in self.fields else None, message)
        return data


class CapacityForm(WhatIfForm):
    kind = WhatIfRun.CAPACITY
    like = forms.CharField(required=False, label="like this pod", help_text="namespace/name of a pod of the cluster")
    manifest = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 10, "spellcheck": "false"}),
                               label="or this manifest", help_text="a Pod, or a Deployment, ReplicaSet, StatefulSet "
                                                                   "or Job (its pod template), YAML or JSON")
    max_copies = forms.IntegerField(required=False, label="at most", help_text="copies to place")
    preemption = forms.BooleanField(required=False, help_text="let the copies preempt lower-priority pods")
    compare_version = VersionChoice(queryset=WhatIfForm.base_fields["version"].queryset, required=False,
                                    empty_label="no comparison", label="compare with",
                                    help_text="a second profile version, side by side")


class DrainForm(WhatIfForm):
    kind = WhatIfRun.DRAIN
    nodes = forms.CharField(required=False, help_text="node names, separated by spaces or commas")
    selector = forms.CharField(required=False, label="or a label selector", help_text="e.g. zone=eu-1a,role!=infra")


class AddNodesForm(WhatIfForm):
    kind = WhatIfRun.ADD_NODES
    like = forms.CharField(required=False, label="like this node", help_text="a node of the cluster to copy")
    manifest = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 10, "spellcheck": "false"}),
                               label="or this Node manifest", help_text="YAML or JSON")
    count = forms.IntegerField(required=False, initial=1, help_text="nodes to add")
    targets = forms.CharField(required=False, label="pods that must fit",
                              help_text="namespace/name of pending pods (blank: every pending pod); the smallest "
                                        "count that fits them all is searched")


FORMS = {form.kind: form for form in (CapacityForm, DrainForm, AddNodesForm)}


NODE_EXAMPLE = """apiVersion: v1
kind: Node
metadata:
  name: node-new-1
  labels:
    kubernetes.io/hostname: node-new-1
    topology.kubernetes.io/zone: zone-a
spec:
  taints: []
status:
  capacity: {cpu: "8", memory: 32Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
"""

POD_EXAMPLE = """apiVersion: v1
kind: Pod
metadata:
  name: web-1
  namespace: default
  labels:
    app: web
spec:
  containers:
  - name: web
    image: nginx:1.27
    resources:
      requests: {cpu: 500m, memory: 512Mi}
      limits: {cpu: "1", memory: 1Gi}
"""


class ManifestForm(forms.Form):
    """One Node or Pod as YAML or JSON; ``save`` hands it to a service writer and puts the validator's field
    errors on the form, each with the line of the manifest that holds its field."""

    manifest = forms.CharField(widget=forms.Textarea(attrs={"rows": 28, "spellcheck": "false", "class": "mono"}),
                               help_text="YAML or JSON", strip=False)

    def clean_manifest(self):
        text = self.cleaned_data["manifest"]
        try:
            doc = safe_yaml_load(text)
        except yaml.YAMLError as err:
            raise forms.ValidationError(f"invalid YAML: {yaml_error_place(err)}") from None
        if not isinstance(doc, dict):
            raise forms.ValidationError("expected one object (a mapping with apiVersion, kind, metadata, spec)")
        self.document = doc
        return text

    def save(self, write):
        """``write(document)`` (a services.clusters writer); None with the errors on the form when refused."""
        text = self.cleaned_data["manifest"]   # add_error takes the field out of cleaned_data
        try:
            return write(self.document)
        except ValidationFailed as err:
            for path, problems in err.errors.items():
                line = field_line(text, path) if path else None
                for problem in problems:
                    self.add_error("manifest", f"{f'line {line}: ' if line else ''}{path}: {problem}"
                                   if path else problem)
            return None


class ScenarioUploadForm(forms.Form):
    """A scenario file: the golden format or a ``kubectl get -o json`` List (services.clusters.load_scenario)."""

    file = forms.FileField(label="scenario", help_text="golden scenario (JSON or YAML) or a kubectl get -o json List")

    def clean_file(self):
        upload = self.cleaned_data["file"]
        try:
            text = upload.read().decode("utf-8")
        except UnicodeDecodeError:
            raise forms.ValidationError("not UTF-8 text") from None
        try:
            docs = load_documents(text, upload.name)
        except ScenarioError as err:
            raise forms.ValidationError(str(err)) from None
        self.data_loaded = docs[0] if len(docs) == 1 else docs
        return upload
