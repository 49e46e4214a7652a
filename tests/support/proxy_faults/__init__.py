"""Upstream servers that misbehave, and the gateway that proxies them, for tests/test_proxy_faults.py."""
