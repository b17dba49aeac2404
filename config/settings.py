"""Settings for the Storyteller app.

Everything comes from the environment; with nothing set you get a laptop default: SQLite
(WAL mode), the in-memory channel layer, DEBUG off, plain HTTP on this machine's names and LAN
addresses, a secret key made on first run in ``var/secret_key``. ``DEBUG=1`` only when asked
for. Production sets ``SECRET_KEY``, ``ALLOWED_HOSTS``, ``CSRF_TRUSTED_ORIGINS``,
``BEHIND_TLS_PROXY=1``, ``DATABASE_URL`` (PostgreSQL) and ``REDIS_URL`` (channels-redis), and
``manage.py check --deploy --fail-level WARNING`` passes.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import dj_database_url

from config.env import envbool, envint, envlist, envstr
from config.network import local_hostnames
from config.secret import read_or_make_secret_key

BASE_DIR = Path(__file__).resolve().parent.parent

# Never on unless asked for: its error pages show code and settings to any phone.
DEBUG = envbool("DEBUG", False)
_DEV_KEY = "dev-only-insecure-key-set-SECRET_KEY-in-production-0123456789abcdefghijklmnop"
# No SECRET_KEY with DEBUG off: a key made on first run, kept in a file only its owner reads.
SECRET_KEY = envstr("SECRET_KEY", "") or (
    _DEV_KEY
    if DEBUG
    else read_or_make_secret_key(
        Path(envstr("SECRET_KEY_FILE", str(BASE_DIR / "var" / "secret_key")))
    )
)

# On a laptop phones reach the app by its LAN address; never "*", because the websocket
# origin check (config/origin.py) trusts exactly these hosts.
ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", local_hostnames())
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "channels",
    "characters",
    "combat",
    "chases",
]

# Under ASGI (config/handler.py) the head of this list, up to the session, runs on the event
# loop (the security middleware and the CSP as config/inline.py's); the rest runs with the
# view in one worker thread.
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "config.static.StaticFilesMiddleware",  # WhiteNoise, asynchronous too (no thread hop)
    "combat.turns.SceneTurnMiddleware",  # a scene's taps take turns before they take a connection
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "config.urls"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# Database: SQLite in WAL mode by default, PostgreSQL (psycopg 3) when DATABASE_URL is set.
DATABASE_URL = envstr("DATABASE_URL", "")
if DATABASE_URL:
    DATABASES = {
        "default": dj_database_url.parse(
            DATABASE_URL, conn_max_age=envint("DB_CONN_MAX_AGE", 0), conn_health_checks=True
        )
    }
    # Under ASGI a request's thread is not kept, so a connection per request would be opened
    # and closed (several ms on every tap, before the phones hear of it): PostgreSQL gets
    # psycopg's pool instead of persistent connections (Django's advice for ASGI).
    if DATABASES["default"]["ENGINE"].endswith("postgresql") and envbool("DB_POOL", True):
        # Django's backend, its pool's check of a connection it hands out without a round
        # trip while the socket shows nothing happened (config/postgresql/base.py).
        DATABASES["default"]["ENGINE"] = "config.postgresql"
        DATABASES["default"]["CONN_MAX_AGE"] = 0
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
            "min_size": 2,
            "max_size": envint("DB_POOL_MAX_SIZE", 20),
            "timeout": 10,
        }
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": envstr("SQLITE_PATH", str(BASE_DIR / "db.sqlite3")),
            "OPTIONS": {
                # WAL lets readers carry on while a write commits; IMMEDIATE takes the write
                # lock at BEGIN so two taps never deadlock upgrading a read lock.
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
            },
            # A file, not memory, so a test server thread sees the tests' data (browser tests).
            "TEST": {"NAME": envstr("SQLITE_TEST_PATH", str(BASE_DIR / "var" / "test.sqlite3"))},
        }
    }
# Statements whose text is built once (config/prepared.py) are prepared on PostgreSQL, parsed
# and planned once per connection: off behind a transaction-pooling proxy (PgBouncer's). psycopg
# prepares only what it is told to (its threshold never reached): Django's other statements,
# their parameters bound on the client, are new text every time.
DATABASE_PREPARE = envbool("DB_PREPARE", True)
if DATABASES["default"]["ENGINE"].endswith("postgresql") and DATABASE_PREPARE:
    DATABASES["default"].setdefault("OPTIONS", {})["prepare_threshold"] = 2**31 - 1
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Channel layer: in-memory for one process, channels-redis when REDIS_URL is set.
REDIS_URL = envstr("REDIS_URL", "")
# Each server process reads the layer through one hub channel (combat/hub.py), so a channel
# holds a process's whole traffic: the capacity is generous. redis-py's default socket timeout
# (5 s) cuts the hub's long blocking receives (channels_redis issue 422): 15 s here.
CHANNEL_CAPACITY = 2000
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "config.layers.RedisChannelLayer",  # group_send in 2 round trips
            "CONFIG": {
                "hosts": [
                    {"address": REDIS_URL, "socket_timeout": 15, "socket_connect_timeout": 5}
                ],
                "prefix": envstr("CHANNELS_PREFIX", "storyteller"),
                "capacity": CHANNEL_CAPACITY,
            },
        }
    }
else:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels.layers.InMemoryChannelLayer",
            "CONFIG": {"capacity": CHANNEL_CAPACITY},
        }
    }

# The live layer (combat/consumers.py, combat/turns.py): seconds a socket's write may stall
# (a phone that never reads) before the socket is given up on; seconds a scene's tap may wait
# for its turn before it answers 503 (the phone sends it again).
LIVE_SEND_TIMEOUT = envint("LIVE_SEND_TIMEOUT", 20)
LIVE_TURN_WAIT = envint("LIVE_TURN_WAIT", 10)
# A busy scene's board is rendered at most once this often (seconds) per process; the changes
# of the meantime go together (combat.board_turns). 0: each change's board on its own.
LIVE_BOARD_PACE = envint("LIVE_BOARD_PACE_MS", 100) / 1000
# How long a server thread running Python keeps the GIL once another thread asks for it
# (CPython's default: 5 ms). A tap's step makes a few database round trips under its scene's
# row lock, each giving the GIL up and waiting to get it back from a thread rendering pushes:
# at 5 ms a wait, a busy shared scene's lock was held for tens of milliseconds a tap
# (``manage.py serve`` sets it; tests and commands keep CPython's default).
LIVE_SWITCH_INTERVAL = envint("LIVE_SWITCH_INTERVAL_US", 1000) / 1_000_000

# Sheets each process keeps read (characters/sheet_cache.py) and rendered for phones
# (characters/sheet_html.py), keyed on their versions.
SHEET_CACHE_SIZE = envint("SHEET_CACHE_SIZE", 500)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = envstr("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(envstr("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
# htmx and its websocket extension are django-htmx's (django_htmx/htmx-2.min.js, ext/);
# nosleep.js comes from npm (package-lock.json), never copied here.
NODE_MODULES = BASE_DIR / "node_modules"
STATICFILES_DIRS = [
    BASE_DIR / "static",
    ("vendor/nosleep", NODE_MODULES / "nosleep.js" / "dist"),
]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # With DEBUG off: the manifest's hashed names, or plain ones after a DEBUG collectstatic.
    "staticfiles": {
        "BACKEND": (
            "config.storage.StaticStorage"
            if not DEBUG
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}
WHITENOISE_USE_FINDERS = DEBUG

# Uploads (Grapevine files) are untrusted: keep them small.
DATA_UPLOAD_MAX_MEMORY_SIZE = envint("DATA_UPLOAD_MAX_MEMORY_SIZE", 5 * 1024 * 1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = DATA_UPLOAD_MAX_MEMORY_SIZE
GRAPEVINE_MAX_BYTES = envint("GRAPEVINE_MAX_BYTES", 5 * 1024 * 1024)

# HTTPS only (redirect, secure cookies, HSTS) behind a TLS-terminating proxy, as deployed. The
# venue's wifi has no TLS: there secure-only cookies would keep every phone from logging in.
BEHIND_TLS_PROXY = envbool("BEHIND_TLS_PROXY", False)
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", BEHIND_TLS_PROXY)
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # a load balancer's probe may come in plain HTTP
SESSION_COOKIE_SECURE = envbool("SESSION_COOKIE_SECURE", BEHIND_TLS_PROXY)
CSRF_COOKIE_SECURE = envbool("CSRF_COOKIE_SECURE", BEHIND_TLS_PROXY)
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 31536000 if BEHIND_TLS_PROXY else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS", BEHIND_TLS_PROXY)
SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", BEHIND_TLS_PROXY)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if BEHIND_TLS_PROXY else None
SESSION_COOKIE_AGE = envint("SESSION_COOKIE_AGE", 60 * 60 * 24 * 14)
SESSION_ENGINE = "config.sessions"  # the database store, its read written once (config/sessions.py)
X_FRAME_OPTIONS = "DENY"
# The DEBUG error page hides DATABASE_URL and REDIS_URL and masks any password in a URL.
DEFAULT_EXCEPTION_REPORTER_FILTER = "config.debug.CredentialsHidingFilter"

# Every line with its time and level; uvicorn's access log (``serve``) goes through it too.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": envstr("LOG_LEVEL", "INFO")},
}

# Safe by default (README, Settings): throttles, the Content-Security-Policy, headers.
# Logins: django-axes locks a user name from one address after AXES_FAILURE_LIMIT failures,
# for AXES_COOLOFF_MINUTES. Taps and join codes: token buckets in the cache (config/throttle.py)
# as (tokens a second, burst); the cache is Redis when REDIS_URL is set, so processes share it.
INSTALLED_APPS += ["axes"]
MIDDLEWARE = [
    *MIDDLEWARE[:1],
    "csp.middleware.CSPMiddleware",
    "config.security.SecurityHeadersMiddleware",
    *MIDDLEWARE[1:],
    "config.throttle.ActionThrottleMiddleware",
    "axes.middleware.AxesMiddleware",
]
AUTHENTICATION_BACKENDS = [
    "config.throttle.LoginThrottleBackend",
    "config.auth.UserBackend",  # ModelBackend, its user read with the session (config/auth.py)
]
AXES_FAILURE_LIMIT = envint("AXES_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=envint("AXES_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "config.throttle.login_locked_out"
AXES_HTTP_RESPONSE_CODE = 429
AXES_VERBOSE = False
LOGGING["loggers"] = {**LOGGING.get("loggers", {}), "axes": {"level": "WARNING"}}
THROTTLE = envbool("THROTTLE", True)
THROTTLES = {
    "player": (4, 20),  # a player taps a few times a second at most
    "storyteller": (10, 60),
    "join_user": (1 / 6, 10),  # wrong join codes
    "join_address": (1, 30),  # several players behind one address
    "card_address": (1, 30),  # login cards, when a view is guarded with it
    "csp_reports": (2, 20),
}
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "config.cache.RedisCache",  # one connection pool a process
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": envstr("CACHE_PREFIX", envstr("CHANNELS_PREFIX", "storyteller")),
            # Redis away must not hold a tap: the throttles let it through (config/throttle.py).
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
    }
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'"],
        "media-src": ["'self'", "data:", "blob:"],  # the wake-lock video fallback
        "connect-src": ["'self'"],  # CSP 3: 'self' is also ws:// and wss:// of this host
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
        "report-uri": "/csp-report/",
    }
}
