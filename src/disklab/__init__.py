"""disklab: a storage benchmark lab driving fio, with every result kept in SQLite."""

__version__ = "0.1.0"
