"""Django settings for Schedscope, read from the environment.

DATABASE_URL  default: a SQLite file beside the project (the embedded default)
REDIS_URL     set: Channels' Redis layer, Celery broker, scheduler loop in Celery workers;
              unset: in-memory channel layer and an in-process scheduler thread
SECRET_KEY    default: a random key generated once into SCHEDSCOPE_SECRET_FILE (default: schedscope.secret beside the
              project), never a fixed one; processes that share the file share the key
ALLOWED_HOSTS (comma separated), DEBUG (1/0)
HTTPS=1       behind TLS: secure cookies, HSTS, redirect to https (each also settable, see README)
SCHEDSCOPE_ENCRYPTION_KEYS  comma-separated Fernet keys for stored kubeconfigs (dashboard.crypto)
"""
from datetime import timedelta
from pathlib import Path
import os
import secrets

import dj_database_url
from redis.exceptions import ConnectionError as RedisConnectionError

BASE_DIR = Path(__file__).resolve().parent.parent


def _env_bool(name: str, default: bool) -> bool:
    val = os.environ.get(name)
    return default if val is None else val.strip().lower() in ("1", "true", "yes", "on")


def _secret_key() -> str:
    """SECRET_KEY from the environment, else a random one created once (mode 0600) in SCHEDSCOPE_SECRET_FILE."""
    if os.environ.get("SECRET_KEY"):
        return os.environ["SECRET_KEY"]
    path = Path(os.environ.get("SCHEDSCOPE_SECRET_FILE") or BASE_DIR / "schedscope.secret")
    if not path.exists():  # written aside and linked into place: concurrent first starts agree on one key
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
            f.write(secrets.token_urlsafe(50))
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
    return path.read_text().strip()


DEBUG = _env_bool("DEBUG", False)
SECRET_KEY = _secret_key()
ALLOWED_HOSTS = [h.strip() for h in os.environ.get("ALLOWED_HOSTS", "127.0.0.1,localhost,[::1]").split(",")
                 if h.strip()]
CSRF_TRUSTED_ORIGINS = [o.strip() for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "knox",
    "drf_spectacular",
    "channels",
    "axes",
    "dashboard.apps.DashboardConfig",
    "dashboard.profiles.apps.ProfilesConfig",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "dashboard.access.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "dashboard.signin.PasswordChangeRequiredMiddleware",
    "axes.middleware.AxesMiddleware",   # last: turns a locked-out sign-in into its answer
]

# Content-Security-Policy on every response (django-csp): scripts only from the site's own files (no inline
# script, no eval: pages pass data in data- attributes and json_script); style attributes stay allowed (usage
# bars' widths, the REST API's browsable pages); the websocket is same-origin.
CONTENT_SECURITY_POLICY = {"DIRECTIVES": {
    "default-src": ["'self'"], "script-src": ["'self'"], "style-src": ["'self'", "'unsafe-inline'"],
    "img-src": ["'self'", "data:"], "connect-src": ["'self'"], "object-src": ["'none'"], "base-uri": ["'self'"],
    "form-action": ["'self'"], "frame-ancestors": ["'none'"]}}

# Every page needs a signed-in user (dashboard.access: the API and the simulated clusters' Kubernetes API
# authenticate themselves). Roles: any user reads, the "editor" group edits, staff/superusers administer.
LOGIN_URL = "profiles:login"
LOGIN_REDIRECT_URL = "index"

