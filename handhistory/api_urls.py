"""The hand history's REST routes (mounted under ``/api/`` in the ``api`` namespace by
config/urls.py)."""

from __future__ import annotations

from django.urls import URLPattern, path

from handhistory import api

urlpatterns: list[URLPattern] = [
    path("hands/", api.HandListApi.as_view(), name="hand-list"),
    path("hands/<int:hand_id>/", api.HandDetailApi.as_view(), name="hand-detail"),
    path("hands/<int:hand_id>/entries/", api.HandEntryListApi.as_view(), name="hand-entries"),
]
