"""The race's domain: one race and its ranks, the daily deal, ratings, streaks, boards and
replays of stored runs. No sockets and no event loop here; the room hub and the runtime
build on it."""
