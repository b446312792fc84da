"""A tiny HTTP client (stdlib only) with the test client's interface: .get/.post -> response."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any


class HttpResponse:
    def __init__(self, status: int, headers: Any, body: bytes) -> None:
        self.status_code = status
        self.headers = headers
        self.data = body

    def get_json(self) -> Any:
        return json.loads(self.data) if self.data else None


class HttpClient:
    def __init__(self, base_url: str, timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout

    def request(self, method: str, path: str, body: Any = None, headers: dict | None = None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base_url + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return HttpResponse(response.status, response.headers, response.read())
        except urllib.error.HTTPError as error:
            return HttpResponse(error.code, error.headers, error.read())

    def get(self, path: str, headers: dict | None = None) -> HttpResponse:
        return self.request("GET", path, headers=headers)

    def post(self, path: str, json: Any = None, headers: dict | None = None) -> HttpResponse:
        return self.request("POST", path, json, headers)
