"""Typed errors: library code raises these, the CLI maps each to one line and an exit code."""


class DisklabError(Exception):
    """Base of every error the user should see as one clear line."""

    exit_code = 1


class UserError(DisklabError):
    """Bad input: an unknown suite, a bad option, a target that cannot be used."""

    exit_code = 2


class SafetyError(DisklabError):
    """Refused because the operation could destroy data or disturb a device in use."""

    exit_code = 3


class FioError(DisklabError):
    """fio is missing, too old, or failed while running a test."""

    exit_code = 4


class StoreError(DisklabError):
    """The results store cannot be opened, read or written."""

    exit_code = 5


class DatabaseError(DisklabError):
    """PostgreSQL's server binaries or pgbench are missing, or the private server or pgbench failed."""

    exit_code = 6
