"""Resource templates: RFC 6570 matching, values decoded once, and no way out of a directory.

A hostile review found ``file:///docs/{folder}/{name}`` matching ``file:///docs/../secret.txt``
and handing the function ``folder=".."``. These tests read through every template form toolkit
accepts, with plain, encoded and double-encoded ``.``, ``..``, ``/`` and ``\\``:

- over Streamable HTTP, ``toolkit run tests/support/templates_app.py`` (both eras), whose
  naive functions join values onto a directory with a secret one level up;
- over stdio, ``toolkit run examples/files.py``, the documented safe way (a symbolic link out
  of the root included);
- and at unit level, each form's match.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.http_support import connect, era_client
from tests.support.processes import REPO, TOOLKIT
from tests.support.stdio import StdioClient

from toolkit import RegistrationError, Server, safe_join
from toolkit._errors import UnsafeValue
from toolkit._uritemplate import MAX_URI_LENGTH, UriTemplate

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
APP = REPO / "tests" / "support" / "templates_app.py"
REFUSED = "refused"
NOT_FOUND = "not found"
SECRET = "THE SECRET"

# One-segment variables: file:///docs/{folder}/{name}.
SEGMENT_ATTACKS = [
    "file:///docs/../secret.txt",  # the review's case
    "file:///docs/%2e%2e/secret.txt",
    "file:///docs/%2E%2E/secret.txt",
    "file:///docs/.%2e/secret.txt",
    "file:///docs/%2e./secret.txt",
    "file:///docs/./..%2fsecret.txt",
    "file:///docs/guides/..%2f..%2fsecret.txt",
    "file:///docs/guides/..%2F..%2Fsecret.txt",
    "file:///docs/guides/..%5c..%5csecret.txt",
    "file:///docs/guides/..\\..\\secret.txt",
    "file:///docs/guides/%2e%2e%5c%2e%2e%5csecret.txt",
    "file:///docs/guides/..%00",
    "file:///docs/guides/%2fsecret.txt",
]
# Multi-segment variables: file:///tree/{+path}.
TREE_ATTACKS = [
    "file:///tree/../secret.txt",
    "file:///tree/guides/../../secret.txt",
    "file:///tree/%2e%2e/secret.txt",
    "file:///tree/guides%2f..%2f..%2fsecret.txt",
    "file:///tree/..\\secret.txt",
    "file:///tree/..%5csecret.txt",
    "file:///tree/guides/./../../secret.txt",
    "file:///tree//etc/passwd",
    "file:///tree/%2fetc%2fpasswd",
    "file:///tree/\\etc\\passwd",
    "file:///tree/C:%5cWindows%5cwin.ini",
    "file:///tree/guides/intro.md%00.txt",
]
# Decoded once, these are names with a literal "%2e" in them: they stay inside (and do not exist).
DOUBLE_ENCODED = [
    "file:///docs/%252e%252e/secret.txt",
    "file:///docs/guides/..%252f..%252fsecret.txt",
    "file:///tree/%252e%252e/secret.txt",
    "file:///tree/guides%252f..%252f..%252fsecret.txt",
    "file:///tree/..%255csecret.txt",
]
FORMS: list[tuple[str, Any]] = [
    ("forms://simple/plain", {"a": "plain"}),
    ("forms://simple/hello%20world", {"a": "hello world"}),  # decoded once
    ("forms://simple/a%252Fb", {"a": "a%2Fb"}),  # ...and only once
    ("forms://simple/caf%C3%A9", {"a": "café"}),
    ("forms://simple/a%2Fb", REFUSED),
    ("forms://simple/a%5Cb", REFUSED),
    ("forms://simple/..", REFUSED),
    ("forms://simple/.", REFUSED),
    ("forms://simple/%ff", REFUSED),  # not UTF-8
    ("forms://simple/a/b", NOT_FOUND),  # one segment
    ("forms://pair/1,2", {"a": "1", "b": "2"}),
    ("forms://pair/1,..", REFUSED),
    ("forms://reserved/a/b/c.txt", {"a": "a/b/c.txt"}),
    ("forms://reserved/a/../b", REFUSED),
    ("forms://reserved/a/%2E%2E/b", REFUSED),
    ("forms://reserved//root", REFUSED),
    ("forms://fragment/x#a/b", {"a": "a/b"}),
    ("forms://fragment/x#../b", REFUSED),
    ("forms://wildcard/a/b", {"a": "a/b"}),
    ("forms://wildcard/a/..", REFUSED),
    ("forms://segments/a/b", {"a": ["a", "b"]}),
    ("forms://segments", {}),
    ("forms://segments/a/..", REFUSED),
    ("forms://segments/a/%2e%2e", REFUSED),
    ("forms://segments/a%2Fb", REFUSED),  # an item is one segment
    ("forms://segment/a", {"a": "a"}),
    ("forms://segment/..", REFUSED),
    ("forms://segment/a/b", NOT_FOUND),
    ("forms://label/x.json", {"a": "json"}),
    ("forms://params/x;a=1;b=2", {"a": "1", "b": "2"}),
    ("forms://params/x;a=1", {"a": "1"}),
    ("forms://params/x;a=..", REFUSED),
    ("forms://query/x?a=cats&b=3", {"a": "cats", "b": 3}),
    ("forms://query/x?b=3&a=cats", {"a": "cats", "b": 3}),
    ("forms://query/x?a=cats", {"a": "cats", "b": 1}),
    ("forms://query/x?a=a%2Fb", {"a": "a/b", "b": 1}),
    ("forms://query/x?a=..%2Fsecret", REFUSED),
    ("forms://query/x?a=%2Fetc%2Fpasswd", REFUSED),
    ("forms://query/x?b=3", NOT_FOUND),  # a has no default
    ("forms://query/x?a=1&other=2", NOT_FOUND),
    ("forms://continued/x?fixed=1&a=z", {"a": "z"}),
    ("forms://prefix/abc", {"a": "abc"}),
    ("forms://prefix/abcd", NOT_FOUND),
    ("forms://open/a/../b", {"a": "a/../b"}),  # allow_traversal=True
]


def read_outcome(reply: dict[str, Any], version: str) -> Any:
    """What a read gave: the function's values, or REFUSED / NOT_FOUND / the error."""
    if "result" in reply:
        return json.loads(reply["result"]["contents"][0]["text"])
    error = reply["error"]
    if error["message"].startswith("Resource not found"):
        assert error["code"] == (-32602 if version == MODERN else -32002)
        return NOT_FOUND
    if error["code"] == -32602 and "URI variable" in error["message"]:
        return REFUSED
    return error


