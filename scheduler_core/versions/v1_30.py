"""Kubernetes 1.30: the base table every later version states its differences from.

Gates are kube-scheduler's ``--feature-gates`` at v1.30.0: k8s.io/kubernetes pkg/features (with the generic
apiserver, apiextensions and controller-manager gates it lists), client-go's, component-base logs' and metrics'
gates, and the special AllAlpha / AllBeta.
"""
from ..objects.protoschema import MESSAGES
from .featuregates import ALPHA, BETA, DEPRECATED, GA, Gate

VERSION = "1.30"
RELEASE = "v1.30.0"

# At 1.30 an unknown gate is an error (featuregate.SetFromMap before versioned gates).
UNKNOWN_GATE_IS_ERROR = True

GATES = {
    "APIListChunking": Gate(True, GA, locked=True),
    "APIPriorityAndFairness": Gate(True, GA, locked=True),
    "APIResponseCompression": Gate(True, BETA),
    "APIServerIdentity": Gate(True, BETA),
    "APIServerTracing": Gate(True, BETA),
    "APIServingWithRoutine": Gate(True, BETA),
    "AdmissionWebhookMatchConditions": Gate(True, GA, locked=True),
    "AggregatedDiscoveryEndpoint": Gate(True, GA, locked=True),
    "AllAlpha": Gate(False, ALPHA),
    "AllBeta": Gate(False, BETA),
    "AllowServiceLBStatusOnNonLB": Gate(False, DEPRECATED),
    "AnyVolumeDataSource": Gate(True, BETA),
    "AppArmor": Gate(True, BETA),
    "AppArmorFields": Gate(True, BETA),
    "CPUManager": Gate(True, GA, locked=True),
    "CPUManagerPolicyAlphaOptions": Gate(False, ALPHA),
    "CPUManagerPolicyBetaOptions": Gate(True, BETA),
    "CPUManagerPolicyOptions": Gate(True, BETA),
    "CRDValidationRatcheting": Gate(True, BETA),
    "CSIMigrationPortworx": Gate(False, BETA),
    "CSIMigrationRBD": Gate(False, DEPRECATED),
    "CSINodeExpandSecret": Gate(True, GA, locked=True),
    "CSIVolumeHealth": Gate(False, ALPHA),
    "CloudControllerManagerWebhook": Gate(False, ALPHA),
    "CloudDualStackNodeIPs": Gate(True, GA, locked=True),
    "ClusterTrustBundle": Gate(False, ALPHA),
    "ClusterTrustBundleProjection": Gate(False, ALPHA),
    "ComponentSLIs": Gate(True, BETA),
    "ConsistentHTTPGetHandlers": Gate(True, GA, locked=True),
    "ConsistentListFromCache": Gate(False, ALPHA),
    "ContainerCheckpoint": Gate(True, BETA),
    "ContextualLogging": Gate(True, BETA),
    "CronJobsScheduledAnnotation": Gate(True, BETA),
    "CrossNamespaceVolumeDataSource": Gate(False, ALPHA),
    "CustomCPUCFSQuotaPeriod": Gate(False, ALPHA),
    "CustomResourceFieldSelectors": Gate(False, ALPHA),
    "CustomResourceValidationExpressions": Gate(True, GA, locked=True),
    "DefaultHostNetworkHostPortsInPodTemplates": Gate(False, DEPRECATED),
    "DevicePluginCDIDevices": Gate(True, BETA),
    "DisableCloudProviders": Gate(True, BETA),
    "DisableKubeletCloudCredentialProviders": Gate(True, BETA),
    "DisableNodeKubeProxyVersion": Gate(False, ALPHA),
    "DynamicResourceAllocation": Gate(False, ALPHA),
    "EfficientWatchResumption": Gate(True, GA, locked=True),
    "ElasticIndexedJob": Gate(True, BETA),
    "EventedPLEG": Gate(False, ALPHA),
    "ExecProbeTimeout": Gate(True, GA),
    "GracefulNodeShutdown": Gate(True, BETA),
    "GracefulNodeShutdownBasedOnPodPriority": Gate(True, BETA),
    "HPAContainerMetrics": Gate(True, GA, locked=True),
    "HPAScaleToZero": Gate(False, ALPHA),
    "HonorPVReclaimPolicy": Gate(False, ALPHA),
    "ImageMaximumGCAge": Gate(True, BETA),
    "InPlacePodVerticalScaling": Gate(False, ALPHA),
    "InTreePluginAWSUnregister": Gate(False, ALPHA),
    "InTreePluginAzureDiskUnregister": Gate(False, ALPHA),
    "InTreePluginAzureFileUnregister": Gate(False, ALPHA),
    "InTreePluginGCEUnregister": Gate(False, ALPHA),
    "InTreePluginOpenStackUnregister": Gate(False, ALPHA),
    "InTreePluginPortworxUnregister": Gate(False, ALPHA),
    "InTreePluginRBDUnregister": Gate(False, DEPRECATED),
    "InTreePluginvSphereUnregister": Gate(False, ALPHA),
    "InformerResourceVersion": Gate(False, ALPHA),
    "JobBackoffLimitPerIndex": Gate(True, BETA),
    "JobManagedBy": Gate(False, ALPHA),
    "JobPodFailurePolicy": Gate(True, BETA),
    "JobPodReplacementPolicy": Gate(True, BETA),
    "JobReadyPods": Gate(True, GA, locked=True),
    "JobSuccessPolicy": Gate(False, ALPHA),
    "KMSv1": Gate(False, DEPRECATED),
    "KMSv2": Gate(True, GA, locked=True),
    "KMSv2KDF": Gate(True, GA, locked=True),
    "KubeProxyDrainingTerminatingNodes": Gate(True, BETA),
    "KubeletCgroupDriverFromCRI": Gate(False, ALPHA),
    "KubeletInUserNamespace": Gate(False, ALPHA),
    "KubeletPodResourcesDynamicResources": Gate(False, ALPHA),
    "KubeletPodResourcesGet": Gate(False, ALPHA),
    "KubeletSeparateDiskGC": Gate(False, ALPHA),
    "KubeletTracing": Gate(True, BETA),
    "LegacyServiceAccountTokenCleanUp": Gate(True, GA, locked=True),
    "LoadBalancerIPMode": Gate(True, BETA),
    "LocalStorageCapacityIsolationFSQuotaMonitoring": Gate(False, ALPHA),
    "LogarithmicScaleDown": Gate(True, BETA),
    "LoggingAlphaOptions": Gate(False, ALPHA),
    "LoggingBetaOptions": Gate(True, BETA),
    "MatchLabelKeysInPodAffinity": Gate(False, ALPHA),
    "MatchLabelKeysInPodTopologySpread": Gate(True, BETA),
    "MaxUnavailableStatefulSet": Gate(False, ALPHA),
    "MemoryManager": Gate(True, BETA),
    "MemoryQoS": Gate(False, ALPHA),
    "MinDomainsInPodTopologySpread": Gate(True, GA, locked=True),
    "MultiCIDRServiceAllocator": Gate(False, ALPHA),
    "MutatingAdmissionPolicy": Gate(False, ALPHA),
    "NFTablesProxyMode": Gate(False, ALPHA),
    "NewVolumeManagerReconstruction": Gate(True, GA, locked=True),
    "NodeInclusionPolicyInPodTopologySpread": Gate(True, BETA),
    "NodeLogQuery": Gate(False, BETA),
    "NodeOutOfServiceVolumeDetach": Gate(True, GA, locked=True),
    "NodeSwap": Gate(True, BETA),
    "OpenAPIEnums": Gate(True, BETA),
    "PDBUnhealthyPodEvictionPolicy": Gate(True, BETA),
    "PersistentVolumeLastPhaseTransitionTime": Gate(True, BETA),
    "PodAndContainerStatsFromCRI": Gate(False, ALPHA),
    "PodDeletionCost": Gate(True, BETA),
    "PodDisruptionConditions": Gate(True, BETA),
    "PodHostIPs": Gate(True, GA, locked=True),
    "PodIndexLabel": Gate(True, BETA),
    "PodLifecycleSleepAction": Gate(True, BETA),
    "PodReadyToStartContainersCondition": Gate(True, BETA),
    "PodSchedulingReadiness": Gate(True, GA, locked=True),
    "PortForwardWebsockets": Gate(False, ALPHA),
    "ProcMountType": Gate(False, ALPHA),
    "QOSReserved": Gate(False, ALPHA),
    "ReadWriteOncePod": Gate(True, GA, locked=True),
    "RecoverVolumeExpansionFailure": Gate(False, ALPHA),
    "RecursiveReadOnlyMounts": Gate(False, ALPHA),
    "RelaxedEnvironmentVariableValidation": Gate(False, ALPHA),
    "RemainingItemCount": Gate(True, GA, locked=True),
    "RetryGenerateName": Gate(False, ALPHA),
    "RotateKubeletServerCertificate": Gate(True, BETA),
    "RuntimeClassInImageCriApi": Gate(False, ALPHA),
    "SELinuxMount": Gate(False, ALPHA),
    "SELinuxMountReadWriteOncePod": Gate(True, BETA),
    "SchedulerQueueingHints": Gate(False, BETA),
    "SeparateCacheWatchRPC": Gate(True, BETA),
    "SeparateTaintEvictionController": Gate(True, BETA),
    "ServerSideApply": Gate(True, GA, locked=True),
    "ServerSideFieldValidation": Gate(True, GA, locked=True),
    "ServiceAccountTokenJTI": Gate(True, BETA),
    "ServiceAccountTokenNodeBinding": Gate(False, ALPHA),
    "ServiceAccountTokenNodeBindingValidation": Gate(True, BETA),
    "ServiceAccountTokenPodNodeInfo": Gate(True, BETA),
    "ServiceNodePortStaticSubrange": Gate(True, GA, locked=True),
    "ServiceTrafficDistribution": Gate(False, ALPHA),
    "SidecarContainers": Gate(True, BETA),
    "SizeMemoryBackedVolumes": Gate(True, BETA),
    "SkipReadOnlyValidationGCE": Gate(True, DEPRECATED),
    "StableLoadBalancerNodeSet": Gate(True, GA, locked=True),
    "StatefulSetAutoDeletePVC": Gate(True, BETA),
    "StatefulSetStartOrdinal": Gate(True, BETA),
    "StorageNamespaceIndex": Gate(True, BETA),
    "StorageVersionAPI": Gate(False, ALPHA),
    "StorageVersionHash": Gate(True, BETA),
    "StorageVersionMigrator": Gate(False, ALPHA),
    "StructuredAuthenticationConfiguration": Gate(True, BETA),
    "StructuredAuthorizationConfiguration": Gate(True, BETA),
    "TopologyAwareHints": Gate(True, BETA),
    "TopologyManagerPolicyAlphaOptions": Gate(False, ALPHA),
    "TopologyManagerPolicyBetaOptions": Gate(True, BETA),
    "TopologyManagerPolicyOptions": Gate(True, BETA),
    "TranslateStreamCloseWebsocketRequests": Gate(True, BETA),
    "UnauthenticatedHTTP2DOSMitigation": Gate(True, BETA),
    "UnknownVersionInteroperabilityProxy": Gate(False, ALPHA),
    "UserNamespacesPodSecurityStandards": Gate(False, ALPHA),
    "UserNamespacesSupport": Gate(False, BETA),
    "ValidatingAdmissionPolicy": Gate(True, GA, locked=True),
    "VolumeAttributesClass": Gate(False, ALPHA),
    "VolumeCapacityPriority": Gate(False, ALPHA),
    "WatchBookmark": Gate(True, GA, locked=True),
    "WatchFromStorageWithoutResourceVersion": Gate(False, BETA),
    "WatchList": Gate(False, ALPHA),
    "WatchListClient": Gate(False, BETA),
    "WinDSR": Gate(False, ALPHA),
    "WinOverlay": Gate(True, BETA),
    "WindowsHostNetwork": Gate(True, ALPHA),
    "ZeroLimitedNominalConcurrencyShares": Gate(True, GA, locked=True),}
