"""The players' web outside the game screen: lobby, accounts and wallet."""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.urls import URLPattern, URLResolver, path

from lobby import protection, views

urlpatterns: list[URLPattern | URLResolver] = [
    path("", views.lobby, name="lobby"),
    path("lobby/tables.json", views.lobby_tables, name="lobby-tables"),
    path("simulator/", views.simulator, name="simulator"),
    path("rules/", views.rules, name="rules"),
    path("signup/", views.sign_up, name="signup"),
    path(
        "login/",
        auth_views.LoginView.as_view(
            template_name="lobby/login.html",
            redirect_authenticated_user=True,
            authentication_form=protection.PlayerLoginForm,
        ),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("wallet/", views.wallet, name="wallet"),
    path("wallet/top-up/", views.top_up, name="wallet-top-up"),
    path("responsible-gaming/", protection.responsible_gaming, name="responsible-gaming"),
    path("responsible-gaming/session.json", protection.session_json, name="responsible-gaming-session"),
]
