"""Retry an LLM request only when the server says it is busy or broken (429, 5xx), never on a timeout.

openai's own retries also repeat timed-out requests, so a hung endpoint cost two full read timeouts;
here a timeout or a refused connection fails at once, and a busy answer is tried again after its
`Retry-After` (capped) or a short exponential back-off with jitter (workers rate-limited at the same
moment do not all come back at the same moment).
"""

from __future__ import annotations

import asyncio
import random
import time

import httpx

RETRY_STATUS = {429, 500, 502, 503, 504}
MAX_WAIT = 10.0


def _wait(response: httpx.Response, attempt: int) -> float:
    try:
        return min(float(response.headers.get("retry-after", "")), MAX_WAIT)
    except ValueError:
        return min(0.5 * 2 ** attempt, MAX_WAIT) * random.uniform(0.5, 1.0)


class RetryOnBusy(httpx.HTTPTransport):
    def __init__(self, retries: int = 1, **kwargs):
        super().__init__(**kwargs)
        self.retries = retries

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        for attempt in range(self.retries + 1):
            response = super().handle_request(request)
            if response.status_code not in RETRY_STATUS or attempt == self.retries:
                return response
            response.close()
            time.sleep(_wait(response, attempt))
        return response  # not reached


class AsyncRetryOnBusy(httpx.AsyncHTTPTransport):
    def __init__(self, retries: int = 1, **kwargs):
        super().__init__(**kwargs)
        self.retries = retries

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        for attempt in range(self.retries + 1):
            response = await super().handle_async_request(request)
            if response.status_code not in RETRY_STATUS or attempt == self.retries:
                return response
            await response.aclose()
            await asyncio.sleep(_wait(response, attempt))
        return response  # not reached
