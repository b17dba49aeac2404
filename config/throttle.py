"""Throttles that keep one person (or one address) from slowing everyone else down.

- **Taps** (every post that changes a scene: challenges, rounds, chases, the scene's own):
  :class:`ActionThrottleMiddleware`, one token bucket per user, generous for real play (a
  player taps a few times a second at most; a storyteller more). An empty bucket answers 429
  with a sentence the phone shows beside the control (``static/js/refusals.js``).
- **Guesses** (join codes; login cards may use it too): :func:`guarded`, a view decorator
  whose refused answers (4xx) take a token per user and per address.
- **Logins**: django-axes (settings: ``AXES_*``), locked by user name and address for a few
  minutes; :func:`login_locked_out` says so on the login page.

A bucket lives in Django's cache (Redis when ``REDIS_URL`` is set, so every server process
shares it; this process's memory otherwise) as one number, the time its next token is due (the
generic cell rate algorithm). On Redis a tap's look and take are one script (:data:`GCRA`): one
round trip a tap, and two taps at the same instant in two processes take a token each. Elsewhere
reading and writing are two steps: two taps of one user that reach two processes at the same
instant may both pass, never more than one per process.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from axes.backends import AxesStandaloneBackend
from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from config.resp import Script, script_runner

log = logging.getLogger(__name__)

TOO_MANY_TAPS = "Too many taps at once: wait a second, then tap again."
TOO_MANY_GUESSES = "Too many wrong tries: wait {wait}, then try again."
LOCKED_OUT = (
    "Too many failed logins with this user name from this device: try again in {minutes} "
    "minutes, or ask the storyteller."
)


# KEYS[1]: the bucket; ARGV: now, seconds a token, the burst, take ("1") or only look, the
# key's lifetime (seconds). Returns the seconds to wait (a string: Redis answers a Lua number
# as an integer), "0" when a token was there. The bucket holds the time as a plain number.
GCRA = """
local now = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local due = tonumber(redis.call('GET', KEYS[1]) or now) or now
if due < now then due = now end
local wait = due + interval - tonumber(ARGV[3]) * interval - now
if wait > 0 then return tostring(wait) end
if ARGV[4] == '1' then
    redis.call('SET', KEYS[1], string.format('%.6f', due + interval), 'EX', ARGV[5])
