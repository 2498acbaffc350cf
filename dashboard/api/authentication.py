"""The REST API's token authentication: knox's, in one query per request, its SQL compiled once."""
from __future__ import annotations

import binascii
from functools import cache
from hmac import compare_digest

from django.contrib.auth import get_user_model
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from knox import auth
from knox.crypto import hash_token
from knox.models import get_token_model
from knox.settings import CONSTANTS, knox_settings
from knox.signals import token_expired
from rest_framework import exceptions

from ..compiled import ANY_TOKEN_KEY, fetch_all, instance, width


@cache
def _tokens_sql() -> tuple[str, tuple]:
    """The tokens with a token key (a marker), each with its user's row."""
    return (get_token_model().objects.filter(token_key=ANY_TOKEN_KEY).select_related("user")
            .query.sql_with_params())


def tokens_with_key(token_key: str) -> list:
    """The AuthTokens whose key is ``token_key``, their users loaded: knox's query, its SQL compiled once (Django's
    compiler cost more than the rest of the request's authentication)."""
    token_model, user_model = get_token_model(), get_user_model()
    tokens = []
    for row in fetch_all(_tokens_sql(), {ANY_TOKEN_KEY: token_key}):
        token = instance(token_model, row)
        token.user = instance(user_model, row[width(token_model):])
        tokens.append(token)
    return tokens


class TokenAuthentication(auth.TokenAuthentication):
    """knox's TokenAuthentication (``Authorization: Token ...``, SHA-512 digests), in one query, without its sweep
    of every other token of the user at each request (one more query each time: this project's tokens do not
    expire, ``REST_KNOX["TOKEN_TTL"]``). A token that has an expiry is still refused, and deleted, once past it."""

    def authenticate_credentials(self, token):
        """knox's check (each token with the key: expiry, digest, auto-refresh, active user) of the rows read by
        ``tokens_with_key``."""
        msg = _("Invalid token.")
        try:
            token = token.decode("utf-8")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed(msg)
        for auth_token in tokens_with_key(token[:CONSTANTS.TOKEN_KEY_LENGTH]):
            if self._cleanup_token(auth_token):
                continue
            try:
                digest = hash_token(token)
            except (TypeError, binascii.Error):
                raise exceptions.AuthenticationFailed(msg)
            if compare_digest(digest, auth_token.digest):
                if knox_settings.AUTO_REFRESH and auth_token.expiry:
                    self.renew_token(auth_token)
                return self.validate_user(auth_token)
        raise exceptions.AuthenticationFailed(msg)

    def _cleanup_token(self, auth_token) -> bool:
        if auth_token.expiry is not None and auth_token.expiry < timezone.now():
            username = auth_token.user.get_username()
            auth_token.delete()
            token_expired.send(sender=self.__class__, username=username, source="auth_token")
            return True
        return False
