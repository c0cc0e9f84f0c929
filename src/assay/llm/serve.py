"""``assay serve-model``: the embedded model behind an OpenAI-compatible endpoint.

Uses llama-cpp-python's own server (FastAPI under uvicorn), so a team can point several
runs, or other tools, at one local model: ``--model http://127.0.0.1:8000/v1#smollm2-135m-instruct``.
Listens on 127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

from pathlib import Path

from assay.errors import InvalidInputError
from assay.llm.models.embedded import EMBEDDED_NAME, default_gguf_path

__all__ = ["serve", "build_app"]


def build_app(
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    model_path: Path | None = None,
    n_ctx: int = 2048,
    alias: str | None = None,
):  # type: ignore[no-untyped-def]
    """The llama-cpp-python server app for a GGUF file (default: SmolLM2-135M-Instruct)."""
    try:
        from llama_cpp.server.app import create_app
        from llama_cpp.server.settings import ModelSettings, ServerSettings
    except ImportError:
        raise InvalidInputError(
            "serve-model needs llama-cpp-python's server: pip install 'assay[local]'",
            source="serve-model",
        ) from None
    path = Path(model_path) if model_path is not None else default_gguf_path()
    if not path.is_file():
        raise InvalidInputError("no such GGUF file", source=str(path))
    name = alias or (EMBEDDED_NAME if model_path is None else path.stem)
    return create_app(
        server_settings=ServerSettings(host=host, port=port),
        model_settings=[
            ModelSettings(model=str(path), model_alias=name, n_ctx=n_ctx, verbose=False)
        ],
    )


def serve(
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    model_path: Path | None = None,
    n_ctx: int = 2048,
    alias: str | None = None,
) -> None:
    """Serve until interrupted; prints the model spec clients should use."""
    import uvicorn
    from rich.console import Console

    app = build_app(host=host, port=port, model_path=model_path, n_ctx=n_ctx, alias=alias)
    name = alias or (EMBEDDED_NAME if model_path is None else Path(model_path).stem)
    Console(stderr=True, highlight=False).print(
        f"serving [bold]{name}[/]: use --model http://{host}:{port}/v1#{name}"
    )
    uvicorn.run(app, host=host, port=port, log_level="warning")
