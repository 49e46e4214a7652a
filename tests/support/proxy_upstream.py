"""A small toolkit server run as a stdio child by tests/test_proxy.py (an upstream behind a proxy)."""

from toolkit import Server

server = Server("stdio-upstream")


@server.tool
def add(a: int, b: int) -> int:
    return a + b


if __name__ == "__main__":
    server.run()
