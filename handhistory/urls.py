"""Routes of the hand history (mounted at ``/history/``)."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from handhistory import views

app_name = "handhistory"

urlpatterns: list[URLPattern | URLResolver] = [
    path("", views.my_hands, name="my-hands"),
    path("hands/<int:hand_id>/", views.hand_detail, name="hand"),
    path("provably-fair/", views.provably_fair, name="provably-fair"),
    path("provably-fair/algorithm/", views.provably_fair_algorithm, name="provably-fair-algorithm"),
    path("commitments/", views.commitments, name="commitments"),
    path("commitments/anchors.json", views.anchors_feed, name="anchors"),
    path("hands/<int:hand_id>/export.json", views.hand_export, name="hand-export"),
    path("holdem/<int:hand_id>/", views.holdem_hand_detail, name="holdem-hand"),
    path("holdem/<int:hand_id>/hand.phh", views.holdem_hand_phh, name="holdem-phh"),
    path("holdem/<int:hand_id>/export.json", views.holdem_hand_export, name="holdem-export"),
]
