"""In-tree volume to CSI translation, as far as scheduling needs it (k8s.io/csi-translation-lib).

Every in-tree plugin the library knows is recognised (so PreFilters see migratable volumes), but only the
plugins whose CSI migration is on in v1.30 are translated: AWS EBS, GCE PD, Azure Disk and Cinder
(Portworx and RBD migration are behind feature gates that are off; Azure File and vSphere are never
counted as migrated by the scheduler). A translation yields the CSI driver, the volume handle and, for
PVs, the rewritten node affinity that VolumeBinding checks.
"""
from __future__ import annotations

import re
from urllib.parse import urlparse

from .volume import spec

AWS_EBS = "kubernetes.io/aws-ebs"
GCE_PD = "kubernetes.io/gce-pd"
AZURE_DISK = "kubernetes.io/azure-disk"
AZURE_FILE = "kubernetes.io/azure-file"
CINDER = "kubernetes.io/cinder"
VSPHERE = "kubernetes.io/vsphere-volume"
PORTWORX = "kubernetes.io/portworx-volume"
RBD = "kubernetes.io/rbd"

# in-tree plugin name -> (volume source field, CSI driver name)
IN_TREE_PLUGINS = {
    GCE_PD: ("gcePersistentDisk", "pd.csi.storage.gke.io"),
    AWS_EBS: ("awsElasticBlockStore", "ebs.csi.aws.com"),
    CINDER: ("cinder", "cinder.csi.openstack.org"),
    AZURE_DISK: ("azureDisk", "disk.csi.azure.com"),
    AZURE_FILE: ("azureFile", "file.csi.azure.com"),
    VSPHERE: ("vsphereVolume", "csi.vsphere.vmware.com"),
    PORTWORX: ("portworxVolume", "pxd.portworx.com"),
    RBD: ("rbd", "rbd.csi.ceph.com"),
}

# Plugins whose CSI migration is on in v1.30 (isCSIMigrationOn / isCSIMigrationOnForPlugin).
MIGRATION_ON = frozenset((AWS_EBS, GCE_PD, AZURE_DISK, CINDER))

LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
LABEL_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
UNSPECIFIED = "UNSPECIFIED"

_AWS_VOLUME_ID = re.compile(r"^vol-[^/]*$")


class TranslationError(ValueError):
    """A volume the CSI translation library rejects."""


def plugin_of_source(source: dict):
    """The in-tree plugin name of a volume source (a pod volume or a PV spec), or None."""
    for name, (field, _driver) in IN_TREE_PLUGINS.items():
        if source.get(field) is not None:
            return name
    return None


def plugin_of_pv(pv: dict):
    """GetInTreePluginNameFromSpec for a PV (None when it is not migratable)."""
    return plugin_of_source(spec(pv))


def csi_driver_of(plugin: str) -> str:
    """GetCSINameFromInTreeName."""
    return IN_TREE_PLUGINS[plugin][1]


def is_in_tree_plugin_name(name: str) -> bool:
    """IsMigratableIntreePluginByName."""
    return name in IN_TREE_PLUGINS


def ebs_volume_id(kubernetes_id: str) -> str:
    """KubernetesVolumeIDToEBSVolumeID: aws://<zone>/<vol-id> and bare ids to the EBS volume id."""
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    aws_id = urlparse(kubernetes_id).path.strip("/")
    if not _AWS_VOLUME_ID.match(aws_id):
        raise TranslationError(f"Invalid format for AWS volume ({kubernetes_id})")
    return aws_id


def _gce_region_from_zones(zones) -> str:
    regions = set()
    for zone in zones:
        parts = zone.split("-")
        if len(parts) != 3:
            raise TranslationError(
                f"zone in unexpected format, expected: {{locale}}-{{region}}-{{zone}}, got: {zone}")
        regions.add("-".join(parts[:2]))
    if len(regions) != 1:
        raise TranslationError(f"multiple or no regions gotten from zones, got: {sorted(regions)}")
    return regions.pop()


def _gce_volume_handle(pv: dict, pd_name: str) -> str:
    labels = (pv.get("metadata") or {}).get("labels") or {}
    zones_label = labels.get(LABEL_BETA_ZONE) or labels.get(LABEL_ZONE) or ""
    zones = zones_label.split("__")
    if len(zones) == 1 and zones[0]:
        return f"projects/{UNSPECIFIED}/zones/{zones[0]}/disks/{pd_name}"
    if len(zones) > 1:
        return f"projects/{UNSPECIFIED}/regions/{_gce_region_from_zones(zones)}/disks/{pd_name}"
    return f"projects/{UNSPECIFIED}/zones/{UNSPECIFIED}/disks/{pd_name}"


