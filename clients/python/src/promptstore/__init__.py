"""Promptstore's Python client: prompts read from memory, kept current by the service's change-event stream.

Standard library only; Python 3.9+; thread-safe (one instance per process is the intended use).

>>> from promptstore import fill
>>> fill("You help customers of {{ company }}.", {"company": "Acme"})
'You help customers of Acme.'

Against a running server::

    from promptstore import Promptstore

    with Promptstore(base_url="http://127.0.0.1:3000", api_key="ps_...") as client:
        prompt = client.get("support-bot")          # asks once, then from memory
        system = client.fill(prompt, {"company": "Acme", "language": "French"})
"""

from ._datasets import FILE_FORMATS, DatasetExport, Datasets
from ._evaluations import EvaluationResult, Evaluations, Threshold
from ._rollout import rollout_arm, rollout_bucket
from .client import MODES, Fallback, Promptstore
from .errors import (
    AuthenticationError,
    BadRequestError,
    ClientClosedError,
    ConflictError,
    MissingVariablesError,
    NetworkError,
    NotFoundError,
    PermissionDeniedError,
    PromptstoreError,
    RateLimitError,
    ServerError,
    TimeoutError,
    UnexpectedVariablesError,
)
from .types import (
    CreatePromptInput,
    ModelSettings,
    Prompt,
    PromptChange,
    ReadKey,
    ResponseFormat,
    SaveVersionInput,
    Section,
    SectionInput,
)
from .variables import fill, variables_of

__version__ = "0.1.0"

__all__ = [
    "EvaluationResult",
    "Threshold",
    "Promptstore",
    "Datasets",
    "Evaluations",
    "DatasetExport",
    "FILE_FORMATS",
    "MODES",
    "Fallback",
    "Prompt",
    "Section",
    "PromptChange",
    "ReadKey",
    "CreatePromptInput",
    "ModelSettings",
    "ResponseFormat",
    "SaveVersionInput",
    "SectionInput",
    "fill",
    "variables_of",
    "rollout_bucket",
    "rollout_arm",
    "PromptstoreError",
    "BadRequestError",
    "AuthenticationError",
    "PermissionDeniedError",
    "NotFoundError",
    "ConflictError",
    "RateLimitError",
    "ServerError",
    "NetworkError",
    "TimeoutError",
    "ClientClosedError",
    "MissingVariablesError",
    "UnexpectedVariablesError",
    "__version__",
]