end
return '0'
"""


GCRA_SCRIPT = Script(GCRA)


_held: tuple[Any, Any] | None = None  # (settings.CACHES, the default cache made from it)


def _backend() -> Any:
    """The default cache, made once for the throttle (and again when ``CACHES`` changes):
    ``caches["default"]`` makes a backend for each request (an ``asgiref`` ``Local`` per
    context), with its client looked up anew, for nothing (``config.cache`` shares the client)."""
    global _held
    conf = settings.CACHES
    held = _held
    if held is None or held[0] is not conf:
        held = _held = (conf, caches.create_connection("default"))
    return held[1]


@dataclass(frozen=True)
class Bucket:
    """``burst`` tokens at most, ``rate`` new tokens a second."""

    name: str
    rate: float
    burst: int

    @classmethod
    def named(cls, name: str) -> Bucket:
        rate, burst = settings.THROTTLES[name]
        return cls(name, float(rate), int(burst))

    def _key(self, who: str) -> str:
        return f"throttle:{self.name}:{who}"

    def wait(self, who: str, *, take: bool = True, now: float | None = None) -> float:
        """Seconds until ``who`` may act; 0 when a token is there (and ``take``: taken)."""
        now = time.time() if now is None else now
        interval = 1 / self.rate
        timeout = math.ceil(self.burst * interval) + 1
        try:
            backend = _backend()
            if isinstance(backend, RedisCache):
                key = backend.make_key(self._key(who))  # ASCII, no spaces: nothing to warn of
                client = backend._cache.get_client(key, write=True)
                args = [repr(now), repr(interval), self.burst, "1" if take else "0", timeout]
                with script_runner(client).one() as connection:  # config.resp: no client
                    return float(GCRA_SCRIPT.call(connection, [key], args))
            due = max(backend.get(self._key(who)) or now, now)  # when the next token is due
            wait = due + interval - self.burst * interval - now
            if wait > 0:
                return wait
            if take:
                backend.set(self._key(who), due + interval, timeout=timeout)
        except Exception:  # the cache (Redis) away: a throttle never turns a tap into a 500
            log.warning("throttle %s: no cache; %s let through", self.name, who)
        return 0.0

    def reset(self, who: str) -> None:
        _backend().delete(self._key(who))


def by_user(request: HttpRequest) -> str | None:
    user = getattr(request, "user", None)
    return f"u{user.pk}" if user is not None and user.is_authenticated else None


def by_address(request: HttpRequest) -> str | None:
    # uvicorn puts the client's address here (X-Forwarded-For only from a proxy it trusts).
    return "a" + request.META.get("REMOTE_ADDR", "")


def too_many(request: HttpRequest, sentence: str, wait: float) -> HttpResponse:
    """429 with the sentence: a fragment for htmx (shown beside the control), else a page."""
    template = "throttled.html" if not request.headers.get("HX-Request") else "_throttled.html"
    response = render(request, template, {"sentence": sentence}, status=429)
    response["Retry-After"] = str(max(1, math.ceil(wait)))
    return response


def _seconds(wait: float) -> str:
    return f"{math.ceil(wait)} s" if wait < 90 else f"{math.ceil(wait / 60)} minutes"


def guarded(
    *limits: tuple[str, Callable[[HttpRequest], str | None]],
) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """A view against guessing (a join code, a login card): every answer it refuses (400,
    403, 404) takes a token from each limit's bucket (``(bucket name, key function)``, e.g.
    ``("join_user", by_user)``); while one is empty the view answers 429 and does not run.
    Answers it accepts cost nothing, so a player who types the right code is never slowed."""

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def guarded_view(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not settings.THROTTLE:
                return view(request, *args, **kwargs)
            keyed = [(Bucket.named(name), key(request)) for name, key in limits]
            keyed = [(bucket, who) for bucket, who in keyed if who]
            wait = max((b.wait(who, take=False) for b, who in keyed), default=0.0)
            if wait:
                return too_many(request, TOO_MANY_GUESSES.format(wait=_seconds(wait)), wait)
            response = view(request, *args, **kwargs)
            if response.status_code in (400, 403, 404):
                for bucket, who in keyed:
                    bucket.wait(who)
            return response

        return guarded_view

    return decorate


class ActionThrottleMiddleware:
    """Every post under ``/scenes/`` and ``/chases/`` (each one changes a scene) takes a token
    from its user's bucket: ``storyteller`` for staff, ``player`` for everyone else. Other
    requests pass straight through (no thread hop under ASGI)."""

    async_capable = True
    sync_capable = True
    PREFIXES = ("/scenes/", "/chases/")

    def __init__(self, get_response: Callable[..., Any]) -> None:
        self.get_response = get_response
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def _applies(self, request: HttpRequest) -> bool:
        return (
            settings.THROTTLE
            and request.method == "POST"
            and request.path.startswith(self.PREFIXES)
        )

    def _refusal(self, request: HttpRequest) -> HttpResponse | None:
        user = request.user
        if not user.is_authenticated:
            return None  # the view sends them to log in
        bucket = Bucket.named("storyteller" if user.is_staff else "player")
        wait = bucket.wait(f"u{user.pk}")
        return too_many(request, TOO_MANY_TAPS, wait) if wait else None

    def __call__(self, request: HttpRequest) -> Any:
        if iscoroutinefunction(self):
            return self.__acall__(request)
        if self._applies(request):
            refusal = self._refusal(request)
            if refusal is not None:
                return refusal
        return self.get_response(request)

    async def __acall__(self, request: HttpRequest) -> HttpResponse:
        if self._applies(request):
            refusal = await sync_to_async(self._refusal)(request)
            if refusal is not None:
                return refusal
        return await self.get_response(request)


class LoginThrottleBackend(AxesStandaloneBackend):
    """django-axes for logins over HTTP; code that authenticates without a request (a
    management command, a test) has no address to lock and goes to the next backend."""

    def authenticate(self, request: HttpRequest | None, *args: Any, **kwargs: Any) -> None:
        if request is None:
            return None
        return super().authenticate(request, *args, **kwargs)


def login_locked_out(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """django-axes' lockout answer: the login page again, with one plain sentence (429)."""
    from django.contrib.auth.forms import AuthenticationForm

    minutes = max(1, round(settings.AXES_COOLOFF_TIME.total_seconds() / 60))
    form = AuthenticationForm(request, initial={"username": request.POST.get("username", "")})
    context = {"form": form, "locked_out": LOCKED_OUT.format(minutes=minutes)}
    context["next"] = request.POST.get("next", request.GET.get("next", ""))
    return render(request, "registration/login.html", context, status=429)
