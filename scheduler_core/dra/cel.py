"""CEL device selectors (k8s.io/dynamic-resource-allocation/cel) on cel-python, wrapped to kube's semantics.

A selector sees ``device.driver``, ``device.allowMultipleAllocations``, ``device.attributes[domain].id`` and
``device.capacity[domain].id`` (a quantity), with cel-go's ``cel.bind`` and heterogeneous equality (values of
different types are unequal; ordering them is "no such overload"). Attributes and capacities without a domain belong to the driver's
domain. A domain the device does not have is an empty map; an id it does not have is the runtime error
``no such key: ID`` (kube aborts the allocation with it). Version attributes are semvers (``semver(s)``,
``isGreaterThan``, ``isLessThan``, ``compareTo``, ``major()``, ...), capacities are quantities (``quantity(s)``,
``compareTo``, ``isGreaterThan``, ``isLessThan``, ``add``, ``sub``, ``asInteger()``, ...), as in the apiserver's
CEL libraries, with cel-go's strings extension (``lowerAscii``, ``split``, ``substring``, ...) and its checked
integer arithmetic and conversions ("division by zero", "integer overflow", "type conversion error from 'string'
to 'int'"). Selectors are not type-checked as cel-go's checker does. Compiled programs are cached by expression
(kube's cel.Cache).

cel-python is imported when the first selector is compiled or the first device variable is made (celenv): a
scheduler that meets no DRA object never loads it.
"""
from __future__ import annotations

import functools


@functools.lru_cache(maxsize=1024)
def compile_selector(expression: str):
    """GetOrCompile: the program for an expression (celenv.Program), or one whose ``error`` says why it does not
    compile."""
    from . import celenv
    return celenv.compile_selector(expression)


def device_activation(driver: str, device: dict) -> dict:
    """The ``device`` variable for one ResourceSlice device (its raw dict)."""
    from . import celenv
    return celenv.device_activation(driver, device)