def _check_azure_kind(src: dict):
    kind = src.get("kind")
    if kind is not None and kind.lower() != "managed":
        raise TranslationError(f"kind({kind}) is not supported in csi migration")


def _terms(pv_spec: dict):
    na = pv_spec.get("nodeAffinity") or {}
    return (na.get("required") or {}).get("nodeSelectorTerms") or []


def _key_exists(pv_spec: dict, key: str) -> bool:
    return any(e.get("key") == key for t in _terms(pv_spec) for e in (t or {}).get("matchExpressions") or ())


def _has_values(pv_spec: dict, key: str) -> bool:
    return any(e.get("key") == key and e.get("values")
               for t in _terms(pv_spec) for e in (t or {}).get("matchExpressions") or ())


def _translate_topology(pv: dict, pv_spec: dict, csi_key: str):
    """translateTopologyFromInTreeToCSI: zone keys become the driver's key; beta region becomes GA."""
    labels = (pv.get("metadata") or {}).get("labels") or {}
    if _key_exists(pv_spec, LABEL_ZONE):
        zone_label, region_label = LABEL_ZONE, LABEL_REGION
    elif _key_exists(pv_spec, LABEL_BETA_ZONE):
        zone_label, region_label = LABEL_BETA_ZONE, LABEL_BETA_REGION
    elif LABEL_ZONE in labels:
        zone_label, region_label = LABEL_ZONE, LABEL_REGION
    elif LABEL_BETA_ZONE in labels:
        zone_label, region_label = LABEL_BETA_ZONE, LABEL_BETA_REGION
    else:
        zone_label, region_label = LABEL_ZONE, LABEL_REGION
    renames = {}
    if _has_values(pv_spec, zone_label):
        renames[zone_label] = csi_key
    if region_label == LABEL_BETA_REGION and _has_values(pv_spec, region_label):
        renames[region_label] = LABEL_REGION
    terms = [dict(t or {}, matchExpressions=[dict(e, key=renames.get(e.get("key"), e.get("key")))
                                              for e in (t or {}).get("matchExpressions") or ()])
             for t in _terms(pv_spec)]
    if zone_label not in renames and zone_label in labels:
        zones = sorted({z.strip() for z in labels[zone_label].split("__") if z.strip()})
        if zones:
            if not terms:
                terms = [{"matchExpressions": []}]
            for t in terms:
                t["matchExpressions"] = list(t["matchExpressions"]) + [
                    {"key": csi_key, "operator": "In", "values": zones}]
    if terms:
        pv_spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": terms}}


def translate_pv(pv: dict, plugin: str) -> dict:
    """TranslateInTreePVToCSI for a migrated plugin: a copy of the PV with a ``csi`` source."""
    field, driver = IN_TREE_PLUGINS[plugin]
    pv_spec = dict(spec(pv))
    src = pv_spec.pop(field) or {}
    if plugin == AWS_EBS:
        handle = ebs_volume_id(src.get("volumeID") or "")
        _translate_topology(pv, pv_spec, "topology.ebs.csi.aws.com/zone")
    elif plugin == GCE_PD:
        handle = _gce_volume_handle(pv, src.get("pdName") or "")
        _translate_topology(pv, pv_spec, "topology.gke.io/zone")
    elif plugin == CINDER:
        handle = src.get("volumeID") or ""
        _translate_topology(pv, pv_spec, "topology.cinder.csi.openstack.org/zone")
    elif plugin == AZURE_DISK:
        _check_azure_kind(src)
        handle = src.get("diskURI") or ""
    else:
        raise TranslationError(f'could not find in-tree plugin translation logic for "{plugin}"')
    pv_spec["csi"] = {"driver": driver, "volumeHandle": handle}
    out = dict(pv)
    out["spec"] = pv_spec
    return out


def translate_inline_volume(vol: dict, plugin: str):
    """TranslateInTreeInlineVolumeToCSI for a migrated plugin: (CSI driver, volume handle)."""
    field, driver = IN_TREE_PLUGINS[plugin]
    src = vol.get(field) or {}
    if plugin == AWS_EBS:
        return driver, ebs_volume_id(src.get("volumeID") or "")
    if plugin == GCE_PD:
        return driver, f'projects/{UNSPECIFIED}/zones/{UNSPECIFIED}/disks/{src.get("pdName") or ""}'
    if plugin == CINDER:
        return driver, src.get("volumeID") or ""
    if plugin == AZURE_DISK:
        _check_azure_kind(src)
        return driver, src.get("diskURI") or ""
    raise TranslationError(f'could not find in-tree plugin translation logic for "{vol.get("name", "")}"')
