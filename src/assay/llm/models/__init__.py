"""Chat models: the ``ChatModel`` protocol, an OpenAI-compatible client, the embedded default.

Pick one with a spec string (see :mod:`assay.llm.models.spec`)::

    from assay.llm.models import load_model
    model = load_model("http://127.0.0.1:8000/v1#smollm2-135m-instruct")
"""

from assay.llm.models.base import (
    ERROR_KINDS,
    GENERATION_PARAMS,
    CallError,
    ChatModel,
    ChatResponse,
    Message,
    Usage,
)
from assay.llm.models.spec import ModelSpec, load_model, parse_model_spec

__all__ = [
    "ERROR_KINDS",
    "GENERATION_PARAMS",
    "CallError",
    "ChatModel",
    "ChatResponse",
    "Message",
    "ModelSpec",
    "Usage",
    "load_model",
    "parse_model_spec",
]
