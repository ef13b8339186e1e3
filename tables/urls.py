"""The game screen, its HTTP snapshot and the no-JavaScript seat forms."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from tables import views
from tables.holdem.practice import views as practice_views
from tables.tournaments import views as tournament_views

urlpatterns: list[URLPattern | URLResolver] = [
    path("practice/", practice_views.practice_setup, name="practice-setup"),
    path("practice/leaderboard/", practice_views.practice_leaderboard, name="practice-leaderboard"),
    path("practice/<int:game_id>/", practice_views.practice_game, name="practice-game"),
    path("practice/<int:game_id>/banner.json", practice_views.practice_banner, name="practice-banner"),
    path("practice/<int:game_id>/stop/", practice_views.practice_stop, name="practice-stop"),
    path("practice/<int:game_id>/summary/", practice_views.practice_summary, name="practice-summary"),
    path("tables/<int:table_id>/", views.table_page, name="table"),
    path("tables/<int:table_id>/details/", views.table_details, name="table-details"),
    path("tables/<int:table_id>/recall.json", views.table_recall, name="table-recall"),
    path("tables/<int:table_id>/snapshot.json", views.table_snapshot, name="table-snapshot"),
    path("tables/<int:table_id>/seat/<slug:action>/", views.seat_action, name="table-seat"),
    path("tournaments/", tournament_views.tournament_list, name="tournaments"),
    path("tournaments/<int:tournament_id>/", tournament_views.tournament_page, name="tournament"),
    path("tournaments/<int:tournament_id>/state.json", tournament_views.tournament_state, name="tournament-state"),
    path("tournaments/<int:tournament_id>/export.json", tournament_views.tournament_export, name="tournament-export"),
    path(
        "tournaments/<int:tournament_id>/<slug:action>/", tournament_views.tournament_action, name="tournament-action"
    ),
]
