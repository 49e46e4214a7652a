"""``python server.py`` that never serves: say so when the process ends, rather than nothing.

A script that makes a ``Server`` and registers tools, but has no ``server.run()`` (or has it in
no ``if __name__ == "__main__":`` block that runs), exits at once with status 0: an MCP host that
started it shows only "Connection closed". toolkit cannot change the exit status from there, but
at interpreter exit it can say what happened and what to write.
"""

from __future__ import annotations

import atexit
import os
import sys
import weakref
from typing import Any, Protocol


class Served(Protocol):
    served: bool
    registry: Any

    @property
    def name(self) -> str: ...


def made_by_script(depth: int) -> bool:
    """Whether the code ``depth`` frames above the caller is the script Python was started with."""
    return bool(sys._getframe(depth + 1).f_globals.get("__name__") == "__main__")


def say_if_never_served(server: Served) -> None:
    """At exit, if ``server`` has components and was never served (nor crashed the script), say so on stderr."""
    ref = weakref.ref(server)
    script = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "the script"

    def check() -> None:
        made = ref()
        if made is None or made.served or not _offers(made.registry) or hasattr(sys, "last_value"):
            return  # served, empty, or ended by an uncaught exception (its traceback says why)
        print(
            f"toolkit: {script} made Server {made.name!r} but never served it, so it exited at once (an MCP "
            'client sees only "Connection closed"). End the file with\n\n    if __name__ == "__main__":\n'
            f"        server.run()\n\n(with your Server's variable), or start it with `toolkit run {script}`.",
            file=sys.stderr,
        )

    atexit.register(check)


def _offers(registry: Any) -> bool:
    return bool(registry.tools or registry.resources or registry.templates or registry.prompts)
