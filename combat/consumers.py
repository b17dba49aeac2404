"""Websocket consumers: authorize, send the whole current state, relay pushes.

A consumer never takes an action for a player: actions are HTTP posts handled by services.

Refusals accept the handshake and then close with a code in the private 4000-4999 range, so
the browser's ``close`` event carries the code (a handshake refused before ``accept`` reaches
the browser as 1006, and htmx would retry it forever). htmx reconnects only after 1006, 1011,
1012 and 1013, so none of these codes is retried.
"""

from __future__ import annotations

import asyncio
import logging
import struct
import zlib
from typing import Any

from channels.db import database_sync_to_async
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.sessions import InstanceSessionWrapper
from django.conf import settings
from django.template.loader import render_to_string
from django.utils import timezone
from websockets.exceptions import InvalidState
from websockets.extensions.permessage_deflate import PerMessageDeflate
from websockets.protocol import State

from combat import fragments, live, presence, services
from combat.hub import LAYER_AWAY, RESYNC, SHARED, get_hub, new_socket_id
from combat.live import account_group, session_group, user_group
from combat.models import Participant, Scene
from combat.seqs import seq_of, sheet_seq_of

try:
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
except ImportError:  # pragma: no cover - uvicorn is what serves; tests run without it too
    WebSocketsSansIOProtocol = None

CLOSE_LOGGED_OUT = 4001  # the session this socket belonged to logged out
CLOSE_UNAUTHENTICATED = 4401  # nobody is logged in
CLOSE_FORBIDDEN = 4403  # logged in, but neither a storyteller of the scene nor a player in it
CLOSE_NOT_FOUND = 4404  # no websocket lives at that path (or no such scene)
CLOSE_RECONNECT = 1012  # "service restart": the page reconnects (its session key changed)

STORYTELLER, PLAYER = "storyteller", "player"
MAX_BACKLOG = 50  # pushes waiting for one slow socket; past that it gets the whole state instead
# What a page is told when this process loses (and finds again) the channel layer.
LAYER_NOTE = {False: "<!--live:away-->", True: "<!--live:back-->"}
BIGINT = 2**63 - 1
UNFINISHED = "live.unfinished"  # a write begun in the hub's step, for the socket's writer to end
FRAMES = "_frames"  # on a shared push: its compressed frame per deflate setting (_shared_frame)
DEFLATE = "_st_deflate"  # kept on a socket's protocol (its deflate) and on that deflate (its key)

log = logging.getLogger(__name__)


class LiveConsumer(AsyncWebsocketConsumer):
    """The one socket each logged-in page keeps open (``/ws/live/``)."""

    groups: list[str] = []

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.accept()
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        self.joined = [user_group(user.pk), account_group(user.pk)]
        session_key = getattr(self.scope.get("session"), "session_key", None)
        if session_key:
            self.joined.append(session_group(session_key))
        try:
            for group in self.joined:
                await self.channel_layer.group_add(group, self.channel_name)
            await self.accept()
            await self.send(text_data=await self.current_state())
        except BaseException:  # Channels will not call disconnect: leave the groups now
            await asyncio.shield(self.disconnect(1011))
            raise

    async def disconnect(self, code: int) -> None:
        joined, self.joined = getattr(self, "joined", []), []
        for group in joined:
            try:
                await self.channel_layer.group_discard(group, self.channel_name)
            except Exception:  # Redis away: the membership expires by itself
                log.warning("could not leave %s", group, exc_info=True)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        # Websockets only push. htmx's ws-send is not used: actions go over HTTP with CSRF.
        return

    @database_sync_to_async
    def current_state(self) -> str:
        """Everything this user's page shows live, rendered from the database."""
        return render_to_string(
            "live_status.html", {"user": self.scope["user"], "now": timezone.localtime()}
        )

    async def live_fragment(self, event: dict[str, Any]) -> None:
        """``live.fragment``: out-of-band HTML for htmx to swap in by id."""
        await self.send(text_data=event["html"])

    async def live_logout(self, event: dict[str, Any]) -> None:
        """``live.logout``: the session logged out, so this socket closes and stays closed."""
        await self.close(code=CLOSE_LOGGED_OUT)

    async def live_account(self, event: dict[str, Any]) -> None:
        """``live.account``: a new password or a deactivation (:func:`_account_close`)."""
        code = await _account_close(self.scope)
        if code:
            await self.close(code=code)


