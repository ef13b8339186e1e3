"""The house's admin helpers, below the games (issue 21, "the rooms enforced"): the list
filters that keep practice games apart (``filters``), the admin's own form pieces
(``forms``) and the secrets no admin page, lookup or ordering reveals (``secrets``). The
games' admin pages (``tables/<game>/admin.py``) and the house's (tables/admin/) build on
them; the games never import the admin adapter package ``tables.admin``."""
