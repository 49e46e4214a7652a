"""Reusable test helpers: a raw stdio JSON-RPC client, server subprocesses, app loading."""
