"""What the DEBUG error page may show: never a database or Redis password.

Django's filter hides settings whose names look secret (KEY, PASS, TOKEN…); ``DATABASE_URL``
and ``REDIS_URL`` do not, and a URL carries its password inside (``postgres://u:pw@h/db``),
also in ``CHANNEL_LAYERS`` hosts and, under runserver, in ``request.META`` (which copies the
environment). This filter hides those settings whole and masks the password of any URL it
shows anywhere.
"""

from __future__ import annotations

import re
from typing import Any

from django.views.debug import SafeExceptionReporterFilter

# scheme://user:password@host  or  scheme://:password@host
_CREDENTIALS = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<user>[^:/@\s]*):[^@/\s]*@", re.I)


def mask_url_passwords(text: str) -> str:
    """``redis://:pw@host`` becomes ``redis://:********************@host``."""
    return _CREDENTIALS.sub(
        lambda m: f"{m['scheme']}{m['user']}:{SafeExceptionReporterFilter.cleansed_substitute}@",
        text,
    )


class CredentialsHidingFilter(SafeExceptionReporterFilter):
    hidden_settings = re.compile(
        "API|AUTH|TOKEN|KEY|SECRET|PASS|SIGNATURE|HTTP_COOKIE|DATABASE_URL|REDIS_URL|DSN",
        flags=re.I,
    )

    def cleanse_setting(self, key: Any, value: Any) -> Any:
        cleansed = super().cleanse_setting(key, value)
        if isinstance(cleansed, str):  # lazy strings too (django-axes' settings)
            return mask_url_passwords(str(cleansed))
        return cleansed

    def get_safe_request_meta(self, request: Any) -> dict[str, Any]:
        meta = super().get_safe_request_meta(request)
        return {k: mask_url_passwords(v) if isinstance(v, str) else v for k, v in meta.items()}

    def get_traceback_frame_variables(self, request: Any, tb_frame: Any) -> Any:
        return [
            (name, mask_url_passwords(value) if isinstance(value, str) else value)
            for name, value in super().get_traceback_frame_variables(request, tb_frame)
        ]
