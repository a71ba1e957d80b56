"""Transports, storage and settings around the API layer."""
