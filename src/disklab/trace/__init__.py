"""Block I/O traces: capture, the iolog format, summaries and synthetic suites, replay preparation."""
