"""The schema wing: type hints in, checked JSON Schema 2020-12 out, all at registration time.

- ``hints``: a hint becomes its natural schema (pydantic's generator, post-processed); refs,
  ``$defs`` and root inlining.
- ``unions``: which unions may be ``oneOf`` (branches provably disjoint); everything else ``anyOf``.
- ``corejson``: the fast path, a direct pydantic core-schema → JSON Schema translator for the
  common hints (``hints`` falls back to pydantic where it says ``Unsupported``).
- ``keywords``: the JSON Schema keyword tables, written once (which keywords hold schemas,
  which hold data, which are references).
- ``checks``: the registration-time checks every schema passes (metaschema, same-document
  refs, depth and size bounds) and the compiled validators.
- ``docstrings``: parameter descriptions from Google/NumPy docstrings.
- ``elicitation``: the flat form schemas ``ctx.elicit`` sends.

Nothing in this wing knows about protocol versions, requests or transports.
"""
