"""claimStore (dynamicresources/claims.go): the claims of one pod, user claims first."""
from __future__ import annotations


class ClaimStore:
    """A pod's ResourceClaims in the order of ``spec.resourceClaims``, then the special claim for extended
    resources backed by DRA (when there is one). ``initial_extended_resource_claim`` is that claim as PreFilter
    found or made it, before PreBind replaced it with the one it created."""

    __slots__ = ("claims", "num_user_owned", "initial_extended_resource_claim")

    def __init__(self, claims=(), extended_resource_claim=None):
        self.claims = list(claims)
        self.num_user_owned = len(self.claims)
        self.initial_extended_resource_claim = extended_resource_claim
        if extended_resource_claim is not None:
            self.claims.append(extended_resource_claim)

    def empty(self) -> bool:
        return not self.claims

    def __len__(self):
        return len(self.claims)

    def all(self):
        return enumerate(self.claims)

    def all_user_claims(self):
        return enumerate(self.claims[:self.num_user_owned])

    def extended_resource_claim(self):
        return None if self.num_user_owned == len(self.claims) else self.claims[self.num_user_owned]

    def set(self, index: int, claim: dict) -> None:
        """The claim as PreBind wrote it (Unreserve then works with the written one)."""
        self.claims[index] = claim

    def no_user_claim(self) -> bool:
        return self.num_user_owned == 0