GATE_DEPENDENCIES = {}

# The gates pkg/scheduler reads, with the values this implementation has (kube's other value of such a gate
# is refused rather than silently ignored). Gates not listed here do not change scheduling.
IMPLEMENTED_GATES = {
    "DynamicResourceAllocation": (False,),
    "InPlacePodVerticalScaling": (False,),
    "MatchLabelKeysInPodTopologySpread": (True,),
    "NodeInclusionPolicyInPodTopologySpread": (True,),
    "PodDisruptionConditions": (True,),
    "SchedulerQueueingHints": (False,),
    "SidecarContainers": (True,),
    "VolumeCapacityPriority": (False,),
}

# framework/plugins/registry.go: the in-tree plugins this version registers.
IN_TREE_PLUGINS = (
    "SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
    "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "EBSLimits", "GCEPDLimits", "NodeVolumeLimits",
    "AzureDiskLimits", "CinderLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity",
    "DefaultPreemption", "NodeResourcesBalancedAllocation", "ImageLocality", "DefaultBinder", "DynamicResources",
)

# apis/config/v1/default_plugins.go: the default MultiPoint list, in order, with score weights (0: none given).
DEFAULT_PLUGINS = (
    ("SchedulingGates", 0), ("PrioritySort", 0), ("NodeUnschedulable", 0), ("NodeName", 0),
    ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", 0), ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0), ("EBSLimits", 0), ("GCEPDLimits", 0), ("NodeVolumeLimits", 0),
    ("AzureDiskLimits", 0), ("VolumeBinding", 0), ("VolumeZone", 0), ("PodTopologySpread", 2),
    ("InterPodAffinity", 2), ("DefaultPreemption", 0), ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1), ("DefaultBinder", 0),
)
# applyFeatureGates, in order: (gate, plugin, weight, before) -- the plugin goes before ``before``, or last.
GATED_DEFAULT_PLUGINS = (
    ("DynamicResourceAllocation", "DynamicResources", 0, "DefaultPreemption"),
)

