"""Login lockouts (django-axes) per (username, address) pair and per address.

django-axes compares one failure count with one limit (``AXES_FAILURE_LIMIT``); its
maintainers' answer for a second, higher limit per address is a handler of one's own
(jazzband/django-axes#661). ``LoginLockoutHandler`` is django-axes' database handler with:

* **a lock per address** (security audit 2026-11-26, L1: one address tried one password on
  40 usernames with no delay): once one client address has ``LOGIN_ADDRESS_FAILURE_LIMIT``
  failed logins within the cool-off (``AXES_COOLOFF_TIME``), whatever the usernames, every
  login from that address is refused (``429 login_locked_out``) until the cool-off ends,
  on the site's ``/login/``, the admin's and ``POST /api/auth/token/`` alike. The pair's own
  lock (``AXES_FAILURE_LIMIT``, lower) is unchanged. A successful login resets only its
  own pair's failures (``AXES_LOCKOUT_PARAMETERS`` stays the pair), so a sprayer cannot
  clear the address's count by logging in to an account of his own.
* **logins without a session** (an API token): django-axes creates a session to tie its
  access log to; a request with no session key keeps none (security audit 2026-11-26,
  Info: every ``POST /api/auth/token/`` added a ``django_session`` row and a cookie).
"""

from __future__ import annotations

from typing import Any

from axes.attempts import get_cool_off_threshold
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_credentials, get_failure_limit
from axes.models import AccessAttempt, AccessLog
from django.conf import settings
from django.db.models import Sum
from django.http import HttpRequest


def address_failures(request: HttpRequest) -> int:
    """Failed logins from the request's client address (``request.axes_ip_address``, set
    by django-axes) within the cool-off, summed over every username and user agent."""
    total = AccessAttempt.objects.filter(
        ip_address=request.axes_ip_address,  # type: ignore[attr-defined]  # set by django-axes
        attempt_time__gte=get_cool_off_threshold(request),
    ).aggregate(total=Sum("failures_since_start"))["total"]
    return int(total or 0)


class LoginLockoutHandler(AxesDatabaseHandler):  # type: ignore[misc]  # django-axes is untyped
    """django-axes' database handler with a lock per client address and sessionless logins
    (see the module's docstring). ``AXES_HANDLER`` names it."""

    def get_failures(self, request: HttpRequest, credentials: dict[str, Any] | None = None) -> int:
        """The pair's failures, or the pair's limit once the address reached
        ``LOGIN_ADDRESS_FAILURE_LIMIT``: django-axes compares this count with
        ``AXES_FAILURE_LIMIT`` before checking a password and after each failure."""
        pair = int(super().get_failures(request, credentials))
        if address_failures(request) >= settings.LOGIN_ADDRESS_FAILURE_LIMIT:
            return max(pair, int(get_failure_limit(request, credentials)))
        return pair

    def user_logged_in(self, sender: Any, request: HttpRequest, user: Any, **kwargs: Any) -> None:
        """As django-axes' own, but a login that has no session (an API token: no session key
        yet) is logged with an empty session hash instead of creating a session."""
        session = getattr(request, "session", None)
        if session is not None and session.session_key is not None:
            super().user_logged_in(sender, request, user, **kwargs)
            return
        credentials = get_credentials(user.get_username())
        self.clean_expired_user_attempts(request, credentials)
        if not getattr(settings, "AXES_DISABLE_ACCESS_LOG", False):
            AccessLog.objects.create(
                username=user.get_username(),
                ip_address=request.axes_ip_address,  # type: ignore[attr-defined]  # set by django-axes
                user_agent=request.axes_user_agent,  # type: ignore[attr-defined]
                http_accept=request.axes_http_accept,  # type: ignore[attr-defined]
                path_info=request.axes_path_info,  # type: ignore[attr-defined]
                attempt_time=request.axes_attempt_time,  # type: ignore[attr-defined]
                session_hash="",
            )
        if settings.AXES_RESET_ON_SUCCESS:
            self.reset_user_attempts(request, credentials)
