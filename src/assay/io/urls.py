"""Credentials in URLs: hide them wherever a URL is shown or stored.

A URL such as ``http://user:s3cret@host/v1`` carries a password. assay never prints or
stores it: :func:`mask_credentials` replaces the password (or a lone token) with
``***`` anywhere in a text, and :func:`split_credentials` takes them out of a URL so
they can travel in an ``Authorization`` header instead.

Example:
    >>> mask_credentials("http://user:s3cret@127.0.0.1:8000/v1#m")
    'http://user:***@127.0.0.1:8000/v1#m'
    >>> mask_credentials("error at https://tok@host/x")
    'error at https://***@host/x'
    >>> split_credentials("http://user:s3cret@host:80/v1")
    ('http://host:80/v1', 'user', 's3cret')
"""

from __future__ import annotations

import re
from urllib.parse import unquote

__all__ = ["mask_credentials", "split_credentials"]

# scheme://userinfo@  (userinfo has no '/', '@', '#', '?' or whitespace)
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<info>[^/@#?\s]+)@")


def _mask(m: re.Match[str]) -> str:
    user, sep, _ = m.group("info").partition(":")
    return f"{m.group('scheme')}{user}:***@" if sep else f"{m.group('scheme')}***@"


def mask_credentials(text: str | None) -> str | None:
    """``text`` with the password of every ``scheme://user:password@`` replaced by ``***``."""
    if text is None:
        return None
    return _USERINFO.sub(_mask, str(text))


def split_credentials(url: str) -> tuple[str, str | None, str | None]:
    """``(url without userinfo, user, password)``; user and password are None if absent."""
    m = _USERINFO.match(url)
    if m is None:
        return url, None, None
    user, sep, password = m.group("info").partition(":")
    bare = m.group("scheme") + url[m.end() :]
    return bare, unquote(user), unquote(password) if sep else None
