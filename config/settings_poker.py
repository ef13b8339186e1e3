"""The game platform's knobs (chips, player protection, practice games, the clock,
presence, the randomness beacon, the provably-fair algorithm, the chain signer, sockets),
read from the environment and checked. Imported by config.settings, whose names they are
(``settings.BEACON`` etc.); ``DJANGO_SETTINGS_MODULE`` stays ``config.settings``."""

from __future__ import annotations

import hashlib

from django.core.exceptions import ImproperlyConfigured

from config.settings_env import DATABASE_URL, SECRET_KEY, VAR_DIR, _bool, _float, _int, _ints, env

# Fun chips granted at sign-up, and the top-up rule (minor units of the FUN currency).
FUN_SIGNUP_GRANT_MINOR: int = _int("POKER_FUN_SIGNUP_GRANT_MINOR", 100_000)
FUN_TOP_UP_BELOW_MINOR: int = _int("POKER_FUN_TOP_UP_BELOW_MINOR", 10_000)
FUN_TOP_UP_TO_MINOR: int = _int("POKER_FUN_TOP_UP_TO_MINOR", 100_000)
if FUN_TOP_UP_TO_MINOR < FUN_TOP_UP_BELOW_MINOR:
    raise ImproperlyConfigured("POKER_FUN_TOP_UP_TO_MINOR must be at least POKER_FUN_TOP_UP_BELOW_MINOR")
# The largest deposit or withdrawal staff may record in one go (minor units; 10,000.00).
POKER_CASH_MOVEMENT_MAX_MINOR: int = _int("POKER_CASH_MOVEMENT_MAX_MINOR", 1_000_000, minimum=1, maximum=10**15)
# Player protection (wallet/protection.py): a raised or removed limit takes effect after the
# cooling period; a play session ends after this many minutes without a hand.
LIMIT_COOLING_HOURS: int = _int("POKER_LIMIT_COOLING_HOURS", 24, minimum=1)
SESSION_BREAK_MINUTES: int = _int("POKER_SESSION_BREAK_MINUTES", 15, minimum=1)
# Practice games (BigHoldem, bots on the shared clock; security audit M2): running games per
# account and on the whole site. A start over either is refused (practice_limit, practice_full).
PRACTICE_GAMES_PER_PLAYER: int = _int("POKER_PRACTICE_GAMES_PER_PLAYER", 2, minimum=1, maximum=10)
PRACTICE_GAMES_MAX: int = _int("POKER_PRACTICE_GAMES_MAX", 50, minimum=1)
# Guests (seed 004: practice "senza registrazione", wallet/guests.py): guest games started from
# one client address in an hour; more are refused (guest_limit, 429).
POKER_GUESTS_PER_ADDRESS_HOUR: int = _int("POKER_GUESTS_PER_ADDRESS_HOUR", 10, minimum=1)
# The clock advances cash tables first, then other tables, then practice tables, and spends at
# most this many seconds of a tick on practice tables (the rest wait for the next tick).
CLOCK_PRACTICE_BUDGET_SECONDS: float = _float("POKER_CLOCK_PRACTICE_BUDGET_SECONDS", 0.5, minimum=0.05)
# Platform grace (docs/deployment.md, "When Redis is down"): a person whose Hold'em turn runs
# out while the platform knew it was degraded (Redis unreachable from a web process, the clock
# this late) is not timed out: his turn gets this many seconds more, up to the maximum.
PLATFORM_GRACE_SECONDS: int = _int("POKER_PLATFORM_GRACE_SECONDS", 15, minimum=1, maximum=120)
PLATFORM_GRACE_MAX_SECONDS: int = _int("POKER_PLATFORM_GRACE_MAX_SECONDS", 60, minimum=1, maximum=600)
CLOCK_LATE_SECONDS: int = _int("POKER_CLOCK_LATE_SECONDS", 5, minimum=2)
# A seat with no open WebSocket and no request for this long counts as disconnected.
PRESENCE_TIMEOUT_SECONDS: int = _int("POKER_PRESENCE_TIMEOUT_SECONDS", 30, minimum=1)
# A closed game page counts as still there for this long: a reload is not a disconnection.
PRESENCE_RECONNECT_GRACE_SECONDS: int = _int("POKER_PRESENCE_RECONNECT_GRACE_SECONDS", 10, minimum=0)
# Every ASGI process stamps its heartbeat this often (0: never, tests only); one silent for
# the timeout is dead and the clock takes its sockets off the seats (tables/services/presence.py).
PRESENCE_HEARTBEAT_SECONDS: int = _int("POKER_PRESENCE_HEARTBEAT_SECONDS", 5, minimum=0)
PRESENCE_PROCESS_TIMEOUT_SECONDS: int = _int("POKER_PRESENCE_PROCESS_TIMEOUT_SECONDS", 15, minimum=1)
# The public randomness beacon that fixes each hand's change keys after its change deadline
# (docs/provably-fair.md, "Algorithm 2"). "local": rounds computed from POKER_BEACON_KEY (the
# embedded default and the tests; it keeps the keys from anyone who reads the database, not
# from the operator); "drand": the public drand network at POKER_DRAND_URL.
BEACON: str = env.str("POKER_BEACON", default="local")
if BEACON not in {"local", "drand"}:
    raise ImproperlyConfigured("POKER_BEACON is local or drand")
