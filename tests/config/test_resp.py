"""config.resp's replies: errors of a connection raised as redis-py raises them."""

from __future__ import annotations

import socket
import threading

import pytest
import redis
import redis.asyncio

from config.resp import Script, exchange, pack, reply

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


class Loading:
    """A Redis that answers a connection's handshake, then ``LOADING`` to ``name``."""

    def __init__(self, name: bytes) -> None:
        self.name = name
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        peer, _ = self.listener.accept()
        with peer:
            buf = b""
            while chunk := peer.recv(65536):
                buf += chunk
                while (command := _command(buf)) is not None:
                    args, buf = command
                    name = args[0].upper()
                    peer.sendall(
                        LOADING if name == self.name else HELLO if name == b"HELLO" else b"+OK\r\n"
                    )

    def close(self) -> None:
        self.listener.close()
        self.thread.join(5)


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
