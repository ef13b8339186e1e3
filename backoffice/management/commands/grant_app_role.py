"""``manage.py grant_app_role ROLE``: give the application's database role least privilege.

Run it as the database owner (the role that runs ``migrate``), after every ``migrate``.
The app then connects as ROLE, which (security audit F6):

- reads and writes the tables it must, and may INSERT but never UPDATE or DELETE the ledger
  (``wallet_transfer``, ``wallet_ledgerentry``);
- may never DELETE hand records (``tables_hand``, ``tables_entry``, the Hold'em hands
  ``tables_holdemhand`` and ``tables_holdemhandplayer``, the conditions audit log), and
  triggers it cannot switch off refuse any change to a finished hand of either game
  (tables migrations 0003, 0017, 0019);
- holds no TRUNCATE, TRIGGER or REFERENCES privilege, only reads ``django_migrations``,
  owns no table (so cannot ALTER one or disable its triggers) and is not a superuser;
- has no right on the partitions of entries and ledger legs (Django lists the partitioned
  parents only; PostgreSQL reaches partitions through their parent without one), and may
  call ``partition_add_range``, the owner's function that adds the next partitions
  (config/infra/partitions.py; Celery beat runs that upkeep as this role).

``--create`` creates ROLE (LOGIN, no other attribute) when it does not exist; set its
password yourself (``ALTER ROLE ... PASSWORD``). PostgreSQL only.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, transaction
from psycopg import sql

from config.infra.partitions import UPKEEP_FUNCTION

APPEND_ONLY = ("wallet_transfer", "wallet_ledgerentry")
NEVER_DELETED = (
    "tables_hand",
    "tables_entry",
    "tables_holdemhand",
    "tables_holdemhandplayer",
    "tables_tableconfigchange",
    "jackpots_jackpotevent",
)
READ_ONLY = ("django_migrations",)


def privileges_for(table: str) -> str:
    """The privileges the app role gets on ``table``."""
    if table in APPEND_ONLY:
        return "SELECT, INSERT"
    if table in NEVER_DELETED:
        return "SELECT, INSERT, UPDATE"
    if table in READ_ONLY:
        return "SELECT"
    return "SELECT, INSERT, UPDATE, DELETE"


class Command(BaseCommand):
    help = "Grant the application's database role least privilege (run as the owner, after migrate)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("role", help="the role the application connects as")
        parser.add_argument("--create", action="store_true", help="create the role (LOGIN) if it does not exist")

    def handle(self, *args: Any, **options: Any) -> None:
        if connection.vendor != "postgresql":
            raise CommandError("grant_app_role is for PostgreSQL (the embedded SQLite default has no roles)")
        role: str = options["role"]
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT rolsuper, rolbypassrls, rolcreaterole FROM pg_roles WHERE rolname = %s", [role])
            found = cursor.fetchone()
            if found is None:
                if not options["create"]:
                    raise CommandError(f"role {role!r} does not exist (add --create, or CREATE ROLE it first)")
                cursor.execute(
                    sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)).as_string(cursor.connection)
                )
            elif any(found):
                raise CommandError(f"role {role!r} is a superuser or may bypass security: give the app a plain role")
            cursor.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tableowner = %s", [role]
            )
            owned = [row[0] for row in cursor.fetchall()]
            if owned:
                raise CommandError(f"role {role!r} owns {', '.join(owned[:5])}: the owner runs migrate, not the app")
            ident = sql.Identifier(role)
            statements = [
                sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(
                    sql.Identifier(connection.settings_dict["NAME"]), ident
                ),
                sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(ident),
                sql.SQL("REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {}").format(ident),
                sql.SQL("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {}").format(ident),
            ]
            tables = sorted(connection.introspection.table_names(cursor))
            statements += [
                sql.SQL("GRANT {} ON TABLE {} TO {}").format(
                    sql.SQL(privileges_for(table)), sql.Identifier(table), ident
                )
                for table in tables
            ]
            # The partitions' upkeep (config/infra/partitions.py) runs in Celery beat, as this role.
            cursor.execute("SELECT to_regprocedure(%s) IS NOT NULL", [f"{UPKEEP_FUNCTION}(text, bigint, bigint)"])
            upkeep = cursor.fetchone()
            if upkeep and upkeep[0]:
                statements.append(
                    sql.SQL("GRANT EXECUTE ON FUNCTION {}(text, bigint, bigint) TO {}").format(
                        sql.Identifier(UPKEEP_FUNCTION), ident
                    )
                )
            for statement in statements:
                cursor.execute(statement.as_string(cursor.connection))
        self.stdout.write(
            f"Granted {role} least privilege on {len(tables)} tables (ledger append-only, hands never deleted)."
        )
