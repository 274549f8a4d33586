"""The embedded SQLite results store."""
