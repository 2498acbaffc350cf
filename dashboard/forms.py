"""Forms of the cluster pages: the what-if questions (validated by services.whatif.question, as the API is)."""
from __future__ import annotations

from django import forms

from .models import WhatIfRun
from .profiles.models import ProfileVersion
from .services import whatif


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

    def __init__(self, cluster, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.cluster = cluster

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
