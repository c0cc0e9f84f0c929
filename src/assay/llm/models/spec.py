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
import inspect
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from assay.errors import InvalidInputError
from assay.io.urls import mask_credentials, split_credentials
from assay.llm.models.base import ChatModel

__all__ = [
    "ModelSpec",
    "parse_model_spec",
    "load_model",
    "canonical_model_name",
    "served_model",
    "model_options",
    "DEFAULT_MODEL_ENV",
    "EMBEDDED_N_CTX",
    "spec_loglik_support",
]

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
        if not urlsplit(bare).hostname:
            raise InvalidInputError(
                "a URL spec needs a host, e.g. http://127.0.0.1:8000/v1#model-name",
                source="model spec",
                record=shown,
            )
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


def canonical_model_name(spec: str) -> str:
    """The one name a model is stored and matched under, however the spec was typed.

    Surrounding spaces go; a URL's password is masked (``user:***@``), its scheme and host
    are lower-cased, a default port (80, 443) and a trailing ``/`` are dropped;
    ``embedded:`` naming the bundled SmolLM2 file is ``embedded``, another GGUF file is
    named by its absolute path. A model name after ``#`` is kept as typed: only the server
    knows whether two names are one model, and its answers say (:func:`served_model`,
    which the store keeps beside this name). Text that is not a model spec (a
    classifier's name such as ``"tree"``) is kept, password masked.

    Example:
        >>> canonical_model_name(" HTTP://me:s3cret@LocalHost:80/v1/#m ")
        'http://me:***@localhost/v1#m'
        >>> canonical_model_name("http://localhost/v1#m")
        'http://localhost/v1#m'
        >>> canonical_model_name("tree")
        'tree'
    """
    text = str(spec).strip()
    scheme, sep, rest = text.partition("://")
    if sep and scheme.lower() in ("http", "https"):
        text = f"{scheme.lower()}://{rest}"
    try:
        parsed = parse_model_spec(text) if text else None
    except InvalidInputError:
        parsed = None
    if parsed is None:
        return mask_credentials(text) or ""
    if parsed.kind == "embedded":
        return _canonical_embedded(parsed.path)
    if parsed.base_url is None:
        return f"openai:{parsed.model}"
    url = urlsplit((mask_credentials(text) or text).partition("#")[0])
    userinfo = url.netloc.rpartition("@")[0]
    host = (url.hostname or "").lower()
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    default = {"http": 80, "https": 443}.get(url.scheme.lower())
    port = "" if url.port in (None, default) else f":{url.port}"
    user = f"{userinfo}@" if userinfo else ""
    path = url.path.rstrip("/")
    return f"{url.scheme.lower()}://{user}{host}{port}{path}#{parsed.model}"


def _canonical_embedded(path: str | None) -> str:
    if path is None:
        return "embedded"
    full = os.path.abspath(os.path.expanduser(path))
    try:
        from assay.llm.models.embedded import default_gguf_path

        if os.path.samefile(full, default_gguf_path()):
            return "embedded"
    except (InvalidInputError, OSError):
        pass
    return f"embedded:{full}"


def served_model(model: Any, raws: Iterable[Any]) -> str | None:
    """The canonical name of the model that answered, as the answers say it.

    A model that knows its own name without a call says it (``served_name``: the
    embedded model's ``embedded#<GGUF file name>``). Otherwise the ``model`` field of the
    raw chat-completion answers (``raws``: the answers of a run, fresh or from the cache)
    names it; put in the spec's place after ``#`` (``openai:`` for OpenAI), the endpoint
    kept: a server that answers ``#smollm2`` as ``smollm2-135m-instruct`` gives
    ``http://host/v1#smollm2-135m-instruct``. When the answers name several models, the
    most frequent wins (the first seen on a tie). ``None`` when nothing says: no answer,
    or answers without a usable ``model`` (not text, control characters, over 200
    characters).

    Example:
        >>> class M:
        ...     spec = "http://me:s3cret@Host:80/v1#smollm2"
        >>> served_model(M(), [{"model": "smollm2-135m-instruct"}, None])
        'http://me:***@host/v1#smollm2-135m-instruct'
        >>> served_model(M(), [{"choices": []}]) is None
        True
    """
    known = getattr(model, "served_name", None)
    if isinstance(known, str) and known:
        return known
    names: dict[str, int] = {}
    for raw in raws:
        name = raw.get("model") if isinstance(raw, dict) else None
        if isinstance(name, str) and name.strip() and name.isprintable() and len(name) <= 200:
            names[name.strip()] = names.get(name.strip(), 0) + 1
    if not names:
        return None
    name = mask_credentials(max(names, key=lambda n: names[n])) or ""  # most frequent, first
    spec = str(getattr(model, "spec", None) or "")
    key = canonical_model_name(spec)
    if key.startswith(("http://", "https://")) and "#" in key:
        return f"{key.rpartition('#')[0]}#{name}"
    if key.startswith("openai:"):
        return f"openai:{name}"
    return name


