"""Staff tools on top of the Django admin: reports and table management."""
