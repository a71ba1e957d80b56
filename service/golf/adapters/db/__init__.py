"""SQL storage: SQLModel tables, the repository, URLs and drivers, migrations."""
