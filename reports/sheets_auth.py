"""Google credentials for ``nitpicker report --sheet``: a service account, or a person's consent.

The kind of the ``--credentials`` file picks the way:

- a **service-account key** (``"type": "service_account"``): google-auth signs a JWT and asks
  the key's ``token_uri`` for an access token; the spreadsheet is shared with the account.
- an **OAuth client** of the "Desktop app" kind (``{"installed": {...}}``, as the original's
  ``credentials.json``): the first run opens the browser on Google's consent page
  (google-auth-oauthlib's ``InstalledAppFlow``, a one-shot server on ``localhost`` receiving the
  answer) and caches the token in ``token.json`` beside the client file; later runs read it,
  refresh it when it has expired, and write it back.

Errors name the fix (a missing or unreadable file, a revoked token, a sign-in never finished).
"""

from __future__ import annotations

import functools
import json
import os
import sys
import webbrowser
from typing import TYPE_CHECKING, Any, Final

from nitpicker.errors import UserError

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from google.auth.credentials import Credentials

__all__ = ["SCOPES", "SIGN_IN_TIMEOUT", "TOKEN_FILE", "AuthError", "load_credentials",
           "oauth_credentials", "token_path"]

SCOPES: Final = ("https://www.googleapis.com/auth/spreadsheets",)
TOKEN_FILE: Final = "token.json"
SIGN_IN_TIMEOUT: Final = 300
"""Seconds the one-shot local server waits for the browser to come back from the consent."""


class AuthError(UserError):
    """The credentials cannot be had: one line naming the fix."""


def token_path(client_file: Path) -> Path:
    """Where the token of an OAuth client file is cached: ``token.json`` beside it."""
    return client_file.with_name(TOKEN_FILE)


def _kind(path: Path) -> str:
    if not path.is_file():
        raise AuthError(f"Credentials file not found: {path} (a service-account JSON key, or an"
                        " OAuth client of the Desktop app kind; create one in the Google Cloud"
                        " console, APIs & Services → Credentials)")
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AuthError(f"Credentials file unreadable: {path} ({exc})") from exc
    if isinstance(info, dict) and info.get("type") == "service_account":
        return "service_account"
    if isinstance(info, dict) and "installed" in info:
        _check_client(path, info["installed"])
        return "installed"
    if isinstance(info, dict) and "web" in info:
        raise AuthError(f"{path} is an OAuth client of the Web application kind: create one of"
                        " the Desktop app kind (APIs & Services → Credentials)")
    raise AuthError(f"Not a service-account key nor an OAuth client file: {path}")


_CLIENT_KEYS: Final = ("client_id", "auth_uri", "token_uri")
"""What an OAuth client's ``installed`` object must hold (google-auth-oauthlib reads them)."""


def _check_client(path: Path, client: object) -> None:
    """An OAuth client file's ``installed`` value: an object with :data:`_CLIENT_KEYS` as
    text, or one line naming what is wrong."""
    again = "download the client's JSON again (APIs & Services → Credentials)"
    if not isinstance(client, dict):
        raise AuthError(f'OAuth client file {path}: "installed" is {_json_kind(client)}, not an'
                        f" object of the client's settings: {again}")
    for key in _CLIENT_KEYS:
        value = client.get(key)
        if not isinstance(value, str) or not value:
            found = "missing" if value is None else f"{_json_kind(value)}, not text"
            raise AuthError(f'OAuth client file {path}: "installed"."{key}" is {found}: {again}')


