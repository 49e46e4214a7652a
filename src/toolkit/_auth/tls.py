"""One TLS context for the requests toolkit's authorization code makes itself (a provider's token
endpoint, a key set).

httpx makes a new ``ssl.SSLContext`` for every client it creates, parsing certifi's CA bundle
each time: about 20 ms of CPU, more than everything else a login costs toolkit. The context is
made once per process and shared: an ``SSLContext`` serves any number of connections.
"""

from __future__ import annotations

import functools
import ssl


@functools.cache
def shared_tls(*, trust_env: bool) -> ssl.SSLContext:
    """httpx's default context (certifi's CAs; with ``trust_env``, ``SSL_CERT_FILE``/``SSL_CERT_DIR``), made once."""
    import httpx  # noqa: PLC0415 - the auth extra

    return httpx.create_ssl_context(trust_env=trust_env)