async def _account_close(scope: dict[str, Any]) -> int | None:
    """After a new password or a deactivation: how this socket closes, if it does. A session
    that no longer logs the user in closes as on logout; one that is gone (cycled by the
    password change made from it) closes to reconnect with the browser's current cookie."""
    session_key = getattr(scope.get("session"), "session_key", None)
    standing = await database_sync_to_async(live.session_standing)(scope["user"].pk, session_key)
    return {live.SESSION_STALE: CLOSE_LOGGED_OUT, live.SESSION_GONE: CLOSE_RECONNECT}.get(standing)


def _write_direct(protocol: Any, html: str, message: dict[str, Any] | None = None) -> bool:
    """What uvicorn's ``send`` does with a ``websocket.send`` on an open socket whose transport
    takes bytes (``websockets_sansio_impl``), without its coroutine. False, having written
    nothing, when any of that does not hold: the ASGI ``send`` then does what it does (waits
    for a full transport, raises for a socket gone). A push the hub hands several sockets
    (``message`` marked :data:`combat.hub.SHARED`) goes as the frame :func:`_shared_frame`
    compressed once for all of them."""
    if (
        protocol.disconnected
        or protocol.close_sent
        or not protocol.handshake_complete
        or protocol.initial_response is not None
        or not protocol.writable.is_set()
    ):
        return False
    conn = protocol.conn
    # The extensions are settled at the handshake: looked up once a socket.
    deflate = protocol.__dict__.get(DEFLATE, _deflate)
    if deflate is _deflate:
        deflate = protocol.__dict__[DEFLATE] = _deflate(conn)
    if deflate is not None:
        if conn.expect_continuation_frame or conn.state is not State.OPEN:
            return False
        if message is not None and message.get(SHARED):
            conn.writes.append(_shared_frame(message, deflate))
            # The phone's inflater has that message in its window, this socket's deflater
            # does not: its next message starts a context afresh, so it never points at what
            # differs (made when that message comes: most pushes are shared). Without context
            # takeover each message starts afresh already (websockets drops the deflater).
            if not deflate.local_no_context_takeover and (
                type(deflate.encoder) is not _FreshContext
            ):
                deflate.encoder = _FreshContext(deflate)
        else:
            conn.writes.append(_own_frame(html, deflate))
    else:
        try:
            conn.send_text(html.encode())
        except InvalidState:
            return False
    protocol.transport.write(b"".join(conn.data_to_send()))
    return True


def _deflate(conn: Any) -> PerMessageDeflate | None:
    """The socket's permessage-deflate, when it is its one extension."""
    extensions = conn.extensions
    if len(extensions) == 1 and isinstance(extensions[0], PerMessageDeflate):
        return extensions[0]
    return None


class _FreshContext:
    """A socket's deflater after a shared frame: a new compression context, made only when
    the socket's next message is compressed (by :func:`_own_frame` or by websockets'
    ``PerMessageDeflate.encode``), not at each shared push it is sent."""

    __slots__ = ("deflate",)

    def __init__(self, deflate: PerMessageDeflate) -> None:
        self.deflate = deflate

    def _made(self) -> Any:
        deflate = self.deflate
        if deflate.encoder is self:
            deflate.encoder = zlib.compressobj(
                wbits=-deflate.local_max_window_bits, **deflate.compress_settings
            )
        return deflate.encoder

    def compress(self, data: bytes) -> bytes:
        return self._made().compress(data)

    def flush(self, mode: int = zlib.Z_FINISH) -> bytes:
        return self._made().flush(mode)


def _shared_frame(message: dict[str, Any], deflate: PerMessageDeflate) -> bytes:
    """The push as one compressed text frame, made once per message for every socket whose
    deflate has the same window and settings (kept on the message). Compressed with a context
    of its own (RFC 7692 lets a sender always do without the previous messages), so the same
    bytes decompress right on each socket, whatever it was sent before."""
    key = deflate.__dict__.get(DEFLATE)  # the settings, settled at the handshake
    if key is None:
        key = (deflate.local_max_window_bits, tuple(sorted(deflate.compress_settings.items())))
        deflate.__dict__[DEFLATE] = key
    frames = message.setdefault(FRAMES, {})
    frame = frames.get(key)
    if frame is None:
        encoder = zlib.compressobj(wbits=-key[0], **deflate.compress_settings)
        data = message["html"].encode()
        frame = frames[key] = _compressed(encoder, data)
    return frame


def _own_frame(html: str, deflate: PerMessageDeflate) -> bytes:
    """The push as one compressed text frame in this socket's own deflate context, what
    ``PerMessageDeflate.encode`` and ``Frame.serialize`` make of it (websockets'
    ``send_text``), without their frame objects."""
    if deflate.local_no_context_takeover:
        deflate.encoder = zlib.compressobj(
            wbits=-deflate.local_max_window_bits, **deflate.compress_settings
        )
    return _compressed(deflate.encoder, html.encode())


