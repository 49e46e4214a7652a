"""The upstream of tests/test_proxy_relay.py: over stdio as a child, over HTTP in the test's process."""

from toolkit import Server, Text, ToolError, ToolResult

server = Server("relay-upstream")


@server.tool
def nums(n: int) -> list[int]:
    return list(range(n))


@server.tool
def point() -> dict[str, int]:
    return {"x": 1, "y": 2}


@server.tool
def add(a: int, b: int) -> int:
    return a + b


@server.tool
def nothing() -> None:
    return None


@server.tool
def fails() -> str:
    raise ToolError("upstream says no")


@server.tool
def own_text() -> ToolResult:
    return ToolResult(content=[Text("see the data")], structured_content={"k": 1})


@server.tool
def accents() -> dict[str, str]:
    return {"café": "naïve ☕", "quote": 'a "b" \\ c'}


@server.tool
def big() -> list[int]:
    return list(range(60_000))  # over 256 KiB of JSON twice: written in pieces


if __name__ == "__main__":
    server.run()
