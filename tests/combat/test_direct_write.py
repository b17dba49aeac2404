"""A push written straight to uvicorn's sans-I/O websocket (combat.consumers._write_direct):
the same frames as uvicorn's ASGI ``send`` would write, in order with them, on the socket's
own compression context; nothing written when the socket is not plainly open and taking
bytes (the ASGI ``send`` then waits or raises, as it always did).

A real ``WebSocketsSansIOProtocol`` on a stand-in transport, and a ``websockets`` client
protocol reading what it wrote (permessage-deflate negotiated, as browsers offer it).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from uvicorn.config import Config
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from uvicorn.server import ServerState
from websockets.client import ClientProtocol
from websockets.extensions.permessage_deflate import ClientPerMessageDeflateFactory
from websockets.frames import Opcode
from websockets.uri import parse_uri

from combat.consumers import FRAMES, _write_direct
from combat.hub import SHARED
from combat.websocket_protocol import DEFLATE_LEVEL, SceneWebSocketProtocol


class Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.written: list[bytes] = []
        self.closing = False

    def write(self, data: bytes) -> None:
        self.written.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 50000)}.get(
            name, default
        )

    def take(self) -> bytes:
        data, self.written = b"".join(self.written), []
        return data


async def _open(
    kind: type[WebSocketsSansIOProtocol] = WebSocketsSansIOProtocol, **deflate: Any
) -> tuple[WebSocketsSansIOProtocol, Transport, ClientProtocol, Any]:
    """An accepted socket: the server protocol, its transport, the phone, the ASGI send."""
    sends: asyncio.Future = asyncio.get_running_loop().create_future()

    async def app(scope: dict, receive: Any, send: Any) -> None:
        await receive()  # websocket.connect
        await send({"type": "websocket.accept"})
        sends.set_result(send)
        while (await receive())["type"] != "websocket.disconnect":
            pass

    config = Config(app=app, ws="websockets-sansio", lifespan="off", log_level="warning")
    config.load()
    server = kind(config, ServerState(), {})
    transport = Transport()
    server.connection_made(transport)
    phone = ClientProtocol(
        parse_uri("ws://127.0.0.1:8000/ws/"),
        extensions=[ClientPerMessageDeflateFactory(client_max_window_bits=True, **deflate)],
    )
    phone.send_request(phone.connect())
    server.data_received(b"".join(phone.data_to_send()))
    send = await asyncio.wait_for(sends, 5)
    phone.receive_data(transport.take())
    assert [type(e).__name__ for e in phone.events_received()] == ["Response"]
    assert phone.extensions, "permessage-deflate negotiated"
    return server, transport, phone, send


def _texts(phone: ClientProtocol, transport: Transport) -> list[str]:
    phone.receive_data(transport.take())
    frames = phone.events_received()
    assert all(f.opcode is Opcode.TEXT for f in frames)
    return [f.data.decode() for f in frames]


async def test_direct_writes_and_asgi_sends_reach_the_phone_in_order() -> None:
    server, transport, phone, send = await _open()
    html = '<div id="players" data-seq="{}">' + "é a board " * 200 + "</div>"
    await send({"type": "websocket.send", "text": html.format(1)})
    assert _write_direct(server, html.format(2))
    assert _write_direct(server, html.format(3))
    await send({"type": "websocket.send", "text": html.format(4)})
    assert _texts(phone, transport) == [html.format(n) for n in (1, 2, 3, 4)]
    server.connection_lost(None)
    await asyncio.sleep(0)


async def test_a_direct_write_is_the_frame_websockets_would_write() -> None:
    """Two sockets in the same state: one written directly, the other through websockets'
    ``send_text``; the same bytes, push after push (the context carried over)."""
    (one, one_transport, *_), (two, two_transport, *_) = [await _open() for _ in range(2)]
    for n in range(3):
        html = f'<div id="own" data-seq="{n}">' + "a row " * 100 + "</div>"
        assert _write_direct(one, html)
        two.conn.send_text(html.encode())
        two_transport.write(b"".join(two.conn.data_to_send()))
        assert one_transport.take() == two_transport.take()
    for server in (one, two):
        server.connection_lost(None)
    await asyncio.sleep(0)


async def test_direct_writes_without_context_takeover_reach_the_phone() -> None:
    """A phone that asks the server not to carry its context over: each push alone."""
    server, transport, phone, send = await _open(server_no_context_takeover=True)
    assert server.conn.extensions[0].local_no_context_takeover
    html = '<div id="own" data-seq="{}">' + "a row " * 100 + "</div>"
    for n in range(3):
        assert _write_direct(server, html.format(n))
    await send({"type": "websocket.send", "text": html.format(3)})
    assert _texts(phone, transport) == [html.format(n) for n in range(4)]
    server.connection_lost(None)
    await asyncio.sleep(0)


async def test_a_shared_push_after_an_asgi_send_without_context_takeover() -> None:
    """Without context takeover websockets' ``send`` drops the socket's deflater after each
    message (``del encoder``): a shared push that follows is written all the same (each
    message starts afresh anyway), not refused by the hub's dispatch for a missing one."""
    server, transport, phone, send = await _open(server_no_context_takeover=True)
    html = '<div id="own" data-seq="{}">' + "a row " * 100 + "</div>"
    await send({"type": "websocket.send", "text": html.format(0)})  # the ASGI way
    shared = {"type": "live.fragment", "html": html.format(1), SHARED: True}
    assert _write_direct(server, shared["html"], shared)
    assert _write_direct(server, html.format(2))
    await send({"type": "websocket.send", "text": html.format(3)})
    assert _texts(phone, transport) == [html.format(n) for n in range(4)]
    server.connection_lost(None)
    await asyncio.sleep(0)


