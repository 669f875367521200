"""Settings: one frozen dataclass, loaded from TOML with ``FAIRGRID_*`` environment overrides.

Every scalar setting is declared once in :data:`SETTINGS` (TOML key, type, default, help);
``docs/configuration.md`` documents each, and a test fails when one is missing there.
Portals and tokens are tables and lists, so they come from TOML only:

.. code-block:: toml

    [portals.demo]
    secrets = ["whsec_..."]          # Standard Webhooks secrets; several for rotation
    [auth]
    organiser_tokens = ["..."]
    admin_tokens = ["..."]

With no config file at all, fairgrid runs on an embedded default: ``./fairgrid.duckdb``
and a portal ``demo`` whose generated secret and tokens live in ``fairgrid.secrets.toml``
next to the database (mode 0600), reused by later starts.
"""

from __future__ import annotations

import base64
import ipaddress
import math
import os
import re
import secrets as _secrets
import stat
import tomllib
from dataclasses import dataclass, field, make_dataclass
from pathlib import Path
from typing import Any, Mapping

CONFIG_ENV = "FAIRGRID_CONFIG"
SECRETS_FILE = "fairgrid.secrets.toml"


class SettingsError(ValueError):
    """A configuration problem; the message names the key and the rule."""


@dataclass(frozen=True)
class Setting:
    key: str  # "section.name" in TOML
    type: type
    default: Any
    help: str

    @property
    def attr(self) -> str:
        return self.key.replace(".", "_")

    @property
    def env(self) -> str:
        return "FAIRGRID_" + self.attr.upper()


