"""Fake model APIs (Anthropic Messages, OpenAI Responses, Gemini) for the real agents' tests and
benchmarks: each answers from the request alone, deterministically, and logs what it received
(a test reads what the model saw, tool results included).

What the prompt asks decides the reply (see :mod:`.script`)."""
