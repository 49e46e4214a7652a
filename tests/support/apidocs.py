"""Real, published OpenAPI documents, installed by ``scripts/apidocs --install-only`` (pinned in
``interop/apidocs/package-lock.json``, under ``.interop/apidocs``):

    path = apidocs.github()          # GitHub's REST API, OpenAPI 3.0.3, ~1,200 operations
    path = apidocs.github_webhooks() # GitHub's webhooks, OpenAPI 3.1.0
    path = apidocs.petstore("3.1")   # the Petstore, "3.0" or "3.1"
    paths = apidocs.examples("3.0")  # every example document of that version (the Petstore's package)

Without them the test skips, or fails under ``TOOLKIT_TESTS_STRICT=1`` (``scripts/test`` installs them
first). Nothing here is written by hand or fetched at test time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from tests.support.redis_rig import missing  # skip, or fail under TOOLKIT_TESTS_STRICT: every rig's rule

ROOT = Path(__file__).resolve().parents[2] / ".interop" / "apidocs" / "node_modules"
INSTALL_HINT = "run scripts/apidocs --install-only"


def _installed(relative: str) -> Path:
    path = ROOT / relative
    if not path.is_file():
        missing(f"the OpenAPI document {relative} is not installed: {INSTALL_HINT}")
    return path


def github() -> Path:
    """GitHub's REST API description (``@octokit/openapi``), OpenAPI 3.0.3."""
    return _installed("@octokit/openapi/generated/api.github.com.json")


def github_webhooks() -> Path:
    """GitHub's webhooks description (``@octokit/openapi-webhooks``), OpenAPI 3.1.0."""
    return _installed("@octokit/openapi-webhooks/generated/api.github.com.json")


def petstore(version: Literal["3.0", "3.1"]) -> Path:
    """The Petstore document of that OpenAPI version (``@readme/oas-examples``)."""
    return _installed(f"@readme/oas-examples/{version}/json/petstore.json")


def examples(version: Literal["3.0", "3.1"]) -> list[Path]:
    """Every JSON example document of that OpenAPI version in ``@readme/oas-examples``, sorted."""
    folder = _installed(f"@readme/oas-examples/{version}/json/petstore.json").parent
    return sorted(folder.rglob("*.json"))
