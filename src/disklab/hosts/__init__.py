"""Many hosts through fio's own client/server mode: naming servers, checking them, serving, merging their results."""
