"""One model spec syntax for the CLI and the API.

=====================================  ==================================================
spec                                   model
=====================================  ==================================================
``embedded``                           SmolLM2-135M-Instruct in-process (``assay[local]``)
``embedded:/path/to/model.gguf``       another GGUF file in-process
``openai:gpt-4o-mini``                 OpenAI's API (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``)
``http://127.0.0.1:8000/v1#name``      any OpenAI-compatible server, model ``name``
``https://host/v1#name``               the same over TLS
=====================================  ==================================================

With no spec, ``ASSAY_MODEL`` is used if set, else ``embedded``. For URL specs the API
key comes from ``ASSAY_LLM_API_KEY`` (then ``OPENAI_API_KEY``); local servers need none.

Credentials in a URL spec (``http://user:secret@host/v1#name``) are taken out of the URL
and sent as HTTP Basic authentication (an ``Authorization`` header) with every request;
everywhere a spec is shown or stored (the store, ``runs list/show/export``, error
messages) the password is masked as ``***``.

Example:
    >>> parse_model_spec("http://127.0.0.1:8000/v1#smollm2")
    ModelSpec(kind='openai', model='smollm2', base_url='http://127.0.0.1:8000/v1', path=None)
    >>> parse_model_spec("openai:gpt-4o-mini")
    ModelSpec(kind='openai', model='gpt-4o-mini', base_url=None, path=None)
    >>> parse_model_spec("embedded").kind
    'embedded'
    >>> s = parse_model_spec("http://me:s3cret@127.0.0.1:8000/v1#m")
    >>> s.base_url, s.display
    ('http://127.0.0.1:8000/v1', 'http://me:***@127.0.0.1:8000/v1#m')
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass, field
from typing import Any

from assay.errors import InvalidInputError
from assay.io.urls import mask_credentials, split_credentials
from assay.llm.models.base import ChatModel

__all__ = ["ModelSpec", "parse_model_spec", "load_model", "DEFAULT_MODEL_ENV"]

DEFAULT_MODEL_ENV = "ASSAY_MODEL"


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model spec: ``kind`` is ``"embedded"`` or ``"openai"``.

    ``display`` is the spec as it may be shown (password masked); ``credentials`` (user,
    password) from the URL are never part of the repr.
    """

    kind: str
    model: str
    base_url: str | None = None
    path: str | None = None
    display: str = field(default="", repr=False, compare=False)
    credentials: tuple[str, str] | None = field(default=None, repr=False, compare=False)

    def auth_headers(self) -> dict[str, str]:
        """``{"Authorization": "Basic ..."}`` for URL credentials, else ``{}``."""
        if self.credentials is None:
            return {}
        token = base64.b64encode(":".join(self.credentials).encode("utf-8")).decode("ascii")
        return {"Authorization": f"Basic {token}"}


def parse_model_spec(spec: str | None = None) -> ModelSpec:
    """Parse a model spec (see the module docstring); ``None`` means ``$ASSAY_MODEL`` or embedded.

    Raises:
        InvalidInputError: naming the spec and what is wrong with it.
    """
    if spec is None or not spec.strip():
        spec = os.environ.get(DEFAULT_MODEL_ENV) or "embedded"
    text = spec.strip()
    shown = repr(mask_credentials(spec))
    if text == "embedded":
        return ModelSpec("embedded", "embedded")
    if text.startswith("embedded:"):
        path = text[len("embedded:") :]
        if not path:
            raise InvalidInputError(
                "expected embedded:/path/to/model.gguf", source="model spec", record=shown
            )
        return ModelSpec("embedded", os.path.basename(path), path=path)
    if text.startswith("openai:"):
        model = text[len("openai:") :]
        if not model:
            raise InvalidInputError(
                "expected openai:MODEL, e.g. openai:gpt-4o-mini",
                source="model spec",
                record=shown,
            )
        return ModelSpec("openai", model)
    if text.startswith(("http://", "https://")):
        url, sep, model = text.partition("#")
        if not sep or not model:
            raise InvalidInputError(
                "a URL spec names the model after '#', e.g. http://127.0.0.1:8000/v1#model-name",
                source="model spec",
                record=shown,
            )
        bare, user, password = split_credentials(url)
        creds = (user or "", password or "") if user is not None else None
        return ModelSpec(
            "openai",
            model,
            base_url=bare.rstrip("/"),
            display=mask_credentials(text) or text,
            credentials=creds,
        )
    raise InvalidInputError(
        "expected 'embedded', 'embedded:FILE.gguf', 'openai:MODEL' or 'http(s)://HOST/v1#MODEL'",
        source="model spec",
        record=shown,
    )


def load_model(spec: str | ModelSpec | None = None, **options: Any) -> ChatModel:
    """Build the :class:`~assay.llm.models.base.ChatModel` a spec names.

    ``options`` go to the model's constructor (e.g. ``timeout=30`` for endpoints,
    ``n_ctx=4096`` for the embedded model).

    Example:
        >>> load_model("http://127.0.0.1:9/v1#m", timeout=5).identity
        'http://127.0.0.1:9/v1#m'
    """
    parsed = spec if isinstance(spec, ModelSpec) else parse_model_spec(spec)
    if parsed.kind == "embedded":
        from assay.llm.models.embedded import EmbeddedChatModel

        return EmbeddedChatModel(
            parsed.path, spec=spec if isinstance(spec, str) else "embedded", **options
        )
    from assay.llm.models.openai_compat import OpenAIChatModel

    headers = {**parsed.auth_headers(), **options.pop("default_headers", {})}
    return OpenAIChatModel(
        parsed.model,
        base_url=parsed.base_url,
        spec=(parsed.display or spec) if isinstance(spec, str) else None,
        default_headers=headers or None,
        **options,
    )
