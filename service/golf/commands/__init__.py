"""Subcommands of the ``golf`` console command."""
