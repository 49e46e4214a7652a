"""An OpenAPI 3.0/3.1 document (or a FastAPI app) as a source: each operation a tool, resource or template.

Reading a document is pure and separate from calling the API, so a document loads (and its every
schema is checked, ARCHITECTURE §5) before anything is sent:

- ``schemas``: OpenAPI Schema Objects → JSON Schema 2020-12 (3.0's ``nullable``, boolean
  ``exclusiveMinimum``, ``example``, ...); component ``$ref``s become ``$defs``; external ``$ref``s
  and reference cycles are refused (``OpenAPIDocumentError``);
- ``requests``: one operation's parameters (path, query, header, cookie, with their ``style`` and
  ``explode``) and request body as a tool's input schema, and a call's arguments back into an HTTP
  request (``RequestPlan``), names clashing across locations disambiguated;
- ``operations``: the document read into operation records (name, title, tags, input and natural
  output schema); ``routes``: which operation becomes a tool, a resource, a template or nothing
  (``RouteMap``), names sanitised to the spec's tool-name rule and collisions resolved;
- ``credentials``: what the configuration (never the model) adds to every request: ``Bearer``,
  ``APIKey``, ``Basic``;
- ``sending``: one HTTP exchange through httpx, bounded (a deadline, a response size, redirects
  kept on the base URL's origin, error bodies cut to an excerpt);
- ``source``: ``OpenAPISource``, the ``Source`` the registry merges, and its components.

httpx is imported by ``sending`` and ``source`` only, so ``import toolkit`` never loads it; the
facade (``toolkit._openapi``: ``OpenAPI``, ``Server.from_openapi``, ``Server.from_fastapi``)
imports this wing when a document is used. Like every source, it never imports the transports,
the auth wing or the store, and the engine never imports it.
"""
