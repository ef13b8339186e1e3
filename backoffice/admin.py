"""Admin-site customisations: the back-office name and a "Reports" box on the admin home."""

from __future__ import annotations

from django.contrib import admin

admin.site.site_header = "WiderPoker back-office"
admin.site.site_title = "WiderPoker back-office"
admin.site.index_title = "Tables, wallets and reports"
admin.site.index_template = "backoffice/admin_index.html"