def _compressed(encoder: Any, data: bytes) -> bytes:
    """``data`` as one compressed text frame (FIN, RSV1, text; a server does not mask)."""
    payload = (encoder.compress(data) + encoder.flush(zlib.Z_SYNC_FLUSH))[:-4]
    length = len(payload)
    if length < 126:
        return struct.pack("!BB", 0xC1, length) + payload
    if length < 65536:
        return struct.pack("!BBH", 0xC1, 126, length) + payload
    return struct.pack("!BBQ", 0xC1, 127, length) + payload


def _step(write: Any) -> tuple[bool, Any]:
    """Run a coroutine to its next suspension: (finished, what it waits for)."""
    try:
        return False, write.send(None)
    except StopIteration:
        return True, None


class NotFoundConsumer(AsyncWebsocketConsumer):
    """Any other websocket path: closed cleanly with 4404, never a server error."""

    async def connect(self) -> None:
        await self.accept()
        await self.close(code=CLOSE_NOT_FOUND)


def scene_role(user: Any, pk: int) -> str | None:
    """``storyteller``, ``player`` (active in it), ``""`` (neither), ``None`` (no such scene)."""
    scene = (
        Scene.objects.select_related("chronicle").filter(pk=pk).first() if pk <= BIGINT else None
    )
    if scene is None:
        return None
    if services.is_storyteller_of_scene(user, scene):
        return STORYTELLER
    mine = Participant.objects.filter(scene=scene, removed_at__isnull=True, character__player=user)
    return PLAYER if mine.exists() else ""


