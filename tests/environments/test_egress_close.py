"""Closing an egress proxy while its tunnels are open ends them quietly: the relay
threads cut mid-wait print no traceback (a real proxy, a real Unix socket, a real
loopback listener)."""

from __future__ import annotations

import socket
import time

import pytest

from pluginbench.environments._egress import SOCKET_NAME, Egress, EgressProxy


def test_closing_the_proxy_with_idle_tunnels_prints_no_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    """Twenty idle probe tunnels cut by close(): every relay thread ends without an error report."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    accepted: list[socket.socket] = []
    clients: list[socket.socket] = []
    try:
        for _ in range(20):
            proxy = EgressProxy(Egress("probe", port=port))
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            client.connect(str(proxy.folder / SOCKET_NAME))
            clients.append(client)
            accepted.append(listener.accept()[0])  # the tunnel is open: the relay waits on it
            proxy.close()
        time.sleep(0.3)  # let the cut relay threads run to their end
    finally:
        for s in (*clients, *accepted, listener):
            s.close()
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
