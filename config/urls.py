"""HTTP routes: the players' web, the REST API with its OpenAPI schema, and the admin."""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path, re_path
from django.views.i18n import JavaScriptCatalog
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from config.api import api_not_found
from handhistory import api_urls as handhistory_api
from lobby.api import TokenApi
from tables import api_urls as tables_api
from wallet import api_urls as wallet_api

# The REST API: each app owns its routes; one ``api`` namespace, the URL names unchanged.
API_ROUTES = [*tables_api.urlpatterns, *wallet_api.urlpatterns, *handhistory_api.urlpatterns]

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/auth/token/", TokenApi.as_view(), name="api-token"),
    path("api/", include((API_ROUTES, "api"))),
    re_path(r"^api/(?P<unmatched>.*)$", api_not_found, name="api-not-found"),
    # The header's language switch (POST, CSRF) and the translations of static/js.
    path("i18n/", include("django.conf.urls.i18n")),
    path("jsi18n/", JavaScriptCatalog.as_view(), name="javascript-catalog"),
    path("history/", include("handhistory.urls")),
    path("backoffice/", include("backoffice.urls")),
    path("", include("tables.urls")),
    path("", include("lobby.urls")),
]