SETTINGS: tuple[Setting, ...] = (
    Setting("server.host", str, "127.0.0.1", "Address to listen on."),
    Setting("server.port", int, 8080, "TCP port to listen on (0 to 65535; 0: one the "
            "system picks)."),
    Setting("server.max_body_bytes", int, 1 << 20,
            "Largest accepted request body; larger webhooks get 413."),
    Setting("server.shutdown_timeout_s", float, 30.0,
            "On SIGTERM, how long to wait for queued writes to commit."),
    Setting("server.uvloop", bool, True,
            "Run on uvloop (libuv) where it is installed, else on asyncio's own loop: "
            "~9 % more webhooks/s (docs/benchmarks.md)."),
    Setting("storage.path", str, "fairgrid.duckdb", "The DuckDB database file."),
    Setting("storage.write_queue_size", int, 10_000,
            "Submissions waiting for the writer; past this, webhooks get 503 + Retry-After."),
    Setting("storage.group_commit_ms", float, 5.0,
            "How long the writer gathers queued submissions into one transaction."),
    Setting("storage.max_batch", int, 512, "Most submissions committed in one transaction."),
    Setting("storage.checkpoint_mb", int, 256,
            "WAL size in MB that triggers a DuckDB checkpoint (each one stalls writes briefly)."),
    Setting("storage.memory_limit_mb", int, 2048,
            "DuckDB's memory cap; larger queries (the nightly job) spill to disk."),
    Setting("storage.threads", int, 1,
            "DuckDB's worker threads while the daemon serves. 1 runs each statement on the "
            "thread that issues it: the writer's small group commits then cost ~30 % less "
            "CPU than with a worker pool (docs/benchmarks.md). The nightly job runs with one "
            "per core; 0 means one per core always."),
    Setting("storage.dedupe_days", int, 3,
            "How long webhook-ids are remembered for deduplication (senders retry for days)."),
    Setting("storage.moves_retention_days", int, 0,
            "Raw move logs older than this many days are dropped by the nightly job (scores, "
            "flags and reviews stay); never fewer than nightly.rescore_days. 0 keeps them."),
    Setting("storage.backup_dir", str, "backups",
            "Where POST /v1/backups (fairgrid backup) writes backups on the daemon's "
            "machine; relative to the database's folder."),
    Setting("webhooks.tolerance_s", int, 300,
            "Accepted clock difference of webhook-timestamp, in seconds (either way)."),
    Setting("webhooks.time_skew_s", int, 300,
            "How far past the receive time a solve's start or last move may lie, in "
            "seconds (a portal's clock running ahead); later is 422."),
    Setting("analysis.workers", int, 0,
            "Processes for analysis, scoring and the nightly fit; 0 means one per core."),
    Setting("analysis.queue_size", int, 1000,
            "Puzzles waiting for analysis, per lane (up to 9x9; 16x16 and up); past this, "
            "POST /v1/puzzles gets 503. A webhook's solve is stored all the same: its new "
            "puzzle is queued at once while the lane is less than half full, and otherwise "
            "by the sweep (every 30 s), which takes the portals whose webhooks registered "
            "puzzles in turn."),
    Setting("analysis.order_runs", int, 100, "SA runs per fill-order prediction (thesis: 100)."),
    Setting("analysis.order_budget_s", float, 60.0,
            "Time budget of one fill-order prediction on the reference machine "
            "(converted to a step cap; see docs/benchmarks.md)."),
    Setting("analysis.seed", int, 0, "Seed of the puzzle analysis (same seed, same prediction)."),
    Setting("compute.scheduler", str, "",
            "A Dask scheduler (tcp://host:8786) to run puzzle analysis on; empty: the "
            "local process pool."),
    Setting("compute.cores", int, 0,
            "Cores the analysis budget pays for: the step cap of a prediction is "
            "analysis.order_budget_s on this many cores (0: the reference machine's 2). "
            "Raise it with a larger cluster for better predictions of hard puzzles in the "
            "same wall time."),
    Setting("compute.retry_s", float, 5.0,
            "How long a puzzle waits before analysis is tried again when the cluster "
            "cannot be reached."),
    Setting("scoring.fpr", float, 0.001,
            "Target false-positive rate of a submission flag among honest solves "
            "(the combined p-value threshold)."),
    Setting("scoring.player_z", float, 4.5,
            "The mark shown beside a player's Stouffer's Z (correlation-adjusted, over "
            "their scored solves' combined p) from which it is worth a look; the "
            "player's state is the season verdict (scoring.player_alpha)."),
    Setting("scoring.player_flags", int, 3,
            "The mark shown beside a player's flags standing from which they are worth "
            "a look; the player's state is the season verdict (scoring.player_alpha)."),
    Setting("scoring.player_alpha", float, 0.001,
            "False-positive target of a player's season verdict among honest players: "
            "the player is flagged when the strongest kind of evidence, corrected by its "
            "share of it over the kinds judged (the hints' likelihood ratios 0.4, the "
            "stall pace's 0.2, the tempo 0.2, the count kinds the rest), is below it "
            "(see detection.md)."),
    Setting("nightly.cron", str, "0 3 * * *",
            "When the nightly rating refresh runs (crontab syntax, UTC); empty disables it."),
    Setting("nightly.min_solves", int, 20,
            "Solves a puzzle needs before it joins the recalibration and gets a consensus "
            "order."),
    Setting("nightly.rescore_days", int, 7,
            "Submissions committed within this many days are re-scored after a run."),
    Setting("nightly.lambda_puzzle", float, 5.0,
            "Prior weight of a Sudoku puzzle's metric-based difficulty, in solves "
            "(shrinkage); another type's prior, k times as wide, gets 1/k² of it."),
    Setting("nightly.lambda_player", float, 3.0,
            "Prior weight of a player's average skill, in solves (shrinkage)."),
    Setting("nightly.misfire_grace_s", int, 21600,
            "How late a missed nightly run may still start (after downtime), in seconds."),
    Setting("notify.timeout_s", float, 10.0,
            "How long one delivery of an outgoing notification may take."),
    Setting("notify.backoff_s", float, 5.0,
            "Wait before the second delivery attempt; it doubles with each failure."),
    Setting("notify.backoff_max_s", float, 3600.0, "Longest wait between two attempts."),
    Setting("notify.give_up_hours", float, 72.0,
            "How long after the event delivery is retried before it is marked failed."),
    Setting("notify.poll_s", float, 1.0, "How often the outbox is looked at for due events."),
    Setting("console.idle_minutes", int, 30,
            "A console session ends after this many minutes without a request."),
    Setting("console.session_hours", int, 12,
            "A console session ends this many hours after sign-in, however busy."),
    Setting("console.login_failures", int, 5,
            "Failed sign-ins per name, or per client address, before sign-in is refused "
            "for console.lockout_s."),
    Setting("console.lockout_s", int, 300,
            "How long sign-in stays refused after too many failures, in seconds."),
    # access: who is behind a proxy, who may read /metrics
    Setting("console.trusted_proxies", str, "",
            "Reverse proxies (addresses or networks, comma-separated) whose "
            "X-Forwarded-For names the client, for the sign-in throttle's per-address "
            "count; empty: the connection's own address is the client's."),
    Setting("metrics.token_file", str, "",
            "A file holding the bearer token GET /metrics requires (Prometheus reads the "
            "same token with authorization.credentials_file); empty: /metrics is open to "
            "whoever reaches server.host."),
)


