"""Usernames are unique in any case, in the database too.

The sign-up form refuses "ALICE" when "alice" exists, but two sign-ups racing with "alice"
and "Alice" would both pass the form (security audit F8); this index makes the database
refuse the second, which sign-up then reports as a form error.
"""

from __future__ import annotations

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("auth", "0012_alter_user_first_name_max_length")]

    operations = [
        migrations.RunSQL(
            sql="CREATE UNIQUE INDEX lobby_username_lower_unique ON auth_user (lower(username));",
            reverse_sql="DROP INDEX lobby_username_lower_unique;",
        )
    ]
