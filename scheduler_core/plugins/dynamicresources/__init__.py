"""DynamicResources (framework/plugins/dynamicresources): ResourceClaims of a pod allocated, reserved and bound."""
from .dynamicresources import DynamicResources

__all__ = ["DynamicResources"]