# Fields beside the scalar settings: portals and tokens (tables and lists, from TOML
# and the environment only) and where the settings came from.
_TABLES = (
    ("portals", Mapping[str, tuple[str, ...]], field(default_factory=dict)),
    ("organiser_tokens", tuple[str, ...], ()),
    ("admin_tokens", tuple[str, ...], ()),
    ("source", str, "defaults"),  # where the settings came from, for the start-up log
    # the environment's portal and token variables, to read them again (load_secrets)
    ("secret_env", Mapping[str, str], field(default_factory=dict, repr=False)),
)

# Built from SETTINGS, so each default is written once: one field per setting, named
# by its attr (server.port -> server_port), of its type, with its default.
Settings = make_dataclass(
    "Settings", [(s.attr, s.type, s.default) for s in SETTINGS] + list(_TABLES),
    frozen=True, namespace={"__module__": __name__,
                            "__doc__": "Every setting of the daemon; build it with "
                                       ":func:`load_settings`."})


def proxy_networks(text: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """``console.trusted_proxies`` as networks (an address is a network of one)."""
    try:
        return tuple(ipaddress.ip_network(part.strip(), strict=False)
                     for part in text.split(",") if part.strip())
    except ValueError as exc:
        raise SettingsError(f"console.trusted_proxies: {exc}") from None


def metrics_token(path: str) -> str:
    """The token in ``metrics.token_file`` (surrounding blanks dropped); SettingsError
    when the file cannot be read or holds none."""
    try:
        token = Path(path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeError) as exc:
        raise SettingsError(f"metrics.token_file: cannot read {path}: "
                            f"{getattr(exc, 'strerror', None) or exc}") from None
    if not token:
        raise SettingsError(f"metrics.token_file: {path} holds no token")
    return token


# false-positive targets: a rate strictly between 0 (nobody flagged, and a verdict that
# divides by it) and 1 (everybody)
PROBABILITIES = frozenset({"scoring.fpr", "scoring.player_alpha"})


def check_cron(cron: str) -> None:
    """``nightly.cron`` is crontab syntax APScheduler reads (SettingsError naming it
    otherwise); empty disables the job. Checked where the service starts, not with the
    other settings: the scheduler is imported only by the service."""
    if not cron.strip():
        return
    from apscheduler.triggers.cron import CronTrigger

    try:
        CronTrigger.from_crontab(cron.strip(), timezone="UTC")
    except ValueError as exc:
        raise SettingsError(f"nightly.cron: {cron!r} is not crontab syntax "
                            f"(minute hour day month weekday): {exc}") from None


def _check_access(values: Mapping[str, Any]) -> None:
    """The access settings are usable (a bad one stops the start, naming it)."""
    proxy_networks(values.get("console_trusted_proxies", ""))
    if values.get("metrics_token_file"):
        metrics_token(values["metrics_token_file"])


# the most an integer setting may be (what DuckDB's BIGINT and numba's int64 hold with
# room to add), and the settings narrower than that
MAX_INT = 2**53
INT_RANGES = {"server.port": (0, 65535),  # 0: a free port the system picks
              # at least one: none would refuse every request or puzzle (or, for
              # aiohttp's body limit, lift it)
              "server.max_body_bytes": (1, MAX_INT), "storage.write_queue_size": (1, MAX_INT),
              "storage.max_batch": (1, MAX_INT), "storage.memory_limit_mb": (1, MAX_INT),
              "analysis.queue_size": (1, MAX_INT), "analysis.order_runs": (1, MAX_INT),
              # a puzzle nobody solved has no time to recalibrate on (its correlations NaN)
              "nightly.min_solves": (1, MAX_INT),
              # durations a clock is moved by: past a century (or a year, a month)
              # Python's dates overflow, or nothing would ever happen
              "storage.dedupe_days": (0, 36_500), "storage.moves_retention_days": (0, 36_500),
              "nightly.rescore_days": (0, 36_500), "webhooks.tolerance_s": (0, 31_536_000),
              "webhooks.time_skew_s": (0, 31_536_000),
              "nightly.misfire_grace_s": (1, 2_592_000),
              "console.idle_minutes": (1, 525_600), "console.session_hours": (1, 8_760),
              # thread and process counts: past a machine's size they are typos (a byte
              # count pasted), which DuckDB aborts on and a pool overflows on
              "storage.threads": (0, 1024), "analysis.workers": (0, 1024),
              "compute.cores": (0, 1_048_576),
              # 0 would lock every sign-in out, the right password's first included
              "console.login_failures": (1, MAX_INT)}
# float settings narrower than "finite and >= 0": waits past a day or a year are typos
# that overflow a clock; a prediction needs some time; a poll or a retry of 0 spins
FLOAT_RANGES = {"storage.group_commit_ms": (0.0, 60_000.0),
                "analysis.order_budget_s": (0.001, 86_400.0),
                "server.shutdown_timeout_s": (0.0, 86_400.0),
                "compute.retry_s": (0.01, 86_400.0),
                "notify.timeout_s": (0.001, 86_400.0), "notify.backoff_s": (0.0, 86_400.0),
                "notify.backoff_max_s": (0.0, 604_800.0),
                "notify.give_up_hours": (0.0, 8_760.0), "notify.poll_s": (0.001, 3_600.0)}


# what an environment variable may say for a bool setting (any letter case)
BOOL_WORDS = {"true": True, "1": True, "yes": True, "on": True,
              "false": False, "0": False, "no": False, "off": False}


def _coerce(setting: Setting, value: Any, origin: str) -> Any:
    if setting.type is bool:
        if isinstance(value, str) and value.strip().lower() in BOOL_WORDS:
            return BOOL_WORDS[value.strip().lower()]
        if isinstance(value, bool):
            return value
        raise SettingsError(f"{origin}: {setting.key} must be true or false, got {value!r}")
    if setting.type is str:
        return _text(setting, value, origin)
    try:
        if setting.type is int and isinstance(value, str):
            value = int(value)
        elif setting.type is float and isinstance(value, (str, int)) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, setting.type) or isinstance(value, bool):
            raise TypeError
    except (TypeError, ValueError, OverflowError):
        raise SettingsError(f"{origin}: {setting.key} must be {setting.type.__name__}, "
                            f"got {value!r}") from None
    if setting.type is float and not math.isfinite(value):
        raise SettingsError(f"{origin}: {setting.key} must be a finite number, got {value!r}")
    if setting.type in (int, float) and value < 0:
        raise SettingsError(f"{origin}: {setting.key} must be >= 0, got {value!r}")
    low, high = (INT_RANGES.get(setting.key, (0, MAX_INT)) if setting.type is int
                 else FLOAT_RANGES.get(setting.key, (0.0, math.inf)))
    if setting.type in (int, float) and not low <= value <= high:
        spelt = "," if setting.type is int else ",g"
        raise SettingsError(f"{origin}: {setting.key} must be from {low:{spelt}} to "
                            f"{high:{spelt}}, got {value!r}")
    if setting.key in PROBABILITIES and not 0 < value < 1:
        raise SettingsError(f"{origin}: {setting.key} must be between 0 and 1 (a rate), "
                            f"got {value!r}")
    return value