#: The context window the embedded model gets from :func:`load_model` (the suites' and the
#: judge's prompts need more than llama.cpp's default).
EMBEDDED_N_CTX = 4096

# Arguments of the model classes that come from the spec itself, not from options.
_FROM_SPEC = {"self", "model", "model_path", "base_url", "spec"}
# Options every kind honours although its class does not take them: the per-attempt
# timeout is enforced by the runner for in-process models.
_RUNNER_HONOURED = {"timeout"}


def model_options() -> dict[str, tuple[str, ...]]:
    """Every option :func:`load_model` accepts -> the model kinds that honour it.

    Example:
        >>> model_options()["n_ctx"], model_options()["timeout"]
        (('embedded',), ('embedded', 'openai'))
    """
    from assay.llm.models.embedded import EmbeddedChatModel
    from assay.llm.models.openai_compat import OpenAIChatModel

    out: dict[str, set[str]] = {name: {"embedded", "openai"} for name in _RUNNER_HONOURED}
    for kind, cls in (("embedded", EmbeddedChatModel), ("openai", OpenAIChatModel)):
        for name in inspect.signature(cls.__init__).parameters:
            if name not in _FROM_SPEC:
                out.setdefault(name, set()).add(kind)
    return {name: tuple(sorted(kinds)) for name, kinds in sorted(out.items())}


def load_model(spec: str | ModelSpec | None = None, **options: Any) -> ChatModel:
    """Build the :class:`~assay.llm.models.base.ChatModel` a spec names; the one place a
    spec is parsed.

    Every option of every kind is accepted here (:func:`model_options`: ``timeout``,
    ``n_ctx``, ``api_key``, ``http_backend``, ...); ``None`` means "not given". An option
    the spec's kind cannot honour (``n_ctx`` for an endpoint, ``api_key`` for the embedded
    model) is refused with an :class:`~assay.errors.InvalidInputError` naming the option
    and the kind, as is an unknown one. ``timeout`` is honoured by every kind (for the
    embedded model, the runner enforces it per attempt). The embedded model gets a
    context window of :data:`EMBEDDED_N_CTX` tokens unless ``n_ctx`` says otherwise.

    Example:
        >>> load_model("http://127.0.0.1:9/v1#m", timeout=5, n_ctx=None).identity
        'http://127.0.0.1:9/v1#m'
        >>> load_model("http://127.0.0.1:9/v1#m", n_ctx=4096)
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: model option: field 'n_ctx': the openai kind \
(an OpenAI-compatible endpoint) does not take it (taken by: embedded)
    """
    parsed = spec if isinstance(spec, ModelSpec) else parse_model_spec(spec)
    given = {k: v for k, v in options.items() if v is not None}
    _check_options(parsed.kind, given)
    shown = (parsed.display or spec) if isinstance(spec, str) else None
    if parsed.kind == "embedded":
        from assay.llm.models.embedded import EmbeddedChatModel

        given.pop("timeout", None)  # enforced by the runner
        given.setdefault("n_ctx", EMBEDDED_N_CTX)
        return EmbeddedChatModel(parsed.path, spec=shown or "embedded", **given)
    from assay.llm.models.openai_compat import OpenAIChatModel

    headers = {**parsed.auth_headers(), **given.pop("default_headers", {})}
    return OpenAIChatModel(
        parsed.model,
        base_url=parsed.base_url,
        spec=shown,
        default_headers=headers or None,
        **given,
    )


def spec_loglik_support(spec: str | None, loglik: str | None = None) -> str | None:
    """What the model a spec names can score (:func:`~assay.llm.models.base.loglik_support`),
    told without loading it: ``"full"`` for the embedded model, else what the model option
    ``loglik`` gives (``--dry-run`` shows the prompts of the answer mode a run would use).

    Example:
        >>> spec_loglik_support("embedded"), spec_loglik_support("http://h/v1#m", "chat")
        ('full', 'labels')
    """
    from assay.llm.models.openai_loglik import LOGLIK_MODES

    if parse_model_spec(spec).kind == "embedded":
        return "full"
    return LOGLIK_MODES.get(loglik or "")


_KIND_NAMES = {"openai": "an OpenAI-compatible endpoint", "embedded": "the in-process model"}


def _check_options(kind: str, given: dict[str, Any]) -> None:
    known = model_options()
    for name in given:
        if name not in known:
            raise InvalidInputError(
                f"unknown; model options are {', '.join(known)}",
                source="model option",
                field=name,
            )
        if kind not in known[name]:
            raise InvalidInputError(
                f"the {kind} kind ({_KIND_NAMES[kind]}) does not take it "
                f"(taken by: {', '.join(known[name])})",
                source="model option",
                field=name,
            )
