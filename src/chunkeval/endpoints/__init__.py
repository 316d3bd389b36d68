"""OpenAI-compatible HTTP endpoints: one configuration grammar and one client for every use.

A team's own model usually sits behind an OpenAI-compatible API (vLLM, Hugging Face TEI,
Ollama, LM Studio, llama.cpp's server, or a hosted service). chunkeval reaches it through
two modules, shared by the embeddings embedder and the question generator:

- :mod:`~chunkeval.endpoints.config`: ``openai(model='NAME', base_url='http://HOST:PORT/v1',
  api_key_env='VAR', ...)`` parsed into an :class:`EndpointConfig`; its identity is the model
  name and the endpoint's host, and the key is read from the environment when a request is
  made, never stored;
- :mod:`~chunkeval.endpoints.client`: :class:`EndpointClient`, requests with a bounded number
  in flight, timeouts, retries with exponential backoff on 429, 5xx and connection failures
  (honouring ``Retry-After``), and one-line errors naming the endpoint, never the key.

The HTTP stack is ``httpx`` (the optional extra ``endpoint``).
"""

from chunkeval.endpoints.client import EndpointClient, RequestRefused
from chunkeval.endpoints.config import EndpointConfig, parse_endpoint

__all__ = ["EndpointClient", "EndpointConfig", "RequestRefused", "parse_endpoint"]