# Sign-in throttling (django-axes): after AXES_FAILURE_LIMIT wrong passwords from one address, or for one account
# from anywhere, sign-in is refused (429, the right password too) for AXES_COOLOFF_TIME; a success resets the
# account's count. The address is REMOTE_ADDR (behind the proxy, uvicorn's --proxy-headers sets it from nginx's
# X-Forwarded-For).
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = int(os.environ.get("SCHEDSCOPE_LOGIN_FAILURE_LIMIT", "10"))
AXES_COOLOFF_TIME = timedelta(minutes=float(os.environ.get("SCHEDSCOPE_LOGIN_COOLOFF_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = ["ip_address", "username"]
AXES_RESET_ON_SUCCESS = True
AXES_HTTP_RESPONSE_CODE = 429
AXES_LOCKOUT_TEMPLATE = "profiles/locked.html"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 10}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Production behind TLS (HTTPS=1 turns all of these on; `manage.py check --deploy` is then clean).
HTTPS = _env_bool("HTTPS", False) and not DEBUG
SECURE_SSL_REDIRECT = _env_bool("SECURE_SSL_REDIRECT", HTTPS)
SESSION_COOKIE_SECURE = _env_bool("SESSION_COOKIE_SECURE", HTTPS)
CSRF_COOKIE_SECURE = _env_bool("CSRF_COOKIE_SECURE", HTTPS)
SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", 31536000 if HTTPS else 0))
SECURE_HSTS_INCLUDE_SUBDOMAINS = _env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", HTTPS)
SECURE_HSTS_PRELOAD = _env_bool("SECURE_HSTS_PRELOAD", HTTPS)
if _env_bool("SECURE_PROXY_SSL_HEADER", False):  # a TLS-terminating proxy sets X-Forwarded-Proto
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

ROOT_URLCONF = "dashboard.urls"
ASGI_APPLICATION = "dashboard.asgi.application"
WSGI_APPLICATION = "dashboard.wsgi.application"

TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates",
    "DIRS": [BASE_DIR / "templates"],
    "APP_DIRS": True,
    "OPTIONS": {"context_processors": [
        "django.template.context_processors.request",
        "django.contrib.auth.context_processors.auth",
        "django.contrib.messages.context_processors.messages",
        "dashboard.access.role_context",
    ]},
}]

SQLITE_DEFAULT = f"sqlite:///{BASE_DIR / 'schedscope.sqlite3'}"
DATABASES = {"default": dj_database_url.parse(os.environ.get("DATABASE_URL") or SQLITE_DEFAULT,
                                              conn_max_age=0)}
_SQLITE = DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3"
if _SQLITE:
    DATABASES["default"]["ENGINE"] = "dashboard.sqlite"  # the file and its journals private (0600)
    # WAL lets the pages read while the recorder writes; IMMEDIATE avoids upgrade deadlocks.
    DATABASES["default"]["OPTIONS"] = {"init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
                                       "transaction_mode": "IMMEDIATE", "timeout": 20}
    _db_file = Path(DATABASES["default"]["NAME"])  # the test database beside it: schedscope-test.sqlite3
    DATABASES["default"].setdefault("TEST", {})["NAME"] = str(_db_file.with_name(f"{_db_file.stem}-test.sqlite3"))
else:
    # Persistent PostgreSQL connections where SCHEDSCOPE_DB_CONN_MAX_AGE says so: the web server sets it
    # (dashboard.serve), whose requests run in long-lived threads (dashboard.pages_handler), so that a request does
    # not open a connection of its own (a new PostgreSQL backend each: about as much CPU as the request). A
    # connection left broken is closed at the end of its request, and checked before the next one is served.
    DATABASES["default"]["CONN_MAX_AGE"] = int(os.environ.get("SCHEDSCOPE_DB_CONN_MAX_AGE", "0"))
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = DATABASES["default"]["CONN_MAX_AGE"] > 0
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        DATABASES["default"]["ENGINE"] = "dashboard.postgresql"   # that check without a round trip, when it can
    # psycopg prepares what a cursor binding on the server runs (Django's cursors bind on the client and prepare
    # nothing): only dashboard.compiled's hot queries, prepared once per connection (Django's default, None,
    # turns psycopg's prepared statements off)
    DATABASES["default"].setdefault("OPTIONS", {})["prepare_threshold"] = 0
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = os.environ.get("REDIS_URL", "")
if REDIS_URL:
    # channels_redis blocks up to 5 s in BZPOPMIN; redis-py 8's default 5 s socket timeout cut that wait short
    # and crashed every websocket consumer every few seconds (redis-py#4091), so reads may last longer here.
    # A command on a pooled connection that Redis closed (restarted) is retried once on a new connection.
    # One bounded pool per process and event loop (dashboard.channel_layer): a burst of commands waits for a free
    # connection instead of failing with MaxConnectionsError. Each process is one member of the live groups
    # (dashboard.services.livehub), renewed while it has viewers, so a member left by a dead process expires.
    CHANNEL_LAYERS = {"default": {"BACKEND": "dashboard.channel_layer.RedisChannelLayer", "CONFIG": {
        "hosts": [{"address": REDIS_URL, "socket_timeout": 15, "retry_on_error": [RedisConnectionError],
                   "max_connections": int(os.environ.get("SCHEDSCOPE_REDIS_MAX_CONNECTIONS", "20")),
                   "timeout": 10}],
        "prefix": "schedscope", "group_expiry": int(os.environ.get("SCHEDSCOPE_LIVE_GROUP_EXPIRY", "120"))}}}
    # Sessions read from Redis (written through to the database): a websocket connect reads no session row.
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
              "sessions": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL,
                           "KEY_PREFIX": "schedscope", "OPTIONS": {"socket_timeout": 2, "socket_connect_timeout": 2}}}
    SESSION_ENGINE = "dashboard.sessions"
    SESSION_CACHE_ALIAS = "sessions"
    SCHEDULER_MODE = "celery"
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    SCHEDULER_MODE = "thread"
SCHEDULER_MODE = os.environ.get("SCHEDULER_MODE", SCHEDULER_MODE)

CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = False
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# kombu 5.7's ack emulation crashes the worker when the Redis broker goes away ("Unrecoverable error:
# AttributeError ... 'hostname'" while restoring unacked messages), so the worker could not reconnect.
# Without it the worker rides out a Redis outage; loops lost with a dead worker are picked up anyway
# (resume_all on worker start, standby tasks, the lock's expiry).
CELERY_BROKER_TRANSPORT_OPTIONS = {"ack_emulation": False}
# Questions (what-ifs, dry runs) go to the "questions" queue (dashboard.services.background), which a worker of its
# own serves (`-Q questions`); the scheduler loops' worker serves the default queue only (`-Q celery`).
CELERY_TASK_DEFAULT_QUEUE = "celery"

# The scheduler loop and the recorder.
SCHEDSCOPE = {
    "LOCK_TTL_SECONDS": float(os.environ.get("SCHEDSCOPE_LOCK_TTL", "15")),
    # records (cycles, bindings, events, ...) per batch: on PostgreSQL a batch is written by a forked child (below),
    # and fewer, bigger batches cost the scheduling process fewer forks; SQLite keeps its write lock shorter
    "RECORDER_BATCH_SIZE": int(os.environ.get("SCHEDSCOPE_RECORDER_BATCH", "500" if _SQLITE else "5000")),
    "RECORDER_MAX_BUFFER": int(os.environ.get("SCHEDSCOPE_RECORDER_BUFFER", "100000")),
    "RECORDER_FLUSH_SECONDS": float(os.environ.get("SCHEDSCOPE_RECORDER_FLUSH", "0.25")),
    # on PostgreSQL, a batch of at least this many cycles is written by a child process (0: always by the thread)
    "RECORDER_FORK_CYCLES": int(os.environ.get("SCHEDSCOPE_RECORDER_FORK_CYCLES", "32")),
    # ... and forks at most once in this many seconds: under load a batch grows meanwhile (Recorder._space_forks)
    "RECORDER_FORK_SPACING_SECONDS": float(os.environ.get("SCHEDSCOPE_RECORDER_FORK_SPACING", "1.0")),
    "RETENTION_DAYS": float(os.environ.get("SCHEDSCOPE_RETENTION_DAYS", "7")),
    "RETENTION_CYCLES": int(os.environ.get("SCHEDSCOPE_RETENTION_CYCLES", "1000000")),
    "BROADCAST_INTERVAL_SECONDS": float(os.environ.get("SCHEDSCOPE_BROADCAST_INTERVAL", "0.5")),
    "QUEUE_SNAPSHOT_SECONDS": float(os.environ.get("SCHEDSCOPE_QUEUE_SNAPSHOT", "5")),
    # Scheduler extenders: URL prefixes a profile may name (comma separated; unset: any URL, but only admins may save
    # a profile naming an extender), and the cap on every extender's httpTimeout, in seconds.
    "EXTENDER_ALLOW": tuple(p.strip() for p in os.environ["SCHEDSCOPE_EXTENDER_ALLOW"].split(",") if p.strip())
    if os.environ.get("SCHEDSCOPE_EXTENDER_ALLOW", "").strip() else None,
    "EXTENDER_TIMEOUT_MAX_SECONDS": float(os.environ.get("SCHEDSCOPE_EXTENDER_TIMEOUT_MAX", "30")),
    # the largest extender answer read (a larger one fails the call, read no further)
    "EXTENDER_MAX_RESPONSE_BYTES": int(os.environ.get("SCHEDSCOPE_EXTENDER_MAX_RESPONSE_MB", "16")) * 1024 * 1024,
    # Hostile input: request bodies (uploads included) over this are refused with 413 before they are read;
    # a simulated cluster holds at most this many nodes and pods (scenarios, API adds, the workload).
    "MAX_BODY_BYTES": int(os.environ.get("SCHEDSCOPE_MAX_BODY_MB", "64")) * 1024 * 1024,
    "MAX_NODES": int(os.environ.get("SCHEDSCOPE_MAX_NODES", "10000")),
    "MAX_PODS": int(os.environ.get("SCHEDSCOPE_MAX_PODS", "200000")),
    "MAX_EVENTS": int(os.environ.get("SCHEDSCOPE_MAX_EVENTS", "100000")),   # API-created, within kube's 1 h TTL
    "MAX_STORE_BYTES": int(os.environ.get("SCHEDSCOPE_MAX_STORE_MB", "2048")) * 1024 * 1024,
    # What-if questions: at most this many copies placed by a capacity question, nodes added (and searched).
    "WHATIF_MAX_COPIES": int(os.environ.get("SCHEDSCOPE_WHATIF_MAX_COPIES", "10000")),
    "WHATIF_MAX_NODES_ADDED": int(os.environ.get("SCHEDSCOPE_WHATIF_MAX_NODES_ADDED", "1000")),
    # Questions (what-ifs and dry runs) waiting or running at once: per asker, per cluster (older than
    # QUESTION_STALE_SECONDS they no longer count: a run its worker died with); in embedded mode, the threads
    # that answer them and how much lower their CPU priority is (os.nice) than the scheduler loops'.
    "QUESTIONS_PER_USER": int(os.environ.get("SCHEDSCOPE_QUESTIONS_PER_USER", "3")),
    "QUESTIONS_PER_CLUSTER": int(os.environ.get("SCHEDSCOPE_QUESTIONS_PER_CLUSTER", "6")),
    "QUESTION_STALE_SECONDS": float(os.environ.get("SCHEDSCOPE_QUESTION_STALE_SECONDS", "3600")),
    "QUESTION_THREADS": int(os.environ.get("SCHEDSCOPE_QUESTION_THREADS", "2")),
    "QUESTION_NICE": int(os.environ.get("SCHEDSCOPE_QUESTION_NICE", "10")),
    # /metrics without signing in (for a scraper that cannot send "Authorization: Token ..."): the unrestricted
    # clusters' metrics (a signed-in user, or an API token's owner, sees the clusters they can see).
    "METRICS_PUBLIC": _env_bool("SCHEDSCOPE_METRICS_PUBLIC", False),
    # Start the in-process scheduler thread for running clusters when the ASGI app starts (thread mode).
    "AUTOSTART": _env_bool("SCHEDSCOPE_AUTOSTART", True),
}

