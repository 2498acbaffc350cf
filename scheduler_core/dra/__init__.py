"""Dynamic Resource Allocation (resource.k8s.io/v1): objects, claims from templates, CEL selectors, the
structured allocator and explanations of its decisions."""