# --- over Streamable HTTP: every form, and the naive functions, in both eras --------------------------


@pytest.fixture
def templates_url(mcp_cli: Callable[..., Any]) -> str:
    url: str = mcp_cli(APP).url
    return url


async def _reads(url: str, version: str, uris: list[str]) -> list[dict[str, Any]]:
    async with connect(url) as http:
        client = await era_client(http, version)
        replies = []
        for uri in uris:
            reply = await client.request("resources/read", {"uri": uri})
            replies.append(reply.message)
        return replies


@pytest.mark.parametrize("version", [MODERN, LEGACY])
async def test_every_form_over_http(templates_url: str, version: str) -> None:
    replies = await _reads(templates_url, version, [uri for uri, _ in FORMS])
    outcomes = {uri: read_outcome(reply, version) for (uri, _), reply in zip(FORMS, replies, strict=True)}
    assert outcomes == dict(FORMS)


@pytest.mark.parametrize("version", [MODERN, LEGACY])
async def test_no_traversal_reaches_a_naive_function(templates_url: str, version: str) -> None:
    attacks = SEGMENT_ATTACKS + TREE_ATTACKS
    replies = await _reads(templates_url, version, attacks)
    for uri, reply in zip(attacks, replies, strict=True):
        assert SECRET not in json.dumps(reply), uri
        assert reply["error"]["code"] == -32602, (uri, reply)
        assert "URI variable" in reply["error"]["message"] and "refused" in reply["error"]["message"], reply
    # Decoded once, a double-encoded ".." is a file name: the function looks it up inside and finds nothing.
    replies = await _reads(templates_url, version, DOUBLE_ENCODED)
    for uri, reply in zip(DOUBLE_ENCODED, replies, strict=True):
        assert SECRET not in json.dumps(reply), uri
        assert reply["error"]["code"] == -32603, (uri, reply)
    inside = await _reads(templates_url, version, ["file:///docs/guides/intro.md", "file:///tree/guides/intro.md"])
    assert [reply["result"]["contents"][0]["text"] for reply in inside] == ["inside", "inside"]


async def test_the_refusal_names_the_variable(templates_url: str) -> None:
    (reply,) = await _reads(templates_url, MODERN, ["file:///docs/../secret.txt"])
    assert reply["error"] == {
        "code": -32602,
        "message": "Invalid params: URI variable 'folder' is one path segment, and '..' is refused there "
        "('.', '..', '/' and '\\' are not allowed once decoded)",
        "data": {"uri": "file:///docs/../secret.txt"},
    }


# --- over stdio: examples/files.py, the documented safe way --------------------------------------------


@pytest.fixture
def files_root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "guides").mkdir(parents=True)
    (root / "guides" / "intro.md").write_text("# Intro\n")
    (root / "spaced name.txt").write_text("spaced")
    (tmp_path / "secret.txt").write_text(SECRET)
    (root / "escape").symlink_to(tmp_path)  # a link out of the root
    (root / "inner").symlink_to(root / "guides")  # a link that stays inside
    return root