# The local beacon is the operator's own key: a production install (DATABASE_URL set) must use
# drand. POKER_BEACON_ALLOW_LOCAL=1 is for the test suite (config/settings_test.py) and
# benchmarks on PostgreSQL only, never for real money (docs/deployment.md).
BEACON_ALLOW_LOCAL: bool = _bool("POKER_BEACON_ALLOW_LOCAL", False)
if DATABASE_URL and BEACON == "local" and not BEACON_ALLOW_LOCAL:
    raise ImproperlyConfigured(
        "POKER_BEACON=local in production (DATABASE_URL set): the local beacon is keyed by the operator, "
        "so players cannot check it; set POKER_BEACON=drand (docs/deployment.md, Randomness beacon)"
    )
BEACON_KEY: str = (
    env.str("POKER_BEACON_KEY", default="") or hashlib.sha256(b"wp-beacon-key:" + SECRET_KEY.encode()).hexdigest()
)
BEACON_PERIOD_SECONDS: int = _int("POKER_BEACON_PERIOD_SECONDS", 3, minimum=1, maximum=60)
BEACON_GENESIS_UNIX: int = _int("POKER_BEACON_GENESIS_UNIX", 1692803367)  # drand quicknet's genesis
DRAND_URL: str = env.str(
    "POKER_DRAND_URL", default="https://api.drand.sh/52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971"
)
# The drand chain's public key (compressed G2, hex): every round's signature is checked against
# it before its value is used (tables/drand.py). quicknet's by default.
DRAND_PUBLIC_KEY: str = env.str(
    "POKER_DRAND_PUBLIC_KEY",
    default="83cf0f2896adee7eb8b5f01fcad3912212c437e0073e911fb90022d3e760183c8c4b450b6a0a6c3ac6a5776a2d1064510d1fec"
    "758c921cc22b0e17e63aaf4bcb5ed66304de9cf809bd274ca73bab4af5a6e9c76a4bc09e76eae8991ef5ece45a",
)
if len(DRAND_PUBLIC_KEY) != 192 or any(c not in "0123456789abcdef" for c in DRAND_PUBLIC_KEY):
    raise ImproperlyConfigured("POKER_DRAND_PUBLIC_KEY is 192 lowercase hex characters (a compressed G2 point)")
