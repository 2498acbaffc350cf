"""The REST API's token authentication: knox's, in one query per request."""
from __future__ import annotations

from django.utils import timezone
from knox import auth
from knox.signals import token_expired


class TokenAuthentication(auth.TokenAuthentication):
    """knox's TokenAuthentication (``Authorization: Token ...``, SHA-512 digests), without its sweep of every
    other token of the user at each request (one more query each time: this project's tokens do not expire,
    ``REST_KNOX["TOKEN_TTL"]``). A token that has an expiry is still refused, and deleted, once past it."""

    def _cleanup_token(self, auth_token) -> bool:
        if auth_token.expiry is not None and auth_token.expiry < timezone.now():
            username = auth_token.user.get_username()
            auth_token.delete()
            token_expired.send(sender=self.__class__, username=username, source="auth_token")
            return True
        return False
