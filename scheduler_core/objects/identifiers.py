"""Name checks of k8s.io/apimachinery/pkg/util/validation, with kube's messages (cached: clusters repeat the
same names, label keys and values)."""
from __future__ import annotations

import functools
import re

_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME = re.compile(_QNAME_FMT)
_LABEL_VALUE_FMT = f"({_QNAME_FMT})?"
_LABEL_VALUE = re.compile(_LABEL_VALUE_FMT)
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN = re.compile(_DNS1123_SUBDOMAIN_FMT)
_DNS1123_LABEL = re.compile(_DNS1123_LABEL_FMT)
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL = re.compile(_DNS1035_LABEL_FMT)
_QNAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
              "alphanumeric character")
_LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
                    "or '.', and must start and end with an alphanumeric character")
_DNS1123_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                          "'-' or '.', and must start and end with an alphanumeric character")
_DNS1123_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
                      "must start and end with an alphanumeric character")
_DNS1035_LABEL_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                      "alphabetic character, and end with an alphanumeric character")
_CACHED = functools.lru_cache(maxsize=8192)


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """validation.RegexError (with kube's double space before "or")."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    return msg + " (e.g. " + " or ".join(f"'{e}', " for e in examples) + f"regex used for validation is '{fmt}')"


def max_len_error(n: int) -> str:
    return f"must be no more than {n} characters"


@_CACHED
def is_dns1123_label(value: str) -> tuple:
    errs = []
    if len(value) > 63:
        errs.append(max_len_error(63))
    if not _DNS1123_LABEL.fullmatch(value):
        errs.append(regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return tuple(errs)


@_CACHED
def is_dns1035_label(value: str) -> tuple:
    errs = []
    if len(value) > 63:
        errs.append(max_len_error(63))
    if not _DNS1035_LABEL.fullmatch(value):
        errs.append(regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return tuple(errs)


@_CACHED
def is_dns1123_subdomain(value: str) -> tuple:
    errs = []
    if len(value) > 253:
        errs.append(max_len_error(253))
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return tuple(errs)


@_CACHED
def is_qualified_name(value: str) -> tuple:
    """IsQualifiedName: [prefix/]name, as for label keys and extended resource names."""
    errs = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return ("a qualified name " + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",)
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + max_len_error(63))
    if not _QNAME.fullmatch(name):
        errs.append("name part " + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return tuple(errs)


@_CACHED
def is_valid_label_value(value: str) -> tuple:
    errs = []
    if len(value) > 63:
        errs.append(max_len_error(63))
    if not _LABEL_VALUE.fullmatch(value):
        errs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return tuple(errs)


def is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName: a prefixed, non-native name that is also a valid quota name."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)


GENERATE_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"   # utilrand's alphanums: no vowels, no confusable digits


def generate_name(base: str, rng) -> str:
    """names.SimpleNameGenerator (``metadata.generateName``): the base, cut to 58 characters, and five random
    characters from ``rng`` (a ``random.Random``)."""
    return base[:58] + "".join(rng.choice(GENERATE_NAME_CHARS) for _ in range(5))
