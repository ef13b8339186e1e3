"""The wallet's REST routes (mounted under ``/api/`` in the ``api`` namespace by config/urls.py)."""

from __future__ import annotations

from django.urls import URLPattern, path

from wallet import api

urlpatterns: list[URLPattern] = [
    path("wallet/", api.WalletDetailApi.as_view(), name="wallet"),
    path("wallet/transactions/", api.WalletTransactionListApi.as_view(), name="wallet-transactions"),
    path("wallet/top-up/", api.WalletTopUpApi.as_view(), name="wallet-top-up"),
]
