"""Routes of the staff report pages (mounted at ``/backoffice/``)."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from backoffice import views

app_name = "backoffice"

urlpatterns: list[URLPattern | URLResolver] = [
    path("", views.dashboard, name="dashboard"),
    path("status/", views.status, name="status"),
    path("rake/", views.rake_report, name="rake"),
    path("rake.csv", views.rake_report_csv, name="rake-csv"),
    path("config-changes/", views.config_changes, name="config-changes"),
    path("audit/", views.audit_report, name="audit"),
    path("audit/<str:kind>.<str:fmt>", views.audit_export, name="audit-export"),
]
