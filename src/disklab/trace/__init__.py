"""Block I/O traces: capture, the iolog format, summaries and synthetic suites, replay preparation."""

# The suite name that asks `disklab run` for a replay; here, so that run can tell without loading the trace modules.
REPLAY_SUITE = "replay"
