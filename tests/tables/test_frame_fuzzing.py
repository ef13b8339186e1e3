"""Fuzzing the table socket's inbound frames: any text gets a stable error code or a valid
answer, never a crash, and invalid frames change nothing."""

from __future__ import annotations

import itertools
import json

import pytest
from asgiref.sync import async_to_sync
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from config.infra.errors import DomainError
from tables import games
from tables.commands import FRAME_ENVELOPE, parse_action, read_frame
from tables.realtime.routing import websocket_urlpatterns
from tests.conftest import make_player
from tests.helpers import create_fun_table

KNOWN_CODES = {
    "bad_json",
    "bad_message",
    "too_large",
    "unknown_type",
    "unknown_field",
    "too_deep",
    "invalid_hold",
    "rate_limited",
    "phase_closed",
    "not_seated",
    "not_in_hand",
    "table_closed",
    "limit_reached",
    "redeal_closed",
}
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
frame_types = st.sampled_from(["hold", "buy_draw", "redeal", "ping", "snapshot", "teleport", "", "HOLD"])
frames = st.one_of(
    st.text(max_size=200),
    json_values.map(json.dumps),
    st.builds(
        lambda kind, extra: json.dumps({"type": kind, **extra}),
        frame_types,
        st.dictionaries(st.sampled_from(["hold", "ref", "x"]), json_values, max_size=2),
    ),
)


@given(text=frames)
@settings(max_examples=500, deadline=None)
def test_parsing_never_raises_and_names_every_failure(text: str) -> None:
    try:
        content = read_frame(text, max_bytes=2048)
        action = parse_action(content["type"], content, envelope=FRAME_ENVELOPE, game=games.get("widerpoker"))
    except DomainError as error:
        assert error.code in KNOWN_CODES
    else:
        assert set(content) <= {"type", "ref", "hold"}
        assert action.name == content["type"]
        assert (action.hold is not None) == (action.name == "hold")


SEATING = {"join", "leave", "sit_out", "sit_in"}


def frame_type(text: str) -> object:
    try:
        return read_frame(text, max_bytes=2048)["type"]
    except DomainError:
        return None


_examples = itertools.count()
FINAL_ANSWERS = {"error", "pong", "entry_state"}  # what ends the answer to one frame


@pytest.mark.django_db(transaction=True)
@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(batch=st.lists(frames, min_size=40, max_size=40))
def test_random_frames_from_a_spectator_get_coded_answers_and_change_nothing(batch: list[str]) -> None:
    from django.test import override_settings

    from tables.models import Seat
    from wallet.models import LedgerEntry

    # Channels' test communicator cannot send an empty text frame; seating frames are valid.
    batch = [text for text in batch if text and frame_type(text) not in SEATING]
    player = make_player(f"fuzzer{next(_examples)}")  # examples share the database
    table = create_fun_table(f"Fuzz Rail {player.pk}")
    entries_before = LedgerEntry.objects.count()

    async def play() -> None:
        communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/tables/{table.pk}/")
        communicator.scope["user"] = player
        connected, _ = await communicator.connect(timeout=10)
        assert connected
        await communicator.receive_from(timeout=10)  # table_state
        await communicator.receive_from(timeout=10)  # entry_state
        for text in batch:
            await communicator.send_to(text_data=text)
            answer = json.loads(await communicator.receive_from(timeout=10))
            while answer["type"] not in FINAL_ANSWERS:
                answer = json.loads(await communicator.receive_from(timeout=10))
            if answer["type"] == "error":
                assert answer["code"] in KNOWN_CODES, (text, answer)
        await communicator.disconnect()

    with override_settings(WS_RATE_PER_SECOND=10_000.0, WS_RATE_BURST=10_000):
        async_to_sync(play)()
    assert not Seat.objects.filter(table=table).exists()  # no frame seated the spectator
    assert LedgerEntry.objects.count() == entries_before  # and none moved money