async def test_nothing_is_written_directly_to_a_full_transport() -> None:
    server, transport, phone, _send = await _open()
    server.pause_writing()  # a phone that does not read: the ASGI send waits for it
    assert not _write_direct(server, "<p>1</p>")
    assert transport.written == []
    server.resume_writing()
    assert _write_direct(server, "<p>2</p>")
    assert _texts(phone, transport) == ["<p>2</p>"]
    server.connection_lost(None)
    await asyncio.sleep(0)


@pytest.mark.parametrize("end", ["closed", "lost"])
async def test_nothing_is_written_directly_to_a_socket_closed_or_gone(end: str) -> None:
    server, transport, _phone, send = await _open()
    if end == "closed":
        await send({"type": "websocket.close", "code": 1000})
    else:
        server.connection_lost(None)
    transport.take()
    assert not _write_direct(server, "<p>late</p>")
    assert transport.written == []
    if end == "closed":
        server.connection_lost(None)
    await asyncio.sleep(0)


async def test_the_served_protocol_deflates_at_its_level_and_the_phone_reads_it() -> None:
    server, transport, phone, send = await _open(SceneWebSocketProtocol)
    (deflate,) = server.conn.extensions
    assert deflate.compress_settings == {"memLevel": 5, "level": DEFLATE_LEVEL}
    html = '<div id="players" data-seq="{}">' + "a player's row " * 150 + "</div>"
    await send({"type": "websocket.send", "text": html.format(1)})
    assert _write_direct(server, html.format(2))
    first, second = transport.take(), None
    phone.receive_data(first)
    assert _write_direct(server, html.format(3))
    second = transport.take()
    phone.receive_data(second)
    assert [f.data.decode() for f in phone.events_received()] == [html.format(n) for n in (1, 2, 3)]
    assert len(second) < 200 < len(html)  # the context carries over from push to push
    server.connection_lost(None)
    await asyncio.sleep(0)


async def test_a_push_for_several_sockets_is_compressed_once_and_each_phone_reads_it() -> None:
    """One frame for every socket (a context of its own), between pushes each socket
    compresses on its own context: each phone reads every push right."""
    sockets = [await _open(SceneWebSocketProtocol) for _ in range(2)]
    row = "a player's row " * 150
    own = '<div id="own" data-seq="{}">' + row + "</div>"
    players = {
        "type": "live.fragment",
        "html": '<div id="players">' + row + "x</div>",
        SHARED: True,
    }
    for n, (server, _transport, _phone, _send) in enumerate(sockets):
        assert _write_direct(server, own.format(n))
    wrote = []
    for server, transport, phone, _send in sockets:
        phone.receive_data(transport.take())
        assert _write_direct(server, players["html"], players)
        wrote.append(transport.take())
        phone.receive_data(wrote[-1])
    assert wrote[0] == wrote[1] and len(players[FRAMES]) == 1
    for n, (server, transport, phone, send) in enumerate(sockets):
        assert _write_direct(server, own.format(n + 10))  # its own context, afresh
        await send({"type": "websocket.send", "text": own.format(n + 20)})  # the ASGI way
        phone.receive_data(transport.take())
        texts = [f.data.decode() for f in phone.events_received()]
        assert texts == [own.format(n), players["html"], own.format(n + 10), own.format(n + 20)]
        server.connection_lost(None)
    await asyncio.sleep(0)


async def test_after_shared_pushes_the_asgi_way_compresses_in_a_fresh_context() -> None:
    """After shared frames the socket's deflater starts afresh when its next message comes
    (combat.consumers._FreshContext), whichever way that message goes: websockets' own
    ``send`` (a full transport's fallback) included."""
    server, transport, phone, send = await _open(SceneWebSocketProtocol)
    row = "a player's row " * 150
    own = '<div id="own" data-seq="{}">' + row + "</div>"
    assert _write_direct(server, own.format(1))
    for n in (2, 3):
        shared = {"type": "live.fragment", "html": f'<div id="players">{n}{row}</div>'}
        shared[SHARED] = True
        assert _write_direct(server, shared["html"], shared)
    await send({"type": "websocket.send", "text": own.format(4)})  # the ASGI way
    assert _write_direct(server, own.format(5))
    texts = _texts(phone, transport)
    assert texts[0] == own.format(1) and texts[3:] == [own.format(4), own.format(5)]
    assert texts[1].startswith('<div id="players">2') and texts[2].startswith('<div id="players">3')
    server.connection_lost(None)
    await asyncio.sleep(0)


@pytest.mark.django_db
def test_serve_runs_the_scene_protocol(monkeypatch: pytest.MonkeyPatch) -> None:
    from django.core.management import call_command

    from combat.hub import HEAP
    from combat.management.commands import serve

    ran: dict[str, Any] = {}
    monkeypatch.setattr(serve.uvicorn, "run", lambda app, **kwargs: ran.update(kwargs))
    monkeypatch.setattr(HEAP, "start", lambda: None)  # the test process keeps its collector
    intervals: list[float] = []
    monkeypatch.setattr(serve.sys, "setswitchinterval", intervals.append)  # the test's own stays
    call_command("serve", "--no-demo-logins", "--host", "127.0.0.1")
    assert ran["ws"] is SceneWebSocketProtocol
    assert intervals == [0.001]  # a thread waiting to go on under a scene's lock waits 1 ms


@pytest.mark.django_db
def test_serve_refuses_a_switch_interval_below_a_microsecond(settings) -> None:
    from django.core.management import CommandError, call_command

    settings.LIVE_SWITCH_INTERVAL = 0
    with pytest.raises(CommandError, match="LIVE_SWITCH_INTERVAL_US"):
        call_command("serve", "--no-demo-logins", "--host", "127.0.0.1")
