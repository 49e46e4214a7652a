"""Where a client keeps its tokens and registrations: ``TokenStorage``, in memory or in a file."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Protocol

from ..._auth.oauth import OAuthError


class TokenStorage(Protocol):
    """Where tokens and client registrations are kept: JSON-able documents under string keys.

    Keys are ``token:<resource>`` and ``client:<issuer>``; values are what ``Token.to_dict`` and
    ``ClientRegistration.to_dict`` give. They hold secrets: keep them where only the user can read.
    """

    async def get(self, key: str) -> dict[str, Any] | None: ...

    async def set(self, key: str, value: dict[str, Any]) -> None: ...

    async def delete(self, key: str) -> None: ...


class MemoryTokenStorage:
    """Tokens for as long as this object lives (the default: one process, one login)."""

    def __init__(self) -> None:
        self._items: dict[str, dict[str, Any]] = {}

    async def get(self, key: str) -> dict[str, Any] | None:
        return self._items.get(key)

    async def set(self, key: str, value: dict[str, Any]) -> None:
        self._items[key] = value

    async def delete(self, key: str) -> None:
        self._items.pop(key, None)


class FileTokenStorage:
    """Tokens in one JSON file, readable by its owner only (mode 0600), replaced whole on each write.

    A write goes to a temporary file in the same folder, then ``os.replace``: a reader (another
    client sharing the file) never sees half a file. The folder is created 0700 if missing.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()

    async def get(self, key: str) -> dict[str, Any] | None:
        value = (await asyncio.to_thread(self._read)).get(key)
        return value if isinstance(value, dict) else None

    async def set(self, key: str, value: dict[str, Any]) -> None:
        await asyncio.to_thread(self._update, key, value)

    async def delete(self, key: str) -> None:
        await asyncio.to_thread(self._update, key, None)

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise OAuthError(f"cannot read the token file {self.path}: {exc}") from None
        return data if isinstance(data, dict) else {}

    def _update(self, key: str, value: dict[str, Any] | None) -> None:
        data = self._read()
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)  # mode 0600
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                json.dump(data, file)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