def _text(setting: Setting, value: Any, origin: str) -> str:
    """A string setting: no NUL (it ends every file call in a traceback); a database
    path that names a file, not DuckDB's in-memory database or a remote one (a daemon on
    those would acknowledge solves a restart loses)."""
    if not isinstance(value, str):
        raise SettingsError(f"{origin}: {setting.key} must be str, got {value!r}")
    if "\x00" in value:
        raise SettingsError(f"{origin}: {setting.key} holds a NUL character")
    if setting.key == "server.host" and not value.strip():
        # an empty host is every interface: the API and /metrics on the network
        raise SettingsError(f"{origin}: server.host must name an address (an empty one "
                            "listens on every interface); 0.0.0.0 says so on purpose")
    if setting.key == "storage.path" and (
            not value.strip() or value.startswith(":")
            or re.match(r"(md|motherduck):|[A-Za-z][A-Za-z0-9+.-]*://", value,
                        re.IGNORECASE)):
        raise SettingsError(f"{origin}: storage.path must name a database file, got "
                            f"{value!r} (an in-memory or remote database would lose what "
                            "the daemon acknowledged)")
    return value


def _string_list(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise SettingsError(f"{where} must be a list of non-empty strings")
    return tuple(value)


def _read_toml(path: Path) -> dict:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise SettingsError(f"config file {path} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"config file {path}: {exc}") from None
    except UnicodeDecodeError:
        raise SettingsError(f"config file {path} is not UTF-8 text") from None
    except OSError as exc:
        raise SettingsError(f"config file {path}: {exc.strerror}") from None


def new_secret() -> str:
    """A Standard Webhooks secret: ``whsec_`` and 32 random bytes in base64."""
    return "whsec_" + base64.b64encode(_secrets.token_bytes(32)).decode()


def new_token() -> str:
    return _secrets.token_urlsafe(32)


def _embedded_secrets(db_path: str) -> tuple[dict, bool]:
    """The generated demo portal and tokens next to the database; (table, created)."""
    path = Path(db_path).resolve().parent / SECRETS_FILE
    if path.exists():
        return _read_toml(path), False
    table = {"portals": {"demo": {"secrets": [new_secret()]}},
             "auth": {"organiser_tokens": [new_token()], "admin_tokens": [new_token()]}}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IRUSR | stat.S_IWUSR)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(dump_secrets(table))
    return table, True


def dump_secrets(table: dict) -> str:
    """The secrets file format (the same keys as a config file)."""
    lines = ["# fairgrid secrets: keep private (mode 0600)."]
    for name, portal in table.get("portals", {}).items():
        lines += ["", f"[portals.{name}]",
                  "secrets = [" + ", ".join(f'"{s}"' for s in portal["secrets"]) + "]"]
    auth = table.get("auth", {})
    lines += ["", "[auth]"]
    for key in ("organiser_tokens", "admin_tokens"):
        lines.append(f"{key} = [" + ", ".join(f'"{t}"' for t in auth.get(key, [])) + "]")
    return "\n".join(lines) + "\n"


SECRET_ENV = {  # variable -> (table, key); each also as NAME_FILE, a path to read it from
    "FAIRGRID_PORTAL_SECRETS": ("portals", None),
    "FAIRGRID_AUTH_ORGANISER_TOKENS": ("auth", "organiser_tokens"),
    "FAIRGRID_AUTH_ADMIN_TOKENS": ("auth", "admin_tokens"),
}


def _env_value(env: Mapping[str, str], name: str) -> str | None:
    """A secret from ``name``, or from the file ``name_FILE`` names (container secrets)."""
    if name in env:
        return env[name]
    path = env.get(name + "_FILE")
    if path is None:
        return None
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise SettingsError(f"{name}_FILE: cannot read {path}: {exc.strerror}") from None


def _items(text: str) -> list[str]:
    return [x.strip() for x in text.replace("\n", ",").split(",") if x.strip()]


def _secrets_from_env(env: Mapping[str, str]) -> dict:
    """Portals and tokens from the environment, replacing the config's tables:
    ``FAIRGRID_PORTAL_SECRETS="acme=whsec_a,whsec_b; shop=whsec_c"``, and comma- (or
    line-) separated ``FAIRGRID_AUTH_ORGANISER_TOKENS`` / ``FAIRGRID_AUTH_ADMIN_TOKENS``;
    each may instead be read from the file ``…_FILE`` names."""
    out: dict = {}
    for name, (section, key) in SECRET_ENV.items():
        text = _env_value(env, name)
        if text is None:
            continue
        if section == "portals":
            if not text.strip():    # an unset variable in a compose file, say
                raise SettingsError(f"{name} is set but empty: name each portal and its "
                                    "secrets (NAME=whsec_…), or unset it")
            portals = {}
            for part in text.replace("\n", ";").split(";"):
                if not part.strip():
                    continue
                portal, sep, secrets = part.partition("=")
                if not sep or not portal.strip() or not _items(secrets):
                    raise SettingsError(f"{name}: expected NAME=whsec_…[,whsec_…] per portal, "
                                        f"';' between portals")
                if portal.strip() in portals:  # the first's secrets would be dropped
                    raise SettingsError(f"{name}: portal {portal.strip()!r} is named twice; "
                                        "list all its secrets once: NAME=whsec_a,whsec_b")
                portals[portal.strip()] = {"secrets": _items(secrets)}
            out["portals"] = portals
        else:
            out.setdefault("auth", {})[key] = _items(text)
    return out


def portals_of(table: Mapping, origin: str) -> dict[str, tuple[str, ...]]:
    """The ``[portals.NAME]`` tables of a config or secrets file, checked."""
    portals = {}
    for name, portal in table.get("portals", {}).items():
        if not isinstance(portal, dict):
            raise SettingsError(f"{origin}: [portals.{name}] must be a table")
        for key in portal:
            if key != "secrets":
                raise SettingsError(f"{origin}: unknown setting portals.{name}.{key}")
        portals[name] = _string_list(portal.get("secrets"), f"portals.{name}.secrets")
        for s in portals[name]:
            if not s.startswith("whsec_"):
                raise SettingsError(f"portals.{name}.secrets: secrets start with 'whsec_'")
            try:
                key = base64.b64decode(s.removeprefix("whsec_"), validate=True)
            except ValueError:
                key = b""
            if not key:  # one cut short when pasted, say
                raise SettingsError(f"portals.{name}.secrets: a secret is 'whsec_' and "
                                    "base64 text (as `fairgrid portal add` makes them)")
    owner: dict[str, str] = {}
    for name, secrets in portals.items():
        for s in secrets:
            if owner.setdefault(s, name) != name:
                # a signature proves only the secret: the second portal's webhooks would
                # all be taken for the first's and refused
                raise SettingsError(f"{origin}: portals {owner[s]!r} and {name!r} share a "
                                    "secret; each portal needs its own (fairgrid portal add "
                                    "makes one)")
    return portals


def load_settings(config: str | None = None, env: Mapping[str, str] | None = None,
                  *, generate: bool = True) -> tuple[Settings, bool]:
    """Settings from ``config`` (or ``$FAIRGRID_CONFIG``), then ``FAIRGRID_*`` overrides.

    Returns (settings, whether embedded secrets were just generated). With
    ``generate=False`` (clients of a running daemon) missing embedded secrets are not
    created. Raises SettingsError naming the key and the problem.
    """
    env = os.environ if env is None else env
    if config is not None and not config.strip():
        raise SettingsError("--config names no file (it is empty)")
    config = config or env.get(CONFIG_ENV) or None
    table = _read_toml(Path(config)) if config else {}
    origin = str(config) if config else "defaults"
    values: dict[str, Any] = {}
    known_sections = {s.key.split(".")[0] for s in SETTINGS} | {"portals", "auth"}
    for section in table:
        if section not in known_sections:
            raise SettingsError(f"{origin}: unknown section [{section}]")
    for setting in SETTINGS:
        section, name = setting.key.split(".")
        sect = table.get(section, {})
        if not isinstance(sect, dict):
            raise SettingsError(f"{origin}: [{section}] must be a table")
        if name in sect:
            values[setting.attr] = _coerce(setting, sect[name], origin)
        if setting.env in env:
            values[setting.attr] = _coerce(setting, env[setting.env], setting.env)
    known = {s.key for s in SETTINGS} | {"auth.organiser_tokens", "auth.admin_tokens"}
    for section, sect in table.items():
        if not isinstance(sect, dict):
            raise SettingsError(f"{origin}: [{section}] must be a table")
        if section == "portals":
            continue  # checked below, portal by portal
        for name in sect:  # a typo must not be silently ignored
            if f"{section}.{name}" not in known:
                raise SettingsError(f"{origin}: unknown setting {section}.{name}")
    _check_access(values)
    db_path = values.get("storage_path", Settings.storage_path)
    portals, organiser, admin, created = _secret_tables(table, env, db_path, origin, generate)
    secret_env = {k: v for k, v in env.items()
                  if k in SECRET_ENV or k.removesuffix("_FILE") in SECRET_ENV}
    settings = Settings(**values, portals=portals, organiser_tokens=organiser,
                        admin_tokens=admin, source=origin, secret_env=secret_env)
    return settings, created


def _secret_tables(table: Mapping, env: Mapping[str, str], db_path: str, origin: str,
                   generate: bool, portals: bool = True
                   ) -> tuple[dict, tuple[str, ...], tuple[str, ...], bool]:
    """(portals, organiser tokens, admin tokens, embedded file just generated) from a
    config's tables, the environment, else the embedded secrets file (``portals``
    False: the tokens alone, the portals neither read nor checked)."""
    table = {**table, **_secrets_from_env(env)}
    created = False
    if "portals" not in table and "auth" not in table:
        secrets_path = Path(db_path).resolve().parent / SECRETS_FILE
        if generate or secrets_path.exists():
            secrets_table, created = _embedded_secrets(db_path)
            origin = str(secrets_path)  # what is wrong from here on is that file's
            table = {**table, **secrets_table}
    for section in ("portals", "auth"):
        if not isinstance(table.get(section, {}), dict):
            raise SettingsError(f"{origin}: [{section}] must be a table")
    portals = portals_of(table, origin) if portals else {}
    auth = table.get("auth", {})
    organiser = _string_list(auth.get("organiser_tokens", []), "auth.organiser_tokens")
    admin = _string_list(auth.get("admin_tokens", []), "auth.admin_tokens")
    return portals, organiser, admin, created


def secret_files(settings: Settings) -> list[Path]:
    """Every file the portals and service tokens may come from: the config file, the
    embedded secrets file, and the files ``FAIRGRID_…_FILE`` variables name (whether or
    not they exist now)."""
    files = [] if settings.source == "defaults" else [Path(settings.source)]
    files.append(Path(settings.storage_path).resolve().parent / SECRETS_FILE)
    files += [Path(v) for k, v in settings.secret_env.items() if k.endswith("_FILE")]
    return files


def load_secrets(settings: Settings) -> tuple[dict, tuple[str, ...], tuple[str, ...]]:
    """(portals, organiser tokens, admin tokens) as their sources hold them now, read
    exactly as :func:`load_settings` read them (never generating a secrets file): what a
    running daemon takes up when one of :func:`secret_files` changed. SettingsError
    naming the problem."""
    config = settings.source != "defaults"
    table = _read_toml(Path(settings.source)) if config else {}
    portals, organiser, admin, _ = _secret_tables(
        table, settings.secret_env, settings.storage_path, settings.source, False)
    return portals, organiser, admin


def load_tokens(settings: Settings) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(organiser tokens, admin tokens) as their sources hold them now, whatever the
    portals there hold: what a reload whose portals are in error still learns (a token
    taken out must stop working, even when the same edit broke a secret)."""
    config = settings.source != "defaults"
    table = _read_toml(Path(settings.source)) if config else {}
    _, organiser, admin, _ = _secret_tables(table, settings.secret_env,
                                            settings.storage_path, settings.source, False,
                                            portals=False)
    return organiser, admin


def setting_names() -> list[str]:
    """Every TOML key and environment variable (for the documentation test)."""
    return [s.key for s in SETTINGS] + [s.env for s in SETTINGS] + list(SECRET_ENV)

