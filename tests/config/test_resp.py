"""config.resp's replies: errors of a connection raised as redis-py raises them."""

from __future__ import annotations

import socket
import threading
import time

import pytest
import redis
import redis.asyncio

from config.resp import Incomplete, Script, exchange, pack, reply

LOADING = b"-LOADING Redis is loading the dataset in memory\r\n"
HELLO = b"%1\r\n$5\r\nproto\r\n:3\r\n"  # a RESP3 handshake's answer


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (LOADING, redis.exceptions.BusyLoadingError),
        (b"-ERR max number of clients reached\r\n", redis.ConnectionError),
        (b"-NOAUTH Authentication required.\r\n", redis.exceptions.AuthenticationError),
        (b"*1\r\n" + LOADING, redis.exceptions.BusyLoadingError),  # inside an array too
        (b"!%d\r\n%s\r\n" % (len(LOADING) - 3, LOADING[1:-2]), redis.exceptions.BusyLoadingError),
    ],
)
def test_an_error_of_the_connection_is_raised_wherever_it_comes(data, error) -> None:
    """A Redis restarting with its data answers ``LOADING`` for a while: redis-py's parser
    raises it (a ConnectionError: the hub's read tries again at once, a publish's connection
    is dropped), never hands it back as if it were the command's answer."""
    with pytest.raises(error):
        reply(data)


class FakeRedis:
    """A Redis on a loopback port of its own that answers each whole command of its one
    connection with :meth:`answer` (written as :meth:`answer` says)."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def answer(self, peer: socket.socket, name: bytes) -> None:
        raise NotImplementedError

    def _serve(self) -> None:
        peer, _ = self.listener.accept()
        peer.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with peer:
            buf = b""
            while chunk := peer.recv(65536):
                buf += chunk
                while (command := _command(buf)) is not None:
                    args, buf = command
                    self.answer(peer, args[0].upper())

    def close(self) -> None:
        self.listener.close()
        self.thread.join(5)


class Loading(FakeRedis):
    """A Redis that answers a connection's handshake, then ``LOADING`` to ``name``."""

    def __init__(self, name: bytes) -> None:
        self.name = name
        super().__init__()

    def answer(self, peer: socket.socket, name: bytes) -> None:
        peer.sendall(LOADING if name == self.name else HELLO if name == b"HELLO" else b"+OK\r\n")


def _command(buf: bytes) -> tuple[list[bytes], bytes] | None:
    """The first whole command of ``buf`` (an array of bulk strings) and what follows it."""
    lines = buf.split(b"\r\n")
    if len(lines) < 2 or not lines[0].startswith(b"*"):
        return None
    n = int(lines[0][1:])
    if len(lines) < 2 + 2 * n:
        return None
    args = [lines[2 + 2 * i] for i in range(n)]
    return args, b"\r\n".join(lines[1 + 2 * n :])


async def test_a_hub_read_answered_loading_raises_it() -> None:
    """A channel layer's read (:func:`config.resp.exchange`) of a Redis that is loading."""
    server = Loading(b"BZMPOP")
    connection = redis.asyncio.Connection(host="127.0.0.1", port=server.port, socket_timeout=5)
    try:
        with pytest.raises(redis.exceptions.BusyLoadingError):
            await exchange(connection, pack("BZMPOP", 1, 1, "k", "MIN", "COUNT", 10))
    finally:
        await connection.disconnect()
        server.close()


def test_a_script_answered_loading_raises_it() -> None:
    """A publish's script (:meth:`config.resp.Script.call`) on a synchronous connection."""
    server = Loading(b"EVALSHA")
    connection = redis.Connection(host="127.0.0.1", port=server.port, socket_timeout=5)
    try:
        with pytest.raises(redis.exceptions.BusyLoadingError):
            Script("return 1").call(connection, [], [])
    finally:
        connection.disconnect()
        server.close()


# An unsolicited RESP3 push: Redis Enterprise's notice of a shard about to move.
NOTICE = b">4\r\n$6\r\nMOVING\r\n:17\r\n:15\r\n$14\r\n10.0.0.2:12000\r\n"


class Pushing(FakeRedis):
    """A RESP3 Redis that, to every command but the handshake, sends a push before its
    answer and one right behind it, each write cut in two (as a socket may deliver them)."""

    def __init__(self, answer: bytes) -> None:
        self.reply = answer
        super().__init__()

    def answer(self, peer: socket.socket, name: bytes) -> None:
        if name == b"HELLO":
            peer.sendall(HELLO)
            return
        if name != b"BZMPOP" and name != b"EVALSHA":
            peer.sendall(b"+OK\r\n")
            return
        data = NOTICE + self.reply + NOTICE
        for part in (data[:9], data[9:-7], data[-7:]):
            peer.sendall(part)
            time.sleep(0.01)  # the parts reach the client apart


BATCH = b"*2\r\n$1\r\nk\r\n*1\r\n*2\r\n$2\r\nm1\r\n,1.5\r\n"  # BZMPOP's answer


@pytest.mark.parametrize(
    "data",
    [
        NOTICE + b":1\r\n",
        b":1\r\n" + NOTICE,
        NOTICE + NOTICE + b":1\r\n" + NOTICE,
    ],
)
def test_a_push_before_or_behind_a_reply_is_not_taken_for_it(data) -> None:
    assert reply(data) == 1
    answered = data.index(b":1\r\n") + 4  # the reply whole, the push behind not begun
    for cut in range(len(data)):  # cut anywhere else, in a push included: read on
        if cut == answered:
            assert reply(data[:cut]) == 1
            continue
        with pytest.raises(Incomplete):
            reply(data[:cut])


def test_pushes_alone_are_no_reply() -> None:
    with pytest.raises(Incomplete):
        reply(NOTICE + NOTICE)


async def test_a_hub_read_skips_the_pushes_around_its_answer() -> None:
    server = Pushing(BATCH)
    connection = redis.asyncio.Connection(
        host="127.0.0.1", port=server.port, socket_timeout=5, protocol=3
    )
    command = pack("BZMPOP", 1, 1, "k", "MIN", "COUNT", 10)
    try:
        assert await exchange(connection, command) == [b"k", [[b"m1", 1.5]]]
        assert await exchange(connection, command) == [b"k", [[b"m1", 1.5]]]  # in step
    finally:
        await connection.disconnect()
        server.close()


def test_a_script_skips_the_pushes_around_its_answer() -> None:
    server = Pushing(b":7\r\n")
    connection = redis.Connection(host="127.0.0.1", port=server.port, socket_timeout=5, protocol=3)
    try:
        assert Script("return 7").call(connection, [], []) == 7
        assert Script("return 7").call(connection, [], []) == 7  # in step
    finally:
        connection.disconnect()
        server.close()
