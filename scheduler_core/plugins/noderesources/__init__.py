"""NodeResourcesFit and NodeResourcesBalancedAllocation."""
from .balanced_allocation import BalancedAllocation
from .fit import Fit

__all__ = ["Fit", "BalancedAllocation"]
