"""The tables' REST routes (mounted under ``/api/`` in the ``api`` namespace by config/urls.py)."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from tables import api, games
from tables.api import tournaments
from tables.holdem.practice import api as practice

urlpatterns: list[URLPattern | URLResolver] = [
    path("tables/", api.TableListApi.as_view(), name="table-list"),
    path("tables/<int:table_id>/", api.TableDetailApi.as_view(), name="table-detail"),
    path("tables/<int:table_id>/me/", api.TableEntryStateApi.as_view(), name="table-me"),
    path("tables/<int:table_id>/join/", api.TableJoinApi.as_view(), name="table-join"),
    path("tables/<int:table_id>/leave/", api.TableLeaveApi.as_view(), name="table-leave"),
    path("tables/<int:table_id>/sit-out/", api.TableSitOutApi.as_view(), name="table-sit-out"),
    path("tables/<int:table_id>/sit-in/", api.TableSitInApi.as_view(), name="table-sit-in"),
    path("tables/<int:table_id>/hold/", api.EntryHoldApi.as_view(), name="table-hold"),
    path("tables/<int:table_id>/draws/", api.DrawBuyApi.as_view(), name="table-draws"),
    path("tables/<int:table_id>/redeals/", api.RedealBuyApi.as_view(), name="table-redeals"),
    *(
        path(
            f"tables/<int:table_id>/{game.rest_alias}/<slug:action>/",
            api.alias_action_view(game).as_view(),
            name=f"table-{game.rest_alias}",
        )
        for game in games.GAMES.values()
        if game.rest_alias
    ),
    path("practice/", practice.PracticeStartApi.as_view(), name="practice-start"),
    path("practice/leaderboard/", practice.PracticeLeaderboardApi.as_view(), name="practice-leaderboard"),
    path("practice/<int:game_id>/", practice.PracticeDetailApi.as_view(), name="practice-detail"),
    path("practice/<int:game_id>/stop/", practice.PracticeStopApi.as_view(), name="practice-stop"),
    path("tournaments/", tournaments.TournamentListApi.as_view(), name="tournament-list"),
    path("tournaments/<int:tournament_id>/", tournaments.TournamentDetailApi.as_view(), name="tournament-detail"),
    path(
        "tournaments/<int:tournament_id>/register/",
        tournaments.TournamentRegisterApi.as_view(),
        name="tournament-register",
    ),
    path(
        "tournaments/<int:tournament_id>/unregister/",
        tournaments.TournamentUnregisterApi.as_view(),
        name="tournament-unregister",
    ),
    path(
        "tournaments/<int:tournament_id>/export/", tournaments.TournamentExportApi.as_view(), name="tournament-export"
    ),
]
