"""A tiny HTTP/1.1 client on asyncio streams (keep-alive, cookies), for the storyteller's posts.

The benchmark's event loop also reads the phones' sockets, so its posts must not block; the
project has no async HTTP client dependency and needs none for this.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from urllib.parse import urlencode

CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


@dataclass
class Response:
    status: int
    headers: list[tuple[str, str]]
    body: bytes
    sent_ns: int

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


@dataclass
class Client:
    """One browser: a cookie jar and one kept-alive connection to ``host:port``."""

    host: str
    port: int
    cookies: dict[str, str] = field(default_factory=dict)
    timeout: float = 30.0
    _reader: asyncio.StreamReader | None = None
    _writer: asyncio.StreamWriter | None = None

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.port}"

    def cookie_header(self) -> str:
        return "; ".join(f"{k}={v}" for k, v in self.cookies.items())

    async def _connect(self) -> None:
        self._reader, self._writer = await asyncio.open_connection(self.host, self.port)

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(OSError):
                await self._writer.wait_closed()
        self._reader = self._writer = None

    async def request(
        self,
        method: str,
        path: str,
        data: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> Response:
        body = urlencode(data).encode() if data is not None else b""
        lines = [
            f"{method} {path} HTTP/1.1",
            f"Host: {self.host}:{self.port}",
            "Connection: keep-alive",
            f"Content-Length: {len(body)}",
        ]
        if data is not None:
            lines.append("Content-Type: application/x-www-form-urlencoded")
        if self.cookies:
            lines.append(f"Cookie: {self.cookie_header()}")
        for key, value in (headers or {}).items():
            lines.append(f"{key}: {value}")
        raw = ("\r\n".join(lines) + "\r\n\r\n").encode() + body
        for attempt in (1, 2):  # a kept-alive connection the server closed: reconnect once
            if self._writer is None:
                await self._connect()
            assert self._writer is not None and self._reader is not None
            sent = time.perf_counter_ns()
            self._writer.write(raw)
            try:
                await self._writer.drain()
                return await asyncio.wait_for(self._read(sent), self.timeout)
            except (ConnectionError, asyncio.IncompleteReadError):
                await self.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    async def _read(self, sent: int) -> Response:
        assert self._reader is not None
        status_line = await self._reader.readuntil(b"\r\n")
        status = int(status_line.split()[1])
        headers: list[tuple[str, str]] = []
        while True:
            line = (await self._reader.readuntil(b"\r\n")).decode("latin-1").rstrip("\r\n")
            if not line:
                break
            key, _, value = line.partition(":")
            headers.append((key.strip(), value.strip()))
        response = Response(status, headers, b"", sent)
        if (response.header("Transfer-Encoding") or "").lower() == "chunked":
            chunks = []
            while True:
                size = int((await self._reader.readuntil(b"\r\n")).split(b";")[0], 16)
                chunk = await self._reader.readexactly(size + 2)
                if size == 0:
                    break
                chunks.append(chunk[:-2])
            response.body = b"".join(chunks)
        else:
            response.body = await self._reader.readexactly(
                int(response.header("Content-Length") or 0)
            )
        for key, value in headers:
            if key.lower() == "set-cookie":
                jar = SimpleCookie()
                jar.load(value)
                for name, morsel in jar.items():
                    self.cookies[name] = morsel.value
        if (response.header("Connection") or "").lower() == "close":
            await self.close()
        return response

    async def post(self, path: str, data: dict[str, str], htmx: bool = False) -> Response:
        headers = {"Origin": self.origin, "Referer": self.origin + path}
        if "csrftoken" in self.cookies:
            headers["X-CSRFToken"] = self.cookies["csrftoken"]
        if htmx:
            headers["HX-Request"] = "true"
        return await self.request("POST", path, data, headers)

    async def login(self, username: str, password: str) -> None:
        """The real login form: GET for the CSRF cookie, POST the credentials."""
        page = await self.request("GET", "/accounts/login/")
        if page.status != 200:
            raise RuntimeError(f"GET /accounts/login/ answered {page.status}")
        token = CSRF_INPUT.search(page.text)
        data = {
            "username": username,
            "password": password,
            "csrfmiddlewaretoken": token.group(1) if token else self.cookies.get("csrftoken", ""),
        }
        answer = await self.post("/accounts/login/", data)
        if answer.status != 302 or "sessionid" not in self.cookies:
            raise RuntimeError(f"login of {username} failed: HTTP {answer.status}")