# The kinds kube-scheduler's informers follow (the scheduler's pod and node handlers, the plugins' listers and
# the queue's cluster events), as (kind, list path, query): pods ended Succeeded or Failed are not followed.
INFORMERS = (
    ("Node", "/api/v1/nodes", ()),
    ("Pod", "/api/v1/pods", (("fieldSelector", "status.phase!=Succeeded,status.phase!=Failed"),)),
    ("Namespace", "/api/v1/namespaces", ()),
    ("PersistentVolume", "/api/v1/persistentvolumes", ()),
    ("PersistentVolumeClaim", "/api/v1/persistentvolumeclaims", ()),
    ("Service", "/api/v1/services", ()),
    ("ReplicationController", "/api/v1/replicationcontrollers", ()),
    ("ReplicaSet", "/apis/apps/v1/replicasets", ()),
    ("StatefulSet", "/apis/apps/v1/statefulsets", ()),
    ("StorageClass", "/apis/storage.k8s.io/v1/storageclasses", ()),
    ("CSINode", "/apis/storage.k8s.io/v1/csinodes", ()),
    ("CSIDriver", "/apis/storage.k8s.io/v1/csidrivers", ()),
    ("CSIStorageCapacity", "/apis/storage.k8s.io/v1/csistoragecapacities", ()),
    ("PodDisruptionBudget", "/apis/policy/v1/poddisruptionbudgets", ()),
)

# Differences of behaviour of this version from the previous one (none: this is the base).
CHANGES = {}

# -- kube-apiserver ---------------------------------------------------------------------------------
# The group versions it serves of the kinds Schedscope stores, and the fields it knows of their objects
# ({message: {field number: (JSON name, type, mode)}}, objects.protoschema; ``objects.apifields`` reads them): a
# field it does not know is dropped when it decodes a write, or refused under strict field validation.
API_GROUP_VERSIONS = ("v1", "apps/v1", "coordination.k8s.io/v1", "events.k8s.io/v1", "policy/v1",
                      "scheduling.k8s.io/v1", "storage.k8s.io/v1")
API_FIELDS = MESSAGES

# Pod fields the pod strategy's dropDisabledFields clears while their gate is off, unless the stored pod already
# uses one of them ("[]": every item of a list).
POD_GATED_FIELDS = {
    "DynamicResourceAllocation": ("spec.resourceClaims", "spec.containers[].resources.claims",
                                  "spec.initContainers[].resources.claims",
                                  "spec.ephemeralContainers[].resources.claims", "status.resourceClaimStatuses"),
}