@pytest.mark.parametrize("version", [MODERN, LEGACY])
def test_the_files_example_stays_inside_its_directory(files_root: Path, version: str) -> None:
    env = {"PATH": str(Path(TOOLKIT).parent), "FILES_ROOT": str(files_root)}
    with StdioClient([TOOLKIT, "run", REPO / "examples" / "files.py"], env=env) as client:
        client.use_era(version)

        def read(uri: str) -> dict[str, Any]:
            return client.request("resources/read", {"uri": uri})

        index = json.loads(read("docs://index")["result"]["contents"][0]["text"])
        assert "guides/intro.md" in index and "spaced name.txt" in index
        intro = read("docs://guides/intro.md")["result"]["contents"][0]
        assert intro["text"] == "# Intro\n" and intro["uri"] == "docs://guides/intro.md"
        assert read("docs://spaced%20name.txt")["result"]["contents"][0]["text"] == "spaced"
        assert read("docs://inner/intro.md")["result"]["contents"][0]["text"] == "# Intro\n"
        for uri in [
            "docs://../secret.txt",
            "docs://%2e%2e/secret.txt",
            "docs://guides/..%2f..%2fsecret.txt",
            "docs://..%5csecret.txt",
            "docs:///etc/passwd",
            "docs://%2Fetc%2Fpasswd",
            "docs://escape/secret.txt",  # the symbolic link: safe_join refuses it
        ]:
            reply = read(uri)
            assert SECRET not in json.dumps(reply), uri
            assert reply["error"]["code"] == -32602, (uri, reply)
            assert str(files_root) not in reply["error"]["message"], "the server's paths stay private"
        missing = read("docs://%252e%252e/secret.txt")  # a file named "%2e%2e/secret.txt": not there
        assert missing["error"]["code"] == -32603 and SECRET not in json.dumps(missing)
        assert "no document '%2e%2e/secret.txt'" in missing["error"]["message"]
        client.assert_all_valid(version)


# --- unit level -----------------------------------------------------------------------------------------


def test_safe_join(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    assert safe_join(tmp_path, "a", "b.txt") == tmp_path.resolve() / "a" / "b.txt"
    assert safe_join(tmp_path, "a/../a/b.txt") == tmp_path.resolve() / "a" / "b.txt"  # stays inside: fine
    assert safe_join(tmp_path) == tmp_path.resolve()
    for parts in (["../x"], ["a", "..", ".."], ["/etc/passwd"], ["a/../../x"]):
        with pytest.raises(ValueError, match="outside the resource's directory"):
            safe_join(tmp_path, *parts)
    with pytest.raises(ValueError, match="NUL"):
        safe_join(tmp_path, "a\x00b")


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        ("m://{x", "unbalanced brace"),
        ("m://x}", "unbalanced brace"),
        ("m://{}", "is not a variable"),
        ("m://{x-y}", "is not a variable"),
        ("m://{x:0}", "is not a variable"),
        ("m://{x:3*}", "is not a variable"),
        ("m://{=x}", "reserved by RFC 6570"),
        ("m://{|x}", "reserved by RFC 6570"),
        ("m://{x}/{x}", "appears twice"),
    ],
)
def test_a_template_rfc_6570_does_not_allow_is_refused_naming_the_function(template: str, problem: str) -> None:
    server = Server("bad")
    with pytest.raises(RegistrationError, match=problem) as raised:

        @server.resource(template)
        def broken(x: str = "") -> str:
            return x

    assert "broken()" in str(raised.value) and template in str(raised.value)


def test_allow_traversal_is_for_templates_only() -> None:
    with pytest.raises(RegistrationError, match="allow_traversal= is for templates"):

        @Server("x").resource("m://fixed", allow_traversal=True)
        def fixed() -> str:
            return ""


def test_a_refusal_gives_way_to_a_later_template_that_takes_the_uri() -> None:
    server = Server("order")

    @server.resource("m://{a}/{b}")
    def strict(a: str, b: str) -> str:
        return "strict"

    @server.resource("m://{+path}", allow_traversal=True)
    def opted_out(path: str) -> str:
        return "opted out"

    template, values = server.registry.find_resource("m://../x") or (None, None)
    assert template is not None and template.name == "opted_out" and values == {"path": "../x"}


def test_a_list_parameter_gets_the_items_converted() -> None:
    template = UriTemplate("m://{ids}", lists=["ids"])
    assert template.match("m://1,2,3") == {"ids": ["1", "2", "3"]}
    server = Server("lists")

    @server.resource("m://sum/{ids}")
    def total(ids: list[int]) -> int:
        return sum(ids)

    found = server.registry.find_resource("m://sum/1,2,3")
    assert found is not None and found[1] == {"ids": ["1", "2", "3"]}


def test_a_very_long_uri_matches_no_template() -> None:
    template = UriTemplate("m://{+a}/{+b}/end")
    assert template.match("m://" + "x/" * (MAX_URI_LENGTH // 2)) is None
    assert template.match("m://x/y/end") == {"a": "x", "b": "y"}


def test_unsafe_value_is_a_value_error() -> None:
    """The engine answers a function's ValueError with -32602; a refusal belongs there too."""
    with pytest.raises(ValueError, match="'a'"):
        UriTemplate("m://{a}").match("m://..")
    assert issubclass(UnsafeValue, ValueError)
