"""The registry of games (tables/games.py): each table's game found once, by table or id."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tables import games
from tables.errors import TableNotFoundError
from tests.helpers import create_fun_table
from tests.tables.holdem_helpers import holdem_table


def test_the_house_lists_both_games_by_their_table_keys() -> None:
    assert list(games.GAMES) == ["widerpoker", "holdem"]
    assert games.get("holdem").key == "holdem"
    with pytest.raises(games.UnknownGameError):
        games.get("bingo")


@pytest.mark.django_db
def test_game_of_a_table_id_reads_once_then_remembers() -> None:
    table = holdem_table()
    wider = create_fun_table("Wide")
    assert games.game_of(table) is games.get("holdem")
    games.unregister("nothing")  # forgets nothing of the real games
    with CaptureQueriesContext(connection) as queries:
        assert games.game_of(wider.pk).key == "widerpoker"
        assert games.game_of(wider.pk).key == "widerpoker"
        assert games.game_of(table.pk).key == "holdem"
    assert len(queries) == 0  # both remembered as they were created
    games._GAME_OF_TABLE.clear()
    with CaptureQueriesContext(connection) as queries:
        assert games.game_of(table.pk).key == "holdem"
        assert games.game_of(table.pk).key == "holdem"
    assert len(queries) == 1
    with pytest.raises(TableNotFoundError):
        games.game_of(10**12)


def test_a_game_key_is_registered_once() -> None:
    with pytest.raises(ValueError, match="already registered"):
        games.register(games.get("holdem"))
