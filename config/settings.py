"""Settings for the Storyteller app.

Everything comes from the environment; with nothing set you get a laptop default: SQLite
(WAL mode), the in-memory channel layer, DEBUG on. Production sets ``SECRET_KEY``,
``DEBUG=0``, ``ALLOWED_HOSTS``, ``CSRF_TRUSTED_ORIGINS``, ``DATABASE_URL`` (PostgreSQL) and
``REDIS_URL`` (channels-redis), and ``manage.py check --deploy --fail-level WARNING`` passes.
"""

from __future__ import annotations

from pathlib import Path

import dj_database_url

from config.env import envbool, envint, envlist, envstr
from config.network import local_hostnames

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = envbool("DEBUG", True)
_DEV_KEY = "dev-only-insecure-key-set-SECRET_KEY-in-production-0123456789abcdefghijklmnop"
SECRET_KEY = envstr("SECRET_KEY", _DEV_KEY if DEBUG else "")
if not SECRET_KEY:
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")

# On a laptop phones reach the app by its LAN address; never "*", because the websocket
# origin check (AllowedHostsOriginValidator) trusts exactly these hosts.
ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", local_hostnames() if DEBUG else [])
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

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
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
            "BACKEND": "channels_redis.core.RedisChannelLayer",
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
# htmx and its websocket extension come from npm (package-lock.json), never copied here.
NODE_MODULES = BASE_DIR / "node_modules"
STATICFILES_DIRS = [
    BASE_DIR / "static",
    ("vendor/htmx", NODE_MODULES / "htmx.org" / "dist"),
    ("vendor/htmx-ext-ws", NODE_MODULES / "htmx-ext-ws" / "dist"),
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

# Production hardening, on whenever DEBUG is off.
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", not DEBUG)
SESSION_COOKIE_SECURE = envbool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = envbool("CSRF_COOKIE_SECURE", not DEBUG)
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", not DEBUG)
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_X_FORWARDED_PROTO", "https") if envbool("BEHIND_TLS_PROXY", False) else None
)
SESSION_COOKIE_AGE = envint("SESSION_COOKIE_AGE", 60 * 60 * 24 * 14)
X_FRAME_OPTIONS = "DENY"
# The DEBUG error page hides DATABASE_URL and REDIS_URL and masks any password in a URL.
DEFAULT_EXCEPTION_REPORTER_FILTER = "config.debug.CredentialsHidingFilter"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": envstr("LOG_LEVEL", "INFO")},
}
