"""The fake ``claude`` CLI for tests, its extra captures, and the fixtures that drive it."""
