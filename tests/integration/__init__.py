"""Opt-in tests against the real claude CLI, and the loopback Anthropic API stand-in they use."""
