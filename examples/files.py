"""A directory of files served as resources, without a way out of it.

    toolkit run examples/files.py                    # serves examples/files/
    FILES_ROOT=/srv/handbook toolkit run examples/files.py

``docs://{+path}`` maps a URI onto a file below the root: ``docs://guides/intro.md`` reads
``files/guides/intro.md``. Two guards keep a client inside the directory. The template refuses
``..`` and ``.`` segments, absolute paths and drive letters in ``path``, percent-encoded or not
(RFC 6570 decoding happens once, before the check). ``safe_join`` then resolves symbolic links
and refuses a result outside the root. Both refusals reach the client as invalid params
(``-32602``), and the message does not name the server's directories.
"""

from __future__ import annotations

import mimetypes
import os
from pathlib import Path

from toolkit import ResourceContents, ResourceError, Server, safe_join

ROOT = Path(os.environ.get("FILES_ROOT") or Path(__file__).with_name("files"))

server = Server("files", instructions="Documents as resources: read docs://index, then docs://<path>.")


@server.resource("docs://index", mime_type="application/json")
def index() -> list[str]:
    """Every document's path, for docs://{+path}."""
    return sorted(path.relative_to(ROOT).as_posix() for path in ROOT.rglob("*") if path.is_file())


@server.resource("docs://{+path}")
def document(path: str) -> ResourceContents:
    """One document, by its path below the root (``guides/intro.md``)."""
    file = safe_join(ROOT, path)
    if not file.is_file():
        raise ResourceError(f"no document {path!r}: read docs://index for the list")
    mime_type = mimetypes.guess_type(file.name)[0] or "text/plain"
    return ResourceContents(text=file.read_text(encoding="utf-8"), mime_type=mime_type)


if __name__ == "__main__":
    server.run()
