"""Database benchmarks on the disk under test: a private PostgreSQL and its pgbench (M3)."""
