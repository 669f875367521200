"""What a request can get wrong, wherever it is found: the web layer answers each with
its status and a JSON body naming the field (``web.middleware.errors_middleware``)."""

from __future__ import annotations


class ValidationError(ValueError):
    """A malformed (400) or invalid (422) request, or another 4xx; ``field`` says where,
    e.g. ``moves[17].cell``."""

    def __init__(self, field: str | None, message: str, status: int = 422):
        super().__init__(message)
        self.field = field
        self.status = status


class Conflict(ValidationError):
    """The request contradicts what is stored (409): another body under a used id, a
    puzzle id registered with other givens."""

    def __init__(self, field: str | None, message: str):
        super().__init__(field, message, 409)