DATA_UPLOAD_MAX_MEMORY_SIZE = SCHEDSCOPE["MAX_BODY_BYTES"]

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "dashboard.api.schema.ApiSchema",
    "DEFAULT_PAGINATION_CLASS": "dashboard.api.pagination.Pagination",
    # JSON bodies (a form cannot say null); the scenario upload takes multipart too (dashboard.api.views)
    "DEFAULT_PARSER_CLASSES": ["dashboard.api.parsers.JSONParser"],
    "PAGE_SIZE": 50,
    # Token first: a request without credentials gets 401 with its "WWW-Authenticate: Token" challenge (the
    # session authenticator has none, so with it first DRF answers 403).
    "DEFAULT_AUTHENTICATION_CLASSES": ["dashboard.api.authentication.TokenAuthentication",
                                       "rest_framework.authentication.SessionAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["dashboard.api.permissions.RolePermission"],
}
# API tokens (``Authorization: Token ...``): knox keeps only their SHA-512 digests; they last until deleted.
REST_KNOX = {"TOKEN_TTL": None, "AUTO_REFRESH": False}
SPECTACULAR_SETTINGS = {
    "TITLE": "Schedscope API",
    "DESCRIPTION": "Clusters, nodes, pods with queue state, recorded scheduling cycles and events.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "COMPONENT_SPLIT_REQUEST": True,  # request bodies without read-only fields, non-blank strings with minLength
}

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"redact_cluster_tokens": {"()": "dashboard.k8sapi.redact.RedactClusterTokens"}},
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"dashboard": {"handlers": ["console"], "level": os.environ.get("SCHEDSCOPE_LOG_LEVEL", "INFO")},
                # every 500 with its traceback (4xx as warnings); request paths of the simulated clusters' API may
                # carry a token (plain HTTP kubeconfigs)
                "django.request": {"handlers": ["console"], "level": "WARNING",
                                   "filters": ["redact_cluster_tokens"]}},
}