def _json_kind(value: object) -> str:
    """What a JSON value is, in words (``a string``, ``a list``, …)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    kinds = ((str, "a string"), (list, "a list"), (dict, "an object"), (int, "a number"),
             (float, "a number"))
    return next((name for kind, name in kinds if isinstance(value, kind)), "null")


def load_credentials(path: Path, open_url: Callable[[str], object] | None = None, *,
                     timeout: tuple[float, float] | None = None) -> tuple[Credentials, str]:
    """The credentials the file at ``path`` gives, and who they are (for error messages);
    ``timeout`` (connect, read seconds) bounds the refresh of a cached token."""
    if _kind(path) == "service_account":
        return _service_account(path)
    return oauth_credentials(path, open_url=open_url, timeout=timeout), "your Google account"


def _service_account(path: Path) -> tuple[Credentials, str]:
    from google.auth.exceptions import GoogleAuthError
    from google.oauth2.service_account import Credentials as ServiceAccount

    try:
        credentials = ServiceAccount.from_service_account_file(  # type: ignore[no-untyped-call]
            str(path), scopes=list(SCOPES))
    except (ValueError, KeyError, json.JSONDecodeError, GoogleAuthError) as exc:
        raise AuthError(f"Not a service-account key file: {path} ({exc})") from exc
    return credentials, credentials.service_account_email


def oauth_credentials(client_file: Path, open_url: Callable[[str], object] | None = None, *,
                      timeout: tuple[float, float] | None = None) -> Credentials:
    """A person's credentials: from ``token.json`` (refreshed when expired) or the consent.

    ``open_url`` opens the consent page (the default browser when ``None``); the URL is also
    printed to stderr, for a machine without a browser.
    """
    token_file = token_path(client_file)
    if token_file.is_file():
        return _cached(token_file, _token_uri(client_file), timeout)
    from google_auth_oauthlib.flow import InstalledAppFlow, WSGITimeoutError
    from oauthlib.oauth2.rfc6749.errors import OAuth2Error

    try:
        flow = InstalledAppFlow.from_client_secrets_file(str(client_file), scopes=list(SCOPES))
    except (ValueError, KeyError) as exc:
        raise AuthError(f"Not an OAuth client file: {client_file} ({exc})") from exc
    name = f"nitpicker-consent-{id(flow)}"
    webbrowser.register(name, None, _Opener(open_url))
    try:
        credentials: Credentials = flow.run_local_server(
            port=0, browser=name, authorization_prompt_message=None,
            success_message="nitpicker is signed in: you may close this tab.",
            timeout_seconds=SIGN_IN_TIMEOUT)
    except WSGITimeoutError as exc:
        raise AuthError(f"The sign-in was not finished within {SIGN_IN_TIMEOUT} s: re-run and"
                        " agree in the browser") from exc
    except (OAuth2Error, ValueError) as exc:
        raise AuthError(f"Google refused the sign-in ({exc}): check the OAuth client in"
                        f" {client_file}, then re-run") from exc
    _save(token_file, credentials)
    return credentials


class _Opener(webbrowser.BaseBrowser):
    """The consent page's opener: prints the URL, then opens it (``open_url`` or a browser)."""

    def __init__(self, open_url: Callable[[str], object] | None) -> None:
        super().__init__("nitpicker")
        self.open_url = open_url

    def open(self, url: str, new: int = 0, autoraise: bool = True) -> bool:
        print(f"Sign in to Google to let nitpicker write the spreadsheet: {url}",
              file=sys.stderr)
        if self.open_url is not None:
            self.open_url(url)
            return True
        return webbrowser.open(url, new=new, autoraise=autoraise)


def _token_uri(client_file: Path) -> str | None:
    """The client file's ``token_uri``: where a refresh goes (google-auth ignores the one a
    token file holds, and would always ask Google's)."""
    info = json.loads(client_file.read_text(encoding="utf-8"))
    uri = info.get("installed", {}).get("token_uri")
    return str(uri) if uri else None


def _cached(token_file: Path, token_uri: str | None,
            timeout: tuple[float, float] | None = None) -> Credentials:
    from google.auth.exceptions import RefreshError, TransportError
    from google.auth.transport.requests import Request
    from google.oauth2.credentials import Credentials as UserCredentials

    try:
        credentials: UserCredentials = UserCredentials.from_authorized_user_file(  # type: ignore[no-untyped-call]
            str(token_file), list(SCOPES))
    except (OSError, ValueError, KeyError) as exc:
        raise AuthError(f"Token cache unreadable: {token_file} ({exc}): delete it and re-run"
                        " to sign in again") from exc
    if token_uri:
        expiry = credentials.expiry
        credentials = credentials.with_token_uri(token_uri)
        credentials.expiry = expiry  # the copy forgets it, and would pass for valid
    if credentials.valid:
        return credentials
    try:
        request = Request()  # type: ignore[no-untyped-call]
        credentials.refresh(  # type: ignore[no-untyped-call]
            request if timeout is None else functools.partial(request, timeout=timeout))
    except RefreshError as exc:
        raise AuthError(f"The token in {token_file} was revoked or has expired ({_reason(exc)}):"
                        f" delete {token_file} and re-run to sign in again") from exc
    except TransportError as exc:
        from nitpicker_reports.sheets_network import TIMEOUT, network_failure

        reason = network_failure(exc, timeout or (TIMEOUT, TIMEOUT))
        raise AuthError(f"The token in {token_file} could not be refreshed: {reason}") from exc
    _save(token_file, credentials)
    return credentials


def _reason(exc: Any) -> str:
    args = getattr(exc, "args", ())
    return str(args[0]) if args else str(exc)


def _save(token_file: Path, credentials: Any) -> None:
    """Write the token readable by its owner only (it grants access to the spreadsheets)."""
    data = credentials.to_json()
    try:
        fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(data)
    except OSError as exc:
        raise AuthError(f"Cannot write the token cache {token_file}: {exc.strerror or exc}"
                        ) from exc
