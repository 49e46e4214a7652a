"""How each protocol version sees toolkit's natural results: the one wing for era shaping.

Tools hold natural schemas and produce natural values (SEP-2106). This wing derives,
deterministically, what a client of a given version receives (ARCHITECTURE §3):

| natural output              | 2026-07-28 | 2025-06-18, 2025-11-25                         | 2024-11-05, 2025-03-26 |
|-----------------------------|------------|------------------------------------------------|------------------------|
| object                      | natural    | natural, root ``type: "object"``, root $ref inlined  | none      |
| union of objects            | natural    | natural plus root ``type: "object"``            | no structured fields |
| anything else               | natural    | wrapped in ``{"result": ...}``                  | no structured fields |
| no output schema (*)        | the value  | an object as it is, anything else wrapped       | no structured fields |

plus the envelope fields only the modern era has (``resultType``, ``ttlMs``/``cacheScope``,
``serverInfo`` in ``_meta``) and the content blocks older versions cannot carry.

(*) A ``ToolResult``'s own ``structured_content`` on a tool without ``output_schema=``: no
``outputSchema`` is advertised, but the value the tool chose to send is sent; 2025-06-18 and
2025-11-25 define ``structuredContent`` as an object, so a non-object goes as ``{"result": v}``.

One module per subject; callers import the wing (``from . import _compat``) and use the names
re-exported here:

- ``envelope``: what every result and list entry carries per version: optional fields by the
  version that added them (``_FIELDS_SINCE``, ``fields_for``, ``listing``), the modern envelope
  (``envelop``, ``cacheable``), ``server_info``, and the errors whose code depends on the era
  (``method_not_found``, ``resource_not_found``, ``missing_capability``).
- ``schemas``: output and input schemas for 2025-06-18/2025-11-25 (``wrap_schema``,
  ``legacy_output_schema``, no boolean ``properties``), and telling the wrapper from a natural
  schema (``is_wrapper_schema``).
- ``blocks``: content blocks per version (``_BLOCK_SINCE``; text stand-ins for the ones a
  version lacks); blocks another server sent, kept as they came (``WireBlock``).
- ``tools``: a tool per version: its ``tools/list`` entry (``tool_shape``, ``ToolShapes``) and
  its ``CallToolResult`` (``call_result``) and the inverse, from a result any era's server sent
  back to the natural outcome (``natural_outcome``), and when such a result may be sent on as it
  came (``as_sent``), to a caller of any version (``members_for``); the tools page's per-era view of one result
  (``era_shapes``, ``era_results``, ``reshape_result``).
- ``elicitation``: URL-mode elicitation per version (``url_params``, ``completion_notification``,
  ``url_input_requests``: error -32042 as a modern round, ``url_mode_refused``, ``carries_url_mode``,
  ``accepts_url_mode``).
- ``tasks``: tool calls run as tasks, in the 2025-11-25 experimental form and the 2026-07-28
  extension (capabilities, task views, the task errors, ``related_task``).
"""

from .._types import TASKS_EXTENSION
from .blocks import WireBlock, content_blocks
from .elicitation import (
    accepts_url_mode,
    carries_url_mode,
    completion_notification,
    url_input_requests,
    url_mode_refused,
    url_params,
)
from .envelope import (
    cacheable,
    envelop,
    error_http_status,
    fields_for,
    listing,
    method_not_found,
    missing_capability,
    resource_not_found,
    server_info,
)
from .schemas import RESULT_KEY, is_wrapper_schema, legacy_output_schema, wrap_schema
from .tasks import (
    EXPERIMENTAL_TASKS_VERSION,
    RELATED_TASK_KEY,
    cancel_ended_acknowledged,
    cancel_result,
    created_task,
    extension_missing,
    finished_status,
    related_task,
    task_capabilities,
    task_form,
    task_not_allowed,
    task_notifies,
    task_required,
    task_support,
    task_view,
    wants_extension,
)
from .tools import (
    ToolShape,
    ToolShapes,
    as_sent,
    call_result,
    era_results,
    era_shapes,
    json_text,
    members_for,
    natural_outcome,
    plain_text_only,
    reshape_result,
    result_shape,
    tool_shape,
)

__all__ = [
    "as_sent",
    "members_for",
    "plain_text_only",
    "url_mode_refused",
    "url_params",
    "url_input_requests",
    "completion_notification",
    "carries_url_mode",
    "accepts_url_mode",
    "EXPERIMENTAL_TASKS_VERSION",
    "RELATED_TASK_KEY",
    "RESULT_KEY",
    "TASKS_EXTENSION",
    "ToolShape",
    "ToolShapes",
    "WireBlock",
    "cacheable",
    "call_result",
    "cancel_ended_acknowledged",
    "cancel_result",
    "content_blocks",
    "created_task",
    "era_results",
    "era_shapes",
    "extension_missing",
    "fields_for",
    "envelop",
    "error_http_status",
    "finished_status",
    "is_wrapper_schema",
    "json_text",
    "legacy_output_schema",
    "listing",
    "method_not_found",
    "missing_capability",
    "natural_outcome",
    "related_task",
    "reshape_result",
    "resource_not_found",
    "result_shape",
    "server_info",
    "task_capabilities",
    "task_form",
    "task_not_allowed",
    "task_notifies",
    "task_required",
    "task_support",
    "task_view",
    "tool_shape",
    "wants_extension",
    "wrap_schema",
]