# How long settlement waits for the beacon round before the hand is cancelled and refunded.
BEACON_MAX_WAIT_SECONDS: int = _int("POKER_BEACON_MAX_WAIT_SECONDS", 60, minimum=5)
# A finished Hold'em hand's seeds (which give every card of the deck, folded hands included)
# reach staff at once and the hand's players and the public this many hours after the hand
# ends; until then each player verifies his own and the shown cards against the per-card
# commitments (docs/provably-fair.md, "Card commitments"). 0: at the end of the hand.
HOLDEM_SEED_DELAY_HOURS: int = _int("POKER_HOLDEM_SEED_DELAY_HOURS", 24, minimum=0, maximum=24 * 366)
# The provably-fair algorithm of WiderPoker hands dealt from now on (docs/provably-fair.md):
# 3 freezes the hand's inputs and deals from the first beacon round after the freeze, and
# waits for a round after each redeal's purchase; 2 (hands dealt before 2026-11-26) deals at
# once from the chain and the client seeds. Production refuses 2.
DEAL_ALGORITHM: int = _int("POKER_DEAL_ALGORITHM", 3, minimum=2, maximum=3)
if DATABASE_URL and DEAL_ALGORITHM < 3 and not BEACON_ALLOW_LOCAL:
    raise ImproperlyConfigured(
        "POKER_DEAL_ALGORITHM=2 in production: an insider who reads the database could foresee hands "
        "(docs/provably-fair.md, Algorithm 3)"
    )
# The chain signer (tables/signer.py; docs/provably-fair.md, 1.10): "embedded" (in process,
# the key in POKER_SIGNER_KEY_FILE, created under var/signer/ when absent), "socket" (the
# process `manage.py run_signer` on POKER_SIGNER_SOCKET, run as a user whose key file the
# app cannot read), or "database" (terminal seeds in the database, as before 2026-11-26:
# the test suite only). Production names its key file or socket explicitly.
SIGNER: str = env.str("POKER_SIGNER", default="embedded")
if SIGNER not in {"embedded", "socket", "database"}:
    raise ImproperlyConfigured("POKER_SIGNER is embedded, socket or database")
SIGNER_KEY_FILE: str = env.str("POKER_SIGNER_KEY_FILE", default="") or str(VAR_DIR / "signer" / "chain-signer.key")
SIGNER_SOCKET: str = env.str("POKER_SIGNER_SOCKET", default="")
if SIGNER == "socket" and not SIGNER_SOCKET:
    raise ImproperlyConfigured("POKER_SIGNER=socket needs POKER_SIGNER_SOCKET (the run_signer process's Unix socket)")
if (
    DATABASE_URL
    and not BEACON_ALLOW_LOCAL
    and (SIGNER == "database" or (SIGNER == "embedded" and not env.str("POKER_SIGNER_KEY_FILE", default="")))
):
    raise ImproperlyConfigured(
        "production needs the chain signer: POKER_SIGNER=socket with POKER_SIGNER_SOCKET, or "
        "POKER_SIGNER_KEY_FILE outside the database (docs/deployment.md, Chain signer)"
    )
# Length of a table's seed chain (hands it deals before a new chain is published).
SEED_CHAIN_LENGTH: int = _int("POKER_SEED_CHAIN_LENGTH", 10_000, minimum=10, maximum=1_000_000)
# WebSocket inbound rate limit: a token bucket per connection.
WS_RATE_PER_SECOND: float = _float("POKER_WS_RATE_PER_SECOND", 10.0, minimum=0.1)
WS_RATE_BURST: int = _int("POKER_WS_RATE_BURST", 20, minimum=1)
# A hub logs how long a public frame took to reach its sockets (an INFO line on
# tables.realtime.fanout, tables/realtime/hub.py) when it wrote it to at least this many.
FANOUT_REPORT_MIN_SOCKETS: int = _int("POKER_FANOUT_REPORT_MIN_SOCKETS", 1000, minimum=1)
# The ASGI process's GIL switch interval (seconds; config/asgi.py sets it): its event loop
# thread waits up to this long for the GIL after each socket write while the sync thread
# renders private states (CPython's default 0.005 s held a 5,000-socket flush for seconds).
ASGI_SWITCH_INTERVAL: float = _float("POKER_ASGI_SWITCH_INTERVAL", 0.0005, minimum=0.0001)
# The ASGI process's cyclic garbage collector (config/asgi.py): gc.set_threshold's three
# thresholds. At CPython's (700, 10, 10) a process holding 5,000 sockets ran a full
# collection every few seconds, each stalling its event loop 0.3-1 s (docs/benchmarks.md,
# "The ASGI process's garbage collector").
ASGI_GC_THRESHOLDS: tuple[int, ...] | None = _ints("POKER_ASGI_GC_THRESHOLDS", (50_000, 5, 400), minimum=1)
