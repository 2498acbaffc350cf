"""Encryption at rest of stored credentials (real clusters' kubeconfigs).

Keys come from ``SCHEDSCOPE_ENCRYPTION_KEYS``: comma-separated Fernet keys (``Fernet.generate_key()``); the first
encrypts, every one decrypts, so a key is rotated by putting the new one first and the old one second, then running
``manage.py reencrypt``. Unset, one key is derived from SECRET_KEY (HKDF-SHA256) so the embedded mode needs nothing;
``manage.py check --deploy`` warns about that in production. The derived key stays the last key that decrypts when
keys are set, so what was stored before can be re-encrypted with them.
"""
from __future__ import annotations

import base64
import os

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

KEYS_ENV = "SCHEDSCOPE_ENCRYPTION_KEYS"
HKDF_INFO = b"schedscope credentials encryption"
WRONG_KEY = (f"no key in {KEYS_ENV} (nor the one derived from SECRET_KEY) decrypts it: "
             "the key is wrong or missing")


class DecryptionFailed(Exception):
    """A stored secret cannot be decrypted with any of the configured keys (wrong or missing key)."""


def _configured_keys() -> list[str]:
    return [k.strip() for k in os.environ.get(KEYS_ENV, "").split(",") if k.strip()]


def derived_key(secret_key: str) -> bytes:
    """The Fernet key derived from ``secret_key`` (used when SCHEDSCOPE_ENCRYPTION_KEYS is unset)."""
    raw = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=HKDF_INFO).derive(secret_key.encode())
    return base64.urlsafe_b64encode(raw)


def fernet() -> MultiFernet:
    """The configured keys (the first encrypts) and, last, the one derived from SECRET_KEY."""
    try:
        configured = [Fernet(k) for k in _configured_keys()]
    except ValueError:
        raise ImproperlyConfigured(f"{KEYS_ENV}: each key must be 32 url-safe base64-encoded bytes "
                                   "(python -c 'from cryptography.fernet import Fernet; "
                                   "print(Fernet.generate_key().decode())')") from None
    return MultiFernet(configured + [Fernet(derived_key(settings.SECRET_KEY))])


def encrypt(text: str) -> str:
    """``text`` encrypted with the first key (a Fernet token, ASCII)."""
    return fernet().encrypt(text.encode()).decode("ascii")


def decrypt(token: str) -> str:
    """The plaintext of ``encrypt``'s output; DecryptionFailed when no configured key opens it."""
    try:
        return fernet().decrypt(token.encode("ascii")).decode()
    except (InvalidToken, UnicodeError):
        raise DecryptionFailed(WRONG_KEY) from None


def rotate(token: str) -> str:
    """``token`` re-encrypted with the first key (MultiFernet.rotate); DecryptionFailed as ``decrypt``."""
    try:
        return fernet().rotate(token.encode("ascii")).decode("ascii")
    except InvalidToken:
        raise DecryptionFailed(WRONG_KEY) from None


@checks.register(checks.Tags.security)
def check_keys_valid(app_configs=None, **kwargs):
    """Error: SCHEDSCOPE_ENCRYPTION_KEYS is set but a key in it is not a Fernet key."""
    try:
        fernet()
    except ImproperlyConfigured as err:
        return [checks.Error(str(err), id="schedscope.E001")]
    return []


@checks.register(checks.Tags.security, deploy=True)
def check_keys_set(app_configs=None, **kwargs):
    """Warning (check --deploy): production without SCHEDSCOPE_ENCRYPTION_KEYS."""
    if _configured_keys() or settings.DEBUG:
        return []
    return [checks.Warning(
        f"{KEYS_ENV} is not set: stored kubeconfigs are encrypted with a key derived from SECRET_KEY, so "
        "anyone with SECRET_KEY and the database can read them, and rotating SECRET_KEY makes them unreadable.",
        hint=f"Set {KEYS_ENV} to one or more comma-separated Fernet keys (the first encrypts), kept apart from "
             "the database, then run `manage.py reencrypt`.", id="schedscope.W001")]
