"""Extensions: add capabilities, methods and hooks to a server without touching its engine.

```python
from toolkit import Server
from toolkit.extensions import Extension

class Stamp(Extension):
    id = "com.example/stamp"

    def capabilities(self, capabilities, version):
        capabilities.setdefault("experimental", {})[self.id] = {}

server = Server("stamped")
server.add_extension(Stamp())
```

``Extension`` is the base class (override what you add: ``capabilities``, ``methods``,
``wants_call`` + ``around_call``, ``tools_list_entry``, ``sources``, ``attach_store``,
``detach_store``, ``shutdown``, ``on_bus``); ``Method`` describes an extra request method
(its eras, the ``params`` field the modern ``Mcp-Name`` header mirrors). An extension is never
handed the ``Server``: ``bind`` gives it an ``ExtensionHost``. The tasks extension is built on
this API. See docs/extensions.md.
"""

from ._extensions.base import CallNext, Extension, ExtensionHost, Handler, ToolCall
from ._methods import BOTH, LEGACY, MODERN, Method

__all__ = ["BOTH", "LEGACY", "MODERN", "CallNext", "Extension", "ExtensionHost", "Handler", "Method", "ToolCall"]
