"""The game screen, its HTTP snapshot and the no-JavaScript seat forms."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from tables import views

urlpatterns: list[URLPattern | URLResolver] = [
    path("tables/<int:table_id>/", views.table_page, name="table"),
    path("tables/<int:table_id>/details/", views.table_details, name="table-details"),
    path("tables/<int:table_id>/recall.json", views.table_recall, name="table-recall"),
    path("tables/<int:table_id>/snapshot.json", views.table_snapshot, name="table-snapshot"),
    path("tables/<int:table_id>/seat/<slug:action>/", views.seat_action, name="table-seat"),
]
