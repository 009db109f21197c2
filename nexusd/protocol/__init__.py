"""The Template A file protocol (PROTOCOL.md): models, parsing, rendering, naming.

Modules: `naming` (which files are requests, response names, timestamps),
`parse` (`parse_request`: any of the three forms -> PlanRequest or ProtocolError),
`render` (`render_response`, `read_response_meta`, `parse_response`, `render_request`,
`error_info`, `error_sections`), `files` (`create_request_file`). The form parsers
(`frontmatter_form`, `template_a`, `freeform`) share `fields`; YAML goes through `yamlio`.
"""

from __future__ import annotations

from nexusd.protocol.documents import (
    STANDARD_SECTIONS,
    ErrorInfo,
    PlanRequest,
    PlanResponse,
    Questions,
    ResponseMeta,
    Section,
)

__all__ = [
    "STANDARD_SECTIONS",
    "ErrorInfo",
    "PlanRequest",
    "PlanResponse",
    "Questions",
    "ResponseMeta",
    "Section",
]
