"""The Template A file protocol: request/response models, parsing, rendering, naming."""

from __future__ import annotations

from nexusd.protocol.models import (
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
