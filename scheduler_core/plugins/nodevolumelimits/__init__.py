"""Node volume limits: NodeVolumeLimits (CSI) and the in-tree EBS, GCE PD, Azure Disk and Cinder limits."""
from .csi import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, CSILimits
from .non_csi import AzureDiskLimits, CinderLimits, EBSLimits, GCEPDLimits

__all__ = ["CSILimits", "EBSLimits", "GCEPDLimits", "AzureDiskLimits", "CinderLimits",
           "ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED"]