class SceneConsumer(AsyncWebsocketConsumer):
    """One scene's socket (``/ws/scenes/<pk>/``): the tablet's board or a phone's two parts.

    The socket has no channel of its own: the process's hub (:mod:`combat.hub`) hears the
    audiences it belongs to (the storytellers, or the players and this player's private part,
    and its login session) and hands it each push. On every connect it sends the whole current
    state, so a reconnect resyncs. Pushes go out in order through one writer per socket, so a
    slow phone never holds up the others; one too far behind gets the whole state instead.
    """

    channel_layer_alias = "__no_layer_channel__"  # the hub reads the layer for every socket
    groups: list[str] = []
    # A player's: the scene's seq its own part was last sent at or after (the ``own`` of the
    # events of that part, the scene's seq of a whole state; hub-only, never written to the
    # phone), and the database's when the hub first saw it behind (0: it is not).
    own = own_behind = 0
    state_seq = 0  # the scene's seq the last whole state was rendered at
    direct: Any = None  # uvicorn's sans-I/O protocol when it serves this socket (_write_direct)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        # A push is a ``websocket.send``, which the session middleware only hands on (it saves
        # on ``http.response.start``): the hub's writes skip that one coroutine a phone.
        wrapper = getattr(send, "__self__", None)
        self.push_send = wrapper.real_send if isinstance(wrapper, InstanceSessionWrapper) else send
        # Served by uvicorn's sans-I/O websockets: a push to an idle socket is written without
        # a coroutine a phone (see _write_direct).
        protocol = getattr(self.push_send, "__self__", None)
        direct = WebSocketsSansIOProtocol is not None and isinstance(
            protocol, WebSocketsSansIOProtocol
        )
        self.direct = protocol if direct else None
        # A socket whose writes stall (a phone that never reads) is given up on by its writer:
        # it then hears a disconnect of its own, so it cleans up and ends like any other.
        self.given_up = asyncio.get_running_loop().create_future()

        async def receive_or_given_up() -> dict[str, Any]:
            message = asyncio.ensure_future(receive())
            await asyncio.wait({message, self.given_up}, return_when=asyncio.FIRST_COMPLETED)
            if message.done():
                return message.result()
            message.cancel()
            return {"type": "websocket.disconnect", "code": 1011}

        await super().__call__(scope, receive_or_given_up, send)

    async def _send_or_give_up(self, message: dict[str, Any]) -> None:
        """Write one message, or give the socket up when the write stalls too long."""
        try:
            async with asyncio.timeout(settings.LIVE_SEND_TIMEOUT):  # no task of its own
                await self.base_send(message)
        except TimeoutError:
            log.info("a scene socket stopped reading; given up")
            if not self.given_up.done():
                self.given_up.set_result(True)
            raise

    async def connect(self) -> None:
        user = self.scope.get("user")
        self.heard: list[str] = []
        self.writer: asyncio.Task | None = None
        self.writing = False  # the writer is busy with a message: the next ones queue
        self.hub = None
        self.present = False
        if user is None or not user.is_authenticated:
            await self._refuse(CLOSE_UNAUTHENTICATED)
            return
        self.scene_id = int(self.scope["url_route"]["kwargs"]["pk"])
        self.role = await database_sync_to_async(scene_role)(user, self.scene_id)
        if self.role is None:
            await self._refuse(CLOSE_NOT_FOUND)
            return
        if not self.role:
            await self._refuse(CLOSE_FORBIDDEN)
            return
        self.user_id = user.pk
        self.sheets = ""  # a player's: the data-sheet-seq of the private part last sent
        if self.role == STORYTELLER:
            self.seq_group, self.own_group = live.storytellers_group(self.scene_id), ""
            self.heard = [self.seq_group]
        else:
            self.seq_group = live.players_group(self.scene_id)
            self.own_group = live.player_group(self.scene_id, user.pk)
            self.heard = [self.seq_group, self.own_group]
        self.heard.append(account_group(user.pk))
        session_key = getattr(self.scope.get("session"), "session_key", None)
        if session_key:
            self.heard.append(session_group(session_key))
        self.socket_id = new_socket_id()
        self.outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        # The seq every change up to which this socket was sent, and changes sent beyond a
        # missing one (combat.hub catches up a socket that stays behind).
        self.shown = self.behind = 0
        self.ahead: set[int] = set()
        # A socket can fail anywhere from here on (the phone gone right after the handshake,
        # the first state unsendable): when connect raises, Channels never calls disconnect,
        # so this cleans up itself, or the hub keeps a dead socket and its presence row.
        try:
            await self.accept()
            self.hub = get_hub()
            # Hear first, then render: a change committed meanwhile is in the outbox, behind
            # the state (the phone drops a fragment older than what it shows).
            await self.hub.subscribe(self, self.heard)
            self.hub.watch(self)  # served: the heartbeat keeps its presence row from here
            self.present = True
            await database_sync_to_async(presence.presence_connect)(
                scene_id=self.scene_id, user_id=user.pk, channel_name=self.socket_id, announce=False
            )
            self.hub.presence_soon(self.scene_id)
            state = await self.current_state()
            self._caught_up(state)
            await self._send_or_give_up({"type": "websocket.send", "text": state})
            self.writer = asyncio.ensure_future(self._write())
        except TimeoutError:
            await asyncio.shield(self._forget())
            raise StopConsumer() from None
        except BaseException:
            await asyncio.shield(self._forget())
            raise

    async def _refuse(self, code: int) -> None:
        await self.accept()
        await self.close(code=code)

    async def _forget(self) -> None:
        """Leave no trace of this socket: its writer, the hub's audiences, its presence row."""
        if self.writer is not None:
            self.writer.cancel()
            self.writer = None
        heard, self.heard = self.heard, []
        if self.hub is None:
            return
        self.hub.unwatch(self)
        if heard:
            await self.hub.unsubscribe(self, heard)
        if self.present:
            self.present = False
            try:
                await database_sync_to_async(presence.presence_disconnect)(
                    channel_name=self.socket_id, announce=False
                )
            except Exception:  # the database away: the hub's heartbeat deletes the row
                log.warning("could not forget a socket's presence", exc_info=True)
            self.hub.presence_soon(self.scene_id)

    async def disconnect(self, code: int) -> None:
        await self._forget()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        return  # websockets only push; actions are HTTP posts

    def hub_message(self, message: dict[str, Any]) -> None:
        """From the hub: write it now when the socket is idle, else queue it for this
        socket's writer (never blocks the hub)."""
        seq = message.get("seq")
        if seq is not None and message.get("group") == self.seq_group:
            for change in message.get("seqs") or (seq,):  # a board of several changes
                self._note_change(change)
        elif message.get("group") == self.own_group and "html" in message:
            self.sheets = sheet_seq_of(message["html"]) or self.sheets
            self.own = max(self.own, message.get("own") or 0)
        if (
            message.get("type") == live.FRAGMENT_EVENT
            and self.writer is not None
            and not self.writing
            and self.outbox.empty()
        ):
            self._write_now(message["html"], message)
            return
        if self.outbox.qsize() >= MAX_BACKLOG:
            begun = []  # a write begun is ended, not dropped
            while not self.outbox.empty():
                dropped = self.outbox.get_nowait()
                if dropped.get("type") == UNFINISHED:
                    begun.append(dropped)
            for unfinished in begun:
                self.outbox.put_nowait(unfinished)
            self.outbox.put_nowait(RESYNC)
            return
        self.outbox.put_nowait(message)

    def _note_change(self, seq: int) -> None:
        """A scene change's push: ``shown`` moves up to the newest seq with every change
        before it sent (the board gets only the regions each change touched; the players'
        public part is whole in each). Pushes of two processes may cross: a change ahead of
        a missing one waits in ``ahead`` for it (the hub's catch-up fills a gap that stays)."""
        if self.role == PLAYER or seq == self.shown + 1:
            self.shown = max(self.shown, seq)
            while self.ahead and min(self.ahead) <= self.shown + 1:
                self.shown = max(self.shown, min(self.ahead))
                self.ahead.discard(min(self.ahead))
        elif seq > self.shown and len(self.ahead) < MAX_BACKLOG:
            self.ahead.add(seq)

    def _caught_up(self, state: str) -> None:
        """The whole state went: everything up to its seq is shown."""
        self.shown = max(self.shown, seq_of(state) or 0)
        self.sheets = sheet_seq_of(state) or self.sheets
        self.own = max(self.own, self.state_seq)
        self.ahead = {s for s in self.ahead if s > self.shown}

    def _write_now(self, html: str, message: dict[str, Any] | None = None) -> None:
        """Write a push in the hub's own step, as Python 3.12's eager tasks run a coroutine:
        to its first suspension. An idle socket whose transport takes the bytes (nearly
        always) costs no task, no queue and no timer; one whose transport is full (a slow
        phone) suspends, and its writer finishes that write, then goes on with its outbox."""
        if self.direct is not None and _write_direct(self.direct, html, message):
            return
        write = self.push_send({"type": "websocket.send", "text": html})
        try:
            done, waiting = _step(write)
        except Exception:  # the socket is going away; its disconnect cleans up
            log.debug("could not write to a scene socket", exc_info=True)
            self.writing = True  # nothing more is written to it
            return
        if done:
            return
        self.writing = True
        self.outbox.put_nowait({"type": UNFINISHED, "write": write, "waiting": waiting})

    async def _finish(self, write: Any, waiting: Any) -> None:
        """Drive a write :meth:`_write_now` began to its end, or give the socket up when it
        stalls longer than ``LIVE_SEND_TIMEOUT``."""
        try:
            async with asyncio.timeout(settings.LIVE_SEND_TIMEOUT):
                done = False
                while not done:
                    if waiting is None:  # a bare yield: the coroutine only let others run
                        await asyncio.sleep(0)
                    else:
                        await asyncio.wait((waiting,))
                    done, waiting = _step(write)
        except TimeoutError:
            log.info("a scene socket stopped reading; given up")
            if not self.given_up.done():
                self.given_up.set_result(True)
            raise
        finally:
            write.close()

    async def _write(self) -> None:
        while True:
            self.writing = False
            message = await self.outbox.get()
            self.writing = True
            kind = message.get("type")
            try:
                if kind == UNFINISHED:
                    await self._finish(message["write"], message["waiting"])
                elif kind == live.FRAGMENT_EVENT:
                    # What ``self.send(text_data=...)`` does, less two wrappers: this is the
                    # one line every push runs once per socket.
                    await self._send_or_give_up({"type": "websocket.send", "text": message["html"]})
                elif kind == RESYNC["type"]:
                    state = await self.current_state()
                    self._caught_up(state)
                    await self._send_or_give_up({"type": "websocket.send", "text": state})
                elif kind == LAYER_AWAY["type"]:
                    # scene.js: the page says it is not live until the layer is back
                    note = LAYER_NOTE[message["live"]]
                    await self._send_or_give_up({"type": "websocket.send", "text": note})
                elif kind == live.LOGOUT_EVENT:
                    await self.close(code=CLOSE_LOGGED_OUT)
                    return
                elif kind == live.ACCOUNT_EVENT:
                    code = await _account_close(self.scope)
                    if code:
                        await self.close(code=code)
                        return
                elif kind == live.RECHECK_EVENT:
                    role = await database_sync_to_async(scene_role)(
                        self.scope["user"], self.scene_id
                    )
                    if role != self.role:
                        await self.close(code=CLOSE_FORBIDDEN)
                        return
            except asyncio.CancelledError:
                raise
            except Exception:  # the socket is going away; its disconnect cleans up
                log.debug("could not write to a scene socket", exc_info=True)
                return

    @database_sync_to_async
    def current_state(self) -> str:
        """The whole state this socket shows: the board, or the public and private parts."""
        scene = fragments.load(self.scene_id)
        if scene is None:
            return ""
        self.state_seq = scene.seq
        if self.role == STORYTELLER:
            return fragments.storyteller_state(scene)
        return fragments.players_state(scene) + fragments.private_state(scene, self.scope["user"])
